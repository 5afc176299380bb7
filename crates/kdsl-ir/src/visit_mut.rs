//! Rewrites every expression and place of a function body in place (the front end's
//! specialization of kernels with multi-dimensional buffers for contiguous arrays, and the
//! numbering of nodes in [`crate::ids`]).

use crate::ir::*;

/// Calls `visit` on every expression of `block`, inner ones before those holding them,
/// including the indices of places and the values passed to calls.
pub fn rewrite_block(block: &mut Block, visit: &mut impl FnMut(&mut Expression)) {
    walk_block_mut(block, visit, &mut |_| {});
}

/// [`rewrite_block`] for one expression.
pub fn rewrite_expression(expression: &mut Expression, visit: &mut impl FnMut(&mut Expression)) {
    walk_expression_mut(expression, visit, &mut |_| {});
}

/// Calls `visit` on every expression of `block` as [`rewrite_block`] does, and `visit_place`
/// on every place after its indices.
pub fn walk_block_mut(
    block: &mut Block,
    visit: &mut impl FnMut(&mut Expression),
    visit_place: &mut impl FnMut(&mut Place),
) {
    for statement in block {
        match &mut statement.kind {
            StatementKind::Assign { value, .. }
            | StatementKind::Evaluate { value }
            | StatementKind::Return { value: Some(value) } => {
                walk_expression_mut(value, visit, visit_place)
            }
            StatementKind::Store { place, value } => {
                walk_place_mut(place, visit, visit_place);
                walk_expression_mut(value, visit, visit_place);
            }
            StatementKind::VectorStore { place, values } => {
                walk_place_mut(place, visit, visit_place);
                for value in values {
                    walk_expression_mut(value, visit, visit_place);
                }
            }
            StatementKind::Print { arguments, .. } => {
                for argument in arguments {
                    walk_expression_mut(argument, visit, visit_place);
                }
            }
            StatementKind::AsyncCopy(crate::AsyncCopyOp::Copy {
                destination,
                source,
                ..
            }) => {
                walk_place_mut(destination, visit, visit_place);
                walk_place_mut(source, visit, visit_place);
            }
            StatementKind::TileCopy(crate::TileCopyOp::Copy {
                destination,
                row,
                column,
                slot,
                ..
            }) => {
                walk_place_mut(destination, visit, visit_place);
                walk_expression_mut(row, visit, visit_place);
                walk_expression_mut(column, visit, visit_place);
                walk_expression_mut(slot, visit, visit_place);
            }
            StatementKind::TileCopy(crate::TileCopyOp::Store {
                row,
                column,
                source,
                ..
            }) => {
                walk_expression_mut(row, visit, visit_place);
                walk_expression_mut(column, visit, visit_place);
                walk_place_mut(source, visit, visit_place);
            }
            StatementKind::TileCopy(
                crate::TileCopyOp::Wait { slot } | crate::TileCopyOp::Release { slot },
            ) => walk_expression_mut(slot, visit, visit_place),
            StatementKind::TileCopy(crate::TileCopyOp::StoreWait) => {}
            StatementKind::Matrix(op) => match op {
                crate::matrix::MatrixOp::Load { offset, stride, .. }
                | crate::matrix::MatrixOp::Store { offset, stride, .. } => {
                    walk_expression_mut(offset, visit, visit_place);
                    walk_expression_mut(stride, visit, visit_place);
                }
                crate::matrix::MatrixOp::Fill { value, .. } => {
                    walk_expression_mut(value, visit, visit_place)
                }
                crate::matrix::MatrixOp::MultiplyAdd { .. }
                | crate::matrix::MatrixOp::GroupWait { .. } => {}
                crate::matrix::MatrixOp::GroupMultiplyAdd {
                    a_offset,
                    a_chunk,
                    b_offset,
                    b_chunk,
                    ..
                } => {
                    for value in [a_offset, a_chunk, b_offset, b_chunk] {
                        walk_expression_mut(value, visit, visit_place);
                    }
                }
            },
            StatementKind::If {
                condition,
                accept,
                reject,
            } => {
                walk_expression_mut(condition, visit, visit_place);
                walk_block_mut(accept, visit, visit_place);
                walk_block_mut(reject, visit, visit_place);
            }
            StatementKind::Loop {
                body, continuing, ..
            } => {
                walk_block_mut(body, visit, visit_place);
                walk_block_mut(continuing, visit, visit_place);
            }
            StatementKind::Return { value: None }
            | StatementKind::Break
            | StatementKind::Continue
            | StatementKind::Barrier { .. }
            | StatementKind::DeviceFence
            | StatementKind::AsyncCopy(_) => {}
        }
    }
}

fn walk_place_mut(
    place: &mut Place,
    visit: &mut impl FnMut(&mut Expression),
    visit_place: &mut impl FnMut(&mut Place),
) {
    for index in &mut place.indices {
        walk_expression_mut(index, visit, visit_place);
    }
    visit_place(place);
}

/// [`walk_block_mut`] for one expression.
pub fn walk_expression_mut(
    expression: &mut Expression,
    visit: &mut impl FnMut(&mut Expression),
    visit_place: &mut impl FnMut(&mut Place),
) {
    match &mut expression.kind {
        ExpressionKind::Literal(_)
        | ExpressionKind::Parameter(_)
        | ExpressionKind::Variable(_)
        | ExpressionKind::WorkItem { .. } => {}
        ExpressionKind::Load(place) | ExpressionKind::VectorLoad { place, .. } => {
            walk_place_mut(place, visit, visit_place)
        }
        ExpressionKind::Unary { operand, .. } => walk_expression_mut(operand, visit, visit_place),
        ExpressionKind::Cast { value } | ExpressionKind::DimensionIndex { index: value, .. } => {
            walk_expression_mut(value, visit, visit_place)
        }
        ExpressionKind::Binary { left, right, .. }
        | ExpressionKind::ShortCircuit { left, right, .. } => {
            walk_expression_mut(left, visit, visit_place);
            walk_expression_mut(right, visit, visit_place);
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
            walk_expression_mut(condition, visit, visit_place);
            walk_expression_mut(accept, visit, visit_place);
            walk_expression_mut(reject, visit, visit_place);
        }
        ExpressionKind::Call { arguments, .. } => {
            for argument in arguments {
                if let Argument::Value(value) = argument {
                    walk_expression_mut(value, visit, visit_place);
                }
            }
        }
        ExpressionKind::Math { arguments, .. }
        | ExpressionKind::SubGroup { arguments, .. }
        | ExpressionKind::WorkGroup { arguments, .. } => {
            for argument in arguments {
                walk_expression_mut(argument, visit, visit_place);
            }
        }
        ExpressionKind::Atomic {
            place,
            value,
            comparand,
            ..
        } => {
            walk_place_mut(place, visit, visit_place);
            walk_expression_mut(value, visit, visit_place);
            if let Some(comparand) = comparand {
                walk_expression_mut(comparand, visit, visit_place);
            }
        }
    }
    visit(expression);
}
