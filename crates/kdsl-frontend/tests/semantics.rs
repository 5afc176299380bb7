//! Constant folding gives what the kernel computes at run time (issue 8's regressions): f16
//! arithmetic rounded to f16, conversions and literals rounded once, `select` and
//! short-circuit logic in constants.

use kdsl_ir::{Literal, ScalarType};

/// The folded value of each module constant, by name.
fn constants(source: &str) -> Vec<(String, ScalarType, Literal)> {
    let module = kdsl_frontend::compile_to_ir(source)
        .unwrap_or_else(|diagnostics| panic!("{diagnostics:#?}"));
    module
        .constants
        .into_iter()
        .map(|c| (c.name, c.ty, c.value))
        .collect()
}

fn constant(source: &str, name: &str) -> Literal {
    constants(source)
        .into_iter()
        .find(|(n, _, _)| n == name)
        .map(|(_, _, value)| value)
        .unwrap()
}

#[test]
fn f16_constants_fold_at_f16_precision() {
    // 2049.0 is 2048 in f16, 2048 + 1 rounds back to 2048 (ties to even), minus 1 is 2047.
    let source = "const H: f16 = 2049.0 + 1.0 - 1.0;";
    assert_eq!(constant(source, "H"), Literal::Float(2047.0));
    // Past f16's range the folded value is infinity, never a wider value typed `f16`.
    let source = "const H: f16 = 60000.0 * 2.0; const W: f64 = (1.0e6 as f16) as f64;";
    assert_eq!(constant(source, "H"), Literal::Float(f64::INFINITY));
    assert_eq!(constant(source, "W"), Literal::Float(f64::INFINITY));
}

#[test]
fn conversions_and_literals_round_once() {
    let source = "
const A: f32 = 1152921573326323713u64 as f32;
const B: f16 = 1.00048828125001f16;
const C: f16 = 1.00048828125f16;
const D: f32 = 16777217;
";
    let x = 1152921573326323713u64;
    assert_eq!(constant(source, "A"), Literal::Float(f64::from(x as f32)));
    assert_ne!(
        constant(source, "A"),
        Literal::Float(f64::from((x as f64) as f32))
    );
    // Above the midpoint between 1 and 1 + 2^-10: rounds up, though its nearest f64 is the
    // midpoint itself.
    assert_eq!(constant(source, "B"), Literal::Float(1.0009765625));
    assert_eq!(constant(source, "C"), Literal::Float(1.0));
    assert_eq!(constant(source, "D"), Literal::Float(16777216.0));
}

#[test]
fn float_to_integer_constants_saturate_and_shifts_wrap() {
    let source = "
const A: i32 = 3.0e9 as i32;
const B: u8 = -1.5 as u8;
const C: u32 = 1u32 << 33u32;
";
    assert_eq!(constant(source, "A"), Literal::Integer(i32::MAX as u64));
    assert_eq!(constant(source, "B"), Literal::Integer(0));
    assert_eq!(constant(source, "C"), Literal::Integer(2));
}

#[test]
fn select_and_short_circuit_logic_in_constants() {
    let source = "
const ZERO: i32 = 0;
const A: i32 = select(ZERO == 0, 7, 9);
const B: bool = ZERO != 0 && 1 / ZERO == 0;
const C: bool = ZERO == 0 || 1 / ZERO == 0;
";
    assert_eq!(constant(source, "A"), Literal::Integer(7));
    assert_eq!(constant(source, "B"), Literal::Bool(false));
    assert_eq!(constant(source, "C"), Literal::Bool(true));
}

#[test]
fn undefined_constants_and_duplicate_type_parameters_are_errors() {
    let codes = |source: &str| -> Vec<String> {
        kdsl_frontend::compile_to_ir(source)
            .unwrap_err()
            .into_iter()
            .map(|d| d.code.to_string())
            .collect()
    };
    assert_eq!(codes("const A: i32 = -2147483648 / -1;"), ["E0510"]);
    assert_eq!(codes("const A: i32 = 1 / 0;"), ["E0510"]);
    assert_eq!(
        codes("kernel k<T, T>(out: global mut [T]) { out[0] = out[0]; }"),
        ["E0204"]
    );
}

#[test]
fn a_long_operator_chain_is_reported_as_a_chain() {
    let sum = |terms: usize| {
        let operands = vec!["x"; terms].join(" + ");
        format!("kernel k(out: global mut [i32], x: i32) {{ out[0] = {operands}; }}")
    };
    // A flat sum of 257 terms or more is fine (it once was reported as nesting too deep).
    assert!(kdsl_frontend::compile_to_ir(&sum(257)).is_ok());
    assert!(kdsl_frontend::compile_to_ir(&sum(1000)).is_ok());
    let diagnostics = kdsl_frontend::compile_to_ir(&sum(1100)).unwrap_err();
    assert_eq!(diagnostics[0].code, "E0004");
    assert_eq!(
        diagnostics[0].message,
        "operator chain longer than 1024 operands"
    );
}

#[test]
fn exact_math_folds_in_constants_and_type_constants_have_rusts_values() {
    let source = "
const WRAPPED: u8 = wrapping_add(200u8, 100u8);
const NEGATIVE: i32 = wrapping_mul(i32::MIN, -1);
const SMALLER: i32 = min(-3, max(7, 2));
const NOT_A_NUMBER: bool = isnan(f32::NAN) && isinf(f64::NEG_INFINITY) && !isfinite(f16::INFINITY);
const LARGEST: f32 = f32::MAX;
const TINY: f16 = f16::MIN_POSITIVE;
const SIGNED: f64 = copysign(2.0, -0.0);
const LOWEST: u64 = u64::MIN + (i8::MAX as u64);
";
    assert_eq!(constant(source, "WRAPPED"), Literal::Integer(44));
    assert_eq!(
        constant(source, "NEGATIVE"),
        Literal::Integer(i32::MIN as u32 as u64)
    );
    assert_eq!(
        constant(source, "SMALLER"),
        Literal::Integer(-3i32 as u32 as u64)
    );
    assert_eq!(constant(source, "NOT_A_NUMBER"), Literal::Bool(true));
    assert_eq!(
        constant(source, "LARGEST"),
        Literal::Float(f64::from(f32::MAX))
    );
    assert_eq!(constant(source, "TINY"), Literal::Float(6.103515625e-5));
    assert_eq!(constant(source, "SIGNED"), Literal::Float(-2.0));
    assert_eq!(constant(source, "LOWEST"), Literal::Integer(127));
}
