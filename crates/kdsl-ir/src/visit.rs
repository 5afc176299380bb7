//! The one walker over a function body's statements, expressions and places, in evaluation
//! order, with hooks before and after each node ([`Visitor`]). Analyses ([`crate::analysis`]:
//! features, check sites, buffer accesses; codegen's inlining budget) are visitors;
//! [`walk_block`] is the short form for a pair of closures.
//!
//! Order: a statement's operands as the statement evaluates them (a store's value before its
//! place, an atomic's place before its value), an expression's operands left to right, a
//! place's indices before the place is accessed. `enter_*` runs before a node's children,
//! `leave_*` after them.

use crate::ir::*;
use crate::span::Span;

/// How a place is accessed; the visitor's place hooks get it with the span of the access (the
/// loading expression's, or the storing statement's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Load,
    /// A vector load of `width` elements ([`ExpressionKind::VectorLoad`]).
    VectorLoad(u8),
    Store,
    /// A vector store of `width` elements ([`StatementKind::VectorStore`]).
    VectorStore(u8),
    Atomic,
    /// The local destination of an asynchronous copy of `count` elements, from the place's
    /// element on ([`crate::async_copy::AsyncCopyOp::Copy`]).
    CopyTo(u8),
    /// The global source of an asynchronous copy of `count` elements.
    CopyFrom(u8),
    /// The local destination of a tile copy, the box laid out from the place's element on
    /// ([`crate::tile_copy::TileCopyOp::Copy`]); its source is a whole 2-D buffer.
    TileTo,
    /// The local source of a tile store, the box laid out from the place's element on
    /// ([`crate::tile_copy::TileCopyOp::Store`]); its destination is a whole 2-D buffer.
    TileFrom,
}

/// Hooks called by [`visit_block`]; each does nothing unless implemented.
pub trait Visitor {
    fn enter_statement(&mut self, _statement: &Statement) {}
    fn leave_statement(&mut self, _statement: &Statement) {}
    fn enter_expression(&mut self, _expression: &Expression) {}
    fn leave_expression(&mut self, _expression: &Expression) {}
    fn enter_place(&mut self, _place: &Place, _access: Access, _span: Span) {}
    fn leave_place(&mut self, _place: &Place, _access: Access, _span: Span) {}
}

/// Walks every statement of `block` and everything inside it with `visitor`.
pub fn visit_block(block: &Block, visitor: &mut impl Visitor) {
    for statement in block {
        visit_statement(statement, visitor);
    }
}

/// [`visit_block`] for one statement.
pub fn visit_statement(statement: &Statement, visitor: &mut impl Visitor) {
    visitor.enter_statement(statement);
    let span = statement.span;
    match &statement.kind {
        StatementKind::Assign { value, .. }
        | StatementKind::Evaluate { value }
        | StatementKind::Return { value: Some(value) } => visit_expression(value, visitor),
        StatementKind::Store { place, value } => {
            visit_expression(value, visitor);
            visit_place(place, Access::Store, span, visitor);
        }
        StatementKind::VectorStore { place, values } => {
            for value in values {
                visit_expression(value, visitor);
            }
            let width = values.len() as u8;
            visit_place(place, Access::VectorStore(width), span, visitor);
        }
        // Tiles are whole arrays, not places; the memory operand is read or written at
        // `offset + r * stride + c` for every element (r, c) of the tile.
        StatementKind::Matrix(op) => {
            for value in op.expressions() {
                visit_expression(value, visitor);
            }
        }
        StatementKind::Print { arguments, .. } => {
            for argument in arguments {
                visit_expression(argument, visitor);
            }
        }
        StatementKind::AsyncCopy(crate::AsyncCopyOp::Copy {
            destination,
            source,
            count,
        }) => {
            let count = *count as u8;
            visit_place(destination, Access::CopyTo(count), span, visitor);
            visit_place(source, Access::CopyFrom(count), span, visitor);
        }
        StatementKind::TileCopy(crate::TileCopyOp::Copy {
            destination,
            row,
            column,
            slot,
            ..
        }) => {
            visit_place(destination, Access::TileTo, span, visitor);
            visit_expression(row, visitor);
            visit_expression(column, visitor);
            visit_expression(slot, visitor);
        }
        StatementKind::TileCopy(crate::TileCopyOp::Store {
            row,
            column,
            source,
            ..
        }) => {
            visit_expression(row, visitor);
            visit_expression(column, visitor);
            visit_place(source, Access::TileFrom, span, visitor);
        }
        StatementKind::TileCopy(
            crate::TileCopyOp::Wait { slot } | crate::TileCopyOp::Release { slot },
        ) => visit_expression(slot, visitor),
        StatementKind::TileCopy(crate::TileCopyOp::StoreWait) => {}
        StatementKind::If {
            condition,
            accept,
            reject,
        } => {
            visit_expression(condition, visitor);
            visit_block(accept, visitor);
            visit_block(reject, visitor);
        }
        StatementKind::Loop {
            body, continuing, ..
        } => {
            visit_block(body, visitor);
            visit_block(continuing, visitor);
        }
        StatementKind::Return { value: None }
        | StatementKind::Break
        | StatementKind::Continue
        | StatementKind::Barrier { .. }
        | StatementKind::DeviceFence
        | StatementKind::AsyncCopy(_) => {}
    }
    visitor.leave_statement(statement);
}

