//! Evaluation of constant expressions over the typed IR: module constants, array lengths,
//! work-item dimensions and loop steps.

use kdsl_ir::{
    BinaryOp, Expression, ExpressionKind, Literal, LogicalOp, ScalarType, Span, UnaryOp,
};

/// Why an expression has no compile-time value.
#[derive(Clone, Debug, PartialEq)]
pub enum ConstantError {
    /// The expression reads memory, a parameter, a variable or calls something.
    NotConstant(Span),
    /// Integer division or remainder by zero.
    DivisionByZero(Span),
}

/// A compile-time value of a scalar type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    Bool(bool),
    /// The two's-complement bits, truncated to the type's width.
    Integer(u64),
    Float(f64),
}

impl Value {
    pub fn to_literal(self) -> Literal {
        match self {
            Value::Bool(b) => Literal::Bool(b),
            Value::Integer(bits) => Literal::Integer(bits),
            Value::Float(f) => Literal::Float(f),
        }
    }

    pub fn from_literal(literal: Literal) -> Value {
        match literal {
            Literal::Bool(b) => Value::Bool(b),
            Literal::Integer(bits) => Value::Integer(bits),
            Literal::Float(f) => Value::Float(f),
        }
    }

    /// The value as a signed or unsigned 128-bit integer, by its type.
    pub fn as_i128(self, ty: ScalarType) -> Option<i128> {
        match self {
            Value::Integer(bits) => Some(sign_extend(bits, ty)),
            _ => None,
        }
    }
}

/// Truncates `value` to the width of the integer type `ty`.
pub fn truncate(value: i128, ty: ScalarType) -> u64 {
    let width = ty.bit_width();
    let bits = value as u128 as u64;
    if width >= 64 {
        bits
    } else {
        bits & ((1u64 << width) - 1)
    }
}

/// Reads the bits of an integer of type `ty` as a number.
pub fn sign_extend(bits: u64, ty: ScalarType) -> i128 {
    let width = ty.bit_width();
    if ty.is_signed_integer() {
        let shift = 64 - width;
        i128::from(((bits << shift) as i64) >> shift)
    } else if width >= 64 {
        i128::from(bits)
    } else {
        i128::from(bits & ((1u64 << width) - 1))
    }
}

/// The smallest and largest value of an integer type.
pub fn integer_range(ty: ScalarType) -> (i128, i128) {
    let width = ty.bit_width();
    if ty.is_signed_integer() {
        (-(1i128 << (width - 1)), (1i128 << (width - 1)) - 1)
    } else {
        (0, (1i128 << width) - 1)
    }
}

/// Rounds a float to the precision of its type.
pub fn round_float(value: f64, ty: ScalarType) -> f64 {
    match ty {
        ScalarType::F32 | ScalarType::F16 => f64::from(value as f32),
        _ => value,
    }
}

/// Evaluates a typed expression that must be constant.
pub fn evaluate(expression: &Expression) -> Result<Value, ConstantError> {
    let ty = expression.ty;
    match &expression.kind {
        ExpressionKind::Literal(literal) => Ok(Value::from_literal(*literal)),
        ExpressionKind::Unary { op, operand } => {
            let value = evaluate(operand)?;
            Ok(match (op, value) {
                (UnaryOp::Not, Value::Bool(b)) => Value::Bool(!b),
                (UnaryOp::Negate, Value::Float(f)) => Value::Float(-f),
                (UnaryOp::Negate, Value::Integer(bits)) => {
                    Value::Integer(truncate(sign_extend(bits, ty).wrapping_neg(), ty))
                }
                (UnaryOp::BitNot, Value::Integer(bits)) => {
                    Value::Integer(truncate(i128::from(!bits), ty))
                }
                _ => return Err(ConstantError::NotConstant(expression.span)),
            })
        }
        ExpressionKind::Binary { op, left, right } => {
            let operand_type = left.ty;
            let l = evaluate(left)?;
            let r = evaluate(right)?;
            binary(*op, operand_type, right.ty, l, r, expression.span)
        }
        ExpressionKind::ShortCircuit { op, left, right } => {
            let l = matches!(evaluate(left)?, Value::Bool(true));
            let r = matches!(evaluate(right)?, Value::Bool(true));
            Ok(Value::Bool(match op {
                LogicalOp::And => l && r,
                LogicalOp::Or => l || r,
            }))
        }
        ExpressionKind::Cast { value } => {
            let from = value.ty;
            let v = evaluate(value)?;
            Ok(cast(v, from, ty))
        }
        ExpressionKind::Select {
            condition,
            accept,
            reject,
        } => {
            let c = evaluate(condition)?;
            let a = evaluate(accept)?;
            let r = evaluate(reject)?;
            Ok(if c == Value::Bool(true) { a } else { r })
        }
        _ => Err(ConstantError::NotConstant(expression.span)),
    }
}

