//! Device discovery and the `Device` handle.

use crate::backend::{self, DeviceBackend};
use crate::buffer::{Buffer, MemoryKind};
use crate::element::Element;
use crate::error::{Result, RuntimeError};
use crate::filter::DeviceFilter;
use crate::image::select_image;
use crate::launch::DeviceLimits;
use crate::program::Program;
use kdsl_bundle::Bundle;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

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
    Spirv,
    /// A CUDA device of compute capability `major.minor`.
    Ptx {
        major: u32,
        minor: u32,
    },
    /// An AMD GPU; `arch` as the driver reports it, such as `gfx90a:sramecc+:xnack-`.
    Amdgpu {
        arch: String,
    },
}

impl DeviceTarget {
    /// What the device needs from a bundle, for messages.
    pub fn requirement(&self) -> String {
        match self {
            DeviceTarget::Spirv => "spirv".to_string(),
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
}

impl fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({}, {:?}, {}, {} compute units, {} MiB, takes {})",
            self.id(),
            self.name,
            self.device_type,
            self.platform_backend,
            self.compute_units,
            self.global_memory_bytes >> 20,
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

    /// Opens a new instance of a discovered device.
    pub fn open(info: &DeviceInfo) -> Result<Device> {
        static NEXT_INSTANCE: AtomicU64 = AtomicU64::new(1);
        let backend = backend::open(info)?;
        let instance = NEXT_INSTANCE.fetch_add(1, Ordering::Relaxed);
        Ok(Device {
            inner: Arc::new(DeviceInner {
                label: format!("{} instance {instance}", info.id()),
                info: info.clone(),
                instance,
                backend,
            }),
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
        let module = self.inner.backend.load(image)?;
        Ok(Program::new(self.clone(), bundle, image.describe(), module))
    }

    /// An uninitialized device-memory buffer of `len` elements.
    pub fn alloc<T: Element>(&self, len: usize) -> Result<Buffer<T>> {
        Buffer::allocate(self, len, MemoryKind::Device)
    }

    /// A buffer of `len` elements in the given kind of memory.
    pub fn alloc_in<T: Element>(&self, len: usize, kind: MemoryKind) -> Result<Buffer<T>> {
        Buffer::allocate(self, len, kind)
    }

    /// A device-memory buffer holding a copy of `data`.
    pub fn buffer_from<T: Element>(&self, data: &[T]) -> Result<Buffer<T>> {
        let mut buffer = Buffer::allocate(self, data.len(), MemoryKind::Device)?;
        buffer.write_from(data)?;
        Ok(buffer)
    }

    /// Waits until everything submitted to this device instance has finished.
    pub fn synchronize(&self) -> Result<()> {
        self.inner.backend.synchronize()
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
        target,
        limits: DeviceLimits {
            max_work_group_size: 1024,
            max_local: [1024; 3],
            max_groups: [u64::MAX; 3],
            local_memory_bytes: 64 << 10,
        },
        locator: index,
    }
}
