//! Matrix-group tiles: `matrix_group_mma`, a 64 × N × K multiply-accumulate that 128
//! work-items (a *matrix group*: local linear ids 128 g to 128 g + 127) compute together, with
//! `A` and `B` in local memory and the accumulator spread over the group's private arrays.
//! NVIDIA sm_90a lowers it to `wgmma.mma_async`; every other target, and the interpreter, runs
//! its plain definition (`crate::matrix::expand_plain`): each work-item computes its own
//! accumulator elements from local memory.
//!
//! The layouts below are the one definition the plain lowering, the wgmma lowering, the
//! documentation (docs/language.md, "Matrix-group tiles") and the tests share.

use crate::types::ScalarType;
use serde::{Deserialize, Serialize};

/// Work-items of a matrix group.
pub const GROUP_SIZE: u32 = 128;
/// Rows of the group's `A` and accumulator (M).
pub const ROWS: u32 = 64;
/// The widths N the accumulator can have: multiples of 8 up to 256.
pub const MAX_COLUMNS: u32 = 256;
/// The largest depth K of one statement.
pub const MAX_DEPTH: u32 = 4096;
/// `A` and `B` are stored in rows of this many bytes along their contiguous dimension ...
pub const SWIZZLE_ROW_BYTES: u32 = 128;
/// ... whose chunks of this many bytes are permuted within each group of 8 rows.
pub const CHUNK_BYTES: u32 = 16;
/// The most `matrix_group_mma_async` statements `matrix_group_wait` may leave going on.
pub const MAX_PENDING: u32 = 7;
/// The alignment (bytes) of local arrays that matrix groups read: 8 rows of 128 bytes, the
/// swizzle's period.
pub const TILE_ALIGNMENT_BYTES: u32 = 1024;

/// The input types of a matrix group's tiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum GroupInput {
    /// `f16` `A` and `B`, K 16 a step; `B` chunked along N.
    F16,
    /// `bf16` `A` and `B`, laid out as `f16` ones.
    Bf16,
    /// `f32` `A` and `B` computed as tf32, K 8 a step; `B` chunked along K.
    Tf32,
}

/// The shape of one `matrix_group_mma`: `f16` or tf32 inputs, an `f32` accumulator of
/// 64 × `columns` and a depth (K) of `depth`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GroupShape {
    pub input: GroupInput,
    /// N: a multiple of 8 from 8 to 256.
    pub columns: u32,
    /// K: a multiple of [`GroupShape::depth_step`].
    pub depth: u32,
}

impl GroupShape {
    /// The element type of the accumulator.
    pub const ACCUMULATOR: ScalarType = ScalarType::F32;

    /// The element type of `A` and `B` in memory.
    pub fn input_element(self) -> ScalarType {
        GroupInput::element(self.input)
    }

    /// The depth of one matrix-unit instruction; K is a multiple of it.
    pub fn depth_step(self) -> u32 {
        self.input.depth_step()
    }

    /// Elements of `A` or `B` in one 16-byte chunk.
    pub fn chunk_elements(self) -> u32 {
        CHUNK_BYTES / self.input_element().size_in_bytes()
    }

    /// The accumulator's length in each work-item's private array: 64 · N / 128.
    pub fn accumulator_length(self) -> u32 {
        ROWS * self.columns / GROUP_SIZE
    }

    /// The shape with inputs of `element` (`f16`, or `f32` for tf32) whose accumulator is
    /// `length` elements long, at `depth`; `None` when the element type has no shape, no
    /// shape has that length (N would not be a multiple of 8 from 8 to 256) or the depth is
    /// not a positive multiple of the instruction's (at most [`MAX_DEPTH`]).
    pub fn of_tiles(element: ScalarType, length: u64, depth: u64) -> Option<GroupShape> {
        let input = GroupInput::of_element(element)?;
        let columns = Self::columns_of_accumulator(length)?;
        input.valid_depth(depth).then_some(GroupShape {
            input,
            columns,
            depth: depth as u32,
        })
    }

    /// `f16` tiles' shape: [`GroupShape::of_tiles`] for `f16`.
    pub fn of_accumulator(length: u64, depth: u64) -> Option<GroupShape> {
        Self::of_tiles(ScalarType::F16, length, depth)
    }

    /// N of an accumulator `length` elements long: `None` unless N = 128 · length / 64 is a
    /// multiple of 8 from 8 to 256.
    pub fn columns_of_accumulator(length: u64) -> Option<u32> {
        let columns = length.checked_mul(u64::from(GROUP_SIZE))? / u64::from(ROWS);
        let valid = length > 0 && columns.is_multiple_of(8) && columns <= u64::from(MAX_COLUMNS);
        valid.then_some(columns as u32)
    }

