//! Matrix-group tiles (`matrix_group_mma`) on NVIDIA processors with `mma.sync` but without
//! `wgmma` (sm_80 and later, sm_90a excepted): each warp of the matrix group computes its own 16
//! rows of the accumulator, `mma.sync.m16n8k16` (`f16`, `bf16`) or `m16n8k8` (tf32) once per 8 columns
//! and instruction depth, its registers loaded from local memory with `ldmatrix` at the indices
//! of the one layout definition (`GroupShape::a_index_in`, `b_index_in`; each `ldmatrix` row
//! is one 16-byte chunk, which the swizzle moves whole). The accumulator needs no shuffle:
//! within a warp, `accumulator_position` is these instructions' accumulator layout, element
//! `4 j + v` of a work-item's array being register `v` of the instruction for columns `8 j` to
//! `8 j + 7`.
//!
//! Registers of lane `l` (g = l / 4, t = l % 4; PTX ISA, "Matrix Fragments for mma.m16n8k16"
//! and "mma.m16n8k8"):
//! - `f16` and `bf16` `A` (16 × 16): register v holds (g + 8 (v % 2), 2 t + 8 (v / 2)) and the next column;
//! - `f16` and `bf16` `B` (16 × 8): register v holds (2 t + 8 v, g) and (2 t + 8 v + 1, g);
//! - tf32 `A` (16 × 8): register v holds (g + 8 (v % 2), t + 4 (v / 2)), rounded to tf32;
//!   `B` (8 × 8): register v holds (t + 4 v, g).
//!
//! A statement completes where it stands, its asynchronous form too; `matrix_group_wait` is
//! nothing here.

use super::{FunctionLowering, LowerError, Result};
use inkwell::builder::Builder;
use inkwell::types::IntType;
use inkwell::values::{BasicValueEnum, IntValue, PointerValue};
use inkwell::IntPredicate;
use kdsl_ir::matrix_group::{GroupInput, GroupShape, IndexArithmetic, GROUP_SIZE};
use kdsl_ir::{Expression, MatrixOp, ScalarType};

/// Work-items of a warp, the unit each `mma.sync` runs on.
const WARP: u32 = 32;

/// Statements of at most this many instruction depths are emitted straight, deeper ones as a
/// loop over them.
const UNROLLED_STEPS: u32 = 8;

