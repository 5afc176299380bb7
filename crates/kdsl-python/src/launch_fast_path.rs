//! The launch fast path: `kernel[g, l](*args)` on dpnp/dpctl, CuPy and PyTorch arrays, read and
//! checked here with no Python frames between the call and the submission.
//!
//! Only the common case is taken: every array a device array of a kind known here, of the
//! parameter's element type, C-contiguous, writable where the parameter is `mut`, all on one
//! queue or stream; for a multi-dimensional parameter, an array of its rank, whose extents and
//! (C-contiguous) strides fill the hidden parameters that follow it, so the runtime launches
//! the kernel's contiguous entry point (`Kernel::entry_for`; strided views, which the Python
//! path passes, launch the kernel's own). Anything else (NumPy
//! arrays, keywords, and every misuse) goes to the Python path, which raises the precise error. On an out-of-order SYCL queue (dpnp's
//! default) a launch is ordered as dpnp orders its own operations: after the events of the
//! queue's `SequentialOrderManager`, and recorded there. The checks that remain (scalars, aliasing, the launch geometry,
//! the runtime's own) are the ones every launch gets.

use crate::errors::{argument_error, OrRaise};
use crate::launch::{
    check_overlaps, convert_scalar, launch_geometry, local_length, run, ArrayArgument, Event,
    Kernel, Memory, Prepared,
};
use kdsl_ir::ScalarType;
use kdsl_runtime::{Launch, ScalarValue};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use pyo3::types::{PyCapsule, PyDict, PyTuple, PyType, PyWeakrefReference};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

/// A parameter as the fast path needs it.
#[derive(Clone, Copy)]
enum Parameter {
    Buffer {
        element: ScalarType,
        writable: bool,
        /// 1, or the dimensions of a multi-dimensional buffer (`global [[f32]]`), whose
        /// hidden extents and strides follow it in the kernel's parameters.
        rank: usize,
    },
    Scalar(ScalarType),
    /// A launch-sized local array (`kdsl.local(length, type)`).
    Local(ScalarType),
}

/// The array kinds read here.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ArrayKind {
    /// `dpnp.ndarray`: its `usm_ndarray` through `get_array()`.
    Dpnp,
    /// `usm_ndarray` (dpnp.tensor, dpctl.tensor).
    Usm,
    /// `cupy.ndarray`.
    Cupy,
    /// `torch.Tensor` on a CUDA device.
    Torch,
    /// dpctl's untyped USM memory (`MemoryUSMDevice`, `MemoryUSMShared`, `MemoryUSMHost`): its
    /// bytes take the parameter's element type.
    DpctlMemory,
}

/// Where the arrays of a launch live: a SYCL queue (the dpctl `SyclQueue` object's address),
/// or a CUDA device's stream.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Place {
    Sycl(usize),
    Cuda { ordinal: u64, stream: u64 },
}

/// What a `usm_ndarray` never changes: read once per array (its `dtype` alone costs more than
/// a launch's submission), kept while the array lives.
struct UsmFacts {
    array: Py<PyWeakrefReference>,
    address: u64,
    count: usize,
    element_matches: Option<ScalarType>,
    type_char: char,
    queue: Py<PyAny>,
}

/// The device instance a place launches on, and the arrays of its launches, kept referenced
/// until those launches have completed (the instance's launches complete in order, so only
/// the last event of each group of launches is kept).
struct Target {
    kernel: Py<Kernel>,
    /// For an out-of-order SYCL queue: dpctl's `SequentialOrderManager` of the queue and the
    /// `dpctl.SyclEvent` type.
    ordering: Option<(Py<PyAny>, Py<PyAny>)>,
    in_flight: Mutex<InFlight>,
}

#[derive(Default)]
struct InFlight {
    groups: VecDeque<(kdsl_runtime::Event, Vec<Py<PyTuple>>)>,
    open: Vec<Py<PyTuple>>,
}

const GROUP: usize = 64;

