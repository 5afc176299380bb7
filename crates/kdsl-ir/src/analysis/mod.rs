//! Facts about a module computed once and read by their consumers: the code generator (one
//! `ModuleInfo` per bundle, shared by every target's lowering) and the bundle's kernel metadata
//! (`KernelInfo::from_function` in kdsl-bundle). Results are keyed by function and by node id
//! ([`crate::ids`]), never by memory address, so a copy of the IR keeps them ([`ModuleInfo`],
//! like naga's validator result).
//!
//! - `check_sites.rs`: checked mode's check sites and which functions synchronize.
//! - `buffer_access.rs`: index width and vector alignment of buffer accesses.

pub mod buffer_access;
pub mod check_sites;

pub use check_sites::{CheckSite, CheckSites};

use crate::ir::{FunctionId, Module};

/// What the analyses found in a module.
#[derive(Clone, Debug, Default)]
pub struct ModuleInfo {
    /// Per function (indexed by [`FunctionId`]).
    pub functions: Vec<FunctionInfo>,
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
        let check_sites = checked.then(|| CheckSites::new(&checked_form(module)));
        ModuleInfo {
            functions,
            check_sites,
        }
    }

    pub fn function(&self, id: FunctionId) -> &FunctionInfo {
        &self.functions[id.0 as usize]
    }
}

/// `module` as checked mode compiles it on every target: matrix tiles expanded into plain
/// loops ([`crate::matrix::expand_plain`]) and asynchronous copies into plain loads and
/// stores ([`crate::async_copy::expand_plain`]), so every access is an ordinary checked site.
pub fn checked_form(module: &Module) -> std::borrow::Cow<'_, Module> {
    let mut form = std::borrow::Cow::Borrowed(module);
    if crate::matrix::uses_matrix(&form) {
        form = std::borrow::Cow::Owned(crate::matrix::expand_plain(&form));
    }
    if crate::async_copy::uses_async_copies(&form) {
        form = std::borrow::Cow::Owned(crate::async_copy::expand_plain(&form));
    }
    form
}
