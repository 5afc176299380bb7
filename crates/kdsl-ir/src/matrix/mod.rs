//! The language's matrix operations: sub-group tiles (`matrix_load_a`, `matrix_mma`, ...) and
//! matrix groups (`matrix_group_mma`), their shapes and names; their one definition as plain
//! IR is in the `plain` module ([`expand_plain`]).
//!
//! A tile lives in a private array holding the whole tile (`[f16; 256]` for a 16×16 `A`); the
//! sub-group holds it jointly and which of its elements a work-item's array holds is
//! unspecified (see docs/language.md, "Matrix tiles"). Targets with matrix units lower the
//! statements to them; every other target, and the interpreter, runs [`expand_plain`]'s
//! loops, which define what the operation computes.

pub(crate) mod plain;

pub use plain::{expand_plain, expand_plain_groups, expand_plain_in, PlainLayout};

use crate::ir::*;
use crate::matrix_group::{GroupInput, GroupShape};
use crate::types::{AddressSpace, ScalarType};
use serde::{Deserialize, Serialize};

/// The multiply-accumulate shapes and input types of the language.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MatrixShape {
    /// `f16` inputs, `f32` accumulator, M = N = K = 16.
    F16M16N16K16,
    /// `f32` inputs computed as tf32 (rounded to 10 mantissa bits), `f32` accumulator,
    /// M = N = 16, K = 8.
    Tf32M16N16K8,
    /// `i8` inputs, `i32` accumulator, M = N = K = 16.
    I8M16N16K16,
    /// `u8` inputs, `i32` accumulator, M = N = K = 16.
    U8M16N16K16,
    /// `bf16` inputs, `f32` accumulator, M = N = K = 16.
    Bf16M16N16K16,
}

impl MatrixShape {
    pub const ALL: [MatrixShape; 5] = [
        MatrixShape::F16M16N16K16,
        MatrixShape::Tf32M16N16K8,
        MatrixShape::I8M16N16K16,
        MatrixShape::U8M16N16K16,
        MatrixShape::Bf16M16N16K16,
    ];

    /// (M, N, K).
    pub fn mnk(self) -> (u32, u32, u32) {
        match self {
            MatrixShape::Tf32M16N16K8 => (16, 16, 8),
            MatrixShape::F16M16N16K16
            | MatrixShape::I8M16N16K16
            | MatrixShape::U8M16N16K16
            | MatrixShape::Bf16M16N16K16 => (16, 16, 16),
        }
    }

    /// The element type of the `A` and `B` tiles.
    pub fn input(self) -> ScalarType {
        match self {
            MatrixShape::F16M16N16K16 => ScalarType::F16,
            MatrixShape::Tf32M16N16K8 => ScalarType::F32,
            MatrixShape::I8M16N16K16 => ScalarType::I8,
            MatrixShape::U8M16N16K16 => ScalarType::U8,
            MatrixShape::Bf16M16N16K16 => ScalarType::Bf16,
        }
    }

    /// The element type of the accumulator (`C` and `D`): `i32` for integer inputs, else `f32`.
    pub fn accumulator(self) -> ScalarType {
        if self.input().is_integer() {
            ScalarType::I32
        } else {
            ScalarType::F32
        }
    }

    /// The shape as users read it: `m16n16k16 f16`.
    pub fn name(self) -> &'static str {
        match self {
            MatrixShape::F16M16N16K16 => "m16n16k16 f16",
            MatrixShape::Tf32M16N16K8 => "m16n16k8 tf32",
            MatrixShape::I8M16N16K16 => "m16n16k16 i8",
            MatrixShape::U8M16N16K16 => "m16n16k16 u8",
            MatrixShape::Bf16M16N16K16 => "m16n16k16 bf16",
        }
    }

    /// (rows, columns) of a tile of `role`.
    pub fn dimensions(self, role: MatrixRole) -> (u32, u32) {
        let (m, n, k) = self.mnk();
        match role {
            MatrixRole::A => (m, k),
            MatrixRole::B => (k, n),
            MatrixRole::Accumulator => (m, n),
        }
    }

    /// The element type of a tile of `role`.
    pub fn element(self, role: MatrixRole) -> ScalarType {
        match role {
            MatrixRole::A | MatrixRole::B => self.input(),
            MatrixRole::Accumulator => self.accumulator(),
        }
    }

    /// The shape whose `role` tile is a private array of `length` `element`s: `A` and `B`
    /// tiles name one shape; an accumulator fits every shape of its element type (`f32`:
    /// `f16` and tf32; `i32`: `i8` and `u8`), and gives the first.
    pub fn of_tile(role: MatrixRole, element: ScalarType, length: u64) -> Option<MatrixShape> {
        MatrixShape::ALL.into_iter().find(|shape| {
            let (rows, columns) = shape.dimensions(role);
            shape.element(role) == element && u64::from(rows * columns) == length
        })
    }
}

