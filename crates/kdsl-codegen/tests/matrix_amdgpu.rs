//! Matrix tiles on AMDGPU (`lower/matrix_amdgpu.rs`), checked statically (no AMD GPU runs
//! here): the LLVM IR calls each matrix intrinsic with fragments of the types LLVM declares it
//! with, the linked code objects contain the MFMA/WMMA instructions (llvm-objdump), keep the
//! fragments in registers where the tiles are used whole, and the bundle records which images
//! use matrix units. The fragment layouts themselves are checked by a host emulation (unit test
//! `lower::matrix_amdgpu::tests`).

use crate::common::{artifact, tool, validate};
use kdsl_codegen::{compile_bundle, emit_llvm_ir, Options, TargetSpec};
use std::process::Command;

fn module(name: &str) -> kdsl_ir::Module {
    let path = kdsl_testkit::files::workspace_root().join(format!("tests/kernels/{name}.krn"));
    let source = std::fs::read_to_string(path).unwrap();
    kdsl_frontend::compile_to_ir(&source).unwrap_or_else(|_| panic!("{name}.krn compiles"))
}

/// (kernel file, processor, the intrinsic call as LLVM declares it or `None` for the plain
/// lowering, the instruction in the code object).
const CASES: &[(&str, &str, Option<&str>, Option<&str>)] = &[
    (
        "matrix",
        "gfx90a",
        Some("call <4 x float> @llvm.amdgcn.mfma.f32.16x16x16f16(<4 x half> %"),
        Some("v_mfma_f32_16x16x16f16 "),
    ),
    (
        "matrix",
        "gfx908",
        Some("call <4 x float> @llvm.amdgcn.mfma.f32.16x16x16f16(<4 x half> %"),
        Some("v_mfma_f32_16x16x16f16 "),
    ),
    (
        "matrix",
        "gfx942",
        Some("call <4 x float> @llvm.amdgcn.mfma.f32.16x16x16f16(<4 x half> %"),
        Some("v_mfma_f32_16x16x16_f16 "),
    ),
    (
        "matrix",
        "gfx950",
        Some("call <4 x float> @llvm.amdgcn.mfma.f32.16x16x16f16(<4 x half> %"),
        Some("v_mfma_f32_16x16x16_f16 "),
    ),
    (
        "matrix",
        "gfx9-4-generic",
        Some("call <4 x float> @llvm.amdgcn.mfma.f32.16x16x16f16(<4 x half> %"),
        Some("v_mfma_f32_16x16x16_f16 "),
    ),
    (
        "matrix",
        "gfx1100",
        Some("call <8 x float> @llvm.amdgcn.wmma.f32.16x16x16.f16.v8f32.v16f16(<16 x half> %"),
        Some("v_wmma_f32_16x16x16_f16 "),
    ),
    (
        "matrix",
        "gfx1151",
        Some("call <8 x float> @llvm.amdgcn.wmma.f32.16x16x16.f16.v8f32.v16f16(<16 x half> %"),
        Some("v_wmma_f32_16x16x16_f16 "),
    ),
    (
        "matrix",
        "gfx11-generic",
        Some("call <8 x float> @llvm.amdgcn.wmma.f32.16x16x16.f16.v8f32.v16f16(<16 x half> %"),
        Some("v_wmma_f32_16x16x16_f16 "),
    ),
    ("matrix", "gfx9-generic", None, None),
    ("matrix", "gfx1030", None, None),
    ("matrix", "gfx1200", None, None),
    (
        "matrix_tf32",
        "gfx90a",
        Some("call <4 x float> @llvm.amdgcn.mfma.f32.16x16x4f32(float %"),
        Some("v_mfma_f32_16x16x4f32 "),
    ),
    (
        "matrix_tf32",
        "gfx942",
        Some("call <4 x float> @llvm.amdgcn.mfma.f32.16x16x8.xf32(<2 x float> %"),
        Some("v_mfma_f32_16x16x8_xf32 "),
    ),
    (
        "matrix_tf32",
        "gfx950",
        Some("call <4 x float> @llvm.amdgcn.mfma.f32.16x16x4f32(float %"),
        Some("v_mfma_f32_16x16x4_f32 "),
    ),
    // RDNA3 has no tf32 unit: the plain lowering.
    ("matrix_tf32", "gfx1100", None, None),
    (
        "matrix_i8",
        "gfx90a",
        Some("call <4 x i32> @llvm.amdgcn.mfma.i32.16x16x16i8(i32 %"),
        Some("v_mfma_i32_16x16x16i8 "),
    ),
    (
        "matrix_i8",
        "gfx908",
        Some("call <4 x i32> @llvm.amdgcn.mfma.i32.16x16x16i8(i32 %"),
        Some("v_mfma_i32_16x16x16i8 "),
    ),
    // gfx94x dropped the k16 instruction: the k32 one, half of each lane's bytes zero.
    (
        "matrix_i8",
        "gfx942",
        Some("call <4 x i32> @llvm.amdgcn.mfma.i32.16x16x32.i8(i64 %"),
        Some("v_mfma_i32_16x16x32_i8 "),
    ),
    (
        "matrix_i8",
        "gfx950",
        Some("call <4 x i32> @llvm.amdgcn.mfma.i32.16x16x32.i8(i64 %"),
        Some("v_mfma_i32_16x16x32_i8 "),
    ),
    (
        "matrix_i8",
        "gfx9-4-generic",
        Some("call <4 x i32> @llvm.amdgcn.mfma.i32.16x16x32.i8(i64 %"),
        Some("v_mfma_i32_16x16x32_i8 "),
    ),
    (
        "matrix_i8",
        "gfx1100",
        Some("call <8 x i32> @llvm.amdgcn.wmma.i32.16x16x16.iu8.v8i32.v4i32(i1 true, <4 x i32> %"),
        Some("v_wmma_i32_16x16x16_iu8 "),
    ),
    ("matrix_i8", "gfx1030", None, None),
    // bf16 as its 16 bits: the k16 MFMA from gfx90a on (gfx908 has k8 only: plain), WMMA.
    (
        "matrix_bf16",
        "gfx90a",
        Some("call <4 x float> @llvm.amdgcn.mfma.f32.16x16x16bf16.1k(<4 x i16> %"),
        Some("v_mfma_f32_16x16x16bf16_1k "),
    ),
    (
        "matrix_bf16",
        "gfx942",
        Some("call <4 x float> @llvm.amdgcn.mfma.f32.16x16x16bf16.1k(<4 x i16> %"),
        Some("v_mfma_f32_16x16x16_bf16 "),
    ),
    ("matrix_bf16", "gfx908", None, None),
    (
        "matrix_bf16",
        "gfx1100",
        Some("call <8 x float> @llvm.amdgcn.wmma.f32.16x16x16.bf16.v8f32.v16i16(<16 x i16> %"),
        Some("v_wmma_f32_16x16x16_bf16 "),
    ),
    // MFMA has no u8: the plain lowering; RDNA3's WMMA takes unsigned bytes.
    ("matrix_u8", "gfx90a", None, None),
    ("matrix_u8", "gfx942", None, None),
    (
        "matrix_u8",
        "gfx1100",
        Some("call <8 x i32> @llvm.amdgcn.wmma.i32.16x16x16.iu8.v8i32.v4i32(i1 false, <4 x i32> %"),
        Some("v_wmma_i32_16x16x16_iu8 "),
    ),
];

