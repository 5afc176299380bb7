//! Which device functions are inlined into their callers. Inlining every call made the code
//! grow with the number of paths through the call graph, exponentially in its depth (a chain of
//! functions each calling the previous one twice ran out of memory). A function whose body,
//! with its inlined callees, exceeds a budget and that is called from more than one place stays
//! a real function, called by its callers, so the code stays proportional to the source. A loop
//! that asks to be unrolled counts as often as LLVM may copy it: calls inside unrolled loops
//! multiply the code too.

use kdsl_ir::analysis::ModuleFeatures;
use kdsl_ir::visit::{visit_block, Access, Visitor};
use kdsl_ir::{
    Block, Expression, ExpressionKind, FunctionKind, Module, Place, Span, Statement, StatementKind,
    Unroll,
};

/// The most IR nodes (statements, expressions and places) a device function called from
/// several places may hold, its inlined callees and unrolled loops included, to be inlined.
/// Every example kernel stays below it. Measured on the 2-core development machine
/// (2026-12-03, `kdsl compile` for SPIR-V, PTX and AMDGPU): the examples' bundles are the same
/// bytes for budgets from 250 to 32,000 and without one; a 30-deep chain of functions each
/// calling the previous one twice takes 0.25 s at 250, 0.4 s here, 1.1 s at 8,000 and 5.5 s
/// at 32,000 (a 16-deep one took over 60 s without a budget), so this leaves room to inline
/// larger helpers while keeping such graphs cheap.
pub(crate) const INLINE_BUDGET: usize = 2_000;

/// Per function of `module`: whether every call of it is inlined. Kernels never are.
/// `features`: the module's, or those of the module it was expanded from (expanding matrix
/// tiles adds no calls).
pub(crate) fn inlined_functions(module: &Module, features: &ModuleFeatures) -> Vec<bool> {
    let count = module.functions.len();
    let mut call_sites = vec![0usize; count];
    for callee in features.functions.iter().flat_map(|f| &f.calls) {
        if let Some(sites) = call_sites.get_mut(callee.0 as usize) {
            *sites += 1;
        }
    }
    // Functions come callees first, so a callee's inlined size is known before its callers'.
    let mut sizes = Vec::with_capacity(count);
    let mut inlined = Vec::with_capacity(count);
    for (index, function) in module.functions.iter().enumerate() {
        let size = Sizes::block(&inlined, &sizes, &function.body);
        let small = size <= INLINE_BUDGET || call_sites[index] <= 1;
        inlined.push(function.kind == FunctionKind::Device && small);
        sizes.push(size);
    }
    inlined
}

/// How often LLVM may copy the body of a loop that asks to be unrolled completely: the front
/// end asks so for innermost loops of up to 16 iterations; beyond that LLVM's own threshold
/// on the unrolled size stops it.
const FULL_UNROLL_COPIES: usize = 16;

/// Counts IR nodes (statements, expressions, places), with the inlined callees' sizes at their
/// calls and an unrolled loop's body as often as it is copied.
struct Sizes<'a> {
    inlined: &'a [bool],
    sizes: &'a [usize],
    /// How often the enclosing loops copy the code being walked, one entry per loop.
    copies: Vec<usize>,
    total: usize,
}

impl Sizes<'_> {
    fn block(inlined: &[bool], sizes: &[usize], block: &Block) -> usize {
        let mut counter = Sizes {
            inlined,
            sizes,
            copies: Vec::new(),
            total: 0,
        };
        visit_block(block, &mut counter);
        counter.total
    }

    fn count(&mut self, nodes: usize) {
        let copies = self.copies.last().copied().unwrap_or(1);
        self.total = self.total.saturating_add(nodes.saturating_mul(copies));
    }
}

impl Visitor for Sizes<'_> {
    fn enter_statement(&mut self, statement: &Statement) {
        match &statement.kind {
            // A native matrix operation is a handful of intrinsics.
            StatementKind::Matrix(_) => self.count(9),
            StatementKind::Loop { unroll, .. } => {
                self.count(1);
                let copies = match unroll {
                    Unroll::Default => 1,
                    Unroll::Full => FULL_UNROLL_COPIES,
                    Unroll::Count(count) => *count as usize,
                };
                let outer = self.copies.last().copied().unwrap_or(1);
                self.copies.push(outer.saturating_mul(copies.max(1)));
            }
            // As its plain form, a load and a store per element.
            StatementKind::AsyncCopy(kdsl_ir::AsyncCopyOp::Copy { count, .. }) => {
                self.count(1 + 2 * *count as usize)
            }
            _ => self.count(1),
        }
    }

    fn leave_statement(&mut self, statement: &Statement) {
        if let StatementKind::Loop { .. } = statement.kind {
            self.copies.pop();
        }
    }

    fn enter_expression(&mut self, expression: &Expression) {
        self.count(1);
        if let ExpressionKind::Call { function, .. } = &expression.kind {
            let callee = function.0 as usize;
            if self.inlined.get(callee) == Some(&true) {
                self.count(self.sizes.get(callee).copied().unwrap_or(0));
            }
        }
    }

    fn enter_place(&mut self, _: &Place, _: Access, _: Span) {
        self.count(1);
    }
}
