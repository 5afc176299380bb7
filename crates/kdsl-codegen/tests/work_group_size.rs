//! `#[work_group_size]` reaches every backend: SPIR-V `OpExecutionMode LocalSize`, PTX
//! `.reqntid`, and the AMDGPU code object's `.reqd_workgroup_size` and flat work-group size.

use crate::common::{tool, validate};
use kdsl_codegen::{compile, compile_bundle, CodegenError, Options, TargetSpec};
use rspirv::dr::Operand;
use rspirv::spirv::ExecutionMode;
use std::path::Path;
use std::process::Command;

/// The kernels of `tests/kernels/work_group_size.krn` with the sizes they require.
const REQUIRED: [(&str, [u32; 3]); 3] = [
    ("block_sums", [64, 1, 1]),
    ("reverse_tiles", [8, 4, 1]),
    ("group_shape", [4, 2, 2]),
];

fn module(source: &str) -> kdsl_ir::Module {
    kdsl_frontend::compile_to_ir(source).unwrap_or_else(|d| panic!("{d:#?}"))
}

fn work_group_size_kernels() -> kdsl_ir::Module {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/kernels/work_group_size.krn");
    module(&std::fs::read_to_string(path).unwrap())
}

const SAXPY: &str = "kernel saxpy(y: global mut [f32], x: global [f32], a: f32) {\n    let i = get_global_id(0);\n    y[i] = a * x[i] + y[i];\n}\n";

/// Each entry point's name and its `LocalSize` execution mode, if any.
fn spirv_local_sizes(bytes: &[u8]) -> Vec<(String, Option<[u32; 3]>)> {
    let words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let spirv = rspirv::dr::load_words(words).expect("valid SPIR-V");
    spirv
        .entry_points
        .iter()
        .map(|entry| {
            let id = entry.operands[1].unwrap_id_ref();
            let name = entry.operands[2].unwrap_literal_string().to_string();
            let size = spirv.execution_modes.iter().find_map(|mode| {
                match mode.operands.as_slice() {
                    [Operand::IdRef(target), Operand::ExecutionMode(ExecutionMode::LocalSize), Operand::LiteralBit32(x), Operand::LiteralBit32(y), Operand::LiteralBit32(z)]
                        if *target == id =>
                    {
                        Some([*x, *y, *z])
                    }
                    _ => None,
                }
            });
            (name, size)
        })
        .collect()
}

#[test]
fn spirv_entry_points_get_local_size_execution_modes() {
    let artifact = compile(
        &work_group_size_kernels(),
        &TargetSpec::spirv(),
        &Options::default(),
    )
    .unwrap();
    let mut found = spirv_local_sizes(&artifact.image.bytes);
    found.sort();
    let mut expected: Vec<(String, Option<[u32; 3]>)> = REQUIRED
        .iter()
        .map(|(name, size)| (name.to_string(), Some(*size)))
        .collect();
    expected.sort();
    assert_eq!(found, expected);
    let saxpy = compile(&module(SAXPY), &TargetSpec::spirv(), &Options::default()).unwrap();
    assert_eq!(
        spirv_local_sizes(&saxpy.image.bytes),
        [("saxpy".to_string(), None)]
    );
}

#[test]
fn ptx_entries_get_reqntid() {
    for arch in [None, Some("sm_90")] {
        let artifact = compile(
            &work_group_size_kernels(),
            &TargetSpec::ptx(arch),
            &Options::default(),
        )
        .unwrap();
        let ptx = String::from_utf8(artifact.image.bytes).unwrap();
        for (name, [x, y, z]) in REQUIRED {
            let entry = ptx
                .find(&format!(".entry {name}("))
                .unwrap_or_else(|| panic!("no entry {name}"));
            let header = &ptx[entry..entry + ptx[entry..].find('{').unwrap()];
            assert!(
                header.contains(&format!(".reqntid {x}, {y}, {z}")),
                "{name}: {header}"
            );
        }
        let saxpy = compile(&module(SAXPY), &TargetSpec::ptx(arch), &Options::default()).unwrap();
        assert!(!String::from_utf8(saxpy.image.bytes)
            .unwrap()
            .contains(".reqntid"));
    }
}

