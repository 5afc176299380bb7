//! Checked mode (`kdsl compile --checked`): bounds checks on every buffer and array access,
//! checks of integer division and remainder and of integer overflow, reported through a fault
//! record.
//!
//! Every function of a checked module takes hidden parameters after its own: one `i64` element
//! count per buffer parameter, in order, then a pointer (global memory) to the fault record
//! ([`kdsl_bundle::FaultRecord`]). A call passes the caller's counts for the buffers it passes
//! on. A failed check calls `kdsl.checked.report`, which claims the record with a
//! compare-and-swap on its flag (so the first fault wins) and writes the fault; then the bad
//! access is skipped (a load or atomic gives 0, a division 0, an overflowing `+ - *` its
//! wrapped result) and the kernel goes on.
//!
//! A 0 in place of a failed load can keep a loop's condition true forever, so each work-item
//! also keeps a private "this work-item faulted" byte (an `alloca` in the kernel; device
//! functions get a pointer to it as their last hidden parameter), set at each failed check. The
//! back edge of a loop that does not synchronize (no barrier, sub-group or work-group operation,
//! itself or in a function it calls) leaves the loop once this work-item has faulted; a non-void
//! function left at its end this way returns 0. Loops that synchronize are not left early: one
//! work-item leaving them would make their barriers divergent. Other work-items are not
//! affected: they compute on until their own fault.
//!
//! Check sites are numbered by a walk over the IR in kdsl-ir
//! ([`kdsl_ir::analysis::CheckSites`]), independent of the target, so every image of a bundle
//! agrees with the site list in its metadata; the lowering finds them by node id.

use super::{FunctionLowering, LowerError, Result, Types};
use crate::llvm;
use crate::target::TargetDescription;
use inkwell::basic_block::BasicBlock;
use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::module::{Linkage, Module};
use inkwell::types::BasicMetadataTypeEnum;
use inkwell::values::{
    BasicMetadataValueEnum, BasicValueEnum, FunctionValue, InstructionValue, IntValue, PointerValue,
};
use inkwell::IntPredicate;
use kdsl_bundle::FaultKind;
use kdsl_ir::analysis::CheckSites;
use kdsl_ir::{
    AddressSpace, Argument, BinaryOp, Block, Expression, Function, FunctionId, FunctionKind,
    ParameterType, Place, PlaceBase, ScalarType, VariableType, WorkItemQuery,
};

const REPORT_FUNCTION: &str = "kdsl.checked.report";

pub(super) use kdsl_ir::analysis::check_sites::{
    is_checked_arithmetic, is_checked_division, is_checked_negation,
};

/// The check site of `place` in `function`, or the internal error of a site the plan lacks.
fn place_site(plan: &CheckSites, function: FunctionId, place: &Place) -> Result<u32> {
    plan.place_site(function, place)
        .ok_or_else(|| LowerError("a checked access has no check site".into()))
}

fn operation_site(plan: &CheckSites, function: FunctionId, expression: &Expression) -> Result<u32> {
    plan.operation_site(function, expression)
        .ok_or_else(|| LowerError("a checked operation has no check site".into()))
}

/// The LLVM types of a function's hidden parameters: one `i64` per buffer parameter, then the
/// fault record's pointer in the target's global address space; a device function then takes
/// the pointer to its work-item's "faulted" byte (private memory).
pub(super) fn hidden_parameter_types<'ctx>(
    types: &Types<'ctx>,
    target: &TargetDescription,
    function: &Function,
) -> Vec<BasicMetadataTypeEnum<'ctx>> {
    let buffers = function
        .parameters
        .iter()
        .filter(|p| matches!(p.ty, ParameterType::Buffer { .. }));
    let mut result: Vec<BasicMetadataTypeEnum> =
        buffers.map(|_| types.context.i64_type().into()).collect();
    result.push(
        types
            .pointer(target.address_spaces.of(AddressSpace::Global))
            .into(),
    );
    if function.kind == FunctionKind::Device {
        result.push(
            types
                .pointer(target.address_spaces.of(AddressSpace::Private))
                .into(),
        );
    }
    result
}

