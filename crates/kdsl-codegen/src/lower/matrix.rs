//! Matrix tiles on NVIDIA tensor cores through `llvm.nvvm.wmma.*` (row-major tiles, an explicit
//! stride). A tile's private array holds the work-item's 32-bit fragment registers in its first
//! elements (8 `<2 x half>` of an `f16` tile, 4 tf32 words of a tf32 one, 2 words of four `i8`
//! or `u8` of an integer one, 8 `f32` or `i32` of an accumulator); the rest of the array is
//! never touched, so SROA keeps the fragment in registers. Targets without matrix units never get here: their statements were expanded
//! into plain IR (`kdsl_ir::matrix::expand_plain`).

use super::{FunctionLowering, LowerError, ParameterValue, Result};
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
        if !self.target.matrix_units.native() {
            return Err(LowerError(format!(
                "`{}` reached a target without matrix units unexpanded",
                op.name()
            )));
        }
        if let Some(instruction) = self.target.matrix_units.amdgpu_instruction(op.shape()) {
            return self.amdgpu_matrix(op, instruction);
        }
        match op {
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
            MatrixOp::MultiplyAdd { shape, d, a, b, c } => {
                let i32_type = self.context.i32_type().into();
                let (name, input_type, count) = match shape {
                    MatrixShape::F16M16N16K16 => (
                        "llvm.nvvm.wmma.m16n16k16.mma.row.row.f32.f32",
                        self.context.f16_type().vec_type(2).into(),
                        8,
                    ),
                    MatrixShape::Tf32M16N16K8 => {
                        ("llvm.nvvm.wmma.m16n16k8.mma.row.row.tf32", i32_type, 4)
                    }
                    // No `.satfinite`: the sum wraps.
                    MatrixShape::I8M16N16K16 => {
                        ("llvm.nvvm.wmma.m16n16k16.mma.row.row.s8", i32_type, 2)
                    }
                    MatrixShape::U8M16N16K16 => {
                        ("llvm.nvvm.wmma.m16n16k16.mma.row.row.u8", i32_type, 2)
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
        }
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
            (MatrixShape::Tf32M16N16K8, MatrixRole::A) => {
                "llvm.nvvm.wmma.m16n16k8.load.a.row.stride.tf32"
            }
            (MatrixShape::Tf32M16N16K8, MatrixRole::B) => {
                "llvm.nvvm.wmma.m16n16k8.load.b.row.stride.tf32"
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
            let value = self.builder.build_extract_value(result, index, "")?;
            // tf32 words arrive as the `f32` bits; the tensor cores read them rounded.
            let value = if shape == MatrixShape::Tf32M16N16K8 && role != MatrixRole::Accumulator {
                let float = self
                    .builder
                    .build_bit_cast(value, self.context.f32_type(), "")?;
                let rounded = self.call_intrinsic("llvm.nvvm.f2tf32.rna", &[], &[float])?;
                let as_float = self
                    .builder
                    .build_bit_cast(rounded, self.context.f32_type(), "")?;
                as_float
            } else {
                value
            };
            values.push(value);
        }
        self.set_fragment(tile, shape.element(role), &values)
    }

    /// The address of `memory[offset]`, in a space the wmma intrinsics take (generic, global
    /// or shared).
    fn matrix_address(
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
        let pointer = self.address(&place)?;
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
    fn tile_pointer(&self, tile: PlaceBase) -> Result<PointerValue<'ctx>> {
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
