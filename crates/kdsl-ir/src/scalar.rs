//! Scalar values and the one evaluator of the language's scalar operations, shared by the
//! constant folder and the interpreter (docs/language.md, "Semantics", says what each does).
//!
//! Every value is held in a `u64`: integers zero-extended from their width, `bool` as 0 or 1,
//! floats as their IEEE bits (`f16` and `bf16` in the low 16 bits). The operation's type says
//! how to read it. [`ScalarValue`] is the same value with its type, for APIs.
//!
//! Conversions to `f16` round exactly once (no detour through `f32`), whatever the host; `bf16`
//! (`crate::bf16`) is computed in `f32` and rounded, and converted to by a single rounding too.

use crate::bf16::{bf16_from_f32, bf16_from_f64, bf16_from_i128, bf16_to_f32, bf16_to_f64};
use crate::ir::{AtomicOp, BinaryOp, Literal, MathFunction, UnaryOp};
pub use crate::type_constants::{associated_constant, associated_constant_names};
use crate::types::ScalarType;
use half::{bf16, f16};
use std::fmt;

/// Why an operation has no defined result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Undefined {
    /// Integer division or remainder by zero.
    DivisionByZero { ty: ScalarType },
    /// `MIN / -1` or `MIN % -1` of a signed type.
    DivisionOverflow { ty: ScalarType },
    /// Integer `+ - *` (`-` also unary) whose exact result is outside the type's range.
    Overflow { ty: ScalarType, op: BinaryOp },
}

impl fmt::Display for Undefined {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Undefined::DivisionByZero { ty } => write!(f, "integer division by zero ({ty})"),
            Undefined::DivisionOverflow { ty } => write!(
                f,
                "signed division overflow: the smallest {ty} divided by -1 does not fit in {ty}"
            ),
            Undefined::Overflow { ty, op } => {
                let wrapping = match op {
                    BinaryOp::Add => "wrapping_add",
                    BinaryOp::Multiply => "wrapping_mul",
                    _ => "wrapping_sub",
                };
                write!(
                    f,
                    "integer overflow: the result of `{}` does not fit in {ty} (`{wrapping}` wraps around)",
                    op.symbol()
                )
            }
        }
    }
}

fn mask(ty: ScalarType) -> u64 {
    match ty.bit_width() {
        64 => u64::MAX,
        width => (1u64 << width) - 1,
    }
}

/// Keeps the low bits of `bits` that `ty` holds.
pub fn truncate(bits: u64, ty: ScalarType) -> u64 {
    bits & mask(ty)
}

fn sign_extend(bits: u64, ty: ScalarType) -> i64 {
    let unused = 64 - ty.bit_width();
    ((bits << unused) as i64) >> unused
}

/// The value of an integer of type `ty` as a number (sign-extended if `ty` is signed).
pub fn integer_as_i128(bits: u64, ty: ScalarType) -> i128 {
    if ty.is_signed_integer() {
        i128::from(sign_extend(bits, ty))
    } else {
        i128::from(truncate(bits, ty))
    }
}

/// The bits of the integer `value` in type `ty` (wrapping).
pub fn integer_from_i128(value: i128, ty: ScalarType) -> u64 {
    truncate(value as u64, ty)
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

/// Rounds `mantissa * 2^exponent` (negated if `negative`) to the nearest `f16`, ties to even,
/// once; overflow gives infinity.
fn round_to_f16(negative: bool, mut mantissa: u128, mut exponent: i32) -> u16 {
    let sign = if negative { 0x8000 } else { 0 };
    if mantissa == 0 {
        return sign;
    }
    // Keep at most 64 significant bits; the dropped bits survive as a sticky bit, which
    // keeps the rounding exact (f16 needs 11 bits and two more to round).
    let length = 128 - mantissa.leading_zeros() as i32;
    if length > 64 {
        let dropped = length - 64;
        let sticky = u128::from(mantissa & ((1u128 << dropped) - 1) != 0);
        mantissa = (mantissa >> dropped) | sticky;
        exponent += dropped;
    }
    let length = 128 - mantissa.leading_zeros() as i32;
    let top = exponent + length - 1;
    if top > 15 {
        return sign | 0x7c00;
    }
    // The weight of the last bit of the result: 2^-24 for subnormals.
    let quantum = (top - 10).max(-24);
    let shift = quantum - exponent;
    let mut rounded = if shift <= 0 {
        mantissa << (-shift)
    } else if shift > 66 {
        0
    } else {
        let kept = mantissa >> shift;
        let rest = mantissa & ((1u128 << shift) - 1);
        let half = 1u128 << (shift - 1);
        if rest > half || (rest == half && kept & 1 == 1) {
            kept + 1
        } else {
            kept
        }
    };
    let mut quantum = quantum;
    if rounded == 1 << 11 {
        rounded = 1 << 10;
        quantum += 1;
    }
    if rounded < 1 << 10 {
        // Subnormal (or zero): the quantum is 2^-24.
        return sign | rounded as u16;
    }
    let field = quantum + 25;
    if field >= 31 {
        return sign | 0x7c00;
    }
    sign | ((field as u16) << 10) | (rounded as u16 - (1 << 10))
}

/// An `f64` rounded once to the nearest `f16`, as bits.
pub fn f16_from_f64(value: f64) -> u16 {
    let bits = value.to_bits();
    let negative = bits >> 63 == 1;
    let field = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1u64 << 52) - 1);
    if field == 0x7ff {
        let sign = if negative { 0x8000 } else { 0 };
        return if fraction == 0 {
            sign | 0x7c00
        } else {
            // A quiet NaN keeping the top of the payload.
            sign | 0x7e00 | (fraction >> 42) as u16
        };
    }
    let (mantissa, exponent) = if field == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1u64 << 52), field - 1075)
    };
    round_to_f16(negative, u128::from(mantissa), exponent)
}

