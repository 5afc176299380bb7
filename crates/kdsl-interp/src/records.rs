//! Buffers of records: the host holds their bytes in C layout; the interpreter holds one cell
//! per field (record `r`, field `k` at cell `r * fields + k`), so field accesses, stores and
//! atomics work on cells like any other element. Padding bytes are left as they were.

use kdsl_ir::{RecordType, ScalarType};

/// The field cells of `bytes`, which hold whole records (the caller checked the length).
pub(crate) fn cells_of(bytes: &[u8], record: &RecordType) -> Vec<u64> {
    let size = record.size as usize;
    let mut cells = Vec::with_capacity(bytes.len() / size * record.fields.len());
    for element in bytes.chunks_exact(size) {
        for field in &record.fields {
            let start = field.offset as usize;
            let width = field.ty.size_in_bytes() as usize;
            let mut le = [0u8; 8];
            le[..width].copy_from_slice(&element[start..start + width]);
            let bits = u64::from_le_bytes(le);
            // A `bool` is 0 or 1 in the interpreter; any non-zero byte reads as true.
            cells.push(if field.ty == ScalarType::Bool {
                u64::from(bits != 0)
            } else {
                bits
            });
        }
    }
    cells
}

/// Writes the field cells back into the records' bytes.
pub(crate) fn write_back(bytes: &mut [u8], cells: &[u64], record: &RecordType) {
    let size = record.size as usize;
    let fields = record.fields.len();
    for (element, cells) in bytes.chunks_exact_mut(size).zip(cells.chunks_exact(fields)) {
        for (field, bits) in record.fields.iter().zip(cells) {
            let start = field.offset as usize;
            let width = field.ty.size_in_bytes() as usize;
            element[start..start + width].copy_from_slice(&bits.to_le_bytes()[..width]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip_and_padding_is_kept() {
        let record = RecordType::new(
            "P",
            &[("a".into(), ScalarType::U8), ("b".into(), ScalarType::I32)],
        );
        let bytes = vec![7, 0xaa, 0xbb, 0xcc, 0xfe, 0xff, 0xff, 0xff];
        let cells = cells_of(&bytes, &record);
        assert_eq!(cells, vec![7, 0xffff_fffe]);
        let mut out = bytes.clone();
        write_back(&mut out, &[9, 5], &record);
        assert_eq!(out, vec![9, 0xaa, 0xbb, 0xcc, 5, 0, 0, 0]);
    }
}
