//! The CUDA backend (placeholder while the SYCL backend is brought up).
use super::DeviceBackend;
use crate::device::{BackendKind, DeviceInfo};
use crate::error::{Result, RuntimeError};

pub(crate) fn discover() -> (Vec<DeviceInfo>, Option<String>) {
    (Vec::new(), Some("CUDA: not implemented yet".into()))
}

pub(crate) fn open(_info: &DeviceInfo) -> Result<Box<dyn DeviceBackend>> {
    Err(RuntimeError::Unsupported {
        backend: BackendKind::Cuda,
        what: "devices yet".into(),
    })
}
