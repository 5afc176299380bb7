//! The HIP backend: `libamdhip64.so` loaded at run time with libloading.
//!
//! Only layout-free entry points are used for device facts: `hipDeviceGetName`,
//! `hipDeviceTotalMem` and `hipDeviceGetAttribute` with attribute numbers of the ROCm 6
//! `hipDeviceAttribute_t` enum (ROCm 5 numbered them differently). The one fact with no
//! layout-free query is the processor name (`gcnArchName`): it is found by scanning the bytes
//! `hipGetDevicePropertiesR0600` writes into an oversized zeroed buffer for a string of the form
//! `gfx<hex digits>[:feature±]*` (see `find_gcn_arch_name`), rather than by a struct offset.
//! `KDSL_HIP_ARCH` overrides the result.
//!
//! Each opened instance has its own non-blocking stream (or an adopted one); copies and fills
//! are asynchronous on it, and two events recorded around each submission order and time it.
//!
//! Code objects are loaded with `hipModuleLoadData`; arguments are packed into one kernarg buffer
//! (each at its natural alignment, see `pack_kernel_arguments`) and passed with
//! `HIP_LAUNCH_PARAM_BUFFER_POINTER` through `hipModuleLaunchKernel`'s `extra` parameter.
//!
//! Never run on hardware: the development machine has no AMD GPU. Image selection and argument
//! packing are unit-tested without one.

use super::{
    downcast, DeviceBackend, EventBackend, KernelBackend, ModuleBackend, QueueBackend, RawArgument,
    Submitted,
};
use crate::buffer::MemoryKind;
use crate::device::{BackendKind, DeviceInfo, DeviceTarget, DeviceType};
use crate::error::{Result, RuntimeError};
use crate::launch::{DeviceLimits, Launch};
use kdsl_bundle::{Bundle, Image};
use libloading::Library;
use std::any::Any;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::sync::{Arc, OnceLock};

type HipError = c_int;
type Module = *mut c_void;
type Function = *mut c_void;
type Stream = *mut c_void;
type HipEvent = *mut c_void;

// hipDeviceAttribute_t values of ROCm 6 (hip/hip_runtime_api.h).
const ATTRIBUTE_MAX_BLOCK_DIM_X: c_int = 26;
const ATTRIBUTE_MAX_GRID_DIM_X: c_int = 29;
const ATTRIBUTE_MAX_THREADS_PER_BLOCK: c_int = 56;
const ATTRIBUTE_MULTIPROCESSOR_COUNT: c_int = 63;
const ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: c_int = 74;
const ATTRIBUTE_WARP_SIZE: c_int = 87;

const HIP_LAUNCH_PARAM_BUFFER_POINTER: usize = 0x01;
const HIP_LAUNCH_PARAM_BUFFER_SIZE: usize = 0x02;
const HIP_LAUNCH_PARAM_END: usize = 0x03;
const HIP_MEM_ATTACH_GLOBAL: c_uint = 1;
const HIP_STREAM_NON_BLOCKING: c_uint = 1;
const HIP_MEMCPY_DEFAULT: c_int = 4;
const HIP_ERROR_NOT_READY: HipError = 600;
const HIP_HOST_MALLOC_MAPPED: c_uint = 2;

