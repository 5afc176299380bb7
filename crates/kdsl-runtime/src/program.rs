//! Loaded programs, their kernels, launches and events.

use crate::args::{Argument, ArgumentLayout};
use crate::backend::{EventBackend, KernelBackend, ModuleBackend, QueueBackend, Submitted};
use crate::device::Device;
use crate::error::{Result, RuntimeError};
use crate::fault::FaultCheck;
use crate::launch::Launch;
use crate::memory::Retired;
use crate::queue::{Queue, QueueRef};
use kdsl_bundle::{Bundle, KernelInfo};
use std::fmt;
use std::sync::{Arc, OnceLock};

/// A bundle's image loaded on one device instance.
pub struct Program {
    device: Device,
    source_name: String,
    image: String,
    kernels: Vec<KernelInfo>,
    entry_point_prefix: String,
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
            entry_point_prefix: bundle.entry_point_prefix.clone(),
            module,
        }
    }

    fn entry_point(&self, name: &str) -> String {
        format!("{}{name}", self.entry_point_prefix)
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
        let backend = Arc::clone(&self.module).kernel(name, &self.entry_point(name))?;
        Ok(Kernel {
            device: self.device.clone(),
            layout: ArgumentLayout::new(info),
            info: info.clone(),
            source_name: self.source_name.clone(),
            backend,
        })
    }
}

/// One kernel of a loaded program, ready to launch.
pub struct Kernel {
    pub(crate) device: Device,
    pub(crate) info: KernelInfo,
    /// The parameters as the per-launch checks compare them.
    pub(crate) layout: ArgumentLayout,
    /// The source file the bundle was compiled from, to name a checked kernel's faults.
    pub(crate) source_name: String,
    pub(crate) backend: Box<dyn KernelBackend>,
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

    pub fn device(&self) -> &Device {
        &self.device
    }

    /// For a kernel of a SYCL device: the `sycl::kernel` inside, valid while this kernel lives
    /// (for handing to another SYCL library, which copies it: dpctl's `SyclKernel_Make`). None
    /// on other backends.
    pub fn sycl_kernel(&self) -> Result<Option<*const std::ffi::c_void>> {
        Ok(self
            .backend
            .sycl_kernel_address()?
            .map(|address| address as *const std::ffi::c_void))
    }

    /// Checks the arguments and the launch against the kernel's metadata and the device's
    /// limits, then submits the launch to the device's default queue. Does not block; a misuse
    /// error submits nothing, so the queue stays usable.
    pub fn launch(&self, launch: &Launch, arguments: &[Argument<'_>]) -> Result<Event> {
        QueueRef::default_of(&self.device).launch(self, launch, arguments, &[])
    }

    /// Like [`Kernel::launch`], on `queue` (of the kernel's device instance), after the events
    /// in `wait_for`.
    pub fn launch_on(
        &self,
        queue: &Queue,
        launch: &Launch,
        arguments: &[Argument<'_>],
        wait_for: &[&Event],
    ) -> Result<Event> {
        queue.launch(self, launch, arguments, wait_for)
    }
}

/// A submitted copy, fill or launch.
#[derive(Clone)]
pub struct Event {
    pub(crate) completion: Completion,
    pub(crate) device: Device,
    /// For a launch of a checked kernel: its fault record, read once the launch finished.
    pub(crate) fault_check: Option<Arc<FaultCheck>>,
}

/// How an [`Event`] learns that its submission finished.
#[derive(Clone)]
pub(crate) enum Completion {
    /// The submission's own backend event.
    Backend(Arc<dyn EventBackend>),
    /// Submission `sequence` of `queue`, which makes a backend event for it only when this
    /// event is first waited for, queried or depended on (a CUDA stream without profiling), so
    /// that a launch whose event is dropped unused allocates nothing.
    Numbered {
        queue: Arc<dyn QueueBackend>,
        sequence: u64,
        made: OnceLock<Arc<dyn EventBackend>>,
    },
}

impl fmt::Debug for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Event")
            .field("device", &self.device.label())
            .finish()
    }
}

impl Event {
    /// The event of what `queue` (of `device`) gave back for a submission.
    pub(crate) fn submitted(
        submitted: Submitted,
        queue: &Arc<dyn QueueBackend>,
        device: &Device,
    ) -> Event {
        let completion = match submitted {
            Submitted::Event(event) | Submitted::Timed(event, _) => Completion::Backend(event),
            Submitted::Sequence(sequence) => Completion::Numbered {
                queue: Arc::clone(queue),
                sequence,
                made: OnceLock::new(),
            },
        };
        Event {
            completion,
            device: device.clone(),
            fault_check: None,
        }
    }

    /// The backend event of the submission, made now for a numbered one.
    pub(crate) fn backend(&self) -> Result<&Arc<dyn EventBackend>> {
        match &self.completion {
            Completion::Backend(event) => Ok(event),
            Completion::Numbered {
                queue,
                sequence,
                made,
            } => {
                if made.get().is_none() {
                    let event = queue.event_after(*sequence)?;
                    let _ = made.set(event);
                }
                Ok(made.get().expect("set above"))
            }
        }
    }

    /// Waits for this submission (only) to finish; reports errors the device raised while
    /// running it, and for a checked kernel the first fault it recorded
    /// ([`RuntimeError::KernelFault`]).
    pub fn wait(&self) -> Result<()> {
        self.backend()?.wait()?;
        self.check_faults()
    }

    /// After completion: a checked launch's recorded fault as an error.
    fn check_faults(&self) -> Result<()> {
        match &self.fault_check {
            Some(check) => check.check(),
            None => Ok(()),
        }
    }

    /// The device the submission runs on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// True once the submission has finished. Never blocks.
    pub fn is_complete(&self) -> Result<bool> {
        self.backend()?.is_complete()
    }

    /// The submission's execution time in nanoseconds as the device measured it (SYCL
    /// profiling command start/end; CUDA/HIP events recorded around it). Waits for this
    /// submission only, so work queued after it keeps running. A foreign SYCL queue adopted
    /// without profiling enabled has no timings: that is an error.
    pub fn elapsed_ns(&self) -> Result<u64> {
        let elapsed = self.backend()?.elapsed_ns()?;
        self.check_faults()?;
        Ok(elapsed)
    }

    /// For a submission to a SYCL queue: the `sycl::event` that completes with it, valid while
    /// this event lives (for handing to another SYCL library, which copies it: dpctl's
    /// `SyclEvent` from a `"SyclEventRef"` capsule). None on other backends.
    pub fn sycl_event(&self) -> Result<Option<*const std::ffi::c_void>> {
        Ok(self
            .backend()?
            .sycl_event_address()?
            .map(|address| address as *const std::ffi::c_void))
    }

    /// Keeps `item` alive until this submission has finished.
    pub(crate) fn retire(&self, item: Retired) {
        match self.backend() {
            Ok(event) => self.device.inner.retire(vec![Arc::clone(event)], item),
            // Without an event to wait for, the item cannot be released safely: keep it.
            Err(_) => std::mem::forget(item),
        }
    }
}
