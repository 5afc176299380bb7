//! Record types (`struct Node { start: i32, edges: i32 }`) as buffer elements, and their
//! C-compatible layout, computed here once for the front end, every back end, the interpreter
//! and the bundle metadata.

use crate::types::ScalarType;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A record type with its memory layout: the layout a C compiler gives the same `struct` on
/// every kdsl target (and `numpy.dtype(..., align=True)` gives): each field at the next offset
/// that is a multiple of its size, the record's size rounded up to a multiple of its largest
/// field's alignment.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RecordType {
    pub name: String,
    /// In declaration order; never empty.
    pub fields: Vec<RecordField>,
    /// Bytes from one record to the next in a buffer (C's `sizeof`).
    pub size: u32,
    /// The largest alignment of a field (C's `_Alignof`).
    pub alignment: u32,
}

/// One field of a record.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RecordField {
    pub name: String,
    pub ty: ScalarType,
    /// Bytes from the start of the record (C's `offsetof`).
    pub offset: u32,
}

impl RecordType {
    /// Lays the fields out in order with natural alignment (a scalar's alignment is its size;
    /// `bool` is one byte).
    pub fn new(name: impl Into<String>, fields: &[(String, ScalarType)]) -> RecordType {
        let mut offset = 0u32;
        let mut alignment = 1u32;
        let fields = fields
            .iter()
            .map(|(name, ty)| {
                let align = ty.size_in_bytes();
                alignment = alignment.max(align);
                offset = offset.next_multiple_of(align);
                let field = RecordField {
                    name: name.clone(),
                    ty: *ty,
                    offset,
                };
                offset += ty.size_in_bytes();
                field
            })
            .collect();
        RecordType {
            name: name.into(),
            fields,
            size: offset.next_multiple_of(alignment).max(alignment),
            alignment,
        }
    }

    pub fn field(&self, name: &str) -> Option<(usize, &RecordField)> {
        self.fields.iter().enumerate().find(|(_, f)| f.name == name)
    }

    /// The record as C declares it, such as `struct Node { int32_t start; int32_t edges; }`.
    pub fn c_declaration(&self) -> String {
        let fields: Vec<String> = self
            .fields
            .iter()
            .map(|f| format!("{} {};", c_type(f.ty), f.name))
            .collect();
        format!("struct {} {{ {} }};", self.name, fields.join(" "))
    }
}

/// The C type of a scalar, as `<stdint.h>`, `_Float16` and `__bf16` name it.
pub fn c_type(ty: ScalarType) -> &'static str {
    match ty {
        ScalarType::Bool => "_Bool",
        ScalarType::I8 => "int8_t",
        ScalarType::U8 => "uint8_t",
        ScalarType::I16 => "int16_t",
        ScalarType::U16 => "uint16_t",
        ScalarType::I32 => "int32_t",
        ScalarType::U32 => "uint32_t",
        ScalarType::I64 => "int64_t",
        ScalarType::U64 => "uint64_t",
        ScalarType::F16 => "_Float16",
        ScalarType::Bf16 => "__bf16",
        ScalarType::F32 => "float",
        ScalarType::F64 => "double",
    }
}

impl fmt::Display for RecordType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(fields: &[ScalarType]) -> (Vec<u32>, u32, u32) {
        let named: Vec<(String, ScalarType)> = fields
            .iter()
            .enumerate()
            .map(|(i, &t)| (format!("f{i}"), t))
            .collect();
        let record = RecordType::new("R", &named);
        let offsets = record.fields.iter().map(|f| f.offset).collect();
        (offsets, record.size, record.alignment)
    }

    #[test]
    fn lays_fields_out_as_c_does() {
        use ScalarType::*;
        assert_eq!(layout(&[I32, I32]), (vec![0, 4], 8, 4));
        assert_eq!(layout(&[U8, F64, U16]), (vec![0, 8, 16], 24, 8));
        assert_eq!(layout(&[F16, Bool, F32]), (vec![0, 2, 4], 8, 4));
        assert_eq!(layout(&[Bool]), (vec![0], 1, 1));
        assert_eq!(layout(&[I64, I8]), (vec![0, 8], 16, 8));
    }
}
