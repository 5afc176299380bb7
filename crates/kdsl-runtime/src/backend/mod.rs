//! The backends behind `Device`. Everything `unsafe` in the crate lives in these modules.

use crate::args::ScalarValue;
use crate::buffer::MemoryKind;
use crate::device::{BackendKind, DeviceInfo};
use crate::error::Result;
use crate::launch::Launch;
use kdsl_bundle::Image;
use std::sync::Arc;

pub(crate) mod cuda;
pub(crate) mod hip;
#[cfg(feature = "sycl")]
pub(crate) mod sycl;

/// A kernel argument after checking: a device address or a scalar value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum RawArgument {
    Pointer(u64),
    Scalar(ScalarValue),
}

/// One opened device instance.
pub(crate) trait DeviceBackend: Send + Sync {
    fn allocate(&self, bytes: usize, kind: MemoryKind) -> Result<u64>;
    /// Waits for the queue, then frees. Errors cannot be reported from `Drop` and are ignored.
    fn free(&self, address: u64, kind: MemoryKind);
    fn write(&self, address: u64, data: &[u8]) -> Result<()>;
    fn read(&self, address: u64, data: &mut [u8]) -> Result<()>;
    /// Writes `count` copies of `pattern` (1, 2, 4 or 8 bytes) starting at `address`.
    fn fill(&self, address: u64, pattern: &[u8], count: usize) -> Result<()>;
    fn synchronize(&self) -> Result<()>;
    fn load(&self, image: &Image) -> Result<Arc<dyn ModuleBackend>>;
}

/// A loaded image.
pub(crate) trait ModuleBackend: Send + Sync {
    fn kernel(self: Arc<Self>, name: &str) -> Result<Box<dyn KernelBackend>>;
}

pub(crate) trait KernelBackend: Send + Sync {
    /// Submits a launch whose arguments and geometry were already checked.
    fn launch(&self, launch: &Launch, arguments: &[RawArgument]) -> Result<Box<dyn EventBackend>>;
}

pub(crate) trait EventBackend: Send + Sync {
    fn wait(&self) -> Result<()>;
    fn elapsed_ns(&self) -> Result<u64>;
}

pub(crate) fn open(info: &DeviceInfo) -> Result<Box<dyn DeviceBackend>> {
    match info.backend {
        BackendKind::Cuda => cuda::open(info),
        BackendKind::Hip => hip::open(info),
        BackendKind::Sycl => open_sycl(info),
    }
}

#[cfg(feature = "sycl")]
fn open_sycl(info: &DeviceInfo) -> Result<Box<dyn DeviceBackend>> {
    sycl::open(info)
}

#[cfg(not(feature = "sycl"))]
fn open_sycl(_info: &DeviceInfo) -> Result<Box<dyn DeviceBackend>> {
    Err(crate::error::RuntimeError::Unsupported {
        backend: BackendKind::Sycl,
        what: "anything in this build (kdsl-runtime was built without the `sycl` feature)".into(),
    })
}

#[cfg(feature = "sycl")]
pub(crate) fn discover_sycl() -> (Vec<DeviceInfo>, Option<String>) {
    sycl::discover()
}

#[cfg(not(feature = "sycl"))]
pub(crate) fn discover_sycl() -> (Vec<DeviceInfo>, Option<String>) {
    (
        Vec::new(),
        Some("SYCL: this build has no SYCL backend (built without the `sycl` feature)".into()),
    )
}
