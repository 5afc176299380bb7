//! The index of one dimension of a multi-dimensional buffer (`a[i, j]`,
//! [`ExpressionKind::DimensionIndex`]): widened to 64 bits, and in checked mode compared with
//! the dimension's extent (a failure reports the site and gives index 0).

use super::{FunctionLowering, Result};
use kdsl_ir::{Expression, ParameterId};

impl<'ctx> FunctionLowering<'_, 'ctx> {
    pub(super) fn dimension_index(
        &mut self,
        expression: &Expression,
        index: &Expression,
        extent: ParameterId,
    ) -> Result<inkwell::values::BasicValueEnum<'ctx>> {
        let i64_type = self.context.i64_type();
        let value = self.expression(index)?.into_int_value();
        // An index in bounds is not negative, so both extensions give the same value; the
        // sign extension keeps a signed index's no-wrap facts.
        let wide = if value.get_type().get_bit_width() >= 64 {
            value
        } else if index.ty.is_signed_integer() {
            self.builder.build_int_s_extend(value, i64_type, "")?
        } else {
            self.builder.build_int_z_extend(value, i64_type, "")?
        };
        if self.checked.is_none() {
            return Ok(wide.into());
        }
        let extent = self
            .expression(&Expression {
                id: kdsl_ir::ExprId::UNNUMBERED,
                kind: kdsl_ir::ExpressionKind::Parameter(extent),
                ty: kdsl_ir::ScalarType::U32,
                span: expression.span,
            })?
            .into_int_value();
        let extent = self
            .builder
            .build_int_z_extend(extent, i64_type, "extent")?;
        self.checked_dimension_index(expression, wide, extent)
    }
}