/// An `f16` (as bits) widened exactly to `f64`.
pub fn f16_to_f64(bits: u16) -> f64 {
    f16::from_bits(bits).to_f64()
}

/// An integer rounded once to the nearest `f16`.
pub fn f16_from_i128(value: i128) -> u16 {
    round_to_f16(value < 0, value.unsigned_abs(), 0)
}

/// A float of type `ty` widened exactly to `f64`.
pub fn float_as_f64(bits: u64, ty: ScalarType) -> f64 {
    match ty {
        ScalarType::F16 => f16_to_f64(bits as u16),
        ScalarType::Bf16 => bf16_to_f64(bits as u16),
        ScalarType::F32 => f64::from(f32::from_bits(bits as u32)),
        _ => f64::from_bits(bits),
    }
}

/// Rounds an `f64` once to the nearest value of float type `ty`.
pub fn f64_to_float(value: f64, ty: ScalarType) -> u64 {
    match ty {
        ScalarType::F16 => u64::from(f16_from_f64(value)),
        ScalarType::Bf16 => u64::from(bf16_from_f64(value)),
        ScalarType::F32 => u64::from((value as f32).to_bits()),
        _ => value.to_bits(),
    }
}

/// Applies a one-argument float function. `f16` and `bf16` are computed in `f32` and rounded
/// once: for `sqrt`, `floor`, `ceil` and `round` that is the exact result.
fn float_unary(ty: ScalarType, x: u64, single: fn(f32) -> f32, double: fn(f64) -> f64) -> u64 {
    match ty {
        ScalarType::F16 => {
            let value = single(f16_to_f64(x as u16) as f32);
            u64::from(f16_from_f64(f64::from(value)))
        }
        ScalarType::Bf16 => u64::from(bf16_from_f32(single(bf16_to_f32(x as u16)))),
        ScalarType::F32 => u64::from(single(f32::from_bits(x as u32)).to_bits()),
        _ => double(f64::from_bits(x)).to_bits(),
    }
}

/// Applies a two-argument float function. `f16` and `bf16` are computed in `f32` and rounded:
/// for `+ - * / %` that is the correctly rounded result (`f32` has more than twice their
/// precision plus two bits, so the double rounding is harmless; `%` is exact).
fn float_binary(
    ty: ScalarType,
    x: u64,
    y: u64,
    single: fn(f32, f32) -> f32,
    double: fn(f64, f64) -> f64,
) -> u64 {
    match ty {
        ScalarType::F16 => {
            let left = f16_to_f64(x as u16) as f32;
            let right = f16_to_f64(y as u16) as f32;
            u64::from(f16_from_f64(f64::from(single(left, right))))
        }
        ScalarType::Bf16 => {
            let (left, right) = (bf16_to_f32(x as u16), bf16_to_f32(y as u16));
            u64::from(bf16_from_f32(single(left, right)))
        }
        ScalarType::F32 => {
            u64::from(single(f32::from_bits(x as u32), f32::from_bits(y as u32)).to_bits())
        }
        _ => double(f64::from_bits(x), f64::from_bits(y)).to_bits(),
    }
}

pub(crate) fn sign_bit(ty: ScalarType) -> u64 {
    1u64 << (ty.bit_width() - 1)
}

/// A unary operator on an operand of type `ty`.
pub fn unary(op: UnaryOp, ty: ScalarType, x: u64) -> u64 {
    match op {
        UnaryOp::Negate if ty.is_float() => x ^ sign_bit(ty),
        UnaryOp::Negate => truncate(0u64.wrapping_sub(x), ty),
        UnaryOp::Not => x ^ 1,
        UnaryOp::BitNot => truncate(!x, ty),
    }
}

/// Whether an integer `+ - *` on operands of type `ty` leaves the type's range: what a
/// constant expression may not do. (Shifts are defined for every amount: it is masked.)
pub fn overflows(op: BinaryOp, ty: ScalarType, x: u64, y: u64) -> bool {
    if !ty.is_integer() {
        return false;
    }
    let (left, right) = (integer_as_i128(x, ty), integer_as_i128(y, ty));
    let exact = match op {
        BinaryOp::Add => left.checked_add(right),
        BinaryOp::Subtract => left.checked_sub(right),
        BinaryOp::Multiply => left.checked_mul(right),
        _ => return false,
    };
    let (low, high) = integer_range(ty);
    exact.is_none_or(|value| value < low || value > high)
}

/// Whether negating `x` of type `ty` leaves the type's range (the most negative value).
pub fn negation_overflows(ty: ScalarType, x: u64) -> bool {
    ty.is_signed_integer() && integer_as_i128(x, ty) == integer_range(ty).0
}

