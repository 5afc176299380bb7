//! Loaded programs, kernels, launches from Python and their events.

use crate::bundle::Bundle;
use crate::device::Device;
use crate::errors::{argument_error, OrRaise};
use crate::host::HostCopy;
use crate::wait::{release_abandoned, wait_all, wait_for_host_copies, wait_interruptibly};
use kdsl_ir::bf16::bf16_from_f64;
use kdsl_ir::scalar::f16_from_f64;
use kdsl_ir::ScalarType;
use kdsl_runtime::{
    AnyBuffer, Argument, KernelInfo, Launch, ParameterInfo, RuntimeError, ScalarValue,
};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyTuple};

/// A bundle's image loaded on one device instance.
#[pyclass(frozen, module = "kdsl._runtime")]
pub struct Program {
    inner: kdsl_runtime::Program,
}

#[pymethods]
impl Program {
    /// Loads the bundle's image that fits the device (SPIR-V, PTX or AMDGPU).
    #[new]
    fn new(py: Python<'_>, device: &Device, bundle: &Bundle) -> PyResult<Program> {
        let inner = py
            .detach(|| device.inner.load(&bundle.inner))
            .or_raise(py)?;
        Ok(Program { inner })
    }

    /// The image that was loaded: `spirv`, `ptx:sm_90`, `amdgpu:gfx90a`.
    #[getter]
    fn image(&self) -> String {
        self.inner.image().to_string()
    }

    fn kernel(&self, py: Python<'_>, name: &str) -> PyResult<Kernel> {
        let inner = py.detach(|| self.inner.kernel(name)).or_raise(py)?;
        Ok(Kernel {
            device: self.inner.device().clone(),
            inner,
        })
    }
}

/// One kernel of a loaded program.
#[pyclass(frozen, module = "kdsl._runtime")]
pub struct Kernel {
    pub(crate) device: kdsl_runtime::Device,
    pub(crate) inner: kdsl_runtime::Kernel,
}

/// How a buffer argument reaches the kernel.
pub(crate) enum Memory {
    /// Host memory: copied to a device buffer before the launch, back after it when writable.
    Host,
    /// Memory the kernel's device instance can access (a USM pointer of its SYCL context, a
    /// CUDA or HIP device pointer of its context): borrowed, never copied.
    Device,
}

/// A buffer argument as Python describes it: `(kind, address, element count, read_only)`.
pub(crate) struct ArrayArgument {
    pub(crate) memory: Memory,
    pub(crate) address: u64,
    pub(crate) count: usize,
    pub(crate) read_only: bool,
}

pub(crate) enum Prepared {
    Array {
        array: ArrayArgument,
        element: ScalarType,
        writable: bool,
    },
    Scalar(ScalarValue),
    /// A launch-sized local array of `length` elements.
    Local {
        element: ScalarType,
        length: u64,
    },
}

/// The length of a launch-sized local array from Python's `("local", length, type)`, which
/// `kdsl.local(length, type)` gives; its type must be the parameter's.
pub(crate) fn local_length(
    value: &Bound<'_, PyAny>,
    element: ScalarType,
    describe: &dyn Fn() -> String,
) -> Result<u64, (&'static str, String)> {
    let (tag, length, ty): (String, u64, String) = value.extract().map_err(|_| {
        (
            "ArgumentType",
            format!(
                "{} is local memory sized at launch: pass kdsl.local(length, \"{element}\")",
                describe()
            ),
        )
    })?;
    if tag != "local" || ty != element.name() {
        return Err((
            "ArgumentType",
            format!(
                "{} is local memory of {element}, but kdsl.local(..., \"{ty}\") was given",
                describe()
            ),
        ));
    }
    Ok(length)
}

