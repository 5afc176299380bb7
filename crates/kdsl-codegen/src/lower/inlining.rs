//! Which device functions are inlined into their callers. Inlining every call made the code
//! grow with the number of paths through the call graph, exponentially in its depth (a chain of
//! functions each calling the previous one twice ran out of memory). A function whose body,
//! with its inlined callees, exceeds a budget and that is called from more than one place stays
//! a real function, called by its callers, so the code stays proportional to the source.

use kdsl_ir::visit::walk_block;
use kdsl_ir::{ExpressionKind, FunctionKind, Module};

/// The most IR nodes (expressions and places) a device function called from several places
/// may hold, its inlined callees included, to be inlined. Every example kernel stays below it.
pub(crate) const INLINE_BUDGET: usize = 2_000;

/// Per function of `module`: whether every call of it is inlined. Kernels never are.
pub(crate) fn inlined_functions(module: &Module) -> Vec<bool> {
    let count = module.functions.len();
    let mut call_sites = vec![0usize; count];
    for function in &module.functions {
        for callee in callees(function) {
            if let Some(sites) = call_sites.get_mut(callee) {
                *sites += 1;
            }
        }
    }
    // Functions come callees first, so a callee's inlined size is known before its callers'.
    let mut sizes = Vec::with_capacity(count);
    let mut inlined = Vec::with_capacity(count);
    for (index, function) in module.functions.iter().enumerate() {
        let mut expressions = 0usize;
        let mut places = 0usize;
        let mut inlined_callees = 0usize;
        walk_block(
            &function.body,
            &mut |expression| {
                expressions += 1;
                if let ExpressionKind::Call { function, .. } = &expression.kind {
                    let callee = function.0 as usize;
                    if inlined.get(callee) == Some(&true) {
                        inlined_callees += sizes.get(callee).copied().unwrap_or(0);
                    }
                }
            },
            &mut |_| places += 1,
        );
        let size = expressions + places + inlined_callees;
        let small = size <= INLINE_BUDGET || call_sites[index] <= 1;
        inlined.push(function.kind == FunctionKind::Device && small);
        sizes.push(size);
    }
    inlined
}

/// The functions `function` calls, once per call site.
fn callees(function: &kdsl_ir::Function) -> Vec<usize> {
    let mut callees = Vec::new();
    walk_block(
        &function.body,
        &mut |expression| {
            if let ExpressionKind::Call { function, .. } = &expression.kind {
                callees.push(function.0 as usize);
            }
        },
        &mut |_| {},
    );
    callees
}
