//! Tile copies: a work-group copies a rectangle of a 2-D global buffer into local memory in
//! one asynchronous operation (`async_tile_copy`), and waits for it (`async_tile_wait`), in
//! the layout `matrix_group_mma` reads (see docs/language.md, "Tile copies").
//!
//! Both statements are work-group collectives: every work-item reaches them, with the same
//! operands. A copy lands rows of [`ROW_BYTES`] bytes; the 16-byte chunk `j` of box row `r`
//! lands at chunk `j ^ (r % 8)` of that row; elements outside the source's shape read as
//! zero. A copy belongs to one of [`SLOTS`] slots, and a wait on a slot waits for every copy
//! started on it since its last wait; after the wait every work-item of the group sees the
//! copied elements. A tile store (`async_tile_store`) goes the other way: a tile laid out as a
//! copy lands it, from local memory into a writable 2-D buffer, nothing past its shape;
//! `async_tile_store_wait` waits for the group's stores. Targets with tensor copies (NVIDIA
//! sm_90a: TMA, copies completed through `mbarrier`s, stores through bulk groups) lower the
//! statements themselves; every other target, checked mode and the interpreter's reference
//! run [`expand_plain`]: the work-items share the box with plain loads and stores, and a
//! wait is a barrier (a store starts with one), one of the orders the operation allows.

use crate::ir::*;
use crate::matrix::plain::build::Build;
use crate::span::Span;
use crate::types::{AddressSpace, ParameterType, ScalarType};
use serde::{Deserialize, Serialize};

/// The bytes of one row of a copied tile: the width of the swizzle pattern, and what one
/// row of `matrix_group_mma`'s operands holds.
pub const ROW_BYTES: u32 = crate::matrix_group::SWIZZLE_ROW_BYTES;

/// The most rows one copy moves (a tensor copy's box is at most 256 rows).
pub const MAX_ROWS: u32 = 256;

/// How many slots copies complete on (`0..SLOTS`).
pub const SLOTS: u32 = 8;

/// The alignment, in bytes, a copy's destination must have within local memory: one whole
/// swizzle pattern (8 rows), so that the pattern starts where the tile does.
pub const DESTINATION_ALIGNMENT: u32 = crate::matrix_group::TILE_ALIGNMENT_BYTES;

/// The alignment, in bytes, of a copy's source buffer, and of its rows (what a tensor copy
/// reads; the runtime checks it at launch).
pub const SOURCE_ALIGNMENT: u32 = 16;

/// The bytes of one swizzled chunk.
pub const CHUNK_BYTES: u32 = crate::matrix_group::CHUNK_BYTES;

/// Which of the statements (the table of built-ins names them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TileCopyKind {
    Copy,
    Wait,
    Release,
    Store,
    StoreWait,
}

/// One tile-copy statement.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum TileCopyOp {
    /// `async_tile_copy(destination, source[row, column], rows, slot)`: starts copying rows
    /// `row..row + rows`, columns `column..column + columns(element)` of the 2-D buffer
    /// parameter `source` into local memory from `destination` on (a one-dimensional local
    /// array's element, a multiple of [`DESTINATION_ALIGNMENT`] bytes).
    Copy {
        destination: Place,
        source: ParameterId,
        element: ScalarType,
        row: Expression,
        column: Expression,
        rows: u32,
        /// A `u32` below [`SLOTS`], the same in every work-item.
        slot: Expression,
    },
    /// `async_tile_wait(slot)`: waits for the copies started on `slot` since its last wait.
    Wait { slot: Expression },
    /// `async_tile_release(slot)`: every work-item is done reading the tiles of `slot`; the
    /// next copy on it writes only after every work-item released it.
    Release { slot: Expression },
    /// `async_tile_store(destination[row, column], source, rows)`: starts storing a tile laid
    /// out as a copy lands it, from local memory at `source` (a one-dimensional local array's
    /// element, a multiple of [`DESTINATION_ALIGNMENT`] bytes), into rows `row..row + rows`,
    /// columns `column..column + columns(element)` of the 2-D buffer parameter
    /// `destination`; elements past its shape are not written.
    Store {
        destination: ParameterId,
        element: ScalarType,
        row: Expression,
        column: Expression,
        rows: u32,
        source: Place,
    },
    /// `async_tile_store_wait()`: waits for the group's stores: their local memory may be
    /// written again, and their elements are in the buffers.
    StoreWait,
}