pub(crate) fn launch_geometry(
    py: Python<'_>,
    kernel: &str,
    global: &[u64],
    local: &[u64],
) -> PyResult<Launch> {
    let bad = |why: String| {
        crate::errors::runtime_error(
            py,
            RuntimeError::BadLaunch {
                kernel: kernel.to_string(),
                why,
            },
        )
    };
    // No local sizes: the work-group size is left open (the device, or the runtime, picks).
    if local.is_empty() {
        let g: Vec<usize> = global.iter().map(|&value| value as usize).collect();
        return match g.len() {
            1 => Ok(Launch::global_only([g[0]])),
            2 => Ok(Launch::global_only([g[0], g[1]])),
            3 => Ok(Launch::global_only([g[0], g[1], g[2]])),
            other => Err(bad(format!(
                "a launch has 1, 2 or 3 dimensions, not {other}"
            ))),
        };
    }
    if global.len() != local.len() {
        return Err(bad(format!(
            "the global size has {} dimensions and the local size {}",
            global.len(),
            local.len()
        )));
    }
    let size = |values: &[u64]| {
        values
            .iter()
            .map(|&value| value as usize)
            .collect::<Vec<_>>()
    };
    let (g, l) = (size(global), size(local));
    Ok(match g.len() {
        1 => Launch::new([g[0]], [l[0]]),
        2 => Launch::new([g[0], g[1]], [l[0], l[1]]),
        3 => Launch::new([g[0], g[1], g[2]], [l[0], l[1], l[2]]),
        other => {
            return Err(bad(format!(
                "a launch has 1, 2 or 3 dimensions, not {other}"
            )))
        }
    })
}

/// Converts a Python value to the scalar type of a parameter: ints range-checked, floats to
/// `f32` or `f64`, `bool` only from a bool.
pub(crate) fn convert_scalar(
    value: &Bound<'_, PyAny>,
    ty: ScalarType,
    describe: &dyn Fn() -> String,
) -> Result<ScalarValue, (&'static str, String)> {
    let type_name = || {
        value
            .get_type()
            .name()
            .map(|name| name.to_string())
            .unwrap_or_else(|_| "?".to_string())
    };
    let wrong = || {
        (
            "ArgumentType",
            format!(
                "{} must be {ty}, but a {} was given",
                describe(),
                type_name()
            ),
        )
    };
    let integer = || -> Result<i128, (&'static str, String)> {
        if value.is_instance_of::<PyFloat>() || value.is_instance_of::<PyBool>() {
            return Err(wrong());
        }
        // Most values fit an i64, whose conversion is the cheap one under the stable ABI.
        if let Ok(number) = value.extract::<i64>() {
            return Ok(i128::from(number));
        }
        value.extract::<i128>().map_err(|_| wrong())
    };
    let range = |number: i128| {
        (
            "ScalarOutOfRange",
            format!("{} is {ty}, and {number} is out of its range", describe()),
        )
    };
    macro_rules! int {
        ($rust:ty, $variant:ident) => {{
            let number = integer()?;
            ScalarValue::$variant(<$rust>::try_from(number).map_err(|_| range(number))?)
        }};
    }
    Ok(match ty {
        ScalarType::Bool => {
            // Python's bool, or NumPy's (`numpy.bool`, formerly `numpy.bool_`).
            let name = type_name();
            if !value.is_instance_of::<PyBool>() && name != "bool" && name != "bool_" {
                return Err(wrong());
            }
            ScalarValue::Bool(value.is_truthy().map_err(|_| wrong())?)
        }
        ScalarType::I8 => int!(i8, I8),
        ScalarType::U8 => int!(u8, U8),
        ScalarType::I16 => int!(i16, I16),
        ScalarType::U16 => int!(u16, U16),
        ScalarType::I32 => int!(i32, I32),
        ScalarType::U32 => int!(u32, U32),
        ScalarType::I64 => int!(i64, I64),
        ScalarType::U64 => int!(u64, U64),
        ScalarType::F16 | ScalarType::Bf16 | ScalarType::F32 | ScalarType::F64 => {
            if value.is_instance_of::<PyBool>() {
                return Err(wrong());
            }
            // A Python float, int or NumPy float (`numpy.float16` and ml_dtypes' `bfloat16`
            // included) as an f64, which holds every f16, bf16 and f32 exactly; narrowed by one
            // rounding.
            let number = value.extract::<f64>().map_err(|_| wrong())?;
            let narrowed = match ty {
                ScalarType::F64 => ScalarValue::F64(number),
                ScalarType::F32 => ScalarValue::F32(number as f32),
                ScalarType::Bf16 => ScalarValue::Bf16(bf16_from_f64(number)),
                _ => ScalarValue::F16(f16_from_f64(number)),
            };
            let overflowed = match narrowed {
                ScalarValue::F32(narrowed) => narrowed.is_infinite(),
                // An infinite f16: all exponent bits set, no fraction bits.
                ScalarValue::F16(bits) => bits & 0x7fff == 0x7c00,
                ScalarValue::Bf16(bits) => bits & 0x7fff == 0x7f80,
                _ => false,
            };
            if number.is_finite() && overflowed {
                return Err((
                    "ScalarOutOfRange",
                    format!("{} is {ty}, and {number} is out of its range", describe()),
                ));
            }
            narrowed
        }
    })
}