fn visit_place(place: &Place, access: Access, span: Span, visitor: &mut impl Visitor) {
    visitor.enter_place(place, access, span);
    for index in &place.indices {
        visit_expression(index, visitor);
    }
    visitor.leave_place(place, access, span);
}

/// [`visit_block`] for one expression.
pub fn visit_expression(expression: &Expression, visitor: &mut impl Visitor) {
    visitor.enter_expression(expression);
    let span = expression.span;
    match &expression.kind {
        ExpressionKind::Literal(_)
        | ExpressionKind::Parameter(_)
        | ExpressionKind::Variable(_)
        | ExpressionKind::WorkItem { .. } => {}
        ExpressionKind::Load(place) => visit_place(place, Access::Load, span, visitor),
        ExpressionKind::VectorLoad { place, width, .. } => {
            visit_place(place, Access::VectorLoad(*width), span, visitor)
        }
        ExpressionKind::Unary { operand, .. } => visit_expression(operand, visitor),
        ExpressionKind::Binary { left, right, .. }
        | ExpressionKind::ShortCircuit { left, right, .. } => {
            visit_expression(left, visitor);
            visit_expression(right, visitor);
        }
        ExpressionKind::Cast { value } | ExpressionKind::DimensionIndex { index: value, .. } => {
            visit_expression(value, visitor)
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
            visit_expression(condition, visitor);
            visit_expression(accept, visitor);
            visit_expression(reject, visitor);
        }
        ExpressionKind::Call { arguments, .. } => {
            for argument in arguments {
                if let Argument::Value(value) = argument {
                    visit_expression(value, visitor);
                }
            }
        }
        ExpressionKind::Math { arguments, .. }
        | ExpressionKind::SubGroup { arguments, .. }
        | ExpressionKind::WorkGroup { arguments, .. } => {
            for argument in arguments {
                visit_expression(argument, visitor);
            }
        }
        ExpressionKind::Atomic {
            place,
            value,
            comparand,
            ..
        } => {
            visit_place(place, Access::Atomic, span, visitor);
            visit_expression(value, visitor);
            if let Some(comparand) = comparand {
                visit_expression(comparand, visitor);
            }
        }
    }
    visitor.leave_expression(expression);
}

/// A [`Visitor`] of two closures: one for every expression, one for every place, each before
/// the nodes inside it.
struct Closures<'a, E, P> {
    expression: &'a mut E,
    place: &'a mut P,
}

impl<E: FnMut(&Expression), P: FnMut(&Place)> Visitor for Closures<'_, E, P> {
    fn enter_expression(&mut self, expression: &Expression) {
        (self.expression)(expression)
    }

    fn enter_place(&mut self, place: &Place, _: Access, _: Span) {
        (self.place)(place)
    }
}

/// Calls `visit` on every expression of `block`, outer ones before those inside them, and
/// `visit_place` on every place (stores, loads, atomics) before its index expressions.
pub fn walk_block(
    block: &Block,
    visit: &mut impl FnMut(&Expression),
    visit_place: &mut impl FnMut(&Place),
) {
    visit_block(
        block,
        &mut Closures {
            expression: visit,
            place: visit_place,
        },
    );
}

/// [`walk_block`] for one expression.
pub fn walk_expression(
    expression: &Expression,
    visit: &mut impl FnMut(&Expression),
    visit_place: &mut impl FnMut(&Place),
) {
    visit_expression(
        expression,
        &mut Closures {
            expression: visit,
            place: visit_place,
        },
    );
}

/// Whether `block` or a block nested in it holds a statement for which `holds` is true.
pub fn any_statement(block: &Block, holds: &impl Fn(&StatementKind) -> bool) -> bool {
    block.iter().any(|statement| {
        holds(&statement.kind)
            || match &statement.kind {
                StatementKind::If { accept, reject, .. } => {
                    any_statement(accept, holds) || any_statement(reject, holds)
                }
                StatementKind::Loop {
                    body, continuing, ..
                } => any_statement(body, holds) || any_statement(continuing, holds),
                _ => false,
            }
    })
}