impl TileCopyOp {
    pub fn kind(&self) -> TileCopyKind {
        match self {
            TileCopyOp::Copy { .. } => TileCopyKind::Copy,
            TileCopyOp::Wait { .. } => TileCopyKind::Wait,
            TileCopyOp::Release { .. } => TileCopyKind::Release,
            TileCopyOp::Store { .. } => TileCopyKind::Store,
            TileCopyOp::StoreWait => TileCopyKind::StoreWait,
        }
    }

    /// The source name of the statement.
    pub fn name(&self) -> &'static str {
        crate::Builtin::TileCopy(self.kind()).name()
    }

    /// The slot the statement uses (stores use none).
    pub fn slot(&self) -> Option<&Expression> {
        match self {
            TileCopyOp::Copy { slot, .. }
            | TileCopyOp::Wait { slot }
            | TileCopyOp::Release { slot } => Some(slot),
            TileCopyOp::Store { .. } | TileCopyOp::StoreWait => None,
        }
    }

    /// The operands every work-item must agree on.
    pub fn expressions(&self) -> Vec<&Expression> {
        match self {
            TileCopyOp::Copy {
                destination,
                row,
                column,
                slot,
                ..
            } => destination
                .indices
                .iter()
                .chain([row, column, slot])
                .collect(),
            TileCopyOp::Store {
                row,
                column,
                source,
                ..
            } => [row, column].into_iter().chain(&source.indices).collect(),
            TileCopyOp::Wait { slot } | TileCopyOp::Release { slot } => vec![slot],
            TileCopyOp::StoreWait => Vec::new(),
        }
    }
}

/// The columns of one copied row of `element`s, `None` for a type whose size does not
/// divide a row (`bool`).
pub fn columns(element: ScalarType) -> Option<u32> {
    let size = element.size_in_bytes();
    (size > 0 && ROW_BYTES.is_multiple_of(size) && element != ScalarType::Bool)
        .then(|| ROW_BYTES / size)
}

/// Where element `column` of box row `row` lands, counted in elements from the destination:
/// the row's start, then the column with its 16-byte chunk exchanged for chunk
/// `chunk ^ (row % 8)`.
pub fn landing(element: ScalarType, row: u32, column: u32) -> u32 {
    let per_chunk = CHUNK_BYTES / element.size_in_bytes();
    let columns = ROW_BYTES / element.size_in_bytes();
    row * columns + (column ^ (row % 8 * per_chunk))
}

/// Whether `block` holds a tile statement.
pub fn uses(block: &Block) -> bool {
    crate::visit::any_statement(block, &|kind| matches!(kind, StatementKind::TileCopy(_)))
}

/// Whether `block` copies tiles, or waits on or releases their slots.
pub fn uses_slots(block: &Block) -> bool {
    crate::visit::any_statement(
        block,
        &|kind| matches!(kind, StatementKind::TileCopy(op) if op.slot().is_some()),
    )
}

/// Whether `block` stores tiles.
pub fn stores(block: &Block) -> bool {
    crate::visit::any_statement(block, &|kind| {
        matches!(kind, StatementKind::TileCopy(TileCopyOp::Store { .. }))
    })
}

/// A tensor map a function's copies read through or its stores write through: one per
/// buffer and row count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorMapUse {
    pub buffer: ParameterId,
    pub element: ScalarType,
    pub rows: u32,
    /// Whether a store writes through it (else only copies read).
    pub stored: bool,
}

impl TensorMapUse {
    /// Whether `self` is the map of `buffer`'s boxes of `rows` rows.
    pub fn describes(&self, buffer: ParameterId, rows: u32) -> bool {
        self.buffer == buffer && self.rows == rows
    }
}