    /// The shape as users read it: `m64n128k64 f16`, `m64n128k32 tf32`.
    pub fn name(self) -> String {
        let input = match self.input {
            GroupInput::F16 => "f16",
            GroupInput::Bf16 => "bf16",
            GroupInput::Tf32 => "tf32",
        };
        format!("m64n{}k{} {input}", self.columns, self.depth)
    }

    /// Elements in one 128-byte row of the swizzled layout: 64 `f16`, 32 `f32`.
    pub fn row_elements(self) -> u32 {
        SWIZZLE_ROW_BYTES / self.input_element().size_in_bytes()
    }

    /// The index in its local array of element (`row`, `column`) of a 64 × K `A` tile at
    /// `offset` with blocks `chunk` elements apart: before the swizzle, blocks of 128 bytes of
    /// `column`s (64 `f16`, 32 `f32`), each a row-major array of 128-byte rows, the rows of a
    /// block one after the other; then [`GroupShape::swizzle`].
    pub fn a_index(self, offset: u32, row: u32, column: u32, chunk: u32) -> u32 {
        let Ok(index) = self.a_index_in(&mut Numbers, offset, row, column, chunk);
        index
    }

    /// The index of element (`row`, `column`) of a K × N `B` tile: for `f16` as `A`'s (blocks
    /// of 64 `column`s, n); for tf32 as `A`'s of `B` transposed (blocks of 32 `row`s, k, each
    /// row of a block one column of `B`).
    pub fn b_index(self, offset: u32, row: u32, column: u32, chunk: u32) -> u32 {
        let Ok(index) = self.b_index_in(&mut Numbers, offset, row, column, chunk);
        index
    }

    /// wgmma's 128-byte swizzle of an index into the local array: its 16-byte chunk within
    /// its 128-byte row is exchanged with chunk `j ^ (r % 8)`, r the row's index in the array
    /// (the array starts 1024-byte aligned: the units swizzle address bits).
    pub fn swizzle(self, index: u32) -> u32 {
        let Ok(swizzled) = self.swizzle_in(&mut Numbers, index);
        swizzled
    }

    /// [`GroupShape::a_index`] in any [`IndexArithmetic`] (a lowering's code).
    pub fn a_index_in<A: IndexArithmetic>(
        self,
        arithmetic: &mut A,
        offset: A::Value,
        row: A::Value,
        column: A::Value,
        chunk: A::Value,
    ) -> Result<A::Value, A::Error> {
        let per_row = self.row_elements().trailing_zeros();
        let block = arithmetic.shift_right(column.clone(), per_row)?;
        let blocks = arithmetic.multiply(block, chunk)?;
        let rows = arithmetic.shift_left(row, per_row)?;
        let within = arithmetic.low_bits(column, per_row)?;
        let index = arithmetic.add(offset, blocks)?;
        let index = arithmetic.add(index, rows)?;
        let index = arithmetic.add(index, within)?;
        self.swizzle_in(arithmetic, index)
    }

    /// [`GroupShape::b_index`] in any [`IndexArithmetic`].
    pub fn b_index_in<A: IndexArithmetic>(
        self,
        arithmetic: &mut A,
        offset: A::Value,
        row: A::Value,
        column: A::Value,
        chunk: A::Value,
    ) -> Result<A::Value, A::Error> {
        match self.input {
            GroupInput::F16 | GroupInput::Bf16 => {
                self.a_index_in(arithmetic, offset, row, column, chunk)
            }
            GroupInput::Tf32 => self.a_index_in(arithmetic, offset, column, row, chunk),
        }
    }

    /// [`GroupShape::swizzle`] in any [`IndexArithmetic`].
    pub fn swizzle_in<A: IndexArithmetic>(
        self,
        arithmetic: &mut A,
        index: A::Value,
    ) -> Result<A::Value, A::Error> {
        let row = arithmetic.shift_right(index.clone(), self.row_elements().trailing_zeros())?;
        let row_in_period = arithmetic.low_bits(row, 3)?;
        let chunk = arithmetic.shift_left(row_in_period, self.chunk_elements().trailing_zeros())?;
        arithmetic.xor(index, chunk)
    }
}

/// The `u32` arithmetic that the layouts are written in ([`GroupShape::a_index_in`]), so one
/// definition gives numbers ([`Numbers`]), the plain definition's IR and a lowering's code.
/// Shifts and masks, as the layouts' sizes are powers of two.
pub trait IndexArithmetic {
    type Value: Clone;
    type Error;
    fn constant(&mut self, value: u32) -> Result<Self::Value, Self::Error>;
    fn add(&mut self, a: Self::Value, b: Self::Value) -> Result<Self::Value, Self::Error>;
    fn multiply(&mut self, a: Self::Value, b: Self::Value) -> Result<Self::Value, Self::Error>;
    /// `a · 2^bits`.
    fn shift_left(&mut self, a: Self::Value, bits: u32) -> Result<Self::Value, Self::Error>;
    /// `a / 2^bits`.
    fn shift_right(&mut self, a: Self::Value, bits: u32) -> Result<Self::Value, Self::Error>;
    /// `a % 2^bits`.
    fn low_bits(&mut self, a: Self::Value, bits: u32) -> Result<Self::Value, Self::Error>;
    fn xor(&mut self, a: Self::Value, b: Self::Value) -> Result<Self::Value, Self::Error>;
}

