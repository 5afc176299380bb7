//! The `kdsl` command is linked as a position-dependent executable: it links LLVM statically,
//! and a position-independent one spends milliseconds of every start relocating LLVM's tables
//! (`kdsl compile` is run once per file by build systems, so start-up is part of compile time).

fn main() {
    println!("cargo:rustc-link-arg-bins=-no-pie");
}
