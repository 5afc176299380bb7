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
/// `A` and `B` are stored in chunks of this many bytes along their contiguous dimension.
pub const CHUNK_BYTES: u32 = 16;

/// The shape of one `matrix_group_mma`: `f16` inputs, an `f32` accumulator of 64 × `columns`
/// and a depth (K) of `depth`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GroupShape {
    /// N: a multiple of 8 from 8 to 256.
    pub columns: u32,
    /// K: a multiple of [`GroupShape::depth_step`].
    pub depth: u32,
}

impl GroupShape {
    /// The element type of `A` and `B`.
    pub const INPUT: ScalarType = ScalarType::F16;
    /// The element type of the accumulator.
    pub const ACCUMULATOR: ScalarType = ScalarType::F32;

    /// The depth of one matrix-unit instruction; K is a multiple of it.
    pub fn depth_step() -> u32 {
        16
    }

    /// Elements of `A` or `B` in one 16-byte chunk.
    pub fn chunk_elements() -> u32 {
        CHUNK_BYTES / Self::INPUT.size_in_bytes()
    }

    /// The accumulator's length in each work-item's private array: 64 · N / 128.
    pub fn accumulator_length(self) -> u32 {
        ROWS * self.columns / GROUP_SIZE
    }

    /// The shape whose accumulator is `length` elements long, at `depth`; `None` when no
    /// shape has that length (N would not be a multiple of 8 from 8 to 256) or the depth is
    /// not a positive multiple of the instruction's.
    pub fn of_accumulator(length: u64, depth: u64) -> Option<GroupShape> {
        let columns = Self::columns_of_accumulator(length)?;
        Self::valid_depth(depth).then_some(GroupShape {
            columns,
            depth: depth as u32,
        })
    }

    /// N of an accumulator `length` elements long: `None` unless N = 128 · length / 64 is a
    /// multiple of 8 from 8 to 256.
    pub fn columns_of_accumulator(length: u64) -> Option<u32> {
        let columns = length.checked_mul(u64::from(GROUP_SIZE))? / u64::from(ROWS);
        let valid = length > 0 && columns.is_multiple_of(8) && columns <= u64::from(MAX_COLUMNS);
        valid.then_some(columns as u32)
    }

    /// Whether K = `depth` is a positive multiple of [`GroupShape::depth_step`] up to
    /// [`MAX_DEPTH`].
    pub fn valid_depth(depth: u64) -> bool {
        depth > 0
            && depth.is_multiple_of(u64::from(Self::depth_step()))
            && depth <= u64::from(MAX_DEPTH)
    }

    /// The shape as users read it: `m64n128k64 f16`.
    pub fn name(self) -> String {
        format!("m64n{}k{} f16", self.columns, self.depth)
    }
}

/// The (row, column) of the accumulator that element `index` of work-item `item`'s array
/// holds (`item`: the position in the matrix group, 0 to 127). Sub-group-sized blocks of 32
/// work-items own 16 rows each; within a block this is the accumulator layout of NVIDIA's
/// `mma`/`wgmma` instructions, which the matrix units then need no shuffle for.
pub fn accumulator_position(item: u32, index: u32) -> (u32, u32) {
    let lane = item % 32;
    let row = 16 * (item / 32) + lane / 4 + 8 * ((index % 4) / 2);
    let column = 8 * (index / 4) + 2 * (lane % 4) + index % 2;
    (row, column)
}

/// Where element (`row`, `column`) of the 64 × K `A` tile is, relative to its offset: chunks of
/// 8 consecutive `column`s (k), each chunk column of all 64 rows `chunk` elements after the
/// previous.
pub fn a_index(row: u32, column: u32, chunk: u32) -> u32 {
    let width = GroupShape::chunk_elements();
    (column / width) * chunk + row * width + column % width
}

/// Where element (`row`, `column`) of the K × N `B` tile is, relative to its offset: chunks of
/// 8 consecutive `column`s (n), each chunk column of all K rows `chunk` elements after the
/// previous.
pub fn b_index(row: u32, column: u32, chunk: u32) -> u32 {
    let width = GroupShape::chunk_elements();
    (column / width) * chunk + row * width + column % width
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_follow_from_accumulators() {
        assert_eq!(
            GroupShape::of_accumulator(64, 64),
            Some(GroupShape {
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
    }

    #[test]
    fn every_accumulator_element_has_one_owner() {
        for columns in [8, 64, 256] {
            let shape = GroupShape { columns, depth: 16 };
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
    fn chunks_are_sixteen_bytes_of_consecutive_columns() {
        assert_eq!(a_index(0, 7, 512), 7);
        assert_eq!(a_index(1, 0, 512), 8);
        assert_eq!(a_index(0, 8, 512), 512);
        assert_eq!(b_index(15, 9, 256), 256 + 15 * 8 + 1);
    }
}
