//! Evaluation of constant expressions over the typed IR: module constants, array lengths,
//! work-item dimensions and loop steps.

use kdsl_ir::scalar::{self, Undefined};
use kdsl_ir::{Expression, ExpressionKind, LogicalOp, ScalarType, ScalarValue, Span, UnaryOp};

/// Why an expression has no compile-time value.
#[derive(Clone, Debug, PartialEq)]
pub enum ConstantError {
    /// The expression reads memory, a parameter, a variable or calls something.
    NotConstant(Span),
    /// The operation is undefined behaviour (integer division by zero, `MIN / -1`).
    Undefined(Span, Undefined),
    /// Integer `+ - *` or negation left its type's range: an error in a constant
    /// (`wrapping_add` and friends wrap on purpose).
    Overflow(Span, String),
}

/// Truncates `value` to the width of the integer type `ty`.
pub fn truncate(value: i128, ty: ScalarType) -> u64 {
    scalar::integer_from_i128(value, ty)
}

/// Reads the bits of an integer of type `ty` as a number.
pub fn sign_extend(bits: u64, ty: ScalarType) -> i128 {
    scalar::integer_as_i128(bits, ty)
}

pub use scalar::integer_range;

/// Evaluates a typed expression that must be constant, with the same evaluator (and so the
/// same results) as the interpreter.
pub fn evaluate(expression: &Expression) -> Result<ScalarValue, ConstantError> {
    evaluate_bits(expression).map(|bits| ScalarValue::from_bits(bits, expression.ty))
}

fn evaluate_bits(expression: &Expression) -> Result<u64, ConstantError> {
    let ty = expression.ty;
    let span = expression.span;
    match &expression.kind {
        ExpressionKind::Literal(literal) => Ok(scalar::literal_bits(*literal, ty)),
        ExpressionKind::Unary { op, operand } => {
            let x = evaluate_bits(operand)?;
            if *op == UnaryOp::Negate && scalar::negation_overflows(operand.ty, x) {
                return Err(ConstantError::Overflow(
                    span,
                    format!(
                        "`-` of the smallest `{}` does not fit in `{}`",
                        operand.ty, operand.ty
                    ),
                ));
            }
            Ok(scalar::unary(*op, operand.ty, x))
        }
        ExpressionKind::Binary { op, left, right } => {
            let x = evaluate_bits(left)?;
            let y = evaluate_bits(right)?;
            if scalar::overflows(*op, left.ty, x, y) {
                let (a, b) = (
                    scalar::integer_as_i128(x, left.ty),
                    scalar::integer_as_i128(y, right.ty),
                );
                let ty = left.ty;
                let message = format!("`{a} {} {b}` does not fit in `{ty}`", op.symbol());
                return Err(ConstantError::Overflow(span, message));
            }
            scalar::binary(*op, left.ty, x, y, right.ty)
                .map_err(|undefined| ConstantError::Undefined(span, undefined))
        }
        // Only the functions that fold to the same bits as every target computes.
        ExpressionKind::Math {
            function,
            arguments,
        } if function.folds_exactly() => {
            let mut values = Vec::with_capacity(arguments.len());
            for argument in arguments {
                values.push(evaluate_bits(argument)?);
            }
            let operand = kdsl_ir::MathFunction::operand_type(arguments, ty);
            Ok(scalar::math(*function, operand, &values))
        }
        // The right side is evaluated only when it decides the result, as at run time.
        ExpressionKind::ShortCircuit { op, left, right } => {
            let left = evaluate_bits(left)? != 0;
            match (op, left) {
                (LogicalOp::And, false) => Ok(0),
                (LogicalOp::Or, true) => Ok(1),
                _ => Ok(u64::from(evaluate_bits(right)? != 0)),
            }
        }
        // Only the chosen arm is evaluated, as at run time.
        ExpressionKind::Conditional {
            condition,
            accept,
            reject,
        } => {
            if evaluate_bits(condition)? != 0 {
                evaluate_bits(accept)
            } else {
                evaluate_bits(reject)
            }
        }
        ExpressionKind::Cast { value } => Ok(scalar::cast(evaluate_bits(value)?, value.ty, ty)),
        // Both arms are evaluated, as at run time.
        ExpressionKind::Select {
            condition,
            accept,
            reject,
        } => {
            let condition = evaluate_bits(condition)?;
            let accept = evaluate_bits(accept)?;
            let reject = evaluate_bits(reject)?;
            Ok(if condition != 0 { accept } else { reject })
        }
        _ => Err(ConstantError::NotConstant(span)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kdsl_ir::{BinaryOp, Literal};

    fn literal(literal: Literal, ty: ScalarType) -> Expression {
        Expression {
            id: kdsl_ir::ExprId::UNNUMBERED,
            kind: ExpressionKind::Literal(literal),
            ty,
            span: Span::new(0, 0),
        }
    }

    #[test]
    fn integer_helpers_round_trip() {
        assert_eq!(truncate(-1, ScalarType::I8), 0xff);
        assert_eq!(sign_extend(0xff, ScalarType::I8), -1);
        assert_eq!(sign_extend(0xff, ScalarType::U8), 255);
        assert_eq!(integer_range(ScalarType::I16), (-32768, 32767));
    }

    #[test]
    fn short_circuit_skips_the_right_side() {
        let zero = literal(Literal::Integer(0), ScalarType::I32);
        let divide = Expression {
            id: kdsl_ir::ExprId::UNNUMBERED,
            kind: ExpressionKind::Binary {
                op: BinaryOp::Divide,
                left: Box::new(literal(Literal::Integer(1), ScalarType::I32)),
                right: Box::new(zero),
            },
            ty: ScalarType::I32,
            span: Span::new(0, 0),
        };
        let undefined = Expression {
            id: kdsl_ir::ExprId::UNNUMBERED,
            kind: ExpressionKind::Binary {
                op: BinaryOp::Equal,
                left: Box::new(divide.clone()),
                right: Box::new(literal(Literal::Integer(0), ScalarType::I32)),
            },
            ty: ScalarType::Bool,
            span: Span::new(0, 0),
        };
        let and = Expression {
            id: kdsl_ir::ExprId::UNNUMBERED,
            kind: ExpressionKind::ShortCircuit {
                op: LogicalOp::And,
                left: Box::new(literal(Literal::Bool(false), ScalarType::Bool)),
                right: Box::new(undefined.clone()),
            },
            ty: ScalarType::Bool,
            span: Span::new(0, 0),
        };
        assert_eq!(evaluate(&and), Ok(ScalarValue::Bool(false)));
        assert!(matches!(
            evaluate(&undefined),
            Err(ConstantError::Undefined(
                _,
                Undefined::DivisionByZero { .. }
            ))
        ));
    }
}