#[derive(Default)]
struct State {
    /// Each array type met, by type object address: its kind, or None for the Python path.
    types: HashMap<usize, (Py<PyType>, Option<ArrayKind>)>,
    usm: HashMap<usize, UsmFacts>,
    /// `usm_ndarray` flag bits (C-contiguous, writable), from dpnp's C API constants.
    usm_flags: Option<(i64, i64)>,
    /// PyTorch dtype objects by address: the element type they hold.
    torch_types: HashMap<usize, (Py<PyAny>, Option<ScalarType>)>,
    /// `cupy.cuda.get_current_stream`, `torch._C._cuda_getCurrentRawStream`.
    cupy_stream: Option<Py<PyAny>>,
    torch_stream: Option<Py<PyAny>>,
    /// Places met: their target, or None where the Python path launches (out-of-order queues).
    targets: HashMap<Place, Option<Arc<Target>>>,
}

/// The fast path of one kernel (a `kdsl.Kernel`); `resolve(kind, where)` gives the loaded
/// `_runtime.Kernel` for a place, or None.
#[pyclass(frozen, module = "kdsl._runtime")]
pub struct Launcher {
    name: String,
    parameters: Vec<Parameter>,
    resolve: Py<PyAny>,
    state: Mutex<State>,
}

/// Locks one of the launcher's mutexes. Code holding one calls into Python, which may let
/// another thread take the GIL, so a thread that must wait for the lock waits detached from
/// Python (else it would wait holding the GIL that the lock's holder needs).
fn lock<'m, T>(py: Python<'_>, mutex: &'m Mutex<T>) -> MutexGuard<'m, T> {
    mutex
        .lock_py_attached(py)
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// NumPy's one-character type codes of each element type (`long` and `long long` are both
/// 64-bit on Linux).
fn type_chars(element: ScalarType) -> &'static str {
    match element {
        ScalarType::Bool => "?",
        ScalarType::I8 => "b",
        ScalarType::U8 => "B",
        ScalarType::I16 => "h",
        ScalarType::U16 => "H",
        ScalarType::I32 => "i",
        ScalarType::U32 => "I",
        ScalarType::I64 => "lq",
        ScalarType::U64 => "LQ",
        ScalarType::F16 => "e",
        // ml_dtypes' `bfloat16` (NumPy itself has none).
        ScalarType::Bf16 => "E",
        ScalarType::F32 => "f",
        ScalarType::F64 => "d",
    }
}

fn torch_element(name: &str) -> Option<ScalarType> {
    Some(match name {
        "torch.bool" => ScalarType::Bool,
        "torch.int8" => ScalarType::I8,
        "torch.uint8" => ScalarType::U8,
        "torch.int16" => ScalarType::I16,
        "torch.uint16" => ScalarType::U16,
        "torch.int32" => ScalarType::I32,
        "torch.uint32" => ScalarType::U32,
        "torch.int64" => ScalarType::I64,
        "torch.uint64" => ScalarType::U64,
        "torch.float16" => ScalarType::F16,
        "torch.bfloat16" => ScalarType::Bf16,
        "torch.float32" => ScalarType::F32,
        "torch.float64" => ScalarType::F64,
        _ => return None,
    })
}

/// The kind of arrays of type `ty`, judged by its module and name once.
fn classify(ty: &Bound<'_, PyType>) -> PyResult<Option<ArrayKind>> {
    let module: String = ty.getattr(intern!(ty.py(), "__module__"))?.extract()?;
    let name = ty.name()?.to_string();
    Ok(match (module.as_str(), name.as_str()) {
        (module, "usm_ndarray") if module.ends_with("tensor._usmarray") => Some(ArrayKind::Usm),
        (module, "dpnp_array") if module.starts_with("dpnp") => Some(ArrayKind::Dpnp),
        ("cupy", "ndarray") | ("cupy._core.core", "ndarray") => Some(ArrayKind::Cupy),
        ("torch", "Tensor") => Some(ArrayKind::Torch),
        ("dpctl.memory._memory", "MemoryUSMDevice" | "MemoryUSMShared" | "MemoryUSMHost") => {
            Some(ArrayKind::DpctlMemory)
        }
        _ => None,
    })
}