/// A binary operator on two operands of type `ty` (for shifts, `amount_type` is the right
/// operand's type). Comparisons give a `bool` (0 or 1).
pub fn binary(
    op: BinaryOp,
    ty: ScalarType,
    x: u64,
    y: u64,
    amount_type: ScalarType,
) -> Result<u64, Undefined> {
    if ty.is_float() {
        return Ok(float_binary_operator(op, ty, x, y));
    }
    if overflows(op, ty, x, y) {
        return Err(Undefined::Overflow { ty, op });
    }
    let signed = ty.is_signed_integer();
    let value = match op {
        BinaryOp::Add => x.wrapping_add(y),
        BinaryOp::Subtract => x.wrapping_sub(y),
        BinaryOp::Multiply => x.wrapping_mul(y),
        BinaryOp::Divide | BinaryOp::Remainder => {
            if truncate(y, ty) == 0 {
                return Err(Undefined::DivisionByZero { ty });
            }
            if signed {
                let (left, right) = (sign_extend(x, ty), sign_extend(y, ty));
                if right == -1 && left == sign_extend(sign_bit(ty), ty) {
                    return Err(Undefined::DivisionOverflow { ty });
                }
                let result = if op == BinaryOp::Divide {
                    left / right
                } else {
                    left % right
                };
                result as u64
            } else if op == BinaryOp::Divide {
                truncate(x, ty) / truncate(y, ty)
            } else {
                truncate(x, ty) % truncate(y, ty)
            }
        }
        BinaryOp::BitAnd => x & y,
        BinaryOp::BitOr => x | y,
        BinaryOp::BitXor => x ^ y,
        BinaryOp::ShiftLeft | BinaryOp::ShiftRight => {
            // The amount's bits modulo the width (the width is a power of two).
            let amount = (truncate(y, amount_type) % u64::from(ty.bit_width())) as u32;
            if op == BinaryOp::ShiftLeft {
                x << amount
            } else if signed {
                (sign_extend(x, ty) >> amount) as u64
            } else {
                truncate(x, ty) >> amount
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
        // C's fmod: exact, with the sign of the dividend.
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

/// Converts `x` of type `from` to type `to`, as `x as to` does. Float to integer saturates
/// (NaN gives 0), like Rust's `as`; every other conversion rounds once to nearest, ties to even.
pub fn cast(x: u64, from: ScalarType, to: ScalarType) -> u64 {
    if from == to {
        return x;
    }
    match (from.is_float(), to.is_float()) {
        (true, true) => f64_to_float(float_as_f64(x, from), to),
        (true, false) if to == ScalarType::Bool => u64::from(float_as_f64(x, from) != 0.0),
        (true, false) => {
            let value = float_as_f64(x, from);
            let (low, high) = integer_range(to);
            // `as i128` saturates and takes NaN to 0.
            integer_from_i128((value as i128).clamp(low, high), to)
        }
        (false, true) => {
            let value = if from == ScalarType::Bool {
                i128::from(x != 0)
            } else {
                integer_as_i128(x, from)
            };
            match to {
                ScalarType::F64 => (value as f64).to_bits(),
                ScalarType::F32 => u64::from((value as f32).to_bits()),
                ScalarType::Bf16 => u64::from(bf16_from_i128(value)),
                _ => u64::from(f16_from_i128(value)),
            }
        }
        (false, false) if to == ScalarType::Bool => u64::from(x != 0),
        (false, false) if from == ScalarType::Bool => x,
        (false, false) => integer_from_i128(integer_as_i128(x, from), to),
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
pub fn minimum(ty: ScalarType, x: u64, y: u64) -> u64 {
    if ty.is_float() {
        float_binary(ty, x, y, f32::min, f64::min)
    } else {
        integer_min(ty, x, y)
    }
}

/// `max` of two values: for floats a NaN operand yields the other operand (IEEE `maxNum`).
pub fn maximum(ty: ScalarType, x: u64, y: u64) -> u64 {
    if ty.is_float() {
        float_binary(ty, x, y, f32::max, f64::max)
    } else {
        integer_max(ty, x, y)
    }
}

/// `x + y` in type `ty` (integers wrap).
pub fn add(ty: ScalarType, x: u64, y: u64) -> u64 {
    if ty.is_float() {
        float_binary(ty, x, y, |a, b| a + b, |a, b| a + b)
    } else {
        truncate(x.wrapping_add(y), ty)
    }
}

/// `fma` on `f16`, exact: every finite `f16` is an integer times 2^-24, so `x * y + z` is an
/// integer times 2^-48 of at most 80 bits, rounded once.
fn f16_fma(x: u16, y: u16, z: u16) -> u16 {
    let (a, b, c) = (f16_to_f64(x), f16_to_f64(y), f16_to_f64(z));
    if !(a.is_finite() && b.is_finite() && c.is_finite()) {
        // Infinities and NaNs behave as in f64 (a product of f16 values never overflows f64).
        return f16_from_f64(a.mul_add(b, c));
    }
    let scaled = |v: f64| (v * 16_777_216.0) as i128; // exact: v * 2^24 is an integer
    let product = scaled(a) * scaled(b);
    let sum = product + (scaled(c) << 24);
    if sum == 0 {
        // An exact zero sum is +0, unless both addends are -0 or negative zeros.
        let product_negative = (a * b).is_sign_negative();
        return if product_negative && c.is_sign_negative() && c == 0.0 && product == 0 {
            0x8000
        } else {
            0
        };
    }
    round_to_f16(sum < 0, sum.unsigned_abs(), -48)
}

/// The bits of the `f32` with bits `x` rounded to tf32 (10 mantissa bits), to nearest with
/// ties away from zero, as NVIDIA's `cvt.rna.tf32.f32`; infinities and NaNs unchanged.
pub fn round_tf32(x: u32) -> u32 {
    if x & 0x7f80_0000 == 0x7f80_0000 {
        return x;
    }
    // Adding half a tf32 unit to the magnitude carries into the kept bits exactly when the
    // dropped 13 bits are at least half; a carry into the exponent rounds up to the next
    // binade or to infinity, as it should.
    (x.wrapping_add(0x1000)) & 0xffff_e000
}

/// A math function of the language on arguments of type `ty` (the result's type, or `bool`
/// for the tests such as `isnan`).
pub fn math(function: MathFunction, ty: ScalarType, arguments: &[u64]) -> u64 {
    let x = arguments.first().copied().unwrap_or(0);
    let y = || arguments.get(1).copied().unwrap_or(0);
    let z = || arguments.get(2).copied().unwrap_or(0);
    // The reference meaning of a `native_` function is the accurate one; devices may differ
    // by the documented error.
    if let Some(accurate) = function.accurate() {
        return math(accurate, ty, arguments);
    }
    match function {
        MathFunction::NativeRecip => float_unary(ty, x, |v| 1.0 / v, |v| 1.0 / v),
        MathFunction::NativeDivide => float_binary(ty, x, y(), |a, b| a / b, |a, b| a / b),
        MathFunction::RoundTf32 => u64::from(round_tf32(x as u32)),
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
        MathFunction::Fma => match ty {
            ScalarType::F16 => u64::from(f16_fma(x as u16, y() as u16, z() as u16)),
            // Computed in `f32` (one rounding there) and rounded to `bf16`, as hardware does.
            ScalarType::Bf16 => {
                let [a, b, c] = [x, y(), z()].map(|v| bf16_to_f32(v as u16));
                u64::from(bf16_from_f32(a.mul_add(b, c)))
            }
            ScalarType::F32 => {
                let value = f32::from_bits(x as u32)
                    .mul_add(f32::from_bits(y() as u32), f32::from_bits(z() as u32));
                u64::from(value.to_bits())
            }
            _ => f64::from_bits(x)
                .mul_add(f64::from_bits(y()), f64::from_bits(z()))
                .to_bits(),
        },
        MathFunction::Abs if ty.is_float() => x & !sign_bit(ty),
        // `abs` of the most negative value is itself (it wraps).
        MathFunction::Abs if ty.is_signed_integer() => {
            truncate(sign_extend(x, ty).wrapping_abs() as u64, ty)
        }
        MathFunction::Abs => x,
        MathFunction::Min => minimum(ty, x, y()),
        MathFunction::Max => maximum(ty, x, y()),
        // `min(max(x, low), high)`.
        MathFunction::Clamp => minimum(ty, maximum(ty, x, y()), z()),
        MathFunction::Atan2 => float_binary(ty, x, y(), f32::atan2, f64::atan2),
        MathFunction::Asin => float_unary(ty, x, f32::asin, f64::asin),
        MathFunction::Acos => float_unary(ty, x, f32::acos, f64::acos),
        MathFunction::Atan => float_unary(ty, x, f32::atan, f64::atan),
        MathFunction::Sinh => float_unary(ty, x, f32::sinh, f64::sinh),
        MathFunction::Cosh => float_unary(ty, x, f32::cosh, f64::cosh),
        MathFunction::Asinh => float_unary(ty, x, f32::asinh, f64::asinh),
        MathFunction::Acosh => float_unary(ty, x, f32::acosh, f64::acosh),
        MathFunction::Atanh => float_unary(ty, x, f32::atanh, f64::atanh),
        MathFunction::Log1p => float_unary(ty, x, f32::ln_1p, f64::ln_1p),
        MathFunction::Expm1 => float_unary(ty, x, f32::exp_m1, f64::exp_m1),
        MathFunction::Log10 => float_unary(ty, x, f32::log10, f64::log10),
        // 10^x in f64 for f32 (then rounded): within an ULP of the correctly rounded value.
        MathFunction::Exp10 => float_unary(
            ty,
            x,
            |v| 10f64.powf(f64::from(v)) as f32,
            |v| 10f64.powf(v),
        ),
        MathFunction::Cbrt => float_unary(ty, x, f32::cbrt, f64::cbrt),
        MathFunction::Hypot => float_binary(ty, x, y(), f32::hypot, f64::hypot),
        // Exact, like `%` on floats.
        MathFunction::Fmod => float_binary(ty, x, y(), |a, b| a % b, |a, b| a % b),
        MathFunction::Copysign => {
            let sign = sign_bit(ty);
            (x & !sign) | (y() & sign)
        }
        MathFunction::Erf => float_unary(ty, x, c_math::erf_f32, c_math::erf_f64),
        MathFunction::Erfc => float_unary(ty, x, c_math::erfc_f32, c_math::erfc_f64),
        MathFunction::Lgamma => float_unary(ty, x, c_math::lgamma_f32, c_math::lgamma_f64),
        MathFunction::WrappingAdd => truncate(x.wrapping_add(y()), ty),
        MathFunction::WrappingSub => truncate(x.wrapping_sub(y()), ty),
        MathFunction::WrappingMul => truncate(x.wrapping_mul(y()), ty),
        MathFunction::Popcount => u64::from(truncate(x, ty).count_ones()),
        MathFunction::Clz => {
            let bits = ty.bit_width();
            u64::from(truncate(x, ty).leading_zeros() - (64 - bits))
        }
        MathFunction::Ctz => {
            let bits = ty.bit_width();
            u64::from(truncate(x, ty).trailing_zeros().min(bits))
        }
        MathFunction::Rotate => {
            let bits = ty.bit_width();
            let (value, amount) = (truncate(x, ty), (y() % u64::from(bits)) as u32);
            truncate(
                value << amount | value.checked_shr(bits - amount).unwrap_or(0),
                ty,
            )
        }
        MathFunction::IsNan => u64::from(float_as_f64(x, ty).is_nan()),
        MathFunction::IsInf => u64::from(float_as_f64(x, ty).is_infinite()),
        MathFunction::IsFinite => u64::from(float_as_f64(x, ty).is_finite()),
        MathFunction::NativeExp
        | MathFunction::NativeExp2
        | MathFunction::NativeExp10
        | MathFunction::NativeLog
        | MathFunction::NativeLog2
        | MathFunction::NativeLog10
        | MathFunction::NativeSin
        | MathFunction::NativeCos
        | MathFunction::NativeTan
        | MathFunction::NativePowr
        | MathFunction::NativeSqrt
        | MathFunction::NativeRsqrt => unreachable!("evaluated as the accurate function above"),
    }
}

/// The C library's `erf`, `erfc` and `lgamma`, which Rust's standard library lacks.
mod c_math {
    use std::ffi::c_int;

    extern "C" {
        fn erff(x: f32) -> f32;
        fn erf(x: f64) -> f64;
        fn erfcf(x: f32) -> f32;
        fn erfc(x: f64) -> f64;
        // The reentrant forms: plain `lgamma` writes the global `signgam`.
        fn lgammaf_r(x: f32, sign: *mut c_int) -> f32;
        fn lgamma_r(x: f64, sign: *mut c_int) -> f64;
    }

    pub fn erf_f32(x: f32) -> f32 {
        // SAFETY: a pure C math function.
        unsafe { erff(x) }
    }
    pub fn erf_f64(x: f64) -> f64 {
        // SAFETY: a pure C math function.
        unsafe { erf(x) }
    }
    pub fn erfc_f32(x: f32) -> f32 {
        // SAFETY: a pure C math function.
        unsafe { erfcf(x) }
    }
    pub fn erfc_f64(x: f64) -> f64 {
        // SAFETY: a pure C math function.
        unsafe { erfc(x) }
    }
    pub fn lgamma_f32(x: f32) -> f32 {
        let mut sign: c_int = 0;
        // SAFETY: `sign` is a valid out-pointer for the call.
        unsafe { lgammaf_r(x, &mut sign) }
    }
    pub fn lgamma_f64(x: f64) -> f64 {
        let mut sign: c_int = 0;
        // SAFETY: `sign` is a valid out-pointer for the call.
        unsafe { lgamma_r(x, &mut sign) }
    }
}

/// The new content of a place after an atomic `op` with `value` (and `comparand` for
/// compare-exchange) on its `old` content.
pub fn atomic_update(op: AtomicOp, ty: ScalarType, old: u64, value: u64, comparand: u64) -> u64 {
    match op {
        AtomicOp::Add => add(ty, old, value),
        AtomicOp::Subtract => truncate(old.wrapping_sub(value), ty),
        // Floats: IEEE minNum/maxNum (a NaN operand yields the other), as `min`/`max`.
        AtomicOp::Min => minimum(ty, old, value),
        AtomicOp::Max => maximum(ty, old, value),
        AtomicOp::And => old & value,
        AtomicOp::Or => old | value,
        AtomicOp::Xor => old ^ value,
        AtomicOp::Exchange => value,
        AtomicOp::CompareExchange if old == comparand => value,
        AtomicOp::CompareExchange => old,
    }
}

/// The bits of a literal in type `ty`. Float literals hold values of their type already.
pub fn literal_bits(literal: Literal, ty: ScalarType) -> u64 {
    match literal {
        Literal::Bool(b) => u64::from(b),
        Literal::Integer(bits) if ty.is_float() => cast(bits, ScalarType::I64, ty),
        Literal::Integer(bits) => truncate(bits, ty),
        Literal::Float(value) if ty.is_float() => f64_to_float(value, ty),
        Literal::Float(value) => cast(value.to_bits(), ScalarType::F64, ty),
    }
}

/// The literal holding `bits` of type `ty`.
pub fn bits_literal(bits: u64, ty: ScalarType) -> Literal {
    if ty == ScalarType::Bool {
        Literal::Bool(bits != 0)
    } else if ty.is_float() {
        Literal::Float(float_as_f64(bits, ty))
    } else {
        Literal::Integer(truncate(bits, ty))
    }
}

/// Parses the text of a decimal float literal (digits, `.`, `e`, `_`; no suffix) and rounds it
/// once to float type `ty`. `None` when the text is not a number.
pub fn parse_float(text: &str, ty: ScalarType) -> Option<f64> {
    let clean: String = text.chars().filter(|c| *c != '_').collect();
    match ty {
        ScalarType::F32 => clean.parse::<f32>().ok().map(f64::from),
        ScalarType::F16 => parse_narrow_float(&clean, &F16_FORMAT),
        ScalarType::Bf16 => parse_narrow_float(&clean, &BF16_FORMAT),
        _ => clean.parse::<f64>().ok(),
    }
}

/// A 16-bit float format, for rounding decimal literals to it.
struct NarrowFormat {
    from_f64: fn(f64) -> u16,
    to_f64: fn(u16) -> f64,
    /// The bits of infinity.
    infinity: u16,
    /// The next step up past the largest finite value (2^16 for `f16`, 2^128 for `bf16`).
    overflow: f64,
}

const F16_FORMAT: NarrowFormat = NarrowFormat {
    from_f64: f16_from_f64,
    to_f64: f16_to_f64,
    infinity: 0x7c00,
    overflow: 65536.0,
};

const BF16_FORMAT: NarrowFormat = NarrowFormat {
    from_f64: bf16_from_f64,
    to_f64: bf16_to_f64,
    infinity: 0x7f80,
    overflow: f64::from_bits((1023 + 128) << 52), // 2^128
};

/// A decimal literal (no `_`) rounded once to a 16-bit float format.
fn parse_narrow_float(clean: &str, format: &NarrowFormat) -> Option<f64> {
    let nearest = clean.parse::<f64>().ok()?;
    // Rounding to f64 first is harmless unless the f64 lands exactly halfway between two
    // values of the format; then the exact decimal decides.
    let down = toward_zero(nearest, format);
    let up = if down & 0x7fff >= format.infinity {
        down
    } else {
        down + 1
    };
    // Past the largest finite value, the next step up is the format's overflow.
    let up_value = match (format.to_f64)(up) {
        infinite if infinite.is_infinite() => format.overflow.copysign(nearest),
        finite => finite,
    };
    let halfway = ((format.to_f64)(down) + up_value) / 2.0;
    let rounded = (format.from_f64)(nearest);
    if nearest != halfway {
        return Some((format.to_f64)(rounded));
    }
    let chosen = match compare_decimal(clean, halfway) {
        std::cmp::Ordering::Less => down,
        std::cmp::Ordering::Greater => up,
        std::cmp::Ordering::Equal => rounded,
    };
    Some((format.to_f64)(chosen))
}

/// The value of the format nearest `value` toward zero (finite input of its range or beyond).
fn toward_zero(value: f64, format: &NarrowFormat) -> u16 {
    let rounded = (format.from_f64)(value);
    if (format.to_f64)(rounded).abs() > value.abs() {
        rounded - 1
    } else {
        rounded
    }
}

/// Compares the absolute value of a decimal literal with the absolute value of `value`
/// (a binary number, so its decimal expansion is finite), exactly.
fn compare_decimal(text: &str, value: f64) -> std::cmp::Ordering {
    let (digits, exponent) = decimal_digits(text.trim_start_matches(['-', '+']));
    let (value_digits, value_exponent) = decimal_digits(&format!("{:.60e}", value.abs()));
    // Both are 0.DIGITS * 10^exponent with no leading or trailing zeros.
    exponent
        .cmp(&value_exponent)
        .then_with(|| digits.cmp(&value_digits))
}

/// The significant digits of a decimal number (no leading or trailing zeros) and the exponent
/// `e` such that the number is `0.DIGITS * 10^e`.
fn decimal_digits(text: &str) -> (String, i64) {
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        Some(at) => (&text[..at], text[at + 1..].parse::<i64>().unwrap_or(0)),
        None => (text, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all = format!("{whole}{fraction}");
    let leading = all.len() - all.trim_start_matches('0').len();
    let digits = all.trim_matches('0').to_string();
    let point = whole.len() as i64 - leading as i64 + exponent;
    (digits, point)
}

/// A typed scalar value: a kernel argument, a folded constant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ScalarValue {
    Bool(bool),
    I8(i8),
    U8(u8),
    I16(i16),
    U16(u16),
    I32(i32),
    U32(u32),
    I64(i64),
    U64(u64),
    F16(f16),
    Bf16(bf16),
    F32(f32),
    F64(f64),
}

impl ScalarValue {
    pub fn ty(self) -> ScalarType {
        match self {
            ScalarValue::Bool(_) => ScalarType::Bool,
            ScalarValue::I8(_) => ScalarType::I8,
            ScalarValue::U8(_) => ScalarType::U8,
            ScalarValue::I16(_) => ScalarType::I16,
            ScalarValue::U16(_) => ScalarType::U16,
            ScalarValue::I32(_) => ScalarType::I32,
            ScalarValue::U32(_) => ScalarType::U32,
            ScalarValue::I64(_) => ScalarType::I64,
            ScalarValue::U64(_) => ScalarType::U64,
            ScalarValue::F16(_) => ScalarType::F16,
            ScalarValue::Bf16(_) => ScalarType::Bf16,
            ScalarValue::F32(_) => ScalarType::F32,
            ScalarValue::F64(_) => ScalarType::F64,
        }
    }

    /// The value as bits (see the module's representation).
    pub fn bits(self) -> u64 {
        match self {
            ScalarValue::Bool(v) => u64::from(v),
            ScalarValue::I8(v) => u64::from(v as u8),
            ScalarValue::U8(v) => u64::from(v),
            ScalarValue::I16(v) => u64::from(v as u16),
            ScalarValue::U16(v) => u64::from(v),
            ScalarValue::I32(v) => u64::from(v as u32),
            ScalarValue::U32(v) => u64::from(v),
            ScalarValue::I64(v) => v as u64,
            ScalarValue::U64(v) => v,
            ScalarValue::F16(v) => u64::from(v.to_bits()),
            ScalarValue::Bf16(v) => u64::from(v.to_bits()),
            ScalarValue::F32(v) => u64::from(v.to_bits()),
            ScalarValue::F64(v) => v.to_bits(),
        }
    }

    /// The value of type `ty` held in `bits`.
    pub fn from_bits(bits: u64, ty: ScalarType) -> ScalarValue {
        match ty {
            ScalarType::Bool => ScalarValue::Bool(bits & 1 == 1),
            ScalarType::I8 => ScalarValue::I8(bits as i8),
            ScalarType::U8 => ScalarValue::U8(bits as u8),
            ScalarType::I16 => ScalarValue::I16(bits as i16),
            ScalarType::U16 => ScalarValue::U16(bits as u16),
            ScalarType::I32 => ScalarValue::I32(bits as i32),
            ScalarType::U32 => ScalarValue::U32(bits as u32),
            ScalarType::I64 => ScalarValue::I64(bits as i64),
            ScalarType::U64 => ScalarValue::U64(bits),
            ScalarType::F16 => ScalarValue::F16(f16::from_bits(bits as u16)),
            ScalarType::Bf16 => ScalarValue::Bf16(bf16::from_bits(bits as u16)),
            ScalarType::F32 => ScalarValue::F32(f32::from_bits(bits as u32)),
            ScalarType::F64 => ScalarValue::F64(f64::from_bits(bits)),
        }
    }

    /// A literal of type `ty` as a value.
    pub fn from_literal(literal: Literal, ty: ScalarType) -> ScalarValue {
        ScalarValue::from_bits(literal_bits(literal, ty), ty)
    }

    pub fn to_literal(self) -> Literal {
        bits_literal(self.bits(), self.ty())
    }

    /// An integer value as a number; `None` for `bool` and floats.
    pub fn as_i128(self) -> Option<i128> {
        self.ty()
            .is_integer()
            .then(|| integer_as_i128(self.bits(), self.ty()))
    }
}

macro_rules! scalar_from {
    ($($rust:ty => $variant:ident),* $(,)?) => {$(
        impl From<$rust> for ScalarValue {
            fn from(value: $rust) -> ScalarValue {
                ScalarValue::$variant(value)
            }
        }
    )*};
}

scalar_from! {
    bool => Bool, i8 => I8, u8 => U8, i16 => I16, u16 => U16, i32 => I32, u32 => U32,
    i64 => I64, u64 => U64, f16 => F16, bf16 => Bf16, f32 => F32, f64 => F64,
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Checks that `bits` is the 16-bit float nearest `value` (ties to even): no neighbour is
    /// nearer. `infinity` is the format's infinity, which rounds like `rounds_like` (the power
    /// of two past its largest value); `to_f64` widens the others exactly.
    pub(crate) fn assert_nearest_16(
        value: f64,
        bits: u16,
        infinity: u16,
        rounds_like: f64,
        to_f64: fn(u16) -> f64,
    ) {
        let magnitude = bits & 0x7fff;
        let distance = |b: u16| match b {
            b if b == infinity => (rounds_like - value.abs()).abs(),
            _ => (to_f64(b) - value.abs()).abs(),
        };
        assert_eq!(bits >> 15 == 1, value.is_sign_negative(), "{value:e}");
        for neighbour in [magnitude.wrapping_sub(1), magnitude + 1] {
            if neighbour > infinity {
                continue;
            }
            let (here, there) = (distance(magnitude), distance(neighbour));
            assert!(
                here < there || (here == there && magnitude.is_multiple_of(2)),
                "{value:e} gave {bits:#x}"
            );
        }
    }

    /// Checks that `bits` is the f16 nearest `value`.
    fn assert_nearest(value: f64, bits: u16) {
        assert_nearest_16(value, bits, 0x7c00, 65536.0, f16_to_f64);
    }

    #[test]
    fn f64_to_f16_rounds_once() {
        // The case: f64 -> f32 -> f16 gave 1264.
        let value = 1.310546875f64.mul_add(1.14453125, 1262.0);
        assert_eq!(f16_to_f64(f16_from_f64(value)), 1263.0);
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..2000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let value = f64::from_bits(state) % 70000.0;
            let value = if value.is_nan() { 1.0 } else { value };
            assert_nearest(value, f16_from_f64(value));
        }
        for bits in 0..0x7bffu16 {
            // Every f16, every midpoint and its neighbours.
            let here = f16_to_f64(bits);
            let next = f16_to_f64(bits + 1);
            let middle = (here + next) / 2.0;
            for value in [here, middle, f64_next(middle), f64_previous(middle)] {
                assert_nearest(value, f16_from_f64(value));
            }
        }
    }

    fn f64_next(value: f64) -> f64 {
        f64::from_bits(value.to_bits() + 1)
    }

    fn f64_previous(value: f64) -> f64 {
        f64::from_bits(value.to_bits() - 1)
    }

    #[test]
    fn integers_convert_to_floats_with_one_rounding() {
        // 2^60 + 2^36 + 1 is just above halfway between two f32 values; via f64 it lands on
        // the halfway point and rounds to even, down.
        let x = 1152921573326323713u64;
        let converted = f32::from_bits(cast(x, ScalarType::U64, ScalarType::F32) as u32);
        assert_eq!(converted, x as f32);
        assert_ne!(converted, (x as f64) as f32);
        assert_eq!(cast(2049, ScalarType::U32, ScalarType::F16), 0x6800); // 2048
        assert_eq!(cast(2051, ScalarType::U32, ScalarType::F16), 0x6802); // 2052
        assert_eq!(cast(70000, ScalarType::I32, ScalarType::F16), 0x7c00);
        assert_eq!(
            cast((-65519i64) as u64, ScalarType::I64, ScalarType::F16),
            0xfbff
        );
    }

    #[test]
    fn float_to_integer_saturates_and_nan_is_zero() {
        let f = |v: f32| u64::from(v.to_bits());
        assert_eq!(
            cast(f(3.0e9), ScalarType::F32, ScalarType::I32),
            0x7fff_ffff
        );
        assert_eq!(
            cast(f(-3.0e9), ScalarType::F32, ScalarType::I32),
            0x8000_0000
        );
        assert_eq!(cast(f(f32::NAN), ScalarType::F32, ScalarType::I32), 0);
        assert_eq!(cast(f(-1.5), ScalarType::F32, ScalarType::U8), 0);
        assert_eq!(cast(f(300.7), ScalarType::F32, ScalarType::U8), 255);
        assert_eq!(cast(f(-2.7), ScalarType::F32, ScalarType::I8), 0xfe);
    }

    #[test]
    fn shifts_take_the_amount_modulo_the_width() {
        let shl = |x, amount, ty| binary(BinaryOp::ShiftLeft, ty, x, amount, ScalarType::I32);
        assert_eq!(shl(1, 33, ScalarType::U32), Ok(2));
        assert_eq!(shl(1, 8, ScalarType::U8), Ok(1));
        assert_eq!(shl(1, u64::from(u32::MAX), ScalarType::U32), Ok(1 << 31)); // -1 & 31
        let shr = binary(
            BinaryOp::ShiftRight,
            ScalarType::I8,
            0x80,
            9,
            ScalarType::U32,
        );
        assert_eq!(shr, Ok(0xc0));
    }

    #[test]
    fn division_by_zero_and_overflow_are_undefined() {
        let div = |x, y| binary(BinaryOp::Divide, ScalarType::I32, x, y, ScalarType::I32);
        assert_eq!(
            div(5, 0),
            Err(Undefined::DivisionByZero {
                ty: ScalarType::I32
            })
        );
        assert_eq!(
            div(0x8000_0000, 0xffff_ffff),
            Err(Undefined::DivisionOverflow {
                ty: ScalarType::I32
            })
        );
        assert_eq!(div(0xffff_fff9, 2), Ok(0xffff_fffd)); // -7 / 2 == -3
    }

    #[test]
    fn f16_arithmetic_rounds_once_to_f16() {
        let h = |v: f64| u64::from(f16_from_f64(v));
        let add = |x, y| binary(BinaryOp::Add, ScalarType::F16, x, y, ScalarType::F16).unwrap();
        let sub =
            |x, y| binary(BinaryOp::Subtract, ScalarType::F16, x, y, ScalarType::F16).unwrap();
        // 2049 + 1 - 1: 2049 is 2048 in f16, 2048 + 1 rounds to 2048, minus 1 is 2047.
        let value = sub(add(h(2049.0), h(1.0)), h(1.0));
        assert_eq!(float_as_f64(value, ScalarType::F16), 2047.0);
        let fma = math(
            MathFunction::Fma,
            ScalarType::F16,
            &[h(1.310546875), h(1.14453125), h(1262.0)],
        );
        assert_eq!(float_as_f64(fma, ScalarType::F16), 1263.0);
        let rem = |x: f64, y: f64, ty| {
            let (a, b) = (f64_to_float(x, ty), f64_to_float(y, ty));
            let bits = binary(BinaryOp::Remainder, ty, a, b, ty).unwrap();
            float_as_f64(bits, ty)
        };
        assert_eq!(rem(1e10, 3.0, ScalarType::F32), 1.0);
        let negative_zero = rem(-9.0, 1.5, ScalarType::F32);
        assert!(negative_zero == 0.0 && negative_zero.is_sign_negative());
    }

    #[test]
    fn float_literals_round_once() {
        // Just above the midpoint 1 + 2^-11: the f64 nearest the text is the midpoint itself.
        assert_eq!(
            parse_float("1.00048828125001", ScalarType::F16),
            Some(1.0009765625)
        );
        assert_eq!(parse_float("1.00048828125", ScalarType::F16), Some(1.0));
        assert_eq!(
            parse_float("1.000488281249999999999", ScalarType::F16),
            Some(1.0)
        );
        assert_eq!(parse_float("2049.0", ScalarType::F16), Some(2048.0));
        assert_eq!(parse_float("1e10", ScalarType::F16), Some(f64::INFINITY));
        // f32 literals parse straight to f32.
        let text = "1.00000005960464477539062500001";
        assert_eq!(
            parse_float(text, ScalarType::F32),
            Some(f64::from(text.parse::<f32>().unwrap()))
        );
        assert_eq!(parse_float("0.1", ScalarType::F64), Some(0.1));
    }

    #[test]
    fn values_round_trip_through_bits_and_literals() {
        for value in [
            ScalarValue::I8(-3),
            ScalarValue::U64(u64::MAX),
            ScalarValue::F16(f16::from_bits(0x3c01)),
            ScalarValue::F32(-0.0),
            ScalarValue::Bool(true),
        ] {
            assert_eq!(ScalarValue::from_bits(value.bits(), value.ty()), value);
            assert_eq!(
                ScalarValue::from_literal(value.to_literal(), value.ty()),
                value
            );
        }
        assert_eq!(ScalarValue::I16(-2).as_i128(), Some(-2));
    }

    /// `popcount`, `clz`, `ctz` and `rotate` on the bits of their type (a negative value's
    /// sign extension is not counted), at the edges.
    #[test]
    fn bit_counts_and_rotations() {
        use MathFunction::{Clz, Ctz, Popcount, Rotate};
        use ScalarType::{I16, I64, I8, U32};
        let minus_one_i8 = truncate(-1i64 as u64, I8);
        assert_eq!(math(Popcount, I8, &[minus_one_i8]), 8);
        assert_eq!(math(Clz, I8, &[minus_one_i8]), 0);
        assert_eq!(math(Clz, I16, &[0]), 16);
        assert_eq!(math(Ctz, I16, &[0]), 16);
        assert_eq!(math(Ctz, I64, &[1 << 63]), 63);
        assert_eq!(math(Clz, U32, &[1]), 31);
        assert_eq!(math(Rotate, U32, &[0x8000_0001, 1]), 3);
        assert_eq!(math(Rotate, U32, &[0x8000_0001, 33]), 3);
        assert_eq!(math(Rotate, U32, &[5, 0]), 5);
        // -1 as an `i8` amount is 255: 7 modulo 8, one to the right.
        assert_eq!(math(Rotate, I8, &[1, minus_one_i8]), 0x80);
    }
}