fn prepare(
    py: Python<'_>,
    info: &KernelInfo,
    arguments: &Bound<'_, PyTuple>,
) -> PyResult<Vec<Prepared>> {
    if arguments.len() != info.parameters.len() {
        return Err(crate::errors::runtime_error(
            py,
            RuntimeError::ArgumentCount {
                kernel: info.name.clone(),
                expected: info.parameters.len(),
                found: arguments.len(),
            },
        ));
    }
    let mut prepared = Vec::with_capacity(arguments.len());
    for (index, (parameter, value)) in info.parameters.iter().zip(arguments.iter()).enumerate() {
        let describe = || {
            format!(
                "argument {index} (`{}`) of kernel `{}`",
                parameter.name(),
                info.name
            )
        };
        match parameter {
            ParameterInfo::Scalar { ty, .. } => {
                let scalar = convert_scalar(&value, *ty, &describe)
                    .map_err(|(kind, message)| argument_error(py, kind, message))?;
                prepared.push(Prepared::Scalar(scalar));
            }
            ParameterInfo::Buffer {
                element,
                space: kdsl_ir::AddressSpace::Local,
                ..
            } => {
                let length = local_length(&value, *element, &describe)
                    .map_err(|(kind, message)| argument_error(py, kind, message))?;
                prepared.push(Prepared::Local {
                    element: *element,
                    length,
                });
            }
            ParameterInfo::Buffer {
                element, writable, ..
            } => {
                let (kind, address, count, read_only): (u8, u64, usize, bool) =
                    value.extract().map_err(|_| {
                        argument_error(
                            py,
                            "ArgumentType",
                            format!("{} must be an array of {element}", describe()),
                        )
                    })?;
                let memory = match kind {
                    0 => Memory::Host,
                    1 => Memory::Device,
                    other => {
                        return Err(argument_error(
                            py,
                            "ArgumentType",
                            format!("{}: unknown memory kind {other}", describe()),
                        ))
                    }
                };
                if *writable && read_only {
                    return Err(crate::errors::runtime_error(
                        py,
                        RuntimeError::ReadOnlyBufferAsWritable {
                            kernel: info.name.clone(),
                            index,
                            name: parameter.name().to_string(),
                        },
                    ));
                }
                prepared.push(Prepared::Array {
                    array: ArrayArgument {
                        memory,
                        address,
                        count,
                        read_only,
                    },
                    element: *element,
                    writable: *writable,
                });
            }
        }
    }
    check_overlaps(py, info, &prepared)?;
    Ok(prepared)
}

