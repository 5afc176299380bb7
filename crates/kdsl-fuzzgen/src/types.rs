//! Types as the generator sees them, and how their values are written in source.

use crate::random::Random;
use kdsl_ir::ScalarType;

/// The type of a generated value: a scalar, or the type parameter `T` of a generic kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueType {
    Scalar(ScalarType),
    /// `T`; what it allows is the intersection over the kernel's instances ([`GenericDomain`]).
    Generic,
}

impl ValueType {
    pub fn name(self) -> &'static str {
        match self {
            ValueType::Scalar(ty) => ty.name(),
            ValueType::Generic => "T",
        }
    }

    pub fn scalar(self) -> Option<ScalarType> {
        match self {
            ValueType::Scalar(ty) => Some(ty),
            ValueType::Generic => None,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, ValueType::Scalar(ty) if ty.is_float())
    }

    pub fn is_integer(self) -> bool {
        matches!(self, ValueType::Scalar(ty) if ty.is_integer())
    }

    pub fn is_bool(self) -> bool {
        self == ValueType::Scalar(ScalarType::Bool)
    }
}

/// The instances of a generic kernel's `T` and the integer interval on which all of them
/// compute the same values: every `T` value the generator makes stays in `low..=high`, so an
/// `i8`, a `u32` and an `f32` instance agree (no wrapping, no rounding).
#[derive(Clone, Debug, PartialEq)]
pub struct GenericDomain {
    pub instances: Vec<ScalarType>,
    pub low: i128,
    pub high: i128,
}

impl GenericDomain {
    pub fn new(instances: Vec<ScalarType>) -> GenericDomain {
        let mut low = -1i128 << 62;
        let mut high = 1i128 << 62;
        for &ty in &instances {
            let (type_low, type_high) = exact_integer_range(ty);
            low = low.max(type_low);
            high = high.min(type_high);
        }
        // Small enough that products of two values stay far from every instance's limit.
        GenericDomain {
            instances,
            low: low.max(-1000),
            high: high.min(1000),
        }
    }

    pub fn all_signed_or_float(&self) -> bool {
        self.instances
            .iter()
            .all(|ty| ty.is_float() || ty.is_signed_integer())
    }

    pub fn all_in(&self, set: &[ScalarType]) -> bool {
        self.instances.iter().all(|ty| set.contains(ty))
    }
}

/// The integers a type holds exactly: its range for integers, `-2^p..=2^p` for floats of
/// precision `p`.
pub fn exact_integer_range(ty: ScalarType) -> (i128, i128) {
    if ty.is_float() {
        let limit = 1i128 << precision_bits(ty);
        (-limit, limit)
    } else {
        integer_range(ty)
    }
}

/// The range of an integer type (`0..=1` for `bool`).
pub fn integer_range(ty: ScalarType) -> (i128, i128) {
    match ty {
        ScalarType::Bool => (0, 1),
        ScalarType::I8 => (i8::MIN.into(), i8::MAX.into()),
        ScalarType::U8 => (0, u8::MAX.into()),
        ScalarType::I16 => (i16::MIN.into(), i16::MAX.into()),
        ScalarType::U16 => (0, u16::MAX.into()),
        ScalarType::I32 => (i32::MIN.into(), i32::MAX.into()),
        ScalarType::U32 => (0, u32::MAX.into()),
        ScalarType::I64 => (i64::MIN.into(), i64::MAX.into()),
        ScalarType::U64 => (0, u64::MAX.into()),
        ScalarType::F16 | ScalarType::Bf16 | ScalarType::F32 | ScalarType::F64 => {
            panic!("integer_range of a float type")
        }
    }
}

/// Significant bits of a float type, the hidden bit included.
pub fn precision_bits(ty: ScalarType) -> i32 {
    match ty {
        ScalarType::F16 => 11,
        ScalarType::Bf16 => 8,
        ScalarType::F32 => 24,
        ScalarType::F64 => 53,
        _ => 0,
    }
}

