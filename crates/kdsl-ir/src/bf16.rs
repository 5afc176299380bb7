//! bfloat16 (`bf16`): the upper 16 bits of an `f32` (sign, 8 exponent bits, 7 mantissa bits).
//!
//! Every `bf16` operation is computed in `f32` and its result rounded to `bf16`, to nearest,
//! ties to even, as bf16 hardware does; NaN stays NaN (quiet). Conversions to `bf16` from
//! wider floats and integers round once, as every conversion of the language does: the value
//! is first rounded to odd at `f32`'s 24 bits (exact where it fits, else truncated with a
//! sticky last bit), which keeps enough bits for the rounding to `bf16`'s 8 to be the correct
//! one. The code generator's lowering (`kdsl-codegen`, `lower/bf16.rs`) follows these
//! functions step by step.

/// The `f32` a `bf16` widens to, exactly.
pub fn bf16_to_f32(bits: u16) -> f32 {
    f32::from_bits(u32::from(bits) << 16)
}

/// A `bf16` widened exactly to `f64`.
pub fn bf16_to_f64(bits: u16) -> f64 {
    f64::from(bf16_to_f32(bits))
}

/// An `f32` rounded to the nearest `bf16`, ties to even; a NaN keeps its sign and the top of
/// its payload and becomes quiet.
pub fn bf16_from_f32(value: f32) -> u16 {
    let bits = value.to_bits();
    if value.is_nan() {
        return ((bits >> 16) | 0x40) as u16;
    }
    let lsb = (bits >> 16) & 1;
    (bits.wrapping_add(0x7fff + lsb) >> 16) as u16
}

/// An `f64` rounded once to the nearest `bf16`.
pub fn bf16_from_f64(value: f64) -> u16 {
    bf16_from_f32(f32_rounded_to_odd(value))
}

/// `value` rounded to `f32` toward zero, with the last bit set when that dropped anything
/// (a NaN is only narrowed): a rounding to `bf16` of the result is a correct rounding of
/// `value`, since `f32` keeps more than two bits beyond `bf16`'s.
pub fn f32_rounded_to_odd(value: f64) -> f32 {
    let nearest = value as f32;
    if value.is_nan() || f64::from(nearest) == value {
        return nearest;
    }
    let bits = nearest.to_bits();
    let toward_zero = if f64::from(nearest).abs() > value.abs() {
        bits - 1
    } else {
        bits
    };
    f32::from_bits(toward_zero | 1)
}

