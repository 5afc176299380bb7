//! Matrix-group tiles (`matrix_group_mma`) on sm_90a's warpgroup matrix units: one inline
//! assembly block per statement that fences local memory for the async proxy (so generic
//! writes before it, this work-item's or, after a barrier, any work-item's, reach wgmma's
//! reads; asynchronous copies need no fence of their own) and the accumulator, issues `wgmma.mma_async` once per
//! instruction depth (16 for `f16`, 8 for tf32) with shared-memory descriptors for `A` and `B`,
//! commits and, unless asynchronous, waits, so the statement completes where it stands as its
//! plain definition does. LLVM 22 has intrinsics for the fence, commit and wait but none for
//! `wgmma.mma_async` itself.
//!
//! The layouts of `kdsl_ir::matrix_group` are wgmma's canonical layouts of the 128-byte
//! swizzle: `A` K-major; `B` MN-major for `f16` (hence `imm-trans-b` = 1), K-major for tf32.
//! The stride-dimension offset of a descriptor is the distance between groups of 8 rows of
//! 128 bytes; the leading-dimension offset of an MN-major operand the distance between its
//! 128-byte-wide blocks along N (unused for K-major ones, which a step never leaves). The
//! accumulator's element `i` is the instruction's register `i` (`accumulator_position`).

use super::{FunctionLowering, LowerError, Result};
use inkwell::values::{BasicValueEnum, IntValue};
use kdsl_ir::matrix_group::{GroupInput, SWIZZLE_ROW_BYTES, TILE_ALIGNMENT_BYTES};
use kdsl_ir::{Expression, MatrixMemory, MatrixOp, ScalarType};

/// Bytes between two groups of 8 rows of 128 bytes: the swizzle's period.
const SWIZZLE_PERIOD_BYTES: u32 = TILE_ALIGNMENT_BYTES;

