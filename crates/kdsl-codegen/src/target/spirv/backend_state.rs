//! Fresh state for every in-process run of LLVM 22's SPIR-V backend.
//!
//! The backend keeps its module analysis in a static, `llvm::SPIRVModuleAnalysis::MAI`
//! (llvm/llvm-project#160613; after LLVM 22 it is a member of the pass). Each module adds to
//! what the previous one left there, so a second module compiled in one process can get
//! duplicate ids, and two threads compiling at once would race.
//!
//! Where LLVM is linked statically, the build script reads the static's size from LLVM's
//! archive (cfg `kdsl_spirv_state_reset`). Then every in-process run holds one lock and starts
//! on fresh state: the previous run's state is destroyed (LLVM's own destructor of the type)
//! and the static's bytes are put back as they were before any module was compiled. Its
//! default-constructed containers own no memory and it lives at the same address, so those
//! bytes are a default-constructed analysis, the state a fresh process starts from. Without
//! that cfg, only the first module of a process runs in process and later ones in an `llc`
//! child process.
//!
//! The backend also caches, in function statics, the ids that the first module's LLVM context
//! gave the synchronization scopes `subgroup`, `workgroup` and `device`, and reads every later
//! module's scopes by those ids. [`register_sync_scopes`] makes every context give them the
//! same ids.

use inkwell::context::Context;
use std::sync::{Mutex, MutexGuard};

/// The scope names `llvm::getMemScope` caches the ids of, in the order it first asks for them.
const CACHED_SYNC_SCOPES: [&str; 3] = ["subgroup", "workgroup", "device"];

/// Registers the scope names the backend caches in a new `context`, before anything else
/// registers a scope, so that they get the same ids in every context of the process.
pub(crate) fn register_sync_scopes(context: &Context) {
    for name in CACHED_SYNC_SCOPES {
        crate::llvm::sync_scope_id(context, name);
    }
}

/// Proof that the SPIR-V backend starts from fresh state, held for the whole run; it also
/// holds LLVM's command-line options, which carry the backend's extensions.
pub(crate) struct FreshState {
    only_run: MutexGuard<'static, Reset>,
    _options: MutexGuard<'static, ()>,
}

impl FreshState {
    /// After a run the backend left midway (a contained LLVM error or crash): its state may be
    /// half-written, so it is given up (put back to the pristine bytes without being destroyed,
    /// leaking what it held), and later modules of the process run in a child process.
    pub(crate) fn abandon(mut self) {
        self.only_run.abandoned = true;
        #[cfg(kdsl_spirv_state_reset)]
        state::abandon(&self.only_run);
    }
}

/// Serializes in-process runs; holds what is needed to make the next one fresh.
struct Reset {
    /// Whether a run has happened in this process.
    ran: bool,
    /// Whether a run was left midway, after which none runs in process.
    abandoned: bool,
    #[cfg(kdsl_spirv_state_reset)]
    pristine: Option<Box<[u8; state::MODULE_ANALYSIS_BYTES]>>,
}

static ONLY_RUN: Mutex<Reset> = Mutex::new(Reset {
    ran: false,
    abandoned: false,
    #[cfg(kdsl_spirv_state_reset)]
    pristine: None,
});

/// Fresh state for one in-process run (waiting for a run in another thread to end), or `None`
/// when this build cannot give it and the backend must run in a child process.
pub(crate) fn claim_fresh() -> Option<FreshState> {
    let mut reset = ONLY_RUN
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if reset.abandoned {
        return None;
    }
    #[cfg(kdsl_spirv_state_reset)]
    state::make_fresh(&mut reset);
    #[cfg(not(kdsl_spirv_state_reset))]
    if reset.ran {
        return None;
    }
    reset.ran = true;
    Some(FreshState {
        only_run: reset,
        _options: crate::llvm::command_line_options(),
    })
}

#[cfg(kdsl_spirv_state_reset)]
mod state {
    include!(concat!(env!("OUT_DIR"), "/spirv_module_analysis_bytes.rs"));

    extern "C" {
        /// `llvm::SPIRVModuleAnalysis::MAI`, seen as its bytes.
        #[link_name = "_ZN4llvm19SPIRVModuleAnalysis3MAIE"]
        static mut MODULE_ANALYSIS: [u8; MODULE_ANALYSIS_BYTES];
        /// `llvm::SPIRV::ModuleAnalysisInfo::~ModuleAnalysisInfo()` (the Itanium ABI passes
        /// `this` as a C function's first argument).
        #[link_name = "_ZN4llvm5SPIRV18ModuleAnalysisInfoD2Ev"]
        fn destroy_module_analysis(analysis: *mut u8);
    }

    /// Saves the pristine bytes before the first run; before every later one, destroys what
    /// the previous run left and puts the pristine bytes back.
    pub(super) fn make_fresh(reset: &mut super::Reset) {
        // SAFETY: every run of the SPIR-V backend in this process holds the lock `reset`
        // comes from, so nothing reads or writes the static meanwhile; before the first run
        // it holds what its constructor made, and after each run a live analysis, destroyed
        // once before the pristine bytes replace it.
        unsafe {
            let bytes = std::ptr::addr_of_mut!(MODULE_ANALYSIS);
            match &reset.pristine {
                Some(pristine) => {
                    destroy_module_analysis(bytes.cast());
                    *bytes = **pristine;
                }
                None if !reset.ran => reset.pristine = Some(Box::new(*bytes)),
                None => unreachable!("the first run saves the pristine state"),
            }
        }
    }

    /// Puts the pristine bytes back over a half-written analysis, which is never destroyed.
    pub(super) fn abandon(reset: &super::Reset) {
        if let Some(pristine) = &reset.pristine {
            // SAFETY: the caller holds the lock `reset` comes from; the bytes written are a
            // default-constructed analysis at this address (see `make_fresh`).
            unsafe { *std::ptr::addr_of_mut!(MODULE_ANALYSIS) = **pristine };
        }
    }
}

#[cfg(test)]
mod tests {
    /// The only test of this binary that claims the backend: after a run is abandoned, every
    /// later module goes to a child process.
    #[test]
    fn after_an_abandoned_run_none_runs_in_process() {
        let fresh = super::claim_fresh().expect("the backend runs in process at first");
        fresh.abandon();
        assert!(super::claim_fresh().is_none());
    }
}