/// An integer rounded once to the nearest `bf16`.
pub fn bf16_from_i128(value: i128) -> u16 {
    let magnitude = value.unsigned_abs();
    // Bits beyond 24 are dropped into a sticky last bit: rounding to odd at 24 bits.
    let excess = (128 - magnitude.leading_zeros()).saturating_sub(24);
    let kept = (magnitude >> excess) as u32;
    let sticky = u32::from(magnitude & ((1u128 << excess) - 1) != 0);
    // Exact: 24 bits times a power of two at most 2^104.
    let rounded = ((kept | sticky) as f32) * f32::from_bits((127 + excess) << 23);
    bf16_from_f32(if value < 0 { -rounded } else { rounded })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks that `bits` is the bf16 nearest `value`; infinity rounds like 2^128.
    fn assert_nearest(value: f64, bits: u16) {
        crate::scalar::tests::assert_nearest_16(value, bits, 0x7f80, 2f64.powi(128), bf16_to_f64);
    }

    #[test]
    fn rounds_f32_to_nearest_even() {
        assert_eq!(bf16_from_f32(1.0), 0x3f80);
        // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: ties to the even 1.
        assert_eq!(bf16_from_f32(1.0 + 2f32.powi(-8)), 0x3f80);
        // 1 + 3 * 2^-8 lies halfway between 1 + 2^-7 and 1 + 2^-6: ties to the even one.
        assert_eq!(bf16_from_f32(1.0 + 3.0 * 2f32.powi(-8)), 0x3f82);
        // Just above the tie rounds up.
        assert_eq!(bf16_from_f32(f32::from_bits(0x3f80_8001)), 0x3f81);
        assert_eq!(bf16_from_f32(-2.5), 0xc020);
        assert_eq!(bf16_from_f32(-0.0), 0x8000);
    }

    #[test]
    fn overflows_to_infinity_and_keeps_nan() {
        // The largest bf16 is 0x7f7f; f32::MAX lies beyond its halfway point to 2^128.
        assert_eq!(bf16_from_f32(f32::MAX), 0x7f80);
        assert_eq!(bf16_from_f32(f32::from_bits(0x7f7f_7fff)), 0x7f7f);
        assert_eq!(
            bf16_from_f32(f32::from_bits(0x7f7f_8000)),
            0x7f80,
            "tie to even"
        );
        assert_eq!(bf16_from_f32(f32::NEG_INFINITY), 0xff80);
        assert_eq!(bf16_from_f64(1e300), 0x7f80);
        // A NaN whose payload lies only in the low bits stays a NaN, quiet, signed.
        assert_eq!(bf16_from_f32(f32::from_bits(0x7f80_0001)), 0x7fc0);
        assert_eq!(bf16_from_f32(f32::from_bits(0xff80_0001)), 0xffc0);
        assert_eq!(bf16_from_f32(f32::NAN), 0x7fc0);
        assert!(bf16_to_f32(bf16_from_f64(f64::NAN)).is_nan());
    }

    /// 2^exponent as an `f32` (exact for every power of two f32 holds).
    fn pow2(exponent: i32) -> f32 {
        2f64.powi(exponent) as f32
    }

    #[test]
    fn subnormals_round_like_normals() {
        // The smallest bf16 subnormal is 2^-133; half of it is a tie that goes to zero.
        assert_eq!(bf16_from_f32(pow2(-133)), 0x0001);
        assert_eq!(bf16_from_f32(pow2(-134)), 0x0000);
        assert_eq!(bf16_from_f32(pow2(-134) * 1.5), 0x0001);
        assert_eq!(bf16_from_f32(-3.0 * pow2(-134)), 0x8002, "tie to even");
        assert_eq!(bf16_from_f64(2f64.powi(-134) * 1.000001), 0x0001);
        assert_eq!(bf16_from_f64(2f64.powi(-140)), 0x0000);
        assert_eq!(bf16_to_f64(0x0001), 2f64.powi(-133));
    }

    #[test]
    fn f64_rounds_once() {
        // 1 + 2^-8 + 2^-40 rounds to f32 as the bf16 tie 1 + 2^-8, which would go down to 1;
        // rounded once it goes up.
        let value = 1.0 + 2f64.powi(-8) + 2f64.powi(-40);
        assert_eq!((value as f32).to_bits(), 0x3f80_8000);
        assert_eq!(bf16_from_f64(value), 0x3f81);
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let value = f64::from_bits(state);
            if value.is_finite() {
                assert_nearest(value, bf16_from_f64(value));
            }
            // Values near bf16's range and ties of it.
            let scaled = (state >> 11) as f64 * 2f64.powi(-53) * 4.0 - 2.0;
            assert_nearest(scaled, bf16_from_f64(scaled));
        }
    }

    #[test]
    fn integers_round_once() {
        // 2^24 + 2^16 + 1: as f32 it is the bf16 tie 2^24 + 2^16 (to the even 2^24); exactly,
        // it lies above the tie.
        let value = (1i128 << 24) + (1 << 16) + 1;
        assert_eq!(bf16_from_f32(value as f32), 0x4b80);
        assert_eq!(bf16_from_i128(value), 0x4b81);
        assert_eq!(bf16_from_i128(-value), 0xcb81);
        assert_eq!(bf16_from_i128(0), 0);
        assert_eq!(bf16_from_i128(257), 0x4380, "a tie to even: 256");
        assert_eq!(bf16_from_i128(i128::from(i64::MIN)), 0xdf00);
        assert_eq!(bf16_from_i128(i128::from(u64::MAX)), 0x5f80);
        // 2^62 + 2^54 is a tie (to the even 2^62); one more rounds up, though as an f64 the
        // sum is that tie.
        assert_eq!(bf16_from_i128((1 << 62) + (1 << 54)), 0x5e80);
        assert_eq!(bf16_from_i128((1 << 62) + (1 << 54) + 1), 0x5e81);
        for value in [3i128, 255, 259, 65535, 1 << 40, (1 << 40) + 3, -12345] {
            assert_nearest(value as f64, bf16_from_i128(value));
        }
    }

    #[test]
    fn the_type_is_named_bf16_in_source_and_metadata() {
        use crate::types::ScalarType;
        assert_eq!(ScalarType::from_name("bf16"), Some(ScalarType::Bf16));
        assert_eq!(ScalarType::Bf16.size_in_bytes(), 2);
        assert!(ScalarType::Bf16.is_float());
        let json = serde_json::to_string(&ScalarType::Bf16).unwrap();
        assert_eq!(json, "\"bf16\"");
        assert_eq!(
            serde_json::from_str::<ScalarType>(&json).unwrap(),
            ScalarType::Bf16
        );
    }

    /// The scalar evaluator (`crate::scalar`) on `bf16`: the `f32` operation, rounded.
    mod evaluator {
        use crate::bf16::bf16_to_f64;
        use crate::ir::{BinaryOp, MathFunction, UnaryOp};
        use crate::scalar::{binary, cast, math, parse_float, unary};
        use crate::type_constants::associated_constant;
        use crate::types::ScalarType::{self, Bf16, F16, F32, F64, I32, I64, U64};

        fn op(op: BinaryOp, x: u64, y: u64) -> u64 {
            binary(op, Bf16, x, y, Bf16).unwrap()
        }

        fn from(value: f64, ty: ScalarType) -> u64 {
            crate::scalar::f64_to_float(value, ty)
        }

        #[test]
        fn arithmetic_rounds_ties_to_even() {
            let one = 0x3f80;
            // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: the even 1.
            assert_eq!(op(BinaryOp::Add, one, 0x3b80), one);
            // (1 + 2^-7) + 2^-8 is halfway to 1 + 2^-6: the even 1 + 2^-6.
            assert_eq!(op(BinaryOp::Add, 0x3f81, 0x3b80), 0x3f82);
            // 3 * (1 + 2^-7) = 3 + 3 * 2^-7 is halfway between 3 + 2^-6 and 3 + 2^-5: the even one.
            assert_eq!(op(BinaryOp::Multiply, 0x4040, 0x3f81), 0x4042);
            assert_eq!(op(BinaryOp::Divide, one, 0x4040), 0x3eab, "1 / 3");
            assert_eq!(op(BinaryOp::Subtract, one, one), 0);
            assert_eq!(unary(UnaryOp::Negate, Bf16, one), 0xbf80);
            assert_eq!(op(BinaryOp::Less, 0xbf80, one), 1);
            assert_eq!(op(BinaryOp::Equal, 0x8000, 0), 1, "-0 == 0");
        }

        #[test]
        fn overflow_nan_and_subnormals() {
            let max = associated_constant(Bf16, "MAX").unwrap();
            assert_eq!(max, 0x7f7f);
            assert_eq!(op(BinaryOp::Add, max, max), 0x7f80, "overflows to infinity");
            assert_eq!(op(BinaryOp::Multiply, max, 0xbf80), 0xff7f);
            let nan = op(BinaryOp::Subtract, 0x7f80, 0x7f80);
            assert_eq!(nan & 0x7fc0, 0x7fc0, "inf - inf is a quiet NaN");
            assert_eq!(op(BinaryOp::NotEqual, nan, nan), 1);
            assert_eq!(op(BinaryOp::Equal, nan, nan), 0);
            // The smallest normal 2^-126 halved is the subnormal 0x0040; 2^-133 halved is a
            // tie that goes to zero, 3 * 2^-134 a tie that goes to the even 2^-132.
            let min_positive = associated_constant(Bf16, "MIN_POSITIVE").unwrap();
            let half = 0x3f00;
            assert_eq!(op(BinaryOp::Multiply, min_positive, half), 0x0040);
            assert_eq!(op(BinaryOp::Multiply, 0x0001, half), 0);
            assert_eq!(op(BinaryOp::Multiply, 0x0003, half), 0x0002);
            assert_eq!(op(BinaryOp::Add, 0x0001, 0x0001), 0x0002);
        }

        #[test]
        fn math_is_computed_in_f32_and_rounded() {
            let two = 0x4000;
            assert_eq!(
                math(MathFunction::Sqrt, Bf16, &[two]),
                0x3fb5,
                "sqrt 2 = 1.4140625"
            );
            assert_eq!(math(MathFunction::Abs, Bf16, &[0xc040]), 0x4040);
            assert_eq!(math(MathFunction::Min, Bf16, &[0x7fc0, two]), two, "minNum");
            assert_eq!(math(MathFunction::Max, Bf16, &[0x3f80, two]), two);
            // fma(1 + 2^-7, 1 + 2^-7, -(1 + 2^-6)) = 2^-14 exactly; a rounded product would
            // give 0.
            assert_eq!(
                math(MathFunction::Fma, Bf16, &[0x3f81, 0x3f81, 0xbf82]),
                0x3880
            );
            assert_eq!(math(MathFunction::IsNan, Bf16, &[0xffc1]), 1);
            assert_eq!(math(MathFunction::IsInf, Bf16, &[0xff80]), 1);
        }

        #[test]
        fn conversions_round_once_and_saturate() {
            assert_eq!(cast(from(1.5, F32), F32, Bf16), 0x3fc0);
            assert_eq!(cast(0x3fc0, Bf16, F64), 1.5f64.to_bits());
            assert_eq!(cast(0x3fc0, Bf16, F16), 0x3e00);
            // f16's largest value, 65504, rounds to 65536 in bf16.
            assert_eq!(cast(0x7bff, F16, Bf16), 0x4780);
            // Beyond f16's range a bf16 becomes an infinite f16.
            assert_eq!(cast(0x4780, Bf16, F16), 0x7c00);
            let value = 1.0 + 2f64.powi(-8) + 2f64.powi(-40);
            assert_eq!(
                cast(value.to_bits(), F64, Bf16),
                0x3f81,
                "no detour through f32"
            );
            let big = (1u64 << 24) + (1 << 16) + 1;
            assert_eq!(cast(big, I32, Bf16), 0x4b81);
            assert_eq!(cast(u64::MAX, U64, Bf16), 0x5f80);
            assert_eq!(cast(0xc0a0, Bf16, I32), (-5i32) as u32 as u64);
            assert_eq!(cast(0x7f80, Bf16, I64), i64::MAX as u64, "saturates");
            assert_eq!(cast(0x7fc0, Bf16, I32), 0, "NaN gives 0");
            assert_eq!(cast(0x8000, Bf16, ScalarType::Bool), 0);
        }

        #[test]
        fn literals_round_once_to_bf16() {
            assert_eq!(parse_float("1.5", Bf16), Some(1.5));
            assert_eq!(parse_float("0.1", Bf16), Some(0.10009765625));
            // 1.00390625 = 1 + 2^-8 is a tie (to 1); a digit more goes up.
            assert_eq!(parse_float("1.00390625", Bf16), Some(1.0));
            assert_eq!(parse_float("1.00390625000000000001", Bf16), Some(1.0078125));
            assert_eq!(parse_float("1e39", Bf16), Some(f64::INFINITY));
            assert_eq!(parse_float("3.3e38", Bf16), Some(bf16_to_f64(0x7f78)));
        }
    }
}