impl<'ctx> FunctionLowering<'_, 'ctx> {
    pub(super) fn wgmma(&mut self, op: &MatrixOp) -> Result<()> {
        if let MatrixOp::GroupWait { pending } = op {
            return self.wgmma_wait(*pending);
        }
        let MatrixOp::GroupMultiplyAdd {
            shape,
            asynchronous,
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
        let constant = |value: u64| i64_type.const_int(value, false);
        let element_bytes = u64::from(shape.input_element().size_in_bytes());
        let period = constant(u64::from(SWIZZLE_PERIOD_BYTES));
        let a_block_bytes = self.chunk_bytes(a_chunk, element_bytes)?;
        let b_block_bytes = self.chunk_bytes(b_chunk, element_bytes)?;
        // K-major operands (`A`; tf32's `B`) read 8-row groups 1024 bytes apart; their leading
        // offset is unused (one 16-byte unit by convention).
        let a_descriptor = self.descriptor(a, a_offset, constant(16), period)?;
        let (b_descriptor, instruction, transpose) = match shape.input {
            // `B` MN-major: 64-column blocks (of N) `b_chunk` elements apart, 8-row groups (of
            // K) 1024 bytes apart.
            GroupInput::F16 | GroupInput::Bf16 => {
                let input = shape.input_element().name();
                (
                    self.descriptor(b, b_offset, b_block_bytes, period)?,
                    format!("m64n{}k16.f32.{input}.{input}", shape.columns),
                    ", 0, 1",
                )
            }
            // tf32 has no transposed operands: `B` is K-major as `A` is.
            GroupInput::Tf32 => (
                self.descriptor(b, b_offset, constant(16), period)?,
                format!("m64n{}k8.f32.tf32.tf32", shape.columns),
                "",
            ),
        };
        // Step s reads k from `s * step` on: along a K-major operand, block `k / per_row` and
        // byte `k % per_row` of its rows (the units swizzle the address); along `B` of `f16`,
        // `step` rows of 128 bytes further. The descriptors' addresses count 16 bytes.
        let steps = shape.depth / shape.depth_step();
        let per_row = shape.row_elements();
        let mut descriptors: Vec<BasicValueEnum<'ctx>> = Vec::new();
        for step in 0..steps {
            let k = step * shape.depth_step();
            let along_k =
                |lowering: &mut Self, descriptor, block_bytes| -> Result<IntValue<'ctx>> {
                    let blocks = lowering.builder.build_int_mul(
                        block_bytes,
                        constant(u64::from(k / per_row)),
                        "",
                    )?;
                    let bytes = lowering.builder.build_int_add(
                        blocks,
                        constant(u64::from(k % per_row) * element_bytes),
                        "",
                    )?;
                    let units =
                        lowering
                            .builder
                            .build_right_shift(bytes, constant(4), false, "")?;
                    Ok(lowering.builder.build_int_add(descriptor, units, "")?)
                };
            descriptors.push(along_k(self, a_descriptor, a_block_bytes)?.into());
            let b = match shape.input {
                GroupInput::F16 | GroupInput::Bf16 => self.builder.build_int_add(
                    b_descriptor,
                    constant(u64::from(k * SWIZZLE_ROW_BYTES / 16)),
                    "",
                )?,
                GroupInput::Tf32 => along_k(self, b_descriptor, b_block_bytes)?,
            };
            descriptors.push(b.into());
        }

        let length = shape.accumulator_length();
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
                "wgmma.mma_async.sync.aligned.{instruction} {{{registers}}}, ${a_operand}, ${}, p, 1, 1{transpose};\n",
                a_operand + 1
            ));
        }
        assembly.push_str("wgmma.commit_group.sync.aligned;\n");
        if !asynchronous {
            assembly.push_str("wgmma.wait_group.sync.aligned 0;\n");
        }
        assembly.push('}');
        // The descriptors, then the scale-d predicate's source (1: D = A × B + D).
        let mut operands: Vec<(BasicValueEnum<'ctx>, &str)> =
            descriptors.into_iter().map(|value| (value, "l")).collect();
        operands.push((self.context.i32_type().const_int(1, false).into(), "r"));
        self.through_accumulator(*accumulator, length, assembly, &operands)?;
        Ok(())
    }

    /// Passes the accumulator's `length` elements through inline assembly `text` as in-out
    /// `f32` registers `$0`.. (tied), with `operands` (value, constraint) after them, ordered
    /// with memory, and stores what comes out back into the accumulator.
    fn through_accumulator(
        &mut self,
        accumulator: kdsl_ir::PlaceBase,
        length: u32,
        text: String,
        operands: &[(BasicValueEnum<'ctx>, &str)],
    ) -> Result<()> {
        let f32_type = self.context.f32_type();
        let values = self.group_accumulator(accumulator, length, false, &[])?;
        let mut constraints: Vec<String> = (0..length).map(|_| "=f".to_string()).collect();
        constraints.extend((0..length).map(|index| index.to_string()));
        let mut parameter_types: Vec<inkwell::types::BasicMetadataTypeEnum<'ctx>> =
            vec![f32_type.into(); length as usize];
        let mut arguments: Vec<inkwell::values::BasicMetadataValueEnum<'ctx>> =
            values.iter().map(|value| (*value).into()).collect();
        for (value, constraint) in operands {
            constraints.push(constraint.to_string());
            parameter_types.push(value.get_type().into());
            arguments.push((*value).into());
        }
        constraints.push("~{memory}".to_string());
        let result_type = self
            .context
            .struct_type(&vec![f32_type.into(); length as usize], false);
        let function_type = result_type.fn_type(&parameter_types, false);
        let assembly = self.context.create_inline_asm(
            function_type,
            text,
            constraints.join(","),
            true,
            false,
            None,
            false,
        );
        let call = self
            .builder
            .build_indirect_call(function_type, assembly, &arguments, "")?;
        let result = call
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| LowerError("accumulator assembly has no result".into()))?
            .into_struct_value();
        let mut outputs = Vec::with_capacity(length as usize);
        for index in 0..length {
            outputs.push(self.builder.build_extract_value(result, index, "")?);
        }
        self.group_accumulator(accumulator, length, true, &outputs)?;
        Ok(())
    }

    /// `wgmma.wait_group`, then every accumulator an asynchronous statement of the function
    /// writes passes through an empty assembly block, so nothing reads its registers before
    /// the wait (LLVM sees no other dependence between them).
    fn wgmma_wait(&mut self, pending: u32) -> Result<()> {
        self.ordered_assembly(&format!("wgmma.wait_group.sync.aligned {pending};"))?;
        let mut accumulators = Vec::new();
        kdsl_ir::visit::visit_block(
            &self.function.body,
            &mut AsynchronousAccumulators(&mut accumulators),
        );
        for (accumulator, length) in accumulators {
            self.through_accumulator(accumulator, length, String::new(), &[])?;
        }
        Ok(())
    }

    /// One instruction of inline assembly without operands, ordered with every memory access.
    fn ordered_assembly(&mut self, text: &str) -> Result<()> {
        let void = self.context.void_type().fn_type(&[], false);
        let assembly = self.context.create_inline_asm(
            void,
            text.to_string(),
            "~{memory}".to_string(),
            true,
            false,
            None,
            false,
        );
        self.builder.build_indirect_call(void, assembly, &[], "")?;
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

    /// A wgmma shared-memory descriptor of the 128-byte swizzle: the start address and the two
    /// offsets in 16-byte units, at bits 0, 16 and 32, and the layout type at bit 62. The
    /// swizzle follows address bits, so tiles are 1024-byte aligned (base offset 0).
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
        let descriptor = self.builder.build_or(descriptor, stride, "")?;
        // Layout type 1 at bits 62-63: the 128-byte swizzle.
        Ok(self.builder.build_or(descriptor, constant(1 << 62), "")?)
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

/// The accumulators (and lengths) of a function's `matrix_group_mma_async` statements, each
/// once.
struct AsynchronousAccumulators<'a>(&'a mut Vec<(kdsl_ir::PlaceBase, u32)>);

impl kdsl_ir::visit::Visitor for AsynchronousAccumulators<'_> {
    fn enter_statement(&mut self, statement: &kdsl_ir::Statement) {
        if let kdsl_ir::StatementKind::Matrix(MatrixOp::GroupMultiplyAdd {
            shape,
            accumulator,
            asynchronous: true,
            ..
        }) = &statement.kind
        {
            let entry = (*accumulator, shape.accumulator_length());
            if !self.0.contains(&entry) {
                self.0.push(entry);
            }
        }
    }
}
