//! Device discovery and the `Device` handle.

use crate::backend::{self, DeviceBackend, QueueBackend};
use crate::buffer::{AnyBuffer, Buffer, MemoryKind};
use crate::element::Element;
use crate::error::{Result, RuntimeError};
use crate::filter::DeviceFilter;
use crate::image::select_image;
use crate::image_check::check_image;
use crate::launch::DeviceLimits;
use crate::memory::Retirement;
use crate::program::Program;
use crate::queue::Queue;
use kdsl_bundle::Bundle;
use kdsl_ir::ScalarType;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

/// The driver API a device is reached through.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BackendKind {
    /// The Intel SYCL runtime (OpenCL or Level Zero underneath), fed SPIR-V.
    Sycl,
    /// The CUDA driver API, fed PTX.
    Cuda,
    /// The HIP runtime's module API, fed AMDGPU code objects.
    Hip,
}

impl BackendKind {
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Sycl => "sycl",
            BackendKind::Cuda => "cuda",
            BackendKind::Hip => "hip",
        }
    }
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BackendKind::Sycl => "SYCL",
            BackendKind::Cuda => "CUDA",
            BackendKind::Hip => "HIP",
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceType {
    Gpu,
    Cpu,
    Accelerator,
    Other,
}

/// The kind of image a device takes from a bundle.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DeviceTarget {
    /// A SYCL device that builds SPIR-V: plain SPIR-V images only.
    Spirv,
    /// An Intel GPU with matrix engines (`family` from
    /// [`kdsl_bundle::processors::intel_gpu_family`]): its SPIR-V image where the bundle has
    /// one (`spirv:intel_gpu_pvc`), else the plain one.
    IntelGpu { family: String },
    /// A CUDA device of compute capability `major.minor`.
    Ptx { major: u32, minor: u32 },
    /// An AMD GPU; `arch` as the driver reports it, such as `gfx90a:sramecc+:xnack-`.
    Amdgpu { arch: String },
}

impl DeviceTarget {
    /// Whether the device takes SPIR-V images (plain, or also an Intel GPU's).
    pub fn takes_spirv(&self) -> bool {
        matches!(self, DeviceTarget::Spirv | DeviceTarget::IntelGpu { .. })
    }

    /// What the device needs from a bundle, for messages.
    pub fn requirement(&self) -> String {
        match self {
            DeviceTarget::Spirv => "spirv".to_string(),
            DeviceTarget::IntelGpu { family } => format!("spirv:{family}* or spirv"),
            DeviceTarget::Ptx { major, minor } => {
                format!("ptx:sm_{major}{minor} or a lower sm_XX")
            }
            DeviceTarget::Amdgpu { arch } => {
                let processor = arch.split(':').next().unwrap_or_default();
                match crate::image::amdgpu_generic_for(processor) {
                    Some(generic) => format!("amdgpu:{processor} or amdgpu:{generic}"),
                    None => format!("amdgpu:{processor}"),
                }
            }
        }
    }
}

impl fmt::Display for DeviceTarget {
    /// `spirv`, `ptx:sm_90`, `amdgpu:gfx90a` — the bundle image name the device takes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceTarget::Spirv => f.write_str("spirv"),
            DeviceTarget::IntelGpu { family } => write!(f, "spirv:{family}"),
            DeviceTarget::Ptx { major, minor } => write!(f, "ptx:sm_{major}{minor}"),
            DeviceTarget::Amdgpu { arch } => {
                write!(f, "amdgpu:{}", arch.split(':').next().unwrap_or_default())
            }
        }
    }
}

/// What discovery found out about a device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    pub backend: BackendKind,
    /// For SYCL devices the SYCL backend underneath (`opencl`, `level_zero`); otherwise
    /// the same as `backend` (`cuda`, `hip`).
    pub platform_backend: String,
    /// The device's position among the devices of its backend; `id()` is `backend:index`.
    pub index: usize,
    pub name: String,
    pub vendor: String,
    pub driver_version: String,
    pub device_type: DeviceType,
    pub global_memory_bytes: u64,
    pub local_memory_bytes: u64,
    pub compute_units: u32,
    pub max_work_group_size: u64,
    /// The sub-group sizes the device supports (CUDA: the warp size; HIP: the wavefront size).
    pub sub_group_sizes: Vec<u32>,
    pub target: DeviceTarget,
    pub(crate) limits: DeviceLimits,
    /// The backend's own handle for the device: the SYCL device list position or the ordinal.
    pub(crate) locator: usize,
}

