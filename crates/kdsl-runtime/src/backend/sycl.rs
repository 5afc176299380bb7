//! The SYCL backend: the C++ shim in `runtime-shim/`, bridged with cxx.
//!
//! The bridge's C++ side (`kdsl_sycl_loader.cpp`) opens `libkdsl_sycl_shim.so`, which holds the
//! SYCL code and is the only library that links libsycl, with dlopen on first use: from
//! `KDSL_SYCL_SHIM` if set, else the path build.rs built it at, else next to the executable. A
//! machine without the SYCL runtime therefore gets a discovery note, not a loader failure.
//!
//! Each opened device instance owns its own `sycl::context` and an in-order, profiling queue, so
//! USM allocations of one instance are invalid in another (the runtime checks this before a
//! launch). SPIR-V is built with `create_kernel_bundle_from_source(source_language::spirv)`.
//! kdsl's dimension 0 (`get_global_id(0)`) is SYCL's last range dimension; the shim reverses the
//! ranges, and the suite's `global_ids` test checks the mapping on the device.

use super::{
    downcast, DeviceBackend, EventBackend, KernelBackend, ModuleBackend, QueueBackend, RawArgument,
    Submitted,
};
use crate::args::ScalarValue;
use crate::buffer::MemoryKind;
use crate::device::{BackendKind, DeviceInfo, DeviceTarget, DeviceType};
use crate::error::{Result, RuntimeError};
use crate::launch::{DeviceLimits, Launch};
use crate::native_cache;
use kdsl_bundle::sycl_entry_points::single_image_for_sycl;
use kdsl_bundle::syclbin::{State, Syclbin};
use kdsl_bundle::{Bundle, Image, TargetKind};
use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

#[cxx::bridge(namespace = "kdsl_sycl")]
mod ffi {
    struct DeviceDescription {
        index: usize,
        name: String,
        vendor: String,
        driver_version: String,
        device_version: String,
        backend: String,
        device_type: String,
        global_memory_bytes: u64,
        local_memory_bytes: u64,
        compute_units: u32,
        max_work_group_size: u64,
        supports_spirv: bool,
        sub_group_sizes: Vec<u32>,
    }

    struct KernelArgument {
        kind: u8,
        bits: u64,
    }

    unsafe extern "C++" {
        include!("kdsl_sycl.h");

        type Queue;
        type Program;
        type Kernel;
        type Event;

        fn load_runtime() -> Result<()>;
        fn list_devices() -> Result<Vec<DeviceDescription>>;
        fn create_queue(index: usize) -> Result<UniquePtr<Queue>>;
        fn create_sibling_queue(queue: &Queue, profiled: bool) -> Result<UniquePtr<Queue>>;
        fn adopt_queue(sycl_queue: u64, device_index: &mut usize) -> Result<UniquePtr<Queue>>;
        fn validate_spirv(spirv: &[u8]) -> Result<()>;
        fn build_program(queue: &Queue, spirv: &[u8]) -> Result<UniquePtr<Program>>;
        fn load_syclbin(queue: &Queue, syclbin: &[u8]) -> Result<UniquePtr<Program>>;
        fn program_binary(program: &Program) -> Result<Vec<u8>>;
        fn program_from_binary(queue: &Queue, binary: &[u8]) -> Result<UniquePtr<Program>>;
        fn queue_device_identity(queue: &Queue) -> Result<String>;
        fn program_kernel(program: &Program, name: &str) -> Result<UniquePtr<Kernel>>;
        fn allocate(queue: &Queue, bytes: usize, kind: u8) -> Result<u64>;
        fn release(queue: &Queue, address: u64) -> Result<()>;
        fn copy(
            queue: &Queue,
            destination: u64,
            source: u64,
            size: usize,
            wait_for: &[u64],
        ) -> Result<UniquePtr<Event>>;
        fn fill(
            queue: &Queue,
            address: u64,
            pattern: &[u8],
            count: usize,
            wait_for: &[u64],
        ) -> Result<UniquePtr<Event>>;
        fn wait(queue: &Queue) -> Result<()>;
        fn launch(
            queue: &Queue,
            kernel: &Kernel,
            global: &[u64],
            local: &[u64],
            arguments: &[KernelArgument],
            wait_for: &[u64],
        ) -> Result<UniquePtr<Event>>;
        fn queue_in_order(queue: &Queue) -> Result<bool>;
        fn queue_profiled(queue: &Queue) -> Result<bool>;
        fn launch_without_event(
            queue: &Queue,
            kernel: &Kernel,
            global: &[u64],
            local: &[u64],
            arguments: &[KernelArgument],
        ) -> Result<()>;
        fn submit_marker(queue: &Queue) -> Result<UniquePtr<Event>>;
        fn event_from_native(queue: &Queue, sycl_event: u64) -> Result<UniquePtr<Event>>;
        fn event_native(event: &Event) -> Result<u64>;
        fn kernel_native(kernel: &Kernel) -> Result<u64>;
        fn new_native_queue(index: usize) -> Result<u64>;
        fn delete_native_queue(queue: u64);
        fn event_wait(event: &Event) -> Result<()>;
        fn event_is_complete(event: &Event) -> Result<bool>;
        fn event_elapsed_ns(event: &Event) -> Result<u64>;
    }
}