/// Two arrays whose bytes overlap, one of them passed to a writable parameter, are rejected as
/// the runtime rejects one buffer passed twice: kernels assume writable buffers do not alias.
pub(crate) fn check_overlaps(
    py: Python<'_>,
    info: &KernelInfo,
    prepared: &[Prepared],
) -> PyResult<()> {
    let ranges: Vec<(usize, u64, u64, bool)> = prepared
        .iter()
        .enumerate()
        .filter_map(|(index, argument)| match argument {
            Prepared::Array {
                array,
                element,
                writable,
            } => {
                let bytes = array.count as u64 * u64::from(element.size_in_bytes());
                Some((index, array.address, array.address + bytes, *writable))
            }
            Prepared::Scalar(_) | Prepared::Local { .. } => None,
        })
        .collect();
    for (position, &(first, start, end, first_writable)) in ranges.iter().enumerate() {
        for &(second, other_start, other_end, second_writable) in &ranges[position + 1..] {
            let overlap = start < other_end && other_start < end;
            if overlap && (first_writable || second_writable) {
                return Err(crate::errors::runtime_error(
                    py,
                    RuntimeError::AliasedBuffers {
                        kernel: info.name.clone(),
                        first,
                        first_name: info.parameters[first].name().to_string(),
                        second,
                        second_name: info.parameters[second].name().to_string(),
                    },
                ));
            }
        }
    }
    Ok(())
}

/// The copies a launch has submitted so far. They read or write the caller's host memory,
/// which Python frees once the call returns, so no path out of [`run`] may leave one running:
/// on an error, everything submitted is waited for before the error is returned.
#[derive(Default)]
struct Submitted(Vec<kdsl_runtime::Event>);

impl Submitted {
    /// `result`, after waiting for every submitted copy if it is an error.
    fn settle<T>(&self, result: Result<T, RuntimeError>) -> Result<T, RuntimeError> {
        if result.is_err() {
            // The first error is the one to report; a failing wait here has nothing to add.
            let _ = wait_all(&self.0);
        }
        result
    }
}

/// The runtime's arguments: `prepared` with each array replaced by its device buffer (a
/// borrowed one, or the host array's copy).
fn arguments<'a>(
    prepared: &'a [Prepared],
    borrowed: &'a [Option<AnyBuffer>],
    host_copies: &'a [(usize, HostCopy)],
) -> Vec<Argument<'a>> {
    prepared
        .iter()
        .enumerate()
        .map(|(index, argument)| match argument {
            Prepared::Scalar(value) => Argument::scalar(*value),
            Prepared::Local { element, length } => Argument::local(*element, *length),
            Prepared::Array { writable, .. } => {
                let buffer = borrowed[index].as_ref().unwrap_or_else(|| {
                    &host_copies
                        .iter()
                        .find(|(position, _)| *position == index)
                        .expect("every host array has a copy")
                        .1
                        .buffer
                });
                Argument::buffer(buffer, *writable)
            }
        })
        .collect()
}

/// A submitted launch, and the copies of host memory that must finish before the caller may
/// free that memory (the copies back for writable parameters, else the copies in).
pub(crate) struct Submission {
    pub(crate) event: kdsl_runtime::Event,
    pub(crate) host_copies: Vec<kdsl_runtime::Event>,
}

