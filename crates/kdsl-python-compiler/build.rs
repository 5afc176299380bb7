//! Links the extension module so it loads with glibc 2.35 (the wheel's manylinux_2_35 tag, which
//! Ubuntu 22.04 meets): LLVM's static libraries from apt.llvm.org for Debian 12 call `arc4random`,
//! new in glibc 2.36, in `sys::Process::GetRandomNumber`. `--wrap` sends those calls to
//! `__wrap_arc4random` (src/glibc_compat.rs), which needs only glibc 2.25.

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,--wrap=arc4random");
}
