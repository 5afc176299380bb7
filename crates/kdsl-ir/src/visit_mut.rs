//! Rewrites every expression of a function body in place (the front end's specialization of
//! kernels with multi-dimensional buffers for contiguous arrays).

use crate::ir::*;

/// Calls `visit` on every expression of `block`, inner ones before those holding them,
/// including the indices of places and the values passed to calls.
pub fn rewrite_block(block: &mut Block, visit: &mut impl FnMut(&mut Expression)) {
    for statement in block {
        match &mut statement.kind {
            StatementKind::Assign { value, .. }
            | StatementKind::Evaluate { value }
            | StatementKind::Return { value: Some(value) } => rewrite_expression(value, visit),
            StatementKind::Store { place, value } => {
                rewrite_place(place, visit);
                rewrite_expression(value, visit);
            }
            StatementKind::VectorStore { place, values } => {
                rewrite_place(place, visit);
                for value in values {
                    rewrite_expression(value, visit);
                }
            }
            StatementKind::Print { arguments, .. } => {
                for argument in arguments {
                    rewrite_expression(argument, visit);
                }
            }
            StatementKind::Matrix(op) => match op {
                crate::matrix::MatrixOp::Load { offset, stride, .. }
                | crate::matrix::MatrixOp::Store { offset, stride, .. } => {
                    rewrite_expression(offset, visit);
                    rewrite_expression(stride, visit);
                }
                crate::matrix::MatrixOp::Fill { value, .. } => rewrite_expression(value, visit),
                crate::matrix::MatrixOp::MultiplyAdd { .. } => {}
            },
            StatementKind::If {
                condition,
                accept,
                reject,
            } => {
                rewrite_expression(condition, visit);
                rewrite_block(accept, visit);
                rewrite_block(reject, visit);
            }
            StatementKind::Loop {
                body, continuing, ..
            } => {
                rewrite_block(body, visit);
                rewrite_block(continuing, visit);
            }
            StatementKind::Return { value: None }
            | StatementKind::Break
            | StatementKind::Continue
            | StatementKind::Barrier { .. } => {}
        }
    }
}

fn rewrite_place(place: &mut Place, visit: &mut impl FnMut(&mut Expression)) {
    for index in &mut place.indices {
        rewrite_expression(index, visit);
    }
}

/// [`rewrite_block`] for one expression.
pub fn rewrite_expression(expression: &mut Expression, visit: &mut impl FnMut(&mut Expression)) {
    match &mut expression.kind {
        ExpressionKind::Literal(_)
        | ExpressionKind::Parameter(_)
        | ExpressionKind::Variable(_)
        | ExpressionKind::WorkItem { .. } => {}
        ExpressionKind::Load(place) | ExpressionKind::VectorLoad { place, .. } => {
            rewrite_place(place, visit)
        }
        ExpressionKind::Unary { operand, .. } => rewrite_expression(operand, visit),
        ExpressionKind::Cast { value } | ExpressionKind::DimensionIndex { index: value, .. } => {
            rewrite_expression(value, visit)
        }
        ExpressionKind::Binary { left, right, .. }
        | ExpressionKind::ShortCircuit { left, right, .. } => {
            rewrite_expression(left, visit);
            rewrite_expression(right, visit);
        }
        ExpressionKind::Select {
            condition,
            accept,
            reject,
        }
        | ExpressionKind::Conditional {
            condition,
            accept,
            reject,
        } => {
            rewrite_expression(condition, visit);
            rewrite_expression(accept, visit);
            rewrite_expression(reject, visit);
        }
        ExpressionKind::Call { arguments, .. } => {
            for argument in arguments {
                if let Argument::Value(value) = argument {
                    rewrite_expression(value, visit);
                }
            }
        }
        ExpressionKind::Math { arguments, .. }
        | ExpressionKind::SubGroup { arguments, .. }
        | ExpressionKind::WorkGroup { arguments, .. } => {
            for argument in arguments {
                rewrite_expression(argument, visit);
            }
        }
        ExpressionKind::Atomic {
            place,
            value,
            comparand,
            ..
        } => {
            rewrite_place(place, visit);
            rewrite_expression(value, visit);
            if let Some(comparand) = comparand {
                rewrite_expression(comparand, visit);
            }
        }
    }
    visit(expression);
}