#[test]
fn llvm_ir_calls_the_matrix_intrinsics_with_fragments_of_their_types() {
    for &(name, arch, call, _) in CASES {
        let ir = emit_llvm_ir(
            &module(name),
            &TargetSpec::amdgpu(Some(arch)),
            &Options::default(),
        )
        .unwrap_or_else(|e| panic!("{name} for {arch}: {e}"));
        match call {
            Some(call) => {
                assert!(ir.contains(call), "{name} {arch}: no `{call}`:\n{ir}");
                // The accumulator operand, of the result's type, and the MFMA immediates (no
                // broadcast).
                let line = ir.lines().find(|line| line.contains(call)).unwrap();
                let result = call["call ".len()..].split(" @").next().unwrap();
                let accumulator = format!(", {result} %");
                assert!(line.contains(&accumulator), "{arch}: {line}");
                assert_eq!(
                    line.ends_with("i32 0, i32 0, i32 0)"),
                    call.contains("mfma"),
                    "{arch}: {line}"
                );
            }
            None => assert!(
                !ir.contains("llvm.amdgcn.mfma") && !ir.contains("llvm.amdgcn.wmma"),
                "{name} {arch} should take the plain lowering"
            ),
        }
    }
}

fn disassembly(name: &str, arch: &str) -> String {
    let spec = TargetSpec::amdgpu(Some(arch));
    let artifact = artifact(name, &module(name), &spec, false)
        .unwrap_or_else(|e| panic!("{name} for {arch}: {e}"));
    let objdump = tool(&["llvm-objdump-22", "llvm-objdump"]);
    validate(
        &format!("{name}-{arch}"),
        "hsaco",
        &artifact.image.bytes,
        Command::new(objdump).arg("-d"),
    )
}

#[test]
fn code_objects_contain_the_matrix_instructions() {
    for &(name, arch, _, instruction) in CASES {
        let text = disassembly(name, arch);
        assert!(text.contains("s_endpgm"), "{name} {arch}: no code:\n{text}");
        match instruction {
            Some(instruction) => {
                assert!(
                    text.contains(instruction),
                    "{name} {arch}: no {instruction}"
                )
            }
            None => assert!(
                !text.contains("v_mfma") && !text.contains("v_wmma"),
                "{name} {arch}"
            ),
        }
    }
}

