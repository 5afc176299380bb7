//! The backends behind `Device`. Everything `unsafe` in the crate lives in these modules.
//!
//! A backend provides devices (allocation and program loading), queues (in-order streams of
//! copies, fills and launches, each giving an event) and events. The runtime above it decides
//! what each submission must wait for and when memory may be freed; a backend never blocks
//! unless asked to (`synchronize`, `EventBackend::wait`).

use crate::args::ScalarValue;
use crate::buffer::MemoryKind;
use crate::device::{BackendKind, DeviceInfo};
use crate::error::{Result, RuntimeError};
use crate::launch::Launch;
use kdsl_bundle::{Bundle, Image};
use std::any::Any;
use std::sync::Arc;

pub(crate) mod cuda;
pub(crate) mod hip;
#[cfg(feature = "sycl")]
pub(crate) mod sycl;

/// A kernel argument after checking: a device address or a scalar value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum RawArgument {
    Pointer(u64),
    Scalar(ScalarValue),
    /// A launch-sized local array: `bytes` at byte `offset` of the launch's dynamic local
    /// memory (see `local_memory.rs`). SYCL sets a local argument of `bytes` (whose offset
    /// SYCL's CUDA and HIP adapters choose); CUDA and HIP pass the offset as a `u32` and size
    /// the dynamic shared memory to the largest end.
    Local {
        offset: u64,
        bytes: u64,
    },
}

impl RawArgument {
    /// The bytes of dynamic local memory a launch with these arguments needs.
    pub(crate) fn dynamic_local_bytes(arguments: &[RawArgument]) -> u64 {
        arguments
            .iter()
            .map(|argument| match *argument {
                RawArgument::Local { offset, bytes } => offset + bytes,
                _ => 0,
            })
            .max()
            .unwrap_or(0)
    }
}

/// What a queue gives back for one submission.
pub(crate) enum Submitted {
    /// The submission's own event (SYCL, HIP).
    Event(Arc<dyn EventBackend>),
    /// Only the submission's sequence number on its queue, which makes an event for it when
    /// someone needs one ([`QueueBackend::event_after`]): a CUDA stream without profiling.
    Sequence(u64),
    /// Both: the event times the submission (a profiled CUDA stream); the runtime's ordering
    /// bookkeeping records the sequence number, which costs no reference count.
    Timed(Arc<dyn EventBackend>, u64),
}

impl Submitted {
    /// The sequence number, for queues that number their submissions.
    pub(crate) fn sequence(&self) -> Option<u64> {
        match self {
            Submitted::Event(_) => None,
            Submitted::Sequence(sequence) | Submitted::Timed(_, sequence) => Some(*sequence),
        }
    }
}

/// One opened device instance.
pub(crate) trait DeviceBackend: Send + Sync {
    fn allocate(&self, bytes: usize, kind: MemoryKind) -> Result<u64>;
    /// Frees memory that no submitted work uses any more (the runtime keeps memory with pending
    /// work alive until that work finished). Errors cannot be reported from `Drop`; a failure
    /// leaks the allocation.
    fn free(&self, address: u64, kind: MemoryKind);
    /// The queue plain calls use: the instance's own queue, or the adopted foreign one.
    fn default_queue(&self) -> Arc<dyn QueueBackend>;
    /// A further in-order queue (SYCL queue, CUDA/HIP stream) on the same context; a profiled
    /// one times each submission, an unprofiled one is cheaper per submission.
    fn new_queue(&self, profiled: bool) -> Result<Arc<dyn QueueBackend>>;
    /// Loads `image`, one of `bundle`'s images (the bundle gives kernel names and how the
    /// image's entry points are named).
    fn load(&self, bundle: &Bundle, image: &Image) -> Result<Arc<dyn ModuleBackend>>;
}

/// An in-order queue. Every submission starts after the events in `wait_for` and after
/// everything submitted to this queue before it, and does not block the caller.
pub(crate) trait QueueBackend: Send + Sync {
    /// Copies `bytes` bytes; each side is host memory or memory of this device instance.
    fn copy(
        &self,
        destination: u64,
        source: u64,
        bytes: usize,
        wait_for: &[&dyn EventBackend],
    ) -> Result<Submitted>;
    /// Writes `count` copies of `pattern` (1, 2, 4 or 8 bytes) starting at `address`.
    fn fill(
        &self,
        address: u64,
        pattern: &[u8],
        count: usize,
        wait_for: &[&dyn EventBackend],
    ) -> Result<Submitted>;
    /// Submits a launch whose arguments and geometry were already checked.
    fn launch(
        &self,
        kernel: &dyn KernelBackend,
        launch: &Launch,
        arguments: &[RawArgument],
        wait_for: &[&dyn EventBackend],
    ) -> Result<Submitted>;
    /// Waits for everything submitted to this queue.
    fn synchronize(&self) -> Result<()>;
    /// An event that completes once submission `sequence` of this queue (a number it returned
    /// in [`Submitted::Sequence`] or [`Submitted::Timed`]) has finished. Only queues that
    /// number their submissions are asked.
    fn event_after(&self, sequence: u64) -> Result<Arc<dyn EventBackend>>;
    /// An event of this queue's backend holding a copy of a foreign SYCL event (a
    /// `sycl::event*` address), to wait for. SYCL queues only.
    fn foreign_sycl_event(&self, _address: u64) -> Result<Arc<dyn EventBackend>> {
        Err(RuntimeError::BadForeignObject {
            what: "a SYCL event given to a queue that is not a SYCL queue".to_string(),
        })
    }
}

