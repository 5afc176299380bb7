//! Queues: in-order streams of copies, fills and launches on one device instance.

use crate::args::{check_arguments, Argument, ArgumentKind, ParameterSlot};
use crate::backend::{EventBackend, KernelBackend, QueueBackend, RawArgument, Submitted};
use crate::buffer::{check_length, check_writable, Buffer, PendingRead, Region};
use crate::device::{BackendKind, Device};
use crate::element::Element;
use crate::error::{Result, RuntimeError};
use crate::event::Event;
use crate::fault::{hidden_arguments, FaultCheck};
use crate::inline_vec::{InlineVec, INLINE_ARGUMENTS};
use crate::launch::{check_launch, Launch};
use crate::local_memory::{self, check_local_memory};
use crate::memory::{Memory, PendingWork, Retired};
use crate::program::Kernel;
use kdsl_bundle::FAULT_RECORD_BYTES;
use std::fmt;
use std::sync::Arc;

/// One in-order queue of a device instance: a SYCL queue, or a CUDA or HIP stream.
///
/// Work on one queue runs in submission order. Work on different queues runs concurrently,
/// except that the runtime orders conflicting uses of the same buffer (a write after any
/// pending use, a read after a pending write) and any events passed as `wait_for`.
/// Nothing here blocks except `synchronize` and the waits of events.
#[derive(Clone)]
pub struct Queue {
    pub(crate) device: Device,
    pub(crate) id: u64,
    pub(crate) backend: Arc<dyn QueueBackend>,
}

impl fmt::Debug for Queue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Queue")
            .field("device", &self.device.label())
            .field("id", &self.id)
            .finish()
    }
}

/// One memory allocation a submission reads or writes.
#[derive(Clone, Copy)]
struct MemoryUse<'a> {
    pending: &'a PendingWork,
    writes: bool,
}

/// The memory uses of a launch's buffer arguments, in order (the argument checks matched every
/// buffer argument with a buffer parameter): written when the parameter is writable.
fn buffer_uses<'k>(
    kernel: &'k Kernel,
    arguments: &'k [Argument<'_>],
) -> impl Iterator<Item = MemoryUse<'k>> + Clone + 'k {
    kernel
        .layout
        .slots()
        .iter()
        .zip(arguments)
        .filter_map(|(slot, argument)| match &argument.kind {
            ArgumentKind::Buffer(facts) => Some(MemoryUse {
                pending: facts.pending,
                writes: matches!(slot, ParameterSlot::Buffer { writable: true, .. }),
            }),
            ArgumentKind::Scalar(_) | ArgumentKind::Local { .. } => None,
        })
}

/// A queue borrowed from its owner (a [`Queue`], or a device's default queue), so that
/// `Kernel::launch` reaches the default queue without cloning its handles.
#[derive(Clone, Copy)]
pub(crate) struct QueueRef<'q> {
    device: &'q Device,
    id: u64,
    backend: &'q Arc<dyn QueueBackend>,
}

impl<'q> QueueRef<'q> {
    /// The default queue of `device`.
    pub(crate) fn default_of(device: &'q Device) -> QueueRef<'q> {
        QueueRef {
            device,
            id: device.inner.default_queue_id,
            backend: &device.inner.default_queue,
        }
    }

    /// Submits one operation after `wait_for` and after conflicting work on other queues, and
    /// records it as the latest use of each memory range (`uses` is walked twice: before and
    /// after the submission).
    fn submit<'u>(
        &self,
        uses: impl Iterator<Item = MemoryUse<'u>> + Clone,
        wait_for: &[&Event],
        operation: impl FnOnce(&dyn QueueBackend, &[&dyn EventBackend]) -> Result<Submitted>,
    ) -> Result<Event> {
        self.device.inner.collect_retired();
        // Both lists stay unallocated when there is nothing to wait for (the common case).
        let mut waits: Vec<Arc<dyn EventBackend>> = Vec::new();
        for event in wait_for {
            waits.push(Arc::clone(event.backend()?));
        }
        for memory_use in uses.clone() {
            memory_use
                .pending
                .conflicting_work(self.id, memory_use.writes, &mut waits)?;
        }
        let wait_references: Vec<&dyn EventBackend> = waits.iter().map(|event| &**event).collect();
        let submitted = operation(&**self.backend, &wait_references)?;
        for memory_use in uses {
            memory_use
                .pending
                .record(self.id, self.backend, &submitted, memory_use.writes);
        }
        Ok(Event::submitted(submitted, self.backend, self.device))
    }