/// The HIP entry points the backend uses, resolved once.
struct Api {
    init: unsafe extern "C" fn(c_uint) -> HipError,
    get_device_count: unsafe extern "C" fn(*mut c_int) -> HipError,
    device_get_name: unsafe extern "C" fn(*mut c_char, c_int, c_int) -> HipError,
    device_total_mem: unsafe extern "C" fn(*mut usize, c_int) -> HipError,
    device_get_attribute: unsafe extern "C" fn(*mut c_int, c_int, c_int) -> HipError,
    get_device_properties: unsafe extern "C" fn(*mut c_void, c_int) -> HipError,
    set_device: unsafe extern "C" fn(c_int) -> HipError,
    get_error_string: unsafe extern "C" fn(HipError) -> *const c_char,
    malloc: unsafe extern "C" fn(*mut *mut c_void, usize) -> HipError,
    malloc_managed: unsafe extern "C" fn(*mut *mut c_void, usize, c_uint) -> HipError,
    host_malloc: unsafe extern "C" fn(*mut *mut c_void, usize, c_uint) -> HipError,
    free: unsafe extern "C" fn(*mut c_void) -> HipError,
    host_free: unsafe extern "C" fn(*mut c_void) -> HipError,
    memcpy_async:
        unsafe extern "C" fn(*mut c_void, *const c_void, usize, c_int, Stream) -> HipError,
    memset_d8_async: unsafe extern "C" fn(*mut c_void, u8, usize, Stream) -> HipError,
    memset_d16_async: unsafe extern "C" fn(*mut c_void, u16, usize, Stream) -> HipError,
    memset_d32_async: unsafe extern "C" fn(*mut c_void, c_int, usize, Stream) -> HipError,
    device_synchronize: unsafe extern "C" fn() -> HipError,
    stream_create_with_flags: unsafe extern "C" fn(*mut Stream, c_uint) -> HipError,
    stream_destroy: unsafe extern "C" fn(Stream) -> HipError,
    stream_synchronize: unsafe extern "C" fn(Stream) -> HipError,
    stream_wait_event: unsafe extern "C" fn(Stream, HipEvent, c_uint) -> HipError,
    event_query: unsafe extern "C" fn(HipEvent) -> HipError,
    module_load_data: unsafe extern "C" fn(*mut Module, *const c_void) -> HipError,
    module_unload: unsafe extern "C" fn(Module) -> HipError,
    module_get_function: unsafe extern "C" fn(*mut Function, Module, *const c_char) -> HipError,
    #[allow(clippy::type_complexity)]
    module_launch_kernel: unsafe extern "C" fn(
        Function,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        Stream,
        *mut *mut c_void,
        *mut *mut c_void,
    ) -> HipError,
    event_create: unsafe extern "C" fn(*mut HipEvent) -> HipError,
    event_record: unsafe extern "C" fn(HipEvent, Stream) -> HipError,
    event_synchronize: unsafe extern "C" fn(HipEvent) -> HipError,
    event_elapsed_time: unsafe extern "C" fn(*mut f32, HipEvent, HipEvent) -> HipError,
    event_destroy: unsafe extern "C" fn(HipEvent) -> HipError,
    _library: Library,
}

impl Api {
    fn load() -> std::result::Result<Api, String> {
        let mut errors = Vec::new();
        for name in ["libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.7"] {
            // SAFETY: loading the HIP runtime runs its initializers, which is what using HIP means.
            match unsafe { Library::new(name) } {
                Ok(library) => return Api::resolve(library),
                Err(error) => errors.push(error.to_string()),
            }
        }
        Err(format!(
            "libamdhip64.so could not be loaded ({})",
            errors.join("; ")
        ))
    }

    fn resolve(library: Library) -> std::result::Result<Api, String> {
        macro_rules! symbol {
            ($name:literal) => {
                // SAFETY: the function pointer type is the one the HIP headers declare for this
                // symbol; it is only called while `_library` keeps the library loaded.
                *unsafe { library.get(concat!($name, "\0").as_bytes()) }
                    .map_err(|error| format!("libamdhip64.so lacks {}: {error}", $name))?
            };
        }
        Ok(Api {
            init: symbol!("hipInit"),
            get_device_count: symbol!("hipGetDeviceCount"),
            device_get_name: symbol!("hipDeviceGetName"),
            device_total_mem: symbol!("hipDeviceTotalMem"),
            device_get_attribute: symbol!("hipDeviceGetAttribute"),
            get_device_properties: symbol!("hipGetDevicePropertiesR0600"),
            set_device: symbol!("hipSetDevice"),
            get_error_string: symbol!("hipGetErrorString"),
            malloc: symbol!("hipMalloc"),
            malloc_managed: symbol!("hipMallocManaged"),
            host_malloc: symbol!("hipHostMalloc"),
            free: symbol!("hipFree"),
            host_free: symbol!("hipHostFree"),
            memcpy_async: symbol!("hipMemcpyAsync"),
            memset_d8_async: symbol!("hipMemsetD8Async"),
            memset_d16_async: symbol!("hipMemsetD16Async"),
            memset_d32_async: symbol!("hipMemsetD32Async"),
            device_synchronize: symbol!("hipDeviceSynchronize"),
            stream_create_with_flags: symbol!("hipStreamCreateWithFlags"),
            stream_destroy: symbol!("hipStreamDestroy"),
            stream_synchronize: symbol!("hipStreamSynchronize"),
            stream_wait_event: symbol!("hipStreamWaitEvent"),
            event_query: symbol!("hipEventQuery"),
            module_load_data: symbol!("hipModuleLoadData"),
            module_unload: symbol!("hipModuleUnload"),
            module_get_function: symbol!("hipModuleGetFunction"),
            module_launch_kernel: symbol!("hipModuleLaunchKernel"),
            event_create: symbol!("hipEventCreate"),
            event_record: symbol!("hipEventRecord"),
            event_synchronize: symbol!("hipEventSynchronize"),
            event_elapsed_time: symbol!("hipEventElapsedTime"),
            event_destroy: symbol!("hipEventDestroy"),
            _library: library,
        })
    }

