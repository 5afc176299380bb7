//! Maps the runtime's one error type onto the Python exception classes of `kdsl._errors`.

use kdsl_runtime::RuntimeError;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// The `kdsl._errors` class for each kind of runtime error, and the kind's name, which the
/// exception carries as `kind` (the `RuntimeError` variant).
fn classify(error: &RuntimeError) -> (&'static str, &'static str) {
    match error {
        RuntimeError::NoDevice { .. } => ("DeviceError", "NoDevice"),
        RuntimeError::NoMatchingDevice { .. } => ("DeviceError", "NoMatchingDevice"),
        RuntimeError::BadFilter { .. } => ("DeviceError", "BadFilter"),
        RuntimeError::NoMatchingImage { .. } => ("DeviceError", "NoMatchingImage"),
        RuntimeError::KernelNotFound { .. } => ("KernelNotFoundError", "KernelNotFound"),
        RuntimeError::ArgumentCount { .. } => ("ArgumentError", "ArgumentCount"),
        RuntimeError::ArgumentType { .. } => ("ArgumentError", "ArgumentType"),
        RuntimeError::ReadOnlyBufferAsWritable { .. } => {
            ("ArgumentError", "ReadOnlyBufferAsWritable")
        }
        RuntimeError::ForeignBuffer { .. } => ("ArgumentError", "ForeignBuffer"),
        RuntimeError::AliasedBuffers { .. } => ("ArgumentError", "AliasedBuffers"),
        RuntimeError::ShapeOutsideBuffer { .. } => ("ArgumentError", "ShapeMismatch"),
        RuntimeError::BadLaunch { .. } => ("LaunchError", "BadLaunch"),
        RuntimeError::LocalMemoryExceeded { .. } => ("LaunchError", "LocalMemoryExceeded"),
        RuntimeError::OutOfMemory { .. } => ("OutOfMemoryError", "OutOfMemory"),
        RuntimeError::LengthMismatch { .. } => ("ArgumentError", "LengthMismatch"),
        RuntimeError::Backend { .. } => ("DeviceError", "Backend"),
        RuntimeError::Unsupported { .. } => ("DeviceError", "Unsupported"),
        RuntimeError::MisalignedBuffer { .. } => ("ArgumentError", "MisalignedBuffer"),
        RuntimeError::RecordBufferMismatch { .. } => ("ArgumentError", "RecordBufferMismatch"),
        RuntimeError::ReadOnlyMemoryAsWritable { .. } => {
            ("ArgumentError", "ReadOnlyMemoryAsWritable")
        }
        RuntimeError::ReadOnlyMemory { .. } => ("ArgumentError", "ReadOnlyMemory"),
        RuntimeError::ForeignQueue { .. } => ("ArgumentError", "ForeignQueue"),
        RuntimeError::ForeignMemory { .. } => ("ArgumentError", "ForeignMemory"),
        RuntimeError::ElementTypeMismatch { .. } => ("ArgumentError", "ElementTypeMismatch"),
        RuntimeError::BadRange { .. } => ("ArgumentError", "BadRange"),
        RuntimeError::BadForeignObject { .. } => ("DeviceError", "BadForeignObject"),
        RuntimeError::InvalidImage { .. } => ("BundleError", "InvalidImage"),
        RuntimeError::ProfilingDisabled => ("LaunchError", "ProfilingDisabled"),
        RuntimeError::KernelFault(_) => ("LaunchError", "KernelFault"),
        RuntimeError::Bundle(_) => ("BundleError", "Bundle"),
    }
}

/// A `kdsl._errors` exception of class `class`, with `kind` and the message.
pub fn python_error(py: Python<'_>, class: &str, kind: &str, message: String) -> PyErr {
    let made = py.import("kdsl._errors").and_then(|module| {
        let class = module.getattr(class)?;
        class.call1((message.clone(), kind))
    });
    match made {
        Ok(instance) => PyErr::from_value(instance),
        Err(_) => PyRuntimeError::new_err(message),
    }
}

/// The Python exception for a runtime error.
pub fn runtime_error(py: Python<'_>, error: RuntimeError) -> PyErr {
    let (class, kind) = classify(&error);
    let message = match error {
        // The runtime's message names the Rust way to a timed queue.
        RuntimeError::ProfilingDisabled => PROFILING_DISABLED.to_string(),
        other => other.to_string(),
    };
    python_error(py, class, kind, message)
}

/// `Event.elapsed_ns` on a launch that was not timed, with the Python ways to time one.
const PROFILING_DISABLED: &str = "the event has no timing: the launch ran on a queue without \
profiling. dpnp/dpctl arrays: make their queue with profiling, `q = \
dpctl.SyclQueue(device, property=[\"in_order\", \"enable_profiling\"])`, and the arrays on it \
(`dpnp.asarray(x, sycl_queue=q)`); CuPy/PyTorch arrays: launch with `profile=True` \
(`kernel(*args, global_size=n, profile=True)`); NumPy arrays run on kdsl's own queue, which is \
always timed";

/// An argument problem found by the binding itself (before the runtime's checks).
pub fn argument_error(py: Python<'_>, kind: &str, message: String) -> PyErr {
    python_error(py, "ArgumentError", kind, message)
}

/// Converts runtime results inside binding code: `result.or_raise(py)?`.
pub trait OrRaise<T> {
    fn or_raise(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> OrRaise<T> for Result<T, RuntimeError> {
    fn or_raise(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|error| runtime_error(py, error))
    }
}
