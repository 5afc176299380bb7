//! `kdsl._runtime`: the Python binding of `kdsl-runtime`. It does not link LLVM, so the wheel's
//! launching half works on machines without a compiler; `kdsl._compiler` is the other half.
//! The Python package `kdsl` (python/kdsl) is the public API; this module is its engine.

mod bundle;
mod cache;
mod device;
mod dlpack;
mod errors;
mod exit;
mod host;
mod launch;
mod launch_fast_path;
mod wait;

use pyo3::prelude::*;

/// The version of the compiler this wheel was built with, which keys the on-disk bundle cache:
/// the crate version plus a hash of the compiler's sources (see build.rs).
const COMPILER_VERSION: &str = concat!(
    "kdsl ",
    env!("CARGO_PKG_VERSION"),
    " (compiler sources ",
    env!("KDSL_COMPILER_SOURCE_HASH"),
    ")"
);

#[pymodule]
fn _runtime(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add("COMPILER_VERSION", COMPILER_VERSION)?;
    module.add("SYCL_BUILT_IN", cfg!(feature = "sycl"))?;
    module.add_function(wrap_pyfunction!(device::devices, module)?)?;
    module.add_function(wrap_pyfunction!(cache::native_cache_info, module)?)?;
    module.add_function(wrap_pyfunction!(device::device_notes, module)?)?;
    module.add_function(wrap_pyfunction!(dlpack::dlpack_tensor, module)?)?;
    module.add_function(wrap_pyfunction!(exit::arm_prompt_exit, module)?)?;
    module.add_class::<device::Device>()?;
    module.add_class::<bundle::Bundle>()?;
    module.add_class::<launch::Program>()?;
    module.add_class::<launch::Kernel>()?;
    module.add_class::<launch::Event>()?;
    module.add_class::<launch_fast_path::Launcher>()?;
    module.add_class::<launch_fast_path::Configured>()?;
    Ok(())
}
