//! Devices: discovery and opened device instances.

use crate::errors::OrRaise;
use kdsl_runtime::{DeviceInfo, DeviceType};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict};
use std::ffi::{c_void, CStr};

const SYCL_QUEUE_CAPSULE: &CStr = c"SyclQueueRef";

fn device_type_name(device_type: DeviceType) -> &'static str {
    match device_type {
        DeviceType::Gpu => "gpu",
        DeviceType::Cpu => "cpu",
        DeviceType::Accelerator => "accelerator",
        DeviceType::Other => "other",
    }
}

/// What discovery knows about a device, as a dict (wrapped into `kdsl.DeviceInfo` in Python).
pub fn info_dict<'py>(py: Python<'py>, info: &DeviceInfo) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("id", info.id())?;
    dict.set_item("backend", info.backend.name())?;
    dict.set_item("platform_backend", &info.platform_backend)?;
    dict.set_item("index", info.index)?;
    dict.set_item("name", &info.name)?;
    dict.set_item("vendor", &info.vendor)?;
    dict.set_item("driver_version", &info.driver_version)?;
    dict.set_item("device_type", device_type_name(info.device_type))?;
    dict.set_item("global_memory_bytes", info.global_memory_bytes)?;
    dict.set_item("local_memory_bytes", info.local_memory_bytes)?;
    dict.set_item("compute_units", info.compute_units)?;
    dict.set_item("max_work_group_size", info.max_work_group_size)?;
    dict.set_item("sub_group_sizes", info.sub_group_sizes.clone())?;
    dict.set_item("target", info.target.to_string())?;
    Ok(dict)
}

/// Every device found on every backend, as dicts; discovery runs once per process.
#[pyfunction]
pub fn devices(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    let report = py.detach(kdsl_runtime::device_report);
    report
        .devices
        .iter()
        .map(|info| info_dict(py, info))
        .collect()
}

/// One line per backend that found no device, saying why.
#[pyfunction]
pub fn device_notes(py: Python<'_>) -> Vec<String> {
    py.detach(kdsl_runtime::device_report).notes.clone()
}

/// An opened device instance: its own queue (SYCL) or stream (CUDA, HIP).
#[pyclass(frozen, module = "kdsl._runtime")]
pub struct Device {
    pub inner: kdsl_runtime::Device,
}

#[pymethods]
impl Device {
    /// Opens the first device matching a filter (`"cuda:0"`, `"sycl:cpu"`, `"gpu"`), or the
    /// default device (`KDSL_DEVICE`, else a GPU before a CPU) when `filter` is None.
    #[new]
    #[pyo3(signature = (filter=None))]
    fn new(py: Python<'_>, filter: Option<String>) -> PyResult<Device> {
        let opened = py.detach(|| match filter {
            Some(filter) => kdsl_runtime::Device::select(&filter),
            None => kdsl_runtime::Device::default(),
        });
        Ok(Device {
            inner: opened.or_raise(py)?,
        })
    }

    /// Adopts the SYCL queue in a dpctl `SyclQueue._get_capsule()` capsule ("SyclQueueRef"):
    /// kdsl's buffers, programs and launches of the new instance live in that queue's context
    /// and are submitted to that very queue (chained in order on an out-of-order queue). The
    /// handle is copied, so the capsule keeps its own.
    #[staticmethod]
    fn from_sycl_queue(py: Python<'_>, capsule: &Bound<'_, PyCapsule>) -> PyResult<Device> {
        let pointer = capsule
            .pointer_checked(Some(SYCL_QUEUE_CAPSULE))
            .map_err(|_| {
                crate::errors::python_error(
                    py,
                    "DeviceError",
                    "BadForeignObject",
                    "Device.from_sycl_queue takes the capsule of dpctl's SyclQueue._get_capsule() \
                 (named \"SyclQueueRef\")"
                        .to_string(),
                )
            })?;
        // The pointer is the `DPCTLSyclQueueRef`, a `sycl::queue*` of the process's libsycl.
        let address = pointer.as_ptr() as usize;
        // SAFETY: the capsule holds a live `sycl::queue*`; dpctl and kdsl's shim share the
        // process's one libsycl (dpctl loads it first, the shim resolves to the same library).
        let opened =
            py.detach(|| unsafe { kdsl_runtime::Device::from_sycl_queue(address as *mut c_void) });
        Ok(Device {
            inner: opened.or_raise(py)?,
        })
    }

    /// Adopts a CUDA stream (a `CUstream` handle as an int; 0 is the legacy default stream) of
    /// the primary context of device `ordinal`, the context CuPy and PyTorch use. With
    /// `profiled`, launches record timing events (`Event.elapsed_ns`); without, they cost
    /// about what a bare `cuLaunchKernel` does.
    #[staticmethod]
    #[pyo3(signature = (ordinal, stream, profiled = true))]
    fn from_cuda_stream(
        py: Python<'_>,
        ordinal: usize,
        stream: usize,
        profiled: bool,
    ) -> PyResult<Device> {
        // SAFETY: the caller hands a live stream of that device's primary context (or 0).
        let opened = py.detach(|| unsafe {
            kdsl_runtime::Device::from_cuda_stream_with_profiling(
                ordinal,
                stream as *mut c_void,
                profiled,
            )
        });
        Ok(Device {
            inner: opened.or_raise(py)?,
        })
    }

    /// Adopts a HIP stream (a `hipStream_t` as an int; 0 is the null stream) of device
    /// `ordinal`. Never run on hardware.
    #[staticmethod]
    fn from_hip_stream(py: Python<'_>, ordinal: usize, stream: usize) -> PyResult<Device> {
        // SAFETY: the caller hands a live stream of that device (or 0).
        let opened = py.detach(|| unsafe {
            kdsl_runtime::Device::from_hip_stream(ordinal, stream as *mut c_void)
        });
        Ok(Device {
            inner: opened.or_raise(py)?,
        })
    }

    /// `sycl:0`, `cuda:1`: the filter that selects this device.
    #[getter]
    fn id(&self) -> String {
        self.inner.info().id()
    }

    #[getter]
    fn name(&self) -> String {
        self.inner.info().name.clone()
    }

    #[getter]
    fn backend(&self) -> &'static str {
        self.inner.info().backend.name()
    }

    /// `sycl:0 instance 3`: the device and which opened instance this is.
    #[getter]
    fn label(&self) -> String {
        self.inner.label().to_string()
    }

    /// Discovery's facts about the device, as a dict.
    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        info_dict(py, self.inner.info())
    }

    /// Waits until everything submitted to this device instance has finished.
    fn synchronize(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| self.inner.synchronize()).or_raise(py)
    }

    fn __repr__(&self) -> String {
        format!(
            "kdsl.Device({:?}, name={:?}, label={:?})",
            self.inner.info().id(),
            self.inner.info().name,
            self.inner.label()
        )
    }
}
