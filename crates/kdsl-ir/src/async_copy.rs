//! Asynchronous copies from global to local memory (`async_copy`, `async_commit`,
//! `async_wait`) and their one definition as plain IR.
//!
//! A work-item starts copies, closes them into a group with `async_commit()`, and waits with
//! `async_wait(n)` until at most `n` of its committed groups are still in flight; a barrier
//! after the wait makes the copied elements visible to the whole work-group (see
//! docs/language.md, "Asynchronous copies"). Targets that copy asynchronously (NVIDIA sm_80
//! and later: `cp.async`) lower the statements themselves; every other target and checked
//! mode run [`expand_plain`]: each copy done at once by plain loads and stores, commits and
//! waits doing nothing, which is one of the orders the operation allows. The interpreter
//! lands each copy at the wait that completes its group instead, the latest time allowed.

use crate::ir::*;
use serde::{Deserialize, Serialize};

/// The element counts a copy may move.
pub const COUNTS: [u32; 5] = [1, 2, 4, 8, 16];

/// The byte sizes one copy may move: what a `cp.async` instruction moves.
pub const BYTES: [u32; 3] = [4, 8, 16];

/// The largest `async_wait` count: how many groups a work-item may wait to leave in flight.
pub const MAX_PENDING: u32 = 7;

/// Which of the three statements (the table of built-ins names them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AsyncCopyKind {
    Copy,
    Commit,
    Wait,
}

/// One asynchronous-copy statement.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum AsyncCopyOp {
    /// `async_copy(destination, source, count)`: starts copying the `count` elements from
    /// `source` on (a global buffer's) to `destination` on (local memory's). Both indices are
    /// multiples of `count`.
    Copy {
        destination: Place,
        source: Place,
        count: u32,
    },
    /// `async_commit()`: the copies this work-item started since its last commit form a group.
    Commit,
    /// `async_wait(pending)`: waits until at most `pending` of this work-item's committed
    /// groups are in flight.
    Wait { pending: u32 },
}

impl AsyncCopyOp {
    pub fn kind(&self) -> AsyncCopyKind {
        match self {
            AsyncCopyOp::Copy { .. } => AsyncCopyKind::Copy,
            AsyncCopyOp::Commit => AsyncCopyKind::Commit,
            AsyncCopyOp::Wait { .. } => AsyncCopyKind::Wait,
        }
    }

    /// The source name of the statement.
    pub fn name(&self) -> &'static str {
        crate::Builtin::AsyncCopy(self.kind()).name()
    }
}

/// Whether a copy of `count` elements of `element` is one the language allows.
pub fn valid_count(element: crate::ScalarType, count: u32) -> bool {
    COUNTS.contains(&count) && BYTES.contains(&(count * element.size_in_bytes()))
}

fn block_uses(block: &Block) -> bool {
    crate::visit::any_statement(block, &|kind| matches!(kind, StatementKind::AsyncCopy(_)))
}

/// `module` with every copy done at once (`destination[i + c] = source[j + c]` for each `c`
/// below the count, the indices evaluated once, in order) and commits and waits removed.
pub fn expand_plain(module: &Module) -> Module {
    let mut module = module.clone();
    for function in &mut module.functions {
        if !block_uses(&function.body) {
            continue;
        }
        let mut scratch = Scratch::new();
        let body = std::mem::take(&mut function.body);
        function.body = expand_block(body, &mut function.variables, &mut scratch);
        crate::ids::number_function(function);
    }
    module
}

/// The variables holding the expanded copies' indices, one per role (destination, source)
/// and index type, added to the function once.
type Scratch = std::collections::HashMap<(bool, crate::ScalarType), VariableId>;

fn expand_block(block: Block, variables: &mut Vec<Variable>, scratch: &mut Scratch) -> Block {
    let mut out = Vec::with_capacity(block.len());
    for statement in block {
        let span = statement.span;
        let kind = match statement.kind {
            StatementKind::AsyncCopy(AsyncCopyOp::Copy {
                destination,
                source,
                count,
            }) => {
                let mut copy = Expansion {
                    span,
                    variables,
                    scratch,
                    out: &mut out,
                };
                copy.expand(destination, source, count);
                continue;
            }
            StatementKind::AsyncCopy(_) => continue,
            StatementKind::If {
                condition,
                accept,
                reject,
            } => StatementKind::If {
                condition,
                accept: expand_block(accept, variables, scratch),
                reject: expand_block(reject, variables, scratch),
            },
            StatementKind::Loop {
                body,
                continuing,
                unroll,
            } => StatementKind::Loop {
                body: expand_block(body, variables, scratch),
                continuing: expand_block(continuing, variables, scratch),
                unroll,
            },
            kind => kind,
        };
        out.push(Statement { kind, span });
    }
    out
}

/// One copy being expanded into `out`.
struct Expansion<'a> {
    span: crate::Span,
    variables: &'a mut Vec<Variable>,
    scratch: &'a mut Scratch,
    out: &'a mut Block,
}

impl Expansion<'_> {
    /// Evaluates `place`'s one index into a variable (once, in order) and points the place
    /// at it.
    fn bind(&mut self, place: &mut Place, destination: bool) {
        let Some(index) = place.indices.pop() else {
            return;
        };
        let ty = index.ty;
        let span = self.span;
        let variables = &mut *self.variables;
        let variable = *self.scratch.entry((destination, ty)).or_insert_with(|| {
            let role = if destination { "destination" } else { "source" };
            variables.push(Variable {
                name: format!("async.{role}.{ty}"),
                ty: VariableType::Scalar { ty },
                space: crate::AddressSpace::Private,
                span,
            });
            VariableId(variables.len() as u32 - 1)
        });
        self.out.push(Statement {
            kind: StatementKind::Assign {
                variable,
                value: index,
            },
            span,
        });
        place.indices.push(Expression {
            id: crate::ExprId::UNNUMBERED,
            kind: ExpressionKind::Variable(variable),
            ty,
            span,
        });
    }

    fn expand(&mut self, mut destination: Place, mut source: Place, count: u32) {
        self.bind(&mut destination, true);
        self.bind(&mut source, false);
        let span = self.span;
        let offset = |place: &Place, c: u32| -> Place {
            let mut place = place.clone();
            if c == 0 {
                return place;
            }
            if let Some(index) = place.indices.pop() {
                let ty = index.ty;
                let literal = Expression {
                    id: crate::ExprId::UNNUMBERED,
                    kind: ExpressionKind::Literal(Literal::Integer(u64::from(c))),
                    ty,
                    span,
                };
                place.indices.push(Expression {
                    id: crate::ExprId::UNNUMBERED,
                    kind: ExpressionKind::Binary {
                        op: BinaryOp::Add,
                        left: Box::new(index),
                        right: Box::new(literal),
                    },
                    ty,
                    span,
                });
            }
            place
        };
        for c in 0..count {
            let from = offset(&source, c);
            let element = from.element;
            self.out.push(Statement {
                kind: StatementKind::Store {
                    place: offset(&destination, c),
                    value: Expression {
                        id: crate::ExprId::UNNUMBERED,
                        kind: ExpressionKind::Load(Box::new(from)),
                        ty: element,
                        span,
                    },
                },
                span,
            });
        }
    }
}
