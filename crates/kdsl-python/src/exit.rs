//! A prompt interpreter exit while kernels still run.
//!
//! A launch cannot be cancelled, and two waits at exit would last until the kernels end (for
//! ever for one that never does): dpctl's at-exit wait for the events of its
//! `SequentialOrderManager` (where launches on dpnp's queues are recorded) and the OpenCL CPU
//! runtime's library destructor, which waits for its tasks. So the launches are remembered
//! here, and when Python's at-exit hook of `kdsl` finds one still running it arms a C-level
//! exit handler: after Python has finalized (its own at-exit hooks, buffered output flushed),
//! the process ends with the exit status Python chose, without running the library
//! destructors that would wait. Nothing is freed under the running kernels: the process ends.

use pyo3::prelude::*;
use pyo3::sync::MutexExt;
use std::collections::VecDeque;
use std::sync::Mutex;

/// How many of the latest launches are remembered. Nothing is asked of the driver per launch
/// (asking a launch whether it completed can make it a driver event, which launches avoid),
/// so older ones are forgotten by count: on an in-order queue the latest launch ends after
/// all earlier ones, and an out-of-order queue's long kernel is missed only behind this many
/// later launches.
const REMEMBERED: usize = 256;

/// The latest launches, oldest first.
static LATEST: Mutex<VecDeque<kdsl_runtime::Event>> = Mutex::new(VecDeque::new());

/// Remembers a submitted launch on a SYCL device. The waits at exit are SYCL's (dpctl's and
/// the OpenCL CPU runtime's); CUDA and HIP launches are not remembered, because asking their
/// events at exit, after CuPy or PyTorch tore down their streams and contexts, crashed the
/// process (seen on the H200).
pub(crate) fn note_launch(py: Python<'_>, event: &kdsl_runtime::Event) {
    if event.device().info().backend != kdsl_runtime::BackendKind::Sycl {
        return;
    }
    let mut latest = LATEST
        .lock_py_attached(py)
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if latest.len() == REMEMBERED {
        latest.pop_front();
    }
    latest.push_back(event.clone());
}

/// Whether a remembered launch is still running (one whose state cannot be read counts as
/// finished).
fn any_running(py: Python<'_>) -> bool {
    let latest = LATEST
        .lock_py_attached(py)
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    latest
        .iter()
        .any(|event| !event.is_complete().unwrap_or(true))
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod c_exit {
    use std::ffi::{c_int, c_void};

    extern "C" {
        fn on_exit(function: extern "C" fn(c_int, *mut c_void), argument: *mut c_void) -> c_int;
        fn fflush(stream: *mut c_void) -> c_int;
        fn _exit(status: c_int) -> !;
    }

    /// Runs inside `exit(status)`, before the handlers registered earlier (C++ destructors of
    /// the SYCL and OpenCL libraries, which were loaded before) and the libraries' own
    /// destructors: flushes C's buffered output and ends the process with `status`.
    extern "C" fn end_now(status: c_int, _argument: *mut c_void) {
        // SAFETY: `fflush(NULL)` flushes every C stream; `_exit` ends the process at once.
        unsafe {
            fflush(std::ptr::null_mut());
            _exit(status)
        }
    }

    /// Registers [`end_now`]; false where the C library refused.
    pub fn arm() -> bool {
        // SAFETY: `end_now` is a plain C function that ignores its argument.
        unsafe { on_exit(end_now, std::ptr::null_mut()) == 0 }
    }
}

/// For `kdsl`'s at-exit hook: if a launch is still running, arms the prompt exit and returns
/// True (the hook then keeps dpctl from waiting for the launch too); else False and nothing
/// changes.
#[pyfunction]
pub(crate) fn arm_prompt_exit(py: Python<'_>) -> bool {
    static ARMED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if !any_running(py) {
        return false;
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    let armed = *ARMED.get_or_init(c_exit::arm);
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let armed = *ARMED.get_or_init(|| false);
    armed
}
