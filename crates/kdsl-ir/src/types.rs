//! Scalar, array and parameter types shared by every stage of kdsl.

use crate::records::RecordType;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A scalar type of the kernel language.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScalarType {
    Bool,
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F16,
    /// bfloat16: the upper half of an `f32` (8 exponent bits, 7 mantissa bits).
    Bf16,
    F32,
    F64,
}

impl ScalarType {
    pub const ALL: [ScalarType; 13] = [
        ScalarType::Bool,
        ScalarType::I8,
        ScalarType::U8,
        ScalarType::I16,
        ScalarType::U16,
        ScalarType::I32,
        ScalarType::U32,
        ScalarType::I64,
        ScalarType::U64,
        ScalarType::F16,
        ScalarType::Bf16,
        ScalarType::F32,
        ScalarType::F64,
    ];

    /// The name used in `.krn` source, such as `u32`.
    pub fn name(self) -> &'static str {
        match self {
            ScalarType::Bool => "bool",
            ScalarType::I8 => "i8",
            ScalarType::U8 => "u8",
            ScalarType::I16 => "i16",
            ScalarType::U16 => "u16",
            ScalarType::I32 => "i32",
            ScalarType::U32 => "u32",
            ScalarType::I64 => "i64",
            ScalarType::U64 => "u64",
            ScalarType::F16 => "f16",
            ScalarType::Bf16 => "bf16",
            ScalarType::F32 => "f32",
            ScalarType::F64 => "f64",
        }
    }

    pub fn from_name(name: &str) -> Option<ScalarType> {
        ScalarType::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Size in bytes as stored in memory (`bool` takes one byte).
    pub fn size_in_bytes(self) -> u32 {
        match self {
            ScalarType::Bool | ScalarType::I8 | ScalarType::U8 => 1,
            ScalarType::I16 | ScalarType::U16 | ScalarType::F16 | ScalarType::Bf16 => 2,
            ScalarType::I32 | ScalarType::U32 | ScalarType::F32 => 4,
            ScalarType::I64 | ScalarType::U64 | ScalarType::F64 => 8,
        }
    }

    /// Width in bits of the value (`bool` is 1).
    pub fn bit_width(self) -> u32 {
        match self {
            ScalarType::Bool => 1,
            other => other.size_in_bytes() * 8,
        }
    }

    pub fn is_integer(self) -> bool {
        matches!(
            self,
            ScalarType::I8
                | ScalarType::U8
                | ScalarType::I16
                | ScalarType::U16
                | ScalarType::I32
                | ScalarType::U32
                | ScalarType::I64
                | ScalarType::U64
        )
    }

    pub fn is_signed_integer(self) -> bool {
        matches!(
            self,
            ScalarType::I8 | ScalarType::I16 | ScalarType::I32 | ScalarType::I64
        )
    }

    pub fn is_float(self) -> bool {
        matches!(
            self,
            ScalarType::F16 | ScalarType::Bf16 | ScalarType::F32 | ScalarType::F64
        )
    }

    /// Integers and floats: the types arithmetic works on.
    pub fn is_numeric(self) -> bool {
        self.is_integer() || self.is_float()
    }
}

impl fmt::Display for ScalarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a buffer or array lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AddressSpace {
    /// Device memory visible to every work-item (kernel buffer parameters).
    Global,
    /// Read-only device memory (kernel buffer parameters declared `constant`).
    Constant,
    /// Work-group shared memory (`local` arrays).
    Local,
    /// Per-work-item memory (`var` arrays).
    Private,
}

impl AddressSpace {
    pub fn name(self) -> &'static str {
        match self {
            AddressSpace::Global => "global",
            AddressSpace::Constant => "constant",
            AddressSpace::Local => "local",
            AddressSpace::Private => "private",
        }
    }
}

impl fmt::Display for AddressSpace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A fixed-size array, stored row-major: `[[f32; 16]; 8]` has `dimensions == [8, 16]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ArrayType {
    pub element: ScalarType,
    /// Outermost dimension first. Never empty, every extent at least 1.
    pub dimensions: Vec<u32>,
}

impl ArrayType {
    pub fn element_count(&self) -> u64 {
        self.dimensions.iter().map(|&d| u64::from(d)).product()
    }

    pub fn size_in_bytes(&self) -> u64 {
        self.element_count() * u64::from(self.element.size_in_bytes())
    }
}

impl fmt::Display for ArrayType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = self.element.name().to_string();
        for dimension in self.dimensions.iter().rev() {
            text = format!("[{text}; {dimension}]");
        }
        f.write_str(&text)
    }
}

/// The type of a kernel or device-function parameter.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ParameterType {
    /// A value passed by copy.
    Scalar { ty: ScalarType },
    /// A pointer to a run-time-sized array of `element` in `space` (global or constant).
    /// A buffer of records (`global [Node]`) has `record` set and `element` `u8`; its
    /// length counts records, and its places name a field (`Place::field`).
    Buffer {
        element: ScalarType,
        space: AddressSpace,
        writable: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        record: Option<Box<RecordType>>,
    },
    /// A fixed-size array of the caller, passed by reference (device functions only):
    /// `tile: local [f32; 256]`, `acc: private mut [f32; 8]`. `space` is `Local` or `Private`.
    Array {
        ty: ArrayType,
        space: AddressSpace,
        writable: bool,
    },
}

impl fmt::Display for ParameterType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParameterType::Scalar { ty } => write!(f, "{ty}"),
            ParameterType::Buffer {
                element,
                space,
                writable,
                record,
            } => {
                let mutability = if *writable { " mut" } else { "" };
                match record {
                    Some(record) => write!(f, "{space}{mutability} [{record}]"),
                    None => write!(f, "{space}{mutability} [{element}]"),
                }
            }
            ParameterType::Array {
                ty,
                space,
                writable,
            } => {
                let mutability = if *writable { " mut" } else { "" };
                write!(f, "{space}{mutability} {ty}")
            }
        }
    }
}
