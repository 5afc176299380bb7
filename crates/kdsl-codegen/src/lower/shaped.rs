//! The index of one dimension of a multi-dimensional buffer (`a[i, j]`,
//! [`ExpressionKind::DimensionIndex`]): widened to 64 bits, and in checked mode compared with
//! the dimension's extent (a failure reports the site and gives index 0).

use super::{FunctionLowering, Result};
use inkwell::values::IntValue;
use kdsl_ir::{BinaryOp, Expression, ExpressionKind, Literal, ParameterId};

impl<'ctx> FunctionLowering<'_, 'ctx> {
    pub(super) fn dimension_index(
        &mut self,
        expression: &Expression,
        index: &Expression,
        extent: ParameterId,
    ) -> Result<inkwell::values::BasicValueEnum<'ctx>> {
        if self.checked.is_none() {
            return Ok(self.wide_index(index)?.into());
        }
        let i64_type = self.context.i64_type();
        let wide = self.widen(index)?;
        let extent = self
            .expression(&Expression {
                id: kdsl_ir::ExprId::UNNUMBERED,
                kind: ExpressionKind::Parameter(extent),
                ty: kdsl_ir::ScalarType::U32,
                span: expression.span,
            })?
            .into_int_value();
        let extent = self
            .builder
            .build_int_z_extend(extent, i64_type, "extent")?;
        self.checked_dimension_index(expression, wide, extent)
    }

    /// `index` as a 64-bit value, with a constant added to or subtracted from it (`x - 1`,
    /// `y + 1`) added after the widening, as no-wrap 64-bit arithmetic. Valid because the
    /// narrow operation must not overflow; it keeps the index's neighbours a constant offset
    /// apart (the narrow `x - 1` becomes `add x, -1` in LLVM, which loses the no-wrap fact, and
    /// its extension hides that `x - 1` and `x` are consecutive), as a hand-written `u64` index
    /// does.
    fn wide_index(&mut self, index: &Expression) -> Result<IntValue<'ctx>> {
        let (variable, offsets) = split_offsets(index);
        let mut value = self.widen(variable)?;
        for (op, constant) in offsets {
            let constant = self.widen(constant)?;
            value = self.no_wrap_offset(op, value, constant, index.ty)?;
        }
        Ok(value)
    }

    /// `variable + constant` or `variable - constant` in 64 bits, marked `nsw` (and `nuw` for
    /// an unsigned index, whose narrow result is never negative).
    fn no_wrap_offset(
        &mut self,
        op: BinaryOp,
        variable: IntValue<'ctx>,
        constant: IntValue<'ctx>,
        ty: kdsl_ir::ScalarType,
    ) -> Result<IntValue<'ctx>> {
        let builder = &self.builder;
        Ok(match (op, ty.is_signed_integer()) {
            (BinaryOp::Add, true) => builder.build_int_nsw_add(variable, constant, "")?,
            (BinaryOp::Add, false) => {
                let sum = builder.build_int_nuw_add(variable, constant, "")?;
                crate::llvm::set_no_wrap(sum, true);
                sum
            }
            (_, true) => builder.build_int_nsw_sub(variable, constant, "")?,
            (_, false) => {
                let difference = builder.build_int_nuw_sub(variable, constant, "")?;
                crate::llvm::set_no_wrap(difference, true);
                difference
            }
        })
    }

    /// `index` extended to 64 bits. An index in bounds is not negative, so both extensions
    /// give the same value; the sign extension keeps a signed index's no-wrap facts.
    fn widen(&mut self, index: &Expression) -> Result<IntValue<'ctx>> {
        let i64_type = self.context.i64_type();
        let value = self.expression(index)?.into_int_value();
        Ok(if value.get_type().get_bit_width() >= 64 {
            value
        } else if index.ty.is_signed_integer() {
            self.builder.build_int_s_extend(value, i64_type, "")?
        } else {
            self.builder.build_int_z_extend(value, i64_type, "")?
        })
    }
}

/// `index` as a variable part and the integer constants added to or subtracted from it,
/// innermost first: `x - 1` is (`x`, [(Subtract, 1)]), `1 + (y + 2)` is (`y`, [(Add, 2), (Add, 1)]).
/// Only indices narrower than 64 bits are split (a `u64` index needs no widening).
fn split_offsets(index: &Expression) -> (&Expression, Vec<(BinaryOp, &Expression)>) {
    let is_constant =
        |e: &Expression| matches!(e.kind, ExpressionKind::Literal(Literal::Integer(_)));
    if index.ty.bit_width() < 64 {
        if let ExpressionKind::Binary { op, left, right } = &index.kind {
            let parts = match op {
                BinaryOp::Add | BinaryOp::Subtract if is_constant(right) => Some((left, right)),
                BinaryOp::Add if is_constant(left) => Some((right, left)),
                _ => None,
            };
            if let Some((variable, constant)) = parts {
                let (variable, mut offsets) = split_offsets(variable);
                offsets.push((*op, constant.as_ref()));
                return (variable, offsets);
            }
        }
    }
    (index, Vec::new())
}
