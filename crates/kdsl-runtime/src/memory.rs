//! Device memory and the work pending on it.
//!
//! Each allocation (or adopted foreign range) is one [`Memory`], shared by the buffer and its
//! views. It remembers, per queue, the last submitted work that used it and whether any of that
//! work writes it. A submission on one queue waits for conflicting work on other queues (a write
//! after anything, or a read after a write), so work on several queues is ordered, not raced.
//! When the last handle goes, memory with unfinished work is retired to its device and freed
//! once that work is done, never earlier.
//!
//! The first queue that submits numbered work on an allocation (a CUDA stream, an in-order
//! SYCL queue's launches) owns its lock-free slot: later uses by that queue only raise a
//! sequence number, with no lock, event or reference count. Other queues' uses, and work that
//! comes with its own event, go to a list under a lock, which a queue takes only when the
//! list holds another queue's use (a queue updating its own entry there takes it once).

use crate::backend::{EventBackend, QueueBackend, Submitted};
use crate::buffer::MemoryKind;
use crate::device::{Device, DeviceInner};
use crate::error::Result;
use std::any::Any;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// The latest use by one queue: its event, or its sequence number on a queue that makes
/// events for its numbered submissions.
enum Point {
    Event(Arc<dyn EventBackend>),
    Numbered {
        queue: Arc<dyn QueueBackend>,
        sequence: u64,
    },
}

impl Point {
    fn of(submitted: &Submitted, queue: &Arc<dyn QueueBackend>) -> Point {
        match submitted {
            Submitted::Event(event) => Point::Event(Arc::clone(event)),
            Submitted::Sequence(sequence) | Submitted::Timed(_, sequence) => Point::Numbered {
                queue: Arc::clone(queue),
                sequence: *sequence,
            },
        }
    }

    fn event(&self) -> Result<Arc<dyn EventBackend>> {
        match self {
            Point::Event(event) => Ok(Arc::clone(event)),
            Point::Numbered { queue, sequence } => queue.event_after(*sequence),
        }
    }
}

/// The last work one queue submitted that uses a memory range.
struct PendingUse {
    queue: u64,
    point: Point,
    /// True when any work of this queue still pending on the memory writes it.
    writes: bool,
}

pub(crate) struct Memory {
    pub device: Device,
    pub address: u64,
    pub bytes: usize,
    pub kind: MemoryKind,
    /// Allocated by kdsl (freed on drop) rather than borrowed from another library.
    pub owned: bool,
    /// Foreign memory that kernels may only read.
    pub read_only: bool,
    pub pending: PendingWork,
}

/// Per queue, the last submitted work that uses one memory allocation.
#[derive(Default)]
pub(crate) struct PendingWork {
    /// The id of the queue that owns the lock-free slot: 0 until a queue claims it (under the
    /// lock of `uses`), then fixed.
    owner: AtomicU64,
    /// The owning queue, set before `owner`, to make an event for `owner_sequence` on demand.
    owner_queue: OnceLock<Arc<dyn QueueBackend>>,
    /// The sequence number of the owner's latest numbered use.
    owner_sequence: AtomicU64,
    /// The owner's latest sequence number known to have finished (another queue asked).
    owner_finished: AtomicU64,
    /// True once any of the owner's numbered uses writes.
    owner_writes: AtomicBool,
    /// The other uses (other queues, and submissions that came with their own event).
    uses: Mutex<Vec<PendingUse>>,
    /// The one queue whose uses `uses` holds (0: none, `u64::MAX`: several; kept under its
    /// lock), so that a queue with no other queue's use to follow takes no lock.
    others: AtomicU64,
}

