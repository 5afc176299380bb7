//! Asynchronous copies (`async_copy`, `async_commit`, `async_wait`): `cp.async` on NVIDIA sm_80
//! and later, plain loads and stores on every other target and in checked mode.

use kdsl_codegen::{emit_llvm_ir, Options, TargetSpec};

fn async_copy_kernels() -> kdsl_ir::Module {
    let path = kdsl_testkit::files::workspace_root().join("tests/kernels/async_copy.krn");
    let source = std::fs::read_to_string(&path).expect("tests/kernels/async_copy.krn");
    kdsl_frontend::compile_to_ir(&source).expect("async_copy.krn compiles")
}

fn llvm_ir(target: &TargetSpec, checked: bool) -> String {
    let options = Options {
        checked,
        ..Options::default()
    };
    emit_llvm_ir(&async_copy_kernels(), target, &options).expect("compiles")
}

#[test]
fn copies_are_cp_async_on_sm_80_and_later() {
    let ir = llvm_ir(&TargetSpec::ptx(Some("sm_90")), false);
    for wanted in [
        // 16 bytes bypass L1; 8 and 4 bytes have only the L1 form.
        "@llvm.nvvm.cp.async.cg.shared.global.16(",
        "@llvm.nvvm.cp.async.ca.shared.global.8(",
        "@llvm.nvvm.cp.async.ca.shared.global.4(",
        "@llvm.nvvm.cp.async.commit.group()",
        "@llvm.nvvm.cp.async.wait.group(i32 1)",
        "@llvm.nvvm.cp.async.wait.group(i32 0)",
    ] {
        assert!(ir.contains(wanted), "no `{wanted}` in:\n{ir}");
    }
}

#[test]
fn copies_are_plain_loads_and_stores_elsewhere_and_in_checked_mode() {
    for (target, checked) in [
        (TargetSpec::ptx(Some("sm_75")), false),
        (TargetSpec::ptx(Some("sm_90")), true),
        (TargetSpec::spirv(), false),
    ] {
        let ir = llvm_ir(&target, checked);
        assert!(
            !ir.contains("cp.async"),
            "{target:?} (checked: {checked}) copies asynchronously"
        );
        assert!(ir.contains("store"), "{target:?}: no stores");
    }
}

#[test]
fn a_copied_buffer_must_be_aligned_to_the_copy() {
    let module = async_copy_kernels();
    let kernel = |name: &str| {
        let index = module
            .functions
            .iter()
            .position(|function| function.name == name)
            .expect("the kernel");
        module.buffer_alignments(kdsl_ir::FunctionId(index as u32))
    };
    // async_stream(output, input, blocks): four f32 at a time, through `fetch`.
    assert_eq!(kernel("async_stream"), [0, 16, 0]);
    // async_sizes(outputs..., bytes, halves, pairs, ints, staging): 16, 16, 8 and 4 bytes (the
    // last is an `i32`'s own alignment, so nothing beyond it).
    assert_eq!(kernel("async_sizes"), [0, 0, 0, 0, 16, 16, 8, 0, 0]);
}

/// Local memory is addressed in 32 bits on NVIDIA (`--nvptx-short-ptr`, as nvcc does), also
/// after an AMDGPU link, whose in-process lld resets LLVM's options.
#[test]
fn local_addresses_are_32_bit_on_ptx_after_an_amdgpu_link() {
    let module = async_copy_kernels();
    for round in 0..2 {
        if round == 1 {
            kdsl_codegen::compile(&module, &TargetSpec::amdgpu(None), &Options::default())
                .expect("AMDGPU");
        }
        let ptx = kdsl_codegen::compile(
            &module,
            &TargetSpec::ptx(Some("sm_90")),
            &Options::default(),
        )
        .expect("PTX")
        .image
        .bytes;
        let ptx = String::from_utf8(ptx).expect("PTX is text");
        assert!(
            ptx.contains("cp.async.cg.shared.global [%r"),
            "round {round}: no copy to a 32-bit local address in:\n{ptx}"
        );
        assert!(
            !ptx.contains("cp.async.cg.shared.global [%rd"),
            "round {round}"
        );
    }
}
