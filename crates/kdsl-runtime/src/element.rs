//! The Rust types a buffer can hold, tied to the kernel language's scalar types.

use kdsl_ir::ScalarType;

mod sealed {
    pub trait Sealed {}
}

/// A plain value type that a `Buffer` can hold: `i8 u8 i16 u16 i32 u32 i64 u64 f32 f64`,
/// [`F16`] and [`Bf16`].
///
/// `bool` buffers have no Rust element type (`bool` has invalid bit patterns); use `u8`.
pub trait Element: bytemuck::Pod + sealed::Sealed + Send + Sync + 'static {
    /// The kernel-language type of one element.
    const TYPE: ScalarType;
}

macro_rules! elements {
    ($($rust:ty => $scalar:ident),* $(,)?) => {$(
        impl sealed::Sealed for $rust {}
        impl Element for $rust {
            const TYPE: ScalarType = ScalarType::$scalar;
        }
    )*};
}

elements! {
    i8 => I8, u8 => U8, i16 => I16, u16 => U16, i32 => I32, u32 => U32,
    i64 => I64, u64 => U64, f32 => F32, f64 => F64, F16 => F16, Bf16 => Bf16,
}

/// An IEEE 754 half-precision value (the kernel language's `f16`), held as its bits, with
/// conversions to and from `f32` rounding to nearest, ties to even.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
pub struct F16(pub u16);

impl F16 {
    /// The nearest half-precision value (ties to even); overflow gives infinity, NaN stays NaN.
    pub fn from_f32(value: f32) -> F16 {
        let bits = value.to_bits();
        let sign = ((bits >> 16) & 0x8000) as u16;
        let exponent = ((bits >> 23) & 0xff) as i32;
        let mantissa = bits & 0x007f_ffff;
        if exponent == 0xff {
            let nan = if mantissa != 0 { 0x0200 } else { 0 };
            return F16(sign | 0x7c00 | nan);
        }
        // The value as an unbiased exponent and a 24-bit significand.
        let half_exponent = exponent - 127 + 15;
        if half_exponent >= 0x1f {
            return F16(sign | 0x7c00);
        }
        let (significand, shift) = if half_exponent <= 0 {
            // Subnormal (or zero) in half precision.
            if half_exponent < -10 {
                return F16(sign);
            }
            (mantissa | 0x0080_0000, (14 - half_exponent) as u32)
        } else {
            (mantissa, 13)
        };
        let halfway = 1u32 << (shift - 1);
        let remainder = significand & ((1 << shift) - 1);
        let mut rounded = significand >> shift;
        if remainder > halfway || (remainder == halfway && rounded & 1 == 1) {
            rounded += 1;
        }
        if half_exponent <= 0 {
            F16(sign | rounded as u16)
        } else {
            // A carry out of the mantissa correctly bumps the exponent (up to infinity).
            F16(sign | (((half_exponent as u32) << 10) + rounded) as u16)
        }
    }

    /// The exact `f32` value.
    pub fn to_f32(self) -> f32 {
        let sign = u32::from(self.0 & 0x8000) << 16;
        let exponent = u32::from((self.0 >> 10) & 0x1f);
        let mantissa = u32::from(self.0 & 0x03ff);
        let bits = match (exponent, mantissa) {
            (0, 0) => sign,
            (0, _) => {
                // Subnormal: normalise into f32.
                let shift = mantissa.leading_zeros() - 21;
                sign | ((113 - shift) << 23) | ((mantissa << (shift + 13)) & 0x007f_ffff)
            }
            (0x1f, _) => sign | 0x7f80_0000 | (mantissa << 13),
            _ => sign | ((exponent + 112) << 23) | (mantissa << 13),
        };
        f32::from_bits(bits)
    }
}

impl From<F16> for crate::ScalarValue {
    fn from(value: F16) -> crate::ScalarValue {
        crate::ScalarValue::F16(value.0)
    }
}

impl<'a> crate::IntoArgument<'a> for F16 {
    fn into_argument(self) -> crate::Argument<'a> {
        crate::Argument::scalar(self)
    }
}

/// A bfloat16 value (the kernel language's `bf16`: the upper half of an `f32`), held as its
/// bits, with conversions as the language defines them (`kdsl_ir::bf16`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
pub struct Bf16(pub u16);

impl Bf16 {
    /// The nearest bfloat16 value (ties to even); overflow gives infinity, NaN stays NaN.
    pub fn from_f32(value: f32) -> Bf16 {
        Bf16(kdsl_ir::bf16::bf16_from_f32(value))
    }

    /// The exact `f32` value.
    pub fn to_f32(self) -> f32 {
        kdsl_ir::bf16::bf16_to_f32(self.0)
    }
}

impl From<Bf16> for crate::ScalarValue {
    fn from(value: Bf16) -> crate::ScalarValue {
        crate::ScalarValue::Bf16(value.0)
    }
}

impl<'a> crate::IntoArgument<'a> for Bf16 {
    fn into_argument(self) -> crate::Argument<'a> {
        crate::Argument::scalar(self)
    }
}

#[cfg(test)]
mod tests {
    use super::{Bf16, F16};

    #[test]
    fn bf16_is_the_upper_half_of_an_f32_rounded_to_nearest_even() {
        for bits in (0..=u16::MAX).step_by(7) {
            let value = Bf16(bits);
            let wide = value.to_f32();
            assert_eq!(wide.to_bits() >> 16, u32::from(bits));
            if !wide.is_nan() {
                assert_eq!(Bf16::from_f32(wide), value);
            }
        }
        assert_eq!(Bf16::from_f32(1.0).0, 0x3f80);
        // 1 + 2^-8 is a tie between 1 and 1 + 2^-7: the even 1; a bit more rounds up.
        assert_eq!(Bf16::from_f32(1.0 + 2f32.powi(-8)).0, 0x3f80);
        assert_eq!(Bf16::from_f32(f32::from_bits(0x3f80_8001)).0, 0x3f81);
        assert_eq!(Bf16::from_f32(f32::MAX).0, 0x7f80, "rounds up to infinity");
        assert!(Bf16::from_f32(f32::from_bits(0x7f80_0001))
            .to_f32()
            .is_nan());
        assert_eq!(
            crate::ScalarValue::from(Bf16(0x4000)).ty(),
            kdsl_ir::ScalarType::Bf16
        );
    }

    #[test]
    fn f16_round_trips_every_value_and_rounds_to_nearest_even() {
        for bits in 0..=u16::MAX {
            let value = F16(bits);
            let wide = value.to_f32();
            if wide.is_nan() {
                assert!(F16::from_f32(wide).to_f32().is_nan());
            } else {
                assert_eq!(F16::from_f32(wide), value, "bits {bits:#06x} ({wide})");
            }
        }
        assert_eq!(F16::from_f32(1.0).0, 0x3c00);
        assert_eq!(F16::from_f32(65504.0).0, 0x7bff);
        assert_eq!(F16::from_f32(65520.0).0, 0x7c00, "rounds up to infinity");
        assert_eq!(
            F16::from_f32(2049.0).to_f32(),
            2048.0,
            "a tie rounds to even"
        );
        assert_eq!(
            F16::from_f32(2051.0).to_f32(),
            2052.0,
            "a tie rounds to even"
        );
        assert_eq!(
            F16::from_f32(5.9604645e-8).0,
            0x0001,
            "the smallest subnormal"
        );
        assert_eq!(
            F16::from_f32(2.9802322e-8).0,
            0x0000,
            "half of it ties to even zero"
        );
        assert_eq!(F16::from_f32(-0.0).0, 0x8000);
    }
}
