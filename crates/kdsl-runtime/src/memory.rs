//! Device memory and the work pending on it.
//!
//! Each allocation (or adopted foreign range) is one [`Memory`], shared by the buffer and its
//! views. It remembers, per queue, the last submitted work that used it and whether any of that
//! work writes it. A submission on one queue waits for conflicting work on other queues (a write
//! after anything, or a read after a write), so work on several queues is ordered, not raced.
//! When the last handle goes, memory with unfinished work is retired to its device and freed
//! once that work is done, never earlier.

use crate::backend::EventBackend;
use crate::buffer::MemoryKind;
use crate::device::{Device, DeviceInner};
use std::any::Any;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// The last work one queue submitted that uses a memory range.
struct PendingUse {
    queue: u64,
    event: Arc<dyn EventBackend>,
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
    uses: Mutex<Vec<PendingUse>>,
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
    /// Only other queues' events are queried (finished ones are dropped): the submitting
    /// queue's own entry is replaced by `record` anyway, so the common one-queue case asks the
    /// driver nothing.
    pub fn conflicting_work(
        &self,
        queue: u64,
        writes: bool,
        waits: &mut Vec<Arc<dyn EventBackend>>,
    ) {
        let mut uses = lock(&self.uses);
        uses.retain(|pending| pending.queue == queue || !is_complete(&pending.event));
        for pending in uses.iter() {
            if pending.queue != queue && (writes || pending.writes) {
                waits.push(Arc::clone(&pending.event));
            }
        }
    }

    /// Records a submitted use. On an in-order queue the new event finishes after every earlier
    /// one, so it replaces them (keeping the fact that some of that work writes).
    pub fn record(&self, queue: u64, event: &Arc<dyn EventBackend>, writes: bool) {
        let mut uses = lock(&self.uses);
        match uses.iter_mut().find(|pending| pending.queue == queue) {
            Some(pending) => {
                pending.event = Arc::clone(event);
                pending.writes |= writes;
            }
            None => uses.push(PendingUse {
                queue,
                event: Arc::clone(event),
                writes,
            }),
        }
    }

    fn pending_events(&self) -> Vec<Arc<dyn EventBackend>> {
        let mut uses = lock(&self.uses);
        uses.retain(|pending| !is_complete(&pending.event));
        uses.iter()
            .map(|pending| Arc::clone(&pending.event))
            .collect()
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
