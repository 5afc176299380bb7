//! Work-item queries, barriers and math functions, each lowered by the strategy the target
//! description names (sub-group and work-group collectives are in `collectives.rs`).

use super::{enum_attribute, FunctionLowering, LowerError, Result};
use crate::llvm;
use crate::target::{BarrierLowering, FenceLowering, MathStrategy, WorkItemLowering};
use inkwell::attributes::AttributeLoc;
use inkwell::intrinsics::Intrinsic;
use inkwell::types::{BasicMetadataTypeEnum, BasicType, BasicTypeEnum};
use inkwell::values::{
    BasicMetadataValueEnum, BasicValue, BasicValueEnum, FastMathFlags, FunctionValue, IntValue,
};
use inkwell::AtomicOrdering;
use kdsl_ir::{Expression, FenceFlags, MathFunction, ScalarType, WorkItemQuery};

/// Every id and size is below 2^31 under the index width rule (see docs/language.md).
const INDEX_LIMIT: u64 = 1 << 31;

/// OpenCL's `CLK_LOCAL_MEM_FENCE` and `CLK_GLOBAL_MEM_FENCE`.
const CLK_LOCAL_MEM_FENCE: u64 = 1;
const CLK_GLOBAL_MEM_FENCE: u64 = 2;
/// OpenCL's `memory_order_seq_cst` and `memory_scope_device`.
const MEMORY_ORDER_SEQ_CST: u64 = 5;
const MEMORY_SCOPE_DEVICE: u64 = 2;

/// The Itanium mangling of a scalar type, as in OpenCL builtin names.
pub(super) fn itanium_code(ty: ScalarType) -> &'static str {
    match ty {
        ScalarType::Bool => "b",
        ScalarType::I8 => "c",
        ScalarType::U8 => "h",
        ScalarType::I16 => "s",
        ScalarType::U16 => "t",
        ScalarType::I32 => "i",
        ScalarType::U32 => "j",
        ScalarType::I64 => "l",
        ScalarType::U64 => "m",
        ScalarType::F16 => "Dh",
        ScalarType::Bf16 => "DF16b",
        ScalarType::F32 => "f",
        ScalarType::F64 => "d",
    }
}

/// `_Z<len><name><parameter codes>`.
pub(super) fn mangle(name: &str, parameters: &str) -> String {
    format!("_Z{}{name}{parameters}", name.len())
}

/// Every work-item query.
pub(crate) const WORK_ITEM_QUERIES: [WorkItemQuery; 6] = [
    WorkItemQuery::GlobalId,
    WorkItemQuery::LocalId,
    WorkItemQuery::GroupId,
    WorkItemQuery::LocalSize,
    WorkItemQuery::GlobalSize,
    WorkItemQuery::NumGroups,
];

/// The OpenCL builtin (`size_t get_global_id(uint dimension)`, ...) that
/// [`WorkItemLowering::OpenClBuiltins`] calls for `query`, mangled.
pub(crate) fn opencl_work_item_function(query: WorkItemQuery) -> String {
    let name = match query {
        WorkItemQuery::GlobalId => "get_global_id",
        WorkItemQuery::LocalId => "get_local_id",
        WorkItemQuery::GroupId => "get_group_id",
        WorkItemQuery::LocalSize => "get_local_size",
        WorkItemQuery::GlobalSize => "get_global_size",
        WorkItemQuery::NumGroups => "get_num_groups",
    };
    mangle(name, "j")
}

