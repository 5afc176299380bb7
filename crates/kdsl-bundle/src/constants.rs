//! The module constants a bundle was compiled with, so a host reads `BLOCK` from the bundle
//! instead of keeping a copy of it in sync with the kernel source.

use kdsl_ir::{Literal, ModuleConstant, ScalarType};
use serde::{Deserialize, Serialize};
use std::fmt;

/// One module constant with the value the kernels were compiled with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConstantInfo {
    pub name: String,
    pub ty: ScalarType,
    pub value: ConstantValue,
    /// True when the value was set at compile time (`kdsl compile -D NAME=VALUE`) rather than
    /// taken from the declaration.
    #[serde(default)]
    pub defined: bool,
}

impl ConstantInfo {
    /// The metadata of a folded module constant of the IR.
    pub fn from_ir(constant: &ModuleConstant) -> ConstantInfo {
        ConstantInfo {
            name: constant.name.clone(),
            ty: constant.ty,
            value: ConstantValue::from_literal(constant.value, constant.ty),
            defined: constant.defined,
        }
    }
}

/// A constant's value. In the bundle's JSON it is a plain number or `true`/`false`, except
/// that non-finite floats are the strings `"inf"`, `"-inf"` and `"nan"` (JSON has no such
/// numbers).
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
#[serde(into = "Written", try_from = "Written")]
pub enum ConstantValue {
    Bool(bool),
    /// A value of an unsigned integer type.
    Unsigned(u64),
    /// A value of a signed integer type.
    Signed(i64),
    /// A value of a float type (`f16` and `f32` values are exact in `f64`).
    Float(f64),
}

impl ConstantValue {
    /// The value of an IR literal of type `ty`.
    pub fn from_literal(literal: Literal, ty: ScalarType) -> ConstantValue {
        match literal {
            Literal::Bool(b) => ConstantValue::Bool(b),
            Literal::Float(f) => ConstantValue::Float(f),
            Literal::Integer(bits) if ty.is_signed_integer() => {
                let shift = 64 - ty.bit_width();
                ConstantValue::Signed(((bits << shift) as i64) >> shift)
            }
            Literal::Integer(bits) => ConstantValue::Unsigned(bits),
        }
    }

    /// The value as a `u64`, if it is a non-negative integer.
    pub fn as_u64(self) -> Option<u64> {
        match self {
            ConstantValue::Unsigned(value) => Some(value),
            ConstantValue::Signed(value) => u64::try_from(value).ok(),
            _ => None,
        }
    }

    /// The value as an `i64`, if it is an integer that fits.
    pub fn as_i64(self) -> Option<i64> {
        match self {
            ConstantValue::Signed(value) => Some(value),
            ConstantValue::Unsigned(value) => i64::try_from(value).ok(),
            _ => None,
        }
    }

    /// The value of a float constant.
    pub fn as_f64(self) -> Option<f64> {
        match self {
            ConstantValue::Float(value) => Some(value),
            _ => None,
        }
    }

    pub fn as_bool(self) -> Option<bool> {
        match self {
            ConstantValue::Bool(value) => Some(value),
            _ => None,
        }
    }
}

/// Floats compare by their bits, so a NaN constant equals itself and `Eq` holds.
impl PartialEq for ConstantValue {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (ConstantValue::Bool(a), ConstantValue::Bool(b)) => a == b,
            (ConstantValue::Unsigned(a), ConstantValue::Unsigned(b)) => a == b,
            (ConstantValue::Signed(a), ConstantValue::Signed(b)) => a == b,
            (ConstantValue::Float(a), ConstantValue::Float(b)) => a.to_bits() == b.to_bits(),
            _ => false,
        }
    }
}

impl Eq for ConstantValue {}

impl fmt::Display for ConstantValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConstantValue::Bool(value) => write!(f, "{value}"),
            ConstantValue::Unsigned(value) => write!(f, "{value}"),
            ConstantValue::Signed(value) => write!(f, "{value}"),
            ConstantValue::Float(value) if value.is_nan() => f.write_str("nan"),
            ConstantValue::Float(value) if value.is_infinite() => {
                f.write_str(if *value > 0.0 { "inf" } else { "-inf" })
            }
            ConstantValue::Float(value) => write!(f, "{value:?}"),
        }
    }
}