    /// Turns a HIP status into a result with HIP's own message.
    fn check(&self, status: HipError, what: &str) -> Result<()> {
        if status == 0 {
            return Ok(());
        }
        // SAFETY: hipGetErrorString returns a static NUL-terminated string (or null).
        let text = unsafe {
            let pointer = (self.get_error_string)(status);
            if pointer.is_null() {
                String::new()
            } else {
                CStr::from_ptr(pointer).to_string_lossy().into_owned()
            }
        };
        Err(RuntimeError::Backend {
            backend: BackendKind::Hip,
            message: format!("{what} failed with error {status}: {text}"),
        })
    }
}

fn api() -> std::result::Result<&'static Api, String> {
    static API: OnceLock<std::result::Result<Api, String>> = OnceLock::new();
    API.get_or_init(Api::load).as_ref().map_err(Clone::clone)
}

fn api_or_error() -> Result<&'static Api> {
    api().map_err(|message| RuntimeError::Backend {
        backend: BackendKind::Hip,
        message,
    })
}

/// Finds the `gcnArchName` string (`gfx90a:sramecc+:xnack-`) in the bytes of a device-properties
/// structure without knowing its layout: the first NUL-terminated string, at a 4-byte-aligned
/// offset after the 256-byte marketing name, that starts with `gfx` and a hexadecimal processor
/// number, optionally followed by `:feature+` / `:feature-` parts.
pub(crate) fn find_gcn_arch_name(properties: &[u8]) -> Option<String> {
    (256..properties.len()).step_by(4).find_map(|offset| {
        let rest = &properties[offset..];
        let end = rest.iter().position(|&b| b == 0)?;
        let text = std::str::from_utf8(&rest[..end]).ok()?;
        let mut parts = text.split(':');
        let processor = parts.next()?.strip_prefix("gfx")?;
        let processor_ok = processor.len() >= 3
            && processor
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        let features_ok = parts.all(|feature| {
            feature.len() > 1
                && (feature.ends_with('+') || feature.ends_with('-'))
                && feature[..feature.len() - 1]
                    .bytes()
                    .all(|b| b.is_ascii_lowercase())
        });
        (processor_ok && features_ok).then(|| text.to_string())
    })
}

