//! Matrix tiles on NVIDIA tensor cores through `llvm.nvvm.wmma.*` (row-major tiles, an explicit
//! stride). A tile's private array holds the work-item's 32-bit fragment registers in its first
//! elements (8 `<2 x half>` of an `f16` tile, 4 tf32 words of a tf32 one, 2 words of four `i8`
//! or `u8` of an integer one, 8 `f32` or `i32` of an accumulator); the rest of the array is
//! never touched, so SROA keeps the fragment in registers. Targets without matrix units never get here: their statements were expanded
//! into plain IR (`kdsl_ir::matrix::expand_plain`).
//!
//! tf32 tiles take `mma.sync.m16n8k8` twice instead of `wmma.m16n16k8` (which ptxas splits
//! into four m16n8k4 instructions), with the documented `mma` fragment layouts: lane `l`
//! (group `g = l / 4`, `t = l % 4`) holds `A` elements (g, t), (g + 8, t), (g, t + 4),
//! (g + 8, t + 4), from local memory in one `ldmatrix.x4` (eight rows of four words per
//! matrix); `B` elements (t, g), (t + 4, g), (t, g + 8), (t + 4, g + 8). The accumulator stays
//! `wmma`'s, which on sm_80 and later is the two m16n8 halves' `mma` layout, N 0-7 first.

use super::{FunctionLowering, LowerError, ParameterValue, Result};
use inkwell::intrinsics::Intrinsic;
use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicValue, BasicValueEnum, FloatValue, PointerValue};
use inkwell::AddressSpace as LlvmAddressSpace;
use kdsl_ir::{MatrixMemory, MatrixOp, MatrixRole, MatrixShape, Place, PlaceBase, ScalarType};