impl<'ctx> FunctionLowering<'_, 'ctx> {
    pub(super) fn group_mma_by_warps(&mut self, op: &MatrixOp) -> Result<()> {
        let MatrixOp::GroupMultiplyAdd {
            shape,
            accumulator,
            a,
            a_offset,
            a_chunk,
            b,
            b_offset,
            b_chunk,
            ..
        } = op
        else {
            // Statements complete where they stand: there is nothing to wait for.
            return match op {
                MatrixOp::GroupWait { .. } => Ok(()),
                _ => Err(LowerError(format!(
                    "`{}` is not `matrix_group_mma`",
                    op.name()
                ))),
            };
        };
        let shape = *shape;
        let i32_type = self.context.i32_type();
        let constant = |value: u32| i32_type.const_int(u64::from(value), false);
        let a_base = self.group_tile_base(a)?;
        let b_base = self.group_tile_base(b)?;
        let a_offset = self.u32_operand(a_offset)?;
        let a_chunk = self.u32_operand(a_chunk)?;
        let b_offset = self.u32_operand(b_offset)?;
        let b_chunk = self.u32_operand(b_chunk)?;
        // This work-item's warp (16 rows) and its place in it.
        let linear = self.linear_local_id()?;
        let item = self
            .builder
            .build_and(linear, constant(GROUP_SIZE - 1), "")?;
        let warp = self
            .builder
            .build_right_shift(item, constant(5), false, "")?;
        let lane = self.builder.build_and(item, constant(WARP - 1), "")?;
        let warp = Warp {
            first_row: self.builder.build_left_shift(warp, constant(4), "")?,
            lane,
        };
        let steps = shape.depth / shape.depth_step();
        let layout = Layout {
            shape,
            a_base,
            b_base,
            a_offset,
            a_chunk,
            b_offset,
            b_chunk,
        };
        if steps <= UNROLLED_STEPS {
            // Straight-line steps: ptxas can load the next step's fragments during this
            // step's products.
            for step in 0..steps {
                let k = constant(step * shape.depth_step());
                self.group_mma_step(&layout, &warp, k, *accumulator)?;
            }
            return Ok(());
        }

        let function = self
            .builder
            .get_insert_block()
            .and_then(|block| block.get_parent())
            .ok_or_else(|| LowerError("a matrix group's statement outside a function".into()))?;
        let before = self
            .builder
            .get_insert_block()
            .ok_or_else(|| LowerError("no insertion block".into()))?;
        let body = self.context.append_basic_block(function, "group_mma_step");
        let done = self.context.append_basic_block(function, "group_mma_done");
        self.builder.build_unconditional_branch(body)?;
        self.builder.position_at_end(body);
        let step = self.builder.build_phi(i32_type, "step")?;
        step.add_incoming(&[(&constant(0), before)]);
        let step_value = step.as_basic_value().into_int_value();
        let k = self
            .builder
            .build_int_mul(step_value, constant(shape.depth_step()), "")?;
        self.group_mma_step(&layout, &warp, k, *accumulator)?;

        let next = self.builder.build_int_add(step_value, constant(1), "")?;
        let latch = self
            .builder
            .get_insert_block()
            .ok_or_else(|| LowerError("no insertion block".into()))?;
        step.add_incoming(&[(&next, latch)]);
        let finished =
            self.builder
                .build_int_compare(IntPredicate::EQ, next, constant(steps), "")?;
        self.builder
            .build_conditional_branch(finished, done, body)?;
        self.builder.position_at_end(done);
        Ok(())
    }

    /// One instruction depth of the statement, from depth `k` on: the warp's `A` fragment,
    /// then per pair of 8-column blocks their `B` fragments and products.
    fn group_mma_step(
        &mut self,
        layout: &Layout<'ctx>,
        warp: &Warp<'ctx>,
        k: IntValue<'ctx>,
        accumulator: kdsl_ir::PlaceBase,
    ) -> Result<()> {
        let shape = layout.shape;
        let a_registers = self.group_a_fragment(layout, warp, k)?;
        let name = match shape.input {
            GroupInput::F16 => "llvm.nvvm.mma.m16n8k16.row.col.f32.f32",
            GroupInput::Bf16 => "llvm.nvvm.mma.m16n8k16.row.col.bf16",
            GroupInput::Tf32 => "llvm.nvvm.mma.m16n8k8.row.col.tf32",
        };
        let blocks = shape.columns / 8;
        for pair in (0..blocks).step_by(2) {
            let single = pair + 1 == blocks;
            let b_registers = self.group_b_fragments(layout, warp, k, pair, single)?;
            for (block, b) in (pair..blocks.min(pair + 2)).zip(b_registers.chunks(2)) {
                let mut arguments = a_registers.clone();
                arguments.extend_from_slice(b);
                arguments.extend(self.accumulator_registers(accumulator, 4 * block, None)?);
                let function = self.intrinsic(name, &[])?;
                let result = self.call_value(function, &arguments)?.into_struct_value();
                let values = (0..4)
                    .map(|index| self.builder.build_extract_value(result, index, ""))
                    .collect::<std::result::Result<Vec<_>, _>>()?;
                self.accumulator_registers(accumulator, 4 * block, Some(&values))?;
            }
        }
        Ok(())
    }

    /// The first element of a local array that matrix groups read, as a local pointer.
    fn group_tile_base(&mut self, memory: &kdsl_ir::MatrixMemory) -> Result<PointerValue<'ctx>> {
        let zero = Expression {
            id: kdsl_ir::ExprId::UNNUMBERED,
            kind: kdsl_ir::ExpressionKind::Literal(kdsl_ir::Literal::Integer(0)),
            ty: ScalarType::U32,
            span: kdsl_ir::Span::default(),
        };
        self.matrix_address(memory, &zero)
    }

    fn u32_operand(&mut self, operand: &Expression) -> Result<IntValue<'ctx>> {
        Ok(self.expression(operand)?.into_int_value())
    }

    /// `A`'s four registers for the warp's 16 rows from depth `k` on: one `ldmatrix.x4` from
    /// the rows [`a_row_of_lane`] names; lane l receives 4 bytes of matrix m's row l / 4 at
    /// byte 4 (l % 4) in register m, the module comment's register m.
    fn group_a_fragment(
        &mut self,
        layout: &Layout<'ctx>,
        warp: &Warp<'ctx>,
        k: IntValue<'ctx>,
    ) -> Result<Vec<BasicValueEnum<'ctx>>> {
        let mut indices = Indices::new(&self.builder, self.context.i32_type());
        let (row, column) =
            a_row_of_lane(&mut indices, layout.shape, warp.first_row, warp.lane, k)?;
        let index =
            layout
                .shape
                .a_index_in(&mut indices, layout.a_offset, row, column, layout.a_chunk)?;
        let words = self.ldmatrix(layout.a_base, layout.shape, index, false)?;
        words
            .into_iter()
            .map(|word| self.input_register(layout.shape, word))
            .collect()
    }

    /// `B`'s registers for 8-column blocks `block` and `block + 1` from depth `k` on (two each:
    /// the module comment's), from one `ldmatrix.x4` from the rows [`b_row_of_lane`] names,
    /// transposed for `f16` and `bf16` (whose rows in memory are rows of `B`), as it is for
    /// tf32 (whose rows in memory are columns of `B`).
    fn group_b_fragments(
        &mut self,
        layout: &Layout<'ctx>,
        warp: &Warp<'ctx>,
        k: IntValue<'ctx>,
        block: u32,
        single: bool,
    ) -> Result<Vec<BasicValueEnum<'ctx>>> {
        let mut indices = Indices::new(&self.builder, self.context.i32_type());
        let (row, column) = b_row_of_lane(&mut indices, layout.shape, warp.lane, k, block, single)?;
        let index =
            layout
                .shape
                .b_index_in(&mut indices, layout.b_offset, row, column, layout.b_chunk)?;
        let transpose = layout.shape.input != GroupInput::Tf32;
        let words = self.ldmatrix(layout.b_base, layout.shape, index, transpose)?;
        words
            .into_iter()
            .map(|word| self.input_register(layout.shape, word))
            .collect()
    }

    /// One `ldmatrix.sync.aligned.m8n8.x4` (`.trans`) from this lane's row at element `index`.
    fn ldmatrix(
        &mut self,
        base: PointerValue<'ctx>,
        shape: GroupShape,
        index: IntValue<'ctx>,
        transpose: bool,
    ) -> Result<Vec<BasicValueEnum<'ctx>>> {
        let element = self.types.memory(shape.input_element());
        let wide = self
            .builder
            .build_int_z_extend(index, self.context.i64_type(), "")?;
        // SAFETY: the tiles lie inside their arrays (the statement's contract).
        let address = unsafe {
            self.builder
                .build_in_bounds_gep(element, base, &[wide], "")?
        };
        let name = if transpose {
            "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.trans.b16"
        } else {
            "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16"
        };
        let overloads = [address.get_type().into()];
        let overloaded = inkwell::intrinsics::Intrinsic::find(name)
            .ok_or_else(|| LowerError(format!("LLVM 22 has no intrinsic `{name}`")))?
            .is_overloaded();
        let function = self.intrinsic(name, if overloaded { &overloads } else { &[] })?;
        let result = self
            .call_value(function, &[address.into()])?
            .into_struct_value();
        (0..4)
            .map(|register| Ok(self.builder.build_extract_value(result, register, "")?))
            .collect()
    }

    /// A loaded 32-bit word as the instruction's operand: two `f16` (or `bf16`), or an `f32` rounded to
    /// tf32 (to nearest, ties away, as the plain definition).
    fn input_register(
        &mut self,
        shape: GroupShape,
        word: BasicValueEnum<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>> {
        match shape.input {
            GroupInput::F16 => {
                Ok(self
                    .builder
                    .build_bit_cast(word, self.context.f16_type().vec_type(2), "")?)
            }
            // Two `bf16` in one `b32`, as the instruction takes them.
            GroupInput::Bf16 => Ok(word),
            GroupInput::Tf32 => {
                let float = self
                    .builder
                    .build_bit_cast(word, self.context.f32_type(), "")?;
                self.call_intrinsic("llvm.nvvm.f2tf32.rna", &[], &[float])
            }
        }
    }

    /// Elements `first` to `first + 3` of the accumulator: loaded, or (`values`) stored.
    fn accumulator_registers(
        &mut self,
        accumulator: kdsl_ir::PlaceBase,
        first: u32,
        values: Option<&[BasicValueEnum<'ctx>]>,
    ) -> Result<Vec<BasicValueEnum<'ctx>>> {
        let base = self.tile_pointer(accumulator)?;
        let f32_type = self.types.memory(ScalarType::F32);
        let mut loaded = Vec::with_capacity(4);
        for register in 0..4u32 {
            let offset = self
                .context
                .i64_type()
                .const_int(u64::from(first + register), false);
            // SAFETY: the accumulator array has N / 2 elements (validated), `first + 3` below.
            let pointer = unsafe {
                self.builder
                    .build_in_bounds_gep(f32_type, base, &[offset], "")?
            };
            match values {
                Some(values) => {
                    self.builder
                        .build_store(pointer, values[register as usize])?;
                }
                None => loaded.push(self.builder.build_load(f32_type, pointer, "")?),
            }
        }
        Ok(loaded)
    }
}

