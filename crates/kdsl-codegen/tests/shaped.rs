//! Multi-dimensional buffers on the CPU device's target: the copy of a body for contiguous rows
//! keeps its unit-stride accesses through LLVM's optimizer (`lower/shaped.rs`), and GPUs get
//! no fence. `tests/kernels/shaped_buffers.krn` compiled and its LLVM IR inspected.

use crate::common::{kernel_modules, llvm_function};
use kdsl_codegen::{emit_llvm_ir, Options, TargetSpec};

fn shaped_buffers() -> &'static kdsl_ir::Module {
    kernel_modules()
        .iter()
        .find(|(stem, _)| stem == "shaped_buffers")
        .map(|(_, module)| module)
        .expect("tests/kernels/shaped_buffers.krn")
}

const FENCE: &str = "fence syncscope(\"singlethread\")";

#[test]
fn the_contiguous_copy_is_not_merged_with_the_strided_one_on_spirv() {
    let ir = emit_llvm_ir(shaped_buffers(), &TargetSpec::spirv(), &Options::default())
        .expect("compiles for SPIR-V");
    for kernel in ["scale2d", "stencil"] {
        let function = llvm_function(&ir, kernel);
        assert_eq!(
            function.matches(FENCE).count(),
            1,
            "`{kernel}`: one fence ends the contiguous copy:\n{function}"
        );
        // A merged access loads through a phi of the two copies' addresses: a gather.
        assert!(
            !function.contains("phi ptr addrspace(1)"),
            "`{kernel}`: the copies' accesses were merged:\n{function}"
        );
    }
}

#[test]
fn a_constant_offset_is_added_after_the_widening() {
    let ir = emit_llvm_ir(shaped_buffers(), &TargetSpec::spirv(), &Options::default())
        .expect("compiles for SPIR-V");
    let stencil = llvm_function(&ir, "stencil");
    // `x - 1` widened as `zext(x + -1)` becomes `(x + 0xffffffff) & 0xffffffff` in 64 bits,
    // which hides that `x - 1` and `x` are neighbours.
    assert!(
        !stencil.contains("4294967295"),
        "`x - 1` wraps in 32 bits before the widening:\n{stencil}"
    );
    // In the contiguous copy the left neighbour is the centre's address minus 4 bytes.
    assert!(
        stencil.contains("i64 -4"),
        "no constant offset of -4 bytes:\n{stencil}"
    );
}

#[test]
fn gpu_targets_get_no_fence() {
    for spec in [
        TargetSpec::ptx(Some("sm_90")),
        TargetSpec::amdgpu(Some("gfx90a")),
    ] {
        let ir = emit_llvm_ir(shaped_buffers(), &spec, &Options::default()).expect("compiles");
        assert!(!ir.contains(FENCE), "{spec}: a single-thread fence:\n{ir}");
    }
}
