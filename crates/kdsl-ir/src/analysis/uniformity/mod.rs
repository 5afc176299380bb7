//! The uniformity analysis: every `barrier()` (and work-group collective) must be reached by
//! every work-item of the work-group, every sub-group operation by every work-item of the
//! sub-group.
//!
//! Each value gets a level of a three-level lattice, [`Uniformity`]: the same in the whole
//! work-group, the same within each sub-group, or possibly different in every work-item.
//! Literals, scalar kernel parameters and group-wide queries are uniform; ids vary, and so does
//! anything read from memory except an element of a private array that only uniform values
//! were stored in, or of a buffer nothing writes during the launch, at a uniform index. A
//! kernel's read-only buffer is such a buffer (no writable one overlaps it); a device
//! function's read-only buffer parameter is one only in a call that passes such a buffer, not
//! a writable one. Operators take the join of their operands, and a variable assigned where
//! control is divergent becomes at least as varying as that control.
//!
//! The control flow has a level too: the join of the conditions of the enclosing `if`s, of
//! every earlier divergent `return` of the function (whoever took it is gone), and for a loop
//! of the conditions under which some work-items leave it (`break`, `return`, its own condition)
//! while others go round again. After a loop control is back at the loop's level (every
//! work-item leaves it in the end), unless a divergent `return` happened inside.
//!
//! The analysis is flow-sensitive and structured: it walks a function's body in order, joins
//! the branches of an `if`, and keeps, for every loop, the state at its head and the level of
//! its exits. When a pass raised either after the loop's body had been walked, it walks the
//! whole function again; the lattice is finite and every step only raises levels, so this
//! ends, and each pass is linear in the size of the function (nested loops do not multiply).
//!
//! A device function is analysed with the uniformity of its actual arguments, once per
//! function and vector of argument levels, and reports inside itself only for the levels it
//! is called with. A call to a function that (transitively) contains a barrier or a sub-group
//! operation is itself such an operation at the call site.
//!
//! - `rules.rs`: the lattice and the rules of each operation (what it needs, what it gives).
//! - `levels.rs`: a value's and the control flow's level, with where non-uniformity comes from.
//! - `walk.rs`: the walk of one function for given argument levels.
//! - `report.rs`: the diagnostics, with the condition that made control divergent.

mod levels;
mod report;
mod rules;
mod walk;

pub use rules::{
    sub_group_operation, work_group_operation, work_item_query, OperationUniformity, Uniformity,
};

use crate::codes::ErrorCode;
use crate::diagnostic::Diagnostic;
use crate::ir::*;
use levels::{Need, Value};
use std::collections::{HashMap, HashSet};
use walk::FunctionAnalysis;

/// Checks that every barrier and sub-group operation of the module's kernels (and of the
/// device functions they call) runs under control flow that is uniform enough. Returns the
/// errors, `E0518` for barriers and `E0519` for sub-group operations. The module must be valid
/// ([`crate::validate()`]).
pub fn check_uniformity(module: &Module) -> Vec<Diagnostic> {
    let mut analyzer = Analyzer {
        module,
        summaries: HashMap::new(),
    };
    let mut roots = Vec::new();
    for (index, function) in module.functions.iter().enumerate() {
        if function.kind == FunctionKind::Kernel {
            let id = FunctionId(index as u32);
            let levels = vec![Uniformity::Uniform; function.parameters.len()];
            let key = (id, levels);
            analyzer.summary(&key);
            roots.push(key);
        }
    }
    // Every analysis reached from a kernel, each once, in the order found.
    let mut seen: HashSet<Key> = HashSet::new();
    let mut stack: Vec<Key> = roots.into_iter().rev().collect();
    let mut reported: HashSet<(ErrorCode, Option<(u32, u32)>)> = HashSet::new();
    let mut diagnostics = Vec::new();
    while let Some(key) = stack.pop() {
        if !seen.insert(key.clone()) {
            continue;
        }
        let Some(summary) = analyzer.summaries.get(&key) else {
            continue;
        };
        for diagnostic in &summary.diagnostics {
            let place = diagnostic.primary_span().map(|s| (s.start, s.end));
            if reported.insert((diagnostic.code, place)) {
                diagnostics.push(diagnostic.clone());
            }
        }
        stack.extend(summary.calls.iter().rev().cloned());
    }
    diagnostics.sort_by_key(|d| d.primary_span().map(|s| (s.start, s.end)));
    diagnostics
}

/// A function and the levels of its parameters (a buffer's is uniform when nothing writes it
/// during the launch, varying otherwise).
type Key = (FunctionId, Vec<Uniformity>);

struct Analyzer<'m> {
    module: &'m Module,
    summaries: HashMap<Key, Summary>,
}

/// What a caller needs to know of a callee analysed for some argument levels.
#[derive(Clone, Debug)]
struct Summary {
    /// The join of the returned values.
    result: Value,
    /// The strictest requirement of the operations it contains.
    needs: Option<Need>,
    /// Errors inside the function, for these argument levels.
    diagnostics: Vec<Diagnostic>,
    /// The analyses of the functions it calls.
    calls: Vec<Key>,
    /// Per parameter: the join of what the function stores through it when it is a private
    /// array (a tuple result's hidden array, say), with the control of each store.
    array_stores: Vec<Value>,
}

impl Analyzer<'_> {
    fn summary(&mut self, key: &Key) -> Summary {
        if let Some(summary) = self.summaries.get(key) {
            return summary.clone();
        }
        let summary = FunctionAnalysis::run(self, key);
        self.summaries.insert(key.clone(), summary.clone());
        summary
    }
}
