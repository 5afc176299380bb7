//! Waiting for submissions from Python: interruptibly (Ctrl-C ends a wait, never the work),
//! and keeping host memory alive for copies a Python caller stopped waiting for.

use crate::errors::OrRaise;
use kdsl_runtime::RuntimeError;
use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use std::sync::Mutex;

/// Waits for every event, even after one fails; the first error.
pub(crate) fn wait_all(events: &[kdsl_runtime::Event]) -> Result<(), RuntimeError> {
    let mut first_error = None;
    for event in events {
        if let Err(error) = event.wait() {
            first_error.get_or_insert(error);
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// Returns once `event` has completed, or with the exception of a Python signal handler
/// (KeyboardInterrupt for Ctrl-C) that ran meanwhile. A driver's wait cannot be interrupted,
/// so the event is polled, detached from Python: for the first 100 µs without sleeping (a
/// sleep lasts at least the timer slack, 50 µs, which short kernels would pay), then with
/// pauses of 200 µs between signal checks.
pub(crate) fn wait_interruptibly(py: Python<'_>, event: &kdsl_runtime::Event) -> PyResult<()> {
    let spin = std::time::Duration::from_micros(100);
    let pause = std::time::Duration::from_micros(200);
    let complete = py.detach(|| -> Result<bool, RuntimeError> {
        let started = std::time::Instant::now();
        while started.elapsed() < spin {
            if event.is_complete()? {
                return Ok(true);
            }
            std::thread::yield_now();
        }
        Ok(false)
    });
    if complete.or_raise(py)? {
        return Ok(());
    }
    while !py.detach(|| event.is_complete()).or_raise(py)? {
        py.detach(|| std::thread::sleep(pause));
        py.check_signals()?;
    }
    Ok(())
}

/// Host memory whose copies were still running when a signal handler's exception
/// (KeyboardInterrupt) ended the wait for them: the objects owning it are kept here until the
/// copies are done, so that Python cannot free memory a copy still writes.
static ABANDONED: Mutex<Vec<(Vec<kdsl_runtime::Event>, Py<PyAny>)>> = Mutex::new(Vec::new());

/// Releases the abandoned host memory whose copies are done.
pub(crate) fn release_abandoned(py: Python<'_>) {
    let mut abandoned = ABANDONED
        .lock_py_attached(py)
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if abandoned.is_empty() {
        return;
    }
    let (done, pending): (Vec<_>, Vec<_>) =
        std::mem::take(&mut *abandoned)
            .into_iter()
            .partition(|(copies, _)| {
                copies
                    .iter()
                    .all(|copy| copy.is_complete().unwrap_or(false))
            });
    *abandoned = pending;
    drop(abandoned);
    // Dropped with no lock held: the last reference of an array runs Python.
    drop(done);
}

/// Waits for the copies of a NumPy launch, interruptibly; when interrupted, `keep_alive`
/// (the arrays) stays referenced until the copies are done.
pub(crate) fn wait_for_host_copies(
    py: Python<'_>,
    copies: Vec<kdsl_runtime::Event>,
    keep_alive: Py<PyAny>,
) -> PyResult<()> {
    for (position, copy) in copies.iter().enumerate() {
        if let Err(interrupted) = wait_interruptibly(py, copy) {
            let pending = copies[position..].to_vec();
            ABANDONED
                .lock_py_attached(py)
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .push((pending, keep_alive));
            return Err(interrupted);
        }
    }
    py.detach(|| wait_all(&copies)).or_raise(py)
}