/// A work-item's warp (its first row in the matrix group) and lane.
struct Warp<'ctx> {
    first_row: IntValue<'ctx>,
    lane: IntValue<'ctx>,
}

/// The element (row, k) of `A` that starts the 16-byte row lane `lane` addresses for
/// `ldmatrix.x4` at depth `k`, in the warp whose first row is `first_row`: matrix m = lane / 8
/// is rows 8 (m % 2) to 8 (m % 2) + 7 of the warp at depth `k` + (m / 2) E, E the elements of
/// 16 bytes, lane 8 m + r giving row r.
pub(crate) fn a_row_of_lane<A: IndexArithmetic>(
    arithmetic: &mut A,
    shape: GroupShape,
    first_row: A::Value,
    lane: A::Value,
    k: A::Value,
) -> std::result::Result<(A::Value, A::Value), A::Error> {
    let a = arithmetic;
    let LaneMatrix {
        row: row_in_matrix,
        half,
        odd_times_8,
    } = matrix_of_lane(a, lane)?;
    let row = a.add(first_row, row_in_matrix)?;
    let row = a.add(row, odd_times_8)?;
    let depth = a.shift_left(half, shape.chunk_elements().trailing_zeros())?;
    let depth = a.add(k, depth)?;
    Ok((row, depth))
}

