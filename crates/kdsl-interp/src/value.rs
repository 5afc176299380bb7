//! Scalar values as bits, and the operations of the language on them.
//!
//! Every value is held in a `u64`: integers zero-extended from their width, `bool` as 0 or 1,
//! floats as their IEEE bits (`f16` in the low 16 bits). The expression's type says how to read it.

use half::f16;
use kdsl_ir::{AtomicOp, BinaryOp, MathFunction, ScalarType, UnaryOp};

/// Why an operation has no defined result; the caller adds the span and the work-item.
pub(crate) type Undefined = String;

fn mask(ty: ScalarType) -> u64 {
    match ty.bit_width() {
        64 => u64::MAX,
        width => (1u64 << width) - 1,
    }
}

/// Keeps the low bits of `bits` that `ty` holds.
pub(crate) fn truncate(bits: u64, ty: ScalarType) -> u64 {
    bits & mask(ty)
}

/// The value of an integer of type `ty` as a signed 64-bit number (sign-extended if `ty` is signed).
pub(crate) fn integer_as_i128(bits: u64, ty: ScalarType) -> i128 {
    if ty.is_signed_integer() {
        i128::from(sign_extend(bits, ty))
    } else {
        i128::from(bits)
    }
}

fn sign_extend(bits: u64, ty: ScalarType) -> i64 {
    let unused = 64 - ty.bit_width();
    ((bits << unused) as i64) >> unused
}

/// A float of type `ty` widened exactly to `f64`.
pub(crate) fn float_as_f64(bits: u64, ty: ScalarType) -> f64 {
    match ty {
        ScalarType::F16 => f16::from_bits(bits as u16).to_f64(),
        ScalarType::F32 => f64::from(f32::from_bits(bits as u32)),
        _ => f64::from_bits(bits),
    }
}

/// Rounds an `f64` to the nearest value of float type `ty`.
pub(crate) fn f64_to_float(value: f64, ty: ScalarType) -> u64 {
    match ty {
        ScalarType::F16 => u64::from(f16::from_f64(value).to_bits()),
        ScalarType::F32 => u64::from((value as f32).to_bits()),
        _ => value.to_bits(),
    }
}

/// Applies a one-argument float function: `f16` is computed in `f32` and rounded back.
fn float_unary(ty: ScalarType, x: u64, single: fn(f32) -> f32, double: fn(f64) -> f64) -> u64 {
    match ty {
        ScalarType::F16 => {
            let value = single(f16::from_bits(x as u16).to_f32());
            u64::from(f16::from_f32(value).to_bits())
        }
        ScalarType::F32 => u64::from(single(f32::from_bits(x as u32)).to_bits()),
        _ => double(f64::from_bits(x)).to_bits(),
    }
}

/// Applies a two-argument float function: `f16` is computed in `f32` and rounded back.
fn float_binary(
    ty: ScalarType,
    x: u64,
    y: u64,
    single: fn(f32, f32) -> f32,
    double: fn(f64, f64) -> f64,
) -> u64 {
    match ty {
        ScalarType::F16 => {
            let left = f16::from_bits(x as u16).to_f32();
            let right = f16::from_bits(y as u16).to_f32();
            u64::from(f16::from_f32(single(left, right)).to_bits())
        }
        ScalarType::F32 => {
            u64::from(single(f32::from_bits(x as u32), f32::from_bits(y as u32)).to_bits())
        }
        _ => double(f64::from_bits(x), f64::from_bits(y)).to_bits(),
    }
}

fn sign_bit(ty: ScalarType) -> u64 {
    1u64 << (ty.bit_width() - 1)
}

pub(crate) fn unary(op: UnaryOp, ty: ScalarType, x: u64) -> u64 {
    match op {
        UnaryOp::Negate if ty.is_float() => x ^ sign_bit(ty),
        UnaryOp::Negate => truncate(0u64.wrapping_sub(x), ty),
        UnaryOp::Not => x ^ 1,
        UnaryOp::BitNot => truncate(!x, ty),
    }
}

