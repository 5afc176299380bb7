//! Loaded programs, their kernels, launches and events.

use crate::args::{check_arguments, Argument, ArgumentKind};
use crate::backend::{EventBackend, KernelBackend, ModuleBackend, RawArgument};
use crate::device::Device;
use crate::error::{Result, RuntimeError};
use crate::launch::{check_launch, Launch};
use kdsl_bundle::{Bundle, KernelInfo};
use std::fmt;
use std::sync::Arc;

/// A bundle's image loaded on one device instance.
pub struct Program {
    device: Device,
    source_name: String,
    image: String,
    kernels: Vec<KernelInfo>,
    module: Arc<dyn ModuleBackend>,
}

impl fmt::Debug for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Program")
            .field("source", &self.source_name)
            .field("image", &self.image)
            .field("device", &self.device.label())
            .finish()
    }
}

impl Program {
    pub(crate) fn new(
        device: Device,
        bundle: &Bundle,
        image: String,
        module: Arc<dyn ModuleBackend>,
    ) -> Program {
        Program {
            device,
            source_name: bundle.source_name.clone(),
            image,
            kernels: bundle.kernels.clone(),
            module,
        }
    }

    /// The image that was loaded: `spirv`, `ptx:sm_90`, `amdgpu:gfx90a`.
    pub fn image(&self) -> &str {
        &self.image
    }

    pub fn device(&self) -> &Device {
        &self.device
    }

    pub fn kernel_names(&self) -> Vec<String> {
        self.kernels.iter().map(|k| k.name.clone()).collect()
    }

    /// The kernel named `name`; an error listing the bundle's kernels if there is none.
    pub fn kernel(&self, name: &str) -> Result<Kernel> {
        let info = self
            .kernels
            .iter()
            .find(|k| k.name == name)
            .ok_or_else(|| RuntimeError::KernelNotFound {
                name: name.to_string(),
                available: self.kernel_names(),
            })?;
        let backend = Arc::clone(&self.module).kernel(name)?;
        Ok(Kernel {
            device: self.device.clone(),
            info: info.clone(),
            backend,
        })
    }
}

/// One kernel of a loaded program, ready to launch.
pub struct Kernel {
    device: Device,
    info: KernelInfo,
    backend: Box<dyn KernelBackend>,
}

impl fmt::Debug for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Kernel")
            .field("name", &self.info.name)
            .field("device", &self.device.label())
            .finish()
    }
}

impl Kernel {
    pub fn name(&self) -> &str {
        &self.info.name
    }

    /// The kernel's metadata from the bundle: its parameters and local memory.
    pub fn info(&self) -> &KernelInfo {
        &self.info
    }

    /// Checks the arguments and the launch against the kernel's metadata and the device's
    /// limits, then submits the launch. A misuse error leaves the queue untouched.
    pub fn launch(&self, launch: &Launch, arguments: &[Argument<'_>]) -> Result<Event> {
        let device = &self.device.inner;
        check_arguments(&self.info, device.instance, &device.label, arguments)?;
        check_launch(&self.info, launch, &device.info.limits)?;
        let raw: Vec<RawArgument> = arguments
            .iter()
            .map(|argument| match argument.kind {
                ArgumentKind::Buffer(facts) => RawArgument::Pointer(facts.address),
                ArgumentKind::Scalar(value) => RawArgument::Scalar(value),
            })
            .collect();
        let backend = self.backend.launch(launch, &raw)?;
        Ok(Event { backend })
    }
}

/// A submitted launch.
pub struct Event {
    backend: Box<dyn EventBackend>,
}

impl fmt::Debug for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Event")
    }
}

impl Event {
    /// Waits for the launch to finish; reports errors the device raised while running it.
    pub fn wait(&self) -> Result<()> {
        self.backend.wait()
    }

    /// Waits, then returns the kernel's execution time in nanoseconds as the device measured it
    /// (SYCL profiling command start/end; CUDA/HIP events recorded around the launch).
    /// Profiling is always on.
    pub fn elapsed_ns(&self) -> Result<u64> {
        self.backend.elapsed_ns()
    }
}