/// A loaded image.
pub(crate) trait ModuleBackend: Send + Sync {
    /// The kernel called `name` in the bundle, whose entry point in the image is `entry_point`.
    fn kernel(self: Arc<Self>, name: &str, entry_point: &str) -> Result<Box<dyn KernelBackend>>;
    /// The same for an entry point that takes `maps` after its arguments
    /// (`crate::tensor_maps`), which the backend encodes at each launch; `None` where it
    /// cannot make tensor maps.
    fn kernel_with_tensor_maps(
        self: Arc<Self>,
        _name: &str,
        _entry_point: &str,
        _maps: Vec<crate::tensor_maps::TensorMapSource>,
    ) -> Result<Option<Box<dyn KernelBackend>>> {
        Ok(None)
    }
}

/// A kernel of a loaded image; queues of the same backend downcast it to launch it.
pub(crate) trait KernelBackend: Send + Sync {
    fn as_any(&self) -> &dyn Any;
    /// The address of the `sycl::kernel` inside, for kernels of SYCL devices.
    fn sycl_kernel_address(&self) -> Result<Option<u64>> {
        Ok(None)
    }
    /// The work-group size this kernel runs best at by the driver's occupancy calculation
    /// (CUDA's `cuOccupancyMaxPotentialBlockSize`), where the backend has one.
    fn occupancy_group_size(&self) -> Option<u64> {
        None
    }
    /// What the driver rounds each launch-sized local array's size up to and aligns it to, in
    /// bytes (SYCL's CUDA and HIP adapters: 128, see `backend/sycl.rs`); 1 where kdsl places
    /// the arrays itself.
    fn local_argument_granule(&self) -> u64 {
        1
    }
}

/// The completion of one submission.
pub(crate) trait EventBackend: Send + Sync {
    /// Waits for this submission only; reports errors the device raised while running it.
    fn wait(&self) -> Result<()>;
    /// True once the submission finished; never blocks.
    fn is_complete(&self) -> Result<bool>;
    /// The device's timing of the finished submission, in nanoseconds (waits for it).
    fn elapsed_ns(&self) -> Result<u64>;
    /// The address of the `sycl::event` that completes with this submission, for SYCL events.
    fn sycl_event_address(&self) -> Result<Option<u64>> {
        Ok(None)
    }
    fn as_any(&self) -> &dyn Any;
}

/// Downcasts a kernel or event of some backend to the concrete type of the backend asking.
pub(crate) fn downcast<'a, T: 'static>(
    backend: BackendKind,
    what: &str,
    value: &'a dyn Any,
) -> Result<&'a T> {
    value
        .downcast_ref::<T>()
        .ok_or_else(|| RuntimeError::Unsupported {
            backend,
            what: format!("{what} of another backend"),
        })
}

pub(crate) fn open(info: &DeviceInfo) -> Result<Box<dyn DeviceBackend>> {
    match info.backend {
        BackendKind::Cuda => cuda::open(info),
        BackendKind::Hip => hip::open(info),
        BackendKind::Sycl => open_sycl(info),
    }
}

#[cfg(feature = "sycl")]
fn open_sycl(info: &DeviceInfo) -> Result<Box<dyn DeviceBackend>> {
    sycl::open(info)
}

#[cfg(not(feature = "sycl"))]
fn open_sycl(_info: &DeviceInfo) -> Result<Box<dyn DeviceBackend>> {
    Err(no_sycl_backend())
}

#[cfg(not(feature = "sycl"))]
pub(crate) fn no_sycl_backend() -> RuntimeError {
    RuntimeError::Unsupported {
        backend: BackendKind::Sycl,
        what: "anything in this build (kdsl-runtime was built without the `sycl` feature)".into(),
    }
}

#[cfg(feature = "sycl")]
pub(crate) fn discover_sycl() -> (Vec<DeviceInfo>, Option<String>) {
    sycl::discover()
}

#[cfg(not(feature = "sycl"))]
pub(crate) fn discover_sycl() -> (Vec<DeviceInfo>, Option<String>) {
    (
        Vec::new(),
        Some("SYCL: this build has no SYCL backend (built without the `sycl` feature)".into()),
    )
}