/// The JSON form of a [`ConstantValue`]; which number variant reads back follows from the
/// number's shape (`-3`, `14`, `0.5`).
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Written {
    Bool(bool),
    Unsigned(u64),
    Signed(i64),
    Float(f64),
    NonFinite(String),
}

impl From<ConstantValue> for Written {
    fn from(value: ConstantValue) -> Written {
        match value {
            ConstantValue::Bool(b) => Written::Bool(b),
            ConstantValue::Unsigned(u) => Written::Unsigned(u),
            ConstantValue::Signed(i) => Written::Signed(i),
            ConstantValue::Float(f) if f.is_finite() => Written::Float(f),
            ConstantValue::Float(_) => Written::NonFinite(value.to_string()),
        }
    }
}

impl TryFrom<Written> for ConstantValue {
    type Error = String;

    fn try_from(written: Written) -> Result<ConstantValue, String> {
        Ok(match written {
            Written::Bool(b) => ConstantValue::Bool(b),
            Written::Unsigned(u) => ConstantValue::Unsigned(u),
            Written::Signed(i) => ConstantValue::Signed(i),
            Written::Float(f) => ConstantValue::Float(f),
            Written::NonFinite(text) => match text.as_str() {
                "inf" => ConstantValue::Float(f64::INFINITY),
                "-inf" => ConstantValue::Float(f64::NEG_INFINITY),
                "nan" => ConstantValue::Float(f64::NAN),
                _ => return Err(format!("`{text}` is not a constant value")),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(value: ConstantValue) -> (String, ConstantValue) {
        let json = serde_json::to_string(&value).unwrap();
        let back = serde_json::from_str(&json).unwrap();
        (json, back)
    }

    #[test]
    fn values_are_plain_json_and_read_back_the_same() {
        let cases = [
            (ConstantValue::Unsigned(256), "256"),
            (ConstantValue::Unsigned(u64::MAX), "18446744073709551615"),
            (ConstantValue::Signed(-3), "-3"),
            (ConstantValue::Float(0.5), "0.5"),
            (ConstantValue::Float(2.0), "2.0"),
            (ConstantValue::Float(f64::INFINITY), "\"inf\""),
            (ConstantValue::Float(f64::NEG_INFINITY), "\"-inf\""),
            (ConstantValue::Float(f64::NAN), "\"nan\""),
            (ConstantValue::Bool(true), "true"),
        ];
        for (value, expected) in cases {
            let (json, back) = round_trip(value);
            assert_eq!(json, expected);
            assert_eq!(back, value, "{json}");
        }
        assert!(serde_json::from_str::<ConstantValue>("\"many\"").is_err());
    }

    #[test]
    fn literals_convert_by_their_type() {
        let value = |literal, ty| ConstantValue::from_literal(literal, ty);
        assert_eq!(
            value(Literal::Integer(0xFD), ScalarType::I8),
            ConstantValue::Signed(-3)
        );
        assert_eq!(
            value(Literal::Integer(0xFD), ScalarType::U8),
            ConstantValue::Unsigned(253)
        );
        assert_eq!(
            value(Literal::Integer(14), ScalarType::U32).as_u64(),
            Some(14)
        );
        assert_eq!(
            value(Literal::Integer(14), ScalarType::I64).as_u64(),
            Some(14)
        );
        assert_eq!(
            value(Literal::Integer(u64::MAX), ScalarType::I64).as_u64(),
            None
        );
        assert_eq!(
            value(Literal::Float(0.25), ScalarType::F32).as_f64(),
            Some(0.25)
        );
        assert_eq!(
            value(Literal::Bool(false), ScalarType::Bool).as_bool(),
            Some(false)
        );
        assert_eq!(ConstantValue::Float(f64::NAN).to_string(), "nan");
        assert_eq!(ConstantValue::Float(1.5).to_string(), "1.5");
    }
}