/// The tensor maps the copies and stores of `block` go through, in the order of their
/// first uses.
pub fn tensor_maps(block: &Block) -> Vec<TensorMapUse> {
    let mut maps = Vec::new();
    collect_maps(block, &mut maps);
    maps
}

fn collect_maps(block: &Block, maps: &mut Vec<TensorMapUse>) {
    for statement in block {
        match &statement.kind {
            StatementKind::TileCopy(
                TileCopyOp::Copy {
                    source: buffer,
                    element,
                    rows,
                    ..
                }
                | TileCopyOp::Store {
                    destination: buffer,
                    element,
                    rows,
                    ..
                },
            ) => {
                let stored = matches!(
                    statement.kind,
                    StatementKind::TileCopy(TileCopyOp::Store { .. })
                );
                match maps.iter_mut().find(|map| map.describes(*buffer, *rows)) {
                    Some(map) => map.stored |= stored,
                    None => maps.push(TensorMapUse {
                        buffer: *buffer,
                        element: *element,
                        rows: *rows,
                        stored,
                    }),
                }
            }
            StatementKind::If { accept, reject, .. } => {
                collect_maps(accept, maps);
                collect_maps(reject, maps);
            }
            StatementKind::Loop {
                body, continuing, ..
            } => {
                collect_maps(body, maps);
                collect_maps(continuing, maps);
            }
            _ => {}
        }
    }
}

/// `module` with every tile copy shared out over the work-group's work-items as plain loads
/// and stores (element `e` of the box by the work-items whose linear local id is
/// `e % group size`), and every wait and release a barrier over local memory.
pub fn expand_plain(module: &Module) -> Module {
    expand_plain_where(module, |_| true)
}

/// [`expand_plain`] in the functions `expand` picks; the others keep their tile copies.
pub fn expand_plain_where(module: &Module, expand: impl Fn(&Function) -> bool) -> Module {
    let mut module = module.clone();
    for function in &mut module.functions {
        if !uses(&function.body) || !expand(function) {
            continue;
        }
        let body = std::mem::take(&mut function.body);
        let mut expander = Expander {
            function_parameters: function.parameters.clone(),
            shaped: function.shaped_buffers.clone(),
            variables: &mut function.variables,
            scratch: std::collections::HashMap::new(),
        };
        function.body = expander.block(body);
        crate::ids::number_function(function);
    }
    module
}

struct Expander<'a> {
    function_parameters: Vec<Parameter>,
    shaped: Vec<ShapedBuffer>,
    variables: &'a mut Vec<Variable>,
    /// The private scalars the expansions use, by name and type, added once.
    scratch: std::collections::HashMap<(&'static str, ScalarType), VariableId>,
}