// SAFETY: the wrapped C++ objects are sycl::queue, sycl::context, sycl::kernel_bundle,
// sycl::kernel and sycl::event, which the SYCL specification makes safe to use from several
// threads at once; the shim's own state (the asynchronous error list) is guarded by a mutex.
unsafe impl Send for ffi::Queue {}
// SAFETY: see above.
unsafe impl Sync for ffi::Queue {}
// SAFETY: see above.
unsafe impl Send for ffi::Program {}
// SAFETY: see above.
unsafe impl Sync for ffi::Program {}
// SAFETY: see above.
unsafe impl Send for ffi::Kernel {}
// SAFETY: see above.
unsafe impl Sync for ffi::Kernel {}
// SAFETY: see above.
unsafe impl Send for ffi::Event {}
// SAFETY: see above.
unsafe impl Sync for ffi::Event {}

fn backend_error(error: cxx::Exception) -> RuntimeError {
    RuntimeError::Backend {
        backend: BackendKind::Sycl,
        message: error.what().to_string(),
    }
}

/// Lists the SYCL devices kdsl can run on: OpenCL and Level Zero devices that build SPIR-V,
/// and CUDA and HIP devices (native images).
pub(crate) fn discover() -> (Vec<DeviceInfo>, Option<String>) {
    if let Err(error) = ffi::load_runtime() {
        return (
            Vec::new(),
            Some(format!(
                "SYCL: the SYCL runtime could not be loaded: {}; install it (Python: \
                 `pip install \"kdsl-gpu[sycl]\"`; a kdsl checkout: `bash scripts/setup.sh`), \
                 or set KDSL_SYCL_SHIM to the path of libkdsl_sycl_shim.so",
                error.what()
            )),
        );
    }
    let descriptions = match ffi::list_devices() {
        Ok(list) => list,
        Err(error) => {
            return (
                Vec::new(),
                Some(format!("SYCL: device discovery failed: {}", error.what())),
            )
        }
    };
    let total = descriptions.len();
    let mut devices = Vec::new();
    for description in descriptions {
        let Some(target) = sycl_device_target(&description) else {
            continue;
        };
        let device_type = match description.device_type.as_str() {
            "gpu" => DeviceType::Gpu,
            "cpu" => DeviceType::Cpu,
            "accelerator" => DeviceType::Accelerator,
            _ => DeviceType::Other,
        };
        devices.push(DeviceInfo {
            backend: BackendKind::Sycl,
            platform_backend: description.backend.clone(),
            index: devices.len(),
            name: description.name.clone(),
            vendor: description.vendor.clone(),
            driver_version: description.driver_version.clone(),
            device_type,
            global_memory_bytes: description.global_memory_bytes,
            local_memory_bytes: description.local_memory_bytes,
            compute_units: description.compute_units,
            max_work_group_size: description.max_work_group_size,
            sub_group_sizes: description.sub_group_sizes.clone(),
            target,
            limits: DeviceLimits {
                max_work_group_size: description.max_work_group_size,
                max_local: [description.max_work_group_size; 3],
                max_groups: [u64::MAX; 3],
                local_memory_bytes: description.local_memory_bytes,
                dynamic_local_memory_bytes: description.local_memory_bytes,
            },
            locator: description.index,
        });
    }
    let note = devices.is_empty().then(|| {
        let icd = std::env::var("OCL_ICD_FILENAMES").unwrap_or_default();
        if total > 0 {
            format!("SYCL: {total} devices found, none of them can build SPIR-V or is a CUDA or HIP device")
        } else if icd.is_empty() {
            "SYCL: no devices found and OCL_ICD_FILENAMES is unset (the OpenCL CPU runtime's ICD file names a placeholder path, so nothing is found without it)".to_string()
        } else {
            format!("SYCL: no devices found (OCL_ICD_FILENAMES={icd})")
        }
    });
    (devices, note)
}

/// One C++ queue, shared by the device, its queue handles, modules and events.
type QueueHandle = Arc<cxx::UniquePtr<ffi::Queue>>;

