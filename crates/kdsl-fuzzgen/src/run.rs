//! What is needed to run a generated kernel: its launch, its arguments with their data, and
//! how each output is compared. This is also the pack's data format, so it depends on
//! nothing that needs LLVM.

use kdsl_ir::ScalarType;
use serde::{Deserialize, Serialize};

/// One launch of one kernel of a generated module.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelRun {
    pub kernel: String,
    /// 1, 2 or 3: how many of `global` and `local` the launch names.
    pub dimensions: u32,
    pub global: [u32; 3],
    pub local: [u32; 3],
    /// One per kernel parameter, in order.
    pub arguments: Vec<RunArgument>,
    /// The argument (a one-element `u32` buffer) where the kernel stores `sub_group_size()`,
    /// for kernels whose results depend on it.
    pub sub_group_size_probe: Option<usize>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunArgument {
    pub name: String,
    pub value: ArgumentValue,
    pub comparison: Comparison,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ArgumentValue {
    /// A scalar, as its bits (see `kdsl_ir::ScalarValue::bits`).
    Scalar { ty: ScalarType, bits: u64 },
    /// A buffer: its initial contents, little-endian. A buffer of records is `u8` bytes,
    /// `record` saying how they are laid out.
    Buffer {
        element: ScalarType,
        writable: bool,
        length: usize,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        data: Vec<u8>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        record: Option<RecordLayout>,
    },
    /// A launch-sized local array (`local mut [T]`): `length` elements per work-group.
    Local { element: ScalarType, length: u64 },
}

/// A record type's C layout (docs/language.md, "Records in buffers"), computed here from the
/// documented rule, apart from the compiler's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecordLayout {
    /// Name, type and byte offset of each field, in declaration order.
    pub fields: Vec<(String, ScalarType, u32)>,
    /// Bytes from one record to the next.
    pub size: u32,
}

impl RecordLayout {
    /// Each field at the next multiple of its size, the size rounded up to the largest.
    pub fn c_layout(fields: &[(String, ScalarType)]) -> RecordLayout {
        let (mut offset, mut alignment) = (0u32, 1u32);
        let fields = fields
            .iter()
            .map(|(name, ty)| {
                let size = element_size(*ty) as u32;
                alignment = alignment.max(size);
                offset = offset.next_multiple_of(size);
                let field = (name.clone(), *ty, offset);
                offset += size;
                field
            })
            .collect();
        RecordLayout {
            fields,
            size: offset.next_multiple_of(alignment),
        }
    }

    /// Whether byte `position` of a record is padding.
    pub fn is_padding(&self, position: u32) -> bool {
        !self.fields.iter().any(|(_, ty, offset)| {
            (*offset..*offset + element_size(*ty) as u32).contains(&position)
        })
    }
}

/// How an argument's contents after the launch must agree with the reference.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Comparison {
    /// Bit for bit.
    Exact,
    /// Floats equal as numbers (`-0.0 == 0.0`, any NaN equals any NaN).
    SameNumbers,
    /// Floats within this absolute distance.
    Within(f64),
    /// Not compared (inputs, which the kernel cannot write).
    Ignored,
}

impl RunArgument {
    /// A buffer of `element`s holding `values` (converted to the type's bits: floats rounded,
    /// integers truncated).
    pub(crate) fn buffer(
        name: &str,
        element: ScalarType,
        writable: bool,
        values: &[f64],
        comparison: Comparison,
    ) -> RunArgument {
        let bits: Vec<u64> = values
            .iter()
            .map(|&value| {
                if element.is_float() {
                    crate::types::float_bits(value, element)
                } else {
                    crate::types::integer_bits(value as i128, element)
                }
            })
            .collect();
        RunArgument {
            name: name.into(),
            value: ArgumentValue::Buffer {
                element,
                writable,
                length: bits.len(),
                data: bytes_of(&bits, element),
                record: None,
            },
            comparison,
        }
    }
}

impl KernelRun {
    /// The launch's global size in each of its dimensions.
    pub fn global_sizes(&self) -> &[u32] {
        &self.global[..self.dimensions as usize]
    }

    pub fn local_sizes(&self) -> &[u32] {
        &self.local[..self.dimensions as usize]
    }
}

/// The bytes of `values` (bits of type `ty`), little-endian.
pub fn bytes_of(values: &[u64], ty: ScalarType) -> Vec<u8> {
    let size = element_size(ty);
    let mut bytes = Vec::with_capacity(values.len() * size);
    for &value in values {
        bytes.extend_from_slice(&value.to_le_bytes()[..size]);
    }
    bytes
}

/// The bits of each element in `bytes`.
pub fn values_of(bytes: &[u8], ty: ScalarType) -> Vec<u64> {
    let size = element_size(ty);
    bytes
        .chunks(size)
        .map(|chunk| {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            u64::from_le_bytes(word)
        })
        .collect()
}

/// Bytes per element of a buffer of `ty` (`bool` has no buffers; one byte).
pub fn element_size(ty: ScalarType) -> usize {
    (ty.size_in_bytes() as usize).max(1)
}