fn describe(api: &Api, ordinal: c_int) -> Result<DeviceInfo> {
    let attribute = |which: c_int| -> Result<u64> {
        let mut value: c_int = 0;
        api.check(
            // SAFETY: `value` is a valid out-pointer; `ordinal` is below hipGetDeviceCount.
            unsafe { (api.device_get_attribute)(&mut value, which, ordinal) },
            "hipDeviceGetAttribute",
        )?;
        Ok(u64::try_from(value).unwrap_or(0))
    };
    let mut name = vec![0 as c_char; 256];
    api.check(
        // SAFETY: `name` holds 256 characters, as the length argument says.
        unsafe { (api.device_get_name)(name.as_mut_ptr(), 256, ordinal) },
        "hipDeviceGetName",
    )?;
    // SAFETY: hipDeviceGetName NUL-terminates within the given length; the last byte is
    // forced to NUL in case it did not.
    let name = unsafe {
        *name.last_mut().expect("256 elements") = 0;
        CStr::from_ptr(name.as_ptr()).to_string_lossy().into_owned()
    };
    let mut memory = 0usize;
    api.check(
        // SAFETY: `memory` is a valid out-pointer.
        unsafe { (api.device_total_mem)(&mut memory, ordinal) },
        "hipDeviceTotalMem",
    )?;
    let arch = match std::env::var("KDSL_HIP_ARCH") {
        Ok(arch) if !arch.is_empty() => arch,
        _ => {
            // hipDeviceProp_tR0600 is about 1.5 KiB; 16 KiB leaves room for growth.
            let mut properties = vec![0u8; 16 * 1024];
            api.check(
                // SAFETY: `properties` is larger than any hipDeviceProp_tR0600 layout.
                unsafe { (api.get_device_properties)(properties.as_mut_ptr().cast(), ordinal) },
                "hipGetDevicePropertiesR0600",
            )?;
            find_gcn_arch_name(&properties).ok_or_else(|| RuntimeError::Backend {
                backend: BackendKind::Hip,
                message: format!(
                    "could not find the gfx processor name of device {ordinal}; set KDSL_HIP_ARCH (e.g. gfx90a)"
                ),
            })?
        }
    };
    let max_threads = attribute(ATTRIBUTE_MAX_THREADS_PER_BLOCK)?;
    let shared = attribute(ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)?;
    let max_local = [
        attribute(ATTRIBUTE_MAX_BLOCK_DIM_X)?,
        attribute(ATTRIBUTE_MAX_BLOCK_DIM_X + 1)?,
        attribute(ATTRIBUTE_MAX_BLOCK_DIM_X + 2)?,
    ];
    // HIP's grid limits count work-items, not groups; they bound the groups too.
    let max_groups = [
        attribute(ATTRIBUTE_MAX_GRID_DIM_X)?,
        attribute(ATTRIBUTE_MAX_GRID_DIM_X + 1)?,
        attribute(ATTRIBUTE_MAX_GRID_DIM_X + 2)?,
    ];
    Ok(DeviceInfo {
        backend: BackendKind::Hip,
        platform_backend: "hip".into(),
        index: ordinal as usize,
        name,
        vendor: "AMD".into(),
        driver_version: String::new(),
        device_type: DeviceType::Gpu,
        global_memory_bytes: memory as u64,
        local_memory_bytes: shared,
        compute_units: attribute(ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32,
        max_work_group_size: max_threads,
        sub_group_sizes: vec![attribute(ATTRIBUTE_WARP_SIZE)? as u32],
        target: DeviceTarget::Amdgpu { arch },
        limits: DeviceLimits {
            max_work_group_size: max_threads,
            max_local,
            max_groups,
            local_memory_bytes: shared,
            dynamic_local_memory_bytes: shared,
        },
        locator: ordinal as usize,
    })
}

/// Lists the HIP devices; without the HIP runtime, says so instead.
pub(crate) fn discover() -> (Vec<DeviceInfo>, Option<String>) {
    let api = match api() {
        Ok(api) => api,
        Err(why) => return (Vec::new(), Some(format!("HIP: {why}"))),
    };
    let found = (|| {
        // SAFETY: hipInit takes flags 0; hipGetDeviceCount writes one int.
        api.check(unsafe { (api.init)(0) }, "hipInit")?;
        let mut count: c_int = 0;
        api.check(
            // SAFETY: `count` is a valid out-pointer.
            unsafe { (api.get_device_count)(&mut count) },
            "hipGetDeviceCount",
        )?;
        (0..count.max(0))
            .map(|ordinal| describe(api, ordinal))
            .collect::<Result<Vec<_>>>()
    })();
    match found {
        Ok(devices) if devices.is_empty() => {
            (devices, Some("HIP: the runtime reports no devices".into()))
        }
        Ok(devices) => (devices, None),
        Err(error) => (Vec::new(), Some(format!("HIP: {error}"))),
    }
}

/// Packs arguments into a kernarg buffer: each at an offset aligned to its size (addresses are
/// 8 bytes), as the AMDGPU kernel ABI lays out explicit arguments. Returns the buffer, padded to
/// a multiple of 8 bytes, and each argument's offset.
pub(crate) fn pack_kernel_arguments(arguments: &[RawArgument]) -> (Vec<u8>, Vec<usize>) {
    let mut buffer = Vec::new();
    let mut offsets = Vec::with_capacity(arguments.len());
    for argument in arguments {
        let bytes = match argument {
            RawArgument::Pointer(address) => address.to_le_bytes().to_vec(),
            RawArgument::Scalar(value) => value.to_le_bytes(),
            // The kernel's `u32` byte offset into the dynamic LDS.
            RawArgument::Local { offset, .. } => (*offset as u32).to_le_bytes().to_vec(),
        };
        let offset = buffer.len().next_multiple_of(bytes.len());
        buffer.resize(offset, 0);
        buffer.extend_from_slice(&bytes);
        offsets.push(offset);
    }
    let padded = buffer.len().next_multiple_of(8);
    buffer.resize(padded, 0);
    (buffer, offsets)
}

#[derive(Clone, Copy)]
struct HipDevice {
    api: &'static Api,
    ordinal: c_int,
}

struct HipBackend {
    device: HipDevice,
    queue: Arc<HipQueue>,
}

pub(crate) fn open(info: &DeviceInfo) -> Result<Box<dyn DeviceBackend>> {
    let device = HipDevice {
        api: api_or_error()?,
        ordinal: info.locator as c_int,
    };
    let queue = Arc::new(HipQueue::owned(device)?);
    Ok(Box::new(HipBackend { device, queue }))
}

/// A device whose default queue is a foreign stream (null: the null stream).
///
/// # Safety
/// `stream` must be null or a live stream of the device that outlives the returned backend.
pub(crate) unsafe fn adopt_stream(
    info: &DeviceInfo,
    stream: *mut c_void,
) -> Result<Box<dyn DeviceBackend>> {
    let device = HipDevice {
        api: api_or_error()?,
        ordinal: info.locator as c_int,
    };
    device.bind()?;
    let queue = Arc::new(HipQueue {
        device,
        stream,
        owned: false,
    });
    Ok(Box::new(HipBackend { device, queue }))
}

impl HipDevice {
    /// Makes this device current on the calling thread.
    fn bind(&self) -> Result<()> {
        // SAFETY: the ordinal came from discovery.
        self.api.check(
            unsafe { (self.api.set_device)(self.ordinal) },
            "hipSetDevice",
        )
    }

    fn synchronize(&self) -> Result<()> {
        self.bind()?;
        // SAFETY: no arguments.
        self.api.check(
            unsafe { (self.api.device_synchronize)() },
            "hipDeviceSynchronize",
        )
    }
}

impl DeviceBackend for HipBackend {
    fn allocate(&self, bytes: usize, kind: MemoryKind) -> Result<u64> {
        let api = self.device.api;
        self.device.bind()?;
        let mut pointer: *mut c_void = std::ptr::null_mut();
        // SAFETY: `pointer` is a valid out-pointer for each allocator.
        let status = unsafe {
            match kind {
                MemoryKind::Device => (api.malloc)(&mut pointer, bytes),
                MemoryKind::Shared => {
                    (api.malloc_managed)(&mut pointer, bytes, HIP_MEM_ATTACH_GLOBAL)
                }
                MemoryKind::Host => (api.host_malloc)(&mut pointer, bytes, HIP_HOST_MALLOC_MAPPED),
            }
        };
        api.check(status, "allocation")
            .map_err(|error| RuntimeError::OutOfMemory {
                bytes: bytes as u64,
                message: error.to_string(),
            })?;
        Ok(pointer as u64)
    }

    fn free(&self, address: u64, kind: MemoryKind) {
        if self.device.bind().is_err() {
            return;
        }
        // SAFETY: `address` came from `allocate` with this kind and is freed once, after the
        // work that used it finished (the runtime retires it until then).
        unsafe {
            let _ = match kind {
                MemoryKind::Host => (self.device.api.host_free)(address as *mut c_void),
                _ => (self.device.api.free)(address as *mut c_void),
            };
        }
    }

    fn default_queue(&self) -> Arc<dyn QueueBackend> {
        Arc::clone(&self.queue) as Arc<dyn QueueBackend>
    }

    /// HIP streams always record an event pair around each submission (never run on hardware,
    /// so kept the same as the profiled CUDA path).
    fn new_queue(&self, _profiled: bool) -> Result<Arc<dyn QueueBackend>> {
        Ok(Arc::new(HipQueue::owned(self.device)?))
    }

    fn load(&self, _bundle: &Bundle, image: &Image) -> Result<Arc<dyn ModuleBackend>> {
        self.device.bind()?;
        let mut module: Module = std::ptr::null_mut();
        // SAFETY: the image bytes outlive the call; HIP copies the code object.
        let status =
            unsafe { (self.device.api.module_load_data)(&mut module, image.bytes.as_ptr().cast()) };
        self.device.api.check(status, "hipModuleLoadData")?;
        Ok(Arc::new(HipModule {
            module,
            device: self.device,
        }))
    }
}

/// A HIP stream: one the runtime created (and destroys), or an adopted one.
struct HipQueue {
    device: HipDevice,
    stream: Stream,
    owned: bool,
}

// SAFETY: HIP streams may be used from any thread once the device is set, which every use here
// does first.
unsafe impl Send for HipQueue {}
// SAFETY: see above.
unsafe impl Sync for HipQueue {}

impl HipQueue {
    fn owned(device: HipDevice) -> Result<HipQueue> {
        device.bind()?;
        let mut stream: Stream = std::ptr::null_mut();
        device.api.check(
            // SAFETY: `stream` is a valid out-pointer.
            unsafe { (device.api.stream_create_with_flags)(&mut stream, HIP_STREAM_NON_BLOCKING) },
            "hipStreamCreateWithFlags",
        )?;
        Ok(HipQueue {
            device,
            stream,
            owned: true,
        })
    }

    /// Makes the stream wait for `wait_for`, then records an event pair around `operation`.
    fn submit(
        &self,
        wait_for: &[&dyn EventBackend],
        operation: impl FnOnce(Stream) -> Result<()>,
    ) -> Result<Arc<dyn EventBackend>> {
        let api = self.device.api;
        self.device.bind()?;
        for event in wait_for {
            let event: &HipLaunchEvent = downcast(BackendKind::Hip, "an event", event.as_any())?;
            api.check(
                // SAFETY: the stream and `event.end` (created and recorded by `submit`) are alive.
                unsafe { (api.stream_wait_event)(self.stream, event.end, 0) },
                "hipStreamWaitEvent",
            )?;
        }
        let mut event = HipLaunchEvent {
            api,
            start: std::ptr::null_mut(),
            end: std::ptr::null_mut(),
        };
        api.check(
            // SAFETY: a valid out-pointer; the event's Drop destroys what was created.
            unsafe { (api.event_create)(&mut event.start) },
            "hipEventCreate",
        )?;
        api.check(
            // SAFETY: a valid out-pointer; the event's Drop destroys what was created.
            unsafe { (api.event_create)(&mut event.end) },
            "hipEventCreate",
        )?;
        api.check(
            // SAFETY: `event.start` was created above and the stream is alive.
            unsafe { (api.event_record)(event.start, self.stream) },
            "hipEventRecord",
        )?;
        operation(self.stream)?;
        api.check(
            // SAFETY: `event.end` was created above and the stream is alive.
            unsafe { (api.event_record)(event.end, self.stream) },
            "hipEventRecord",
        )?;
        Ok(Arc::new(event))
    }
}

impl Drop for HipQueue {
    fn drop(&mut self) {
        if self.owned && self.device.bind().is_ok() {
            // SAFETY: the stream was created by `owned` and is destroyed once.
            let _ = unsafe { (self.device.api.stream_destroy)(self.stream) };
        }
    }
}

impl QueueBackend for HipQueue {
    fn copy(
        &self,
        destination: u64,
        source: u64,
        bytes: usize,
        wait_for: &[&dyn EventBackend],
    ) -> Result<Submitted> {
        let api = self.device.api;
        self.submit(wait_for, |stream| {
            // SAFETY: the runtime checked both ranges (host memory kept alive until the event
            // completes, or allocations of this device); HIP infers the direction.
            let status = unsafe {
                (api.memcpy_async)(
                    destination as *mut c_void,
                    source as *const c_void,
                    bytes,
                    HIP_MEMCPY_DEFAULT,
                    stream,
                )
            };
            api.check(status, "hipMemcpyAsync")
        })
        .map(Submitted::Event)
    }

    fn fill(
        &self,
        address: u64,
        pattern: &[u8],
        count: usize,
        wait_for: &[&dyn EventBackend],
    ) -> Result<Submitted> {
        let api = self.device.api;
        let pointer = address as *mut c_void;
        self.submit(wait_for, |stream| {
            // SAFETY: the runtime checked that `count` elements fit the allocation.
            let status = unsafe {
                match *pattern {
                    [byte] => (api.memset_d8_async)(pointer, byte, count, stream),
                    [a, b] => {
                        (api.memset_d16_async)(pointer, u16::from_le_bytes([a, b]), count, stream)
                    }
                    [a, b, c, d] => (api.memset_d32_async)(
                        pointer,
                        i32::from_le_bytes([a, b, c, d]),
                        count,
                        stream,
                    ),
                    _ => {
                        return Err(RuntimeError::Unsupported {
                            backend: BackendKind::Hip,
                            what: format!("fills with {}-byte patterns", pattern.len()),
                        })
                    }
                }
            };
            api.check(status, "hipMemsetAsync")
        })
        .map(Submitted::Event)
    }

    fn launch(
        &self,
        kernel: &dyn KernelBackend,
        launch: &Launch,
        arguments: &[RawArgument],
        wait_for: &[&dyn EventBackend],
    ) -> Result<Submitted> {
        let kernel: &HipKernel = downcast(BackendKind::Hip, "a kernel", kernel.as_any())?;
        let api = self.device.api;
        let (mut kernargs, _) = pack_kernel_arguments(arguments);
        let mut size = kernargs.len();
        let mut extra: [*mut c_void; 5] = [
            HIP_LAUNCH_PARAM_BUFFER_POINTER as *mut c_void,
            kernargs.as_mut_ptr().cast(),
            HIP_LAUNCH_PARAM_BUFFER_SIZE as *mut c_void,
            (&mut size as *mut usize).cast(),
            HIP_LAUNCH_PARAM_END as *mut c_void,
        ];
        let groups = launch.groups();
        let at = |values: &[u64], i: usize| values.get(i).copied().unwrap_or(1) as c_uint;
        let local = launch.local();
        self.submit(wait_for, |stream| {
            // SAFETY: the arguments were checked against the kernel's metadata and packed at
            // their ABI offsets; `kernargs` and `size` outlive the call (HIP copies the buffer);
            // the geometry was checked against the device's limits.
            let status = unsafe {
                (api.module_launch_kernel)(
                    kernel.function,
                    at(&groups, 0),
                    at(&groups, 1),
                    at(&groups, 2),
                    at(local, 0),
                    at(local, 1),
                    at(local, 2),
                    RawArgument::dynamic_local_bytes(arguments) as c_uint,
                    stream,
                    std::ptr::null_mut(),
                    extra.as_mut_ptr(),
                )
            };
            api.check(status, "hipModuleLaunchKernel")
        })
        .map(Submitted::Event)
    }

    fn synchronize(&self) -> Result<()> {
        self.device.bind()?;
        // SAFETY: the stream is alive.
        self.device.api.check(
            unsafe { (self.device.api.stream_synchronize)(self.stream) },
            "hipStreamSynchronize",
        )
    }

    fn event_after(&self, _sequence: u64) -> Result<Arc<dyn EventBackend>> {
        // HIP submissions carry their own events and are never numbered.
        Err(RuntimeError::Unsupported {
            backend: BackendKind::Hip,
            what: "events for numbered submissions".into(),
        })
    }
}

struct HipModule {
    module: Module,
    device: HipDevice,
}

// SAFETY: HIP module and function handles may be used from any thread once the device is set,
// which every use here does first.
unsafe impl Send for HipModule {}
// SAFETY: see above.
unsafe impl Sync for HipModule {}

impl Drop for HipModule {
    fn drop(&mut self) {
        if self.device.synchronize().is_ok() {
            // SAFETY: unloaded once, after all work finished; kernels hold an Arc to the module.
            let _ = unsafe { (self.device.api.module_unload)(self.module) };
        }
    }
}

impl ModuleBackend for HipModule {
    fn kernel(self: Arc<Self>, name: &str, entry_point: &str) -> Result<Box<dyn KernelBackend>> {
        self.device.bind()?;
        let c_name = CString::new(entry_point).map_err(|_| RuntimeError::Backend {
            backend: BackendKind::Hip,
            message: format!("kernel name `{name}` contains a NUL byte"),
        })?;
        let mut function: Function = std::ptr::null_mut();
        // SAFETY: the module is loaded; `c_name` is NUL-terminated.
        let status = unsafe {
            (self.device.api.module_get_function)(&mut function, self.module, c_name.as_ptr())
        };
        self.device.api.check(status, "hipModuleGetFunction")?;
        Ok(Box::new(HipKernel {
            function,
            _module: self,
        }))
    }
}

struct HipKernel {
    function: Function,
    _module: Arc<HipModule>,
}

// SAFETY: see HipModule.
unsafe impl Send for HipKernel {}
// SAFETY: see HipModule.
unsafe impl Sync for HipKernel {}

impl KernelBackend for HipKernel {
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Two events recorded around one submission.
struct HipLaunchEvent {
    api: &'static Api,
    start: HipEvent,
    end: HipEvent,
}

// SAFETY: HIP events may be waited on from any thread.
unsafe impl Send for HipLaunchEvent {}
// SAFETY: see above.
unsafe impl Sync for HipLaunchEvent {}

impl Drop for HipLaunchEvent {
    fn drop(&mut self) {
        // SAFETY: each non-null event was created by `submit` and is destroyed once.
        unsafe {
            for event in [self.start, self.end] {
                if !event.is_null() {
                    let _ = (self.api.event_destroy)(event);
                }
            }
        }
    }
}

impl EventBackend for HipLaunchEvent {
    fn wait(&self) -> Result<()> {
        // SAFETY: the event was recorded.
        self.api.check(
            unsafe { (self.api.event_synchronize)(self.end) },
            "hipEventSynchronize",
        )
    }

    fn is_complete(&self) -> Result<bool> {
        // SAFETY: the event was recorded.
        match unsafe { (self.api.event_query)(self.end) } {
            HIP_ERROR_NOT_READY => Ok(false),
            status => self.api.check(status, "hipEventQuery").map(|()| true),
        }
    }

    fn elapsed_ns(&self) -> Result<u64> {
        self.wait()?;
        let mut milliseconds = 0f32;
        self.api.check(
            // SAFETY: both events were recorded and have completed (`wait` above).
            unsafe { (self.api.event_elapsed_time)(&mut milliseconds, self.start, self.end) },
            "hipEventElapsedTime",
        )?;
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
    fn packs_arguments_at_natural_alignment() {
        let (buffer, offsets) = pack_kernel_arguments(&[
            RawArgument::Pointer(0x1122_3344_5566_7788),
            RawArgument::Scalar(ScalarValue::U8(9)),
            RawArgument::Scalar(ScalarValue::F32(1.5)),
            RawArgument::Scalar(ScalarValue::I16(-2)),
            RawArgument::Scalar(ScalarValue::F64(0.25)),
            RawArgument::Pointer(0xAA),
            RawArgument::Scalar(ScalarValue::U32(7)),
        ]);
        assert_eq!(offsets, [0, 8, 12, 16, 24, 32, 40]);
        assert_eq!(buffer.len(), 48);
        assert_eq!(buffer[0..8], 0x1122_3344_5566_7788u64.to_le_bytes());
        assert_eq!(buffer[8], 9);
        assert_eq!(buffer[9..12], [0, 0, 0]);
        assert_eq!(buffer[12..16], 1.5f32.to_le_bytes());
        assert_eq!(buffer[16..18], (-2i16).to_le_bytes());
        assert_eq!(buffer[24..32], 0.25f64.to_le_bytes());
        assert_eq!(buffer[32..40], 0xAAu64.to_le_bytes());
        assert_eq!(buffer[40..44], 7u32.to_le_bytes());
    }

    #[test]
    fn packs_the_saxpy_signature() {
        let (buffer, offsets) = pack_kernel_arguments(&[
            RawArgument::Pointer(1),
            RawArgument::Pointer(2),
            RawArgument::Scalar(ScalarValue::F32(2.0)),
            RawArgument::Scalar(ScalarValue::U32(10)),
        ]);
        assert_eq!(offsets, [0, 8, 16, 20]);
        assert_eq!(buffer.len(), 24);
        assert!(pack_kernel_arguments(&[]).0.is_empty());
    }

    #[test]
    fn finds_the_arch_name_without_the_struct_layout() {
        let mut properties = vec![0u8; 2048];
        properties[..19].copy_from_slice(b"AMD Instinct MI210\0");
        // Unrelated fields that must not match.
        properties[300..304].copy_from_slice(&64u32.to_le_bytes());
        properties[400..408].copy_from_slice(b"gfxzz\0\0\0");
        let arch = b"gfx90a:sramecc+:xnack-";
        properties[1160..1160 + arch.len()].copy_from_slice(arch);
        assert_eq!(
            find_gcn_arch_name(&properties).as_deref(),
            Some("gfx90a:sramecc+:xnack-")
        );
        let mut plain = vec![0u8; 1024];
        plain[512..519].copy_from_slice(b"gfx1100");
        assert_eq!(find_gcn_arch_name(&plain).as_deref(), Some("gfx1100"));
        // A name in the marketing-name field alone is not taken.
        let mut only_name = vec![0u8; 1024];
        only_name[..6].copy_from_slice(b"gfx906");
        assert_eq!(find_gcn_arch_name(&only_name), None);
    }

    #[test]
    fn discovery_without_the_runtime_reports_instead_of_crashing() {
        let (devices, note) = discover();
        if devices.is_empty() {
            assert!(note.unwrap().starts_with("HIP:"));
        }
    }
}
