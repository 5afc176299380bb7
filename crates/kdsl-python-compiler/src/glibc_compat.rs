//! Stand-ins for glibc functions newer than the wheel's manylinux tag allows, reached through
//! the linker's `--wrap` (see build.rs); `auditwheel show` on the wheel lists what remains.

use std::ffi::c_void;
use std::hash::{BuildHasher, Hasher};

extern "C" {
    /// glibc 2.25.
    fn getrandom(buffer: *mut c_void, length: usize, flags: u32) -> isize;
}

/// `arc4random` (glibc 2.36): 32 random bits from the kernel's `getrandom`, retried when a
/// signal interrupts it; where the kernel refuses, std's randomly keyed hasher supplies them.
#[no_mangle]
pub extern "C" fn __wrap_arc4random() -> u32 {
    let mut value = 0u32;
    loop {
        // SAFETY: `value` is 4 writable bytes for the duration of the call.
        let written = unsafe { getrandom((&mut value as *mut u32).cast(), 4, 0) };
        if written == 4 {
            return value;
        }
        if written < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
        {
            return std::collections::hash_map::RandomState::new()
                .build_hasher()
                .finish() as u32;
        }
    }
}