impl DeviceInfo {
    /// `sycl:0`, `cuda:1`, `hip:0` — a filter string that selects exactly this device.
    pub fn id(&self) -> String {
        format!("{}:{}", self.backend.name(), self.index)
    }

    /// The local memory one work-group may have when part of it is sized at launch
    /// (`local mut [T]` parameters): [`DeviceInfo::local_memory_bytes`], except on CUDA, where
    /// dynamic shared memory may go up to the opt-in maximum (227 KiB on an H100 or H200).
    pub fn launch_sized_local_memory_bytes(&self) -> u64 {
        self.limits.dynamic_local_memory_bytes
    }
}

impl fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({}, {:?}, {}, {} compute units, {} MiB, sub-groups of {}, takes {})",
            self.id(),
            self.name,
            self.device_type,
            self.platform_backend,
            self.compute_units,
            self.global_memory_bytes >> 20,
            self.sub_group_sizes
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join("/"),
            self.target
        )
    }
}

/// The result of looking for devices: what was found, and why each backend found nothing.
#[derive(Clone, Debug, Default)]
pub struct DeviceReport {
    pub devices: Vec<DeviceInfo>,
    /// One line per backend that found no device or failed, saying why.
    pub notes: Vec<String>,
}

impl DeviceReport {
    /// The devices `filter` (as `KDSL_DEVICE` takes it, such as `cuda` or `sycl:cpu`) selects,
    /// or every device found for `None` or a blank filter; for test and tool runs that let an
    /// environment variable choose. A filter that does not parse is an error.
    pub fn select(&self, filter: Option<&str>) -> Result<Vec<DeviceInfo>> {
        match filter {
            Some(filter) if !filter.trim().is_empty() => Ok(DeviceFilter::parse(filter)?
                .matching(&self.devices)
                .into_iter()
                .cloned()
                .collect()),
            _ => Ok(self.devices.clone()),
        }
    }

    /// An explanation for an empty device list.
    pub fn why_none(&self) -> String {
        let mut why = if self.notes.is_empty() {
            "no backend reported a device".to_string()
        } else {
            self.notes.join("; ")
        };
        why.push_str(
            ". For the Intel OpenCL CPU device, run `bash scripts/setup.sh` and make sure OCL_ICD_FILENAMES \
             names $KDSL_PREFIX/lib/libintelocl.so (`source scripts/env.sh` sets it; cargo sets it from .cargo/config.toml)",
        );
        why
    }
}

/// Looks for devices on every backend (once per process; later calls return the same report).
pub fn device_report() -> &'static DeviceReport {
    static REPORT: OnceLock<DeviceReport> = OnceLock::new();
    REPORT.get_or_init(|| {
        let mut report = DeviceReport::default();
        for (devices, note) in [
            backend::cuda::discover(),
            backend::hip::discover(),
            backend::discover_sycl(),
        ] {
            report.devices.extend(devices);
            report.notes.extend(note);
        }
        report
    })
}

/// Every device found, on every backend, in a stable order.
pub fn devices() -> Vec<DeviceInfo> {
    device_report().devices.clone()
}

fn preference(info: &DeviceInfo) -> u8 {
    match info.device_type {
        DeviceType::Gpu => 0,
        DeviceType::Accelerator => 1,
        DeviceType::Cpu => 2,
        DeviceType::Other => 3,
    }
}

/// A C++ `sycl::queue` made by [`Device::native_sycl_queue`]; deleted on drop (a device
/// adopting it keeps its own copy of the handle).
pub struct NativeSyclQueue {
    #[cfg_attr(not(feature = "sycl"), allow(dead_code))]
    address: u64,
}

impl NativeSyclQueue {
    /// The `sycl::queue *`, for [`Device::from_sycl_queue`].
    pub fn as_ptr(&self) -> *mut std::ffi::c_void {
        self.address as *mut std::ffi::c_void
    }
}

impl Drop for NativeSyclQueue {
    fn drop(&mut self) {
        #[cfg(feature = "sycl")]
        backend::sycl::delete_native_queue(self.address);
    }
}

