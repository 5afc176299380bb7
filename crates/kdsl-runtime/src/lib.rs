//! The kdsl runtime: loads kdsl bundles and launches their kernels on SYCL, CUDA and HIP
//! devices through one safe API. It does not depend on LLVM.
//!
//! ```no_run
//! use kdsl_runtime::{args, Device, Launch};
//! # fn main() -> Result<(), kdsl_runtime::RuntimeError> {
//! let bundle = kdsl_bundle::Bundle::read("target/kdsl-bundles/saxpy.kbundle")?;
//! let device = Device::default()?;                 // or Device::select("cuda:0,sycl:cpu")?
//! let program = device.load(&bundle)?;             // picks SPIR-V, PTX or the AMDGPU image
//! let saxpy = program.kernel("saxpy")?;
//! let n = 1000u32;
//! let x = device.buffer_from(&vec![1.0f32; n as usize])?;
//! let mut y = device.buffer_from(&vec![2.0f32; n as usize])?;
//! saxpy.launch(&Launch::covering(n as usize, 256), &args![&mut y, &x, 3.0f32, n])?.wait()?;
//! assert_eq!(y.read_to_vec()?[0], 5.0);
//! # Ok(()) }
//! ```
//!
//! - Devices: [`devices`] lists every device of every backend; [`Device::default`] opens a GPU
//!   before a CPU (or what `KDSL_DEVICE` names); [`Device::select`] takes a filter string
//!   (syntax in [`filter`]).
//! - Arguments: `&mut buffer` is a writable buffer, `&buffer` a read-only one, Rust scalars
//!   pass as the same kernel type. Before a launch reaches the driver the runtime checks them
//!   against the bundle's kernel metadata (count, types, writability, device, aliasing) and the
//!   launch geometry against the kernel and device (see [`RuntimeError`]).
//! - Dimensions: dimension 0 of a [`Launch`] is the fastest-varying (`get_global_id(0)`).
//!
//! Backends: SYCL (cargo feature `sycl`, on by default; the C++ shim in `runtime-shim/`), CUDA
//! (the driver API through cudarc, loaded at run time) and HIP (`libamdhip64.so`, loaded at run
//! time). A missing driver is reported by [`device_report`], never a crash.

mod args;
mod backend;
mod buffer;
mod device;
mod element;
mod error;
mod event;
mod fault;
pub mod filter;
pub mod image;
mod image_check;
mod inline_vec;
mod launch;
#[cfg(test)]
mod launch_cost;
mod local_memory;
mod memory;
// Used by the SYCL backend only; without it the cache is still there, and empty.
#[cfg_attr(not(feature = "sycl"), allow(dead_code))]
pub mod native_cache;
mod program;
mod queue;
mod shaped;
mod tensor_maps;

pub use args::{Argument, IntoArgument, ScalarValue};
pub use buffer::{AnyBuffer, Buffer, BufferSlice, BufferSliceMut, MemoryKind, PendingRead};
pub use device::{
    device_report, devices, BackendKind, Device, DeviceInfo, DeviceReport, DeviceTarget,
    DeviceType, NativeSyclQueue,
};
pub use element::{Bf16, Element, F16};
pub use error::{Result, RuntimeError};
pub use event::Event;
pub use fault::KernelFault;
pub use filter::DeviceFilter;
pub use kdsl_bundle::{Bundle, CheckSite, FaultKind, Image, KernelInfo, ParameterInfo, TargetKind};
pub use launch::{Launch, MAX_WORK_ITEMS};
pub use local_memory::LOCAL_ALIGNMENT;
pub use native_cache::NativeCacheStats;
pub use program::{Kernel, Program};
pub use queue::Queue;
pub use shaped::ShapedArgument;