/// What a SYCL device takes, decided by its backend first: CUDA devices the PTX image for the
/// compute capability they report as their version (`9.0`), HIP devices the AMDGPU image for
/// the processor they report (`gfx90a:sramecc+:xnack-`), OpenCL and Level Zero devices SPIR-V
/// where they can build it. A CUDA device also claims SPIR-V support (libsycl's own
/// translation), but its driver takes only native code, so the backend must be looked at first.
fn sycl_device_target(description: &ffi::DeviceDescription) -> Option<DeviceTarget> {
    match description.backend.as_str() {
        "cuda" => {
            let (major, minor) = description.device_version.trim().split_once('.')?;
            Some(DeviceTarget::Ptx {
                major: major.parse().ok()?,
                minor: minor.parse().ok()?,
            })
        }
        "hip" => {
            let arch = description.device_version.trim();
            arch.starts_with("gfx").then(|| DeviceTarget::Amdgpu {
                arch: arch.to_string(),
            })
        }
        _ => description.supports_spirv.then(|| {
            match kdsl_bundle::processors::intel_gpu_family(&description.name)
                .filter(|_| description.device_type == "gpu")
            {
                Some(family) => DeviceTarget::IntelGpu {
                    family: family.to_string(),
                },
                None => DeviceTarget::Spirv,
            }
        }),
    }
}

/// Validates a SPIR-V image with SPIRV-Tools before any driver reads it: the linked
/// SPIRV-Tools for plain images, the newer `spirv-val` for an Intel GPU's cooperative-matrix
/// images, which the linked one (Debian's 2023.1) cannot validate; without that program such
/// an image is refused (compile without `spirv:intel_gpu_*`, or run `scripts/setup.sh`).
fn validate_spirv_image(image: &Image) -> Result<()> {
    let invalid = |why: String| RuntimeError::InvalidImage {
        image: image.describe(),
        why,
    };
    if image.arch.is_empty() {
        return ffi::validate_spirv(&image.bytes)
            .map_err(|error| invalid(error.what().to_string()));
    }
    let validator = kdsl_bundle::spirv_check::find_newer_validator().ok_or_else(|| {
        invalid(format!(
            "SPIR-V for an Intel GPU's matrix engines is validated by SPIRV-Tools 2025.5, \
             which is not installed ({} under KDSL_PREFIX; scripts/setup.sh installs it)",
            kdsl_bundle::spirv_check::NEWER_VALIDATOR
        ))
    })?;
    kdsl_bundle::spirv_check::validate_with_program(&validator, &image.bytes).map_err(invalid)
}

struct SyclDevice {
    queue: Arc<SyclQueue>,
    /// The device and driver as the native program cache keys them (None where the shim
    /// could not tell), read on first use.
    identity: OnceLock<Option<String>>,
}

impl SyclDevice {
    fn new(queue: Arc<SyclQueue>) -> SyclDevice {
        SyclDevice {
            queue,
            identity: OnceLock::new(),
        }
    }

    /// The native program cache's key for `spirv` on this device, where the cache is on and the
    /// device's binaries can be kept (OpenCL devices).
    fn native_cache_key(&self, spirv: &[u8]) -> Option<native_cache::EntryKey> {
        if !native_cache::enabled() {
            return None;
        }
        let identity = self
            .identity
            .get_or_init(|| ffi::queue_device_identity(&self.queue.queue).ok())
            .as_deref()?;
        identity
            .starts_with("opencl\n")
            .then(|| native_cache::EntryKey::new(identity, spirv))
    }

    /// A program for `spirv`: from the native program cache where it holds one the driver
    /// takes, else built from the SPIR-V (and its binary then kept for later processes).
    fn build_spirv(&self, image: &Image) -> Result<cxx::UniquePtr<ffi::Program>> {
        let key = self.native_cache_key(&image.bytes);
        if let Some(key) = &key {
            if let Some(binary) = native_cache::read(key) {
                match ffi::program_from_binary(&self.queue.queue, &binary) {
                    Ok(program) => {
                        native_cache::note_used();
                        return Ok(program);
                    }
                    Err(_) => native_cache::note_refused(),
                }
            }
        }
        // Drivers trust SPIR-V: a damaged or hostile module can make Intel's reader call
        // exit() or crash inside this process, so SPIRV-Tools validates it first.
        validate_spirv_image(image)?;
        let spirv = &image.bytes;
        let program = ffi::build_program(&self.queue.queue, spirv).map_err(backend_error)?;
        if let Some(key) = &key {
            if let Ok(binary) = ffi::program_binary(&program) {
                native_cache::write(key, &binary);
            }
        }
        Ok(program)
    }
}