/// A handle to one opened device: its queue (SYCL) or context and stream (CUDA, HIP).
///
/// Cloning is cheap and shares the queue. Each `Device::select` / `Device::open` call opens a
/// new instance with its own SYCL context (or CUDA/HIP stream); buffers belong to the instance
/// that allocated them and are rejected by kernels of any other instance.
#[derive(Clone)]
pub struct Device {
    pub(crate) inner: Arc<DeviceInner>,
}

pub(crate) struct DeviceInner {
    pub info: DeviceInfo,
    pub instance: u64,
    pub label: String,
    pub backend: Box<dyn DeviceBackend>,
    pub default_queue: Arc<dyn QueueBackend>,
    pub default_queue_id: u64,
    /// Every further queue made on this instance, for `Device::synchronize`.
    pub queues: Mutex<Vec<Weak<dyn QueueBackend>>>,
    pub retirement: Retirement,
}

impl Drop for DeviceInner {
    fn drop(&mut self) {
        // Nothing uses the device any more (buffers, queues and events hold it), but retired
        // memory may still wait for its work.
        self.drain_retired();
    }
}

fn next_queue_id() -> u64 {
    static NEXT_QUEUE: AtomicU64 = AtomicU64::new(1);
    NEXT_QUEUE.fetch_add(1, Ordering::Relaxed)
}

fn find_device(backend: BackendKind, locator: usize) -> Result<DeviceInfo> {
    device_report()
        .devices
        .iter()
        .find(|info| info.backend == backend && info.locator == locator)
        .cloned()
        .ok_or_else(|| RuntimeError::BadForeignObject {
            what: format!(
                "the {backend} device {locator} the foreign object belongs to is not among the devices kdsl found ({})",
                device_report()
                    .devices
                    .iter()
                    .map(|d| d.id())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        })
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Device")
            .field("id", &self.inner.info.id())
            .field("name", &self.inner.info.name)
            .field("instance", &self.inner.instance)
            .finish()
    }
}

impl Device {
    /// Opens the device named by `KDSL_DEVICE` if set (a filter string), otherwise the best
    /// device found: a GPU before an accelerator before a CPU.
    #[allow(clippy::should_implement_trait)]
    pub fn default() -> Result<Device> {
        if let Ok(filter) = std::env::var("KDSL_DEVICE") {
            if !filter.trim().is_empty() {
                return Device::select(&filter);
            }
        }
        let report = device_report();
        let best = report
            .devices
            .iter()
            .min_by_key(|info| preference(info))
            .ok_or_else(|| RuntimeError::NoDevice {
                why: report.why_none(),
            })?;
        Device::open(best)
    }