/// What `PendingWork::others` says of `uses`.
fn others_of(uses: &[PendingUse]) -> u64 {
    match uses.first() {
        None => 0,
        Some(first) if uses.iter().all(|pending| pending.queue == first.queue) => first.queue,
        Some(_) => u64::MAX,
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding these locks cannot leave the lists inconsistent (each update is
    // one push or retain), so a poisoned lock is still usable.
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn is_complete(event: &Arc<dyn EventBackend>) -> bool {
    // A status that cannot be read means the work failed or was aborted: it is over either way,
    // and whoever waits on the event gets the error.
    event.is_complete().unwrap_or(true)
}

impl Memory {
    pub fn new(
        device: &Device,
        address: u64,
        bytes: usize,
        kind: MemoryKind,
        owned: bool,
        read_only: bool,
    ) -> Memory {
        Memory {
            device: device.clone(),
            address,
            bytes,
            kind,
            owned,
            read_only,
            pending: PendingWork::default(),
        }
    }
}

impl PendingWork {
    /// Adds to `waits` the pending work of other queues that a new use on `queue` must follow.
    /// Only other queues' work is queried (finished work is skipped): the submitting queue's
    /// own is followed anyway, so the common one-queue case asks the driver nothing and takes
    /// no lock.
    pub fn conflicting_work(
        &self,
        queue: u64,
        writes: bool,
        waits: &mut Vec<Arc<dyn EventBackend>>,
    ) -> Result<()> {
        let owner = self.owner.load(Ordering::Acquire);
        if owner != 0 && owner != queue && (writes || self.owner_writes.load(Ordering::Acquire)) {
            let sequence = self.owner_sequence.load(Ordering::Acquire);
            if let (true, Some(owner_queue)) = (
                sequence > self.owner_finished.load(Ordering::Acquire),
                self.owner_queue.get(),
            ) {
                let event = owner_queue.event_after(sequence)?;
                if is_complete(&event) {
                    // Known finished: later uses by other queues need not ask again.
                    self.owner_finished.fetch_max(sequence, Ordering::AcqRel);
                } else {
                    waits.push(event);
                }
            }
        }
        let others = self.others.load(Ordering::Acquire);
        if others == 0 || others == queue {
            return Ok(());
        }
        let mut uses = lock(&self.uses);
        let mut index = 0;
        while index < uses.len() {
            let pending = &uses[index];
            if pending.queue == queue || !(writes || pending.writes) {
                index += 1;
                continue;
            }
            let event = pending.point.event()?;
            if is_complete(&event) {
                // Finished: forget it.
                uses.swap_remove(index);
            } else {
                waits.push(event);
                index += 1;
            }
        }
        self.others.store(others_of(&uses), Ordering::Release);
        Ok(())
    }

    /// Records a submitted use by `queue` (whose backend is `backend`). On an in-order queue
    /// the new use finishes after every earlier one, so it replaces them (keeping the fact that
    /// some of that work writes).
    pub fn record(
        &self,
        queue: u64,
        backend: &Arc<dyn QueueBackend>,
        submitted: &Submitted,
        writes: bool,
    ) {
        if let Some(sequence) = submitted.sequence() {
            let mut owner = self.owner.load(Ordering::Acquire);
            if owner == 0 {
                let _uses = lock(&self.uses);
                owner = self.owner.load(Ordering::Acquire);
                if owner == 0 {
                    let _ = self.owner_queue.set(Arc::clone(backend));
                    self.owner_sequence.store(sequence, Ordering::Release);
                    self.owner_writes.store(writes, Ordering::Release);
                    self.owner.store(queue, Ordering::Release);
                    return;
                }
            }
            if owner == queue {
                // Concurrent submitters on one queue may record out of order: keep the latest.
                self.owner_sequence.fetch_max(sequence, Ordering::AcqRel);
                if writes && !self.owner_writes.load(Ordering::Relaxed) {
                    self.owner_writes.store(true, Ordering::Release);
                }
                return;
            }
        }
        let mut uses = lock(&self.uses);
        match uses.iter_mut().find(|pending| pending.queue == queue) {
            Some(pending) => {
                match (&mut pending.point, submitted.sequence()) {
                    // The same queue again: only the number changes.
                    (Point::Numbered { sequence, .. }, Some(latest)) => {
                        *sequence = (*sequence).max(latest)
                    }
                    (point, _) => *point = Point::of(submitted, backend),
                }
                pending.writes |= writes;
            }
            None => {
                uses.push(PendingUse {
                    queue,
                    point: Point::of(submitted, backend),
                    writes,
                });
                self.others.store(others_of(&uses), Ordering::Release);
            }
        }
    }

    /// The events of all unfinished uses (an event that cannot be made counts as finished:
    /// its submission failed).
    fn pending_events(&self) -> Vec<Arc<dyn EventBackend>> {
        let mut events = Vec::new();
        let sequence = self.owner_sequence.load(Ordering::Acquire);
        if let (true, Some(queue)) = (
            sequence > self.owner_finished.load(Ordering::Acquire),
            self.owner_queue.get(),
        ) {
            if let Ok(event) = queue.event_after(sequence) {
                events.push(event);
            }
        }
        let uses = lock(&self.uses);
        events.extend(uses.iter().filter_map(|pending| pending.point.event().ok()));
        events.retain(|event| !is_complete(event));
        events
    }
}

impl Drop for Memory {
    fn drop(&mut self) {
        if self.owned {
            let pending = self.pending.pending_events();
            self.device.inner.retire(
                pending,
                Retired::Allocation {
                    address: self.address,
                    kind: self.kind,
                },
            );
        }
    }
}

/// Something that must outlive work still pending on the device.
pub(crate) enum Retired {
    /// Device memory to free.
    Allocation { address: u64, kind: MemoryKind },
    /// Host memory a pending copy reads or writes.
    HostData(#[allow(dead_code)] Box<dyn Any + Send>),
}

/// A retired thing and the events it waits for.
type RetiredItem = (Vec<Arc<dyn EventBackend>>, Retired);

/// The device's list of retired things.
#[derive(Default)]
pub(crate) struct Retirement {
    items: Mutex<Vec<RetiredItem>>,
    /// True while `items` may be non-empty (set and cleared under its lock), so that a
    /// submission with nothing retired takes no lock.
    any: AtomicBool,
}

impl DeviceInner {
    /// Releases `item` now when `pending` is finished, otherwise once it is.
    pub(crate) fn retire(&self, pending: Vec<Arc<dyn EventBackend>>, item: Retired) {
        if pending.iter().all(is_complete) {
            self.release(item);
        } else {
            let mut items = lock(&self.retirement.items);
            items.push((pending, item));
            self.retirement.any.store(true, Ordering::Release);
        }
        self.collect_retired();
    }

    /// Releases every retired item whose work has finished. Called on every submission.
    pub(crate) fn collect_retired(&self) {
        if !self.retirement.any.load(Ordering::Acquire) {
            return;
        }
        let finished: Vec<Retired> = {
            let mut items = lock(&self.retirement.items);
            if items.is_empty() {
                self.retirement.any.store(false, Ordering::Release);
                return;
            }
            let mut finished = Vec::new();
            let mut index = 0;
            while index < items.len() {
                if items[index].0.iter().all(is_complete) {
                    finished.push(items.swap_remove(index).1);
                } else {
                    index += 1;
                }
            }
            self.retirement
                .any
                .store(!items.is_empty(), Ordering::Release);
            finished
        };
        for item in finished {
            self.release(item);
        }
    }

    /// Waits for all retired items' work and releases them (the device is going away).
    pub(crate) fn drain_retired(&self) {
        let items = {
            let mut items = lock(&self.retirement.items);
            self.retirement.any.store(false, Ordering::Release);
            std::mem::take(&mut *items)
        };
        for (pending, item) in items {
            for event in &pending {
                let _ = event.wait();
            }
            self.release(item);
        }
    }

    fn release(&self, item: Retired) {
        match item {
            Retired::Allocation { address, kind } => self.backend.free(address, kind),
            Retired::HostData(data) => drop(data),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{KernelBackend, RawArgument};
    use crate::launch::Launch;
    use std::sync::atomic::AtomicBool;

    /// A queue whose numbered submissions all finish when `done` is set.
    struct SlowQueue {
        done: Arc<AtomicBool>,
    }

    struct SlowEvent {
        done: Arc<AtomicBool>,
    }

    impl EventBackend for SlowEvent {
        fn wait(&self) -> Result<()> {
            Ok(())
        }
        fn is_complete(&self) -> Result<bool> {
            Ok(self.done.load(Ordering::Acquire))
        }
        fn elapsed_ns(&self) -> Result<u64> {
            Ok(0)
        }
        fn as_any(&self) -> &dyn Any {
            self
        }
    }

    impl QueueBackend for SlowQueue {
        fn copy(&self, _: u64, _: u64, _: usize, _: &[&dyn EventBackend]) -> Result<Submitted> {
            unreachable!()
        }
        fn fill(&self, _: u64, _: &[u8], _: usize, _: &[&dyn EventBackend]) -> Result<Submitted> {
            unreachable!()
        }
        fn launch(
            &self,
            _: &dyn KernelBackend,
            _: &Launch,
            _: &[RawArgument],
            _: &[&dyn EventBackend],
        ) -> Result<Submitted> {
            unreachable!()
        }
        fn synchronize(&self) -> Result<()> {
            Ok(())
        }
        fn event_after(&self, _sequence: u64) -> Result<Arc<dyn EventBackend>> {
            Ok(Arc::new(SlowEvent {
                done: Arc::clone(&self.done),
            }))
        }
    }

    fn conflicts(pending: &PendingWork, queue: u64, writes: bool) -> usize {
        let mut waits = Vec::new();
        pending.conflicting_work(queue, writes, &mut waits).unwrap();
        waits.len()
    }

    #[test]
    fn numbered_uses_order_other_queues_until_finished() {
        let (done_a, done_b) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicBool::new(false)),
        );
        let a: Arc<dyn QueueBackend> = Arc::new(SlowQueue {
            done: Arc::clone(&done_a),
        });
        let b: Arc<dyn QueueBackend> = Arc::new(SlowQueue {
            done: Arc::clone(&done_b),
        });
        let pending = PendingWork::default();
        // Queue 1 reads: another queue's read need not wait, its write must.
        pending.record(1, &a, &Submitted::Sequence(1), false);
        assert_eq!(conflicts(&pending, 1, true), 0);
        assert_eq!(conflicts(&pending, 2, false), 0);
        assert_eq!(conflicts(&pending, 2, true), 1);
        // Queue 1 writes: now reads on queue 2 wait too; queue 1 itself never waits.
        pending.record(1, &a, &Submitted::Sequence(2), true);
        assert_eq!(conflicts(&pending, 2, false), 1);
        assert_eq!(conflicts(&pending, 1, true), 0);
        // Queue 2's use goes to the locked list; queue 1 must follow it, queue 2 need not.
        pending.record(2, &b, &Submitted::Sequence(1), true);
        assert_eq!(pending.others.load(Ordering::Acquire), 2);
        assert_eq!(conflicts(&pending, 2, true), 1);
        assert_eq!(conflicts(&pending, 1, false), 1);
        assert_eq!(pending.pending_events().len(), 2);
        // Finished work is forgotten.
        done_a.store(true, Ordering::Release);
        assert_eq!(conflicts(&pending, 2, true), 0);
        assert_eq!(pending.owner_finished.load(Ordering::Acquire), 2);
        done_b.store(true, Ordering::Release);
        assert_eq!(conflicts(&pending, 1, true), 0);
        assert!(lock(&pending.uses).is_empty());
        assert_eq!(conflicts(&pending, 1, true), 0);
        assert_eq!(pending.others.load(Ordering::Acquire), 0);
        assert!(pending.pending_events().is_empty());
        // A newer use of queue 1 is pending again.
        done_a.store(false, Ordering::Release);
        pending.record(1, &a, &Submitted::Sequence(3), false);
        assert_eq!(conflicts(&pending, 2, true), 1);
    }
}
