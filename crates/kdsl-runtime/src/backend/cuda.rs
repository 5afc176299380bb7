//! The CUDA backend: the driver API through cudarc, with `libcuda.so` loaded at run time.
//!
//! PTX is loaded with `cuModuleLoadData` (the driver JIT-compiles it for the device), launches go
//! through `cuLaunchKernel` with one pointer per argument, and two events recorded around each
//! submission time it. Each opened device instance has its own non-blocking stream on the
//! device's primary context (or an adopted stream); further queues are further streams.
//! Two instances of one GPU share the primary context, so a buffer of one would work in the
//! other; the runtime still rejects it, to keep one ownership rule on every backend.
//!
//! Not run on hardware on the development machine (it has no NVIDIA GPU); discovery there reports
//! "no CUDA driver".

use super::{
    downcast, DeviceBackend, EventBackend, KernelBackend, ModuleBackend, QueueBackend, RawArgument,
    Submitted,
};
use crate::buffer::MemoryKind;
use crate::device::{BackendKind, DeviceInfo, DeviceTarget, DeviceType};
use crate::error::{Result, RuntimeError};
use crate::inline_vec::{InlineVec, INLINE_ARGUMENTS};
use crate::launch::{DeviceLimits, Launch};
use crate::tensor_maps::TensorMapSource;
use cudarc::driver::sys::CUdevice_attribute as Attribute;
use cudarc::driver::{result, sys, CudaContext, CudaStream, DriverError};
use kdsl_bundle::{Bundle, Image};
use kdsl_ir::ScalarType;
use std::any::Any;
use std::ffi::{c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

fn driver_error(error: DriverError) -> RuntimeError {
    RuntimeError::Backend {
        backend: BackendKind::Cuda,
        message: error.to_string(),
    }
}

/// Runs a driver call, turning a panic inside cudarc (a missing library or symbol) into an error.
fn guarded<T>(call: impl FnOnce() -> Result<T>) -> Result<T> {
    catch_unwind(AssertUnwindSafe(call)).unwrap_or_else(|_| {
        Err(RuntimeError::Backend {
            backend: BackendKind::Cuda,
            message: "the CUDA driver library is missing or lacks a needed function".into(),
        })
    })
}

fn attribute(device: sys::CUdevice, which: Attribute) -> Result<u64> {
    // SAFETY: `device` came from cuDeviceGet after a successful cuInit.
    let value = unsafe { result::device::get_attribute(device, which) }.map_err(driver_error)?;
    Ok(u64::try_from(value).unwrap_or(0))
}

fn describe(ordinal: usize) -> Result<DeviceInfo> {
    let device = result::device::get(ordinal as i32).map_err(driver_error)?;
    let name = result::device::get_name(device).map_err(driver_error)?;
    // SAFETY: as above.
    let memory = unsafe { result::device::total_mem(device) }.map_err(driver_error)? as u64;
    let major = attribute(
        device,
        Attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
    )?;
    let minor = attribute(
        device,
        Attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
    )?;
    let max_threads = attribute(device, Attribute::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?;
    let shared = attribute(
        device,
        Attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
    )?;
    // Dynamic shared memory above the default 48 KiB needs the kernel's opt-in attribute,
    // which the launch sets (cuFuncSetAttribute).
    let shared_opt_in = attribute(
        device,
        Attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
    )
    .unwrap_or(shared);
    let max_local = [
        attribute(device, Attribute::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)?,
        attribute(device, Attribute::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)?,
        attribute(device, Attribute::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)?,
    ];
    let max_groups = [
        attribute(device, Attribute::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)?,
        attribute(device, Attribute::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)?,
        attribute(device, Attribute::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)?,
    ];
    Ok(DeviceInfo {
        backend: BackendKind::Cuda,
        platform_backend: "cuda".into(),
        index: ordinal,
        name,
        vendor: "NVIDIA".into(),
        driver_version: String::new(),
        device_type: DeviceType::Gpu,
        global_memory_bytes: memory,
        local_memory_bytes: shared,
        compute_units: attribute(device, Attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?
            as u32,
        max_work_group_size: max_threads,
        sub_group_sizes: vec![attribute(device, Attribute::CU_DEVICE_ATTRIBUTE_WARP_SIZE)? as u32],
        target: DeviceTarget::Ptx {
            major: major as u32,
            minor: minor as u32,
        },
        limits: DeviceLimits {
            max_work_group_size: max_threads,
            max_local,
            max_groups,
            local_memory_bytes: shared,
            dynamic_local_memory_bytes: shared_opt_in.max(shared),
        },
        locator: ordinal,
    })
}

/// Lists the CUDA devices; without a driver, says so instead.
pub(crate) fn discover() -> (Vec<DeviceInfo>, Option<String>) {
    // SAFETY: is_culib_present only tries to open the library with dlopen.
    let present = catch_unwind(|| unsafe { sys::is_culib_present() }).unwrap_or(false);
    if !present {
        return (
            Vec::new(),
            Some("CUDA: no CUDA driver (libcuda.so could not be loaded)".into()),
        );
    }
    let found = guarded(|| {
        result::init().map_err(driver_error)?;
        let count = result::device::get_count().map_err(driver_error)?;
        (0..count.max(0) as usize)
            .map(describe)
            .collect::<Result<Vec<_>>>()
    });
    match found {
        Ok(devices) if devices.is_empty() => {
            (devices, Some("CUDA: the driver reports no devices".into()))
        }
        Ok(devices) => (devices, None),
        Err(error) => (Vec::new(), Some(format!("CUDA: {error}"))),
    }
}

/// A CUDA stream of a context: one the runtime created (and owns), or an adopted one.
struct CudaQueue {
    stream: Arc<StreamState>,
    /// Profiled queues record an event pair around each submission (exact timings, about two
    /// microseconds per launch); the others learn of completion from lazy markers.
    profiled: bool,
    /// Keeps a stream the runtime created alive; `None` for an adopted stream.
    _owned: Option<Arc<CudaStream>>,
}

/// What the events of one stream share.
struct StreamState {
    context: Arc<CudaContext>,
    events: Arc<EventPool>,
    stream: sys::CUstream,
    /// How many submissions were enqueued (each one's sequence number is its count).
    submitted: AtomicU64,
    /// The latest completion marker recorded on the stream.
    last_marker: std::sync::Mutex<Option<Arc<Marker>>>,
}

// SAFETY: CUDA streams may be used from any thread once their context is bound, which every
// use here does first.
unsafe impl Send for StreamState {}
// SAFETY: see above; the driver synchronizes concurrent submissions to a stream.
unsafe impl Sync for StreamState {}

/// An event recorded on a stream after submission `covers` (and all before it).
struct Marker {
    event: sys::CUevent,
    covers: u64,
    pool: Arc<EventPool>,
}

// SAFETY: CUevent handles may be used from any thread.
unsafe impl Send for Marker {}
// SAFETY: see above.
unsafe impl Sync for Marker {}

impl Drop for Marker {
    fn drop(&mut self) {
        self.pool.give_back(self.event);
    }
}

impl StreamState {
    fn new(context: &Arc<CudaContext>, stream: sys::CUstream) -> Arc<StreamState> {
        Arc::new(StreamState {
            context: Arc::clone(context),
            events: EventPool::new(context),
            stream,
            submitted: AtomicU64::new(0),
            last_marker: std::sync::Mutex::new(None),
        })
    }

    fn bind(&self) -> Result<()> {
        self.context.bind_to_thread().map_err(driver_error)
    }

    /// Whether everything enqueued on the stream so far has finished.
    fn idle(&self) -> Result<bool> {
        self.bind()?;
        // SAFETY: the stream belongs to this context and is alive.
        match unsafe { sys::cuStreamQuery(self.stream) } {
            sys::cudaError_enum::CUDA_SUCCESS => Ok(true),
            sys::cudaError_enum::CUDA_ERROR_NOT_READY => Ok(false),
            error => Err(driver_error(DriverError(error))),
        }
    }

    /// A marker whose completion implies that submission `sequence` finished: the latest one
    /// if it was recorded after that submission, else a new one recorded now. Everything
    /// counted in `submitted` is already enqueued, so a marker recorded now follows it.
    fn marker_covering(&self, sequence: u64) -> Result<Arc<Marker>> {
        let mut last = self
            .last_marker
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(marker) = last.as_ref().filter(|marker| marker.covers >= sequence) {
            return Ok(Arc::clone(marker));
        }
        self.bind()?;
        let covers = self.submitted.load(Ordering::Acquire);
        let event = self.events.take()?;
        // SAFETY: the event comes from this context's pool and the stream is alive.
        if let Err(error) = unsafe { result::event::record(event, self.stream) } {
            self.events.give_back(event);
            return Err(driver_error(error));
        }
        let marker = Arc::new(Marker {
            event,
            covers,
            pool: Arc::clone(&self.events),
        });
        *last = Some(Arc::clone(&marker));
        Ok(marker)
    }
}

impl CudaQueue {
    fn owned(context: &Arc<CudaContext>, profiled: bool) -> Result<CudaQueue> {
        let stream = context.new_stream().map_err(driver_error)?;
        Ok(CudaQueue {
            stream: StreamState::new(context, stream.cu_stream()),
            profiled,
            _owned: Some(stream),
        })
    }

    /// Makes the stream wait for `wait_for`, then enqueues `operation` and numbers it: between
    /// an event pair on a profiled queue; on the others only numbered, so that nothing is
    /// allocated or recorded until someone needs its completion ([`QueueBackend::event_after`]).
    fn submit(
        &self,
        wait_for: &[&dyn EventBackend],
        operation: impl FnOnce(sys::CUstream) -> Result<()>,
    ) -> Result<Submitted> {
        let state = &self.stream;
        state.bind()?;
        for event in wait_for {
            let event: &CudaEvent = downcast(BackendKind::Cuda, "an event", event.as_any())?;
            let end = event.end_event()?;
            // SAFETY: both the stream and the event are alive (we hold them).
            unsafe {
                result::stream::wait_event(
                    state.stream,
                    end.event(),
                    sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
                )
            }
            .map_err(driver_error)?;
        }
        if !self.profiled {
            operation(state.stream)?;
            let sequence = state.submitted.fetch_add(1, Ordering::AcqRel) + 1;
            return Ok(Submitted::Sequence(sequence));
        }
        let (start, end) = state.events.take_pair()?;
        let event = CudaEvent::Timed {
            start,
            end,
            pool: Arc::clone(&state.events),
        };
        // SAFETY: the events come from this context's pool and the stream is alive.
        unsafe { result::event::record(start, state.stream) }.map_err(driver_error)?;
        operation(state.stream)?;
        let sequence = state.submitted.fetch_add(1, Ordering::AcqRel) + 1;
        // SAFETY: as above.
        unsafe { result::event::record(end, state.stream) }.map_err(driver_error)?;
        Ok(Submitted::Timed(Arc::new(event), sequence))
    }
}

struct CudaDevice {
    context: Arc<CudaContext>,
    queue: Arc<CudaQueue>,
}

pub(crate) fn open(info: &DeviceInfo) -> Result<Box<dyn DeviceBackend>> {
    guarded(|| {
        let context = CudaContext::new(info.locator).map_err(driver_error)?;
        let queue = Arc::new(CudaQueue::owned(&context, true)?);
        Ok(Box::new(CudaDevice { context, queue }) as Box<dyn DeviceBackend>)
    })
}

/// A device whose default queue is a foreign stream of the primary context.
///
/// # Safety
/// `stream` must be null or a live stream of the device's primary context that outlives the
/// returned backend.
pub(crate) unsafe fn adopt_stream(
    info: &DeviceInfo,
    stream: *mut c_void,
    profiled: bool,
) -> Result<Box<dyn DeviceBackend>> {
    guarded(|| {
        let context = CudaContext::new(info.locator).map_err(driver_error)?;
        let queue = Arc::new(CudaQueue {
            stream: StreamState::new(&context, stream as sys::CUstream),
            profiled,
            _owned: None,
        });
        Ok(Box::new(CudaDevice { context, queue }) as Box<dyn DeviceBackend>)
    })
}

impl DeviceBackend for CudaDevice {
    fn allocate(&self, bytes: usize, kind: MemoryKind) -> Result<u64> {
        self.context.bind_to_thread().map_err(driver_error)?;
        // SAFETY: plain allocations in the bound context; the memory is only reached through
        // this runtime's copies and launches, which never read it uninitialized on the host.
        let allocated = unsafe {
            match kind {
                MemoryKind::Device => result::malloc_sync(bytes),
                MemoryKind::Shared => {
                    result::malloc_managed(bytes, sys::CUmemAttach_flags::CU_MEM_ATTACH_GLOBAL)
                }
                MemoryKind::Host => {
                    // With unified addressing (every 64-bit CUDA platform) the mapped host
                    // pointer is also the device pointer.
                    result::malloc_host(bytes, sys::CU_MEMHOSTALLOC_DEVICEMAP)
                        .map(|pointer| pointer as u64)
                }
            }
        };
        allocated.map_err(|error| RuntimeError::OutOfMemory {
            bytes: bytes as u64,
            message: error.to_string(),
        })
    }

    fn free(&self, address: u64, kind: MemoryKind) {
        // Nothing can be reported from Drop; a failure leaks the allocation.
        if self.context.bind_to_thread().is_err() {
            return;
        }
        // SAFETY: `address` came from `allocate` with the same kind and is freed once, after
        // every submitted command that used it finished (the runtime retires it until then).
        let _ = unsafe {
            match kind {
                MemoryKind::Device | MemoryKind::Shared => result::free_sync(address),
                MemoryKind::Host => result::free_host(address as *mut c_void),
            }
        };
    }

    fn default_queue(&self) -> Arc<dyn QueueBackend> {
        Arc::clone(&self.queue) as Arc<dyn QueueBackend>
    }

    fn new_queue(&self, profiled: bool) -> Result<Arc<dyn QueueBackend>> {
        guarded(
            || Ok(Arc::new(CudaQueue::owned(&self.context, profiled)?) as Arc<dyn QueueBackend>),
        )
    }

    fn load(&self, _bundle: &Bundle, image: &Image) -> Result<Arc<dyn ModuleBackend>> {
        self.context.bind_to_thread().map_err(driver_error)?;
        let text: Vec<u8> = image
            .bytes
            .iter()
            .copied()
            .take_while(|&b| b != 0)
            .collect();
        let source = CString::new(text).map_err(|_| RuntimeError::Backend {
            backend: BackendKind::Cuda,
            message: "the PTX image is not text".into(),
        })?;
        if source.as_bytes().windows(7).any(|w| w == b"vprintf") {
            raise_printf_buffer();
        }
        // SAFETY: `source` is a NUL-terminated PTX string that outlives the call.
        let module = unsafe { result::module::load_data(source.as_ptr() as *const c_void) }
            .map_err(driver_error)?;
        Ok(Arc::new(CudaModule {
            module,
            context: Arc::clone(&self.context),
        }))
    }
}

/// Raises the printf buffer of the current context to `KDSL_CUDA_PRINTF_BUFFER_MB` (64 MiB by
/// default; CUDA's 1 MiB holds a few thousand work-items' lines). Output past the buffer is
/// lost, and driver 580 crashed the process on some overflowing output (docs/language.md,
/// "print"). The driver refuses the change once a printing kernel ran in the context: then
/// the buffer stays as it was.
fn raise_printf_buffer() {
    let megabytes = std::env::var(kdsl_bundle::environment::CUDA_PRINTF_BUFFER_MB)
        .ok()
        .and_then(|value| value.parse::<usize>().ok())
        .unwrap_or(64);
    let wanted = megabytes.saturating_mul(1 << 20);
    let limit = sys::CUlimit::CU_LIMIT_PRINTF_FIFO_SIZE;
    let mut current = 0usize;
    // SAFETY: the context is bound to this thread; both calls only read or set a limit.
    unsafe {
        if sys::cuCtxGetLimit(&mut current, limit) == sys::CUresult::CUDA_SUCCESS
            && current < wanted
        {
            let _ = sys::cuCtxSetLimit(limit, wanted);
        }
    }
}

impl QueueBackend for CudaQueue {
    fn copy(
        &self,
        destination: u64,
        source: u64,
        bytes: usize,
        wait_for: &[&dyn EventBackend],
    ) -> Result<Submitted> {
        self.submit(wait_for, |stream| {
            // SAFETY: the runtime checked that both ranges lie in host memory the caller keeps
            // alive until the event completes or in allocations of this context; with unified
            // addressing the driver infers the direction from the pointers.
            unsafe { sys::cuMemcpyAsync(destination, source, bytes, stream) }
                .result()
                .map_err(driver_error)
        })
    }

    fn fill(
        &self,
        address: u64,
        pattern: &[u8],
        count: usize,
        wait_for: &[&dyn EventBackend],
    ) -> Result<Submitted> {
        self.submit(wait_for, |stream| {
            // SAFETY: the runtime checked that `count` elements of the pattern's size fit the
            // allocation at `address`.
            let status = unsafe {
                match *pattern {
                    [byte] => sys::cuMemsetD8Async(address, byte, count, stream),
                    [a, b] => {
                        sys::cuMemsetD16Async(address, u16::from_le_bytes([a, b]), count, stream)
                    }
                    [a, b, c, d] => sys::cuMemsetD32Async(
                        address,
                        u32::from_le_bytes([a, b, c, d]),
                        count,
                        stream,
                    ),
                    // 8-byte patterns: two strided 32-bit fills.
                    [a, b, c, d, e, f, g, h] => {
                        let low = sys::cuMemsetD2D32Async(
                            address,
                            8,
                            u32::from_le_bytes([a, b, c, d]),
                            1,
                            count,
                            stream,
                        );
                        if low != sys::cudaError_enum::CUDA_SUCCESS {
                            low
                        } else {
                            sys::cuMemsetD2D32Async(
                                address + 4,
                                8,
                                u32::from_le_bytes([e, f, g, h]),
                                1,
                                count,
                                stream,
                            )
                        }
                    }
                    _ => {
                        return Err(RuntimeError::Backend {
                            backend: BackendKind::Cuda,
                            message: format!(
                                "fill supports 1-, 2-, 4- and 8-byte patterns, not {}",
                                pattern.len()
                            ),
                        })
                    }
                }
            };
            status.result().map_err(driver_error)
        })
    }

    fn launch(
        &self,
        kernel: &dyn KernelBackend,
        launch: &Launch,
        arguments: &[RawArgument],
        wait_for: &[&dyn EventBackend],
    ) -> Result<Submitted> {
        let kernel: &CudaKernel = downcast(BackendKind::Cuda, "a kernel", kernel.as_any())?;
        // Both lists live on this stack frame (up to INLINE_ARGUMENTS arguments): a launch
        // allocates nothing for its arguments.
        let mut slots = argument_slots(arguments);
        let mut pointers: InlineVec<*mut c_void, INLINE_ARGUMENTS> =
            InlineVec::new(std::ptr::null_mut());
        pointers.extend(
            slots
                .as_mut_slice()
                .iter_mut()
                .map(|slot| slot as *mut u64 as *mut c_void),
        );
        // cuLaunchKernel copies each 128-byte map from here.
        let mut maps = kernel
            .tensor_maps
            .iter()
            .map(|source| encode_tensor_map(source, arguments))
            .collect::<Result<Vec<_>>>()?;
        pointers.extend(
            maps.iter_mut()
                .map(|map| map as *mut sys::CUtensorMap as *mut c_void),
        );
        let groups = launch.group_counts();
        let dynamic_shared = RawArgument::dynamic_local_bytes(arguments);
        if dynamic_shared > kernel.dynamic_shared_allowed.load(Ordering::Acquire) {
            self.stream.bind()?;
            // SAFETY: the function is alive (the kernel holds its module); the size was
            // checked against the device's opt-in limit.
            unsafe {
                result::function::set_function_attribute(
                    kernel.function,
                    sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    dynamic_shared as i32,
                )
            }
            .map_err(driver_error)?;
            kernel
                .dynamic_shared_allowed
                .fetch_max(dynamic_shared, Ordering::AcqRel);
        }
        self.submit(wait_for, |stream| {
            // SAFETY: the arguments were checked against the kernel's metadata (count, types,
            // buffers of this device instance); `pointers` point into `slots`, which outlive
            // the call and are not moved before it (cuLaunchKernel copies the values); the
            // geometry was checked against the device's limits.
            unsafe {
                result::launch_kernel(
                    kernel.function,
                    dims(&groups),
                    dims(launch.local()),
                    dynamic_shared as u32,
                    stream,
                    pointers.as_mut_slice(),
                )
            }
            .map_err(driver_error)
        })
    }

    fn synchronize(&self) -> Result<()> {
        self.stream.bind()?;
        // SAFETY: the stream belongs to this context and is alive.
        unsafe { result::stream::synchronize(self.stream.stream) }.map_err(driver_error)
    }

    fn event_after(&self, sequence: u64) -> Result<Arc<dyn EventBackend>> {
        Ok(Arc::new(CudaEvent::Lazy {
            stream: Arc::clone(&self.stream),
            sequence,
            marker: OnceLock::new(),
        }))
    }
}

struct CudaModule {
    module: sys::CUmodule,
    context: Arc<CudaContext>,
}

// SAFETY: a CUmodule handle may be used from any thread once its context is bound, which every
// use here does first.
unsafe impl Send for CudaModule {}
// SAFETY: see above; the driver synchronizes concurrent use of a module.
unsafe impl Sync for CudaModule {}

impl Drop for CudaModule {
    fn drop(&mut self) {
        // Kernels hold the module, and launches hold their kernel only until submission, so
        // wait for the context's work before unloading.
        if self.context.synchronize().is_ok() {
            // SAFETY: the module is unloaded once, after all work finished.
            let _ = unsafe { result::module::unload(self.module) };
        }
    }
}

impl ModuleBackend for CudaModule {
    fn kernel(self: Arc<Self>, name: &str, entry_point: &str) -> Result<Box<dyn KernelBackend>> {
        Ok(Box::new(self.cuda_kernel(name, entry_point, Vec::new())?))
    }

    fn kernel_with_tensor_maps(
        self: Arc<Self>,
        name: &str,
        entry_point: &str,
        maps: Vec<TensorMapSource>,
    ) -> Result<Option<Box<dyn KernelBackend>>> {
        Ok(Some(Box::new(self.cuda_kernel(name, entry_point, maps)?)))
    }
}

impl CudaModule {
    fn cuda_kernel(
        self: Arc<Self>,
        name: &str,
        entry_point: &str,
        tensor_maps: Vec<TensorMapSource>,
    ) -> Result<CudaKernel> {
        self.context.bind_to_thread().map_err(driver_error)?;
        let c_name = CString::new(entry_point).map_err(|_| RuntimeError::Backend {
            backend: BackendKind::Cuda,
            message: format!("kernel name `{name}` contains a NUL byte"),
        })?;
        // SAFETY: the module is loaded and alive (we hold it).
        let function =
            unsafe { result::module::get_function(self.module, c_name) }.map_err(driver_error)?;
        // The block size of the highest occupancy for this kernel (its shared memory is
        // static, so no dynamic shared memory); None where the driver does not say.
        // SAFETY: the function is valid and its context is current.
        let occupancy_block =
            unsafe { result::occupancy::max_potential_block_size(function, None, 0, 0) }
                .ok()
                .and_then(|(_, block)| u64::try_from(block).ok())
                .filter(|&block| block > 0);
        Ok(CudaKernel {
            function,
            occupancy_block,
            dynamic_shared_allowed: AtomicU64::new(DEFAULT_DYNAMIC_SHARED_BYTES),
            tensor_maps,
            _module: self,
        })
    }
}

/// Encodes the tensor map of `source` for a launch's `arguments`: a 2-D box of 128-byte rows,
/// swizzled in 16-byte chunks, elements outside the array read as zero.
fn encode_tensor_map(
    source: &TensorMapSource,
    arguments: &[RawArgument],
) -> Result<sys::CUtensorMap> {
    use sys::CUtensorMapDataType_enum as Type;
    let invalid = |why: &str| RuntimeError::Backend {
        backend: BackendKind::Cuda,
        message: format!(
            "cannot make the tensor map of argument {}: {why}",
            source.buffer
        ),
    };
    let layout = source
        .raw_layout(arguments)
        .filter(|layout| layout.describable())
        .ok_or_else(|| invalid("the array is not one a tensor map describes"))?;
    let data_type = match source.element {
        ScalarType::F16 => Type::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
        ScalarType::Bf16 => Type::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
        ScalarType::F32 => Type::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
        ScalarType::F64 => Type::CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
        ScalarType::I32 | ScalarType::U32 => Type::CU_TENSOR_MAP_DATA_TYPE_UINT32,
        ScalarType::I64 | ScalarType::U64 => Type::CU_TENSOR_MAP_DATA_TYPE_UINT64,
        ScalarType::I16 | ScalarType::U16 => Type::CU_TENSOR_MAP_DATA_TYPE_UINT16,
        ScalarType::I8 | ScalarType::U8 | ScalarType::Bool => Type::CU_TENSOR_MAP_DATA_TYPE_UINT8,
    };
    // Innermost dimension first, as the driver counts them.
    let dimensions = [layout.shape[1], layout.shape[0]];
    let strides = [layout.row_stride_bytes];
    let boxed = [source.columns, source.rows];
    let element_strides = [1u32, 1];
    let mut map = sys::CUtensorMap { opaque: [0; 16] };
    // SAFETY: every pointer is to a live array of the length the rank (2) asks for; the
    // address is the device buffer the launch passes, checked aligned above.
    let status = unsafe {
        sys::cuTensorMapEncodeTiled(
            &mut map,
            data_type,
            2,
            layout.address as *mut std::ffi::c_void,
            dimensions.as_ptr(),
            strides.as_ptr(),
            boxed.as_ptr(),
            element_strides.as_ptr(),
            sys::CUtensorMapInterleave_enum::CU_TENSOR_MAP_INTERLEAVE_NONE,
            sys::CUtensorMapSwizzle_enum::CU_TENSOR_MAP_SWIZZLE_128B,
            sys::CUtensorMapL2promotion_enum::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            sys::CUtensorMapFloatOOBfill_enum::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    };
    status.result().map_err(driver_error)?;
    Ok(map)
}

/// The dynamic shared memory a kernel may have without the opt-in attribute: what is left of
/// 48 KiB after its static shared memory, which the driver checks itself (so 0 here: any
/// dynamic size is set explicitly the first time).
const DEFAULT_DYNAMIC_SHARED_BYTES: u64 = 0;

struct CudaKernel {
    function: sys::CUfunction,
    occupancy_block: Option<u64>,
    /// The largest dynamic shared memory size set on the function so far.
    dynamic_shared_allowed: AtomicU64,
    /// The tensor maps it takes after its arguments, encoded at each launch.
    tensor_maps: Vec<TensorMapSource>,
    _module: Arc<CudaModule>,
}

// SAFETY: a CUfunction is an immutable handle into its module, valid on any thread.
unsafe impl Send for CudaKernel {}
// SAFETY: see above.
unsafe impl Sync for CudaKernel {}

impl KernelBackend for CudaKernel {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn occupancy_group_size(&self) -> Option<u64> {
        self.occupancy_block
    }
}

fn dims(values: &[u64]) -> (u32, u32, u32) {
    let at = |i: usize| values.get(i).copied().unwrap_or(1) as u32;
    (at(0), at(1), at(2))
}

/// One 8-byte slot per argument: a device address, or a scalar's bytes in its low bytes
/// (little-endian), which is what `cuLaunchKernel` reads for a parameter of that size.
pub(crate) fn argument_slots(arguments: &[RawArgument]) -> InlineVec<u64, INLINE_ARGUMENTS> {
    let mut slots = InlineVec::new(0);
    slots.extend(arguments.iter().map(|argument| match argument {
        RawArgument::Pointer(address) => *address,
        RawArgument::Scalar(value) => value.to_bits(),
        // The kernel's `u32` byte offset into the dynamic shared memory.
        RawArgument::Local { offset, .. } => *offset,
    }));
    slots
}

/// Finished CUDA events of one context, reused so that a submission does not pay for creating
/// and destroying its two events (a good part of the launch overhead otherwise).
struct EventPool {
    context: Arc<CudaContext>,
    free: std::sync::Mutex<Vec<sys::CUevent>>,
}

// SAFETY: CUevent handles may be used from any thread; the list is behind a mutex.
unsafe impl Send for EventPool {}
// SAFETY: see above.
unsafe impl Sync for EventPool {}

impl EventPool {
    /// At most this many events wait for reuse; the rest are destroyed.
    const KEEP: usize = 1024;

    fn new(context: &Arc<CudaContext>) -> Arc<EventPool> {
        Arc::new(EventPool {
            context: Arc::clone(context),
            free: std::sync::Mutex::new(Vec::new()),
        })
    }

    fn take(&self) -> Result<sys::CUevent> {
        let reused = self
            .free
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .pop();
        match reused {
            Some(event) => Ok(event),
            None => {
                result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT).map_err(driver_error)
            }
        }
    }

    /// Two events (a profiled submission's start and end), taking the pool's lock once.
    fn take_pair(&self) -> Result<(sys::CUevent, sys::CUevent)> {
        let (first, second) = {
            let mut free = self
                .free
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            (free.pop(), free.pop())
        };
        let create = |reused: Option<sys::CUevent>| match reused {
            Some(event) => Ok(event),
            None => {
                result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT).map_err(driver_error)
            }
        };
        let first = match create(first) {
            Ok(event) => event,
            Err(error) => {
                if let Some(event) = second {
                    self.give_back(event);
                }
                return Err(error);
            }
        };
        match create(second) {
            Ok(event) => Ok((first, event)),
            Err(error) => {
                self.give_back(first);
                Err(error)
            }
        }
    }

    /// Gives back a profiled submission's two events, taking the pool's lock once.
    fn give_back_pair(&self, first: sys::CUevent, second: sys::CUevent) {
        let mut free = self
            .free
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if free.len() + 2 <= Self::KEEP {
            free.push(first);
            free.push(second);
        } else {
            drop(free);
            self.give_back(first);
            self.give_back(second);
        }
    }

    fn give_back(&self, event: sys::CUevent) {
        let mut free = self
            .free
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if free.len() < Self::KEEP {
            free.push(event);
        } else if self.context.bind_to_thread().is_ok() {
            // SAFETY: the event came from `take` and nothing refers to it any more.
            let _ = unsafe { result::event::destroy(event) };
        }
    }
}

impl Drop for EventPool {
    fn drop(&mut self) {
        if self.context.bind_to_thread().is_ok() {
            let free = std::mem::take(
                self.free
                    .get_mut()
                    .unwrap_or_else(|poisoned| poisoned.into_inner()),
            );
            for event in free {
                // SAFETY: every pooled event was created here and is destroyed once (the driver
                // defers the release of a recorded event until it completes).
                let _ = unsafe { result::event::destroy(event) };
            }
        }
    }
}

/// The completion of one submission on a CUDA stream.
enum CudaEvent {
    /// On a profiled queue: events recorded right before and after the submission.
    Timed {
        start: sys::CUevent,
        end: sys::CUevent,
        pool: Arc<EventPool>,
    },
    /// A numbered submission ([`QueueBackend::event_after`]): a marker recorded on the stream
    /// at or after it, made the first time someone waits for, queries or depends on it.
    Lazy {
        stream: Arc<StreamState>,
        sequence: u64,
        marker: OnceLock<Arc<Marker>>,
    },
}

// SAFETY: CUevent handles may be waited on and queried from any thread.
unsafe impl Send for CudaEvent {}
// SAFETY: see above.
unsafe impl Sync for CudaEvent {}

/// The CUDA event whose completion means the submission finished.
enum EndEvent<'a> {
    Recorded(sys::CUevent),
    Marker(&'a Arc<Marker>),
}

impl EndEvent<'_> {
    fn event(&self) -> sys::CUevent {
        match self {
            EndEvent::Recorded(event) => *event,
            EndEvent::Marker(marker) => marker.event,
        }
    }
}

impl CudaEvent {
    fn end_event(&self) -> Result<EndEvent<'_>> {
        match self {
            CudaEvent::Timed { end, .. } => Ok(EndEvent::Recorded(*end)),
            CudaEvent::Lazy {
                stream,
                sequence,
                marker,
            } => {
                if marker.get().is_none() {
                    let made = stream.marker_covering(*sequence)?;
                    let _ = marker.set(made);
                }
                Ok(EndEvent::Marker(marker.get().expect("set above")))
            }
        }
    }

    fn context(&self) -> &Arc<CudaContext> {
        match self {
            CudaEvent::Timed { pool, .. } => &pool.context,
            CudaEvent::Lazy { stream, .. } => &stream.context,
        }
    }
}