impl Expander<'_> {
    fn block(&mut self, block: Block) -> Block {
        let mut out = Vec::with_capacity(block.len());
        for statement in block {
            let span = statement.span;
            let kind = match statement.kind {
                StatementKind::TileCopy(op) => {
                    out.extend(self.expand(op, span));
                    continue;
                }
                StatementKind::If {
                    condition,
                    accept,
                    reject,
                } => StatementKind::If {
                    condition,
                    accept: self.block(accept),
                    reject: self.block(reject),
                },
                StatementKind::Loop {
                    body,
                    continuing,
                    unroll,
                } => StatementKind::Loop {
                    body: self.block(body),
                    continuing: self.block(continuing),
                    unroll,
                },
                kind => kind,
            };
            out.push(Statement { kind, span });
        }
        out
    }

    fn scratch(&mut self, name: &'static str, ty: ScalarType, span: Span) -> VariableId {
        let variables = &mut *self.variables;
        *self.scratch.entry((name, ty)).or_insert_with(|| {
            variables.push(Variable {
                name: format!("tile.{name}"),
                ty: VariableType::Scalar { ty },
                space: AddressSpace::Private,
                span,
            });
            VariableId(variables.len() as u32 - 1)
        })
    }

    fn expand(&mut self, op: TileCopyOp, span: Span) -> Block {
        let b = Build { span };
        let barrier = |global| {
            b.statement(StatementKind::Barrier {
                fence: FenceFlags {
                    local: true,
                    global,
                },
            })
        };
        match op {
            TileCopyOp::Copy {
                destination,
                source,
                element,
                row,
                column,
                rows,
                slot,
            } => {
                // The slot is evaluated after the other operands, then plays no part.
                let slot = b.assign(self.scratch("slot", ScalarType::U32, span), slot);
                let tile = Tile {
                    buffer: source,
                    element,
                    row,
                    column,
                    rows,
                    local: destination,
                };
                self.walk_box(tile, Direction::Load, vec![slot], span)
            }
            TileCopyOp::Store {
                destination,
                element,
                row,
                column,
                rows,
                source,
            } => {
                // Every work-item's writes to the tile are done before any reads it.
                let tile = Tile {
                    buffer: destination,
                    element,
                    row,
                    column,
                    rows,
                    local: source,
                };
                let mut out = self.walk_box(tile, Direction::Store, Vec::new(), span);
                out.insert(0, barrier(false));
                out
            }
            TileCopyOp::Wait { slot } | TileCopyOp::Release { slot } => {
                let slot = b.assign(self.scratch("slot", ScalarType::U32, span), slot);
                vec![slot, barrier(false)]
            }
            TileCopyOp::StoreWait => vec![barrier(true)],
        }
    }

    /// The work-items share out the box of `tile`: element `e` by those whose linear local id
    /// is `e % group size`, loading it (zero past the buffer's shape) into local memory, or
    /// storing it from there (not past the shape). `evaluated` comes after the operands.
    fn walk_box(
        &mut self,
        tile: Tile,
        direction: Direction,
        evaluated: Block,
        span: Span,
    ) -> Block {
        let b = Build { span };
        let Tile {
            buffer,
            element,
            row,
            column,
            rows,
            local: mut local_place,
        } = tile;
        let Some(shaped) = self.shaped.iter().find(|s| s.buffer == buffer).cloned() else {
            return Vec::new();
        };
        let space = match self.function_parameters[buffer.0 as usize].ty {
            ParameterType::Buffer { space, .. } => space,
            _ => AddressSpace::Global,
        };
        let columns = columns(element).unwrap_or(1);
        let per_chunk = CHUNK_BYTES / element.size_in_bytes();
        let (u32_, u64_) = (ScalarType::U32, ScalarType::U64);
        let base = self.scratch("local", u32_, span);
        let top = self.scratch("row", u32_, span);
        let left = self.scratch("column", u32_, span);
        let index = self.scratch("element", u32_, span);
        let (r, c) = (
            self.scratch("box_row", u32_, span),
            self.scratch("box_column", u32_, span),
        );
        let value = self.scratch("value", element, span);
        let parameter = |id: ParameterId, ty| b.expression(ExpressionKind::Parameter(id), ty);
        let query =
            |query, dimension| b.expression(ExpressionKind::WorkItem { query, dimension }, u32_);
        let id = |d| query(WorkItemQuery::LocalId, d);
        let size = |d| query(WorkItemQuery::LocalSize, d);
        // The linear local id and the group's size.
        let linear = b.add(id(0), b.mul(size(0), b.add(id(1), b.mul(size(1), id(2)))));
        let group = b.mul(size(0), b.mul(size(1), size(2)));
        let local_index = local_place
            .indices
            .pop()
            .map(|index| b.cast(index, u32_))
            .unwrap_or_else(|| b.u32(0));
        let wide = |x| b.cast(x, u64_);
        let buffer_row = || b.binary(BinaryOp::Add, wide(b.var(top, u32_)), wide(b.var(r, u32_)));
        let buffer_column =
            || b.binary(BinaryOp::Add, wide(b.var(left, u32_)), wide(b.var(c, u32_)));
        let flat = b.binary(
            BinaryOp::Add,
            b.binary(
                BinaryOp::Multiply,
                buffer_row(),
                parameter(shaped.strides[0], u64_),
            ),
            b.binary(
                BinaryOp::Multiply,
                buffer_column(),
                parameter(shaped.strides[1], u64_),
            ),
        );
        let buffer_place = Place {
            id: crate::PlaceId::UNNUMBERED,
            base: PlaceBase::Parameter(buffer),
            indices: vec![flat],
            element,
            space,
            field: None,
        };
        let inside = |at: Expression, extent: ParameterId| {
            b.binary(BinaryOp::Less, at, wide(parameter(extent, u32_)))
        };
        let within_shape = |accept: Block| {
            b.statement(StatementKind::If {
                condition: inside(buffer_row(), shaped.shape[0]),
                accept: vec![b.statement(StatementKind::If {
                    condition: inside(buffer_column(), shaped.shape[1]),
                    accept,
                    reject: Vec::new(),
                })],
                reject: Vec::new(),
            })
        };
        let swizzled_column = b.binary(
            BinaryOp::BitXor,
            b.var(c, u32_),
            b.mul(b.rem(b.var(r, u32_), b.u32(8)), b.u32(per_chunk)),
        );
        let landing = b.add(
            b.var(base, u32_),
            b.add(b.mul(b.var(r, u32_), b.u32(columns)), swizzled_column),
        );
        local_place.indices.push(landing);
        let mut body = vec![
            b.assign(r, b.div(b.var(index, u32_), b.u32(columns))),
            b.assign(c, b.rem(b.var(index, u32_), b.u32(columns))),
        ];
        match direction {
            Direction::Load => {
                let zero = b.expression(
                    ExpressionKind::Literal(if element.is_float() {
                        Literal::Float(0.0)
                    } else {
                        Literal::Integer(0)
                    }),
                    element,
                );
                body.push(b.assign(value, zero));
                body.push(within_shape(vec![b.assign(value, b.load(buffer_place))]));
                body.push(b.store(local_place, b.var(value, element)));
            }
            Direction::Store => body.push(within_shape(vec![
                b.assign(value, b.load(local_place)),
                b.store(buffer_place, b.var(value, element)),
            ])),
        }
        // The operands in the order of the statement's arguments.
        let corner = [
            b.assign(top, b.cast(row, u32_)),
            b.assign(left, b.cast(column, u32_)),
        ];
        let local = b.assign(base, local_index);
        let mut out = match direction {
            Direction::Load => [vec![local], corner.to_vec()].concat(),
            Direction::Store => [corner.to_vec(), vec![local]].concat(),
        };
        out.extend(evaluated);
        out.extend(b.counted_loop(index, linear, rows * columns, group, body, Unroll::Count(1)));
        out
    }
}

/// A tile statement's box: rows of a 2-D buffer parameter from a corner, and where the box
/// lies in local memory.
struct Tile {
    buffer: ParameterId,
    element: ScalarType,
    row: Expression,
    column: Expression,
    rows: u32,
    local: Place,
}

/// Which way a box goes: from its buffer into local memory, or back.
enum Direction {
    Load,
    Store,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn landing_exchanges_chunks_by_row() {
        // f16: 64 columns, 8 a chunk.
        assert_eq!(columns(ScalarType::F16), Some(64));
        assert_eq!(landing(ScalarType::F16, 0, 9), 9);
        assert_eq!(landing(ScalarType::F16, 1, 0), 64 + 8);
        assert_eq!(landing(ScalarType::F16, 3, 17), 3 * 64 + 9); // chunk 2 ^ 3 = 1
                                                                 // f32: 32 columns, 4 a chunk; rows 8 apart share the pattern.
        assert_eq!(landing(ScalarType::F32, 9, 0), 9 * 32 + 4);
        assert_eq!(columns(ScalarType::Bool), None);
        assert_eq!(columns(ScalarType::F64), Some(16));
    }
}