pub(crate) fn open(info: &DeviceInfo) -> Result<Box<dyn DeviceBackend>> {
    let queue = ffi::create_queue(info.locator).map_err(backend_error)?;
    Ok(Box::new(SyclDevice::new(SyclQueue::new(queue)?)))
}

/// Adopts a foreign `sycl::queue *`; gives the backend and the device's discovery locator.
///
/// # Safety
/// `queue` must point to a live `sycl::queue` of the libsycl the shim uses.
pub(crate) unsafe fn adopt(
    queue: *mut std::ffi::c_void,
) -> Result<(Box<dyn DeviceBackend>, usize)> {
    ffi::load_runtime().map_err(backend_error)?;
    let mut locator = 0usize;
    let queue = ffi::adopt_queue(queue as u64, &mut locator).map_err(backend_error)?;
    let device: Box<dyn DeviceBackend> = Box::new(SyclDevice::new(SyclQueue::new(queue)?));
    Ok((device, locator))
}

/// The work-group sizes the shim takes: zeros where the launch leaves them to the SYCL runtime
/// (the shim then submits `parallel_for(range)`).
fn shim_local(launch: &Launch) -> &[u64] {
    if launch.local_left_open() {
        &[0; 3][..launch.dimensions()]
    } else {
        launch.local()
    }
}

fn memory_kind_code(kind: MemoryKind) -> u8 {
    match kind {
        MemoryKind::Device => 0,
        MemoryKind::Shared => 1,
        MemoryKind::Host => 2,
    }
}

/// How a module's launch-sized local arrays (`local mut [T]`) are sized as SYCL local
/// arguments (work-group memory, one argument each in every kernel).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LocalArguments {
    /// SPIR-V: a Workgroup pointer parameter each, of exactly the array's bytes.
    Exact,
    /// PTX and AMDGPU: SYCL's CUDA and HIP adapters pass each local argument as a `size_t` byte
    /// offset into the launch's dynamic local memory (read as kdsl's `u32` offset parameter,
    /// its low half) and start each at a multiple of min(128, its size) bytes. Sizes rounded up
    /// to 128 bytes make every array 128-byte aligned, as kdsl's accesses need at most.
    PaddedTo128,
}

impl LocalArguments {
    fn of(target: TargetKind) -> LocalArguments {
        match target {
            TargetKind::Spirv => LocalArguments::Exact,
            TargetKind::Ptx | TargetKind::Amdgpu => LocalArguments::PaddedTo128,
        }
    }

    /// The multiple of bytes each array's size is rounded up to (and, by the adapter, its
    /// offset aligned to).
    fn granule(self) -> u64 {
        match self {
            LocalArguments::Exact => 1,
            LocalArguments::PaddedTo128 => 128,
        }
    }

    /// The size of the local argument for an array of `bytes` (checked against the device's
    /// local memory with the same rounding, so it does not overflow).
    fn bytes(self, bytes: u64) -> u64 {
        bytes.next_multiple_of(self.granule())
    }
}

/// The shim's argument kind codes (`ArgumentKind` in kdsl_sycl.cpp).
fn argument(raw: &RawArgument, local: LocalArguments) -> ffi::KernelArgument {
    let (kind, bits) = match *raw {
        RawArgument::Pointer(address) => (0, address),
        // A local argument (SYCL work-group memory) of this many bytes.
        RawArgument::Local { bytes, .. } => (13, local.bytes(bytes)),
        RawArgument::Scalar(value) => {
            let kind = match value {
                ScalarValue::Bool(_) => 1,
                ScalarValue::I8(_) => 2,
                ScalarValue::U8(_) => 3,
                ScalarValue::I16(_) => 4,
                // The shim passes a bf16's 16 bits as they are.
                ScalarValue::U16(_) | ScalarValue::Bf16(_) => 5,
                ScalarValue::I32(_) => 6,
                ScalarValue::U32(_) => 7,
                ScalarValue::I64(_) => 8,
                ScalarValue::U64(_) => 9,
                ScalarValue::F16(_) => 10,
                ScalarValue::F32(_) => 11,
                ScalarValue::F64(_) => 12,
            };
            (kind, value.to_bits())
        }
    };
    ffi::KernelArgument { kind, bits }
}

impl DeviceBackend for SyclDevice {
    fn allocate(&self, bytes: usize, kind: MemoryKind) -> Result<u64> {
        ffi::allocate(&self.queue.queue, bytes, memory_kind_code(kind)).map_err(|error| {
            RuntimeError::OutOfMemory {
                bytes: bytes as u64,
                message: error.what().to_string(),
            }
        })
    }

    fn free(&self, address: u64, _kind: MemoryKind) {
        // Nothing can be reported from Drop; a failure here leaks the allocation.
        let _ = ffi::release(&self.queue.queue, address);
    }