/// The hidden parameters' values inside a function of a checked module.
pub(crate) struct CheckedFunction<'a, 'ctx> {
    pub plan: &'a CheckSites,
    /// The function being lowered, whose sites the plan holds.
    function: FunctionId,
    /// The element count of each buffer parameter, by parameter index.
    lengths: Vec<Option<IntValue<'ctx>>>,
    record: PointerValue<'ctx>,
    /// This work-item's "faulted" byte: set at each failed check, read at loop back edges.
    faulted: PointerValue<'ctx>,
    report: FunctionValue<'ctx>,
}

impl<'a, 'ctx> CheckedFunction<'a, 'ctx> {
    /// Reads the hidden parameters of `value`, the LLVM function of `function`, and names them;
    /// a kernel's "faulted" byte is allocated and cleared at `builder`, in its entry block.
    pub(super) fn new(
        plan: &'a CheckSites,
        id: FunctionId,
        module: &Module<'ctx>,
        builder: &Builder<'ctx>,
        function: &Function,
        value: FunctionValue<'ctx>,
    ) -> Result<Self> {
        let mut next = function.parameters.len() as u32;
        let mut hidden = || {
            let parameter = value
                .get_nth_param(next)
                .ok_or_else(|| LowerError(format!("hidden parameter {next} is missing")));
            next += 1;
            parameter
        };
        let mut lengths = Vec::with_capacity(function.parameters.len());
        for parameter in &function.parameters {
            lengths.push(match parameter.ty {
                ParameterType::Buffer { .. } => {
                    let length = hidden()?;
                    length.set_name(&format!("{}.length", parameter.name));
                    Some(length.into_int_value())
                }
                ParameterType::Scalar { .. } | ParameterType::Array { .. } => None,
            });
        }
        let record = hidden()?;
        record.set_name("fault_record");
        let faulted = if function.kind == FunctionKind::Kernel {
            let byte = module.get_context().i8_type();
            let faulted = builder.build_alloca(byte, "faulted")?;
            builder.build_store(faulted, byte.const_zero())?;
            faulted
        } else {
            let faulted = hidden()?;
            faulted.set_name("faulted");
            faulted.into_pointer_value()
        };
        let report = module
            .get_function(REPORT_FUNCTION)
            .ok_or_else(|| LowerError(format!("{REPORT_FUNCTION} is not declared")))?;
        Ok(CheckedFunction {
            plan,
            function: id,
            lengths,
            record: record.into_pointer_value(),
            faulted,
            report,
        })
    }
}

/// Declares and defines `kdsl.checked.report(record, kind, site, index, length, id0, id1,
/// id2)`: claims the record with a compare-and-swap of its flag from 0 to 1 and, if this
/// work-item won, writes the fault's words.
pub(super) fn define_report_function<'ctx>(
    context: &'ctx Context,
    module: &Module<'ctx>,
    types: &Types<'ctx>,
    target: &TargetDescription,
) -> Result<()> {
    let i64_type = context.i64_type();
    let record_type = types.pointer(target.address_spaces.of(AddressSpace::Global));
    let mut parameters: Vec<BasicMetadataTypeEnum> = vec![record_type.into()];
    parameters.extend(std::iter::repeat_n(
        BasicMetadataTypeEnum::from(i64_type),
        7,
    ));
    let function = module.add_function(
        REPORT_FUNCTION,
        context.void_type().fn_type(&parameters, false),
        Some(Linkage::Internal),
    );
    function.set_call_conventions(target.device_calling_convention);
    for attribute in ["nounwind", "cold", "noinline"] {
        function.add_attribute(
            inkwell::attributes::AttributeLoc::Function,
            context.create_enum_attribute(
                inkwell::attributes::Attribute::get_named_enum_kind_id(attribute),
                0,
            ),
        );
    }
    let builder = context.create_builder();
    let entry = context.append_basic_block(function, "entry");
    let write = context.append_basic_block(function, "first_fault");
    let done = context.append_basic_block(function, "done");
    builder.position_at_end(entry);
    let record = function
        .get_nth_param(0)
        .ok_or_else(|| LowerError("report: no record parameter".into()))?
        .into_pointer_value();
    let i32_type = context.i32_type();
    let old = llvm::compare_exchange(
        context,
        &builder,
        record,
        i32_type.const_zero().into(),
        i32_type.const_int(1, false).into(),
        target.sync_scopes.device,
    )?;
    let first = builder.build_int_compare(
        IntPredicate::EQ,
        old.into_int_value(),
        i32_type.const_zero(),
        "first",
    )?;
    builder.build_conditional_branch(first, write, done)?;
    builder.position_at_end(write);
    for word in 1..8u32 {
        let value = function
            .get_nth_param(word)
            .ok_or_else(|| LowerError(format!("report: no parameter {word}")))?;
        // SAFETY: the record holds eight i64 words and `word` is below eight.
        let slot = unsafe {
            builder.build_in_bounds_gep(
                i64_type,
                record,
                &[i64_type.const_int(u64::from(word), false)],
                "",
            )?
        };
        let store = builder.build_store(slot, value)?;
        store
            .set_alignment(8)
            .map_err(|e| LowerError(e.to_string()))?;
    }
    builder.build_unconditional_branch(done)?;
    builder.position_at_end(done);
    builder.build_return(None)?;
    Ok(())
}

