//! Unroll requests (`for .. unroll`, `unroll(N)`) reach every target's optimizer:
//! `tests/kernels/unroll.krn` compiled and its code inspected.

use crate::common::llvm_function;
use kdsl_codegen::{compile, emit_llvm_ir, Options, TargetSpec};
use std::path::Path;

fn unroll_module() -> kdsl_ir::Module {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/kernels/unroll.krn");
    let source = std::fs::read_to_string(&path).expect("tests/kernels/unroll.krn");
    kdsl_frontend::compile_to_ir(&source).expect("unroll.krn compiles")
}

/// The lines of one `.entry` of a PTX module.
fn ptx_entry<'a>(ptx: &'a str, kernel: &str) -> Vec<&'a str> {
    let header = format!(".entry {kernel}(");
    let start = ptx
        .lines()
        .position(|line| line.contains(&header))
        .unwrap_or_else(|| panic!("no entry {kernel} in\n{ptx}"));
    let mut lines = Vec::new();
    for line in ptx.lines().skip(start) {
        lines.push(line);
        if line.trim() == "}" {
            break;
        }
    }
    lines
}

/// Whether a branch in `lines` jumps to a label defined before it: a loop.
fn has_back_edge(lines: &[&str]) -> bool {
    let mut labels_seen = Vec::new();
    for line in lines {
        let text = line.trim();
        if let Some(label) = text.strip_suffix(':') {
            labels_seen.push(label.to_string());
        } else if text.contains("bra") {
            let target = text
                .rsplit(|c: char| c.is_whitespace())
                .next()
                .unwrap_or("")
                .trim_end_matches(';');
            if labels_seen.iter().any(|label| label == target) {
                return true;
            }
        }
    }
    false
}

#[test]
fn a_fully_unrolled_ptx_loop_has_no_back_edge() {
    let module = unroll_module();
    let artifact = compile(
        &module,
        &TargetSpec::ptx(Some("sm_90")),
        &Options::default(),
    )
    .expect("compiles for PTX");
    let ptx = String::from_utf8(artifact.image.bytes).expect("PTX text");
    let full = ptx_entry(&ptx, "full");
    assert!(
        !has_back_edge(&full),
        "`full` still loops:\n{}",
        full.join("\n")
    );
    let loads = full.iter().filter(|l| l.contains("ld.global")).count();
    assert!(
        loads >= 32,
        "expected 16 unrolled iterations of two loads, found {loads}"
    );
    // `unroll(1)` keeps a loop the optimizer would otherwise unroll.
    let rolled = ptx_entry(&ptx, "rolled");
    assert!(
        has_back_edge(&rolled),
        "`rolled` lost its loop:\n{}",
        rolled.join("\n")
    );
    // `unroll(4)`: four loads in the unrolled loop, one in the remainder loop.
    let partial = ptx_entry(&ptx, "partial");
    assert!(has_back_edge(&partial));
    let loads = partial.iter().filter(|l| l.contains("ld.global")).count();
    assert!(
        loads >= 5,
        "expected an unrolled body and a remainder, found {loads} loads:\n{}",
        partial.join("\n")
    );
}

#[test]
fn unroll_requests_are_honoured_on_every_target() {
    let module = unroll_module();
    for spec in [
        TargetSpec::spirv(),
        TargetSpec::ptx(Some("sm_90")),
        TargetSpec::amdgpu(Some("gfx90a")),
    ] {
        let ir = emit_llvm_ir(&module, &spec, &Options::default()).expect("compiles");
        let full = llvm_function(&ir, "full");
        assert!(
            !full.contains(" phi "),
            "{spec}: `full` still loops:\n{full}"
        );
        let rolled = llvm_function(&ir, "rolled");
        assert!(
            rolled.contains(" phi "),
            "{spec}: `rolled` lost its loop:\n{rolled}"
        );
        let partial = llvm_function(&ir, "partial");
        let loads = partial.matches("load float").count();
        assert!(
            loads >= 5,
            "{spec}: `partial` has {loads} loads:\n{partial}"
        );
    }
}

#[test]
fn without_optimization_the_requests_are_loop_metadata() {
    let module = unroll_module();
    let ir = emit_llvm_ir(&module, &TargetSpec::ptx(None), &Options::with_opt_level(0))
        .expect("compiles");
    assert!(ir.contains("!{!\"llvm.loop.unroll.full\"}"), "{ir}");
    assert!(ir.contains("!{!\"llvm.loop.unroll.count\", i32 4}"), "{ir}");
    assert!(ir.contains("!{!\"llvm.loop.unroll.disable\"}"), "{ir}");
}
