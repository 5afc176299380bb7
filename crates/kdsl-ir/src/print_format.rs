//! What `print` writes: the text of each value, defined once here for the interpreter, and
//! the C conversion that makes every target's `printf` write the same text.
//!
//! Integers print in decimal, `bool` as `true` or `false`, floats as C's `%g` of the value
//! widened to `f64` (six significant digits, trailing zeros dropped, an exponent below 1e-4 or
//! from 1e6 on: `0.1`, `1.5`, `1e+06`, `-inf`, `nan`).

use crate::scalar::ScalarValue;
use crate::types::ScalarType;

/// The most values one `print` takes: CUDA's `printf` takes at most 32 arguments after the
/// format.
pub const MAX_VALUES: usize = 32;

/// The text `value` prints as.
pub fn display(value: ScalarValue) -> String {
    match value {
        ScalarValue::Bool(b) => b.to_string(),
        ScalarValue::I8(v) => v.to_string(),
        ScalarValue::U8(v) => v.to_string(),
        ScalarValue::I16(v) => v.to_string(),
        ScalarValue::U16(v) => v.to_string(),
        ScalarValue::I32(v) => v.to_string(),
        ScalarValue::U32(v) => v.to_string(),
        ScalarValue::I64(v) => v.to_string(),
        ScalarValue::U64(v) => v.to_string(),
        ScalarValue::F16(v) => general(f64::from(v)),
        ScalarValue::Bf16(v) => general(f64::from(v)),
        ScalarValue::F32(v) => general(f64::from(v)),
        ScalarValue::F64(v) => general(v),
    }
}

/// How a value of type `ty` is passed to a C `printf` (after C's default argument promotions)
/// and the conversion that prints it as [`display`] does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrintfArgument {
    /// Sign-extended to a 32-bit `int`: `%d`.
    Int,
    /// Zero-extended to a 32-bit `unsigned int`: `%u`.
    UnsignedInt,
    /// A 64-bit `long`: `%ld`.
    Long,
    /// A 64-bit `unsigned long`: `%lu`.
    UnsignedLong,
    /// Widened to `double`: `%g`.
    Double,
    /// A pointer to the constant string `true` or `false`: `%s`.
    BoolString,
}

impl PrintfArgument {
    pub fn of(ty: ScalarType) -> PrintfArgument {
        use ScalarType::*;
        match ty {
            Bool => PrintfArgument::BoolString,
            I8 | I16 | I32 => PrintfArgument::Int,
            U8 | U16 | U32 => PrintfArgument::UnsignedInt,
            I64 => PrintfArgument::Long,
            U64 => PrintfArgument::UnsignedLong,
            F16 | Bf16 | F32 | F64 => PrintfArgument::Double,
        }
    }

    /// The conversion specification, `%d`.
    pub fn conversion(self) -> &'static str {
        match self {
            PrintfArgument::Int => "%d",
            PrintfArgument::UnsignedInt => "%u",
            PrintfArgument::Long => "%ld",
            PrintfArgument::UnsignedLong => "%lu",
            PrintfArgument::Double => "%g",
            PrintfArgument::BoolString => "%s",
        }
    }
}

/// The C format string of a `print` with these text pieces and argument types: each piece with
/// `%` doubled, a conversion between two pieces.
pub fn c_format(text: &[String], arguments: &[ScalarType]) -> String {
    let mut format = String::new();
    for (index, piece) in text.iter().enumerate() {
        format.push_str(&piece.replace('%', "%%"));
        if let Some(&ty) = arguments.get(index) {
            format.push_str(PrintfArgument::of(ty).conversion());
        }
    }
    format
}

/// [`c_format`] with the first `bools.len()` `bool` arguments written into the text as `true` or
/// `false` (those arguments are then not passed); later `bool` arguments keep `%s`. For
/// printf implementations that must not read strings: CUDA's driver crashes the host process
/// on `%s` records once its printf buffer overflows.
pub fn c_format_with_bools(text: &[String], arguments: &[ScalarType], bools: &[bool]) -> String {
    let mut format = String::new();
    let mut written = 0;
    for (index, piece) in text.iter().enumerate() {
        format.push_str(&piece.replace('%', "%%"));
        match arguments.get(index) {
            Some(ScalarType::Bool) if written < bools.len() => {
                format.push_str(if bools[written] { "true" } else { "false" });
                written += 1;
            }
            Some(&ty) => format.push_str(PrintfArgument::of(ty).conversion()),
            None => {}
        }
    }
    format
}

/// C's `%g`: six significant digits, `%e` style when the exponent is below -4 or at least 6,
/// trailing zeros removed; glibc's spelling of infinities and NaNs (with their sign).
fn general(x: f64) -> String {
    const PRECISION: i32 = 6;
    if x.is_nan() {
        return if x.is_sign_negative() { "-nan" } else { "nan" }.into();
    }
    if x.is_infinite() {
        return if x < 0.0 { "-inf" } else { "inf" }.into();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.into();
    }
    // The exponent after rounding to the precision decides the style, as C says.
    let scientific = format!("{:.*e}", (PRECISION - 1) as usize, x);
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if (-4..PRECISION).contains(&exponent) {
        let fixed = format!("{:.*}", (PRECISION - 1 - exponent) as usize, x);
        strip_zeros(&fixed).to_string()
    } else {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!(
            "{}e{sign}{:02}",
            strip_zeros(mantissa),
            exponent.unsigned_abs()
        )
    }
}

/// `1.500` → `1.5`, `2.000` → `2`; text without a point is left alone.
fn strip_zeros(text: &str) -> &str {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_as_c_percent_g() {
        let cases = [
            (0.1, "0.1"),
            (1.5, "1.5"),
            (100.0, "100"),
            (123456.0, "123456"),
            (1234567.0, "1.23457e+06"),
            (999999.5, "1e+06"),
            (0.0001, "0.0001"),
            (0.00001234, "1.234e-05"),
            (-2.5e-300, "-2.5e-300"),
            (1e100, "1e+100"),
            (-0.0, "-0"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, "nan"),
            (1.0 / 3.0, "0.333333"),
        ];
        for (value, text) in cases {
            assert_eq!(display(ScalarValue::F64(value)), text, "{value:e}");
        }
        assert_eq!(display(ScalarValue::F32(0.1)), "0.1");
    }

    #[test]
    fn other_values_and_the_c_format() {
        assert_eq!(display(ScalarValue::Bool(true)), "true");
        assert_eq!(display(ScalarValue::I8(-128)), "-128");
        assert_eq!(display(ScalarValue::U64(u64::MAX)), "18446744073709551615");
        let text = ["a = ".to_string(), "% ".to_string(), "\n".to_string()];
        assert_eq!(
            c_format(&text, &[ScalarType::I64, ScalarType::Bool]),
            "a = %ld%% %s\n"
        );
        let text: Vec<String> = ["", " ", "% ", " ", ""].map(String::from).into();
        let types = [
            ScalarType::Bool,
            ScalarType::I32,
            ScalarType::Bool,
            ScalarType::Bool,
        ];
        assert_eq!(
            c_format_with_bools(&text, &types, &[false, true]),
            "false %d%% true %s"
        );
    }
}
