//! Keeping matrix tiles in registers on targets with matrix units.
//!
//! A tile is a private array of the whole tile (`[f32; 256]`) of which such a target uses only
//! the first few elements, the work-item's fragment registers; LLVM's SROA splits the array
//! into those registers only if every access has a constant index. The front end zeroes every
//! private array with a loop (`let mut acc: [f32; 256];`), and when LLVM keeps that loop as a
//! loop (it does in larger kernels) the whole tile stays in stack memory: 1 KiB a tile per
//! work-item. [`unroll_tile_zeroing`] asks for those loops to be unrolled completely, which
//! changes nothing they compute.

use crate::ir::*;
use crate::visit::{visit_block, Visitor};
use std::collections::HashSet;

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