    fn default_queue(&self) -> Arc<dyn QueueBackend> {
        Arc::clone(&self.queue) as Arc<dyn QueueBackend>
    }

    fn new_queue(&self, profiled: bool) -> Result<Arc<dyn QueueBackend>> {
        let queue =
            ffi::create_sibling_queue(&self.queue.queue, profiled).map_err(backend_error)?;
        Ok(SyclQueue::new(queue)? as Arc<dyn QueueBackend>)
    }

    fn load(&self, bundle: &Bundle, image: &Image) -> Result<Arc<dyn ModuleBackend>> {
        let (program, by_kernel_name) = if image.target == TargetKind::Spirv
            && bundle.entry_point_prefix.is_empty()
        {
            let program = self.build_spirv(image).map_err(|error| match error {
                RuntimeError::InvalidImage { why, .. } => RuntimeError::InvalidImage {
                    image: image.describe(),
                    why,
                },
                other => other,
            })?;
            (program, false)
        } else {
            if image.target == TargetKind::Spirv {
                // As in build_spirv: SPIRV-Tools validates SPIR-V before any driver reads it.
                validate_spirv_image(image)?;
            }
            // Native images (and images with `__sycl_kernel_` entry points) go through a
            // SYCLBIN holding just the chosen image, which `get_kernel_bundle` builds for the
            // queue's device; a `.kbundle`'s PTX gets the entry point names SYCL looks up.
            let single =
                single_image_for_sycl(bundle, image).map_err(|error| match image.target {
                    TargetKind::Amdgpu => RuntimeError::Unsupported {
                        backend: BackendKind::Sycl,
                        what: format!(
                            "loading a .kbundle's {} image through SYCL ({error}): compile with \
                         `kdsl compile --format syclbin` for SYCL's HIP devices",
                            image.describe()
                        ),
                    },
                    _ => RuntimeError::InvalidImage {
                        image: image.describe(),
                        why: error.to_string(),
                    },
                })?;
            let syclbin = Syclbin::from_bundle(&single, State::Executable)?.to_bytes();
            let program = ffi::load_syclbin(&self.queue.queue, &syclbin).map_err(backend_error)?;
            (program, true)
        };
        Ok(Arc::new(SyclModule {
            program,
            by_kernel_name,
            local_arguments: LocalArguments::of(image.target),
            _queue: Arc::clone(&self.queue.queue),
        }))
    }
}

struct SyclQueue {
    queue: QueueHandle,
    /// Whether the queue times its work (kdsl's own profiled queues; an adopted queue if it was
    /// made with `enable_profiling`).
    profiled: bool,
    /// In order and unprofiled: launches go through SYCL's `submit_without_event` (the
    /// cheapest submission) and learn of completion from lazy markers.
    markers: Option<Arc<MarkerState>>,
}

/// The lazy completion markers of an in-order, unprofiled queue.
struct MarkerState {
    queue: QueueHandle,
    /// How many launches without events were enqueued (each one's sequence number is its count).
    submitted: AtomicU64,
    /// The latest marker submitted.
    last: Mutex<Option<Arc<Marker>>>,
}

/// A barrier submitted after launch `covers` (and everything before it).
struct Marker {
    event: cxx::UniquePtr<ffi::Event>,
    covers: u64,
}

impl MarkerState {
    /// A marker whose completion implies that launch `sequence` finished: the latest one if it
    /// was submitted after that launch, else a new one submitted now.
    fn marker_covering(&self, sequence: u64) -> Result<Arc<Marker>> {
        let mut last = self
            .last
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(marker) = last.as_ref().filter(|marker| marker.covers >= sequence) {
            return Ok(Arc::clone(marker));
        }
        let covers = self.submitted.load(Ordering::Acquire);
        let event = ffi::submit_marker(&self.queue).map_err(backend_error)?;
        let marker = Arc::new(Marker { event, covers });
        *last = Some(Arc::clone(&marker));
        Ok(marker)
    }
}

/// The addresses of the bridge's C++ event objects, which the shim resolves to SYCL events.
fn event_addresses(wait_for: &[&dyn EventBackend]) -> Result<Vec<u64>> {
    wait_for
        .iter()
        .map(|event| {
            let event: &SyclEvent = downcast(BackendKind::Sycl, "an event", event.as_any())?;
            event.address()
        })
        .collect()
}