/// One array read: where it lives and what the runtime needs.
struct Read<'py> {
    place: Place,
    address: u64,
    count: usize,
    /// The dpctl `SyclQueue` of a SYCL array.
    queue: Option<Bound<'py, PyAny>>,
}

impl Launcher {
    fn kind_of(&self, state: &mut State, value: &Bound<'_, PyAny>) -> PyResult<Option<ArrayKind>> {
        let ty = value.get_type();
        let key = ty.as_ptr() as usize;
        if let Some((_, kind)) = state.types.get(&key) {
            return Ok(*kind);
        }
        let kind = classify(&ty)?;
        state.types.insert(key, (ty.unbind(), kind));
        Ok(kind)
    }

    /// Reads a `usm_ndarray`; None where the Python path must judge it.
    fn read_usm<'py>(
        &self,
        state: &mut State,
        usm: &Bound<'py, PyAny>,
        element: ScalarType,
        writable: bool,
    ) -> PyResult<Option<Read<'py>>> {
        let py = usm.py();
        let (contiguous_bit, writable_bit) = match state.usm_flags {
            Some(bits) => bits,
            None => {
                let bits = usm_flag_bits(&usm.get_type())?;
                state.usm_flags = Some(bits);
                bits
            }
        };
        let flags: i64 = usm
            .getattr(intern!(py, "flags"))?
            .getattr(intern!(py, "flags"))?
            .extract()?;
        if flags & contiguous_bit == 0 || (writable && flags & writable_bit == 0) {
            return Ok(None);
        }
        let key = usm.as_ptr() as usize;
        let known = state.usm.get(&key).filter(|facts| {
            facts
                .array
                .bind(py)
                .upgrade()
                .is_some_and(|alive| alive.is(usm))
        });
        let facts = match known {
            Some(facts) => facts,
            None => {
                if state.usm.len() >= 4096 {
                    state
                        .usm
                        .retain(|_, facts| facts.array.bind(py).upgrade().is_some());
                }
                let type_char: String = usm
                    .getattr(intern!(py, "dtype"))?
                    .getattr(intern!(py, "char"))?
                    .extract()?;
                let facts = UsmFacts {
                    array: PyWeakrefReference::new(usm)?.unbind(),
                    address: usm.getattr(intern!(py, "_pointer"))?.extract()?,
                    count: usm.getattr(intern!(py, "size"))?.extract()?,
                    element_matches: None,
                    type_char: type_char.chars().next().unwrap_or('?'),
                    queue: usm.getattr(intern!(py, "sycl_queue"))?.unbind(),
                };
                state.usm.insert(key, facts);
                &state.usm[&key]
            }
        };
        let matches =
            facts.element_matches == Some(element) || type_chars(element).contains(facts.type_char);
        if !matches {
            return Ok(None);
        }
        Ok(Some(Read {
            place: Place::Sycl(facts.queue.as_ptr() as usize),
            address: facts.address,
            count: facts.count,
            queue: Some(facts.queue.bind(py).clone()),
        }))
    }

    /// Reads dpctl USM memory as elements of `element`; None where its size is not a whole
    /// number of elements (the Python path raises).
    fn read_dpctl_memory<'py>(
        &self,
        memory: &Bound<'py, PyAny>,
        element: ScalarType,
    ) -> PyResult<Option<Read<'py>>> {
        let py = memory.py();
        let bytes: usize = memory.getattr(intern!(py, "nbytes"))?.extract()?;
        let element_bytes = element.size_in_bytes() as usize;
        if !bytes.is_multiple_of(element_bytes) {
            return Ok(None);
        }
        let queue = memory.getattr(intern!(py, "sycl_queue"))?;
        Ok(Some(Read {
            place: Place::Sycl(queue.as_ptr() as usize),
            address: memory.getattr(intern!(py, "_pointer"))?.extract()?,
            count: bytes / element_bytes,
            queue: Some(queue),
        }))
    }

    fn read_cupy<'py>(
        &self,
        state: &mut State,
        array: &Bound<'py, PyAny>,
        element: ScalarType,
    ) -> PyResult<Option<Read<'py>>> {
        let py = array.py();
        let type_char: String = array
            .getattr(intern!(py, "dtype"))?
            .getattr(intern!(py, "char"))?
            .extract()?;
        if !type_chars(element).contains(type_char.as_str()) || type_char.len() != 1 {
            return Ok(None);
        }
        let contiguous: bool = match array.getattr(intern!(py, "_c_contiguous")) {
            Ok(value) => value.extract()?,
            Err(_) => array
                .getattr(intern!(py, "flags"))?
                .getattr(intern!(py, "c_contiguous"))?
                .extract()?,
        };
        if !contiguous {
            return Ok(None);
        }
        let data = array.getattr(intern!(py, "data"))?;
        let address: u64 = data.getattr(intern!(py, "ptr"))?.extract()?;
        let ordinal: u64 = data.getattr(intern!(py, "device_id"))?.extract()?;
        let count: usize = array.getattr(intern!(py, "size"))?.extract()?;
        let current = match &state.cupy_stream {
            Some(function) => function.bind(py).clone(),
            None => {
                // `cupy.cuda.get_current_stream()`: its `ptr` is 0 for the legacy default
                // stream and 2 for the per-thread one, the handles the Python path derives
                // from the array interface.
                let function = py.import("cupy.cuda")?.getattr("get_current_stream")?;
                state.cupy_stream = Some(function.clone().unbind());
                function
            }
        };
        let stream: u64 = current.call0()?.getattr(intern!(py, "ptr"))?.extract()?;
        Ok(Some(Read {
            place: Place::Cuda { ordinal, stream },
            address,
            count,
            queue: None,
        }))
    }

    fn read_torch<'py>(
        &self,
        state: &mut State,
        tensor: &Bound<'py, PyAny>,
        element: ScalarType,
    ) -> PyResult<Option<Read<'py>>> {
        let py = tensor.py();
        let is_cuda: bool = tensor.getattr(intern!(py, "is_cuda"))?.extract()?;
        let requires_grad: bool = tensor.getattr(intern!(py, "requires_grad"))?.extract()?;
        if !is_cuda || requires_grad {
            return Ok(None);
        }
        let dtype = tensor.getattr(intern!(py, "dtype"))?;
        let key = dtype.as_ptr() as usize;
        let held = match state.torch_types.get(&key) {
            Some((_, held)) => *held,
            None => {
                let held = torch_element(&dtype.str()?.to_string());
                state.torch_types.insert(key, (dtype.unbind(), held));
                held
            }
        };
        if held != Some(element) {
            return Ok(None);
        }
        let contiguous: bool = tensor
            .call_method0(intern!(py, "is_contiguous"))?
            .extract()?;
        if !contiguous {
            return Ok(None);
        }
        let address: u64 = tensor.call_method0(intern!(py, "data_ptr"))?.extract()?;
        let count: usize = tensor.call_method0(intern!(py, "numel"))?.extract()?;
        let ordinal: u64 = tensor.call_method0(intern!(py, "get_device"))?.extract()?;
        let current = match &state.torch_stream {
            Some(function) => function.bind(py).clone(),
            None => {
                let torch = py.import("torch")?;
                // ROCm builds of PyTorch name HIP streams: the Python path handles them.
                if !torch.getattr("version")?.getattr("hip")?.is_none() {
                    return Ok(None);
                }
                let function = match torch.getattr("_C")?.getattr("_cuda_getCurrentRawStream") {
                    Ok(function) => function,
                    Err(_) => return Ok(None),
                };
                state.torch_stream = Some(function.clone().unbind());
                function
            }
        };
        let stream: u64 = current.call1((ordinal,))?.extract()?;
        Ok(Some(Read {
            place: Place::Cuda { ordinal, stream },
            address,
            count,
            queue: None,
        }))
    }

    /// The target of `place`, made on its first launch by `resolve` (which adopts the queue or
    /// stream and loads the kernel: Python code that may release the GIL), called with no
    /// lock held; a target another thread made meanwhile wins.
    fn target(
        &self,
        py: Python<'_>,
        place: Place,
        queue: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Option<Arc<Target>>> {
        if let Some(target) = lock(py, &self.state).targets.get(&place) {
            return Ok(target.clone());
        }
        let resolved = match (place, queue) {
            (Place::Sycl(_), Some(queue)) => self.resolve.bind(py).call1(("sycl", queue))?,
            (Place::Cuda { ordinal, stream }, _) => {
                self.resolve.bind(py).call1(("cuda", (ordinal, stream)))?
            }
            (Place::Sycl(_), None) => return Ok(None),
        };
        let target = if resolved.is_none() {
            None
        } else {
            // `(kernel, order manager or None)`.
            let (kernel, manager): (Py<Kernel>, Option<Py<PyAny>>) = resolved.extract()?;
            let ordering = match manager {
                Some(manager) => {
                    let event_type = py.import("dpctl")?.getattr("SyclEvent")?.unbind();
                    Some((manager, event_type))
                }
                None => None,
            };
            Some(Arc::new(Target {
                kernel,
                ordering,
                in_flight: Mutex::new(InFlight::default()),
            }))
        };
        Ok(lock(py, &self.state)
            .targets
            .entry(place)
            .or_insert(target)
            .clone())
    }

    /// The launch, or None where the Python path must take it.
    fn try_launch(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        launch: &Launch,
    ) -> PyResult<Option<Event>> {
        if args.len() != self.parameters.len() {
            return Ok(None);
        }
        let mut state = lock(py, &self.state);
        let mut prepared = Vec::with_capacity(self.parameters.len());
        let mut place: Option<Place> = None;
        let mut sycl_queue: Option<Bound<'_, PyAny>> = None;
        for (parameter, value) in self.parameters.iter().zip(args.iter()) {
            let (element, writable, rank) = match *parameter {
                Parameter::Scalar(ty) => {
                    // A scalar the signature refuses goes to the Python path, which raises.
                    match convert_scalar(&value, ty, &String::new) {
                        Ok(scalar) => {
                            prepared.push(Prepared::Scalar(scalar));
                            continue;
                        }
                        Err(_) => return Ok(None),
                    }
                }
                Parameter::Buffer {
                    element,
                    writable,
                    rank,
                } => (element, writable, rank),
                Parameter::Local(element) => match local_length(&value, element, &String::new) {
                    Ok(length) => {
                        prepared.push(Prepared::Local { element, length });
                        continue;
                    }
                    // The Python path raises the precise error.
                    Err(_) => return Ok(None),
                },
            };
            let read = match self.kind_of(&mut state, &value)? {
                None => return Ok(None),
                Some(ArrayKind::Dpnp) => {
                    let usm = value.call_method0(intern!(py, "get_array"))?;
                    self.read_usm(&mut state, &usm, element, writable)?
                }
                Some(ArrayKind::Usm) => self.read_usm(&mut state, &value, element, writable)?,
                Some(ArrayKind::Cupy) => self.read_cupy(&mut state, &value, element)?,
                Some(ArrayKind::Torch) => self.read_torch(&mut state, &value, element)?,
                Some(ArrayKind::DpctlMemory) => self.read_dpctl_memory(&value, element)?,
            };
            let Some(read) = read else {
                return Ok(None);
            };
            match place {
                None => {
                    place = Some(read.place);
                    sycl_queue = read.queue;
                }
                Some(first) if first != read.place => return Ok(None),
                Some(_) => {}
            }
            let shape = match rank {
                1 => None,
                _ => match c_contiguous_shape(&value, rank)? {
                    Some(shape) => Some(shape),
                    None => return Ok(None),
                },
            };
            prepared.push(Prepared::Array {
                array: ArrayArgument {
                    memory: Memory::Device,
                    address: read.address,
                    count: read.count,
                    read_only: false,
                },
                element,
                writable,
            });
            if let Some(shape) = shape {
                prepared.extend(shape_arguments(&shape));
            }
        }
        let Some(place) = place else {
            return Ok(None);
        };
        drop(state);
        let Some(target) = self.target(py, place, sycl_queue.as_ref())? else {
            return Ok(None);
        };
        let kernel = target.kernel.get();
        check_overlaps(py, kernel.inner.info(), &prepared)?;
        // Submission and bookkeeping share this lock, so the order recorded is the order
        // submitted when threads launch at once.
        let mut in_flight = lock(py, &target.in_flight);
        let event = match &target.ordering {
            None => run(&kernel.device, &kernel.inner, launch, &prepared, &[]).or_raise(py)?,
            Some((manager, event_type)) => {
                // The producers' events stay referenced (by `producers`) during the launch,
                // which copies them.
                let manager = manager.bind(py);
                let producers = manager.getattr(intern!(py, "submitted_events"))?;
                let mut addresses = Vec::new();
                for producer in producers.try_iter()? {
                    addresses.push(
                        producer?
                            .call_method0(intern!(py, "addressof_ref"))?
                            .extract()?,
                    );
                }
                let event = run(&kernel.device, &kernel.inner, launch, &prepared, &addresses)
                    .or_raise(py)?;
                let launched = Event {
                    inner: event.clone(),
                }
                .sycl_event_capsule(py)?;
                if let Some(capsule) = launched {
                    let launched = event_type.bind(py).call1((capsule,))?;
                    manager.call_method1(intern!(py, "add_event_pair"), (&launched, &launched))?;
                }
                event
            }
        };
        crate::exit::note_launch(py, &event);
        in_flight.open.push(args.clone().unbind());
        let mut completed = Vec::new();
        if in_flight.open.len() >= GROUP {
            let group = std::mem::take(&mut in_flight.open);
            in_flight.groups.push_back((event.clone(), group));
            while in_flight
                .groups
                .front()
                .is_some_and(|(event, _)| event.is_complete().unwrap_or(false))
            {
                completed.extend(in_flight.groups.pop_front());
            }
        }
        drop(in_flight);
        // Released with no lock held: dropping the last reference of an array runs Python.
        drop(completed);
        Ok(Some(Event { inner: event }))
    }
}