impl<'ctx> FunctionLowering<'_, 'ctx> {
    /// The declaration of an LLVM intrinsic, overloaded on `overloads`.
    pub(super) fn intrinsic(
        &self,
        name: &str,
        overloads: &[BasicTypeEnum<'ctx>],
    ) -> Result<FunctionValue<'ctx>> {
        Intrinsic::find(name)
            .and_then(|intrinsic| intrinsic.get_declaration(self.module, overloads))
            .ok_or_else(|| LowerError(format!("LLVM 22 has no intrinsic `{name}` for these types")))
    }

    /// Declares (once) an external function: a target builtin or a math-library function.
    /// `pure` ones neither read nor write memory; every one is `convergent` unless pure.
    pub(super) fn external_function(
        &self,
        name: &str,
        result: Option<BasicTypeEnum<'ctx>>,
        parameters: &[BasicTypeEnum<'ctx>],
        pure: bool,
    ) -> FunctionValue<'ctx> {
        if let Some(existing) = self.module.get_function(name) {
            return existing;
        }
        let parameters: Vec<BasicMetadataTypeEnum> = parameters.iter().map(|&p| p.into()).collect();
        let function_type = match result {
            Some(result) => result.fn_type(&parameters, false),
            None => self.context.void_type().fn_type(&parameters, false),
        };
        let function = self.module.add_function(name, function_type, None);
        function.set_call_conventions(self.target.device_calling_convention);
        let context = self.context;
        function.add_attribute(
            AttributeLoc::Function,
            enum_attribute(context, "nounwind", 0),
        );
        if pure {
            function.add_attribute(
                AttributeLoc::Function,
                enum_attribute(context, "willreturn", 0),
            );
            // `memory(none)`.
            function.add_attribute(AttributeLoc::Function, enum_attribute(context, "memory", 0));
        } else {
            function.add_attribute(
                AttributeLoc::Function,
                enum_attribute(context, "convergent", 0),
            );
        }
        function
    }

    pub(super) fn call_function(
        &self,
        function: FunctionValue<'ctx>,
        arguments: &[BasicValueEnum<'ctx>],
    ) -> Result<Option<BasicValueEnum<'ctx>>> {
        let arguments: Vec<BasicMetadataValueEnum> = arguments.iter().map(|&a| a.into()).collect();
        let call = self.builder.build_call(function, &arguments, "")?;
        call.set_call_convention(function.get_call_conventions());
        Ok(call.try_as_basic_value().basic())
    }

    pub(super) fn call_value(
        &self,
        function: FunctionValue<'ctx>,
        arguments: &[BasicValueEnum<'ctx>],
    ) -> Result<BasicValueEnum<'ctx>> {
        self.call_function(function, arguments)?.ok_or_else(|| {
            LowerError(format!(
                "`{}` returns no value",
                function.get_name().to_string_lossy()
            ))
        })
    }

    pub(super) fn call_intrinsic(
        &self,
        name: &str,
        overloads: &[BasicTypeEnum<'ctx>],
        arguments: &[BasicValueEnum<'ctx>],
    ) -> Result<BasicValueEnum<'ctx>> {
        let function = self.intrinsic(name, overloads)?;
        self.call_value(function, arguments)
    }

    pub(super) fn i32_constant(&self, value: u64) -> IntValue<'ctx> {
        self.context.i32_type().const_int(value, false)
    }

    /// `a * b + c` on ids and sizes, which never wrap under the index width rule.
    pub(super) fn multiply_add(
        &self,
        a: IntValue<'ctx>,
        b: IntValue<'ctx>,
        c: IntValue<'ctx>,
    ) -> Result<IntValue<'ctx>> {
        let product = self.builder.build_int_nuw_mul(a, b, "")?;
        Ok(self.builder.build_int_nuw_add(product, c, "")?)
    }

    /// The local size of a kernel with `#[work_group_size]`: a constant, since the runtime
    /// launches it with no other size.
    fn required_local_size(&self, dimension: u8) -> Option<IntValue<'ctx>> {
        let size = self.function.work_group_size?;
        let extent = size.get(usize::from(dimension))?;
        Some(self.i32_constant(u64::from(*extent)))
    }

    /// A work-item query as a `u32`.
    pub(super) fn work_item(
        &mut self,
        query: WorkItemQuery,
        dimension: u8,
    ) -> Result<IntValue<'ctx>> {
        let axis = ["x", "y", "z"]
            .get(usize::from(dimension))
            .copied()
            .ok_or_else(|| LowerError(format!("work-item dimension {dimension}")))?;
        if query == WorkItemQuery::LocalSize {
            if let Some(size) = self.required_local_size(dimension) {
                return Ok(size);
            }
        }
        match self.target.work_items {
            WorkItemLowering::OpenClBuiltins => self.opencl_work_item(query, dimension),
            WorkItemLowering::NvvmSpecialRegisters => {
                let register = |name: &str| -> Result<IntValue<'ctx>> {
                    Ok(self
                        .call_intrinsic(
                            &format!("llvm.nvvm.read.ptx.sreg.{name}.{axis}"),
                            &[],
                            &[],
                        )?
                        .into_int_value())
                };
                match query {
                    WorkItemQuery::LocalId => register("tid"),
                    WorkItemQuery::LocalSize => register("ntid"),
                    WorkItemQuery::GroupId => register("ctaid"),
                    WorkItemQuery::NumGroups => register("nctaid"),
                    WorkItemQuery::GlobalId => {
                        let group = register("ctaid")?;
                        let size = match self.required_local_size(dimension) {
                            Some(size) => size,
                            None => register("ntid")?,
                        };
                        let local = register("tid")?;
                        self.multiply_add(group, size, local)
                    }
                    WorkItemQuery::GlobalSize => {
                        let groups = register("nctaid")?;
                        let size = match self.required_local_size(dimension) {
                            Some(size) => size,
                            None => register("ntid")?,
                        };
                        Ok(self.builder.build_int_nuw_mul(groups, size, "")?)
                    }
                }
            }
            WorkItemLowering::AmdgpuDispatchPacket => {
                let local_id = |this: &Self| -> Result<IntValue<'ctx>> {
                    Ok(this
                        .call_intrinsic(&format!("llvm.amdgcn.workitem.id.{axis}"), &[], &[])?
                        .into_int_value())
                };
                let group_id = |this: &Self| -> Result<IntValue<'ctx>> {
                    Ok(this
                        .call_intrinsic(&format!("llvm.amdgcn.workgroup.id.{axis}"), &[], &[])?
                        .into_int_value())
                };
                match query {
                    WorkItemQuery::LocalId => local_id(self),
                    WorkItemQuery::GroupId => group_id(self),
                    WorkItemQuery::LocalSize => self.dispatch_group_size(dimension),
                    WorkItemQuery::GlobalSize => self.dispatch_grid_size(dimension),
                    WorkItemQuery::GlobalId => {
                        let group = group_id(self)?;
                        let size = self.dispatch_group_size(dimension)?;
                        let local = local_id(self)?;
                        self.multiply_add(group, size, local)
                    }
                    WorkItemQuery::NumGroups => {
                        // Launches are whole work-groups; rounding up keeps this exact anyway.
                        let grid = self.dispatch_grid_size(dimension)?;
                        let size = self.dispatch_group_size(dimension)?;
                        let one = self.i32_constant(1);
                        let size_minus_one = self.builder.build_int_nuw_sub(size, one, "")?;
                        let padded = self.builder.build_int_nuw_add(grid, size_minus_one, "")?;
                        Ok(self.builder.build_int_unsigned_div(padded, size, "")?)
                    }
                }
            }
        }
    }

    fn opencl_work_item(&mut self, query: WorkItemQuery, dimension: u8) -> Result<IntValue<'ctx>> {
        let i64_type = self.context.i64_type();
        let function = self.external_function(
            &opencl_work_item_function(query),
            Some(i64_type.into()),
            &[self.context.i32_type().into()],
            true,
        );
        let value = self.call_value(function, &[self.i32_constant(u64::from(dimension)).into()])?;
        // `size_t` results below 2^31 (sizes at least 1): lets the optimizer narrow the
        // arithmetic and drop sign checks.
        let lower = u64::from(matches!(
            query,
            WorkItemQuery::LocalSize | WorkItemQuery::GlobalSize | WorkItemQuery::NumGroups
        ));
        if let Some(instruction) = value.as_instruction_value() {
            let range = self.context.metadata_node(&[
                i64_type.const_int(lower, false).into(),
                i64_type.const_int(INDEX_LIMIT, false).into(),
            ]);
            instruction
                .set_metadata(range, self.context.get_kind_id("range"))
                .map_err(|e| LowerError(e.to_string()))?;
        }
        Ok(self
            .builder
            .build_int_truncate(value.into_int_value(), self.context.i32_type(), "")?)
    }

    /// Reads a field of the HSA kernel dispatch packet.
    fn dispatch_field(
        &self,
        offset: u64,
        ty: inkwell::types::IntType<'ctx>,
    ) -> Result<IntValue<'ctx>> {
        let packet = self
            .call_intrinsic("llvm.amdgcn.dispatch.ptr", &[], &[])?
            .into_pointer_value();
        // SAFETY: the offset lies inside the 64-byte dispatch packet.
        let field = unsafe {
            self.builder.build_in_bounds_gep(
                self.context.i8_type(),
                packet,
                &[self.context.i64_type().const_int(offset, false)],
                "",
            )?
        };
        let value = self.builder.build_load(ty, field, "")?;
        if let Some(instruction) = value.as_instruction_value() {
            let bytes = ty.get_bit_width() / 8;
            instruction
                .set_alignment(bytes)
                .map_err(|e| LowerError(e.to_string()))?;
            let invariant = self.context.metadata_node(&[]);
            instruction
                .set_metadata(invariant, self.context.get_kind_id("invariant.load"))
                .map_err(|e| LowerError(e.to_string()))?;
        }
        Ok(value.into_int_value())
    }

    /// `workgroup_size_{x,y,z}`: `u16` at byte 4 + 2 * dimension of the dispatch packet.
    fn dispatch_group_size(&self, dimension: u8) -> Result<IntValue<'ctx>> {
        if let Some(size) = self.required_local_size(dimension) {
            return Ok(size);
        }
        let size = self.dispatch_field(4 + 2 * u64::from(dimension), self.context.i16_type())?;
        Ok(self
            .builder
            .build_int_z_extend(size, self.context.i32_type(), "")?)
    }

    /// `grid_size_{x,y,z}`: `u32` at byte 12 + 4 * dimension of the dispatch packet.
    fn dispatch_grid_size(&self, dimension: u8) -> Result<IntValue<'ctx>> {
        self.dispatch_field(12 + 4 * u64::from(dimension), self.context.i32_type())
    }

    pub(super) fn barrier(&mut self, fence: FenceFlags) -> Result<()> {
        match self.target.barrier {
            BarrierLowering::OpenClBuiltin => {
                let flags = if fence.local { CLK_LOCAL_MEM_FENCE } else { 0 }
                    | if fence.global {
                        CLK_GLOBAL_MEM_FENCE
                    } else {
                        0
                    };
                let function = self.external_function(
                    &mangle("barrier", "j"),
                    None,
                    &[self.context.i32_type().into()],
                    false,
                );
                self.call_function(function, &[self.i32_constant(flags).into()])?;
            }
            BarrierLowering::NvvmBarrier => {
                let function = self.intrinsic("llvm.nvvm.barrier.cta.sync.aligned.all", &[])?;
                self.call_function(function, &[self.i32_constant(0).into()])?;
            }
            BarrierLowering::AmdgpuFencedBarrier => {
                let scope = self.target.sync_scopes.work_group;
                llvm::fence(self.context, &self.builder, AtomicOrdering::Release, scope)?;
                let function = self.intrinsic("llvm.amdgcn.s.barrier", &[])?;
                self.call_function(function, &[])?;
                llvm::fence(self.context, &self.builder, AtomicOrdering::Acquire, scope)?;
            }
        }
        Ok(())
    }

    pub(super) fn device_fence(&mut self) -> Result<()> {
        match self.target.device_fence {
            FenceLowering::OpenClBuiltin => {
                let i32_type = self.context.i32_type();
                let function = self.external_function(
                    "_Z22atomic_work_item_fencej12memory_order12memory_scope",
                    None,
                    &[i32_type.into(), i32_type.into(), i32_type.into()],
                    false,
                );
                let flags = CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE;
                let arguments = [flags, MEMORY_ORDER_SEQ_CST, MEMORY_SCOPE_DEVICE]
                    .map(|value| self.i32_constant(value).into());
                self.call_function(function, &arguments)?;
            }
            FenceLowering::LlvmFence => llvm::fence(
                self.context,
                &self.builder,
                AtomicOrdering::SequentiallyConsistent,
                self.target.sync_scopes.device,
            )?,
        }
        Ok(())
    }

    /// `min` or `max` of two values of `ty`.
    pub(super) fn min_max(
        &self,
        function: MathFunction,
        ty: ScalarType,
        left: BasicValueEnum<'ctx>,
        right: BasicValueEnum<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>> {
        let minimum = function == MathFunction::Min;
        let name = match (ty.is_float(), ty.is_signed_integer(), minimum) {
            (true, _, true) => "llvm.minnum",
            (true, _, false) => "llvm.maxnum",
            (false, true, true) => "llvm.smin",
            (false, true, false) => "llvm.smax",
            (false, false, true) => "llvm.umin",
            (false, false, false) => "llvm.umax",
        };
        self.call_intrinsic(name, &[self.types.value(ty)], &[left, right])
    }

    /// Calls the math-library function `name` on `values` of type `ty`; `promote_half`
    /// computes `f16` in `f32` and rounds the result back once.
    pub(super) fn library_call(
        &mut self,
        name: &str,
        promote_half: bool,
        values: Vec<BasicValueEnum<'ctx>>,
        ty: ScalarType,
    ) -> Result<BasicValueEnum<'ctx>> {
        let value_type = self.types.value(ty);
        let (call_type, arguments) = if promote_half {
            let f32_type = self.context.f32_type();
            let mut promoted = Vec::with_capacity(values.len());
            for value in &values {
                promoted.push(
                    self.builder
                        .build_float_ext(value.into_float_value(), f32_type, "")?
                        .into(),
                );
            }
            (f32_type.into(), promoted)
        } else {
            (value_type, values)
        };
        let parameters = vec![call_type; arguments.len()];
        let declaration = self.external_function(name, Some(call_type), &parameters, true);
        let result = self.call_value(declaration, &arguments)?;
        if promote_half {
            Ok(self
                .builder
                .build_float_trunc(result.into_float_value(), value_type.into_float_type(), "")?
                .into())
        } else {
            Ok(result)
        }
    }

    pub(super) fn math(
        &mut self,
        function: MathFunction,
        arguments: &[Expression],
        ty: ScalarType,
    ) -> Result<BasicValueEnum<'ctx>> {
        let values = self.expressions(arguments)?;
        if values.len() != function.arity() {
            return Err(LowerError(format!(
                "`{}` takes {} arguments, got {}",
                function.name(),
                function.arity(),
                values.len()
            )));
        }
        if ty == ScalarType::Bf16 {
            return self.bf16_math(function, values);
        }
        self.math_values(function, values, ty)
    }

    /// A math function on the values of its arguments, of type `ty`.
    pub(super) fn math_values(
        &mut self,
        function: MathFunction,
        values: Vec<BasicValueEnum<'ctx>>,
        ty: ScalarType,
    ) -> Result<BasicValueEnum<'ctx>> {
        let value_type = self.types.value(ty);
        match self.target.math_strategy(function, ty) {
            MathStrategy::Intrinsic(name) => self.call_intrinsic(name, &[value_type], &values),
            MathStrategy::Library { name, promote_half } => {
                self.library_call(&name, promote_half, values, ty)
            }
            MathStrategy::Expanded => match function {
                MathFunction::NativeRecip | MathFunction::NativeDivide => {
                    let float_type = value_type.into_float_type();
                    let (numerator, denominator) = if function == MathFunction::NativeRecip {
                        (float_type.const_float(1.0), values[0].into_float_value())
                    } else {
                        (values[0].into_float_value(), values[1].into_float_value())
                    };
                    let quotient = self.builder.build_float_div(numerator, denominator, "")?;
                    if let Some(instruction) = quotient.as_instruction() {
                        instruction
                            .set_fast_math_flags(
                                FastMathFlags::AllowReciprocal | FastMathFlags::ApproxFunc,
                            )
                            .map_err(|e| LowerError(format!("{e:?}")))?;
                    }
                    Ok(quotient.into())
                }
                MathFunction::Abs if ty.is_signed_integer() => {
                    let poison_on_minimum = self.context.bool_type().const_zero();
                    if let (Some(copy), true) = (
                        self.target.legalization.narrow_abs_behind_copy,
                        ty.bit_width() < 32,
                    ) {
                        return self.narrow_abs_behind_copy(copy, values[0], value_type);
                    }
                    self.call_intrinsic(
                        "llvm.abs",
                        &[value_type],
                        &[values[0], poison_on_minimum.into()],
                    )
                }
                MathFunction::Abs => Ok(values[0]),
                MathFunction::RoundTf32 => self.round_tf32(values[0].into_float_value()),
                MathFunction::WrappingAdd
                | MathFunction::WrappingSub
                | MathFunction::WrappingMul => {
                    let op = match function {
                        MathFunction::WrappingAdd => kdsl_ir::BinaryOp::Add,
                        MathFunction::WrappingSub => kdsl_ir::BinaryOp::Subtract,
                        _ => kdsl_ir::BinaryOp::Multiply,
                    };
                    self.binary(op, ty, values[0], values[1], ty)
                }
                MathFunction::Min | MathFunction::Max => {
                    self.min_max(function, ty, values[0], values[1])
                }
                MathFunction::Popcount => {
                    self.call_intrinsic("llvm.ctpop", &[value_type], &[values[0]])
                }
                // Defined at zero (the bit width), as the language's `clz(0)`.
                MathFunction::Clz => {
                    let poison_at_zero = self.context.bool_type().const_zero();
                    self.call_intrinsic(
                        "llvm.ctlz",
                        &[value_type],
                        &[values[0], poison_at_zero.into()],
                    )
                }
                // `popcount(!x & (x - 1))`, the bit width at zero: LLVM's NVPTX backend at -O0
                // stops on `llvm.cttz.i64` feeding a branch ("Copy one register into another
                // with a different width", fuzzgen seed 7001043); from -O1 InstCombine makes
                // this `llvm.cttz` again.
                MathFunction::Ctz => {
                    let x = values[0].into_int_value();
                    let one = x.get_type().const_int(1, false);
                    let below = self.builder.build_int_sub(x, one, "")?;
                    let inverted = self.builder.build_not(x, "")?;
                    let trailing = self.builder.build_and(inverted, below, "")?;
                    self.call_intrinsic("llvm.ctpop", &[value_type], &[trailing.into()])
                }
                // A funnel shift of the value with itself takes the amount modulo the width.
                MathFunction::Rotate => self.call_intrinsic(
                    "llvm.fshl",
                    &[value_type],
                    &[values[0], values[0], values[1]],
                ),
                MathFunction::IsNan | MathFunction::IsInf | MathFunction::IsFinite => {
                    self.float_test(function, values[0], value_type)
                }
                MathFunction::Fmod => {
                    self.binary(kdsl_ir::BinaryOp::Remainder, ty, values[0], values[1], ty)
                }
                MathFunction::Clamp => {
                    let lower = self.min_max(MathFunction::Max, ty, values[0], values[1])?;
                    self.min_max(MathFunction::Min, ty, lower, values[2])
                }
                other => Err(LowerError(format!(
                    "`{}` on `{ty}` has no lowering",
                    other.name()
                ))),
            },
        }
    }

    /// Integer `abs` of an 8- or 16-bit value on its 32-bit extension, which first passes
    /// through `copy` (inline assembly LLVM cannot see through, so it cannot narrow the `abs`
    /// back to 8 or 16 bits), then the truncation.
    fn narrow_abs_behind_copy(
        &mut self,
        copy: &str,
        value: BasicValueEnum<'ctx>,
        value_type: BasicTypeEnum<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>> {
        let i32_type = self.context.i32_type();
        let wide = self
            .builder
            .build_int_s_extend(value.into_int_value(), i32_type, "")?;
        let copy_type = i32_type.fn_type(&[i32_type.into()], false);
        let assembly = self.context.create_inline_asm(
            copy_type,
            copy.to_string(),
            "=r,r".to_string(),
            false,
            false,
            None,
            false,
        );
        let call = self
            .builder
            .build_indirect_call(copy_type, assembly, &[wide.into()], "")?;
        // A pure copy: no memory, no synchronization, always returns (so the kernel keeps the
        // attributes LLVM infers for it).
        for name in ["nounwind", "willreturn", "nosync", "nofree", "memory"] {
            // `memory(none)` is the `memory` attribute with the value 0.
            call.add_attribute(
                AttributeLoc::Function,
                enum_attribute(self.context, name, 0),
            );
        }
        let copied = call
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| LowerError("the inline-assembly copy has no result".into()))?;
        let poison_on_minimum = self.context.bool_type().const_zero();
        let absolute = self.call_intrinsic(
            "llvm.abs",
            &[i32_type.into()],
            &[copied, poison_on_minimum.into()],
        )?;
        Ok(self
            .builder
            .build_int_truncate(absolute.into_int_value(), value_type.into_int_type(), "")?
            .into())
    }

    /// `isnan`, `isinf` and `isfinite` as comparisons (exact on every target): NaN is unordered
    /// with itself; infinities are the values whose magnitude equals infinity.
    fn float_test(
        &mut self,
        function: MathFunction,
        value: BasicValueEnum<'ctx>,
        value_type: BasicTypeEnum<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>> {
        use inkwell::FloatPredicate;
        let value = value.into_float_value();
        let float_type = value_type.into_float_type();
        let test = if function == MathFunction::IsNan {
            self.builder
                .build_float_compare(FloatPredicate::UNO, value, value, "")?
        } else {
            let magnitude = self
                .call_intrinsic("llvm.fabs", &[value_type], &[value.into()])?
                .into_float_value();
            let infinity = float_type.const_float(f64::INFINITY);
            let predicate = if function == MathFunction::IsInf {
                FloatPredicate::OEQ
            } else {
                FloatPredicate::ONE
            };
            self.builder
                .build_float_compare(predicate, magnitude, infinity, "")?
        };
        Ok(test.into())
    }
}
