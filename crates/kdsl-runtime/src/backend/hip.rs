//! The HIP backend (placeholder while the SYCL backend is brought up).
use super::DeviceBackend;
use crate::device::{BackendKind, DeviceInfo};
use crate::error::{Result, RuntimeError};

pub(crate) fn discover() -> (Vec<DeviceInfo>, Option<String>) {
    (Vec::new(), Some("HIP: not implemented yet".into()))
}

pub(crate) fn open(_info: &DeviceInfo) -> Result<Box<dyn DeviceBackend>> {
    Err(RuntimeError::Unsupported {
        backend: BackendKind::Hip,
        what: "devices yet".into(),
    })
}