/// A binary operator on two operands of type `ty` (for shifts, `amount_type` is the right
/// operand's type). Comparisons give a `bool` (0 or 1).
pub(crate) fn binary(
    op: BinaryOp,
    ty: ScalarType,
    x: u64,
    y: u64,
    amount_type: ScalarType,
) -> Result<u64, Undefined> {
    if ty.is_float() {
        return Ok(float_binary_operator(op, ty, x, y));
    }
    let signed = ty.is_signed_integer();
    let value = match op {
        BinaryOp::Add => x.wrapping_add(y),
        BinaryOp::Subtract => x.wrapping_sub(y),
        BinaryOp::Multiply => x.wrapping_mul(y),
        BinaryOp::Divide | BinaryOp::Remainder => {
            if y == 0 {
                return Err(format!("integer division by zero ({ty})"));
            }
            if signed {
                let (left, right) = (sign_extend(x, ty), sign_extend(y, ty));
                if right == -1 && left == sign_extend(sign_bit(ty), ty) {
                    return Err(format!(
                        "signed division overflow: {left} / -1 does not fit in {ty}"
                    ));
                }
                let result = if op == BinaryOp::Divide {
                    left / right
                } else {
                    left % right
                };
                result as u64
            } else if op == BinaryOp::Divide {
                x / y
            } else {
                x % y
            }
        }
        BinaryOp::BitAnd => x & y,
        BinaryOp::BitOr => x | y,
        BinaryOp::BitXor => x ^ y,
        BinaryOp::ShiftLeft | BinaryOp::ShiftRight => {
            let amount = integer_as_i128(y, amount_type);
            if amount < 0 || amount >= i128::from(ty.bit_width()) {
                return Err(format!(
                    "shift of a {}-bit {ty} by {amount}",
                    ty.bit_width()
                ));
            }
            let amount = amount as u32;
            if op == BinaryOp::ShiftLeft {
                x << amount
            } else if signed {
                (sign_extend(x, ty) >> amount) as u64
            } else {
                x >> amount
            }
        }
        comparison => {
            let (left, right) = (integer_as_i128(x, ty), integer_as_i128(y, ty));
            let result = match comparison {
                BinaryOp::Equal => left == right,
                BinaryOp::NotEqual => left != right,
                BinaryOp::Less => left < right,
                BinaryOp::LessEqual => left <= right,
                BinaryOp::Greater => left > right,
                _ => left >= right,
            };
            return Ok(u64::from(result));
        }
    };
    Ok(truncate(value, ty))
}

fn float_binary_operator(op: BinaryOp, ty: ScalarType, x: u64, y: u64) -> u64 {
    let compare =
        |test: fn(f64, f64) -> bool| u64::from(test(float_as_f64(x, ty), float_as_f64(y, ty)));
    match op {
        BinaryOp::Add => float_binary(ty, x, y, |a, b| a + b, |a, b| a + b),
        BinaryOp::Subtract => float_binary(ty, x, y, |a, b| a - b, |a, b| a - b),
        BinaryOp::Multiply => float_binary(ty, x, y, |a, b| a * b, |a, b| a * b),
        BinaryOp::Divide => float_binary(ty, x, y, |a, b| a / b, |a, b| a / b),
        BinaryOp::Remainder => float_binary(ty, x, y, |a, b| a % b, |a, b| a % b),
        // Ordered comparisons are false with a NaN; `!=` is true with one.
        BinaryOp::Equal => compare(|a, b| a == b),
        BinaryOp::NotEqual => compare(|a, b| a != b),
        BinaryOp::Less => compare(|a, b| a < b),
        BinaryOp::LessEqual => compare(|a, b| a <= b),
        BinaryOp::Greater => compare(|a, b| a > b),
        BinaryOp::GreaterEqual => compare(|a, b| a >= b),
        // Bitwise operators and shifts do not take floats (the IR validator rejects them).
        _ => 0,
    }
}

/// Converts `x` of type `from` to type `to`, as `x as to` does.
pub(crate) fn cast(x: u64, from: ScalarType, to: ScalarType) -> Result<u64, Undefined> {
    if from == to {
        return Ok(x);
    }
    match (from.is_float(), to.is_float()) {
        (true, true) => Ok(f64_to_float(float_as_f64(x, from), to)),
        (true, false) => {
            let value = float_as_f64(x, from);
            if to == ScalarType::Bool {
                // `!= 0.0`, so NaN is true.
                return Ok(u64::from(value != 0.0));
            }
            let truncated = value.trunc();
            let (lowest, limit) = if to.is_signed_integer() {
                let half_range = (2.0f64).powi(to.bit_width() as i32 - 1);
                (-half_range, half_range)
            } else {
                (0.0, (2.0f64).powi(to.bit_width() as i32))
            };
            if value.is_nan() || truncated < lowest || truncated >= limit {
                return Err(format!("{value} cast to {to} is out of its range"));
            }
            Ok(if to.is_signed_integer() {
                truncate(truncated as i64 as u64, to)
            } else {
                truncated as u64
            })
        }
        (false, true) => {
            let value = integer_as_i128(x, from);
            Ok(match to {
                ScalarType::F64 => (value as f64).to_bits(),
                // One rounding to f32; for f16, every integer that f32 rounds is beyond f16's range.
                ScalarType::F32 => u64::from((value as f32).to_bits()),
                _ => u64::from(f16::from_f32(value as f32).to_bits()),
            })
        }
        (false, false) if to == ScalarType::Bool => Ok(u64::from(x != 0)),
        (false, false) => Ok(truncate(integer_as_i128(x, from) as u64, to)),
    }
}

fn integer_min(ty: ScalarType, x: u64, y: u64) -> u64 {
    if integer_as_i128(x, ty) <= integer_as_i128(y, ty) {
        x
    } else {
        y
    }
}

