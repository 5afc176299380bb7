//! What kdsl's test binaries share, so that each harness does not walk the repository itself:
//!
//! - [`files`]: the repository root and its kernel files (`examples/`, `tests/kernels/`,
//!   `tests/errors/`);
//! - [`filetest`]: the `.krn` file-test runner. A file's header says what to check
//!   (`// test: diagnostics`, `// test: ir`, `// test: llvm spirv ptx amdgpu`, ...), the expected
//!   output of each check lives next to the input in `expected/`, and `KDSL_BLESS=1` rewrites
//!   it. Each test binary runs the checks it can compute (the front end's binary the
//!   diagnostics and IR, the code generator's the LLVM IR), so this crate depends on no
//!   compiler crate and the front end's tests need no LLVM;
//! - [`tools`]: the validators (`spirv-val`, `ptxas`, `llvm-readobj`) where set-up put them;
//! - [`devices`] (feature `devices`): the devices and bundles the device tests run on, chosen
//!   by `KDSL_TEST_DEVICE`, `KDSL_ALLOW_NO_DEVICE` and `KDSL_TEST_BUNDLES` in one place.

#[cfg(feature = "devices")]
pub mod devices;
pub mod files;
pub mod filetest;
pub mod tools;