/// The blocks a guarded access continues in: the in-bounds path ends there and every failed
/// check jumps there.
pub(super) struct Guard<'ctx> {
    after: BasicBlock<'ctx>,
    failed: Vec<BasicBlock<'ctx>>,
}

impl<'ctx> FunctionLowering<'_, 'ctx> {
    fn checked_state(&self) -> Result<&CheckedFunction<'_, 'ctx>> {
        self.checked
            .as_ref()
            .ok_or_else(|| LowerError("a checked operation in an unchecked module".into()))
    }

    /// The branch from a loop's end back to `head`. In checked mode a loop that does not
    /// synchronize goes to `exit` instead once this work-item has faulted, so a failed check
    /// that keeps the loop's condition true still lets the work-item end and report it.
    pub(super) fn loop_back_edge(
        &mut self,
        head: BasicBlock<'ctx>,
        exit: BasicBlock<'ctx>,
        body: &Block,
        continuing: &Block,
    ) -> Result<InstructionValue<'ctx>> {
        let faulted = match &self.checked {
            Some(checked)
                if !checked.plan.synchronizes(body) && !checked.plan.synchronizes(continuing) =>
            {
                checked.faulted
            }
            _ => return Ok(self.builder.build_unconditional_branch(head)?),
        };
        let byte = self.context.i8_type();
        let flag = self
            .builder
            .build_load(byte, faulted, "faulted")?
            .into_int_value();
        let clean =
            self.builder
                .build_int_compare(IntPredicate::EQ, flag, byte.const_zero(), "clean")?;
        Ok(self.builder.build_conditional_branch(clean, head, exit)?)
    }

    /// The arguments a call passes after the callee's own: the lengths of the buffers passed
    /// on, the fault record, then this work-item's "faulted" byte. Nothing in an unchecked
    /// module.
    pub(super) fn hidden_call_arguments(
        &self,
        arguments: &[Argument],
    ) -> Result<Vec<BasicMetadataValueEnum<'ctx>>> {
        let Some(checked) = &self.checked else {
            return Ok(Vec::new());
        };
        let mut values = Vec::new();
        for argument in arguments {
            if let Argument::Buffer(id) = argument {
                let length = checked
                    .lengths
                    .get(id.0 as usize)
                    .copied()
                    .flatten()
                    .ok_or_else(|| LowerError(format!("parameter %{} has no length", id.0)))?;
                values.push(length.into());
            }
        }
        values.push(checked.record.into());
        values.push(checked.faulted.into());
        Ok(values)
    }

    /// The indices of a place as 64-bit values; a signed index is sign-extended so that a
    /// negative one fails the unsigned bounds comparison.
    pub(super) fn checked_indices(&mut self, place: &Place) -> Result<Vec<IntValue<'ctx>>> {
        let i64_type = self.context.i64_type();
        let mut indices = Vec::with_capacity(place.indices.len());
        for index in &place.indices {
            let value = self.expression(index)?.into_int_value();
            let wide = if value.get_type().get_bit_width() >= 64 {
                value
            } else if index.ty.is_signed_integer() {
                self.builder.build_int_s_extend(value, i64_type, "")?
            } else {
                self.builder.build_int_z_extend(value, i64_type, "")?
            };
            indices.push(wide);
        }
        Ok(indices)
    }

    /// Checks every index of `place` against its extent; continues in the block where all
    /// are in bounds. Each failure reports its site and jumps to the guard's `after` block.
    pub(super) fn guard_place(
        &mut self,
        place: &Place,
        indices: &[IntValue<'ctx>],
    ) -> Result<Guard<'ctx>> {
        let first_site = {
            let checked = self.checked_state()?;
            place_site(checked.plan, checked.function, place)?
        };
        let i64_type = self.context.i64_type();
        let constant_extents = |ty: &kdsl_ir::ArrayType| -> Vec<IntValue<'ctx>> {
            ty.dimensions
                .iter()
                .map(|&d| i64_type.const_int(u64::from(d), false))
                .collect()
        };
        let extents: Vec<IntValue<'ctx>> = match place.base {
            PlaceBase::Parameter(id)
                if matches!(self.function.parameter(id).ty, ParameterType::Array { .. }) =>
            {
                match &self.function.parameter(id).ty {
                    ParameterType::Array { ty, .. } => constant_extents(ty),
                    _ => Vec::new(),
                }
            }
            PlaceBase::Parameter(id) => {
                let length = self
                    .checked_state()?
                    .lengths
                    .get(id.0 as usize)
                    .copied()
                    .flatten()
                    .ok_or_else(|| LowerError(format!("parameter %{} has no length", id.0)))?;
                vec![length]
            }
            PlaceBase::Variable(id) => match &self.function.variable(id).ty {
                VariableType::Array { ty } => constant_extents(ty),
                VariableType::Scalar { .. } => {
                    return Err(LowerError("an indexed scalar variable".into()))
                }
            },
        };
        self.guard_indices(first_site, indices, &extents)
    }

    /// Checks the vector index of a vector access against the buffer's length in vectors.
    pub(super) fn guard_vector_place(
        &mut self,
        place: &Place,
        width: u8,
        index: IntValue<'ctx>,
    ) -> Result<Guard<'ctx>> {
        let site = {
            let checked = self.checked_state()?;
            place_site(checked.plan, checked.function, place)?
        };
        let PlaceBase::Parameter(id) = place.base else {
            return Err(LowerError("a vector access of an array".into()));
        };
        let length = self
            .checked_state()?
            .lengths
            .get(id.0 as usize)
            .copied()
            .flatten()
            .ok_or_else(|| LowerError(format!("parameter %{} has no length", id.0)))?;
        let width = self.context.i64_type().const_int(u64::from(width), false);
        let vectors = self
            .builder
            .build_int_unsigned_div(length, width, "vectors")?;
        self.guard_indices(site, &[index], &[vectors])
    }

    /// The 64-bit index `index` of one dimension of a multi-dimensional buffer, checked
    /// against the dimension's `extent`: a failure reports the site and gives 0.
    pub(super) fn checked_dimension_index(
        &mut self,
        expression: &Expression,
        index: IntValue<'ctx>,
        extent: IntValue<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>> {
        let site = {
            let checked = self.checked_state()?;
            operation_site(checked.plan, checked.function, expression)?
        };
        let guard = self.guard_indices(site, &[index], &[extent])?;
        self.finish_guard(guard, Some(index.into()))?
            .ok_or_else(|| LowerError("a checked dimension index without a value".into()))
    }

    /// Checks each index against its extent, reporting sites from `first_site` on.
    fn guard_indices(
        &mut self,
        first_site: u32,
        indices: &[IntValue<'ctx>],
        extents: &[IntValue<'ctx>],
    ) -> Result<Guard<'ctx>> {
        let after = self.new_block("checked.after");
        let mut failed = Vec::with_capacity(indices.len());
        for (dimension, (&index, &extent)) in indices.iter().zip(extents).enumerate() {
            let in_bounds =
                self.builder
                    .build_int_compare(IntPredicate::ULT, index, extent, "in_bounds")?;
            let pass = self.new_block("checked.in_bounds");
            let fail = self.new_block("checked.out_of_bounds");
            self.builder
                .build_conditional_branch(in_bounds, pass, fail)?;
            self.builder.position_at_end(fail);
            let site = first_site + dimension as u32;
            self.report(FaultKind::OutOfBounds.code(), site, index, extent)?;
            self.builder.build_unconditional_branch(after)?;
            failed.push(fail);
            self.builder.position_at_end(pass);
        }
        Ok(Guard { after, failed })
    }

    /// Ends a guarded access: the in-bounds path joins the failures; with a value, the result
    /// is that value, or zero after a failure.
    pub(super) fn finish_guard(
        &mut self,
        guard: Guard<'ctx>,
        value: Option<BasicValueEnum<'ctx>>,
    ) -> Result<Option<BasicValueEnum<'ctx>>> {
        let pass = self
            .builder
            .get_insert_block()
            .ok_or_else(|| LowerError("the builder has no block".into()))?;
        self.builder.build_unconditional_branch(guard.after)?;
        self.builder.position_at_end(guard.after);
        let Some(value) = value else {
            return Ok(None);
        };
        let ty = value.get_type();
        let phi = self.builder.build_phi(ty, "checked")?;
        phi.add_incoming(&[(&value, pass)]);
        let zero = ty.const_zero();
        for block in &guard.failed {
            phi.add_incoming(&[(&zero, *block)]);
        }
        Ok(Some(phi.as_basic_value()))
    }

    /// An integer division or remainder with a check of its divisor (and of `MIN / -1` for
    /// signed types): a failure reports the site and gives 0.
    pub(super) fn checked_division(
        &mut self,
        expression: &Expression,
        op: BinaryOp,
        ty: ScalarType,
        left: BasicValueEnum<'ctx>,
        right: BasicValueEnum<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>> {
        let site = {
            let checked = self.checked_state()?;
            operation_site(checked.plan, checked.function, expression)?
        };
        let left_int = left.into_int_value();
        let right_int = right.into_int_value();
        let int_type = left_int.get_type();
        let b = &self.builder;
        let zero_divisor =
            b.build_int_compare(IntPredicate::EQ, right_int, int_type.const_zero(), "")?;
        let i64_type = self.context.i64_type();
        let (failure, kind) = if ty.is_signed_integer() {
            let width = int_type.get_bit_width();
            let minimum = int_type.const_int(1u64 << (width - 1), false);
            let is_minimum = b.build_int_compare(IntPredicate::EQ, left_int, minimum, "")?;
            let minus_one =
                b.build_int_compare(IntPredicate::EQ, right_int, int_type.const_all_ones(), "")?;
            let overflow = b.build_and(is_minimum, minus_one, "")?;
            let failure = b.build_or(zero_divisor, overflow, "")?;
            let kind = b.build_select(
                zero_divisor,
                i64_type.const_int(FaultKind::DivisionByZero.code(), false),
                i64_type.const_int(FaultKind::DivisionOverflow.code(), false),
                "",
            )?;
            (failure, kind.into_int_value())
        } else {
            (
                zero_divisor,
                i64_type.const_int(FaultKind::DivisionByZero.code(), false),
            )
        };
        let pass = self.new_block("checked.divide");
        let fail = self.new_block("checked.bad_divisor");
        let after = self.new_block("checked.after");
        self.builder.build_conditional_branch(failure, fail, pass)?;
        self.builder.position_at_end(fail);
        let zero64 = i64_type.const_zero();
        self.report_kind(kind, site, zero64, zero64)?;
        self.builder.build_unconditional_branch(after)?;
        self.builder.position_at_end(pass);
        let value = self.binary(op, ty, left, right, ty)?;
        let guard = Guard {
            after,
            failed: vec![fail],
        };
        self.finish_guard(guard, Some(value))?
            .ok_or_else(|| LowerError("a checked division without a value".into()))
    }

    /// Integer `+ - *` (or, with `left` zero and `op` subtraction, a negation) with a check
    /// that the exact result fits the type: a failure reports the site; the result is the
    /// wrapped value either way. Written with plain integer operations, which every target's
    /// backend handles (no `*.with.overflow` intrinsics).
    pub(super) fn checked_arithmetic(
        &mut self,
        expression: &Expression,
        op: BinaryOp,
        ty: ScalarType,
        left: IntValue<'ctx>,
        right: IntValue<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>> {
        let site = {
            let checked = self.checked_state()?;
            operation_site(checked.plan, checked.function, expression)?
        };
        let (value, overflow) = self.overflowing(op, ty.is_signed_integer(), left, right)?;
        let fail = self.new_block("checked.overflow");
        let after = self.new_block("checked.after");
        self.builder
            .build_conditional_branch(overflow, fail, after)?;
        self.builder.position_at_end(fail);
        let zero64 = self.context.i64_type().const_zero();
        self.report(FaultKind::IntegerOverflow.code(), site, zero64, zero64)?;
        self.builder.build_unconditional_branch(after)?;
        self.builder.position_at_end(after);
        Ok(value.into())
    }

    /// The wrapped result of `left op right` and whether the exact one leaves the type.
    fn overflowing(
        &mut self,
        op: BinaryOp,
        signed: bool,
        left: IntValue<'ctx>,
        right: IntValue<'ctx>,
    ) -> Result<(IntValue<'ctx>, IntValue<'ctx>)> {
        let b = &self.builder;
        let zero = left.get_type().const_zero();
        Ok(match (op, signed) {
            (BinaryOp::Add, false) => {
                let sum = b.build_int_add(left, right, "")?;
                (sum, b.build_int_compare(IntPredicate::ULT, sum, left, "")?)
            }
            (BinaryOp::Subtract, false) => {
                let difference = b.build_int_sub(left, right, "")?;
                (
                    difference,
                    b.build_int_compare(IntPredicate::ULT, left, right, "")?,
                )
            }
            (BinaryOp::Add, true) => {
                // Overflow when both operands have the sign the sum lacks.
                let sum = b.build_int_add(left, right, "")?;
                let from_left = b.build_xor(left, sum, "")?;
                let from_right = b.build_xor(right, sum, "")?;
                let both = b.build_and(from_left, from_right, "")?;
                (sum, b.build_int_compare(IntPredicate::SLT, both, zero, "")?)
            }
            (BinaryOp::Subtract, true) => {
                // Overflow when the operands' signs differ and the result's differs from left's.
                let difference = b.build_int_sub(left, right, "")?;
                let operands = b.build_xor(left, right, "")?;
                let result = b.build_xor(left, difference, "")?;
                let both = b.build_and(operands, result, "")?;
                (
                    difference,
                    b.build_int_compare(IntPredicate::SLT, both, zero, "")?,
                )
            }
            (_, signed) => crate::legalize::multiply_with_overflow(
                self.context,
                &self.builder,
                left,
                right,
                signed,
            )?,
        })
    }

    fn report(
        &mut self,
        kind: u64,
        site: u32,
        index: IntValue<'ctx>,
        length: IntValue<'ctx>,
    ) -> Result<()> {
        let kind = self.context.i64_type().const_int(kind, false);
        self.report_kind(kind, site, index, length)
    }

    /// Calls the report function with this work-item's global id and marks the work-item as
    /// faulted.
    fn report_kind(
        &mut self,
        kind: IntValue<'ctx>,
        site: u32,
        index: IntValue<'ctx>,
        length: IntValue<'ctx>,
    ) -> Result<()> {
        let i64_type = self.context.i64_type();
        let mut ids = Vec::with_capacity(3);
        for dimension in 0..3 {
            let id = self.work_item(WorkItemQuery::GlobalId, dimension)?;
            ids.push(self.builder.build_int_z_extend(id, i64_type, "")?);
        }
        let checked = self.checked_state()?;
        let (record, report, faulted) = (checked.record, checked.report, checked.faulted);
        let mut arguments: Vec<BasicMetadataValueEnum> = vec![
            record.into(),
            kind.into(),
            i64_type.const_int(u64::from(site), false).into(),
            index.into(),
            length.into(),
        ];
        arguments.extend(ids.into_iter().map(BasicMetadataValueEnum::from));
        let call = self.builder.build_call(report, &arguments, "")?;
        call.set_call_convention(self.target.device_calling_convention);
        let byte = self.context.i8_type();
        self.builder
            .build_store(faulted, byte.const_int(1, false))?;
        Ok(())
    }
}
