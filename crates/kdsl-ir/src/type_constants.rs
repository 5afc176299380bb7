//! The named constants of the scalar types (`u32::MAX`, `f32::INFINITY`), with Rust's values.

use crate::scalar::{integer_from_i128, integer_range, sign_bit};
use crate::types::ScalarType;

/// The constants every scalar type has (`u32::MAX`, `f32::INFINITY`), as written after
/// `TYPE::`.
pub fn associated_constant_names(ty: ScalarType) -> &'static [&'static str] {
    if ty.is_float() {
        &[
            "INFINITY",
            "NEG_INFINITY",
            "NAN",
            "MAX",
            "MIN",
            "MIN_POSITIVE",
            "EPSILON",
        ]
    } else if ty.is_integer() {
        &["MIN", "MAX"]
    } else {
        &[]
    }
}

/// The bits of the constant `ty::name`, as Rust defines it for the same type (`MIN` of a
/// float is the most negative finite value, `EPSILON` the distance from 1 to the next value).
pub fn associated_constant(ty: ScalarType, name: &str) -> Option<u64> {
    if ty.is_integer() {
        let (low, high) = integer_range(ty);
        return match name {
            "MIN" => Some(integer_from_i128(low, ty)),
            "MAX" => Some(integer_from_i128(high, ty)),
            _ => None,
        };
    }
    // (infinity, quiet NaN, largest finite, smallest positive normal, epsilon) bits.
    let (infinity, nan, max, min_positive, epsilon) = match ty {
        ScalarType::F16 => (0x7c00, 0x7e00, 0x7bff, 0x0400, 0x1400),
        ScalarType::Bf16 => (0x7f80, 0x7fc0, 0x7f7f, 0x0080, 0x3c00),
        ScalarType::F32 => (
            u64::from(f32::INFINITY.to_bits()),
            u64::from(f32::NAN.to_bits()),
            u64::from(f32::MAX.to_bits()),
            u64::from(f32::MIN_POSITIVE.to_bits()),
            u64::from(f32::EPSILON.to_bits()),
        ),
        ScalarType::F64 => (
            f64::INFINITY.to_bits(),
            f64::NAN.to_bits(),
            f64::MAX.to_bits(),
            f64::MIN_POSITIVE.to_bits(),
            f64::EPSILON.to_bits(),
        ),
        _ => return None,
    };
    let sign = sign_bit(ty);
    match name {
        "INFINITY" => Some(infinity),
        "NEG_INFINITY" => Some(infinity | sign),
        "NAN" => Some(nan),
        "MAX" => Some(max),
        "MIN" => Some(max | sign),
        "MIN_POSITIVE" => Some(min_positive),
        "EPSILON" => Some(epsilon),
        _ => None,
    }
}
