//! Comparing a device's outputs with the reference interpreter's.

use crate::run::{values_of, ArgumentValue, Comparison, KernelRun, RecordLayout};
use crate::types::float_from_bits;
use kdsl_ir::ScalarType;

/// The contents of every buffer argument after a launch (`None` for scalars).
pub type Outputs = Vec<Option<Vec<u8>>>;

/// `Ok` if `got` agrees with `expected` as each argument's comparison says; else the first
/// few differences.
pub fn compare_outputs(run: &KernelRun, expected: &Outputs, got: &Outputs) -> Result<(), String> {
    let mut differences = Vec::new();
    for (index, argument) in run.arguments.iter().enumerate() {
        let ArgumentValue::Buffer {
            element,
            ref record,
            ..
        } = argument.value
        else {
            continue;
        };
        if argument.comparison == Comparison::Ignored {
            continue;
        }
        let (Some(want), Some(have)) = (&expected[index], &got[index]) else {
            differences.push(format!("{}: missing output", argument.name));
            continue;
        };
        if want.len() != have.len() {
            differences.push(format!(
                "{}: {} bytes, expected {}",
                argument.name,
                have.len(),
                want.len()
            ));
            continue;
        }
        if let Some(layout) = record {
            compare_records(&argument.name, layout, want, have, &mut differences);
            continue;
        }
        let (want, have) = (values_of(want, element), values_of(have, element));
        for (position, (&w, &h)) in want.iter().zip(&have).enumerate() {
            if !agree(argument.comparison, element, w, h) {
                differences.push(format!(
                    "{}[{position}]: device {}, interpreter {} ({:?})",
                    argument.name,
                    show(h, element),
                    show(w, element),
                    argument.comparison
                ));
                if differences.len() >= 8 {
                    break;
                }
            }
        }
    }
    if differences.is_empty() {
        Ok(())
    } else {
        Err(differences.join("; "))
    }
}

fn agree(comparison: Comparison, element: ScalarType, w: u64, h: u64) -> bool {
    match comparison {
        Comparison::Ignored => true,
        Comparison::Exact => w == h,
        Comparison::SameNumbers | Comparison::Within(_) if !element.is_float() => w == h,
        Comparison::SameNumbers => {
            let (w, h) = (float_from_bits(w, element), float_from_bits(h, element));
            w == h || (w.is_nan() && h.is_nan())
        }
        Comparison::Within(tolerance) => {
            let (w, h) = (float_from_bits(w, element), float_from_bits(h, element));
            (w - h).abs() <= tolerance || w == h || (w.is_nan() && h.is_nan())
        }
    }
}

fn show(bits: u64, element: ScalarType) -> String {
    if element.is_float() {
        format!("{:?}", float_from_bits(bits, element))
    } else {
        format!("{}", kdsl_ir::scalar::integer_as_i128(bits, element))
    }
}

/// Records field by field (floats as numbers, the rest bit for bit); padding bytes, which no
/// access may write, must keep their initial contents.
fn compare_records(
    name: &str,
    layout: &RecordLayout,
    want: &[u8],
    have: &[u8],
    differences: &mut Vec<String>,
) {
    let size = layout.size as usize;
    for (record, (w, h)) in want.chunks(size).zip(have.chunks(size)).enumerate() {
        for (field, ty, offset) in &layout.fields {
            let bytes = *offset as usize..*offset as usize + ty.size_in_bytes().max(1) as usize;
            let (w, h) = (
                values_of(&w[bytes.clone()], *ty)[0],
                values_of(&h[bytes], *ty)[0],
            );
            if !agree(Comparison::SameNumbers, *ty, w, h) {
                differences.push(format!(
                    "{name}[{record}].{field}: device {}, interpreter {}",
                    show(h, *ty),
                    show(w, *ty)
                ));
            }
        }
        for position in (0..layout.size).filter(|&p| layout.is_padding(p)) {
            let p = position as usize;
            if w[p] != h[p] {
                differences.push(format!(
                    "{name}[{record}]: padding byte {p} written (device {:#04x}, interpreter {:#04x})",
                    h[p], w[p]
                ));
            }
        }
        if differences.len() >= 8 {
            return;
        }
    }
}
