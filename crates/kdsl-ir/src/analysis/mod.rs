//! Facts about a module computed once and read by their consumers: the code generator (one
//! `ModuleInfo` per bundle, shared by every target's support check and lowering), the bundle's
//! kernel metadata (`KernelInfo::from_function` in kdsl-bundle) and the interpreter. Results
//! are keyed by function and by node id ([`crate::ids`]), never by memory address, so a copy of
//! the IR keeps them ([`ModuleInfo`], like naga's validator result). The analyses walk the IR
//! with [`crate::visit`].
//!
//! - `features.rs`: what each function uses (scalar types, built-ins on their operand types,
//!   matrix shapes, `print`s, barriers) at its first use, and its calls; whether a kernel
//!   synchronizes its work-items.
//! - `check_sites.rs`: checked mode's check sites and which functions synchronize.
//! - `buffer_access.rs`: index width and vector alignment of buffer accesses.
//! - `uniformity/`: the uniformity analysis the front end runs after validation (E0518,
//!   E0519); flow-sensitive, so a walk of its own rather than a visitor, and a checker whose
//!   result is diagnostics rather than a part of `ModuleInfo`.

pub mod buffer_access;
pub mod check_sites;
pub mod features;
pub mod uniformity;

pub use check_sites::{CheckSite, CheckSites};
pub use features::{FirstUse, FunctionFeatures, ModuleFeatures, Use};

use crate::ir::{FunctionId, Module};
use std::borrow::Cow;

/// What the analyses found in a module.
#[derive(Clone, Debug, Default)]
pub struct ModuleInfo {
    /// Per function (indexed by [`FunctionId`]).
    pub functions: Vec<FunctionInfo>,
    /// What each function uses, for the target's feature table and the matrix lowering.
    pub features: ModuleFeatures,
    /// Checked mode's sites, numbered on the module as checked mode compiles it
    /// ([`checked_form`]); `None` when the module is not compiled in checked mode.
    pub check_sites: Option<CheckSites>,
}

/// What the analyses found in one function, with the device functions it calls.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FunctionInfo {
    /// Whether it indexes a buffer with a 64-bit integer, so it can reach elements past 2^32.
    pub wide_buffer_indices: bool,
    /// Per parameter: the address alignment in bytes its vector accesses need beyond the
    /// element's own; 0 where there are none.
    pub buffer_alignments: Vec<u32>,
}

impl ModuleInfo {
    /// Analyses `module`, whose nodes are numbered (as the front end leaves them); `checked`:
    /// also number checked mode's sites.
    pub fn new(module: &Module, checked: bool) -> ModuleInfo {
        let alignments = buffer_access::alignment_table(&module.functions);
        let functions = alignments
            .into_iter()
            .enumerate()
            .map(|(index, buffer_alignments)| FunctionInfo {
                wide_buffer_indices: module.indexes_buffers_with_64_bits(FunctionId(index as u32)),
                buffer_alignments,
            })
            .collect();
        let features = ModuleFeatures::new(module);
        let check_sites = checked.then(|| CheckSites::new(&checked_form(module, &features)));
        ModuleInfo {
            functions,
            features,
            check_sites,
        }
    }

    pub fn function(&self, id: FunctionId) -> &FunctionInfo {
        &self.functions[id.0 as usize]
    }
}

/// `module` (whose features are `features`) as checked mode compiles it on every target:
/// matrix tiles expanded into plain loops ([`crate::matrix::expand_plain`]) and asynchronous copies into plain loads and
/// stores ([`crate::async_copy::expand_plain`]), tile copies too ([`crate::tile_copy::expand_plain`]),
/// so every access is an ordinary checked site.
pub fn checked_form<'m>(module: &'m Module, features: &ModuleFeatures) -> Cow<'m, Module> {
    let mut form = Cow::Borrowed(module);
    if features.uses_matrix() {
        form = Cow::Owned(crate::matrix::expand_plain(&form));
    }
    if features.uses_async_copies() {
        form = Cow::Owned(crate::async_copy::expand_plain(&form));
    }
    if features.uses_tile_copies() {
        form = Cow::Owned(crate::tile_copy::expand_plain(&form));
    }
    form
}