/// The element (k, column) of `B` that starts the 16-byte row lane `lane` addresses for
/// `ldmatrix.x4` at depth `k` for 8-column blocks `block` and `block + 1` (matrices 0 and 1
/// the first, 2 and 3 the second; with `single`, 2 and 3 repeat 0 and 1, so no lane addresses
/// columns past N). `f16`/`bf16` rows in memory are rows of `B`: matrix m is k from `k` + 8
/// (m % 2), lane 8 m + r giving k + r, at columns 8 (`block` + m / 2) on. tf32 rows in memory
/// are columns of `B`: matrix m is columns 8 (`block` + m / 2) + r at k from `k` + 4 (m % 2).
pub(crate) fn b_row_of_lane<A: IndexArithmetic>(
    arithmetic: &mut A,
    shape: GroupShape,
    lane: A::Value,
    k: A::Value,
    block: u32,
    single: bool,
) -> std::result::Result<(A::Value, A::Value), A::Error> {
    let a = arithmetic;
    let LaneMatrix {
        row: row_in_matrix,
        half,
        odd_times_8,
    } = matrix_of_lane(a, lane)?;
    let half = if single { a.constant(0)? } else { half };
    let first_column = a.shift_left(half, 3)?;
    let block_column = a.constant(8 * block)?;
    let first_column = a.add(first_column, block_column)?;
    match shape.input {
        GroupInput::F16 | GroupInput::Bf16 => {
            let row = a.add(k, odd_times_8)?;
            let row = a.add(row, row_in_matrix)?;
            Ok((row, first_column))
        }
        GroupInput::Tf32 => {
            let odd_times_4 = a.shift_right(odd_times_8, 1)?;
            let row = a.add(k, odd_times_4)?;
            let column = a.add(first_column, row_in_matrix)?;
            Ok((row, column))
        }
    }
}

