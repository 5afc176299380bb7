//! Device functions are inlined within a size budget: a call graph whose paths multiply with
//! its depth compiles in time and memory proportional to its source, into valid images.

use crate::common::{ptxas, scratch_file, tool, validate};
use kdsl_bundle::TargetKind;
use kdsl_codegen::{compile_bundle, emit_llvm_ir, Options, TargetSpec};
use std::process::Command;

/// `levels` functions, each calling the previous one twice (2^levels paths from the kernel),
/// passing a buffer down and with a barrier at the bottom.
fn doubling_chain(levels: usize) -> String {
    let mut source = String::from(
        "fn f0(data: global [u32], x: u32) -> u32 {\n    barrier();\n    return data[x % 64u32] + x;\n}\n",
    );
    for level in 1..levels {
        let previous = level - 1;
        source.push_str(&format!(
            "fn f{level}(data: global [u32], x: u32) -> u32 {{\n    \
             return f{previous}(data, x) * 3u32 + f{previous}(data, x ^ {level}u32);\n}}\n"
        ));
    }
    let last = levels - 1;
    source.push_str(&format!(
        "kernel chain(output: global mut [u32], data: global [u32]) {{\n    \
         let i = get_global_id(0);\n    output[i] = f{last}(data, i);\n}}\n"
    ));
    source
}

#[test]
fn a_doubling_call_chain_compiles_for_every_target() {
    let source = doubling_chain(30);
    let module = kdsl_frontend::compile_to_ir(&source).expect("the chain is valid kdsl");
    let targets = [
        TargetSpec::spirv(),
        TargetSpec::ptx(Some("sm_75")),
        TargetSpec::ptx(Some("sm_90")),
        TargetSpec::amdgpu(Some("gfx90a")),
        TargetSpec::amdgpu(Some("gfx1100")),
    ];
    let bundle = compile_bundle("chain.krn", &module, &targets, &Options::default())
        .unwrap_or_else(|e| panic!("the chain does not compile: {e}"));
    assert_eq!(bundle.images.len(), targets.len());
    let spirv_val = tool(&["spirv-val"]);
    let ptxas = ptxas();
    let readobj = tool(&["llvm-readobj-22", "llvm-readobj"]);
    for image in &bundle.images {
        let name = format!("chain-{}", image.arch);
        match image.target {
            TargetKind::Spirv => {
                validate(&name, "spv", &image.bytes, &mut Command::new(&spirv_val));
            }
            TargetKind::Ptx => {
                let output = scratch_file(&format!("{name}.cubin"), &[]);
                validate(
                    &name,
                    "ptx",
                    &image.bytes,
                    Command::new(&ptxas)
                        .arg(format!("--gpu-name={}", image.arch))
                        .arg("-o")
                        .arg(&output),
                );
                let _ = std::fs::remove_file(output);
            }
            TargetKind::Amdgpu => {
                let notes = validate(
                    &name,
                    "hsaco",
                    &image.bytes,
                    Command::new(&readobj).arg("--notes"),
                );
                assert!(notes.contains("chain"), "{notes}");
            }
        }
    }
}

/// Each level calls the previous one in a loop of 4 iterations, which the front end asks to
/// unroll completely, and once after it: inlined and unrolled, the code grew 5 times per
/// level (6 levels ran past a minute).
#[test]
fn calls_in_unrolled_loops_count_as_often_as_they_are_copied() {
    let mut source = String::from(
        "fn f0(v: global [u32], x: u32) -> u32 {\n    let mut s = 0u32;\n    \
         for i in 0..8u32 { s += v[(x + i) % 64u32]; }\n    return s;\n}\n",
    );
    let levels = 16;
    for level in 1..levels {
        let previous = level - 1;
        source.push_str(&format!(
            "fn f{level}(v: global [u32], x: u32) -> u32 {{\n    let mut s = 0u32;\n    \
             for i in 0..4u32 {{ s += f{previous}(v, x + i); }}\n    \
             return s + f{previous}(v, x * 3u32);\n}}\n"
        ));
    }
    source.push_str(&format!(
        "kernel k(output: global mut [u32], input: global [u32]) {{\n    \
         output[get_global_id(0)] = f{}(input, get_global_id(0));\n}}\n",
        levels - 1
    ));
    let module = kdsl_frontend::compile_to_ir(&source).expect("valid kdsl");
    let targets = [
        TargetSpec::spirv(),
        TargetSpec::ptx(Some("sm_90")),
        TargetSpec::amdgpu(Some("gfx90a")),
    ];
    let bundle = compile_bundle("loops.krn", &module, &targets, &Options::default())
        .unwrap_or_else(|e| panic!("the chain does not compile: {e}"));
    assert_eq!(bundle.images.len(), targets.len());
}

#[test]
fn functions_over_the_budget_stay_calls_and_small_ones_are_inlined() {
    let module = kdsl_frontend::compile_to_ir(&doubling_chain(30)).expect("valid");
    let ir = emit_llvm_ir(&module, &TargetSpec::spirv(), &Options::default()).expect("lowers");
    let defined: Vec<&str> = ir
        .lines()
        .filter(|line| line.starts_with("define internal"))
        .filter_map(|line| line.split('@').nth(1)?.split('(').next())
        .collect();
    // Some levels are far over the budget: real functions, called.
    assert!(!defined.is_empty(), "{ir}");
    for name in &defined {
        let call = format!("@{name}(");
        let calls = ir
            .lines()
            .filter(|line| line.contains("call") && line.contains(&call));
        assert!(calls.count() >= 2, "{name} is called from two places\n{ir}");
    }
    // The bottom of the chain is small and the top called once: both inlined.
    for inlined in ["kdsl.f0", "kdsl.f1", "kdsl.f29"] {
        assert!(!defined.contains(&inlined), "{inlined} is inlined\n{ir}");
    }
}