/// [`IndexArithmetic`] on numbers.
pub struct Numbers;

impl IndexArithmetic for Numbers {
    type Value = u32;
    type Error = std::convert::Infallible;
    fn constant(&mut self, value: u32) -> Result<u32, Self::Error> {
        Ok(value)
    }
    fn add(&mut self, a: u32, b: u32) -> Result<u32, Self::Error> {
        Ok(a.wrapping_add(b))
    }
    fn multiply(&mut self, a: u32, b: u32) -> Result<u32, Self::Error> {
        Ok(a.wrapping_mul(b))
    }
    fn shift_left(&mut self, a: u32, bits: u32) -> Result<u32, Self::Error> {
        Ok(a.wrapping_shl(bits))
    }
    fn shift_right(&mut self, a: u32, bits: u32) -> Result<u32, Self::Error> {
        Ok(a >> bits)
    }
    fn low_bits(&mut self, a: u32, bits: u32) -> Result<u32, Self::Error> {
        Ok(a & ((1u32 << bits) - 1))
    }
    fn xor(&mut self, a: u32, b: u32) -> Result<u32, Self::Error> {
        Ok(a ^ b)
    }
}

impl GroupInput {
    /// The depth of one matrix-unit instruction: 16 for `f16`, 8 for tf32.
    pub fn depth_step(self) -> u32 {
        match self {
            GroupInput::F16 | GroupInput::Bf16 => 16,
            GroupInput::Tf32 => 8,
        }
    }

    /// Whether K = `depth` is a positive multiple of [`GroupInput::depth_step`] up to
    /// [`MAX_DEPTH`].
    pub fn valid_depth(self, depth: u64) -> bool {
        depth > 0
            && depth.is_multiple_of(u64::from(self.depth_step()))
            && depth <= u64::from(MAX_DEPTH)
    }

    /// The input of `A` and `B` tiles of `element`: `f16`, or `f32` computed as tf32.
    pub fn of_element(element: ScalarType) -> Option<GroupInput> {
        match element {
            ScalarType::F16 => Some(GroupInput::F16),
            ScalarType::Bf16 => Some(GroupInput::Bf16),
            ScalarType::F32 => Some(GroupInput::Tf32),
            _ => None,
        }
    }

    /// The element type of `A` and `B` in memory.
    pub fn element(self) -> ScalarType {
        match self {
            GroupInput::F16 => ScalarType::F16,
            GroupInput::Bf16 => ScalarType::Bf16,
            GroupInput::Tf32 => ScalarType::F32,
        }
    }
}

/// The (row, column) of the accumulator that element `index` of work-item `item`'s array
/// holds (`item`: the position in the matrix group, 0 to 127). Sub-group-sized blocks of 32
/// work-items own 16 rows each; within a block this is the accumulator layout of NVIDIA's
/// `mma`/`wgmma` instructions, which the matrix units then need no shuffle for.
pub fn accumulator_position(item: u32, index: u32) -> (u32, u32) {
    let Ok(position) = accumulator_position_in(&mut Numbers, item, index);
    position
}