/// For `ldmatrix.x4`, which matrix m and row r a lane addresses (m = lane / 8, r = lane % 8).
struct LaneMatrix<V> {
    /// r.
    row: V,
    /// m / 2.
    half: V,
    /// 8 (m % 2).
    odd_times_8: V,
}

fn matrix_of_lane<A: IndexArithmetic>(
    a: &mut A,
    lane: A::Value,
) -> std::result::Result<LaneMatrix<A::Value>, A::Error> {
    let row = a.low_bits(lane.clone(), 3)?;
    let half = a.shift_right(lane.clone(), 4)?;
    let within_half = a.low_bits(lane, 4)?;
    let odd = a.shift_right(within_half, 3)?;
    let odd_times_8 = a.shift_left(odd, 3)?;
    Ok(LaneMatrix {
        row,
        half,
        odd_times_8,
    })
}

/// Where a statement's tiles lie.
struct Layout<'ctx> {
    shape: GroupShape,
    a_base: PointerValue<'ctx>,
    b_base: PointerValue<'ctx>,
    a_offset: IntValue<'ctx>,
    a_chunk: IntValue<'ctx>,
    b_offset: IntValue<'ctx>,
    b_chunk: IntValue<'ctx>,
}

/// The layouts' index arithmetic as `i32` instructions.
struct Indices<'b, 'ctx> {
    builder: &'b Builder<'ctx>,
    i32_type: IntType<'ctx>,
}

impl<'b, 'ctx> Indices<'b, 'ctx> {
    fn new(builder: &'b Builder<'ctx>, i32_type: IntType<'ctx>) -> Self {
        Indices { builder, i32_type }
    }

    fn literal(&self, value: u32) -> IntValue<'ctx> {
        self.i32_type.const_int(u64::from(value), false)
    }
}

impl<'ctx> IndexArithmetic for Indices<'_, 'ctx> {
    type Value = IntValue<'ctx>;
    type Error = LowerError;

    fn constant(&mut self, value: u32) -> Result<Self::Value> {
        Ok(self.literal(value))
    }

    fn add(&mut self, a: Self::Value, b: Self::Value) -> Result<Self::Value> {
        Ok(self.builder.build_int_add(a, b, "")?)
    }

    fn multiply(&mut self, a: Self::Value, b: Self::Value) -> Result<Self::Value> {
        Ok(self.builder.build_int_mul(a, b, "")?)
    }

    fn shift_left(&mut self, a: Self::Value, bits: u32) -> Result<Self::Value> {
        Ok(self.builder.build_left_shift(a, self.literal(bits), "")?)
    }

    fn shift_right(&mut self, a: Self::Value, bits: u32) -> Result<Self::Value> {
        Ok(self
            .builder
            .build_right_shift(a, self.literal(bits), false, "")?)
    }

    fn low_bits(&mut self, a: Self::Value, bits: u32) -> Result<Self::Value> {
        Ok(self
            .builder
            .build_and(a, self.literal((1 << bits) - 1), "")?)
    }

    fn xor(&mut self, a: Self::Value, b: Self::Value) -> Result<Self::Value> {
        Ok(self.builder.build_xor(a, b, "")?)
    }
}

#[cfg(test)]
mod tests;
