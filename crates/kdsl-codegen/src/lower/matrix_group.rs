//! Matrix-group tiles (`matrix_group_mma`) on sm_90a's warpgroup matrix units: one inline
//! assembly block per statement that fences the accumulator, issues `wgmma.mma_async` once per
//! 16 of depth with shared-memory descriptors for `A` and `B`, commits and waits, so the
//! statement completes where it stands as its plain definition does. LLVM 22 has intrinsics for
//! the fence, commit and wait but none for `wgmma.mma_async` itself.
//!
//! The layouts of `kdsl_ir::matrix_group` are wgmma's unswizzled ("interleave") canonical
//! layouts: `A` K-major, `B` MN-major (hence `imm-trans-b` = 1), core matrices of 8 rows of 16
//! bytes stored contiguously. The leading-dimension offset of a descriptor is the distance
//! between core matrices along K, the stride-dimension offset the distance along M or N. The
//! accumulator's element `i` is the instruction's register `i` (`accumulator_position`).

use super::{FunctionLowering, LowerError, Result};
use inkwell::values::{BasicValueEnum, IntValue};
use kdsl_ir::matrix_group::{GroupShape, CHUNK_BYTES};
use kdsl_ir::{Expression, MatrixMemory, MatrixOp, ScalarType};

/// Bytes between two core matrices of 8 rows of 16 bytes stored one after the other.
const CORE_MATRIX_BYTES: u64 = 8 * CHUNK_BYTES as u64;

