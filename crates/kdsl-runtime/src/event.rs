//! Events: what a copy, fill or launch gives back, to wait for, query, time, or order later work
//! after, with a checked launch's fault read-back on completion.

use crate::backend::{EventBackend, QueueBackend, Submitted};
use crate::device::Device;
use crate::error::Result;
use crate::fault::FaultCheck;
use crate::memory::Retired;
use std::fmt;
use std::sync::{Arc, OnceLock};

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
    /// ([`crate::RuntimeError::KernelFault`]).
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