impl SyclQueue {
    fn new(queue: cxx::UniquePtr<ffi::Queue>) -> Result<Arc<SyclQueue>> {
        let profiled = ffi::queue_profiled(&queue).map_err(backend_error)?;
        let in_order = ffi::queue_in_order(&queue).map_err(backend_error)?;
        let queue = Arc::new(queue);
        let markers = (in_order && !profiled).then(|| {
            Arc::new(MarkerState {
                queue: Arc::clone(&queue),
                submitted: AtomicU64::new(0),
                last: Mutex::new(None),
            })
        });
        Ok(Arc::new(SyclQueue {
            queue,
            profiled,
            markers,
        }))
    }

    fn event(&self, event: cxx::UniquePtr<ffi::Event>) -> Arc<dyn EventBackend> {
        Arc::new(SyclEvent::Recorded {
            event,
            profiled: self.profiled,
            _queue: Arc::clone(&self.queue),
        })
    }
}

impl QueueBackend for SyclQueue {
    fn copy(
        &self,
        destination: u64,
        source: u64,
        bytes: usize,
        wait_for: &[&dyn EventBackend],
    ) -> Result<Submitted> {
        let waits = event_addresses(wait_for)?;
        let event =
            ffi::copy(&self.queue, destination, source, bytes, &waits).map_err(backend_error)?;
        Ok(Submitted::Event(self.event(event)))
    }

    fn fill(
        &self,
        address: u64,
        pattern: &[u8],
        count: usize,
        wait_for: &[&dyn EventBackend],
    ) -> Result<Submitted> {
        let waits = event_addresses(wait_for)?;
        let event =
            ffi::fill(&self.queue, address, pattern, count, &waits).map_err(backend_error)?;
        Ok(Submitted::Event(self.event(event)))
    }

    fn launch(
        &self,
        kernel: &dyn KernelBackend,
        launch: &Launch,
        arguments: &[RawArgument],
        wait_for: &[&dyn EventBackend],
    ) -> Result<Submitted> {
        let kernel: &SyclKernel = downcast(BackendKind::Sycl, "a kernel", kernel.as_any())?;
        let local = kernel._module.local_arguments;
        let arguments: Vec<ffi::KernelArgument> =
            arguments.iter().map(|raw| argument(raw, local)).collect();
        if let (Some(markers), true) = (&self.markers, wait_for.is_empty()) {
            ffi::launch_without_event(
                &self.queue,
                &kernel.kernel,
                launch.global(),
                shim_local(launch),
                &arguments,
            )
            .map_err(backend_error)?;
            let sequence = markers.submitted.fetch_add(1, Ordering::AcqRel) + 1;
            return Ok(Submitted::Sequence(sequence));
        }
        let waits = event_addresses(wait_for)?;
        let event = ffi::launch(
            &self.queue,
            &kernel.kernel,
            launch.global(),
            shim_local(launch),
            &arguments,
            &waits,
        )
        .map_err(backend_error)?;
        Ok(Submitted::Event(self.event(event)))
    }

    fn synchronize(&self) -> Result<()> {
        ffi::wait(&self.queue).map_err(backend_error)
    }

    fn event_after(&self, sequence: u64) -> Result<Arc<dyn EventBackend>> {
        let markers = self
            .markers
            .as_ref()
            .ok_or_else(|| RuntimeError::Unsupported {
                backend: BackendKind::Sycl,
                what: "events for numbered submissions on a profiled or out-of-order queue".into(),
            })?;
        Ok(Arc::new(SyclEvent::Lazy {
            markers: Arc::clone(markers),
            sequence,
            marker: OnceLock::new(),
        }))
    }

    fn foreign_sycl_event(&self, address: u64) -> Result<Arc<dyn EventBackend>> {
        let event = ffi::event_from_native(&self.queue, address).map_err(backend_error)?;
        Ok(Arc::new(SyclEvent::Recorded {
            event,
            profiled: false,
            _queue: Arc::clone(&self.queue),
        }))
    }
}

struct SyclModule {
    program: cxx::UniquePtr<ffi::Program>,
    /// A bundle from a SYCLBIN finds kernels by kernel name (`ext_oneapi_get_kernel` adds
    /// the `__sycl_kernel_` prefix itself); one built from SPIR-V by entry point.
    by_kernel_name: bool,
    /// How the image's launch-sized local arrays are passed.
    local_arguments: LocalArguments,
    _queue: QueueHandle,
}

impl ModuleBackend for SyclModule {
    fn kernel(self: Arc<Self>, name: &str, entry_point: &str) -> Result<Box<dyn KernelBackend>> {
        let lookup = if self.by_kernel_name {
            name
        } else {
            entry_point
        };
        let kernel = ffi::program_kernel(&self.program, lookup).map_err(backend_error)?;
        Ok(Box::new(SyclKernel {
            kernel,
            _module: self,
        }))
    }
}

struct SyclKernel {
    kernel: cxx::UniquePtr<ffi::Kernel>,
    _module: Arc<SyclModule>,
}