fn integer_max(ty: ScalarType, x: u64, y: u64) -> u64 {
    if integer_as_i128(x, ty) >= integer_as_i128(y, ty) {
        x
    } else {
        y
    }
}

/// `min` of two values: for floats a NaN operand yields the other operand (IEEE `minNum`).
pub(crate) fn minimum(ty: ScalarType, x: u64, y: u64) -> u64 {
    if ty.is_float() {
        float_binary(ty, x, y, f32::min, f64::min)
    } else {
        integer_min(ty, x, y)
    }
}

/// `max` of two values: for floats a NaN operand yields the other operand (IEEE `maxNum`).
pub(crate) fn maximum(ty: ScalarType, x: u64, y: u64) -> u64 {
    if ty.is_float() {
        float_binary(ty, x, y, f32::max, f64::max)
    } else {
        integer_max(ty, x, y)
    }
}

pub(crate) fn add(ty: ScalarType, x: u64, y: u64) -> u64 {
    if ty.is_float() {
        float_binary(ty, x, y, |a, b| a + b, |a, b| a + b)
    } else {
        truncate(x.wrapping_add(y), ty)
    }
}

/// A math function of the language on arguments of the result's type.
pub(crate) fn math(function: MathFunction, ty: ScalarType, arguments: &[u64]) -> u64 {
    let x = arguments[0];
    let y = || arguments[1];
    match function {
        MathFunction::Sqrt => float_unary(ty, x, f32::sqrt, f64::sqrt),
        MathFunction::Rsqrt => float_unary(ty, x, |v| 1.0 / v.sqrt(), |v| 1.0 / v.sqrt()),
        MathFunction::Exp => float_unary(ty, x, f32::exp, f64::exp),
        MathFunction::Exp2 => float_unary(ty, x, f32::exp2, f64::exp2),
        MathFunction::Log => float_unary(ty, x, f32::ln, f64::ln),
        MathFunction::Log2 => float_unary(ty, x, f32::log2, f64::log2),
        MathFunction::Sin => float_unary(ty, x, f32::sin, f64::sin),
        MathFunction::Cos => float_unary(ty, x, f32::cos, f64::cos),
        MathFunction::Tan => float_unary(ty, x, f32::tan, f64::tan),
        MathFunction::Tanh => float_unary(ty, x, f32::tanh, f64::tanh),
        MathFunction::Floor => float_unary(ty, x, f32::floor, f64::floor),
        MathFunction::Ceil => float_unary(ty, x, f32::ceil, f64::ceil),
        // Halfway cases round away from zero.
        MathFunction::Round => float_unary(ty, x, f32::round, f64::round),
        MathFunction::Pow => float_binary(ty, x, y(), f32::powf, f64::powf),
        MathFunction::Fma => {
            let z = arguments[2];
            match ty {
                // The product of two f16 values is exact in f64, so this rounds once to f64.
                ScalarType::F16 => {
                    let value =
                        float_as_f64(x, ty).mul_add(float_as_f64(y(), ty), float_as_f64(z, ty));
                    f64_to_float(value, ty)
                }
                ScalarType::F32 => {
                    let value = f32::from_bits(x as u32)
                        .mul_add(f32::from_bits(y() as u32), f32::from_bits(z as u32));
                    u64::from(value.to_bits())
                }
                _ => f64::from_bits(x)
                    .mul_add(f64::from_bits(y()), f64::from_bits(z))
                    .to_bits(),
            }
        }
        MathFunction::Abs if ty.is_float() => x & !sign_bit(ty),
        // `abs` of the most negative value is itself (it wraps).
        MathFunction::Abs if ty.is_signed_integer() => {
            truncate(sign_extend(x, ty).wrapping_abs() as u64, ty)
        }
        MathFunction::Abs => x,
        MathFunction::Min => minimum(ty, x, y()),
        MathFunction::Max => maximum(ty, x, y()),
        // `min(max(x, low), high)`.
        MathFunction::Clamp => minimum(ty, maximum(ty, x, y()), arguments[2]),
    }
}

/// The new content of a place after an atomic `op` with `value` (and `comparand` for
/// compare-exchange) on its `old` content.
pub(crate) fn atomic_update(
    op: AtomicOp,
    ty: ScalarType,
    old: u64,
    value: u64,
    comparand: u64,
) -> u64 {
    match op {
        AtomicOp::Add => add(ty, old, value),
        AtomicOp::Subtract => truncate(old.wrapping_sub(value), ty),
        AtomicOp::Min => integer_min(ty, old, value),
        AtomicOp::Max => integer_max(ty, old, value),
        AtomicOp::And => old & value,
        AtomicOp::Or => old | value,
        AtomicOp::Xor => old ^ value,
        AtomicOp::Exchange => value,
        AtomicOp::CompareExchange if old == comparand => value,
        AtomicOp::CompareExchange => old,
    }
}
