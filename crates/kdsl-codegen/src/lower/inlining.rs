//! Which device functions are inlined into their callers. Inlining every call made the code
//! grow with the number of paths through the call graph, exponentially in its depth (a chain of
//! functions each calling the previous one twice ran out of memory). A function whose body,
//! with its inlined callees, exceeds a budget and that is called from more than one place stays
//! a real function, called by its callers, so the code stays proportional to the source. A loop
//! that asks to be unrolled counts as often as LLVM may copy it: calls inside unrolled loops
//! multiply the code too.

use kdsl_ir::visit::{walk_block, walk_expression};
use kdsl_ir::{
    Block, Expression, ExpressionKind, FunctionKind, Module, Place, Statement, StatementKind,
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
        let size = Sizes {
            inlined: &inlined,
            sizes: &sizes,
        }
        .block(&function.body);
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
}

impl Sizes<'_> {
    fn block(&self, block: &Block) -> usize {
        block.iter().fold(0, |total, statement| {
            total.saturating_add(self.statement(statement))
        })
    }

    fn statement(&self, statement: &Statement) -> usize {
        let own = match &statement.kind {
            StatementKind::Assign { value, .. }
            | StatementKind::Evaluate { value }
            | StatementKind::Return { value: Some(value) } => self.expression(value),
            StatementKind::Store { place, value } => {
                self.place(place).saturating_add(self.expression(value))
            }
            StatementKind::VectorStore { place, values } => {
                values.iter().fold(self.place(place), |total, value| {
                    total.saturating_add(self.expression(value))
                })
            }
            StatementKind::Print { arguments, .. } => {
                arguments.iter().fold(0usize, |total, value| {
                    total.saturating_add(self.expression(value))
                })
            }
            StatementKind::If {
                condition,
                accept,
                reject,
            } => self
                .expression(condition)
                .saturating_add(self.block(accept))
                .saturating_add(self.block(reject)),
            StatementKind::Loop {
                body,
                continuing,
                unroll,
            } => {
                let copies = match unroll {
                    Unroll::Default => 1,
                    Unroll::Full => FULL_UNROLL_COPIES,
                    Unroll::Count(count) => *count as usize,
                };
                let once = self.block(body).saturating_add(self.block(continuing));
                once.saturating_mul(copies.max(1))
            }
            // A native matrix operation is a handful of intrinsics.
            StatementKind::Matrix(op) => {
                op.expressions().into_iter().fold(8usize, |total, value| {
                    total.saturating_add(self.expression(value))
                })
            }
            StatementKind::AsyncCopy(kdsl_ir::AsyncCopyOp::Copy {
                destination,
                source,
                count,
            }) => (*count as usize)
                .saturating_add(self.place(destination))
                .saturating_add(self.place(source)),
            StatementKind::Return { value: None }
            | StatementKind::Break
            | StatementKind::Continue
            | StatementKind::Barrier { .. }
            | StatementKind::AsyncCopy(_) => 0,
        };
        own.saturating_add(1)
    }

    fn place(&self, place: &Place) -> usize {
        place.indices.iter().fold(1, |total, index| {
            total.saturating_add(self.expression(index))
        })
    }

    fn expression(&self, expression: &Expression) -> usize {
        let mut size = 0usize;
        let mut places = 0usize;
        walk_expression(
            expression,
            &mut |expression| {
                size = size.saturating_add(1);
                if let ExpressionKind::Call { function, .. } = &expression.kind {
                    let callee = function.0 as usize;
                    if self.inlined.get(callee) == Some(&true) {
                        let inlined = self.sizes.get(callee).copied().unwrap_or(0);
                        size = size.saturating_add(inlined);
                    }
                }
            },
            &mut |_| places += 1,
        );
        size.saturating_add(places)
    }
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
