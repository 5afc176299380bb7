//! `bf16` on every target: an `i16` in registers, memory and at the kernel ABI, computed in
//! `f32` (docs/language.md, "Semantics"). Every conversion between the two is here, step by
//! step as `kdsl_ir::bf16` defines it, so the interpreter and the devices agree bit for bit
//! (but for which NaN a NaN result is):
//! widening puts the bits in the upper half of an `f32`; narrowing rounds to nearest even
//! (`(bits + 0x7fff + lsb) >> 16`, a NaN becoming `(bits >> 16) | 0x40`); `f64` and 32- and
//! 64-bit integers are first rounded to odd at `f32`'s 24 bits, so they round once.
//! Integer instructions only, so no target needs a bfloat16 extension; a target whose
//! description says so rounds `f32` with its own instruction instead (`Bf16Rounding`).

use super::{FunctionLowering, Result};
use crate::target::Bf16Rounding;
use inkwell::values::{BasicValueEnum, FloatValue, IntValue};
use inkwell::{FloatPredicate, IntPredicate};
use kdsl_ir::{BinaryOp, Builtin, MathFunction, ResultRule, ScalarType};

/// The sign bit of a `bf16`.
const SIGN: u64 = 0x8000;

impl<'ctx> FunctionLowering<'_, 'ctx> {
    /// A `bf16` widened exactly to `f32`.
    pub(super) fn bf16_to_f32(&self, value: IntValue<'ctx>) -> Result<FloatValue<'ctx>> {
        let b = &self.builder;
        let i32_type = self.context.i32_type();
        let wide = b.build_int_z_extend(value, i32_type, "")?;
        let high = b.build_left_shift(wide, i32_type.const_int(16, false), "")?;
        Ok(b.build_bit_cast(high, self.context.f32_type(), "")?
            .into_float_value())
    }

    /// An `f32` rounded to the nearest `bf16`, ties to even; a NaN stays a quiet NaN.
    pub(super) fn f32_to_bf16(&self, value: FloatValue<'ctx>) -> Result<IntValue<'ctx>> {
        let b = &self.builder;
        if self.target.bf16_rounding == Bf16Rounding::NativeFptrunc {
            let narrow = b.build_float_trunc(value, self.context.bf16_type(), "")?;
            let bits = b.build_bit_cast(narrow, self.context.i16_type(), "")?;
            return Ok(bits.into_int_value());
        }
        let i32_type = self.context.i32_type();
        let constant = |v: u64| i32_type.const_int(v, false);
        let bits = b.build_bit_cast(value, i32_type, "")?.into_int_value();
        let high = b.build_right_shift(bits, constant(16), false, "")?;
        let lsb = b.build_and(high, constant(1), "")?;
        let bias = b.build_int_add(lsb, constant(0x7fff), "")?;
        let rounded = b.build_int_add(bits, bias, "")?;
        let rounded = b.build_right_shift(rounded, constant(16), false, "")?;
        let quiet_nan = b.build_or(high, constant(0x40), "")?;
        let is_nan = b.build_float_compare(FloatPredicate::UNO, value, value, "")?;
        let chosen = b
            .build_select(is_nan, quiet_nan, rounded, "")?
            .into_int_value();
        Ok(b.build_int_truncate(chosen, self.context.i16_type(), "")?)
    }

    /// An `f64` rounded to `f32` toward zero with the last bit set when inexact (round to
    /// odd), so that its rounding to `bf16` rounds `value` once.
    fn f64_to_f32_rounded_to_odd(&mut self, value: FloatValue<'ctx>) -> Result<FloatValue<'ctx>> {
        let f32_type = self.context.f32_type();
        let i32_type = self.context.i32_type();
        let nearest = self.builder.build_float_trunc(value, f32_type, "")?;
        let back = self
            .builder
            .build_float_ext(nearest, self.context.f64_type(), "")?;
        // Ordered: a NaN is taken as it is.
        let inexact = self
            .builder
            .build_float_compare(FloatPredicate::ONE, back, value, "")?;
        let fabs = |this: &Self, v: FloatValue<'ctx>| -> Result<FloatValue<'ctx>> {
            Ok(this
                .call_intrinsic("llvm.fabs", &[v.get_type().into()], &[v.into()])?
                .into_float_value())
        };
        let (back_magnitude, magnitude) = (fabs(self, back)?, fabs(self, value)?);
        let b = &self.builder;
        let away = b.build_float_compare(FloatPredicate::OGT, back_magnitude, magnitude, "")?;
        let bits = b.build_bit_cast(nearest, i32_type, "")?.into_int_value();
        let below = b.build_int_sub(bits, i32_type.const_int(1, false), "")?;
        let toward_zero = b.build_select(away, below, bits, "")?.into_int_value();
        let odd = b.build_or(toward_zero, i32_type.const_int(1, false), "")?;
        let chosen = b.build_select(inexact, odd, bits, "")?;
        Ok(b.build_bit_cast(chosen, f32_type, "")?.into_float_value())
    }

    /// A 32- or 64-bit integer rounded to `f32` at 24 bits, to odd: its magnitude's bits
    /// beyond the top 24 become one sticky bit, then the exact product with a power of two.
    fn wide_integer_to_f32_rounded_to_odd(
        &mut self,
        value: IntValue<'ctx>,
        signed: bool,
    ) -> Result<FloatValue<'ctx>> {
        let i64_type = self.context.i64_type();
        let i32_type = self.context.i32_type();
        let f32_type = self.context.f32_type();
        let constant = |v: u64| i64_type.const_int(v, false);
        let b = &self.builder;
        let wide = if value.get_type().get_bit_width() == 64 {
            value
        } else if signed {
            b.build_int_s_extend(value, i64_type, "")?
        } else {
            b.build_int_z_extend(value, i64_type, "")?
        };
        let negative = if signed {
            Some(b.build_int_compare(IntPredicate::SLT, wide, constant(0), "")?)
        } else {
            None
        };
        let magnitude = match negative {
            Some(negative) => {
                let negated = b.build_int_sub(constant(0), wide, "")?;
                b.build_select(negative, negated, wide, "")?
                    .into_int_value()
            }
            None => wide,
        };
        let leading = self
            .call_intrinsic(
                "llvm.ctlz",
                &[i64_type.into()],
                &[
                    magnitude.into(),
                    self.context.bool_type().const_zero().into(),
                ],
            )?
            .into_int_value();
        let b = &self.builder;
        // excess = max(40 - leading zeros, 0): the bits beyond the top 24.
        let has_excess = b.build_int_compare(IntPredicate::ULT, leading, constant(40), "")?;
        let difference = b.build_int_sub(constant(40), leading, "")?;
        let excess = b
            .build_select(has_excess, difference, constant(0), "")?
            .into_int_value();
        let kept = b.build_right_shift(magnitude, excess, false, "")?;
        let unit = b.build_left_shift(constant(1), excess, "")?;
        let mask = b.build_int_sub(unit, constant(1), "")?;
        let dropped = b.build_and(magnitude, mask, "")?;
        let sticky = b.build_int_compare(IntPredicate::NE, dropped, constant(0), "")?;
        let sticky = b.build_int_z_extend(sticky, i64_type, "")?;
        let kept = b.build_or(kept, sticky, "")?;
        let kept = b.build_unsigned_int_to_float(kept, f32_type, "")?;
        // 2^excess as an f32: the biased exponent 127 + excess.
        let exponent = b.build_int_truncate(excess, i32_type, "")?;
        let exponent = b.build_int_add(exponent, i32_type.const_int(127, false), "")?;
        let exponent = b.build_left_shift(exponent, i32_type.const_int(23, false), "")?;
        let scale = b.build_bit_cast(exponent, f32_type, "")?.into_float_value();
        let magnitude = b.build_float_mul(kept, scale, "")?;
        Ok(match negative {
            Some(negative) => {
                let negated = b.build_float_neg(magnitude, "")?;
                b.build_select(negative, negated, magnitude, "")?
                    .into_float_value()
            }
            None => magnitude,
        })
    }

    /// `value as to` where `from` or `to` is `bf16` (and they differ).
    pub(super) fn bf16_cast(
        &mut self,
        value: BasicValueEnum<'ctx>,
        from: ScalarType,
        to: ScalarType,
    ) -> Result<BasicValueEnum<'ctx>> {
        if from == ScalarType::Bf16 {
            let wide = self.bf16_to_f32(value.into_int_value())?;
            return self.cast(wide.into(), ScalarType::F32, to);
        }
        let f32_type = self.context.f32_type();
        let single = match from {
            ScalarType::F32 => value.into_float_value(),
            ScalarType::F64 => self.f64_to_f32_rounded_to_odd(value.into_float_value())?,
            ScalarType::F16 => {
                self.builder
                    .build_float_ext(value.into_float_value(), f32_type, "")?
            }
            integer if integer.bit_width() >= 32 => self.wide_integer_to_f32_rounded_to_odd(
                value.into_int_value(),
                integer.is_signed_integer(),
            )?,
            // `bool` and 8- and 16-bit integers are exact in `f32`.
            narrow if narrow.is_signed_integer() => {
                self.builder
                    .build_signed_int_to_float(value.into_int_value(), f32_type, "")?
            }
            _ => self
                .builder
                .build_unsigned_int_to_float(value.into_int_value(), f32_type, "")?,
        };
        Ok(self.f32_to_bf16(single)?.into())
    }

    /// A binary operator on `bf16` operands: in `f32`, the result rounded to `bf16` (a
    /// comparison gives its `bool`).
    pub(super) fn bf16_binary(
        &mut self,
        op: BinaryOp,
        left: BasicValueEnum<'ctx>,
        right: BasicValueEnum<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>> {
        let left = self.bf16_to_f32(left.into_int_value())?;
        let right = self.bf16_to_f32(right.into_int_value())?;
        let f32 = ScalarType::F32;
        let value = self.binary(op, f32, left.into(), right.into(), f32)?;
        if op.is_comparison() {
            return Ok(value);
        }
        Ok(self.f32_to_bf16(value.into_float_value())?.into())
    }

    /// `-x` on a `bf16`: the sign bit flipped, as on every float.
    pub(super) fn bf16_negate(&self, value: BasicValueEnum<'ctx>) -> Result<BasicValueEnum<'ctx>> {
        let value = value.into_int_value();
        let sign = value.get_type().const_int(SIGN, false);
        Ok(self.builder.build_xor(value, sign, "")?.into())
    }

    /// A math function on `bf16` arguments: `abs` and `copysign` on the sign bit, every other
    /// one in `f32` with its result rounded to `bf16` (the tests give their `bool`).
    pub(super) fn bf16_math(
        &mut self,
        function: MathFunction,
        values: Vec<BasicValueEnum<'ctx>>,
    ) -> Result<BasicValueEnum<'ctx>> {
        let ints: Vec<IntValue<'ctx>> = values.iter().map(|v| v.into_int_value()).collect();
        let i16_type = self.context.i16_type();
        let b = &self.builder;
        match function {
            MathFunction::Abs => {
                let magnitude = i16_type.const_int(SIGN - 1, false);
                return Ok(b.build_and(ints[0], magnitude, "")?.into());
            }
            MathFunction::Copysign => {
                let magnitude = b.build_and(ints[0], i16_type.const_int(SIGN - 1, false), "")?;
                let sign = b.build_and(ints[1], i16_type.const_int(SIGN, false), "")?;
                return Ok(b.build_or(magnitude, sign, "")?.into());
            }
            _ => {}
        }
        let mut wide = Vec::with_capacity(ints.len());
        for value in ints {
            wide.push(self.bf16_to_f32(value)?.into());
        }
        let value = self.math_values(function, wide, ScalarType::F32)?;
        if Builtin::Math(function).row().result == ResultRule::Bool {
            return Ok(value);
        }
        Ok(self.f32_to_bf16(value.into_float_value())?.into())
    }
}