impl Drop for CudaEvent {
    fn drop(&mut self) {
        // A later record overwrites the events' state, and waits already enqueued on them keep
        // the state they saw, so they can be reused at once.
        if let CudaEvent::Timed { start, end, pool } = self {
            pool.give_back_pair(*start, *end);
        }
    }
}

impl EventBackend for CudaEvent {
    fn wait(&self) -> Result<()> {
        let end = self.end_event()?;
        self.context().bind_to_thread().map_err(driver_error)?;
        // SAFETY: the event is alive and was recorded.
        unsafe { result::event::synchronize(end.event()) }.map_err(driver_error)
    }

    fn is_complete(&self) -> Result<bool> {
        // Without a marker yet, one recorded now would not have completed at once even on a
        // finished stream; an idle stream has finished this submission.
        if let CudaEvent::Lazy { stream, marker, .. } = self {
            if marker.get().is_none() && stream.idle()? {
                return Ok(true);
            }
        }
        let end = self.end_event()?;
        // SAFETY: the event is alive and was recorded.
        match unsafe { result::event::query(end.event()) } {
            Ok(()) => Ok(true),
            Err(error) if error.0 == sys::cudaError_enum::CUDA_ERROR_NOT_READY => Ok(false),
            Err(error) => Err(driver_error(error)),
        }
    }