/// Which operand of `D = A × B + C` a tile is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MatrixRole {
    /// M × K, row-major in memory.
    A,
    /// K × N, row-major in memory.
    B,
    /// M × N: `C` and `D`.
    Accumulator,
}

impl MatrixRole {
    pub fn name(self) -> &'static str {
        match self {
            MatrixRole::A => "a",
            MatrixRole::B => "b",
            MatrixRole::Accumulator => "accumulator",
        }
    }
}

/// A buffer parameter or a one-dimensional local array that a tile is loaded from or
/// stored to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MatrixMemory {
    pub base: PlaceBase,
    pub element: ScalarType,
    pub space: AddressSpace,
}

/// One matrix statement. Every work-item of a sub-group reaches it together with the same
/// operands (offsets, strides and fill values are sub-group uniform).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum MatrixOp {
    /// `matrix_load_a(tile, memory, offset, stride)` (and `_b`, `_c`): element (r, c) of the
    /// tile is `memory[offset + r * stride + c]`.
    Load {
        shape: MatrixShape,
        role: MatrixRole,
        tile: PlaceBase,
        memory: MatrixMemory,
        offset: Expression,
        stride: Expression,
    },
    /// `matrix_store(tile, memory, offset, stride)`: an accumulator tile to memory.
    Store {
        shape: MatrixShape,
        tile: PlaceBase,
        memory: MatrixMemory,
        offset: Expression,
        stride: Expression,
    },
    /// `matrix_fill(tile, value)`: every element of an accumulator tile.
    Fill {
        shape: MatrixShape,
        tile: PlaceBase,
        value: Expression,
    },
    /// `matrix_mma(d, a, b, c)`: `D = A × B + C`; `d` may be `c`.
    MultiplyAdd {
        shape: MatrixShape,
        d: PlaceBase,
        a: PlaceBase,
        b: PlaceBase,
        c: PlaceBase,
    },
    /// `matrix_group_mma(acc, a, a_offset, a_chunk, b, b_offset, b_chunk, depth)`: a matrix
    /// group's `acc += A × B` (see [`crate::matrix_group`]). Its operands are uniform in the
    /// matrix group rather than the sub-group. `matrix_group_mma_async` (`asynchronous`) may
    /// go on after the statement, until a `matrix_group_wait`.
    GroupMultiplyAdd {
        shape: GroupShape,
        asynchronous: bool,
        accumulator: PlaceBase,
        a: MatrixMemory,
        a_offset: Expression,
        a_chunk: Expression,
        b: MatrixMemory,
        b_offset: Expression,
        b_chunk: Expression,
    },
    /// `matrix_group_wait(pending)`: waits until at most `pending` of the work-item's
    /// `matrix_group_mma_async` statements are still going on.
    GroupWait { pending: u32 },
}

impl MatrixOp {
    /// The sub-group tile shape; `None` for a matrix group's operation.
    pub fn shape(&self) -> Option<MatrixShape> {
        match self {
            MatrixOp::Load { shape, .. }
            | MatrixOp::Store { shape, .. }
            | MatrixOp::Fill { shape, .. }
            | MatrixOp::MultiplyAdd { shape, .. } => Some(*shape),
            MatrixOp::GroupMultiplyAdd { .. } | MatrixOp::GroupWait { .. } => None,
        }
    }

    /// The shape as users read it: `m16n16k16 f16`, `m64n128k64 f16`.
    pub fn shape_name(&self) -> String {
        match self {
            MatrixOp::GroupMultiplyAdd { shape, .. } => shape.name(),
            MatrixOp::GroupWait { pending } => pending.to_string(),
            _ => self
                .shape()
                .map(MatrixShape::name)
                .unwrap_or_default()
                .into(),
        }
    }