    /// See [`Queue::check_launch`].
    pub(crate) fn check(
        &self,
        kernel: &Kernel,
        launch: &Launch,
        arguments: &[Argument<'_>],
    ) -> Result<()> {
        let device = &self.device.inner;
        if !kernel.device.same_instance(self.device) {
            return Err(RuntimeError::ForeignQueue {
                kernel: kernel.info.name.clone(),
                kernel_device: kernel.device.label().to_string(),
                queue_device: self.device.label().to_string(),
            });
        }
        // The layout accepts correct arguments quickly; the full check reports any error.
        if !kernel.layout.accepts(device.instance, arguments)
            || (!kernel.info.shaped_buffers.is_empty()
                && !crate::shaped::shapes_fit(&kernel.info, arguments))
        {
            check_arguments(&kernel.info, device.instance, &device.label, arguments)?;
        }
        check_launch(&kernel.info, launch, &device.info.limits)?;
        // A size still open is the device's to choose (SYCL), whose images run no groups on units.
        if !launch.local_left_open() {
            kernel
                .info
                .check_matrix_groups(launch.local(), kernel.matrix_groups_on_units, &kernel.image)
                .and_then(|()| {
                    kernel.info.check_tile_sub_groups(
                        launch.local(),
                        kernel.tile_sub_group_size,
                        &kernel.image,
                    )
                })
                .map_err(|why| RuntimeError::BadLaunch {
                    kernel: kernel.info.name.clone(),
                    why,
                })?;
        }
        check_local_memory(
            &kernel.info,
            arguments,
            device.info.limits.dynamic_local_memory_bytes,
            kernel.backend.local_argument_granule(),
        )
    }

    /// See [`Queue::launch`]. The arguments of a launch with up to
    /// [`INLINE_ARGUMENTS`] of them stay on the stack.
    pub(crate) fn launch(
        &self,
        kernel: &Kernel,
        launch: &Launch,
        arguments: &[Argument<'_>],
        wait_for: &[&Event],
    ) -> Result<Event> {
        let entry = kernel.entry_for(arguments);
        // An open work-group size is left to SYCL devices and chosen here for the others.
        let chosen;
        let launch = if launch.local_left_open() {
            let info = &self.device.inner.info;
            // Tiles that need whole sub-groups get a size chosen here, in whole sub-groups.
            let tile_lanes = kernel.tile_sub_group_size.filter(|_| kernel.info.tiles);
            let device_chooses = info.backend == BackendKind::Sycl && tile_lanes.is_none();
            let budget = entry.occupancy_group_size().unwrap_or(256);
            let mut open =
                launch.with_local_chosen(&kernel.info, device_chooses, budget, &info.limits);
            if kernel.info.work_group_size.is_none() {
                if kernel.info.matrix_groups && kernel.matrix_groups_on_units {
                    open = open.in_whole_groups(u64::from(kdsl_ir::matrix_group::GROUP_SIZE));
                }
                if let Some(lanes) = tile_lanes {
                    open = open.in_whole_groups(u64::from(lanes));
                }
            }
            chosen = open;
            &chosen
        } else {
            launch
        };
        self.check(kernel, launch, arguments)?;
        let mut raw: InlineVec<RawArgument, INLINE_ARGUMENTS> =
            InlineVec::new(RawArgument::Pointer(0));
        if kernel.layout.has_local() {
            let granule = entry.local_argument_granule();
            let (places, _) = local_memory::layout(&kernel.info, arguments, granule);
            raw.extend(arguments.iter().zip(places).map(|(argument, place)| {
                match (&argument.kind, place) {
                    (_, Some((offset, bytes))) => RawArgument::Local { offset, bytes },
                    (ArgumentKind::Buffer(facts), _) => RawArgument::Pointer(facts.address),
                    (ArgumentKind::Scalar(value), _) => RawArgument::Scalar(*value),
                    (ArgumentKind::Local { .. }, None) => RawArgument::Pointer(0),
                }
            }));
        } else {
            raw.extend(arguments.iter().map(|argument| match &argument.kind {
                ArgumentKind::Buffer(facts) => RawArgument::Pointer(facts.address),
                ArgumentKind::Scalar(value) => RawArgument::Scalar(*value),
                ArgumentKind::Local { .. } => RawArgument::Pointer(0),
            }));
        }
        if kernel.info.checked {
            return self.launch_checked(kernel, entry, launch, arguments, wait_for, raw);
        }
        self.submit(buffer_uses(kernel, arguments), wait_for, |queue, waits| {
            queue.launch(entry, launch, raw.as_slice(), waits)
        })
    }

    /// The launch of a checked kernel: a zeroed fault record and the buffers' lengths follow
    /// the arguments. Kept apart so that the common path stays short.
    #[inline(never)]
    fn launch_checked(
        &self,
        kernel: &Kernel,
        entry: &dyn KernelBackend,
        launch: &Launch,
        arguments: &[Argument<'_>],
        wait_for: &[&Event],
        mut raw: InlineVec<RawArgument, INLINE_ARGUMENTS>,
    ) -> Result<Event> {
        let buffer_sizes: Vec<_> = arguments
            .iter()
            .zip(&kernel.info.parameters)
            .filter_map(|(argument, parameter)| match (argument.kind, parameter) {
                (ArgumentKind::Buffer(facts), crate::ParameterInfo::Buffer { record, .. }) => {
                    let size = match record {
                        Some(record) => record.size as usize,
                        None => facts.element.size_in_bytes() as usize,
                    };
                    Some((facts.bytes, size))
                }
                (ArgumentKind::Local { element, bytes }, _) => {
                    Some((bytes as usize, element.size_in_bytes() as usize))
                }
                _ => None,
            })
            .collect();
        let check = Arc::new(FaultCheck::new(
            self.device,
            &kernel.info,
            &kernel.source_name,
        )?);
        let record = check.record().region();
        let record_use = MemoryUse {
            pending: &record.memory.pending,
            writes: true,
        };
        let zeroed = self.submit([record_use].into_iter(), &[], |queue, waits| {
            queue.fill(record.address, &[0u8; 8], FAULT_RECORD_BYTES / 8, waits)
        })?;
        raw.extend(hidden_arguments(&buffer_sizes, check.record().address()));
        let mut waits: Vec<&Event> = wait_for.to_vec();
        waits.push(&zeroed);
        let mut event = self.submit(
            buffer_uses(kernel, arguments).chain(std::iter::once(record_use)),
            &waits,
            |queue, waits| queue.launch(entry, launch, raw.as_slice(), waits),
        )?;
        event.fault_check = Some(check);
        Ok(event)
    }
}

impl Queue {
    pub fn device(&self) -> &Device {
        &self.device
    }

    fn borrowed(&self) -> QueueRef<'_> {
        QueueRef {
            device: &self.device,
            id: self.id,
            backend: &self.backend,
        }
    }

    /// Waits until everything submitted to this queue has finished.
    pub fn synchronize(&self) -> Result<()> {
        self.backend.synchronize()
    }

    /// A foreign SYCL event as an [`Event`] of this queue's device, to pass in `wait_for`:
    /// work submitted by another SYCL library (dpctl's `SyclEvent.addressof_ref()`) that a
    /// launch must follow. The event is copied; SYCL queues only.
    ///
    /// # Safety
    /// `sycl_event` must point to a live `sycl::event` of the libsycl the runtime loaded.
    pub unsafe fn adopt_sycl_event(&self, sycl_event: *const std::ffi::c_void) -> Result<Event> {
        if sycl_event.is_null() {
            return Err(RuntimeError::BadForeignObject {
                what: "a null SYCL event".to_string(),
            });
        }
        Ok(Event::submitted(
            Submitted::Event(self.backend.foreign_sycl_event(sycl_event as u64)?),
            &self.backend,
            &self.device,
        ))
    }

    fn check_memory(&self, memory: &Memory) -> Result<()> {
        if memory.device.same_instance(&self.device) {
            Ok(())
        } else {
            Err(RuntimeError::ForeignMemory {
                memory_device: memory.device.label().to_string(),
                queue_device: self.device.label().to_string(),
            })
        }
    }

    /// Submits one operation touching `uses` (see [`QueueRef::submit`]).
    fn submit<const N: usize>(
        &self,
        uses: [MemoryUse<'_>; N],
        wait_for: &[&Event],
        operation: impl FnOnce(&dyn QueueBackend, &[&dyn EventBackend]) -> Result<Submitted>,
    ) -> Result<Event> {
        self.borrowed()
            .submit(uses.into_iter(), wait_for, operation)
    }

    /// The checks [`Queue::launch`] makes (the arguments against the kernel's metadata, the
    /// launch against the device's limits), without submitting anything: a caller that must
    /// copy data in before the launch checks first, so that a rejected launch leaves no copy
    /// running.
    pub fn check_launch(
        &self,
        kernel: &Kernel,
        launch: &Launch,
        arguments: &[Argument<'_>],
    ) -> Result<()> {
        self.borrowed().check(kernel, launch, arguments)
    }

    /// Checks the arguments and the launch against the kernel's metadata and the device's
    /// limits, then submits the launch after `wait_for`. A misuse error submits nothing.
    pub fn launch(
        &self,
        kernel: &Kernel,
        launch: &Launch,
        arguments: &[Argument<'_>],
        wait_for: &[&Event],
    ) -> Result<Event> {
        self.borrowed().launch(kernel, launch, arguments, wait_for)
    }

    /// Starts copying `buffer` to the host; [`PendingRead::wait`] gives the data.
    pub fn read<T: Element>(
        &self,
        buffer: &Buffer<T>,
        wait_for: &[&Event],
    ) -> Result<PendingRead<T>> {
        let mut data = vec![T::zeroed(); buffer.len()];
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut data);
        // SAFETY: the vector's heap storage does not move when the vector is moved into the
        // PendingRead, which keeps it alive (or retires it) until the copy is done.
        let event =
            unsafe { self.read_raw(buffer.region(), bytes.as_mut_ptr(), bytes.len(), wait_for) }?;
        Ok(PendingRead {
            data: Some(data),
            event,
        })
    }

    /// Starts overwriting `buffer` with `data` (the buffer's length); `data` is kept alive until
    /// the copy is done.
    pub fn write<T: Element>(
        &self,
        buffer: &mut Buffer<T>,
        data: Vec<T>,
        wait_for: &[&Event],
    ) -> Result<Event> {
        check_length(buffer.len(), data.len())?;
        let bytes: &[u8] = bytemuck::cast_slice(&data);
        let region = buffer.writable_region()?;
        // SAFETY: `data` is retired with the event below, so it lives until the copy is done.
        let event = unsafe { self.write_raw(region, bytes.as_ptr(), bytes.len(), wait_for) }?;
        event.retire(Retired::HostData(Box::new(data)));
        Ok(event)
    }

    /// Starts setting every element of `buffer` to `value`.
    pub fn fill<T: Element>(
        &self,
        buffer: &mut Buffer<T>,
        value: T,
        wait_for: &[&Event],
    ) -> Result<Event> {
        let count = buffer.len();
        let region = buffer.writable_region()?;
        self.check_memory(region.memory)?;
        self.submit(
            [MemoryUse {
                pending: &region.memory.pending,
                writes: true,
            }],
            wait_for,
            |queue, waits| queue.fill(region.address, bytemuck::bytes_of(&value), count, waits),
        )
    }

    /// Starts a device-side copy of `source` into `destination` (same length, same device).
    pub fn copy<T: Element>(
        &self,
        destination: &mut Buffer<T>,
        source: &Buffer<T>,
        wait_for: &[&Event],
    ) -> Result<Event> {
        check_length(destination.len(), source.len())?;
        let from = source.region();
        let to = destination.writable_region()?;
        self.check_memory(from.memory)?;
        self.check_memory(to.memory)?;
        self.submit(
            [
                MemoryUse {
                    pending: &from.memory.pending,
                    writes: false,
                },
                MemoryUse {
                    pending: &to.memory.pending,
                    writes: true,
                },
            ],
            wait_for,
            |queue, waits| queue.copy(to.address, from.address, to.bytes, waits),
        )
    }

    /// Starts copying a buffer's bytes to host memory.
    ///
    /// # Safety
    /// `host` must be valid for `bytes` bytes of writes until the returned event has completed,
    /// and nothing else may access that memory until then.
    pub(crate) unsafe fn read_raw(
        &self,
        region: Region<'_>,
        host: *mut u8,
        bytes: usize,
        wait_for: &[&Event],
    ) -> Result<Event> {
        check_length(region.bytes, bytes)?;
        self.check_memory(region.memory)?;
        self.submit(
            [MemoryUse {
                pending: &region.memory.pending,
                writes: false,
            }],
            wait_for,
            |queue, waits| queue.copy(host as u64, region.address, bytes, waits),
        )
    }

    /// Starts copying host memory into a buffer's bytes.
    ///
    /// # Safety
    /// `host` must be valid for `bytes` bytes of reads until the returned event has completed.
    pub(crate) unsafe fn write_raw(
        &self,
        region: Region<'_>,
        host: *const u8,
        bytes: usize,
        wait_for: &[&Event],
    ) -> Result<Event> {
        check_length(region.bytes, bytes)?;
        check_writable(region.memory)?;
        self.check_memory(region.memory)?;
        self.submit(
            [MemoryUse {
                pending: &region.memory.pending,
                writes: true,
            }],
            wait_for,
            |queue, waits| queue.copy(region.address, host as u64, bytes, waits),
        )
    }

    /// Starts copying an untyped buffer's bytes to host memory (for language bindings that hold
    /// the host array themselves).
    ///
    /// # Safety
    /// `host` must be valid for `buffer.size_in_bytes()` bytes of writes until the returned
    /// event has completed.
    pub unsafe fn read_bytes_into(
        &self,
        buffer: &crate::AnyBuffer,
        host: *mut u8,
        wait_for: &[&Event],
    ) -> Result<Event> {
        // SAFETY: forwarded to the caller.
        unsafe { self.read_raw(buffer.region(), host, buffer.size_in_bytes(), wait_for) }
    }

    /// Starts copying host memory into an untyped buffer.
    ///
    /// # Safety
    /// `host` must be valid for `buffer.size_in_bytes()` bytes of reads until the returned event
    /// has completed.
    pub unsafe fn write_bytes_from(
        &self,
        buffer: &mut crate::AnyBuffer,
        host: *const u8,
        wait_for: &[&Event],
    ) -> Result<Event> {
        let bytes = buffer.size_in_bytes();
        // SAFETY: forwarded to the caller.
        unsafe { self.write_raw(buffer.region(), host, bytes, wait_for) }
    }
}