    fn elapsed_ns(&self) -> Result<u64> {
        let CudaEvent::Timed { start, end, .. } = self else {
            return Err(RuntimeError::ProfilingDisabled);
        };
        self.wait()?;
        // SAFETY: both events were recorded and have completed.
        let milliseconds = unsafe { result::event::elapsed(*start, *end) }.map_err(driver_error)?;
        Ok((f64::from(milliseconds) * 1e6).round().max(0.0) as u64)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::ScalarValue;

    #[test]
    fn argument_slots_hold_addresses_and_little_endian_scalars() {
        let slots = argument_slots(&[
            RawArgument::Pointer(0x7f00_0000_1000),
            RawArgument::Scalar(ScalarValue::F32(2.0)),
            RawArgument::Scalar(ScalarValue::U32(7)),
            RawArgument::Scalar(ScalarValue::I8(-1)),
            RawArgument::Scalar(ScalarValue::F64(0.5)),
        ]);
        let slots = slots.as_slice();
        assert_eq!(slots[0], 0x7f00_0000_1000);
        assert_eq!(slots[1].to_le_bytes()[..4], 2.0f32.to_le_bytes());
        assert_eq!(slots[2], 7);
        assert_eq!(slots[3], 0xff);
        assert_eq!(slots[4], 0.5f64.to_bits());
    }

    #[test]
    fn discovery_without_a_driver_reports_instead_of_crashing() {
        let (devices, note) = discover();
        if devices.is_empty() {
            assert!(note.unwrap().starts_with("CUDA:"));
        }
    }
}
