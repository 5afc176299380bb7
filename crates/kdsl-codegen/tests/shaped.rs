//! Multi-dimensional buffers: a constant added to or subtracted from a dimension index
//! (`x - 1`) is added after the widening, so the neighbours of an access stay a constant offset
//! apart (`lower/shaped.rs`). `tests/kernels/shaped_buffers.krn` compiled and its LLVM IR
//! inspected.

use crate::common::{kernel_modules, llvm_function};
use kdsl_codegen::{emit_llvm_ir, Options, TargetSpec};

fn shaped_buffers() -> &'static kdsl_ir::Module {
    kernel_modules()
        .iter()
        .find(|(stem, _)| stem == "shaped_buffers")
        .map(|(_, module)| module)
        .expect("tests/kernels/shaped_buffers.krn")
}

#[test]
fn a_constant_offset_is_added_after_the_widening() {
    for spec in [
        TargetSpec::spirv(),
        TargetSpec::ptx(Some("sm_90")),
        TargetSpec::amdgpu(Some("gfx90a")),
    ] {
        let ir = emit_llvm_ir(shaped_buffers(), &spec, &Options::default()).expect("compiles");
        // `x - 1` widened as `zext(x + -1)` becomes `(x + 0xffffffff) & 0xffffffff` in 64
        // bits, which hides that `x - 1` and `x` are neighbours (the CPU device gathers them).
        // (LLVM quotes a name with `$`.)
        for entry in ["stencil", "\"stencil$contiguous\""] {
            let function = llvm_function(&ir, entry);
            assert!(
                !function.contains("4294967295"),
                "{spec}: `x - 1` wraps in 32 bits before the widening:\n{function}"
            );
        }
        // In the contiguous entry, the left neighbour is the centre's address minus 4 bytes.
        let stencil = llvm_function(&ir, "\"stencil$contiguous\"");
        assert!(
            stencil.contains("i64 -4"),
            "{spec}: no constant offset of -4 bytes:\n{stencil}"
        );
    }
}