/// The extents of an array of `rank` dimensions (each within `u32`), or None for the Python
/// path (another rank, too large an extent, or no `shape`: dpctl's untyped memory).
fn c_contiguous_shape(array: &Bound<'_, PyAny>, rank: usize) -> PyResult<Option<Vec<u32>>> {
    let Ok(shape) = array.getattr(intern!(array.py(), "shape")) else {
        return Ok(None);
    };
    let Ok(shape) = shape.extract::<Vec<u64>>() else {
        return Ok(None);
    };
    if shape.len() != rank {
        return Ok(None);
    }
    Ok(shape
        .into_iter()
        .map(|extent| u32::try_from(extent).ok())
        .collect())
}

/// A C-contiguous array's hidden arguments: its extents (`u32`), then its strides in elements
/// (`u64`; an extent of 0 counts as 1, as the Python path does).
fn shape_arguments(shape: &[u32]) -> Vec<Prepared> {
    let mut strides = vec![1u64; shape.len()];
    for dimension in (0..shape.len() - 1).rev() {
        strides[dimension] = strides[dimension + 1] * u64::from(shape[dimension + 1].max(1));
    }
    let extents = shape.iter().map(|&e| Prepared::Scalar(ScalarValue::U32(e)));
    extents
        .chain(
            strides
                .into_iter()
                .map(|s| Prepared::Scalar(ScalarValue::U64(s))),
        )
        .collect()
}

