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
};
use crate::buffer::MemoryKind;
use crate::device::{BackendKind, DeviceInfo, DeviceTarget, DeviceType};
use crate::error::{Result, RuntimeError};
use crate::launch::{DeviceLimits, Launch};
use cudarc::driver::sys::CUdevice_attribute as Attribute;
use cudarc::driver::{result, sys, CudaContext, CudaStream, DriverError};
use kdsl_bundle::{Bundle, Image};
use std::any::Any;
use std::ffi::{c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

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
    context: Arc<CudaContext>,
    stream: sys::CUstream,
    /// Keeps a stream the runtime created alive; `None` for an adopted stream.
    _owned: Option<Arc<CudaStream>>,
}

// SAFETY: CUDA streams may be used from any thread once their context is bound, which every
// use here does first.
unsafe impl Send for CudaQueue {}
// SAFETY: see above; the driver synchronizes concurrent submissions to a stream.
unsafe impl Sync for CudaQueue {}

impl CudaQueue {
    fn owned(context: &Arc<CudaContext>) -> Result<CudaQueue> {
        let stream = context.new_stream().map_err(driver_error)?;
        Ok(CudaQueue {
            context: Arc::clone(context),
            stream: stream.cu_stream(),
            _owned: Some(stream),
        })
    }

    fn bind(&self) -> Result<()> {
        self.context.bind_to_thread().map_err(driver_error)
    }

    /// Makes the stream wait for `wait_for`, then records an event pair around `operation`.
    fn submit(
        &self,
        wait_for: &[&dyn EventBackend],
        operation: impl FnOnce(sys::CUstream) -> Result<()>,
    ) -> Result<Arc<dyn EventBackend>> {
        self.bind()?;
        for event in wait_for {
            let event: &CudaEvent = downcast(BackendKind::Cuda, "an event", event.as_any())?;
            // SAFETY: both the stream and the event are alive (we hold them).
            unsafe {
                result::stream::wait_event(
                    self.stream,
                    event.end,
                    sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
                )
            }
            .map_err(driver_error)?;
        }
        let event = CudaEvent::new(&self.context)?;
        // SAFETY: the events were just created in this context and the stream is alive.
        unsafe { result::event::record(event.start, self.stream) }.map_err(driver_error)?;
        operation(self.stream)?;
        // SAFETY: as above.
        unsafe { result::event::record(event.end, self.stream) }.map_err(driver_error)?;
        Ok(Arc::new(event))
    }
}

struct CudaDevice {
    context: Arc<CudaContext>,
    queue: Arc<CudaQueue>,
}