/// [`accumulator_position`] in any [`IndexArithmetic`]: row 16 (item / 32) + lane / 4 +
/// 8 ((index % 4) / 2), column 8 (index / 4) + 2 (lane % 4) + index % 2, lane = item % 32.
pub fn accumulator_position_in<A: IndexArithmetic>(
    arithmetic: &mut A,
    item: A::Value,
    index: A::Value,
) -> Result<(A::Value, A::Value), A::Error> {
    let a = arithmetic;
    let lane = a.low_bits(item.clone(), 5)?;
    let warp = a.shift_right(item, 5)?;
    let warp_rows = a.shift_left(warp, 4)?;
    let lane_row = a.shift_right(lane.clone(), 2)?;
    let pair = a.low_bits(index.clone(), 2)?;
    let pair = a.shift_right(pair, 1)?;
    let lower_half = a.shift_left(pair, 3)?;
    let row = a.add(warp_rows, lane_row)?;
    let row = a.add(row, lower_half)?;
    let block = a.shift_right(index.clone(), 2)?;
    let block_columns = a.shift_left(block, 3)?;
    let lane_column = a.low_bits(lane, 2)?;
    let lane_columns = a.shift_left(lane_column, 1)?;
    let odd = a.low_bits(index, 1)?;
    let column = a.add(block_columns, lane_columns)?;
    let column = a.add(column, odd)?;
    Ok((row, column))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_follow_from_accumulators() {
        assert_eq!(
            GroupShape::of_accumulator(64, 64),
            Some(GroupShape {
                input: GroupInput::F16,
                columns: 128,
                depth: 64
            })
        );
        assert_eq!(GroupShape::of_accumulator(128, 16).unwrap().columns, 256);
        assert_eq!(GroupShape::of_accumulator(4, 16).unwrap().columns, 8);
        assert_eq!(GroupShape::of_accumulator(130, 16), None); // N = 260
        assert_eq!(GroupShape::of_accumulator(6, 16), None); // N = 12
        assert_eq!(GroupShape::of_accumulator(64, 24), None);
        assert_eq!(GroupShape::of_accumulator(64, 0), None);
        assert_eq!(GroupShape::of_accumulator(0, 16), None);
        let tf32 = GroupShape::of_tiles(ScalarType::F32, 64, 8).unwrap();
        assert_eq!(
            (tf32.input, tf32.columns, tf32.depth_step()),
            (GroupInput::Tf32, 128, 8)
        );
        assert_eq!(GroupShape::of_tiles(ScalarType::F32, 64, 12), None);
        assert_eq!(GroupShape::of_tiles(ScalarType::I8, 64, 16), None);
    }

    #[test]
    fn every_accumulator_element_has_one_owner() {
        for columns in [8, 64, 256] {
            let shape = GroupShape::of_accumulator(u64::from(columns / 2), 16).unwrap();
            let mut seen = vec![0u32; (ROWS * columns) as usize];
            for item in 0..GROUP_SIZE {
                for index in 0..shape.accumulator_length() {
                    let (row, column) = accumulator_position(item, index);
                    assert!(row < ROWS && column < columns);
                    seen[(row * columns + column) as usize] += 1;
                }
            }
            assert!(seen.iter().all(|&count| count == 1), "N = {columns}");
        }
    }

    #[test]
    fn accumulator_positions_are_the_documented_ones() {
        // docs/language.md: row = 16 (t / 32) + (t % 32) / 4 + 8 ((i % 4) / 2), column =
        // 8 (i / 4) + 2 (t % 4) + i % 2.
        for item in 0..GROUP_SIZE {
            for index in 0..MAX_COLUMNS / 2 {
                let row = 16 * (item / 32) + (item % 32) / 4 + 8 * ((index % 4) / 2);
                let column = 8 * (index / 4) + 2 * (item % 4) + index % 2;
                assert_eq!(accumulator_position(item, index), (row, column));
            }
        }
    }

    #[test]
    fn rows_of_128_bytes_with_swizzled_chunks() {
        let f16 = GroupShape::of_accumulator(64, 16).unwrap();
        assert_eq!(f16.a_index(0, 0, 7, 8192), 7);
        assert_eq!(f16.a_index(0, 0, 8, 8192), 8);
        assert_eq!(f16.a_index(0, 1, 0, 8192), 64 + 8); // chunk 0 of row 1 at chunk 1
        assert_eq!(f16.a_index(0, 3, 9, 8192), 3 * 64 + (1 ^ 3) * 8 + 1);
        assert_eq!(f16.a_index(0, 0, 64, 8192), 8192);
        assert_eq!(
            f16.b_index(4096, 9, 70, 4096),
            8192 + 9 * 64 + 8 + 6 // chunk 0 of row 9 at chunk 1
        );
        // An offset inside a row moves the tile along the swizzled array.
        assert_eq!(f16.a_index(16, 1, 0, 8192), 64 + (2 ^ 1) * 8);
        assert_eq!(f16.a_index(16, 0, 48, 8192), 64 + 8); // row 1, chunk 0 at 1
        let tf32 = GroupShape::of_tiles(ScalarType::F32, 64, 8).unwrap();
        assert_eq!(tf32.a_index(0, 2, 5, 2048), 2 * 32 + (1 ^ 2) * 4 + 1);
        // `B` (k, n) of tf32: row n, chunk k / 4.
        assert_eq!(tf32.b_index(0, 5, 2, 8192), 2 * 32 + (1 ^ 2) * 4 + 1);
        assert_eq!(tf32.b_index(0, 33, 0, 8192), 8192 + 1);
        // Every element of a 64 x 128 tile has its own place.
        let mut seen = std::collections::HashSet::new();
        for row in 0..64 {
            for column in 0..128 {
                assert!(seen.insert(f16.a_index(8, row, column, 4096)));
            }
        }
    }
}
