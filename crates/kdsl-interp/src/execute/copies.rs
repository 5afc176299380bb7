//! Asynchronous copies, tile copies and tile stores: when each reads its source and when its
//! destination lands.

use super::{Binding, Execution, Frame, Location, SharedMemory, WorkItem};
use crate::InterpError;
use kdsl_ir::scalar;
use kdsl_ir::{AsyncCopyOp, Expression, Place, ScalarType, Span, TileCopyOp};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};

/// A work-item's asynchronous copies in flight: each is the destination cells and the values
/// read from the source when it started; they land at the `async_wait` that completes their
/// group (or when the work-item ends).
#[derive(Default)]
pub(super) struct PendingCopies<'g> {
    /// Started since the last `async_commit`.
    pub(super) open: Vec<(&'g AtomicU64, u64)>,
    /// Committed groups, oldest first.
    pub(super) committed: VecDeque<Vec<(&'g AtomicU64, u64)>>,
    /// Tile copies started on each slot since its last wait (work-item 0 holds them).
    pub(super) tiles: [Vec<(&'g AtomicU64, u64)>; kdsl_ir::tile_copy::SLOTS as usize],
    /// The local cells tile stores read since the last store wait, with the values they read
    /// (work-item 0 holds them): writing one before the wait is undefined behaviour.
    pub(super) stored: Vec<(&'g AtomicU64, u64)>,
}

/// A tile statement's box: its local memory from element `start` of `local`, and rows of the
/// 2-D buffer parameter `buffer` from `corner`.
struct TileBox<'g> {
    local: &'g Place,
    start: i128,
    buffer: kdsl_ir::ParameterId,
    element: ScalarType,
    corner: [u64; 2],
    rows: u32,
}

impl PendingCopies<'_> {
    /// Writes each copy's value to its destination cell.
    pub(super) fn land(copies: Vec<(&AtomicU64, u64)>) {
        for (cell, value) in copies {
            cell.store(value, Ordering::Relaxed);
        }
    }
}

impl<'g> WorkItem<'g> {
    /// An asynchronous copy reads its source when it starts and writes its destination when
    /// the `async_wait` that completes its group runs, so a kernel that reads the destination
    /// before waiting sees the old contents (poison, for local memory never written).
    pub(super) fn async_copy(
        &self,
        frame: &mut Frame<'g>,
        op: &'g AsyncCopyOp,
        span: Span,
    ) -> Execution<()> {
        match op {
            AsyncCopyOp::Copy {
                destination,
                source,
                count,
            } => {
                let mut starts = [0i128; 2];
                for (start, place) in starts.iter_mut().zip([destination, source]) {
                    let Some(index) = place.indices.first() else {
                        return Err(self.undefined(span, "a copy without an index".to_string()));
                    };
                    let bits = self.expression(frame, index)?;
                    *start = scalar::integer_as_i128(bits, index.ty);
                }
                let count = i128::from(*count);
                if let Some(start) = starts.iter().find(|start| *start % count != 0) {
                    return Err(self.undefined(
                        span,
                        format!(
                            "`async_copy` of {count} elements at index {start}, not a multiple of {count}"
                        ),
                    ));
                }
                let mut copies = Vec::with_capacity(count as usize);
                for offset in 0..count {
                    let from = self.locate_at(frame, source, &[starts[1] + offset], span)?;
                    let to = self.locate_at(frame, destination, &[starts[0] + offset], span)?;
                    let (Location::Shared(from), Location::Shared(to)) = (from, to) else {
                        return Err(self.undefined(span, "a copy of private memory".to_string()));
                    };
                    copies.push((to, from.load(Ordering::Relaxed)));
                }
                self.copies.borrow_mut().open.extend(copies);
            }
            AsyncCopyOp::Commit => {
                let mut copies = self.copies.borrow_mut();
                let group = std::mem::take(&mut copies.open);
                copies.committed.push_back(group);
            }
            AsyncCopyOp::Wait { pending } => {
                let mut copies = self.copies.borrow_mut();
                while copies.committed.len() > *pending as usize {
                    if let Some(group) = copies.committed.pop_front() {
                        PendingCopies::land(group);
                    }
                }
            }
        }
        Ok(())
    }

    /// A tile copy is the work-group's: work-item 0 reads the source when the copy starts and
    /// lands it at the wait on its slot, which is also a barrier; every work-item evaluates
    /// the operands. Reading the destination before the wait sees the old contents. A tile
    /// store is a barrier, then work-item 0 writes the box, then a barrier; its wait reports
    /// local memory a store read and the group wrote before the wait.
    pub(super) fn tile_copy(
        &self,
        frame: &mut Frame<'g>,
        op: &'g TileCopyOp,
        span: Span,
    ) -> Execution<()> {
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
                let Some(index) = destination.indices.first() else {
                    return Err(self.undefined(span, "a copy without an index".to_string()));
                };
                let start = scalar::integer_as_i128(self.expression(frame, index)?, index.ty);
                let corner = [
                    self.expression(frame, row)?,
                    self.expression(frame, column)?,
                ];
                let slot = self.tile_slot(frame, slot, span)?;
                if self.linear_local != 0 {
                    return Ok(());
                }
                let tile = TileBox {
                    local: destination,
                    start,
                    buffer: *source,
                    element: *element,
                    corner,
                    rows: *rows,
                };
                let mut copies = Vec::new();
                self.walk_tile_box(frame, &tile, span, |local, cell| {
                    copies.push((local, cell.map_or(0, |cell| cell.load(Ordering::Relaxed))));
                })?;
                self.copies.borrow_mut().tiles[slot].extend(copies);
            }
            TileCopyOp::Store {
                destination,
                element,
                row,
                column,
                rows,
                source,
            } => {
                let corner = [
                    self.expression(frame, row)?,
                    self.expression(frame, column)?,
                ];
                let Some(index) = source.indices.first() else {
                    return Err(self.undefined(span, "a store without an index".to_string()));
                };
                let start = scalar::integer_as_i128(self.expression(frame, index)?, index.ty);
                self.group_barrier(span, op.name())?;
                if self.linear_local == 0 {
                    let tile = TileBox {
                        local: source,
                        start,
                        buffer: *destination,
                        element: *element,
                        corner,
                        rows: *rows,
                    };
                    let mut read = Vec::new();
                    self.walk_tile_box(frame, &tile, span, |local, cell| {
                        let value = local.load(Ordering::Relaxed);
                        read.push((local, value));
                        if let Some(cell) = cell {
                            cell.store(value, Ordering::Relaxed);
                        }
                    })?;
                    self.copies.borrow_mut().stored.extend(read);
                }
                self.group_barrier(span, op.name())?;
            }
            TileCopyOp::StoreWait => {
                // Every work-item's writes before the wait must be in before the tile is
                // compared (work-item 0 alone would see only its own).
                self.group_barrier(span, op.name())?;
                if self.linear_local == 0 {
                    let stored = std::mem::take(&mut self.copies.borrow_mut().stored);
                    if stored
                        .iter()
                        .any(|(cell, value)| cell.load(Ordering::Relaxed) != *value)
                    {
                        return Err(self.undefined(
                            span,
                            "local memory an `async_tile_store` reads was written before \
                             `async_tile_store_wait`"
                                .to_string(),
                        ));
                    }
                }
                self.group_barrier(span, op.name())?;
            }
            TileCopyOp::Wait { slot } | TileCopyOp::Release { slot } => {
                let slot = self.tile_slot(frame, slot, span)?;
                if let TileCopyOp::Wait { .. } = op {
                    let landed = std::mem::take(&mut self.copies.borrow_mut().tiles[slot]);
                    PendingCopies::land(landed);
                }
                self.group_barrier(span, op.name())?;
            }
        }
        Ok(())
    }

    /// Calls `each` with every element of `tile`'s box in row order: its local memory cell and
    /// its buffer's cell (`None` past the buffer's shape). A misaligned tile in local memory is
    /// undefined behaviour; a buffer smaller than its shape says is out of bounds.
    fn walk_tile_box(
        &self,
        frame: &Frame<'g>,
        tile: &TileBox<'g>,
        span: Span,
        mut each: impl FnMut(&'g AtomicU64, Option<&'g AtomicU64>),
    ) -> Execution<()> {
        use kdsl_ir::tile_copy::{columns, landing, DESTINATION_ALIGNMENT};
        let size = i128::from(tile.element.size_in_bytes());
        if tile.start * size % i128::from(DESTINATION_ALIGNMENT) != 0 {
            return Err(self.undefined(
                span,
                format!(
                    "a tile at local element {}, not a multiple of {DESTINATION_ALIGNMENT} bytes",
                    tile.start
                ),
            ));
        }
        let (memory, shape, strides) = self.tile_buffer(frame, tile.buffer, span)?;
        let name = &frame.function.parameter(tile.buffer).name;
        let columns = columns(tile.element).unwrap_or(1);
        for r in 0..tile.rows {
            for c in 0..columns {
                let at = tile.start + i128::from(landing(tile.element, r, c));
                let Location::Shared(local) = self.locate_at(frame, tile.local, &[at], span)?
                else {
                    return Err(self.undefined(span, "a tile in private memory".to_string()));
                };
                let at = [
                    u128::from(tile.corner[0]) + u128::from(r),
                    u128::from(tile.corner[1]) + u128::from(c),
                ];
                let cell = if at[0] < shape[0] && at[1] < shape[1] {
                    let flat = at[0] * strides[0] + at[1] * strides[1];
                    let Some(cell) = memory.cells.get(flat as usize) else {
                        return Err(self.error(|work_item| InterpError::OutOfBounds {
                            span,
                            work_item,
                            message: format!(
                                "element {flat} of buffer `{name}` of {} elements",
                                memory.cells.len()
                            ),
                        }));
                    };
                    Some(cell)
                } else {
                    None
                };
                each(local, cell);
            }
        }
        Ok(())
    }

    /// The memory of the 2-D buffer parameter `buffer` of a tile statement, its shape and
    /// its strides.
    fn tile_buffer(
        &self,
        frame: &Frame<'g>,
        buffer: kdsl_ir::ParameterId,
        span: Span,
    ) -> Execution<(&'g SharedMemory, [u128; 2], [u128; 2])> {
        let shaped = frame
            .function
            .shaped_buffers
            .iter()
            .find(|shaped| shaped.buffer == buffer);
        let memory = self.buffer_memory(&frame.parameters[buffer.0 as usize]);
        let (Some(shaped), Some(memory)) = (shaped, memory) else {
            return Err(self.undefined(span, "a tile of no 2-D buffer".to_string()));
        };
        let scalar = |id: kdsl_ir::ParameterId| match frame.parameters[id.0 as usize] {
            Binding::Scalar(bits) => u128::from(bits),
            _ => 0,
        };
        Ok((
            memory,
            [scalar(shaped.shape[0]), scalar(shaped.shape[1])],
            [scalar(shaped.strides[0]), scalar(shaped.strides[1])],
        ))
    }

    /// A tile copy's slot, below `tile_copy::SLOTS` (undefined behaviour otherwise).
    pub(super) fn tile_slot(
        &self,
        frame: &mut Frame<'g>,
        slot: &'g Expression,
        span: Span,
    ) -> Execution<usize> {
        let value = self.expression(frame, slot)?;
        if value >= u64::from(kdsl_ir::tile_copy::SLOTS) {
            return Err(self.undefined(
                span,
                format!(
                    "tile copy slot {value}, not below {}",
                    kdsl_ir::tile_copy::SLOTS
                ),
            ));
        }
        Ok(value as usize)
    }
}