/// The C-contiguous and writable bits of `usm_ndarray.flags.flags`, from the constants the
/// array's module exports (`USM_ARRAY_C_CONTIGUOUS`, `USM_ARRAY_WRITABLE`).
fn usm_flag_bits(ty: &Bound<'_, PyType>) -> PyResult<(i64, i64)> {
    let py = ty.py();
    let module: String = ty.getattr(intern!(py, "__module__"))?.extract()?;
    let capi = py.import(module.as_str())?.getattr("__pyx_capi__")?;
    let constant = |name: &str| -> PyResult<i64> {
        let item = capi.get_item(name)?;
        let capsule = item.cast::<PyCapsule>()?;
        let pointer = capsule.pointer_checked(Some(c"int"))?;
        // SAFETY: Cython exports a module-level `int` variable as a capsule named "int" holding
        // its address; the module stays imported.
        Ok(i64::from(unsafe {
            *(pointer.as_ptr() as *const std::ffi::c_int)
        }))
    };
    Ok((
        constant("USM_ARRAY_C_CONTIGUOUS")?,
        constant("USM_ARRAY_WRITABLE")?,
    ))
}

#[pymethods]
impl Launcher {
    /// `parameters`: `(kind, type, writable, rank)` per parameter the caller passes, kind
    /// `"buffer"`, `"local"` or `"scalar"`; a buffer of rank 2 or more is followed in the
    /// kernel by its hidden extents and strides.
    #[new]
    fn new(
        py: Python<'_>,
        name: String,
        parameters: Vec<(String, String, bool, usize)>,
        resolve: Py<PyAny>,
    ) -> PyResult<Launcher> {
        let parameters = parameters
            .into_iter()
            .map(|(kind, ty, writable, rank)| {
                let ty = ScalarType::from_name(&ty).ok_or_else(|| {
                    argument_error(py, "ArgumentType", format!("unknown type `{ty}`"))
                })?;
                Ok(if kind == "buffer" {
                    Parameter::Buffer {
                        element: ty,
                        writable,
                        rank: rank.max(1),
                    }
                } else if kind == "local" {
                    Parameter::Local(ty)
                } else {
                    Parameter::Scalar(ty)
                })
            })
            .collect::<PyResult<Vec<_>>>()?;
        Ok(Launcher {
            name,
            parameters,
            resolve,
            state: Mutex::new(State::default()),
        })
    }