pub(crate) fn open(info: &DeviceInfo) -> Result<Box<dyn DeviceBackend>> {
    guarded(|| {
        let context = CudaContext::new(info.locator).map_err(driver_error)?;
        let queue = Arc::new(CudaQueue::owned(&context)?);
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
) -> Result<Box<dyn DeviceBackend>> {
    guarded(|| {
        let context = CudaContext::new(info.locator).map_err(driver_error)?;
        let queue = Arc::new(CudaQueue {
            context: Arc::clone(&context),
            stream: stream as sys::CUstream,
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

    fn new_queue(&self) -> Result<Arc<dyn QueueBackend>> {
        guarded(|| Ok(Arc::new(CudaQueue::owned(&self.context)?) as Arc<dyn QueueBackend>))
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
        // SAFETY: `source` is a NUL-terminated PTX string that outlives the call.
        let module = unsafe { result::module::load_data(source.as_ptr() as *const c_void) }
            .map_err(driver_error)?;
        Ok(Arc::new(CudaModule {
            module,
            context: Arc::clone(&self.context),
        }))
    }
}

impl QueueBackend for CudaQueue {
    fn copy(
        &self,
        destination: u64,
        source: u64,
        bytes: usize,
        wait_for: &[&dyn EventBackend],
    ) -> Result<Arc<dyn EventBackend>> {
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
    ) -> Result<Arc<dyn EventBackend>> {
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
    ) -> Result<Arc<dyn EventBackend>> {
        let kernel: &CudaKernel = downcast(BackendKind::Cuda, "a kernel", kernel.as_any())?;
        let mut slots = argument_slots(arguments);
        let mut pointers: Vec<*mut c_void> = slots
            .iter_mut()
            .map(|slot| slot as *mut u64 as *mut c_void)
            .collect();
        self.submit(wait_for, |stream| {
            // SAFETY: the arguments were checked against the kernel's metadata (count, types,
            // buffers of this device instance); `pointers` point into `slots`, which outlive
            // the call (cuLaunchKernel copies the values); the geometry was checked against
            // the device's limits.
            unsafe {
                result::launch_kernel(
                    kernel.function,
                    dims(&launch.groups()),
                    dims(launch.local()),
                    0,
                    stream,
                    &mut pointers,
                )
            }
            .map_err(driver_error)
        })
    }

    fn synchronize(&self) -> Result<()> {
        self.bind()?;
        // SAFETY: the stream belongs to this context and is alive.
        unsafe { result::stream::synchronize(self.stream) }.map_err(driver_error)
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
        self.context.bind_to_thread().map_err(driver_error)?;
        let c_name = CString::new(entry_point).map_err(|_| RuntimeError::Backend {
            backend: BackendKind::Cuda,
            message: format!("kernel name `{name}` contains a NUL byte"),
        })?;
        // SAFETY: the module is loaded and alive (we hold it).
        let function =
            unsafe { result::module::get_function(self.module, c_name) }.map_err(driver_error)?;
        Ok(Box::new(CudaKernel {
            function,
            _module: self,
        }))
    }
}

struct CudaKernel {
    function: sys::CUfunction,
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
}

fn dims(values: &[u64]) -> (u32, u32, u32) {
    let at = |i: usize| values.get(i).copied().unwrap_or(1) as u32;
    (at(0), at(1), at(2))
}

/// One 8-byte slot per argument: a device address, or a scalar's bytes in its low bytes
/// (little-endian), which is what `cuLaunchKernel` reads for a parameter of that size.
pub(crate) fn argument_slots(arguments: &[RawArgument]) -> Vec<u64> {
    arguments
        .iter()
        .map(|argument| match argument {
            RawArgument::Pointer(address) => *address,
            RawArgument::Scalar(value) => value.to_bits(),
        })
        .collect()
}

/// Two events recorded around one submission.
struct CudaEvent {
    start: sys::CUevent,
    end: sys::CUevent,
    context: Arc<CudaContext>,
}

// SAFETY: CUevent handles may be waited on and queried from any thread.
unsafe impl Send for CudaEvent {}
// SAFETY: see above.
unsafe impl Sync for CudaEvent {}

impl CudaEvent {
    fn new(context: &Arc<CudaContext>) -> Result<CudaEvent> {
        let flags = sys::CUevent_flags::CU_EVENT_DEFAULT;
        let start = result::event::create(flags).map_err(driver_error)?;
        let end = match result::event::create(flags) {
            Ok(end) => end,
            Err(error) => {
                // SAFETY: `start` was just created and is destroyed once.
                let _ = unsafe { result::event::destroy(start) };
                return Err(driver_error(error));
            }
        };
        Ok(CudaEvent {
            start,
            end,
            context: Arc::clone(context),
        })
    }
}

impl Drop for CudaEvent {
    fn drop(&mut self) {
        if self.context.bind_to_thread().is_ok() {
            // SAFETY: both events were created by `new` and are destroyed once (the driver
            // defers the release of a recorded event until it completes).
            unsafe {
                let _ = result::event::destroy(self.start);
                let _ = result::event::destroy(self.end);
            }
        }
    }
}

impl EventBackend for CudaEvent {
    fn wait(&self) -> Result<()> {
        self.context.bind_to_thread().map_err(driver_error)?;
        // SAFETY: the event is alive and was recorded.
        unsafe { result::event::synchronize(self.end) }.map_err(driver_error)
    }

    fn is_complete(&self) -> Result<bool> {
        // SAFETY: the event is alive and was recorded.
        match unsafe { result::event::query(self.end) } {
            Ok(()) => Ok(true),
            Err(error) if error.0 == sys::cudaError_enum::CUDA_ERROR_NOT_READY => Ok(false),
            Err(error) => Err(driver_error(error)),
        }
    }

    fn elapsed_ns(&self) -> Result<u64> {
        self.wait()?;
        // SAFETY: both events were recorded and have completed.
        let milliseconds =
            unsafe { result::event::elapsed(self.start, self.end) }.map_err(driver_error)?;
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