    /// Opens the first device that matches a filter string such as `cuda:0`, `sycl:cpu`,
    /// `opencl:cpu`, `hip:0`, `gpu` or `cuda:0,sycl:cpu` (syntax in [`crate::filter`]).
    pub fn select(filter: &str) -> Result<Device> {
        let parsed = DeviceFilter::parse(filter)?;
        let report = device_report();
        if report.devices.is_empty() {
            return Err(RuntimeError::NoDevice {
                why: report.why_none(),
            });
        }
        match parsed.matching(&report.devices).first() {
            Some(info) => Device::open(info),
            None => Err(RuntimeError::NoMatchingDevice {
                filter: filter.to_string(),
                available: report
                    .devices
                    .iter()
                    .map(|d| format!("{} ({})", d.id(), d.name))
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        }
    }

    /// Opens a new instance of a discovered device, with its own queue (SYCL: its own context).
    pub fn open(info: &DeviceInfo) -> Result<Device> {
        Ok(Device::from_backend(info.clone(), backend::open(info)?))
    }

    pub(crate) fn from_backend(info: DeviceInfo, backend: Box<dyn DeviceBackend>) -> Device {
        static NEXT_INSTANCE: AtomicU64 = AtomicU64::new(1);
        let instance = NEXT_INSTANCE.fetch_add(1, Ordering::Relaxed);
        Device {
            inner: Arc::new(DeviceInner {
                label: format!("{} instance {instance}", info.id()),
                info,
                instance,
                default_queue: backend.default_queue(),
                default_queue_id: next_queue_id(),
                backend,
                queues: Mutex::new(Vec::new()),
                retirement: Retirement::default(),
            }),
        }
    }

    /// Adopts a SYCL queue another library created in this process (dpctl's `SyclQueue`
    /// capsule "SyclQueueRef" holds one) as a new device instance whose default queue is that
    /// queue, in its context: buffers, programs and launches of this instance live there, so
    /// USM memory of that context can be borrowed ([`AnyBuffer::borrowed`]) without copies.
    /// On an out-of-order queue kdsl chains its own submissions in order. Profiling timings
    /// need a queue created with profiling enabled.
    ///
    /// # Safety
    /// `queue` must point to a live `sycl::queue` of the same libsycl that kdsl's SYCL shim
    /// loaded (the process's one libsycl); kdsl copies the handle, so the caller may release
    /// its own afterwards.
    #[cfg_attr(not(feature = "sycl"), allow(unused_variables))]
    pub unsafe fn from_sycl_queue(queue: *mut std::ffi::c_void) -> Result<Device> {
        #[cfg(feature = "sycl")]
        {
            // SAFETY: forwarded to the caller.
            let (backend, locator) = unsafe { backend::sycl::adopt(queue) }?;
            Ok(Device::from_backend(
                find_device(BackendKind::Sycl, locator)?,
                backend,
            ))
        }
        #[cfg(not(feature = "sycl"))]
        Err(backend::no_sycl_backend())
    }

    /// A plain in-order C++ `sycl::queue` on the SYCL device `info` describes, made the way a C++
    /// SYCL program makes one, for adopting with [`Device::from_sycl_queue`] (tests and
    /// examples of interoperability without a C++ compiler at hand).
    pub fn native_sycl_queue(info: &DeviceInfo) -> Result<NativeSyclQueue> {
        if info.backend != BackendKind::Sycl {
            return Err(RuntimeError::Unsupported {
                backend: info.backend,
                what: "making a sycl::queue (only SYCL devices have one)".into(),
            });
        }
        #[cfg(feature = "sycl")]
        {
            Ok(NativeSyclQueue {
                address: backend::sycl::new_native_queue(info.locator)?,
            })
        }
        #[cfg(not(feature = "sycl"))]
        Err(backend::no_sycl_backend())
    }

    /// Adopts a CUDA stream of the primary context of device `ordinal` (the context CuPy,
    /// PyTorch and the CUDA runtime use) as a new device instance whose default queue is that
    /// stream. A null stream is the legacy default stream. Memory of that context can be
    /// borrowed with [`AnyBuffer::borrowed`].
    ///
    /// # Safety
    /// `stream` must be null or a live `CUstream` of that context, and stay alive as long as
    /// the returned device and everything made from it.
    pub unsafe fn from_cuda_stream(
        ordinal: usize,
        stream: *mut std::ffi::c_void,
    ) -> Result<Device> {
        // SAFETY: forwarded to the caller.
        unsafe { Device::from_cuda_stream_with_profiling(ordinal, stream, true) }
    }

    /// [`Device::from_cuda_stream`], choosing whether the default queue times its launches:
    /// a profiled queue records an event pair around each submission (`Event::elapsed_ns`
    /// works), an unprofiled one only a completion marker when something waits, which makes a
    /// launch cost about what a bare `cuLaunchKernel` does.
    ///
    /// # Safety
    /// As for [`Device::from_cuda_stream`].
    pub unsafe fn from_cuda_stream_with_profiling(
        ordinal: usize,
        stream: *mut std::ffi::c_void,
        profiled: bool,
    ) -> Result<Device> {
        let info = find_device(BackendKind::Cuda, ordinal)?;
        // SAFETY: forwarded to the caller.
        let backend = unsafe { backend::cuda::adopt_stream(&info, stream, profiled) }?;
        Ok(Device::from_backend(info, backend))
    }

    /// Adopts a HIP stream of device `ordinal` (null: its null stream) as a new device instance
    /// whose default queue is that stream. Never run on hardware.
    ///
    /// # Safety
    /// `stream` must be null or a live `hipStream_t` of that device, and stay alive as long as
    /// the returned device and everything made from it.
    pub unsafe fn from_hip_stream(ordinal: usize, stream: *mut std::ffi::c_void) -> Result<Device> {
        let info = find_device(BackendKind::Hip, ordinal)?;
        // SAFETY: forwarded to the caller.
        let backend = unsafe { backend::hip::adopt_stream(&info, stream) }?;
        Ok(Device::from_backend(info, backend))
    }

    /// The queue plain calls (`Kernel::launch`, `Buffer::write_from`, ...) use.
    pub fn default_queue(&self) -> Queue {
        Queue {
            device: self.clone(),
            id: self.inner.default_queue_id,
            backend: Arc::clone(&self.inner.default_queue),
        }
    }

    /// A new in-order queue (SYCL queue on the same context, CUDA or HIP stream) on this
    /// device instance, with profiling: every event has `elapsed_ns`. Buffers are shared
    /// between the instance's queues.
    pub fn queue(&self) -> Result<Queue> {
        self.new_queue(true)
    }

    /// Like [`Device::queue`], without profiling: events have no timings, and each submission
    /// costs less (on CUDA no events are recorded until someone waits for one; see
    /// docs/benchmarks.md for the launch overhead).
    pub fn queue_without_profiling(&self) -> Result<Queue> {
        self.new_queue(false)
    }

    fn new_queue(&self, profiled: bool) -> Result<Queue> {
        let backend = self.inner.backend.new_queue(profiled)?;
        let mut queues = self
            .inner
            .queues
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        queues.retain(|queue| queue.strong_count() > 0);
        queues.push(Arc::downgrade(&backend));
        Ok(Queue {
            device: self.clone(),
            id: next_queue_id(),
            backend,
        })
    }

    pub fn info(&self) -> &DeviceInfo {
        &self.inner.info
    }

    /// `sycl:0 instance 3`: the device and which opened instance this is.
    pub fn label(&self) -> &str {
        &self.inner.label
    }

    /// True when both handles share one opened instance (and so may share buffers).
    pub fn same_instance(&self, other: &Device) -> bool {
        self.inner.instance == other.inner.instance
    }

    /// Loads a bundle's image for this device: SPIR-V for SYCL, the best PTX for CUDA, the
    /// matching (or generic) code object for HIP.
    pub fn load(&self, bundle: &Bundle) -> Result<Program> {
        let image = select_image(bundle, &self.inner.info.target)?;
        check_image(bundle, image)?;
        let module = self.inner.backend.load(bundle, image)?;
        Ok(Program::new(self.clone(), bundle, image, module))
    }

    /// An uninitialized device-memory buffer of `len` elements.
    pub fn alloc<T: Element>(&self, len: usize) -> Result<Buffer<T>> {
        Buffer::allocate(self, len, MemoryKind::Device)
    }

    /// A buffer of `len` elements in the given kind of memory.
    pub fn alloc_in<T: Element>(&self, len: usize, kind: MemoryKind) -> Result<Buffer<T>> {
        Buffer::allocate(self, len, kind)
    }

    /// An uninitialized buffer of `len` elements of a type chosen at run time.
    pub fn alloc_any(
        &self,
        element: ScalarType,
        len: usize,
        kind: MemoryKind,
    ) -> Result<AnyBuffer> {
        AnyBuffer::allocate(self, element, len, kind)
    }

    /// A device-memory buffer holding a copy of `data`.
    pub fn buffer_from<T: Element>(&self, data: &[T]) -> Result<Buffer<T>> {
        let mut buffer = Buffer::allocate(self, data.len(), MemoryKind::Device)?;
        buffer.write_from(data)?;
        Ok(buffer)
    }

    /// Waits until everything submitted to this device instance's queues has finished.
    pub fn synchronize(&self) -> Result<()> {
        self.inner.default_queue.synchronize()?;
        let queues: Vec<Arc<dyn QueueBackend>> = self
            .inner
            .queues
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .iter()
            .filter_map(Weak::upgrade)
            .collect();
        for queue in queues {
            queue.synchronize()?;
        }
        self.inner.collect_retired();
        Ok(())
    }
}

#[cfg(test)]
pub(crate) fn test_device(
    backend: BackendKind,
    platform_backend: &str,
    index: usize,
    device_type: DeviceType,
    target: DeviceTarget,
) -> DeviceInfo {
    DeviceInfo {
        backend,
        platform_backend: platform_backend.to_string(),
        index,
        name: format!("test device {index}"),
        vendor: "test".into(),
        driver_version: "1".into(),
        device_type,
        global_memory_bytes: 1 << 30,
        local_memory_bytes: 64 << 10,
        compute_units: 8,
        max_work_group_size: 1024,
        sub_group_sizes: vec![32],
        target,
        limits: DeviceLimits {
            max_work_group_size: 1024,
            max_local: [1024; 3],
            max_groups: [u64::MAX; 3],
            local_memory_bytes: 64 << 10,
            dynamic_local_memory_bytes: 64 << 10,
        },
        locator: index,
    }
}
