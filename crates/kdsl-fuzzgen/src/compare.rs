//! Comparing a device's outputs with the reference interpreter's.

use crate::run::{values_of, ArgumentValue, Comparison, KernelRun};
use crate::types::float_from_bits;

/// The contents of every buffer argument after a launch (`None` for scalars).
pub type Outputs = Vec<Option<Vec<u8>>>;

/// `Ok` if `got` agrees with `expected` as each argument's comparison says; else the first
/// few differences.
pub fn compare_outputs(run: &KernelRun, expected: &Outputs, got: &Outputs) -> Result<(), String> {
    let mut differences = Vec::new();
    for (index, argument) in run.arguments.iter().enumerate() {
        let ArgumentValue::Buffer { element, .. } = argument.value else {
            continue;
        };
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
        let (want, have) = (values_of(want, element), values_of(have, element));
        for (position, (&w, &h)) in want.iter().zip(&have).enumerate() {
            let agree = match argument.comparison {
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
            };
            if !agree {
                let show = |bits: u64| {
                    if element.is_float() {
                        format!("{:?}", float_from_bits(bits, element))
                    } else {
                        format!("{}", kdsl_ir::scalar::integer_as_i128(bits, element))
                    }
                };
                differences.push(format!(
                    "{}[{position}]: device {}, interpreter {} ({:?})",
                    argument.name,
                    show(h),
                    show(w),
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