impl KernelBackend for SyclKernel {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn sycl_kernel_address(&self) -> Result<Option<u64>> {
        let native = ffi::kernel_native(&self.kernel).map_err(backend_error)?;
        Ok(Some(native))
    }

    fn local_argument_granule(&self) -> u64 {
        self._module.local_arguments.granule()
    }
}

/// A plain C++ `sycl::queue` (in order) on the SYCL device found at `locator`, made as a C++
/// SYCL program makes one; its address for [`crate::Device::from_sycl_queue`].
pub(crate) fn new_native_queue(locator: usize) -> Result<u64> {
    ffi::load_runtime().map_err(backend_error)?;
    ffi::new_native_queue(locator).map_err(backend_error)
}

/// Deletes a queue made by [`new_native_queue`].
pub(crate) fn delete_native_queue(queue: u64) {
    ffi::delete_native_queue(queue);
}

/// The C++ event refers to its queue, so it keeps the queue alive; `event` drops first.
enum SyclEvent {
    /// The event SYCL made for the submission.
    Recorded {
        event: cxx::UniquePtr<ffi::Event>,
        profiled: bool,
        _queue: QueueHandle,
    },
    /// A launch without an event: a marker submitted at or after it, made the first time
    /// someone waits for, queries or depends on it.
    Lazy {
        markers: Arc<MarkerState>,
        sequence: u64,
        marker: OnceLock<Arc<Marker>>,
    },
}

impl SyclEvent {
    /// The SYCL event whose completion means the submission finished.
    fn completion(&self) -> Result<&cxx::UniquePtr<ffi::Event>> {
        match self {
            SyclEvent::Recorded { event, .. } => Ok(event),
            SyclEvent::Lazy {
                markers,
                sequence,
                marker,
            } => {
                if marker.get().is_none() {
                    let made = markers.marker_covering(*sequence)?;
                    let _ = marker.set(made);
                }
                Ok(&marker.get().expect("set above").event)
            }
        }
    }

    fn address(&self) -> Result<u64> {
        Ok(self
            .completion()?
            .as_ref()
            .map_or(0, |event| event as *const ffi::Event as u64))
    }
}

impl EventBackend for SyclEvent {
    fn wait(&self) -> Result<()> {
        ffi::event_wait(self.completion()?).map_err(backend_error)
    }

    fn is_complete(&self) -> Result<bool> {
        ffi::event_is_complete(self.completion()?).map_err(backend_error)
    }

    fn elapsed_ns(&self) -> Result<u64> {
        match self {
            SyclEvent::Recorded {
                event,
                profiled: true,
                ..
            } => ffi::event_elapsed_ns(event).map_err(backend_error),
            _ => Err(RuntimeError::ProfilingDisabled),
        }
    }

