//! Expressions: literals, operators, casts, selects and device-function calls.

use super::{FunctionLowering, LowerError, ParameterValue, Result};
use crate::llvm;
use inkwell::types::IntType;
use inkwell::values::{BasicMetadataValueEnum, BasicValueEnum, FloatValue, IntValue};
use inkwell::{FloatPredicate, IntPredicate};
use kdsl_ir::{
    Argument, BinaryOp, Expression, ExpressionKind, Literal, LogicalOp, ScalarType, UnaryOp,
};

/// The smallest integer that rounds to infinity as an `f16`: halfway between `f16::MAX` (65504)
/// and 2^16, a tie that goes to the even 2^16, which overflows.
const F16_OVERFLOW: u64 = 65520;

impl<'ctx> FunctionLowering<'_, 'ctx> {
    /// Evaluates an expression statement; calls without a result produce no value.
    pub(super) fn evaluate(&mut self, expression: &Expression) -> Result<()> {
        if let ExpressionKind::Call {
            function,
            arguments,
        } = &expression.kind
        {
            self.call(*function, arguments)?;
        } else {
            self.expression(expression)?;
        }
        Ok(())
    }

    pub(super) fn expression(&mut self, expression: &Expression) -> Result<BasicValueEnum<'ctx>> {
        let ty = expression.ty;
        match &expression.kind {
            ExpressionKind::Literal(literal) => Ok(self.literal(*literal, ty)),
            ExpressionKind::Parameter(id) => match self.parameters.get(id.0 as usize) {
                Some(ParameterValue::Scalar(value)) => Ok(*value),
                _ => Err(LowerError(format!("parameter %{} is not a scalar", id.0))),
            },
            ExpressionKind::Variable(id) => {
                let storage = self.variables[id.0 as usize];
                Ok(self.builder.build_load(storage.ty, storage.pointer, "")?)
            }
            ExpressionKind::Load(place) => self.load(place),
            ExpressionKind::VectorLoad {
                place,
                width,
                component,
            } => self.vector_load(place, *width, *component),
            ExpressionKind::Unary { op, operand } => {
                let value = self.expression(operand)?;
                if self.checked.is_some() && super::checked::is_checked_negation(*op, ty) {
                    let int = value.into_int_value();
                    let zero = int.get_type().const_zero();
                    return self.checked_arithmetic(expression, BinaryOp::Subtract, ty, zero, int);
                }
                self.unary(*op, value, ty)
            }
            ExpressionKind::Binary { op, left, right } => {
                let operand_type = left.ty;
                let left_value = self.expression(left)?;
                let right_value = self.expression(right)?;
                if self.checked.is_some() && super::checked::is_checked_division(*op, operand_type)
                {
                    return self.checked_division(
                        expression,
                        *op,
                        operand_type,
                        left_value,
                        right_value,
                    );
                }
                if self.checked.is_some()
                    && super::checked::is_checked_arithmetic(*op, operand_type)
                {
                    return self.checked_arithmetic(
                        expression,
                        *op,
                        operand_type,
                        left_value.into_int_value(),
                        right_value.into_int_value(),
                    );
                }
                if let Some(value) =
                    self.no_wrap_arithmetic(*op, operand_type, left_value, right_value)?
                {
                    return Ok(value);
                }
                self.binary(*op, operand_type, left_value, right_value, right.ty)
            }
            ExpressionKind::ShortCircuit { op, left, right } => {
                self.short_circuit(*op, left, right)
            }
            ExpressionKind::Conditional {
                condition,
                accept,
                reject,
            } => self.conditional(condition, accept, reject),
            ExpressionKind::Cast { value } => {
                let from = value.ty;
                let value = self.expression(value)?;
                self.cast(value, from, ty)
            }
            ExpressionKind::Select {
                condition,
                accept,
                reject,
            } => {
                let condition = self.expression(condition)?.into_int_value();
                let accept = self.expression(accept)?;
                let reject = self.expression(reject)?;
                Ok(self.builder.build_select(condition, accept, reject, "")?)
            }
            ExpressionKind::Call {
                function,
                arguments,
            } => self
                .call(*function, arguments)?
                .ok_or_else(|| LowerError("a call without a result is used as a value".into())),
            ExpressionKind::WorkItem { query, dimension } => {
                Ok(self.work_item(*query, *dimension)?.into())
            }
            ExpressionKind::Math {
                function,
                arguments,
            } => {
                let operand = kdsl_ir::MathFunction::operand_type(arguments, ty);
                self.math(*function, arguments, operand)
            }
            ExpressionKind::Atomic {
                op,
                place,
                value,
                comparand,
            } => self.atomic(*op, place, value, comparand.as_deref()),
            ExpressionKind::SubGroup { op, arguments } => self.sub_group(*op, arguments, ty),
            ExpressionKind::WorkGroup { op, arguments } => self.work_group(*op, arguments, ty),
            ExpressionKind::DimensionIndex { index, extent, .. } => {
                self.dimension_index(expression, index, *extent)
            }
        }
    }

    /// The values of `arguments`, in order.
    pub(super) fn expressions(
        &mut self,
        arguments: &[Expression],
    ) -> Result<Vec<BasicValueEnum<'ctx>>> {
        arguments
            .iter()
            .map(|argument| self.expression(argument))
            .collect()
    }

    pub(super) fn literal(&self, literal: Literal, ty: ScalarType) -> BasicValueEnum<'ctx> {
        let llvm_type = self.types.value(ty);
        if ty == ScalarType::Bf16 {
            let bits = kdsl_ir::scalar::literal_bits(literal, ty);
            return llvm_type.into_int_type().const_int(bits, false).into();
        }
        match literal {
            Literal::Bool(value) => self
                .context
                .bool_type()
                .const_int(u64::from(value), false)
                .into(),
            Literal::Integer(bits) if ty.is_float() => llvm_type
                .into_float_type()
                .const_float(if ty.is_signed_integer() {
                    bits as i64 as f64
                } else {
                    bits as f64
                })
                .into(),
            Literal::Integer(bits) => llvm_type.into_int_type().const_int(bits, false).into(),
            Literal::Float(value) if ty.is_float() => {
                llvm_type.into_float_type().const_float(value).into()
            }
            Literal::Float(value) => llvm_type
                .into_int_type()
                .const_int(value as i64 as u64, false)
                .into(),
        }
    }

    fn unary(
        &mut self,
        op: UnaryOp,
        value: BasicValueEnum<'ctx>,
        ty: ScalarType,
    ) -> Result<BasicValueEnum<'ctx>> {
        Ok(match op {
            UnaryOp::Negate if ty == ScalarType::Bf16 => self.bf16_negate(value)?,
            UnaryOp::Negate if ty.is_float() => self
                .builder
                .build_float_neg(value.into_float_value(), "")?
                .into(),
            UnaryOp::Negate if ty.is_signed_integer() && self.checked.is_none() => self
                .builder
                .build_int_nsw_neg(value.into_int_value(), "")?
                .into(),
            UnaryOp::Negate => self
                .builder
                .build_int_neg(value.into_int_value(), "")?
                .into(),
            UnaryOp::Not | UnaryOp::BitNot => {
                self.builder.build_not(value.into_int_value(), "")?.into()
            }
        })
    }

    /// Integer `+ - *` whose overflow is undefined (docs/language.md, "Semantics"): marked
    /// no-signed-wrap or no-unsigned-wrap, which lets index arithmetic widen and vectorize.
    /// `None` for other operators, and in checked mode, where an overflow must stay visible to
    /// the checks rather than become poison.
    fn no_wrap_arithmetic(
        &mut self,
        op: BinaryOp,
        ty: ScalarType,
        left: BasicValueEnum<'ctx>,
        right: BasicValueEnum<'ctx>,
    ) -> Result<Option<BasicValueEnum<'ctx>>> {
        if !ty.is_integer() || self.checked.is_some() {
            return Ok(None);
        }
        let (l, r) = (left.into_int_value(), right.into_int_value());
        let b = &self.builder;
        let signed = ty.is_signed_integer();
        let value = match (op, signed) {
            (BinaryOp::Add, true) => b.build_int_nsw_add(l, r, "")?,
            (BinaryOp::Add, false) => b.build_int_nuw_add(l, r, "")?,
            (BinaryOp::Subtract, true) => b.build_int_nsw_sub(l, r, "")?,
            (BinaryOp::Subtract, false) => b.build_int_nuw_sub(l, r, "")?,
            (BinaryOp::Multiply, true) => b.build_int_nsw_mul(l, r, "")?,
            (BinaryOp::Multiply, false) => b.build_int_nuw_mul(l, r, "")?,
            _ => return Ok(None),
        };
        Ok(Some(value.into()))
    }

    /// `ty` is the operands' type (the left one for shifts, whose amount has `amount_type`).
    pub(super) fn binary(
        &mut self,
        op: BinaryOp,
        ty: ScalarType,
        left: BasicValueEnum<'ctx>,
        right: BasicValueEnum<'ctx>,
        amount_type: ScalarType,
    ) -> Result<BasicValueEnum<'ctx>> {
        if ty == ScalarType::Bf16 {
            return self.bf16_binary(op, left, right);
        }
        if ty.is_float() {
            if op == BinaryOp::Remainder {
                if let Some((name, promote_half)) = self.target.remainder_function(ty) {
                    return self.library_call(&name, promote_half, vec![left, right], ty);
                }
            }
            return self.float_binary(op, left.into_float_value(), right.into_float_value());
        }
        let left = left.into_int_value();
        let mut right = right.into_int_value();
        let signed = ty.is_signed_integer();
        let is_division = matches!(op, BinaryOp::Divide | BinaryOp::Remainder);
        if is_division
            && self.target.legalization.widen_narrow_division
            && left.get_type().get_bit_width() < 32
        {
            return self.narrow_division_in_32_bits(op, left, right, signed);
        }
        let b = &self.builder;
        let value: IntValue = match op {
            BinaryOp::Add => b.build_int_add(left, right, "")?,
            BinaryOp::Subtract => b.build_int_sub(left, right, "")?,
            BinaryOp::Multiply => b.build_int_mul(left, right, "")?,
            BinaryOp::Divide if signed => b.build_int_signed_div(left, right, "")?,
            BinaryOp::Divide => b.build_int_unsigned_div(left, right, "")?,
            BinaryOp::Remainder if signed => b.build_int_signed_rem(left, right, "")?,
            BinaryOp::Remainder => b.build_int_unsigned_rem(left, right, "")?,
            BinaryOp::BitAnd => b.build_and(left, right, "")?,
            BinaryOp::BitOr => b.build_or(left, right, "")?,
            BinaryOp::BitXor => b.build_xor(left, right, "")?,
            BinaryOp::ShiftLeft | BinaryOp::ShiftRight => {
                // The amount takes the left operand's width, then is taken modulo the width
                // (a power of two, so masking the low bits, which truncation and extension
                // keep): shifts by the width or more are defined, like `wrapping_shl`.
                let width = left.get_type().get_bit_width();
                right =
                    self.resize_integer(right, amount_type.is_signed_integer(), left.get_type())?;
                let b = &self.builder;
                let mask = left.get_type().const_int(u64::from(width - 1), false);
                right = b.build_and(right, mask, "")?;
                if op == BinaryOp::ShiftLeft {
                    b.build_left_shift(left, right, "")?
                } else {
                    b.build_right_shift(left, right, signed, "")?
                }
            }
            comparison => {
                let predicate = match (comparison, signed) {
                    (BinaryOp::Equal, _) => IntPredicate::EQ,
                    (BinaryOp::NotEqual, _) => IntPredicate::NE,
                    (BinaryOp::Less, true) => IntPredicate::SLT,
                    (BinaryOp::Less, false) => IntPredicate::ULT,
                    (BinaryOp::LessEqual, true) => IntPredicate::SLE,
                    (BinaryOp::LessEqual, false) => IntPredicate::ULE,
                    (BinaryOp::Greater, true) => IntPredicate::SGT,
                    (BinaryOp::Greater, false) => IntPredicate::UGT,
                    (BinaryOp::GreaterEqual, true) => IntPredicate::SGE,
                    (_, _) => IntPredicate::UGE,
                };
                b.build_int_compare(predicate, left, right, "")?
            }
        };
        Ok(value.into())
    }

    /// 8- and 16-bit `/` or `%` on 32-bit extensions of the operands, truncated back.
    fn narrow_division_in_32_bits(
        &mut self,
        op: BinaryOp,
        left: IntValue<'ctx>,
        right: IntValue<'ctx>,
        signed: bool,
    ) -> Result<BasicValueEnum<'ctx>> {
        let b = &self.builder;
        let wide = self.context.i32_type();
        let narrow = left.get_type();
        let (left, right) = if signed {
            (
                b.build_int_s_extend(left, wide, "")?,
                b.build_int_s_extend(right, wide, "")?,
            )
        } else {
            (
                b.build_int_z_extend(left, wide, "")?,
                b.build_int_z_extend(right, wide, "")?,
            )
        };
        let value = match (op, signed) {
            (BinaryOp::Divide, true) => b.build_int_signed_div(left, right, "")?,
            (BinaryOp::Divide, false) => b.build_int_unsigned_div(left, right, "")?,
            (_, true) => b.build_int_signed_rem(left, right, "")?,
            (_, false) => b.build_int_unsigned_rem(left, right, "")?,
        };
        Ok(b.build_int_truncate(value, narrow, "")?.into())
    }

    fn float_binary(
        &mut self,
        op: BinaryOp,
        left: FloatValue<'ctx>,
        right: FloatValue<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>> {
        let b = &self.builder;
        let value: BasicValueEnum = match op {
            BinaryOp::Add => b.build_float_add(left, right, "")?.into(),
            BinaryOp::Subtract => b.build_float_sub(left, right, "")?.into(),
            BinaryOp::Multiply => b.build_float_mul(left, right, "")?.into(),
            BinaryOp::Divide => b.build_float_div(left, right, "")?.into(),
            BinaryOp::Remainder => b.build_float_rem(left, right, "")?.into(),
            comparison => {
                // Ordered comparisons (false with NaN), except `!=`, which is true with NaN.
                let predicate = match comparison {
                    BinaryOp::Equal => FloatPredicate::OEQ,
                    BinaryOp::NotEqual => FloatPredicate::UNE,
                    BinaryOp::Less => FloatPredicate::OLT,
                    BinaryOp::LessEqual => FloatPredicate::OLE,
                    BinaryOp::Greater => FloatPredicate::OGT,
                    BinaryOp::GreaterEqual => FloatPredicate::OGE,
                    other => {
                        return Err(LowerError(format!("operator {other:?} on floats")));
                    }
                };
                b.build_float_compare(predicate, left, right, "")?.into()
            }
        };
        if matches!(op, BinaryOp::Add | BinaryOp::Subtract | BinaryOp::Multiply) {
            llvm::allow_contraction(value);
        }
        Ok(value)
    }

    fn short_circuit(
        &mut self,
        op: LogicalOp,
        left: &Expression,
        right: &Expression,
    ) -> Result<BasicValueEnum<'ctx>> {
        let left = self.expression(left)?.into_int_value();
        let left_block = self
            .builder
            .get_insert_block()
            .ok_or_else(|| LowerError("the builder has no block".into()))?;
        let right_block = self.new_block("rhs");
        let join = self.new_block("logic");
        match op {
            LogicalOp::And => self
                .builder
                .build_conditional_branch(left, right_block, join)?,
            LogicalOp::Or => self
                .builder
                .build_conditional_branch(left, join, right_block)?,
        };
        self.builder.position_at_end(right_block);
        let right = self.expression(right)?;
        let right_end = self
            .builder
            .get_insert_block()
            .ok_or_else(|| LowerError("the builder has no block".into()))?;
        self.builder.build_unconditional_branch(join)?;
        self.builder.position_at_end(join);
        let phi = self.builder.build_phi(self.context.bool_type(), "")?;
        let short = self
            .context
            .bool_type()
            .const_int(u64::from(op == LogicalOp::Or), false);
        phi.add_incoming(&[(&short, left_block), (&right, right_end)]);
        Ok(phi.as_basic_value())
    }

    /// `if condition { accept } else { reject }`: each arm in its own block, joined by a phi.
    fn conditional(
        &mut self,
        condition: &Expression,
        accept: &Expression,
        reject: &Expression,
    ) -> Result<BasicValueEnum<'ctx>> {
        let condition = self.expression(condition)?.into_int_value();
        let accept_block = self.new_block("if_value");
        let reject_block = self.new_block("else_value");
        let join = self.new_block("if_join");
        self.builder
            .build_conditional_branch(condition, accept_block, reject_block)?;
        let mut incoming = Vec::with_capacity(2);
        for (arm, block) in [(accept, accept_block), (reject, reject_block)] {
            self.builder.position_at_end(block);
            let value = self.expression(arm)?;
            let end = self
                .builder
                .get_insert_block()
                .ok_or_else(|| LowerError("the builder has no block".into()))?;
            self.builder.build_unconditional_branch(join)?;
            incoming.push((value, end));
        }
        self.builder.position_at_end(join);
        let phi = self.builder.build_phi(incoming[0].0.get_type(), "")?;
        for (value, end) in &incoming {
            phi.add_incoming(&[(value, *end)]);
        }
        Ok(phi.as_basic_value())
    }

    pub(super) fn cast(
        &mut self,
        value: BasicValueEnum<'ctx>,
        from: ScalarType,
        to: ScalarType,
    ) -> Result<BasicValueEnum<'ctx>> {
        if from == to {
            return Ok(value);
        }
        if from == ScalarType::Bf16 || to == ScalarType::Bf16 {
            return self.bf16_cast(value, from, to);
        }
        let b = &self.builder;
        let target_type = self.types.value(to);
        Ok(match (from.is_float(), to.is_float()) {
            (true, true) => {
                let value = value.into_float_value();
                let target = target_type.into_float_type();
                if from.bit_width() < to.bit_width() {
                    b.build_float_ext(value, target, "")?.into()
                } else {
                    b.build_float_trunc(value, target, "")?.into()
                }
            }
            (true, false) if to == ScalarType::Bool => {
                let value = value.into_float_value();
                b.build_float_compare(
                    FloatPredicate::UNE,
                    value,
                    value.get_type().const_zero(),
                    "",
                )?
                .into()
            }
            (true, false) => {
                // Saturating, NaN to 0, like Rust's `as` (docs/language.md, "Semantics").
                let name = if to.is_signed_integer() {
                    "llvm.fptosi.sat"
                } else {
                    "llvm.fptoui.sat"
                };
                let overloads = [target_type, value.get_type()];
                return self.call_intrinsic(name, &overloads, &[value]);
            }
            (false, true) => {
                let value = if to == ScalarType::F16 {
                    self.clamp_to_f16_range(value.into_int_value(), from.is_signed_integer())?
                } else {
                    value.into_int_value()
                };
                let target = target_type.into_float_type();
                if from.is_signed_integer() {
                    b.build_signed_int_to_float(value, target, "")?.into()
                } else {
                    b.build_unsigned_int_to_float(value, target, "")?.into()
                }
            }
            (false, false) if to == ScalarType::Bool => {
                let value = value.into_int_value();
                b.build_int_compare(IntPredicate::NE, value, value.get_type().const_zero(), "")?
                    .into()
            }
            (false, false) => self
                .resize_integer(
                    value.into_int_value(),
                    from.is_signed_integer(),
                    target_type.into_int_type(),
                )?
                .into(),
        })
    }

    /// An integer clamped to `±F16_OVERFLOW` before its conversion to `f16`, which rounds to the
    /// same `f16` (the bound and everything beyond it round to infinity). LLVM 22's InstCombine
    /// takes a conversion of a value with few significant bits as exact and folds
    /// `(x << 31) as f16 as f64` to `x << 31 as f64`, forgetting that `f16` overflows; after
    /// the clamp the value fits, so that fold, where it still applies, is exact.
    fn clamp_to_f16_range(&self, value: IntValue<'ctx>, signed: bool) -> Result<IntValue<'ctx>> {
        let ty = value.get_type();
        if ty.get_bit_width() <= 16 {
            // Even `u16::MAX` converts exactly where the fold applies (its 16 bits are too many).
            return Ok(value);
        }
        let bound = ty.const_int(F16_OVERFLOW, false);
        let operand = |value: IntValue<'ctx>| -> BasicValueEnum<'ctx> { value.into() };
        let overloads = [ty.into()];
        if !signed {
            let clamped =
                self.call_intrinsic("llvm.umin", &overloads, &[operand(value), operand(bound)])?;
            return Ok(clamped.into_int_value());
        }
        let low = ty.const_int(F16_OVERFLOW.wrapping_neg(), true);
        let below =
            self.call_intrinsic("llvm.smin", &overloads, &[operand(value), operand(bound)])?;
        let clamped = self.call_intrinsic("llvm.smax", &overloads, &[below, operand(low)])?;
        Ok(clamped.into_int_value())
    }

    /// An integer truncated, or extended (by sign when `signed`), to `target`'s width, with the
    /// target's legalizations of narrow conversions.
    fn resize_integer(
        &self,
        value: IntValue<'ctx>,
        signed: bool,
        target: IntType<'ctx>,
    ) -> Result<IntValue<'ctx>> {
        let b = &self.builder;
        let (from, to) = (value.get_type().get_bit_width(), target.get_bit_width());
        let legalization = &self.target.legalization;
        let i32_type = self.context.i32_type();
        Ok(if from > to {
            let value = if from > 32 && to < 32 && legalization.truncate_through_32_bits {
                b.build_int_truncate(value, i32_type, "")?
            } else {
                value
            };
            b.build_int_truncate(value, target, "")?
        } else if from == to {
            value
        } else if to < 32 && legalization.extend_narrow_through_32_bits {
            let wide = if signed {
                b.build_int_s_extend(value, i32_type, "")?
            } else {
                b.build_int_z_extend(value, i32_type, "")?
            };
            b.build_int_truncate(wide, target, "")?
        } else if signed {
            b.build_int_s_extend(value, target, "")?
        } else {
            b.build_int_z_extend(value, target, "")?
        })
    }

    fn call(
        &mut self,
        function: kdsl_ir::FunctionId,
        arguments: &[Argument],
    ) -> Result<Option<BasicValueEnum<'ctx>>> {
        let callee = *self
            .functions
            .get(function.0 as usize)
            .ok_or_else(|| LowerError(format!("function #{} does not exist", function.0)))?;
        let mut values: Vec<BasicMetadataValueEnum> = Vec::with_capacity(arguments.len());
        for argument in arguments {
            values.push(match argument {
                Argument::Value(value) => self.expression(value)?.into(),
                Argument::Buffer(id) => match self.parameters.get(id.0 as usize) {
                    Some(ParameterValue::Buffer(pointer)) => (*pointer).into(),
                    _ => return Err(LowerError(format!("parameter %{} is not a buffer", id.0))),
                },
                Argument::Array(kdsl_ir::PlaceBase::Variable(id)) => {
                    self.variables[id.0 as usize].pointer.into()
                }
                Argument::Array(kdsl_ir::PlaceBase::Parameter(id)) => match self
                    .parameters
                    .get(id.0 as usize)
                {
                    Some(ParameterValue::Array(pointer)) => (*pointer).into(),
                    _ => return Err(LowerError(format!("parameter %{} is not an array", id.0))),
                },
            });
        }
        values.extend(self.hidden_call_arguments(arguments)?);
        let call = self.builder.build_call(callee, &values, "")?;
        call.set_call_convention(self.target.device_calling_convention);
        Ok(call.try_as_basic_value().basic())
    }
}
