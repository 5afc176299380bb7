//! Bundles: the compiled images of a module plus its kernels' metadata.

use crate::errors::OrRaise;
use kdsl_bundle::spirv_check::{check_spirv_header, check_spirv_kernels};
use kdsl_runtime::{Bundle as RuntimeBundle, KernelInfo, ParameterInfo, RuntimeError, TargetKind};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::sync::Arc;

/// A kdsl bundle (`.kbundle`): images per target and the kernels' signatures.
#[pyclass(frozen, module = "kdsl._runtime")]
pub struct Bundle {
    pub inner: Arc<RuntimeBundle>,
}

fn parameter_dict<'py>(py: Python<'py>, parameter: &ParameterInfo) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    match parameter {
        ParameterInfo::Scalar { name, ty } => {
            dict.set_item("name", name)?;
            dict.set_item("kind", "scalar")?;
            dict.set_item("type", ty.name())?;
            dict.set_item("writable", false)?;
            dict.set_item("space", py.None())?;
            dict.set_item("record", py.None())?;
        }
        ParameterInfo::Buffer {
            name,
            element,
            space,
            writable,
            record,
            ..
        } => {
            dict.set_item("name", name)?;
            // A launch-sized local array takes `kdsl.local(length, type)`, not an array.
            let kind = if *space == kdsl_ir::AddressSpace::Local {
                "local"
            } else {
                "buffer"
            };
            dict.set_item("kind", kind)?;
            dict.set_item("type", element.name())?;
            dict.set_item("writable", *writable)?;
            dict.set_item("space", format!("{space:?}").to_lowercase())?;
            match record {
                Some(record) => {
                    let layout = PyDict::new(py);
                    layout.set_item("name", &record.name)?;
                    layout.set_item("size", record.size)?;
                    layout.set_item("alignment", record.alignment)?;
                    let fields: Vec<(String, &str, u32)> = record
                        .fields
                        .iter()
                        .map(|f| (f.name.clone(), f.ty.name(), f.offset))
                        .collect();
                    layout.set_item("fields", fields)?;
                    dict.set_item("record", layout)?;
                }
                None => dict.set_item("record", py.None())?,
            }
        }
    }
    Ok(dict)
}

fn kernel_dict<'py>(py: Python<'py>, kernel: &KernelInfo) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("name", &kernel.name)?;
    let parameters = kernel
        .parameters
        .iter()
        .map(|parameter| parameter_dict(py, parameter))
        .collect::<PyResult<Vec<_>>>()?;
    dict.set_item("parameters", parameters)?;
    dict.set_item("local_memory_bytes", kernel.local_memory_bytes)?;
    dict.set_item("ids_fit_in_31_bits", kernel.ids_fit_in_31_bits)?;
    dict.set_item(
        "work_group_size",
        kernel.work_group_size.map(|size| size.to_vec()),
    )?;
    dict.set_item("shaped_buffers", shaped_buffers(py, kernel)?)?;
    Ok(dict)
}

/// The multi-dimensional buffers: `{"buffer", "rank", "shape", "strides"}` with parameter
/// indices, for the launch to fill in the hidden shape and stride parameters.
fn shaped_buffers<'py>(py: Python<'py>, kernel: &KernelInfo) -> PyResult<Vec<Bound<'py, PyDict>>> {
    kernel
        .shaped_buffers
        .iter()
        .map(|shaped| {
            let dict = PyDict::new(py);
            dict.set_item("buffer", shaped.buffer)?;
            dict.set_item("rank", shaped.rank)?;
            dict.set_item("shape", shaped.shape.clone())?;
            dict.set_item("strides", shaped.strides.clone())?;
            Ok(dict)
        })
        .collect()
}

#[pymethods]
impl Bundle {
    /// Parses a bundle from its bytes (as written by `kdsl compile` or `to_bytes`).
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Bundle> {
        let bundle = RuntimeBundle::from_bytes(data)
            .map_err(kdsl_runtime::RuntimeError::from)
            .or_raise(py)?;
        Ok(Bundle {
            inner: Arc::new(bundle),
        })
    }

    /// Reads a `.kbundle` file.
    #[staticmethod]
    fn read(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Bundle> {
        let bundle = RuntimeBundle::read(&path)
            .map_err(kdsl_runtime::RuntimeError::from)
            .or_raise(py)?;
        Ok(Bundle {
            inner: Arc::new(bundle),
        })
    }

    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.to_bytes())
    }

    /// The `.krn` file the bundle was compiled from.
    #[getter]
    fn source_name(&self) -> String {
        self.inner.source_name.clone()
    }

    /// Every kernel's signature: name, parameters (name, kind, type, writable, space) and
    /// local memory in bytes.
    fn kernels<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.inner
            .kernels
            .iter()
            .map(|kernel| kernel_dict(py, kernel))
            .collect()
    }

    /// The images: `spirv`, `ptx:sm_90`, `amdgpu:gfx90a`.
    fn image_names(&self) -> Vec<String> {
        self.inner
            .images
            .iter()
            .map(|image| image.describe())
            .collect()
    }

    /// The plain SPIR-V image for another SYCL library (dpctl), or None when there is none: refused
    /// when its kernels are checked (they take hidden parameters, buffer lengths and a fault
    /// record, that such a caller cannot supply) or when the image fails the checks the
    /// runtime makes before a driver reads it (its header, its kernels against the metadata).
    fn spirv_for_sycl<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyBytes>>> {
        if let Some(kernel) = self.inner.kernels.iter().find(|kernel| kernel.checked) {
            return Err(crate::errors::python_error(
                py,
                "BundleError",
                "CheckedMode",
                format!(
                    "kernel `{}` was compiled in checked mode: it takes hidden parameters (a length \
                     per buffer and a fault record) that dpctl and SYCL callers cannot supply; \
                     launch it through kdsl, or compile without checked=True for dpctl",
                    kernel.name
                ),
            ));
        }
        // The plain image, which any SYCL device builds (not an Intel GPU's).
        let Some(image) = self
            .inner
            .images_for(TargetKind::Spirv)
            .find(|image| image.arch.is_empty())
        else {
            return Ok(None);
        };
        let invalid = |why: String| RuntimeError::InvalidImage {
            image: image.describe(),
            why,
        };
        check_spirv_header(&image.bytes)
            .and_then(|()| {
                check_spirv_kernels(
                    &image.bytes,
                    &self.inner.kernels,
                    &self.inner.entry_point_prefix,
                )
            })
            .map_err(invalid)
            .or_raise(py)?;
        Ok(Some(PyBytes::new(py, &image.bytes)))
    }

    /// The bytes of the image named `name` (as `image_names` gives it), or None.
    fn image<'py>(&self, py: Python<'py>, name: &str) -> Option<Bound<'py, PyBytes>> {
        self.inner
            .images
            .iter()
            .find(|image| image.describe() == name)
            .map(|image| PyBytes::new(py, &image.bytes))
    }
}