    /// The source name of the operation.
    pub fn name(&self) -> &'static str {
        match self {
            MatrixOp::Load {
                role: MatrixRole::A,
                ..
            } => "matrix_load_a",
            MatrixOp::Load {
                role: MatrixRole::B,
                ..
            } => "matrix_load_b",
            MatrixOp::Load {
                role: MatrixRole::Accumulator,
                ..
            } => "matrix_load_c",
            MatrixOp::Store { .. } => "matrix_store",
            MatrixOp::Fill { .. } => "matrix_fill",
            MatrixOp::MultiplyAdd { .. } => "matrix_mma",
            MatrixOp::GroupMultiplyAdd {
                asynchronous: false,
                ..
            } => GROUP_MULTIPLY_ADD,
            MatrixOp::GroupMultiplyAdd { .. } => GROUP_MULTIPLY_ADD_ASYNC,
            MatrixOp::GroupWait { .. } => GROUP_WAIT,
        }
    }

    /// The scalar operands.
    pub fn expressions(&self) -> Vec<&Expression> {
        match self {
            MatrixOp::Load { offset, stride, .. } | MatrixOp::Store { offset, stride, .. } => {
                vec![offset, stride]
            }
            MatrixOp::Fill { value, .. } => vec![value],
            MatrixOp::MultiplyAdd { .. } => Vec::new(),
            MatrixOp::GroupMultiplyAdd {
                a_offset,
                a_chunk,
                b_offset,
                b_chunk,
                ..
            } => vec![a_offset, a_chunk, b_offset, b_chunk],
            MatrixOp::GroupWait { .. } => Vec::new(),
        }
    }

    /// The tiles it writes and those it reads.
    pub fn tiles(&self) -> (Vec<PlaceBase>, Vec<PlaceBase>) {
        match self {
            MatrixOp::Load { tile, .. } | MatrixOp::Fill { tile, .. } => (vec![*tile], vec![]),
            MatrixOp::Store { tile, .. } => (vec![], vec![*tile]),
            MatrixOp::MultiplyAdd { d, a, b, c, .. } => (vec![*d], vec![*a, *b, *c]),
            MatrixOp::GroupMultiplyAdd { accumulator, .. } => {
                (vec![*accumulator], vec![*accumulator])
            }
            MatrixOp::GroupWait { .. } => (Vec::new(), Vec::new()),
        }
    }

    /// The buffers or local arrays it reads or writes.
    pub fn memories(&self) -> Vec<&MatrixMemory> {
        match self {
            MatrixOp::Load { memory, .. } | MatrixOp::Store { memory, .. } => vec![memory],
            MatrixOp::GroupMultiplyAdd { a, b, .. } => vec![a, b],
            MatrixOp::Fill { .. } | MatrixOp::MultiplyAdd { .. } | MatrixOp::GroupWait { .. } => {
                Vec::new()
            }
        }
    }
}

/// The source names of the matrix operations, which the checker handles apart from the
/// table of scalar built-ins (their operands are arrays).
pub const MATRIX_FUNCTIONS: &[&str] = &[
    "matrix_load_a",
    "matrix_load_b",
    "matrix_load_c",
    "matrix_store",
    "matrix_fill",
    "matrix_mma",
    GROUP_MULTIPLY_ADD,
    GROUP_MULTIPLY_ADD_ASYNC,
    GROUP_WAIT,
];

/// The names of a matrix group's statements: [`MatrixOp::GroupMultiplyAdd`] and its
/// asynchronous form, [`MatrixOp::GroupWait`].
pub const GROUP_MULTIPLY_ADD: &str = "matrix_group_mma";
pub const GROUP_MULTIPLY_ADD_ASYNC: &str = "matrix_group_mma_async";
pub const GROUP_WAIT: &str = "matrix_group_wait";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_follow_from_tiles() {
        use MatrixRole::*;
        use ScalarType::*;
        assert_eq!(
            MatrixShape::of_tile(A, F16, 256),
            Some(MatrixShape::F16M16N16K16)
        );
        assert_eq!(
            MatrixShape::of_tile(B, F32, 128),
            Some(MatrixShape::Tf32M16N16K8)
        );
        assert_eq!(
            MatrixShape::of_tile(Accumulator, F32, 256),
            Some(MatrixShape::F16M16N16K16)
        );
        assert_eq!(
            MatrixShape::of_tile(A, I8, 256),
            Some(MatrixShape::I8M16N16K16)
        );
        assert_eq!(
            MatrixShape::of_tile(B, U8, 256),
            Some(MatrixShape::U8M16N16K16)
        );
        assert_eq!(
            MatrixShape::of_tile(Accumulator, I32, 256),
            Some(MatrixShape::I8M16N16K16)
        );
        assert_eq!(MatrixShape::of_tile(A, I32, 256), None);
        assert_eq!(MatrixShape::of_tile(Accumulator, U32, 256), None);
        assert_eq!(MatrixShape::of_tile(A, F32, 256), None);
        assert_eq!(MatrixShape::of_tile(Accumulator, F16, 256), None);
        for role in [A, B] {
            assert_eq!(
                MatrixShape::of_tile(role, Bf16, 256),
                Some(MatrixShape::Bf16M16N16K16)
            );
        }
        assert_eq!(MatrixShape::of_tile(Accumulator, Bf16, 256), None);
        // Matrix groups take them as `f16` ones.
        assert_eq!(
            crate::GroupShape::of_tiles(Bf16, 32, 16).map(|shape| shape.input),
            Some(crate::matrix_group::GroupInput::Bf16)
        );
    }

    #[test]
    fn tf32_rounding_is_to_nearest_ties_away() {
        use crate::scalar::round_tf32;
        assert_eq!(round_tf32(0x3f80_1000), 0x3f80_2000); // a tie rounds up in magnitude
        assert_eq!(round_tf32(0xbf80_1000), 0xbf80_2000);
        assert_eq!(round_tf32(0x3f80_0fff), 0x3f80_0000);
        assert_eq!(round_tf32(0x3fff_f000), 0x4000_0000); // carries into the exponent
        assert_eq!(round_tf32(0x7f7f_f000), 0x7f80_0000); // past the largest tf32: infinity
        assert_eq!(round_tf32(0x7fc0_1234), 0x7fc0_1234); // NaNs unchanged
    }
}
