//! Where the time of compiling for one target goes, for `kdsl compile --timings`.

use std::time::{Duration, Instant};

/// The wall-clock time of each phase of compiling one module for one target.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TargetTimings {
    /// The target, as `TargetSpec` displays it (`ptx:sm_75`).
    pub target: String,
    /// Creating the LLVM target machine.
    pub target_machine: Duration,
    /// Lowering the IR to LLVM IR and running LLVM's verifier on it.
    pub lowering: Duration,
    /// Opening the math library's bitcode and linking the functions the module calls.
    pub library: Duration,
    /// LLVM's optimization pipeline (`default<O3>` and the passes after it).
    pub optimization: Duration,
    /// The target's backend: instruction selection to SPIR-V, PTX or an object file.
    pub backend: Duration,
    /// Linking the AMDGPU object into a code object with lld (in process or `ld.lld`).
    pub linking: Duration,
    /// Everything else: printing the optimized LLVM IR, checking the SPIR-V entry points.
    pub other: Duration,
    /// Where the backend ran: `in process` or the child process it ran in (`llc-22`).
    pub backend_runs: String,
}

impl TargetTimings {
    pub fn total(&self) -> Duration {
        self.target_machine
            + self.lowering
            + self.library
            + self.optimization
            + self.backend
            + self.linking
            + self.other
    }

    /// The phases with their names, in pipeline order.
    pub fn phases(&self) -> [(&'static str, Duration); 7] {
        [
            ("target machine", self.target_machine),
            ("lowering", self.lowering),
            ("library loading", self.library),
            ("optimization", self.optimization),
            ("backend", self.backend),
            ("linking", self.linking),
            ("other", self.other),
        ]
    }
}

/// Measures consecutive phases: each call to [`Stopwatch::lap`] returns the time since the
/// previous one.
pub(crate) struct Stopwatch {
    last: Instant,
}

impl Stopwatch {
    pub fn start() -> Stopwatch {
        Stopwatch {
            last: Instant::now(),
        }
    }

    pub fn lap(&mut self) -> Duration {
        let now = Instant::now();
        let elapsed = now - self.last;
        self.last = now;
        elapsed
    }
}