fn cast(value: Value, from: ScalarType, to: ScalarType) -> Value {
    let as_float = match value {
        Value::Bool(b) => f64::from(u8::from(b)),
        Value::Integer(bits) => sign_extend(bits, from) as f64,
        Value::Float(f) => f,
    };
    if to == ScalarType::Bool {
        return Value::Bool(match value {
            Value::Bool(b) => b,
            Value::Integer(bits) => bits != 0,
            Value::Float(f) => f != 0.0,
        });
    }
    if to.is_float() {
        return Value::Float(round_float(as_float, to));
    }
    let number: i128 = match value {
        Value::Bool(b) => i128::from(b),
        Value::Integer(bits) => sign_extend(bits, from),
        // Float to integer saturates here; at run time out-of-range conversions are undefined.
        Value::Float(f) if f.is_nan() => 0,
        Value::Float(f) => {
            let (low, high) = integer_range(to);
            (f.trunc() as i128).clamp(low, high)
        }
    };
    Value::Integer(truncate(number, to))
}

fn binary(
    op: BinaryOp,
    ty: ScalarType,
    amount_type: ScalarType,
    left: Value,
    right: Value,
    span: Span,
) -> Result<Value, ConstantError> {
    use BinaryOp::*;
    Ok(match (left, right) {
        (Value::Integer(a), Value::Integer(b)) => {
            let x = sign_extend(a, ty);
            let y = sign_extend(b, if op.is_shift() { amount_type } else { ty });
            let width = i128::from(ty.bit_width());
            let result = match op {
                Add => x.wrapping_add(y),
                Subtract => x.wrapping_sub(y),
                Multiply => x.wrapping_mul(y),
                Divide | Remainder if y == 0 => return Err(ConstantError::DivisionByZero(span)),
                Divide => x.wrapping_div(y),
                Remainder => x.wrapping_rem(y),
                BitAnd => x & y,
                BitOr => x | y,
                BitXor => x ^ y,
                ShiftLeft | ShiftRight if y < 0 || y >= width => {
                    return Err(ConstantError::NotConstant(span))
                }
                ShiftLeft => x << y,
                ShiftRight => x >> y,
                Equal => return Ok(Value::Bool(x == y)),
                NotEqual => return Ok(Value::Bool(x != y)),
                Less => return Ok(Value::Bool(x < y)),
                LessEqual => return Ok(Value::Bool(x <= y)),
                Greater => return Ok(Value::Bool(x > y)),
                GreaterEqual => return Ok(Value::Bool(x >= y)),
            };
            Value::Integer(truncate(result, ty))
        }
        (Value::Float(x), Value::Float(y)) => {
            let result = match op {
                Add => x + y,
                Subtract => x - y,
                Multiply => x * y,
                Divide => x / y,
                Remainder => x % y,
                Equal => return Ok(Value::Bool(x == y)),
                NotEqual => return Ok(Value::Bool(x != y)),
                Less => return Ok(Value::Bool(x < y)),
                LessEqual => return Ok(Value::Bool(x <= y)),
                Greater => return Ok(Value::Bool(x > y)),
                GreaterEqual => return Ok(Value::Bool(x >= y)),
                _ => return Err(ConstantError::NotConstant(span)),
            };
            Value::Float(round_float(result, ty))
        }
        (Value::Bool(x), Value::Bool(y)) => Value::Bool(match op {
            Equal => x == y,
            NotEqual => x != y,
            BitAnd => x & y,
            BitOr => x | y,
            BitXor => x ^ y,
            _ => return Err(ConstantError::NotConstant(span)),
        }),
        _ => return Err(ConstantError::NotConstant(span)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_helpers_round_trip() {
        assert_eq!(truncate(-1, ScalarType::I8), 0xff);
        assert_eq!(sign_extend(0xff, ScalarType::I8), -1);
        assert_eq!(sign_extend(0xff, ScalarType::U8), 255);
        assert_eq!(integer_range(ScalarType::I16), (-32768, 32767));
        assert_eq!(
            cast(Value::Float(300.7), ScalarType::F32, ScalarType::U8),
            Value::Integer(255)
        );
        assert_eq!(
            cast(Value::Integer(0xff), ScalarType::I8, ScalarType::I32),
            Value::Integer(0xffff_ffff)
        );
    }
}