/// Runs a launch on the device's default queue, after the foreign SYCL events at the
/// addresses `wait_for_sycl`: borrows device memory, copies host memory in (and, for writable
/// parameters, back out). Does not block: the copies the caller must wait for before freeing
/// host memory are returned. Everything is checked before the first copy is submitted, and
/// an error returns only once the copies submitted are done.
pub(crate) fn submit(
    device: &kdsl_runtime::Device,
    kernel: &kdsl_runtime::Kernel,
    launch: &Launch,
    prepared: &[Prepared],
    wait_for_sycl: &[u64],
) -> Result<Submission, RuntimeError> {
    let queue = device.default_queue();
    let foreign = wait_for_sycl
        .iter()
        // SAFETY: Python passes `addressof_ref()` of dpctl events it holds during the call.
        .map(|&address| unsafe { queue.adopt_sycl_event(address as *const std::ffi::c_void) })
        .collect::<Result<Vec<_>, _>>()?;
    let waits: Vec<&kdsl_runtime::Event> = foreign.iter().collect();
    let mut borrowed: Vec<Option<AnyBuffer>> = Vec::with_capacity(prepared.len());
    let mut host_copies: Vec<(usize, HostCopy)> = Vec::new();
    for (index, argument) in prepared.iter().enumerate() {
        let Prepared::Array { array, element, .. } = argument else {
            borrowed.push(None);
            continue;
        };
        match array.memory {
            Memory::Host => {
                let copy = HostCopy::allocate(device, *element, array.address, array.count)?;
                host_copies.push((index, copy));
                borrowed.push(None);
            }
            Memory::Device => {
                // SAFETY: Python described memory of this device's context (the array's own
                // queue or stream) and keeps the array alive until the launch has completed.
                let buffer = unsafe {
                    AnyBuffer::borrowed(
                        device,
                        array.address,
                        *element,
                        array.count,
                        array.read_only,
                    )
                }?;
                borrowed.push(Some(buffer));
            }
        }
    }
    queue.check_launch(
        kernel,
        launch,
        &arguments(prepared, &borrowed, &host_copies),
    )?;
    let mut submitted = Submitted::default();
    let mut uploads = Vec::new();
    for (_, copy) in &mut host_copies {
        // SAFETY: Python keeps the array alive during the call, which waits for this copy
        // (below, or in `settle` on an error) before returning; it described the copy's
        // elements at the copy's address.
        let upload = submitted.settle(unsafe { copy.upload(&queue) })?;
        submitted.0.extend(upload.iter().cloned());
        uploads.extend(upload);
    }
    let event = submitted.settle(kernel.launch_on(
        &queue,
        launch,
        &arguments(prepared, &borrowed, &host_copies),
        &waits,
    ))?;
    let mut downloads = Vec::new();
    for (index, copy) in &host_copies {
        if let Prepared::Array { writable: true, .. } = prepared[*index] {
            // SAFETY: the array is writable (checked in `prepare`) and alive until the wait
            // below (or in `settle`).
            let download = submitted.settle(unsafe { copy.download(&queue, &[&event]) })?;
            submitted.0.extend(download.iter().cloned());
            downloads.extend(download);
        }
    }
    let host_copies = if downloads.is_empty() {
        uploads
    } else {
        downloads
    };
    Ok(Submission { event, host_copies })
}

/// [`submit`], then waits for the host copies (and, when arrays are copied back, for the
/// launch, whose errors surface then).
pub(crate) fn run(
    device: &kdsl_runtime::Device,
    kernel: &kdsl_runtime::Kernel,
    launch: &Launch,
    prepared: &[Prepared],
    wait_for_sycl: &[u64],
) -> Result<kdsl_runtime::Event, RuntimeError> {
    let submission = submit(device, kernel, launch, prepared, wait_for_sycl)?;
    if !submission.host_copies.is_empty() {
        wait_all(&submission.host_copies)?;
    }
    Ok(submission.event)
}

#[pymethods]
impl Kernel {
    #[getter]
    fn name(&self) -> String {
        self.inner.name().to_string()
    }

    /// The address of the `sycl::kernel` inside (for dpctl's `SyclKernel_Make`, which copies
    /// it), on a SYCL device; a `kdsl.DeviceError` on other devices.
    fn sycl_kernel_address(&self, py: Python<'_>) -> PyResult<usize> {
        match self.inner.sycl_kernel() {
            Ok(Some(address)) => Ok(address as usize),
            Ok(None) => Err(crate::errors::runtime_error(
                py,
                kdsl_runtime::RuntimeError::Unsupported {
                    backend: self.device.info().backend,
                    what: format!(
                        "a sycl::kernel for kernel `{}` (only kernels of SYCL devices have one)",
                        self.inner.name()
                    ),
                },
            )),
            Err(error) => Err(crate::errors::runtime_error(py, error)),
        }
    }