/// Fragments stay in registers: no scratch memory in any matrix kernel (the plain lowering
/// needs some), also where tiles are declared (and so zeroed) but filled later.
#[test]
fn fragments_stay_in_registers() {
    for (name, arch) in [
        ("matrix", "gfx90a"),
        ("matrix", "gfx1100"),
        ("matrix_tf32", "gfx90a"),
        ("matrix_tf32", "gfx942"),
        ("matrix_i8", "gfx90a"),
        ("matrix_i8", "gfx942"),
        ("matrix_i8", "gfx1100"),
        ("matrix_u8", "gfx1100"),
    ] {
        let spec = TargetSpec::amdgpu(Some(arch));
        let artifact = artifact(name, &module(name), &spec, false).unwrap();
        let notes = scratch_sizes(&artifact.image.bytes);
        assert!(
            !notes.is_empty() && notes.iter().all(|size| *size == 0),
            "{name} {arch}: private segment sizes {notes:?}"
        );
    }
    // The example's two fragment sets of 4 x 4 tiles outgrow RDNA3's registers (a WMMA `A` or
    // `B` fragment is eight of them, MFMA's two): there the GEMM with one set stands in.
    for (file, kernel, arch) in [
        ("examples/hgemm.krn", "hgemm", "gfx90a"),
        ("tests/kernels/matrix_ring.krn", "hgemm_ring", "gfx90a"),
        ("tests/kernels/matrix_ring.krn", "hgemm_ring", "gfx1100"),
    ] {
        let path = kdsl_testkit::files::workspace_root().join(file);
        let source = std::fs::read_to_string(path).unwrap();
        let module = kdsl_frontend::compile_to_ir(&source).unwrap();
        let spec = TargetSpec::amdgpu(Some(arch));
        // Keyed by the file's stem, as `common::kernel_modules` names it: the image is shared.
        let stem = file.trim_end_matches(".krn").rsplit('/').next().unwrap();
        let artifact = artifact(stem, &module, &spec, false).unwrap();
        let sizes = scratch_sizes(&artifact.image.bytes);
        assert_eq!(sizes, [0], "{kernel} {arch}");
    }
}

/// Each kernel's `.private_segment_fixed_size` (scratch bytes per work-item) in a code object.
fn scratch_sizes(code_object: &[u8]) -> Vec<u64> {
    let readobj = tool(&["llvm-readobj-22", "llvm-readobj"]);
    validate(
        "notes",
        "hsaco",
        code_object,
        Command::new(readobj).arg("--notes"),
    )
    .lines()
    .filter_map(|line| line.trim().strip_prefix(".private_segment_fixed_size:"))
    .map(|size| size.trim().parse().unwrap())
    .collect()
}

/// `mma_global` in the disassembly: no scratch accesses where the matrix units are used.
#[test]
fn fragments_stay_in_registers_in_the_disassembly() {
    // gfx1030 (no matrix units) is the control: the plain lowering's tiles are in scratch.
    for (arch, native) in [
        ("gfx90a", true),
        ("gfx942", true),
        ("gfx1100", true),
        ("gfx1030", false),
    ] {
        let text = disassembly("matrix", arch);
        let start = text.find("<mma_global>:").expect("mma_global");
        let end = text[start..].find("s_endpgm").unwrap() + start;
        let body = &text[start..end];
        let scratch = body.contains("scratch_") || body.contains("buffer_store");
        assert_eq!(scratch, !native, "{arch}:\n{body}");
    }
}

#[test]
fn bundles_record_the_images_on_matrix_units() {
    let targets = [
        TargetSpec::spirv(),
        TargetSpec::amdgpu(Some("gfx90a")),
        TargetSpec::amdgpu(Some("gfx1100")),
        TargetSpec::amdgpu(Some("gfx1030")),
    ];
    for (name, expected) in [
        ("matrix", [false, true, true, false]),
        ("matrix_tf32", [false, true, false, false]),
        ("matrix_i8", [false, true, true, false]),
        ("matrix_u8", [false, false, true, false]),
    ] {
        let bundle = compile_bundle(name, &module(name), &targets, &Options::default()).unwrap();
        let flags: Vec<bool> = bundle.images.iter().map(|i| i.matrix_units).collect();
        assert_eq!(flags, expected, "{name}");
    }
    // Checked mode takes the plain lowering everywhere.
    let checked = Options {
        checked: true,
        ..Options::default()
    };
    let bundle = compile_bundle("matrix", &module("matrix"), &targets, &checked).unwrap();
    assert!(bundle.images.iter().all(|i| !i.matrix_units));
}

/// AMD images run matrix tiles on their units but matrix groups through the plain definition,
/// so no AMD image asks the runtime for whole matrix groups.
#[test]
fn amd_images_run_no_matrix_groups_on_units() {
    let spec = TargetSpec::amdgpu(Some("gfx90a"));
    let tiles = artifact("matrix", &module("matrix"), &spec, false).unwrap();
    assert!(tiles.image.matrix_units && !tiles.image.matrix_groups);
    let groups = artifact("matrix_group", &module("matrix_group"), &spec, false).unwrap();
    assert!(!groups.image.matrix_units && !groups.image.matrix_groups);
}
