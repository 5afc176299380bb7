//! Keeping matrix tiles in registers on targets with matrix units.
//!
//! A tile is a private array of the whole tile (`[f32; 256]`) of which such a target uses only
//! the first few elements, the work-item's fragment registers; LLVM's SROA splits the array
//! into those registers only if every access has a constant index. The front end zeroes every
//! private array with a loop (`let mut acc: [f32; 256];`), and when LLVM keeps that loop as a
//! loop (it does in larger kernels) the whole tile stays in stack memory: 1 KiB a tile per
//! work-item. [`unroll_tile_zeroing`] asks for those loops to be unrolled completely, which
//! changes nothing they compute. Targets that hold a tile as opaque values (Intel's cooperative
//! matrices) instead replace the zeroing with zero values of their own: [`tile_roles`] says
//! what each tile is, [`zeroed_tiles`] which tiles a loop zeroes.

use crate::ir::*;
use crate::matrix::{MatrixOp, MatrixRole, MatrixShape};
use crate::visit::{visit_block, Visitor};
use std::collections::{HashMap, HashSet};

/// The shape and role of every tile variable of `function` that its matrix statements use in
/// one shape and role only (an `f16` array loaded both as `A` and as `B` is left out).
pub fn tile_roles(function: &Function) -> HashMap<VariableId, (MatrixShape, MatrixRole)> {
    let mut roles = Roles::default();
    visit_block(&function.body, &mut roles);
    roles
        .seen
        .into_iter()
        .filter(|(id, _)| !roles.conflicting.contains(id))
        .collect()
}

#[derive(Default)]
struct Roles {
    seen: HashMap<VariableId, (MatrixShape, MatrixRole)>,
    conflicting: HashSet<VariableId>,
}

impl Roles {
    fn add(&mut self, tile: PlaceBase, shape: MatrixShape, role: MatrixRole) {
        if let PlaceBase::Variable(id) = tile {
            if *self.seen.entry(id).or_insert((shape, role)) != (shape, role) {
                self.conflicting.insert(id);
            }
        }
    }
}

impl Visitor for Roles {
    fn enter_statement(&mut self, statement: &Statement) {
        let StatementKind::Matrix(op) = &statement.kind else {
            return;
        };
        let accumulator = MatrixRole::Accumulator;
        match op {
            MatrixOp::Load {
                shape, role, tile, ..
            } => self.add(*tile, *shape, *role),
            MatrixOp::Store { shape, tile, .. } | MatrixOp::Fill { shape, tile, .. } => {
                self.add(*tile, *shape, accumulator)
            }
            MatrixOp::MultiplyAdd { shape, d, a, b, c } => {
                self.add(*d, *shape, accumulator);
                self.add(*c, *shape, accumulator);
                self.add(*a, *shape, MatrixRole::A);
                self.add(*b, *shape, MatrixRole::B);
            }
            MatrixOp::GroupMultiplyAdd { .. } | MatrixOp::GroupWait { .. } => {}
        }
    }
}

/// The variables a loop with this body zeroes, where it is the front end's zeroing of
/// variables in `tiles` (exit tests and stores of zero literals into them, nothing else);
/// `None` otherwise.
pub fn zeroed_tiles(body: &Block, tiles: &HashSet<VariableId>) -> Option<Vec<VariableId>> {
    if !zeroes_a_tile(body, tiles) {
        return None;
    }
    let mut zeroed = Vec::new();
    for statement in body {
        if let StatementKind::Store { place, value } = &statement.kind {
            let zero = matches!(value.kind, ExpressionKind::Literal(Literal::Integer(0)))
                || matches!(value.kind, ExpressionKind::Literal(Literal::Float(x)) if x.to_bits() == 0);
            match place.base {
                PlaceBase::Variable(id) if zero => {
                    if !zeroed.contains(&id) {
                        zeroed.push(id);
                    }
                }
                _ => return None,
            }
        }
    }
    Some(zeroed)
}

/// `module` with the zeroing loop of every tile variable marked `Unroll::Full`.
pub fn unroll_tile_zeroing(module: &Module) -> Module {
    let mut module = module.clone();
    for function in &mut module.functions {
        let mut tiles = Tiles(HashSet::new());
        visit_block(&function.body, &mut tiles);
        let tiles = tiles.0;
        if !tiles.is_empty() {
            mark_block(&mut function.body, &tiles);
        }
    }
    module
}

/// Collects the variables that matrix statements use as tiles.
struct Tiles(HashSet<VariableId>);

impl Visitor for Tiles {
    fn enter_statement(&mut self, statement: &Statement) {
        if let StatementKind::Matrix(op) = &statement.kind {
            let (written, read) = op.tiles();
            self.0.extend(
                written
                    .into_iter()
                    .chain(read)
                    .filter_map(|base| match base {
                        PlaceBase::Variable(id) => Some(id),
                        PlaceBase::Parameter(_) => None,
                    }),
            );
        }
    }
}

fn mark_block(block: &mut Block, tiles: &HashSet<VariableId>) {
    for statement in block {
        match &mut statement.kind {
            StatementKind::If { accept, reject, .. } => {
                mark_block(accept, tiles);
                mark_block(reject, tiles);
            }
            StatementKind::Loop {
                body,
                continuing,
                unroll,
            } => {
                if *unroll == Unroll::Default && zeroes_a_tile(body, tiles) {
                    *unroll = Unroll::Full;
                }
                mark_block(body, tiles);
                mark_block(continuing, tiles);
            }
            _ => {}
        }
    }
}

/// Whether a loop body is the front end's zeroing of a tile: exit tests (`if !(i < n) {
/// break; }`) and stores into tile variables, nothing else.
fn zeroes_a_tile(body: &Block, tiles: &HashSet<VariableId>) -> bool {
    let mut stores = false;
    for statement in body {
        match &statement.kind {
            StatementKind::Store { place, .. } => match place.base {
                PlaceBase::Variable(id) if tiles.contains(&id) => stores = true,
                _ => return false,
            },
            StatementKind::If { accept, reject, .. }
                if reject.is_empty()
                    && accept
                        .iter()
                        .all(|s| matches!(s.kind, StatementKind::Break)) => {}
            _ => return false,
        }
    }
    stores
}