/// The `amdhsa.kernels` notes of a code object, whitespace collapsed to single spaces.
fn amdgpu_notes(bytes: &[u8], arch: &str) -> String {
    let readobj = tool(&["llvm-readobj-22", "llvm-readobj"]);
    validate(arch, "hsaco", bytes, Command::new(readobj).arg("--notes"))
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn amdgpu_code_objects_record_the_required_and_flat_sizes() {
    for arch in ["gfx90a", "gfx1100"] {
        let artifact = compile(
            &work_group_size_kernels(),
            &TargetSpec::amdgpu(Some(arch)),
            &Options::default(),
        )
        .unwrap();
        let notes = amdgpu_notes(&artifact.image.bytes, arch);
        // Each kernel's entry in the notes runs from `- .args:` to the next one.
        for (name, [x, y, z]) in REQUIRED {
            let kernel = notes
                .split("- .args:")
                .find(|entry| entry.contains(&format!(".name: {name} ")))
                .unwrap_or_else(|| panic!("{arch}: no {name} in {notes}"));
            let total = x * y * z;
            assert!(
                kernel.contains(&format!(".max_flat_workgroup_size: {total} ")),
                "{arch} {name}: {kernel}"
            );
            assert!(
                kernel.contains(&format!(".reqd_workgroup_size: - {x} - {y} - {z} ")),
                "{arch} {name}: {kernel}"
            );
        }
        let saxpy = compile(
            &module(SAXPY),
            &TargetSpec::amdgpu(Some(arch)),
            &Options::default(),
        )
        .unwrap();
        let notes = amdgpu_notes(&saxpy.image.bytes, arch);
        assert!(!notes.contains(".reqd_workgroup_size"), "{notes}");
        assert!(notes.contains(".max_flat_workgroup_size: 1024 "), "{notes}");
    }
}

#[test]
fn sizes_above_what_gpus_run_are_diagnostics_naming_the_target() {
    let source = "#[work_group_size(64, 32)]\nkernel wide(output: global mut [f32]) {\n    output[get_global_id(0)] = 1.0;\n}\n";
    let module = module(source);
    for spec in [TargetSpec::ptx(None), TargetSpec::amdgpu(None)] {
        let error = compile(&module, &spec, &Options::default()).expect_err("2048 work-items");
        let CodegenError::Unsupported(diagnostics) = error else {
            panic!("expected diagnostics, got {error:?}");
        };
        assert_eq!(diagnostics[0].code, "E0601");
        assert!(
            diagnostics[0].message.contains("2048 work-items")
                && diagnostics[0].message.contains(&spec.to_string()),
            "{}",
            diagnostics[0].message
        );
    }
    // SPIR-V devices differ (CPU devices run larger groups): the device decides at launch.
    compile(&module, &TargetSpec::spirv(), &Options::default()).expect("no fixed limit");
}

#[test]
fn bundles_record_sizes_and_constants() {
    let bundle = compile_bundle(
        "work_group_size.krn",
        &work_group_size_kernels(),
        &[TargetSpec::ptx(None)],
        &Options::default(),
    )
    .unwrap();
    for (name, size) in REQUIRED {
        assert_eq!(bundle.kernel(name).unwrap().work_group_size, Some(size));
    }
    let block = bundle.constant("BLOCK").unwrap();
    assert_eq!((block.value.as_u64(), block.defined), (Some(64), false));
    assert_eq!(
        bundle
            .kernel("block_sums")
            .unwrap()
            .check_work_group_size(&[64]),
        Ok(())
    );
    assert!(bundle
        .kernel("block_sums")
        .unwrap()
        .check_work_group_size(&[128])
        .is_err());
}