    fn sycl_event_address(&self) -> Result<Option<u64>> {
        let native = ffi::event_native(self.completion()?).map_err(backend_error)?;
        Ok(Some(native))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn description(backend: &str, version: &str, supports_spirv: bool) -> ffi::DeviceDescription {
        ffi::DeviceDescription {
            index: 0,
            name: "test".into(),
            vendor: "test".into(),
            driver_version: "1".into(),
            device_version: version.into(),
            backend: backend.into(),
            device_type: "gpu".into(),
            global_memory_bytes: 1,
            local_memory_bytes: 1,
            compute_units: 1,
            max_work_group_size: 1,
            supports_spirv,
            sub_group_sizes: vec![32],
        }
    }

    #[test]
    fn sycl_devices_take_spirv_or_the_native_image_of_their_backend() {
        assert_eq!(
            sycl_device_target(&description("opencl", "OpenCL 3.0", true)),
            Some(DeviceTarget::Spirv)
        );
        assert_eq!(
            sycl_device_target(&description("level_zero", "1.6", true)),
            Some(DeviceTarget::Spirv)
        );
        assert_eq!(
            sycl_device_target(&description("opencl", "OpenCL 1.2", false)),
            None
        );
    }

    /// What the Unified Runtime CUDA adapter reports for an H200: version `9.0`, and SPIR-V
    /// support claimed (seen on the H200 with the wheel's libsycl).
    #[test]
    fn sycl_cuda_devices_take_ptx_even_when_they_claim_spirv() {
        for supports_spirv in [true, false] {
            assert_eq!(
                sycl_device_target(&description("cuda", "9.0", supports_spirv)),
                Some(DeviceTarget::Ptx { major: 9, minor: 0 })
            );
        }
        assert_eq!(
            sycl_device_target(&description("cuda", "12.0", true)),
            Some(DeviceTarget::Ptx {
                major: 12,
                minor: 0
            })
        );
        assert_eq!(
            sycl_device_target(&description("cuda", "garbage", true)),
            None
        );
    }

    /// What the Unified Runtime HIP adapter reports: `hipDeviceProp_t::gcnArchName` as the
    /// version (unified-runtime source/adapters/hip/device.cpp, UR_DEVICE_INFO_VERSION).
    #[test]
    fn sycl_hip_devices_take_the_amdgpu_image_of_their_processor() {
        for (version, supports_spirv) in [("gfx90a:sramecc+:xnack-", true), ("gfx1100", false)] {
            assert_eq!(
                sycl_device_target(&description("hip", version, supports_spirv)),
                Some(DeviceTarget::Amdgpu {
                    arch: version.into()
                })
            );
        }
        assert_eq!(sycl_device_target(&description("hip", "9.0", true)), None);
    }

    /// From the adapter's description to the image: a bundle compiled for the default targets
    /// plus a generic AMD family gives each SYCL device the image its driver runs.
    #[test]
    fn sycl_devices_get_the_image_of_their_backend_from_a_bundle() {
        let image = |target, arch: &str| Image {
            target,
            arch: arch.into(),
            bytes: Vec::new(),
            matrix_units: false,
            matrix_groups: false,
            tile_sub_group_size: None,
            tensor_maps: Vec::new(),
        };
        let bundle = Bundle {
            source_name: "k.krn".into(),
            kernels: Vec::new(),
            constants: Vec::new(),
            images: vec![
                image(TargetKind::Spirv, ""),
                image(TargetKind::Ptx, "sm_75"),
                image(TargetKind::Ptx, "sm_90"),
                image(TargetKind::Amdgpu, "gfx90a"),
                image(TargetKind::Amdgpu, "gfx11-generic"),
            ],
            entry_point_prefix: String::new(),
        };
        for (backend, version, chosen) in [
            ("opencl", "OpenCL 3.0", "spirv"),
            ("cuda", "9.0", "ptx:sm_90"),
            ("cuda", "8.6", "ptx:sm_75"),
            ("hip", "gfx90a:sramecc+:xnack-", "amdgpu:gfx90a"),
            ("hip", "gfx1101", "amdgpu:gfx11-generic"),
        ] {
            let target = sycl_device_target(&description(backend, version, true)).unwrap();
            let image = crate::image::select_image(&bundle, &target).unwrap();
            assert_eq!(image.describe(), chosen, "{backend} {version}");
        }
    }

    #[test]
    fn launch_sized_arrays_are_local_arguments_padded_for_native_images() {
        let local = |bytes| RawArgument::Local { offset: 48, bytes };
        let spirv = argument(&local(200), LocalArguments::of(TargetKind::Spirv));
        assert_eq!((spirv.kind, spirv.bits), (13, 200));
        for target in [TargetKind::Ptx, TargetKind::Amdgpu] {
            let padding = LocalArguments::of(target);
            for (bytes, padded) in [(1, 128), (128, 128), (200, 256), (65536, 65536)] {
                let native = argument(&local(bytes), padding);
                assert_eq!(
                    (native.kind, native.bits),
                    (13, padded),
                    "{target:?} {bytes}"
                );
            }
        }
        let scalar = argument(
            &RawArgument::Scalar(ScalarValue::U32(5)),
            LocalArguments::PaddedTo128,
        );
        assert_eq!((scalar.kind, scalar.bits), (7, 5));
    }

    /// The offsets SYCL's CUDA and HIP adapters give local arguments of these sizes, one after
    /// the other, each at a multiple of min(128, its size) (unified-runtime eb58ab8,
    /// `calcAlignedLocalArgument` in `source/adapters/cuda/kernel.hpp`).
    fn adapter_offsets(sizes: &[u64]) -> Vec<u64> {
        let mut end = 0u64;
        sizes
            .iter()
            .map(|&size| {
                let offset = end.next_multiple_of(size.min(128));
                end = offset + size;
                offset
            })
            .collect()
    }

    #[test]
    fn padded_local_arguments_start_128_byte_aligned_where_the_adapter_puts_them() {
        // Unpadded, a 40-byte array after a 3-byte one would start at byte 40.
        assert_eq!(adapter_offsets(&[3, 40]), [0, 40]);
        let padding = LocalArguments::of(TargetKind::Ptx);
        for bytes in [[3, 40, 200], [1, 65536, 24], [128, 129, 4]] {
            let padded: Vec<u64> = bytes.iter().map(|&b| padding.bytes(b)).collect();
            let offsets = adapter_offsets(&padded);
            assert!(
                offsets.iter().all(|o| o % 128 == 0),
                "{bytes:?}: {offsets:?}"
            );
        }
    }
}