impl<'ctx> FunctionLowering<'_, 'ctx> {
    pub(super) fn wgmma(&mut self, op: &MatrixOp) -> Result<()> {
        let MatrixOp::GroupMultiplyAdd {
            shape,
            accumulator,
            a,
            a_offset,
            a_chunk,
            b,
            b_offset,
            b_chunk,
        } = op
        else {
            return Err(LowerError(format!(
                "`{}` is not `matrix_group_mma`",
                op.name()
            )));
        };
        let i64_type = self.context.i64_type();
        let element_bytes = u64::from(GroupShape::INPUT.size_in_bytes());
        // `A`: K-major, chunk columns `a_chunk` elements apart along K, 8-row blocks 128 bytes
        // apart along M.
        let a_chunk_bytes = self.chunk_bytes(a_chunk, element_bytes)?;
        let a_descriptor = self.descriptor(
            a,
            a_offset,
            a_chunk_bytes,
            i64_type.const_int(CORE_MATRIX_BYTES, false),
        )?;
        // `B`: MN-major, 8-row blocks (of K) 128 bytes apart, chunk columns (of N) `b_chunk`
        // elements apart.
        let b_chunk_bytes = self.chunk_bytes(b_chunk, element_bytes)?;
        let b_descriptor = self.descriptor(
            b,
            b_offset,
            i64_type.const_int(CORE_MATRIX_BYTES, false),
            b_chunk_bytes,
        )?;
        // Step s starts 2 s chunk columns further into `A` and 16 s rows further into `B`
        // (the descriptors' addresses count 16 bytes).
        let steps = shape.depth / GroupShape::depth_step();
        let a_step = self.builder.build_right_shift(
            a_chunk_bytes,
            i64_type.const_int(3, false),
            false,
            "",
        )?;
        let b_step = i64_type.const_int(
            u64::from(GroupShape::depth_step()) * u64::from(CHUNK_BYTES) / 16,
            false,
        );
        let mut descriptors: Vec<BasicValueEnum<'ctx>> = Vec::new();
        for step in 0..u64::from(steps) {
            let count = i64_type.const_int(step, false);
            let a_offset = self.builder.build_int_mul(a_step, count, "")?;
            let b_offset = self.builder.build_int_mul(b_step, count, "")?;
            descriptors.push(
                self.builder
                    .build_int_add(a_descriptor, a_offset, "")?
                    .into(),
            );
            descriptors.push(
                self.builder
                    .build_int_add(b_descriptor, b_offset, "")?
                    .into(),
            );
        }

        let length = shape.accumulator_length();
        let f32_type = self.context.f32_type();
        let values = self.group_accumulator(*accumulator, length, false, &[])?;
        let registers = (0..length)
            .map(|index| format!("${index}"))
            .collect::<Vec<_>>()
            .join(", ");
        let scale = 2 * length + 2 * steps;
        // Braces are literal in LLVM's inline assembly; `$(`, `$|` and `$)` would be dialect
        // variants.
        let mut assembly = format!(
            "{{\n.reg .pred p;\nsetp.ne.b32 p, ${scale}, 0;\nfence.proxy.async.shared::cta;\nwgmma.fence.sync.aligned;\n"
        );
        for step in 0..steps {
            let a_operand = 2 * length + 2 * step;
            assembly.push_str(&format!(
                "wgmma.mma_async.sync.aligned.m64n{}k16.f32.f16.f16 {{{registers}}}, ${a_operand}, ${}, p, 1, 1, 0, 1;\n",
                shape.columns,
                a_operand + 1
            ));
        }
        assembly.push_str("wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;\n}");
        let mut constraints: Vec<String> = (0..length).map(|_| "=f".to_string()).collect();
        constraints.extend((0..length).map(|index| index.to_string()));
        constraints.extend((0..2 * steps).map(|_| "l".to_string()));
        constraints.push("r".to_string());
        constraints.push("~{memory}".to_string());

        let result_type = self
            .context
            .struct_type(&vec![f32_type.into(); length as usize], false);
        let mut parameter_types: Vec<inkwell::types::BasicMetadataTypeEnum<'ctx>> =
            vec![f32_type.into(); length as usize];
        for _ in 0..2 * steps {
            parameter_types.push(i64_type.into());
        }
        parameter_types.push(self.context.i32_type().into());
        let function_type = result_type.fn_type(&parameter_types, false);
        let asm = self.context.create_inline_asm(
            function_type,
            assembly,
            constraints.join(","),
            true,
            false,
            None,
            false,
        );
        let mut arguments: Vec<inkwell::values::BasicMetadataValueEnum<'ctx>> =
            values.iter().map(|value| (*value).into()).collect();
        for descriptor in &descriptors {
            arguments.push((*descriptor).into());
        }
        arguments.push(self.context.i32_type().const_int(1, false).into());
        let call = self
            .builder
            .build_indirect_call(function_type, asm, &arguments, "")?;
        let result = call
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| LowerError("`wgmma` assembly has no result".into()))?
            .into_struct_value();
        let mut outputs = Vec::with_capacity(length as usize);
        for index in 0..length {
            outputs.push(self.builder.build_extract_value(result, index, "")?);
        }
        self.group_accumulator(*accumulator, length, true, &outputs)?;
        Ok(())
    }

    /// A `u32` chunk stride in elements as bytes, `i64`.
    fn chunk_bytes(&mut self, chunk: &Expression, element_bytes: u64) -> Result<IntValue<'ctx>> {
        let i64_type = self.context.i64_type();
        let chunk = self.expression(chunk)?.into_int_value();
        let wide = self.builder.build_int_z_extend(chunk, i64_type, "")?;
        Ok(self
            .builder
            .build_int_mul(wide, i64_type.const_int(element_bytes, false), "")?)
    }

    /// A wgmma shared-memory descriptor without swizzling: the start address and the two
    /// offsets in 16-byte units, at bits 0, 16 and 32.
    fn descriptor(
        &mut self,
        memory: &MatrixMemory,
        offset: &Expression,
        leading_bytes: IntValue<'ctx>,
        stride_bytes: IntValue<'ctx>,
    ) -> Result<IntValue<'ctx>> {
        let i64_type = self.context.i64_type();
        let constant = |value: u64| i64_type.const_int(value, false);
        let pointer = self.matrix_address(memory, offset)?;
        let address = self.builder.build_ptr_to_int(pointer, i64_type, "")?;
        let field =
            |lowering: &mut Self, value: IntValue<'ctx>, shift: u64| -> Result<IntValue<'ctx>> {
                let units = lowering
                    .builder
                    .build_right_shift(value, constant(4), false, "")?;
                let masked = lowering.builder.build_and(units, constant(0x3fff), "")?;
                Ok(lowering
                    .builder
                    .build_left_shift(masked, constant(shift), "")?)
            };
        let start = field(self, address, 0)?;
        let leading = field(self, leading_bytes, 16)?;
        let stride = field(self, stride_bytes, 32)?;
        let descriptor = self.builder.build_or(start, leading, "")?;
        Ok(self.builder.build_or(descriptor, stride, "")?)
    }

    /// Loads the accumulator's `length` `f32` elements, or (`store`) writes `values` to them.
    fn group_accumulator(
        &mut self,
        accumulator: kdsl_ir::PlaceBase,
        length: u32,
        store: bool,
        values: &[BasicValueEnum<'ctx>],
    ) -> Result<Vec<BasicValueEnum<'ctx>>> {
        let base = self.tile_pointer(accumulator)?;
        let f32_type = self.types.memory(ScalarType::F32);
        let mut loaded = Vec::new();
        for index in 0..u64::from(length) {
            let offset = self.context.i64_type().const_int(index, false);
            // SAFETY: the accumulator array has `length` elements (validated).
            let pointer = unsafe {
                self.builder
                    .build_in_bounds_gep(f32_type, base, &[offset], "")?
            };
            if store {
                self.builder.build_store(pointer, values[index as usize])?;
            } else {
                loaded.push(self.builder.build_load(f32_type, pointer, "")?);
            }
        }
        Ok(loaded)
    }
}