/// The largest finite value of a float type.
pub fn float_max(ty: ScalarType) -> f64 {
    match ty {
        ScalarType::F16 => 65504.0,
        ScalarType::Bf16 => kdsl_ir::bf16::bf16_to_f64(0x7f7f),
        ScalarType::F32 => f64::from(f32::MAX),
        _ => f64::MAX,
    }
}

/// The distance between `magnitude` and the next value of its binade in type `ty` (an upper
/// bound of one rounding error of a result of that size).
pub fn unit_in_last_place(ty: ScalarType, magnitude: f64) -> f64 {
    let magnitude = magnitude.max(1e-30);
    let exponent = magnitude.log2().floor() as i32 + 1;
    2f64.powi(exponent - precision_bits(ty))
}

/// The integer types.
pub const INTEGER_TYPES: [ScalarType; 8] = [
    ScalarType::I8,
    ScalarType::U8,
    ScalarType::I16,
    ScalarType::U16,
    ScalarType::I32,
    ScalarType::U32,
    ScalarType::I64,
    ScalarType::U64,
];

/// What atomics work on, and what sub-group operations move.
pub const ATOMIC_INTEGER_TYPES: [ScalarType; 4] = [
    ScalarType::I32,
    ScalarType::U32,
    ScalarType::I64,
    ScalarType::U64,
];

pub const SUB_GROUP_TYPES: [ScalarType; 6] = [
    ScalarType::I32,
    ScalarType::U32,
    ScalarType::I64,
    ScalarType::U64,
    ScalarType::F32,
    ScalarType::F64,
];

/// An integer literal of type `ty` with value `value` (in the type's range), with its suffix,
/// parenthesized when negative. The spelling varies (decimal, hexadecimal, binary,
/// separators) to exercise the lexer.
pub fn integer_literal(value: i128, ty: ScalarType, random: &mut Random) -> String {
    let (low, _) = integer_range(ty);
    let suffix = ty.name();
    if value < 0 {
        if value == low {
            // `-128i8` would be the negation of an out-of-range `128i8`.
            return format!("(-{}{suffix} - 1{suffix})", -(value + 1));
        }
        return format!("(-{}{suffix})", -value);
    }
    match random.below(10) {
        0 => format!("0x{value:X}{suffix}"),
        1 if value < 256 => format!("0b{value:b}{suffix}"),
        2 => format!("{value}_{suffix}"),
        _ => format!("{value}{suffix}"),
    }
}

/// An integer literal written for context typing (no suffix), as used with `T`.
pub fn plain_integer_literal(value: i128) -> String {
    if value < 0 {
        format!("(-{})", -value)
    } else {
        format!("{value}")
    }
}

/// A float literal of type `ty` holding `value` exactly (a small dyadic rational).
pub fn float_literal(value: f64, ty: ScalarType) -> String {
    let magnitude = value.abs();
    let text = format!("{magnitude:?}");
    let text = if text.contains('.') || text.contains('e') {
        text
    } else {
        format!("{text}.0")
    };
    if value.is_sign_negative() {
        format!("(-{text}{})", ty.name())
    } else {
        format!("{text}{}", ty.name())
    }
}

/// A value of type `ty` as source text: a literal (or `true`/`false`).
pub fn literal_of_bits(bits: u64, ty: ScalarType, random: &mut Random) -> String {
    match ty {
        ScalarType::Bool => (bits & 1 == 1).to_string(),
        ScalarType::F16 | ScalarType::Bf16 | ScalarType::F32 | ScalarType::F64 => {
            float_literal(float_from_bits(bits, ty), ty)
        }
        _ => integer_literal(kdsl_ir::scalar::integer_as_i128(bits, ty), ty, random),
    }
}

/// The bits of a float value of type `ty` (rounded to nearest for narrower types).
pub fn float_bits(value: f64, ty: ScalarType) -> u64 {
    kdsl_ir::scalar::f64_to_float(value, ty)
}

pub fn float_from_bits(bits: u64, ty: ScalarType) -> f64 {
    kdsl_ir::scalar::float_as_f64(bits, ty)
}

/// The bits of an integer value of type `ty` (two's complement, truncated).
pub fn integer_bits(value: i128, ty: ScalarType) -> u64 {
    kdsl_ir::scalar::integer_from_i128(value, ty)
}