    /// A launch with these sizes: `configure(global, local, fallback)` is called with the
    /// arguments; `fallback(*args, **kwargs)` takes what the fast path does not.
    fn configure(
        slf: Py<Launcher>,
        py: Python<'_>,
        global: Vec<u64>,
        local: Vec<u64>,
        fallback: Py<PyAny>,
    ) -> PyResult<Configured> {
        let launch = launch_geometry(py, &slf.get().name, &global, &local)?;
        Ok(Configured {
            launcher: slf,
            launch,
            fallback,
        })
    }

    /// The launch through the fast path, or None.
    fn try_launch_sizes(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        global: Vec<u64>,
        local: Vec<u64>,
    ) -> PyResult<Option<Event>> {
        let launch = launch_geometry(py, &self.name, &global, &local)?;
        self.try_launch(py, args, &launch)
    }
}

/// A kernel with its launch sizes, `kernel[global_size, local_size]`: call it with the
/// kernel's arguments to submit one launch, which returns a `kdsl.Event`.
///
/// launch(*args, device=None, queue=None, stream=None, profile=False) -> Event
///
/// The arguments follow the kernel's signature (`kernel.signature`, `help(kernel)`). The launch
/// runs where the arrays live (dpnp/dpctl: their queue; CuPy/PyTorch: their device and stream;
/// NumPy: `device=`, else the default device, with copies) and does not block, except for
/// NumPy arrays. Sizes count work-items, dimension 0 fastest (`get_global_id(0)`, CUDA's x).
///
/// >>> event = module.saxpy[1024, 256](y, x, 2.0, 1000)
/// >>> event.wait()
#[pyclass(frozen, module = "kdsl._runtime")]
pub struct Configured {
    launcher: Py<Launcher>,
    launch: Launch,
    fallback: Py<PyAny>,
}

#[pymethods]
impl Configured {
    #[pyo3(signature = (*args, **kwargs))]
    fn __call__(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        if kwargs.is_none_or(|kwargs| kwargs.is_empty()) {
            if let Some(event) = self.launcher.get().try_launch(py, args, &self.launch)? {
                return Ok(Py::new(py, event)?.into_any());
            }
        }
        Ok(self.fallback.bind(py).call(args, kwargs)?.unbind())
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let fallback = self.fallback.bind(py).repr()?;
        Ok(format!("<kdsl launch {}>", fallback.to_str()?))
    }
}
