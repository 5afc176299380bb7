//! Walks over a function body's statements, expressions and places, for analyses that look
//! at every one of them (`buffer_access.rs`, codegen's inlining budget and support check).

use crate::ir::*;

/// Calls `visit` on every expression of `block`, outer ones before those inside them, and
/// `visit_place` on every place (stores, loads, atomics) before its index expressions.
pub fn walk_block(
    block: &Block,
    visit: &mut impl FnMut(&Expression),
    visit_place: &mut impl FnMut(&Place),
) {
    for statement in block {
        match &statement.kind {
            StatementKind::Assign { value, .. } | StatementKind::Evaluate { value } => {
                walk_expression(value, visit, visit_place)
            }
            StatementKind::Store { place, value } => {
                walk_place(place, visit, visit_place);
                walk_expression(value, visit, visit_place);
            }
            StatementKind::VectorStore { place, values } => {
                walk_place(place, visit, visit_place);
                for value in values {
                    walk_expression(value, visit, visit_place);
                }
            }
            StatementKind::Print { arguments, .. } => {
                for argument in arguments {
                    walk_expression(argument, visit, visit_place);
                }
            }
            StatementKind::If {
                condition,
                accept,
                reject,
            } => {
                walk_expression(condition, visit, visit_place);
                walk_block(accept, visit, visit_place);
                walk_block(reject, visit, visit_place);
            }
            StatementKind::Loop {
                body, continuing, ..
            } => {
                walk_block(body, visit, visit_place);
                walk_block(continuing, visit, visit_place);
            }
            StatementKind::Return { value: Some(value) } => {
                walk_expression(value, visit, visit_place)
            }
            // Tiles are whole arrays, not places; the memory operand is read or written at
            // `offset + r * stride + c` for every element (r, c) of the tile.
            StatementKind::Matrix(op) => {
                for value in op.expressions() {
                    walk_expression(value, visit, visit_place);
                }
            }
            StatementKind::Return { value: None }
            | StatementKind::Break
            | StatementKind::Continue
            | StatementKind::Barrier { .. } => {}
        }
    }
}

fn walk_place(
    place: &Place,
    visit: &mut impl FnMut(&Expression),
    visit_place: &mut impl FnMut(&Place),
) {
    visit_place(place);
    for index in &place.indices {
        walk_expression(index, visit, visit_place);
    }
}

/// [`walk_block`] for one expression.
pub fn walk_expression(
    expression: &Expression,
    visit: &mut impl FnMut(&Expression),
    visit_place: &mut impl FnMut(&Place),
) {
    visit(expression);
    match &expression.kind {
        ExpressionKind::Literal(_)
        | ExpressionKind::Parameter(_)
        | ExpressionKind::Variable(_)
        | ExpressionKind::WorkItem { .. } => {}
        ExpressionKind::Load(place) | ExpressionKind::VectorLoad { place, .. } => {
            walk_place(place, visit, visit_place)
        }
        ExpressionKind::Unary { operand, .. } => walk_expression(operand, visit, visit_place),
        ExpressionKind::Binary { left, right, .. }
        | ExpressionKind::ShortCircuit { left, right, .. } => {
            walk_expression(left, visit, visit_place);
            walk_expression(right, visit, visit_place);
        }
        ExpressionKind::Cast { value } => walk_expression(value, visit, visit_place),
        ExpressionKind::DimensionIndex { index, .. } => walk_expression(index, visit, visit_place),
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
            walk_expression(condition, visit, visit_place);
            walk_expression(accept, visit, visit_place);
            walk_expression(reject, visit, visit_place);
        }
        ExpressionKind::Call { arguments, .. } => {
            for argument in arguments {
                if let Argument::Value(value) = argument {
                    walk_expression(value, visit, visit_place);
                }
            }
        }
        ExpressionKind::Math { arguments, .. }
        | ExpressionKind::SubGroup { arguments, .. }
        | ExpressionKind::WorkGroup { arguments, .. } => {
            for argument in arguments {
                walk_expression(argument, visit, visit_place);
            }
        }
        ExpressionKind::Atomic {
            place,
            value,
            comparand,
            ..
        } => {
            walk_place(place, visit, visit_place);
            walk_expression(value, visit, visit_place);
            if let Some(comparand) = comparand {
                walk_expression(comparand, visit, visit_place);
            }
        }
    }
}
