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

use super::{DeviceBackend, EventBackend, KernelBackend, ModuleBackend, RawArgument};
use crate::args::ScalarValue;
use crate::buffer::MemoryKind;
use crate::device::{BackendKind, DeviceInfo, DeviceTarget, DeviceType};
use crate::error::{Result, RuntimeError};
use crate::launch::{DeviceLimits, Launch};
use kdsl_bundle::Image;
use std::sync::Arc;

#[cxx::bridge(namespace = "kdsl_sycl")]
mod ffi {
    struct DeviceDescription {
        index: usize,
        name: String,
        vendor: String,
        driver_version: String,
        backend: String,
        device_type: String,
        global_memory_bytes: u64,
        local_memory_bytes: u64,
        compute_units: u32,
        max_work_group_size: u64,
        supports_spirv: bool,
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
        fn build_program(queue: &Queue, spirv: &[u8]) -> Result<UniquePtr<Program>>;
        fn program_kernel(program: &Program, name: &str) -> Result<UniquePtr<Kernel>>;
        fn allocate(queue: &Queue, bytes: usize, kind: u8) -> Result<u64>;
        fn release(queue: &Queue, address: u64) -> Result<()>;
        fn copy_to_device(queue: &Queue, address: u64, data: &[u8]) -> Result<()>;
        fn copy_from_device(queue: &Queue, address: u64, data: &mut [u8]) -> Result<()>;
        fn fill(queue: &Queue, address: u64, pattern: &[u8], count: usize) -> Result<()>;
        fn wait(queue: &Queue) -> Result<()>;
        fn launch(
            queue: &Queue,
            kernel: &Kernel,
            global: &[u64],
            local: &[u64],
            arguments: &[KernelArgument],
        ) -> Result<UniquePtr<Event>>;
        fn event_wait(event: &Event) -> Result<()>;
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

/// Lists the SYCL devices that can build SPIR-V (OpenCL and Level Zero devices).
pub(crate) fn discover() -> (Vec<DeviceInfo>, Option<String>) {
    if let Err(error) = ffi::load_runtime() {
        return (
            Vec::new(),
            Some(format!(
                "SYCL: the SYCL runtime could not be loaded: {}; run `bash scripts/setup.sh` to \
                 install it, or set KDSL_SYCL_SHIM to the path of libkdsl_sycl_shim.so",
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
        if !description.supports_spirv {
            continue;
        }
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
            target: DeviceTarget::Spirv,
            limits: DeviceLimits {
                max_work_group_size: description.max_work_group_size,
                max_local: [description.max_work_group_size; 3],
                max_groups: [u64::MAX; 3],
                local_memory_bytes: description.local_memory_bytes,
            },
            locator: description.index,
        });
    }
    let note = devices.is_empty().then(|| {
        let icd = std::env::var("OCL_ICD_FILENAMES").unwrap_or_default();
        if total > 0 {
            format!("SYCL: {total} devices found, none of them can build SPIR-V")
        } else if icd.is_empty() {
            "SYCL: no devices found and OCL_ICD_FILENAMES is unset (the OpenCL CPU runtime's ICD file names a placeholder path, so nothing is found without it)".to_string()
        } else {
            format!("SYCL: no devices found (OCL_ICD_FILENAMES={icd})")
        }
    });
    (devices, note)
}

struct SyclDevice {
    queue: Arc<cxx::UniquePtr<ffi::Queue>>,
}

pub(crate) fn open(info: &DeviceInfo) -> Result<Box<dyn DeviceBackend>> {
    let queue = ffi::create_queue(info.locator).map_err(backend_error)?;
    Ok(Box::new(SyclDevice {
        queue: Arc::new(queue),
    }))
}

fn memory_kind_code(kind: MemoryKind) -> u8 {
    match kind {
        MemoryKind::Device => 0,
        MemoryKind::Shared => 1,
        MemoryKind::Host => 2,
    }
}

/// The shim's argument kind codes (`ArgumentKind` in kdsl_sycl.cpp).
fn argument(raw: &RawArgument) -> ffi::KernelArgument {
    let (kind, bits) = match *raw {
        RawArgument::Pointer(address) => (0, address),
        RawArgument::Scalar(value) => {
            let kind = match value {
                ScalarValue::Bool(_) => 1,
                ScalarValue::I8(_) => 2,
                ScalarValue::U8(_) => 3,
                ScalarValue::I16(_) => 4,
                ScalarValue::U16(_) => 5,
                ScalarValue::I32(_) => 6,
                ScalarValue::U32(_) => 7,
                ScalarValue::I64(_) => 8,
                ScalarValue::U64(_) => 9,
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
        ffi::allocate(&self.queue, bytes, memory_kind_code(kind)).map_err(|error| {
            RuntimeError::OutOfMemory {
                bytes: bytes as u64,
                message: error.what().to_string(),
            }
        })
    }

    fn free(&self, address: u64, _kind: MemoryKind) {
        // Nothing can be reported from Drop; a failure here leaks the allocation.
        let _ = ffi::release(&self.queue, address);
    }

    fn write(&self, address: u64, data: &[u8]) -> Result<()> {
        ffi::copy_to_device(&self.queue, address, data).map_err(backend_error)
    }

    fn read(&self, address: u64, data: &mut [u8]) -> Result<()> {
        ffi::copy_from_device(&self.queue, address, data).map_err(backend_error)
    }

    fn fill(&self, address: u64, pattern: &[u8], count: usize) -> Result<()> {
        ffi::fill(&self.queue, address, pattern, count).map_err(backend_error)
    }

    fn synchronize(&self) -> Result<()> {
        ffi::wait(&self.queue).map_err(backend_error)
    }

    fn load(&self, image: &Image) -> Result<Arc<dyn ModuleBackend>> {
        let program = ffi::build_program(&self.queue, &image.bytes).map_err(backend_error)?;
        Ok(Arc::new(SyclModule {
            program,
            queue: Arc::clone(&self.queue),
        }))
    }
}

struct SyclModule {
    program: cxx::UniquePtr<ffi::Program>,
    queue: Arc<cxx::UniquePtr<ffi::Queue>>,
}

impl ModuleBackend for SyclModule {
    fn kernel(self: Arc<Self>, name: &str) -> Result<Box<dyn KernelBackend>> {
        let kernel = ffi::program_kernel(&self.program, name).map_err(backend_error)?;
        Ok(Box::new(SyclKernel {
            kernel,
            module: self,
        }))
    }
}

struct SyclKernel {
    kernel: cxx::UniquePtr<ffi::Kernel>,
    module: Arc<SyclModule>,
}

impl KernelBackend for SyclKernel {
    fn launch(&self, launch: &Launch, arguments: &[RawArgument]) -> Result<Box<dyn EventBackend>> {
        let arguments: Vec<ffi::KernelArgument> = arguments.iter().map(argument).collect();
        let queue = Arc::clone(&self.module.queue);
        let event = ffi::launch(
            &queue,
            &self.kernel,
            launch.global(),
            launch.local(),
            &arguments,
        )
        .map_err(backend_error)?;
        Ok(Box::new(SyclEvent {
            event,
            _queue: queue,
        }))
    }
}

/// The C++ event refers to its queue, so it keeps the queue alive; `event` drops first.
struct SyclEvent {
    event: cxx::UniquePtr<ffi::Event>,
    _queue: Arc<cxx::UniquePtr<ffi::Queue>>,
}

impl EventBackend for SyclEvent {
    fn wait(&self) -> Result<()> {
        ffi::event_wait(&self.event).map_err(backend_error)
    }

    fn elapsed_ns(&self) -> Result<u64> {
        ffi::event_elapsed_ns(&self.event).map_err(backend_error)
    }
}
