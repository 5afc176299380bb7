//! Meeting points for the work-items of a group: `barrier()` and sub-group operations.
//!
//! A [`Rendezvous`] is a reusable barrier for a fixed set of participants that also gathers one
//! value from each of them. It detects divergence instead of hanging: participants arriving at
//! different statements, or some participants finishing while others wait. Any failure in the
//! group aborts every rendezvous so waiting work-items return at once.

use kdsl_ir::Span;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// Why a work-item could not pass a rendezvous.
#[derive(Debug)]
pub(crate) enum RendezvousFailure {
    /// Another work-item of the group failed; this one stops quietly.
    Aborted,
    /// The participants did not all reach the same statement.
    Divergent { span: Span, message: String },
}

struct RendezvousState {
    /// Participants waiting in the current round.
    arrived: usize,
    /// Participants that finished the kernel and will never arrive again.
    finished: usize,
    /// Bumped when a round completes; waiters watch it.
    round: u64,
    /// The statement the current round's first arrival is at.
    span: Option<Span>,
    /// One value per participant for the current round.
    slots: Vec<u64>,
    /// The values of the last completed round.
    completed: Arc<Vec<u64>>,
}

pub(crate) struct Rendezvous {
    participants: usize,
    state: Mutex<RendezvousState>,
    wake: Condvar,
}

impl Rendezvous {
    pub(crate) fn new(participants: usize) -> Rendezvous {
        Rendezvous {
            participants,
            state: Mutex::new(RendezvousState {
                arrived: 0,
                finished: 0,
                round: 0,
                span: None,
                slots: vec![0; participants],
                completed: Arc::new(Vec::new()),
            }),
            wake: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, RendezvousState> {
        // A poisoned lock means a work-item thread panicked, which is a bug; keep going so the
        // panic is reported by the scope rather than as a second panic here.
        self.state
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// Waits until every participant has arrived (at the statement `span`), and returns the
    /// value each one brought, indexed by participant.
    pub(crate) fn arrive(
        &self,
        participant: usize,
        value: u64,
        span: Span,
        what: &str,
        aborted: &AtomicBool,
    ) -> Result<Arc<Vec<u64>>, RendezvousFailure> {
        let mut state = self.lock();
        if aborted.load(Ordering::Acquire) {
            return Err(RendezvousFailure::Aborted);
        }
        match state.span {
            Some(first) if first != span => {
                return Err(RendezvousFailure::Divergent {
                    span,
                    message: format!(
                        "work-items reached different {what} statements (bytes {}..{} and {}..{}) at once",
                        first.start, first.end, span.start, span.end
                    ),
                });
            }
            _ => state.span = Some(span),
        }
        state.slots[participant] = value;
        state.arrived += 1;
        if state.arrived + state.finished == self.participants {
            if state.finished > 0 {
                return Err(self.unreached(&state, what));
            }
            let completed = Arc::new(state.slots.clone());
            state.completed = completed.clone();
            state.arrived = 0;
            state.span = None;
            state.round += 1;
            self.wake.notify_all();
            return Ok(completed);
        }
        let round = state.round;
        while state.round == round {
            if aborted.load(Ordering::Acquire) {
                return Err(RendezvousFailure::Aborted);
            }
            state = self
                .wake
                .wait(state)
                .unwrap_or_else(|poison| poison.into_inner());
        }
        Ok(state.completed.clone())
    }

    /// Records that a participant finished; fails if others wait for it at a rendezvous.
    pub(crate) fn finish(&self, what: &str) -> Result<(), RendezvousFailure> {
        let mut state = self.lock();
        state.finished += 1;
        if state.arrived > 0 && state.arrived + state.finished == self.participants {
            return Err(self.unreached(&state, what));
        }
        Ok(())
    }

    fn unreached(&self, state: &RendezvousState, what: &str) -> RendezvousFailure {
        RendezvousFailure::Divergent {
            span: state.span.unwrap_or_default(),
            message: format!(
                "{what} reached by {} of {} work-items; the other {} finished without reaching it",
                state.arrived, self.participants, state.finished
            ),
        }
    }

    /// Wakes every waiter so it can see that the group was aborted.
    pub(crate) fn wake_all(&self) {
        let _state = self.lock();
        self.wake.notify_all();
    }
}