impl<'ctx> FunctionLowering<'_, 'ctx> {
    /// `x` rounded to tf32 (10 mantissa bits), to nearest with ties away from zero;
    /// infinities and NaNs unchanged (`kdsl_ir::scalar::round_tf32`).
    pub(super) fn round_tf32(&mut self, x: FloatValue<'ctx>) -> Result<BasicValueEnum<'ctx>> {
        let i32_type = self.context.i32_type();
        let constant = |value: u64| i32_type.const_int(value, false);
        let bits = self
            .builder
            .build_bit_cast(x, i32_type, "")?
            .into_int_value();
        let exponent = self.builder.build_and(bits, constant(0x7f80_0000), "")?;
        let special = self.builder.build_int_compare(
            inkwell::IntPredicate::EQ,
            exponent,
            constant(0x7f80_0000),
            "",
        )?;
        let half_up = self.builder.build_int_add(bits, constant(0x1000), "")?;
        let rounded = self.builder.build_and(half_up, constant(0xffff_e000), "")?;
        let chosen = self.builder.build_select(special, bits, rounded, "")?;
        Ok(self
            .builder
            .build_bit_cast(chosen, self.context.f32_type(), "")?)
    }

    pub(super) fn matrix(&mut self, op: &MatrixOp) -> Result<()> {
        let Some(shape) = op.shape() else {
            return self.group_matrix(op);
        };
        if !self.target.matrix_units.native() {
            return Err(LowerError(format!(
                "`{}` reached a target without matrix units unexpanded",
                op.name()
            )));
        }
        if let Some(instruction) = self.target.matrix_units.amdgpu_instruction(shape) {
            return self.amdgpu_matrix(op, instruction);
        }
        if let Some(unit) = self.target.matrix_units.cooperative_unit(shape) {
            return self.cooperative_matrix(op, unit);
        }
        match op {
            MatrixOp::Load {
                shape,
                role,
                tile,
                memory,
                offset,
                stride,
            } if *shape == MatrixShape::Tf32M16N16K8 && *role != MatrixRole::Accumulator => {
                self.tf32_load(*role, *tile, memory, offset, stride)
            }
            MatrixOp::Load {
                shape,
                role,
                tile,
                memory,
                offset,
                stride,
            } => self.wmma_load(*shape, *role, *tile, memory, offset, stride),
            MatrixOp::Store {
                shape,
                tile,
                memory,
                offset,
                stride,
            } => {
                let pointer = self.matrix_address(memory, offset)?;
                let stride = self.expression(stride)?;
                let (name, element) = match shape.accumulator() {
                    ScalarType::F32 => (
                        "llvm.nvvm.wmma.m16n16k16.store.d.row.stride.f32",
                        ScalarType::F32,
                    ),
                    _ => (
                        "llvm.nvvm.wmma.m16n16k16.store.d.row.stride.s32",
                        ScalarType::I32,
                    ),
                };
                let values = self.fragment_values(*tile, element, self.types.memory(element), 8)?;
                let mut arguments = vec![pointer.into()];
                arguments.extend(values);
                arguments.push(stride);
                let function = self.intrinsic(name, &[pointer.get_type().into()])?;
                let arguments: Vec<_> = arguments.into_iter().map(Into::into).collect();
                self.builder.build_call(function, &arguments, "")?;
                Ok(())
            }
            MatrixOp::Fill { shape, tile, value } => {
                let value = self.expression(value)?;
                let values = vec![value; 8];
                self.set_fragment(*tile, shape.accumulator(), &values)
            }
            MatrixOp::MultiplyAdd {
                shape: MatrixShape::Tf32M16N16K8,
                d,
                a,
                b,
                c,
            } => self.tf32_mma(*d, *a, *b, *c),
            MatrixOp::MultiplyAdd { shape, d, a, b, c } => {
                let i32_type = self.context.i32_type().into();
                let (name, input_type, count) = match shape {
                    MatrixShape::F16M16N16K16 => (
                        "llvm.nvvm.wmma.m16n16k16.mma.row.row.f32.f32",
                        self.context.f16_type().vec_type(2).into(),
                        8,
                    ),
                    MatrixShape::Tf32M16N16K8 => {
                        return Err(LowerError("tf32 tiles multiply through `tf32_mma`".into()))
                    }
                    // No `.satfinite`: the sum wraps.
                    MatrixShape::I8M16N16K16 => {
                        ("llvm.nvvm.wmma.m16n16k16.mma.row.row.s8", i32_type, 2)
                    }
                    MatrixShape::U8M16N16K16 => {
                        ("llvm.nvvm.wmma.m16n16k16.mma.row.row.u8", i32_type, 2)
                    }
                    // Two `bf16` in each of four `b32` registers per operand.
                    MatrixShape::Bf16M16N16K16 => {
                        ("llvm.nvvm.wmma.m16n16k16.mma.row.row.bf16", i32_type, 4)
                    }
                };
                let (input, accumulator) = (shape.input(), shape.accumulator());
                let accumulator_type = self.types.memory(accumulator);
                let mut arguments = self.fragment_values(*a, input, input_type, count)?;
                arguments.extend(self.fragment_values(*b, input, input_type, count)?);
                arguments.extend(self.fragment_values(*c, accumulator, accumulator_type, 8)?);
                let function = self.intrinsic(name, &[])?;
                let result = self.call_value(function, &arguments)?.into_struct_value();
                let mut values = Vec::with_capacity(8);
                for index in 0..8 {
                    values.push(self.builder.build_extract_value(result, index, "")?);
                }
                self.set_fragment(*d, accumulator, &values)
            }
            MatrixOp::GroupMultiplyAdd { .. } | MatrixOp::GroupWait { .. } => self.group_matrix(op),
        }
    }

    /// A matrix group's statement on the target's units (`MatrixGroups`).
    fn group_matrix(&mut self, op: &MatrixOp) -> Result<()> {
        match self.target.matrix_groups {
            crate::target::MatrixGroups::Wgmma => self.wgmma(op),
            crate::target::MatrixGroups::MmaSync => self.group_mma_by_warps(op),
            crate::target::MatrixGroups::Plain => Err(LowerError(format!(
                "`{}` reached a target without matrix units for matrix groups unexpanded",
                op.name()
            ))),
        }
    }

    /// A tf32 `A` or `B` fragment in the `mma.m16n8k8` layout (module comment), rounded.
    fn tf32_load(
        &mut self,
        role: MatrixRole,
        tile: PlaceBase,
        memory: &MatrixMemory,
        offset: &kdsl_ir::Expression,
        stride: &kdsl_ir::Expression,
    ) -> Result<()> {
        let pointer = self.matrix_address(memory, offset)?;
        let stride = self.expression(stride)?.into_int_value();
        let lane = self
            .call_intrinsic("llvm.nvvm.read.ptx.sreg.laneid", &[], &[])?
            .into_int_value();
        let b = &self.builder;
        let constant = |value: u64| self.context.i32_type().const_int(value, false);
        let group = b.build_right_shift(lane, constant(2), false, "")?;
        let thread = b.build_and(lane, constant(3), "")?;
        let words: Vec<BasicValueEnum<'ctx>> = if role == MatrixRole::A
            && pointer.get_type().get_address_space() == LlvmAddressSpace::from(3u16)
        {
            // Lanes 0-15 address rows 0-15 at column 0, lanes 16-31 the same rows at column 4.
            let row = b.build_and(lane, constant(15), "")?;
            let column = b.build_left_shift(
                b.build_right_shift(lane, constant(4), false, "")?,
                constant(2),
                "",
            )?;
            let index = b.build_int_add(b.build_int_mul(row, stride, "")?, column, "")?;
            let address = self.element_pointer(pointer, index)?;
            let name = "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16";
            let overloads = [address.get_type().into()];
            let intrinsic = Intrinsic::find(name)
                .ok_or_else(|| LowerError(format!("LLVM 22 has no intrinsic `{name}`")))?;
            let function = self.intrinsic(
                name,
                if intrinsic.is_overloaded() {
                    &overloads
                } else {
                    &[]
                },
            )?;
            let result = self
                .call_value(function, &[address.into()])?
                .into_struct_value();
            (0..4)
                .map(|index| self.builder.build_extract_value(result, index, ""))
                .collect::<std::result::Result<_, _>>()?
        } else {
            // (row, column) of each register: `A` (g + 8 (v % 2), t + 4 (v / 2)),
            // `B` (t + 4 (v % 2), g + 8 (v / 2)).
            let (row_base, column_base) = match role {
                MatrixRole::A => (group, thread),
                _ => (thread, group),
            };
            let (row_step, column_step) = match role {
                MatrixRole::A => (8, 4),
                _ => (4, 8),
            };
            let mut words = Vec::with_capacity(4);
            for register in 0..4u64 {
                let b = &self.builder;
                let row = b.build_int_add(row_base, constant(row_step * (register % 2)), "")?;
                let column =
                    b.build_int_add(column_base, constant(column_step * (register / 2)), "")?;
                let index = b.build_int_add(b.build_int_mul(row, stride, "")?, column, "")?;
                let address = self.element_pointer(pointer, index)?;
                let word = self
                    .builder
                    .build_load(self.context.i32_type(), address, "")?;
                if let Some(instruction) = word.as_instruction_value() {
                    instruction
                        .set_alignment(4)
                        .map_err(|e| LowerError(e.to_string()))?;
                }
                words.push(word);
            }
            words
        };
        let mut values = Vec::with_capacity(4);
        for word in words {
            let float = self
                .builder
                .build_bit_cast(word, self.context.f32_type(), "")?;
            let rounded = self.call_intrinsic("llvm.nvvm.f2tf32.rna", &[], &[float])?;
            values.push(
                self.builder
                    .build_bit_cast(rounded, self.context.f32_type(), "")?,
            );
        }
        self.set_fragment(tile, ScalarType::F32, &values)
    }

    /// `pointer` advanced by `index` (`u32`) `f32` elements.
    fn element_pointer(
        &mut self,
        pointer: PointerValue<'ctx>,
        index: inkwell::values::IntValue<'ctx>,
    ) -> Result<PointerValue<'ctx>> {
        let wide = self
            .builder
            .build_int_z_extend(index, self.context.i64_type(), "")?;
        // SAFETY: the tile lies inside `memory` (the caller's contract, as for `wmma`).
        Ok(unsafe {
            self.builder
                .build_in_bounds_gep(self.context.f32_type(), pointer, &[wide], "")?
        })
    }

    /// `d = a * b + c` on tf32 tiles: `mma.sync.m16n8k8` on each half of N.
    fn tf32_mma(&mut self, d: PlaceBase, a: PlaceBase, b: PlaceBase, c: PlaceBase) -> Result<()> {
        let i32_type = self.context.i32_type().into();
        let f32_type = self.context.f32_type().into();
        let a = self.fragment_values(a, ScalarType::F32, i32_type, 4)?;
        let b = self.fragment_values(b, ScalarType::F32, i32_type, 4)?;
        let c = self.fragment_values(c, ScalarType::F32, f32_type, 8)?;
        let function = self.intrinsic("llvm.nvvm.mma.m16n8k8.row.col.tf32", &[])?;
        let mut values = Vec::with_capacity(8);
        for half in 0..2 {
            let mut arguments = a.clone();
            arguments.extend_from_slice(&b[2 * half..2 * half + 2]);
            arguments.extend_from_slice(&c[4 * half..4 * half + 4]);
            let result = self.call_value(function, &arguments)?.into_struct_value();
            for index in 0..4 {
                values.push(self.builder.build_extract_value(result, index, "")?);
            }
        }
        self.set_fragment(d, ScalarType::F32, &values)
    }

    fn wmma_load(
        &mut self,
        shape: MatrixShape,
        role: MatrixRole,
        tile: PlaceBase,
        memory: &MatrixMemory,
        offset: &kdsl_ir::Expression,
        stride: &kdsl_ir::Expression,
    ) -> Result<()> {
        let name = match (shape, role) {
            (_, MatrixRole::Accumulator) => match shape.accumulator() {
                ScalarType::F32 => "llvm.nvvm.wmma.m16n16k16.load.c.row.stride.f32",
                _ => "llvm.nvvm.wmma.m16n16k16.load.c.row.stride.s32",
            },
            (MatrixShape::I8M16N16K16, MatrixRole::A) => {
                "llvm.nvvm.wmma.m16n16k16.load.a.row.stride.s8"
            }
            (MatrixShape::I8M16N16K16, MatrixRole::B) => {
                "llvm.nvvm.wmma.m16n16k16.load.b.row.stride.s8"
            }
            (MatrixShape::U8M16N16K16, MatrixRole::A) => {
                "llvm.nvvm.wmma.m16n16k16.load.a.row.stride.u8"
            }
            (MatrixShape::U8M16N16K16, MatrixRole::B) => {
                "llvm.nvvm.wmma.m16n16k16.load.b.row.stride.u8"
            }
            (MatrixShape::F16M16N16K16, MatrixRole::A) => {
                "llvm.nvvm.wmma.m16n16k16.load.a.row.stride.f16"
            }
            (MatrixShape::F16M16N16K16, MatrixRole::B) => {
                "llvm.nvvm.wmma.m16n16k16.load.b.row.stride.f16"
            }
            (MatrixShape::Bf16M16N16K16, MatrixRole::A) => {
                "llvm.nvvm.wmma.m16n16k16.load.a.row.stride.bf16"
            }
            (MatrixShape::Bf16M16N16K16, MatrixRole::B) => {
                "llvm.nvvm.wmma.m16n16k16.load.b.row.stride.bf16"
            }
            (MatrixShape::Tf32M16N16K8, _) => {
                return Err(LowerError("tf32 inputs load through `tf32_load`".into()))
            }
        };
        let pointer = self.matrix_address(memory, offset)?;
        let stride = self.expression(stride)?;
        let function = self.intrinsic(name, &[pointer.get_type().into()])?;
        let result = self
            .call_value(function, &[pointer.into(), stride])?
            .into_struct_value();
        let count = result.get_type().count_fields();
        let mut values = Vec::with_capacity(count as usize);
        for index in 0..count {
            values.push(self.builder.build_extract_value(result, index, "")?);
        }
        self.set_fragment(tile, shape.element(role), &values)
    }

    /// The address of `memory[offset]` in `memory`'s own address space.
    pub(super) fn matrix_element_address(
        &mut self,
        memory: &MatrixMemory,
        offset: &kdsl_ir::Expression,
    ) -> Result<PointerValue<'ctx>> {
        let place = Place {
            id: kdsl_ir::PlaceId::UNNUMBERED,
            base: memory.base,
            indices: vec![offset.clone()],
            element: memory.element,
            space: memory.space,
            field: None,
        };
        self.address(&place)
    }

    /// The address of `memory[offset]`, in a space the wmma intrinsics take (generic, global
    /// or shared).
    pub(super) fn matrix_address(
        &mut self,
        memory: &MatrixMemory,
        offset: &kdsl_ir::Expression,
    ) -> Result<PointerValue<'ctx>> {
        let pointer = self.matrix_element_address(memory, offset)?;
        let space = self.target.address_spaces.of(memory.space);
        if [0, 1, 3].contains(&space) {
            return Ok(pointer);
        }
        Ok(self.builder.build_address_space_cast(
            pointer,
            self.context.ptr_type(LlvmAddressSpace::default()),
            "",
        )?)
    }

    /// The tile's array as a pointer to its first element.
    pub(super) fn tile_pointer(&self, tile: PlaceBase) -> Result<PointerValue<'ctx>> {
        match tile {
            PlaceBase::Variable(id) => Ok(self.variables[id.0 as usize].pointer),
            PlaceBase::Parameter(id) => match self.parameters.get(id.0 as usize) {
                Some(ParameterValue::Array(pointer)) => Ok(*pointer),
                _ => Err(LowerError(format!("parameter %{} is not a tile", id.0))),
            },
        }
    }

    /// Writes a fragment's 32-bit registers into the first elements of the tile's array (a
    /// `<2 x half>` takes two `f16` elements, a tf32 word one `f32` element, a word of
    /// integer inputs four `i8`).
    fn set_fragment(
        &mut self,
        tile: PlaceBase,
        element: ScalarType,
        values: &[BasicValueEnum<'ctx>],
    ) -> Result<()> {
        let base = self.tile_pointer(tile)?;
        let element_type = self.types.memory(element);
        let mut index = 0u64;
        for value in values {
            let offset = self.context.i64_type().const_int(index, false);
            // SAFETY: the tile's array holds a whole tile, far more than its fragment.
            let pointer = unsafe {
                self.builder
                    .build_in_bounds_gep(element_type, base, &[offset], "")?
            };
            let store = self.builder.build_store(pointer, *value)?;
            store
                .set_alignment(element.size_in_bytes())
                .map_err(|e| LowerError(e.to_string()))?;
            index += u64::from(4 / element.size_in_bytes());
        }
        Ok(())
    }

    /// Reads `count` 32-bit fragment registers of type `ty` back from the array of a tile of
    /// `element`s (as `set_fragment` wrote them).
    fn fragment_values(
        &mut self,
        tile: PlaceBase,
        element: ScalarType,
        ty: BasicTypeEnum<'ctx>,
        count: u32,
    ) -> Result<Vec<BasicValueEnum<'ctx>>> {
        let base = self.tile_pointer(tile)?;
        let element_type = self.types.memory(element);
        let alignment = element.size_in_bytes();
        let step = u64::from(4 / alignment);
        let mut values = Vec::with_capacity(count as usize);
        for index in 0..u64::from(count) {
            let offset = self.context.i64_type().const_int(index * step, false);
            // SAFETY: as in `set_fragment`.
            let pointer = unsafe {
                self.builder
                    .build_in_bounds_gep(element_type, base, &[offset], "")?
            };
            let value = self.builder.build_load(ty, pointer, "")?;
            if let Some(instruction) = value.as_instruction_value() {
                instruction
                    .set_alignment(alignment)
                    .map_err(|e| LowerError(e.to_string()))?;
            }
            values.push(value);
        }
        Ok(values)
    }
}