    /// Checks and submits a launch. Each buffer argument is a tuple `(kind, address, count,
    /// read_only)`: kind 0 is host memory, copied in and, for writable parameters, back out
    /// (the call waits for that); kind 1 is memory of this kernel's device instance (the USM of
    /// its SYCL context, a pointer of its CUDA or HIP context), borrowed without copies.
    /// Scalars are Python numbers converted by the signature. `wait_for_sycl`: addresses of
    /// `sycl::event`s (dpctl's `SyclEvent.addressof_ref()`) the launch must follow, on a SYCL
    /// device only.
    /// `keep_alive`: what owns the host memory (the NumPy arrays); when Ctrl-C interrupts
    /// the wait for the copies, it is kept referenced until they are done.
    #[pyo3(signature = (arguments, global, local, wait_for_sycl = Vec::new(), keep_alive = None))]
    fn launch(
        &self,
        py: Python<'_>,
        arguments: &Bound<'_, PyTuple>,
        global: Vec<u64>,
        local: Vec<u64>,
        wait_for_sycl: Vec<u64>,
        keep_alive: Option<Py<PyAny>>,
    ) -> PyResult<Event> {
        release_abandoned(py);
        let info = self.inner.info();
        let launch = launch_geometry(py, &info.name, &global, &local)?;
        let prepared = prepare(py, info, arguments)?;
        let Submission { event, host_copies } = py
            .detach(|| {
                submit(
                    &self.device,
                    &self.inner,
                    &launch,
                    &prepared,
                    &wait_for_sycl,
                )
            })
            .or_raise(py)?;
        crate::exit::note_launch(py, &event);
        if !host_copies.is_empty() {
            // Without `keep_alive` the arguments tuple is kept (it holds no arrays, only
            // their addresses, so callers that free arrays must pass them).
            let owner = keep_alive.unwrap_or_else(|| arguments.clone().unbind().into_any());
            wait_for_host_copies(py, host_copies, owner)?;
            // Errors the device raised while running the kernel surface here once arrays
            // were copied back (the copies back followed the launch).
            if prepared.iter().any(|argument| {
                matches!(
                    argument,
                    Prepared::Array {
                        array: ArrayArgument {
                            memory: Memory::Host,
                            ..
                        },
                        writable: true,
                        ..
                    }
                )
            }) {
                py.detach(|| event.wait()).or_raise(py)?;
            }
        }
        Ok(Event { inner: event })
    }
}

/// A submitted launch.
#[pyclass(frozen, module = "kdsl._runtime")]
pub struct Event {
    pub(crate) inner: kdsl_runtime::Event,
}

#[pymethods]
impl Event {
    /// Waits for the launch to finish; raises what the device reported while running it.
    /// Ctrl-C (a signal handler's exception) interrupts the wait, not the launch.
    fn wait(&self, py: Python<'_>) -> PyResult<()> {
        wait_interruptibly(py, &self.inner)?;
        py.detach(|| self.inner.wait()).or_raise(py)
    }

    /// True once the launch has finished. Never blocks.
    #[getter]
    fn is_complete(&self, py: Python<'_>) -> PyResult<bool> {
        self.inner.is_complete().or_raise(py)
    }

    /// Waits, then gives the kernel's execution time in nanoseconds as the device measured it.
    #[getter]
    fn elapsed_ns(&self, py: Python<'_>) -> PyResult<u64> {
        wait_interruptibly(py, &self.inner)?;
        py.detach(|| self.inner.elapsed_ns()).or_raise(py)
    }

    /// For a launch on a SYCL device: a `"SyclEventRef"` capsule of its `sycl::event`, for
    /// `dpctl.SyclEvent(capsule)` (which copies the event at once); the capsule is valid while
    /// this event lives. None on other backends.
    pub(crate) fn sycl_event_capsule(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let Some(address) = self.inner.sycl_event().or_raise(py)? else {
            return Ok(None);
        };
        // SAFETY: a plain capsule without destructor around a pointer that stays valid while
        // `self` lives; the name is a static C string.
        let capsule = unsafe {
            let raw = pyo3::ffi::PyCapsule_New(
                address as *mut std::ffi::c_void,
                c"SyclEventRef".as_ptr(),
                None,
            );
            Bound::from_owned_ptr_or_err(py, raw)?
        };
        Ok(Some(capsule.unbind()))
    }
}
