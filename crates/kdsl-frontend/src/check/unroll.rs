//! Unroll requests on `for` loops (`unroll`, `unroll(count)`), and the default for loops with
//! a small constant trip count.

use super::constant;
use super::Checker;
use crate::ast;
use kdsl_ir::ErrorCode;
use kdsl_ir::{Block, Diagnostic, Expression, ScalarType, StatementKind, Unroll};

/// Innermost loops with a constant trip count up to this many are fully unrolled when the
/// source asks for nothing.
pub(super) const FULL_UNROLL_DEFAULT_LIMIT: i128 = 16;

/// The largest `unroll(count)` factor accepted.
pub(super) const MAX_UNROLL_COUNT: u32 = 1024;

/// The number of iterations of `for _ in start..end step step`, when all three are constants.
fn constant_trip_count(start: &Expression, end: &Expression, step: &Expression) -> Option<i128> {
    let value = |expression: &Expression| constant::evaluate(expression).ok()?.as_i128();
    let (start, end, step) = (value(start)?, value(end)?, value(step)?);
    if step <= 0 {
        return None;
    }
    Some(if end > start {
        (end - start + step - 1) / step
    } else {
        0
    })
}

/// Whether `block` holds a loop, at any depth.
fn contains_loop(block: &Block) -> bool {
    block.iter().any(|statement| match &statement.kind {
        StatementKind::Loop { .. } => true,
        StatementKind::If { accept, reject, .. } => contains_loop(accept) || contains_loop(reject),
        _ => false,
    })
}

impl Checker<'_> {
    /// The unroll hint of a `for` loop over `start..end step step` with body `body` (already
    /// lowered). A full unroll of a loop whose trip count is not constant is a warning, and
    /// the loop is left to the optimizer.
    pub(super) fn unroll_hint(
        &mut self,
        request: Option<&ast::UnrollRequest>,
        bounds: (&Expression, &Expression, &Expression),
        body: &Block,
    ) -> Unroll {
        let (start, end, step) = bounds;
        let trip_count = constant_trip_count(start, end, step);
        let Some(request) = request else {
            return match trip_count {
                Some(2..=FULL_UNROLL_DEFAULT_LIMIT) if !contains_loop(body) => Unroll::Full,
                _ => Unroll::Default,
            };
        };
        match &request.count {
            None if trip_count.is_some() => Unroll::Full,
            None => {
                self.report(
                    Diagnostic::warning(
                        ErrorCode::W0516,
                        "this loop cannot be fully unrolled: its trip count is not a compile-time constant",
                        request.span,
                        "full unroll requested here",
                    )
                    .with_label(start.span.to(end.span), "not constant")
                    .with_hint("make the bounds and step constants, or ask for a partial unroll with `unroll(4)`"),
                );
                Unroll::Default
            }
            Some(count) => self.unroll_count(count),
        }
    }

    /// `unroll(count)`: a constant from 1 (no unrolling) to [`MAX_UNROLL_COUNT`].
    fn unroll_count(&mut self, count: &ast::Expression) -> Unroll {
        let Some(value) = self.expression(count, Some(ScalarType::U32)) else {
            return Unroll::Default;
        };
        let constant = constant::evaluate(&value)
            .ok()
            .filter(|_| value.ty.is_integer())
            .and_then(|constant| constant.as_i128());
        match constant {
            Some(factor) if (1..=i128::from(MAX_UNROLL_COUNT)).contains(&factor) => {
                Unroll::Count(factor as u32)
            }
            _ => {
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0515,
                        format!(
                            "the unroll factor must be an integer constant from 1 to {MAX_UNROLL_COUNT}"
                        ),
                        count.span,
                        "not a constant in range",
                    )
                    .with_hint("write a literal such as `unroll(4)`, or a module constant; `unroll` alone unrolls fully"),
                );
                Unroll::Default
            }
        }
    }
}
