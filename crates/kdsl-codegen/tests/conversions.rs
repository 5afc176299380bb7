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

/// `bf16` results round with integer instructions where the target has no conversion (SPIR-V,
/// AMDGPU, NVIDIA before sm_80), and with one `cvt.rn.bf16.f32` on sm_80 and later: the target
/// description's `Bf16Rounding`. No `bfloat` type reaches the targets without it.
#[test]
fn bf16_rounds_with_cvt_on_sm_80_and_later_and_with_integers_elsewhere() {
    let source = "
kernel k(output: global mut [bf16], a: global [bf16], b: global [bf16]) {
    let i = get_global_id(0);
    output[i] = a[i] * b[i];
}";
    let module = kdsl_frontend::compile_to_ir(source).expect("compiles");
    for (spec, native) in [
        (TargetSpec::spirv(), false),
        (TargetSpec::amdgpu(Some("gfx90a")), false),
        (TargetSpec::ptx(Some("sm_75")), false),
        (TargetSpec::ptx(Some("sm_80")), true),
        (TargetSpec::ptx(Some("sm_90")), true),
    ] {
        let ir = emit_llvm_ir(&module, &spec, &Options::default()).expect("lowers");
        assert_eq!(ir.contains("to bfloat"), native, "{spec}\n{ir}");
        // The integer rounding adds 0x7fff and the kept bit.
        assert_eq!(!ir.contains("32767"), native, "{spec}\n{ir}");
        if native {
            let image =
                kdsl_codegen::compile(&module, &spec, &Options::default()).expect("compiles");
            let ptx = String::from_utf8(image.image.bytes).expect("PTX text");
            assert!(ptx.contains("cvt.rn.bf16.f32"), "{spec}\n{ptx}");
        }
    }
}
