//! Conversions whose result LLVM's optimizer could change: the optimized IR must keep the
//! rounding the language defines (docs/language.md, "Semantics").

use kdsl_codegen::{emit_llvm_ir, Options, TargetSpec};

fn targets() -> [TargetSpec; 3] {
    [
        TargetSpec::spirv(),
        TargetSpec::ptx(Some("sm_90")),
        TargetSpec::amdgpu(Some("gfx90a")),
    ]
}

/// `(x << 31) as f16` is -2^31 or 0, and -2^31 is beyond f16's range: -infinity. LLVM 22's
/// InstCombine took the conversion of a value with one significant bit as exact and folded
/// `fpext (sitofp x to half)` to `sitofp x to double`, giving -2147483648.0 on every target.
#[test]
fn integer_to_f16_overflow_survives_optimization() {
    let source = "
kernel k(output: global mut [f64], input: global [i32], unsigned: global [u32]) {
    output[0] = ((input[0] << 31) as f16) as f64;
    output[1] = ((unsigned[0] << 31) as f16) as f64;
}";
    let module = kdsl_frontend::compile_to_ir(source).expect("compiles");
    for spec in targets() {
        let ir = emit_llvm_ir(&module, &spec, &Options::default()).expect("lowers");
        let to_double = ir
            .lines()
            .filter(|line| line.contains("itofp") && line.contains(" to double"))
            .collect::<Vec<_>>();
        assert!(
            to_double.is_empty(),
            "{spec}: the f16 rounding was folded away: {to_double:?}\n{ir}"
        );
        let to_half = ir
            .lines()
            .filter(|line| line.contains("itofp") && line.contains(" to half"))
            .count();
        assert_eq!(to_half, 2, "{spec}: both conversions round to f16\n{ir}");
    }
}
