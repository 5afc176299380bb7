//! Every example and test kernel compiled for every target, checked by the target's own
//! validator (`spirv-val`, `ptxas`, `llvm-readobj`), and the target-support diagnostics. The
//! optimized LLVM IR of each file is a file test (`filetests.rs`). A missing validator fails the test: run
//! `scripts/setup.sh`.

use crate::common::{
    artifact, kernel_modules, ptxas, scratch_file, timed_artifact, tool, GENERATED_GEMMS,
};
use kdsl_bundle::{Bundle, TargetKind};
use kdsl_codegen::{compile, compile_bundle, emit_llvm_ir, CodegenError, Options, TargetSpec};
use std::process::Command;

/// `examples/*.krn` and `tests/kernels/*.krn`, as (file stem, source).
fn kernel_sources() -> Vec<(String, String)> {
    let sources = kdsl_testkit::files::kernel_sources();
    assert!(
        sources.len() >= 13,
        "expected the examples and test kernels"
    );
    sources
}

fn module_of(name: &str, source: &str) -> kdsl_ir::Module {
    kdsl_frontend::compile_to_ir(source).unwrap_or_else(|diagnostics| {
        panic!(
            "{name}.krn does not compile:\n{}",
            kdsl_frontend::render_diagnostics(&format!("{name}.krn"), source, &diagnostics, false)
        )
    })
}

fn kernel_names(module: &kdsl_ir::Module) -> Vec<String> {
    module.kernels().map(|k| k.name.clone()).collect()
}
fn run(command: &mut Command, what: &str) -> String {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{what} failed:\n{text}");
    text
}

/// A kernel file compiled for `spec` once for the binary (`common::artifact`).
fn cached(
    name: &str,
    module: &kdsl_ir::Module,
    spec: &TargetSpec,
) -> std::sync::Arc<kdsl_codegen::Artifact> {
    artifact(name, module, spec, false).unwrap_or_else(|e| panic!("{name}.krn for {spec}: {e}"))
}

fn compile_ok(name: &str, module: &kdsl_ir::Module, spec: &TargetSpec) -> kdsl_codegen::Artifact {
    compile(module, spec, &Options::default())
        .unwrap_or_else(|e| panic!("{name}.krn for {spec}: {e}"))
}

/// Whether `module` has sub-group tf32 or bf16 tiles, which NVIDIA processors before sm_80
/// cannot run (matrix-group ones compile for every processor).
fn needs_sm_80(module: &kdsl_ir::Module) -> bool {
    kdsl_ir::analysis::ModuleFeatures::new(module)
        .matrix_shapes()
        .iter()
        .any(|shape| {
            [
                kdsl_ir::MatrixShape::Tf32M16N16K8,
                kdsl_ir::MatrixShape::Bf16M16N16K16,
            ]
            .contains(shape)
        })
}

/// `module` is refused for `spec` with E0601 diagnostics that name the target.
fn refused_naming_the_target(name: &str, module: &kdsl_ir::Module, spec: &TargetSpec) {
    let error = compile(module, spec, &Options::default())
        .expect_err(&format!("{name}.krn compiled for {spec}"));
    let diagnostics = error.into_diagnostics();
    let target = format!("`{}:{}`", spec.kind, spec.resolved_arch());
    assert!(
        !diagnostics.is_empty()
            && diagnostics
                .iter()
                .all(|d| d.code == "E0601" && d.message.contains(&target)),
        "{name}.krn for {spec}: {diagnostics:?}"
    );
}

/// A kernel with matrix-group statements whose declared work-group is no multiple of 128 is
/// refused where matrix units run them (sm_90a's wgmma, sm_80 and later's mma.sync: whole
/// groups of four warps), naming the target, and compiles for the other targets, whose plain
/// definition runs in any work-group.
#[test]
fn matrix_groups_need_whole_groups_on_matrix_units() {
    let source = "#[work_group_size(64)]\n\
        kernel half(d: global mut [f32], a: local mut [f16], b: local mut [f16]) {\n\
            let mut acc: [f32; 4];\n\
            matrix_group_mma(acc, a, 0, 4096, b, 0, 4096, 16);\n\
            d[get_local_id(0)] = acc[0];\n\
        }\n";
    let module = module_of("half_group", source);
    for arch in ["sm_90a", "sm_90", "sm_80"] {
        refused_naming_the_target("half_group", &module, &TargetSpec::ptx(Some(arch)));
    }
    compile_ok("half_group", &module, &TargetSpec::ptx(Some("sm_75")));
    compile_ok("half_group", &module, &TargetSpec::spirv());
}

/// Runs ptxas for `arch` on `ptx` (the module `name`'s), failing the test where it refuses it.
fn ptxas_accepts(name: &str, ptx: &str, arch: &str) {
    let file = scratch_file(&format!("{name}-{arch}.ptx"), ptx.as_bytes());
    run(
        Command::new(ptxas())
            .arg(format!("-arch={arch}"))
            .arg(&file)
            .arg("-o")
            .arg("/dev/null"),
        &format!("ptxas -arch={arch} on {name}"),
    );
    let _ = std::fs::remove_file(file);
}

/// Tile copies and stores reach sm_90a's tensor memory accelerator in kernels' entries for
/// contiguous rows, one `cp.async.bulk.tensor` per copy or store through a 128-byte
/// `grid_constant` tensor map parameter per buffer and row count, which the image lists; kernels' own entries (any
/// strides), modules whose device functions copy tiles, other processors and SYCLBIN images
/// copy without tensor maps. ptxas accepts it.
#[test]
fn tile_copies_use_tensor_maps_on_sm_90a() {
    let name = "tile_copies";
    let path = kdsl_testkit::files::workspace_root().join(format!("tests/kernels/{name}.krn"));
    let module = module_of(name, &std::fs::read_to_string(path).unwrap());
    let artifact = compile_ok(name, &module, &TargetSpec::ptx(Some("sm_90a")));
    let ptx = String::from_utf8(artifact.image.bytes.clone()).unwrap();
    let entry = |kernel: &str| {
        let start = ptx.find(&format!(".entry {kernel}(")).expect(kernel);
        let rest = &ptx[start + 1..];
        let end = rest.find(".entry").map_or(ptx.len(), |end| start + 1 + end);
        &ptx[start..end]
    };
    let tensor_copy = "cp.async.bulk.tensor.2d.shared::cluster.global.tile";
    let map_parameter = ".param .align 64 .b8";
    assert_eq!(
        entry("tile_roundtrip$contiguous")
            .matches(tensor_copy)
            .count(),
        2
    );
    assert_eq!(
        entry("tile_roundtrip$contiguous")
            .matches(map_parameter)
            .count(),
        1
    );
    assert_eq!(
        entry("ring_row_sums$contiguous")
            .matches(tensor_copy)
            .count(),
        2
    );
    // Stores: one bulk group each, the maps fenced from the local writes, a wait before the
    // area is written again, and one before the kernel returns (its local memory ends).
    let stores = entry("tile_store_blocks$contiguous");
    let tensor_store = "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group";
    assert!(stores.contains(tensor_store) && stores.contains("fence.proxy.async.shared::cta"));
    assert!(stores.contains("cp.async.bulk.wait_group 0;"));
    assert!(stores.contains("cp.async.bulk.wait_group.read 0;"));
    assert!(!stores.contains("mbarrier"), "stores need no slots");
    for own in ["tile_roundtrip", "ring_row_sums", "tile_store_blocks"] {
        assert!(!entry(own).contains(tensor_copy) && !entry(own).contains(map_parameter));
        assert!(!entry(own).contains(tensor_store));
    }
    let listed: Vec<(&str, usize)> = artifact
        .image
        .tensor_maps
        .iter()
        .map(|entry| (entry.entry.as_str(), entry.maps.len()))
        .collect();
    assert_eq!(
        listed,
        [
            ("tile_roundtrip$contiguous", 1),
            ("ring_row_sums$contiguous", 1),
            ("tile_store_blocks$contiguous", 1)
        ]
    );
    let store_map = &artifact.image.tensor_maps[2].maps[0];
    assert_eq!(
        (store_map.buffer, store_map.rows, store_map.columns),
        (0, 8, 32)
    );
    let map = &artifact.image.tensor_maps[1].maps[0];
    assert_eq!((map.buffer, map.rows, map.columns), (1, 32, 64));
    // The runtime's image check counts the maps after the parameters.
    let infos = kdsl_codegen::kernel_infos(&module, false);
    let image = &artifact.image;
    kdsl_bundle::ptx_check::check_ptx_image(&image.bytes, &infos, "", &image.tensor_maps).unwrap();
    let without = kdsl_bundle::ptx_check::check_ptx_kernels(&image.bytes, &infos, "");
    assert!(without.unwrap_err().contains("7 parameters in the image"));
    ptxas_accepts(name, &ptx, "sm_90a");
    let plain_options = Options {
        nvptx: kdsl_codegen::nvptx::Options {
            plain_tile_copies: true,
            ..Default::default()
        },
        ..Options::default()
    };
    // A device function that waits: its plain wait would not wait for a tensor copy.
    let split = module_of(
        "split_wait",
        "fn settle(slot: u32) {\n\
            async_tile_wait(slot);\n\
        }\n\
        kernel split_wait(out: global mut [f32], a: global [[f32]]) {\n\
            local tile: [f32; 256];\n\
            async_tile_copy(tile[0], a[0, 0], 8, 1);\n\
            settle(1);\n\
            out[get_local_id(0)] = tile[get_local_id(0)];\n\
        }\n",
    );
    let image = compile_ok("split_wait", &split, &TargetSpec::ptx(Some("sm_90a"))).image;
    let text = String::from_utf8(image.bytes.clone()).unwrap();
    assert!(!text.contains("cp.async.bulk") && image.tensor_maps.is_empty());
    for (spec, options) in [
        (TargetSpec::ptx(Some("sm_90")), Options::default()),
        (TargetSpec::ptx(Some("sm_90a")), plain_options),
    ] {
        let plain = compile(&module, &spec, &options).expect("compiles");
        let text = String::from_utf8(plain.image.bytes.clone()).unwrap();
        assert!(!text.contains("cp.async.bulk") && plain.image.tensor_maps.is_empty());
    }
}

/// Matrix-group tiles reach sm_90a's `wgmma` (one instruction per 16 of depth, in an assembly
/// block that ptxas accepts for sm_90a), `mma.sync` per warp on sm_80 and sm_90, and the plain
/// definition on sm_75.
#[test]
fn matrix_groups_use_the_matrix_units_each_processor_has() {
    let name = "matrix_group";
    let path = kdsl_testkit::files::workspace_root().join(format!("tests/kernels/{name}.krn"));
    let module = module_of(name, &std::fs::read_to_string(path).unwrap());
    let spec = TargetSpec::ptx(Some("sm_90a"));
    let artifact = compile_ok(name, &module, &spec);
    let ptx = String::from_utf8(artifact.image.bytes.clone()).unwrap();
    assert!(ptx.contains(".target sm_90a"), "{ptx}");
    let count = |pattern: &str| ptx.matches(pattern).count();
    // The instructions of each kernel (its `.entry` up to the next).
    let in_kernel = |kernel: &str, instruction: &str| {
        let start = ptx.find(&format!(".entry {kernel}(")).expect(kernel);
        let rest = &ptx[start + 1..];
        let end = rest.find(".entry").map_or(ptx.len(), |end| start + 1 + end);
        ptx[start..end].matches(instruction).count()
    };
    let n128 = "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16";
    let n16 = "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16";
    // Depth 64 in one statement: four instructions; depth 16 in a loop of three: one or three.
    assert_eq!(in_kernel("group_mma_wide", n128), 4, "{ptx}");
    assert_eq!(in_kernel("group_gemm", n128), 4, "{ptx}");
    let narrow = in_kernel("group_mma_narrow", n16);
    assert!([1, 3].contains(&narrow), "{ptx}");
    // group_gemm_bf16: depth 64, four bf16 instructions.
    let bf16 = "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16";
    assert_eq!(in_kernel("group_gemm_bf16", bf16), 4, "{ptx}");
    assert_eq!(count("wgmma.mma_async"), 12 + narrow, "{ptx}");
    assert_eq!(
        count("wgmma.commit_group.sync.aligned"),
        count("wgmma.wait_group.sync.aligned 0"),
        "{ptx}"
    );
    ptxas_accepts(name, &ptx, "sm_90a");
    assert!(
        artifact.image.matrix_units && artifact.image.matrix_groups,
        "the sm_90a image runs matrix groups on matrix units"
    );
    // The GEMM example's main loop fences once, in its wgmma statement: its copies' wait does
    // not fence again (Triton's loop fences once too).
    let gemm = "hgemm_wgmma";
    let path = kdsl_testkit::files::workspace_root().join(format!("examples/{gemm}.krn"));
    let example = module_of(gemm, &std::fs::read_to_string(path).unwrap());
    let image = compile_ok(gemm, &example, &spec).image;
    let text = String::from_utf8(image.bytes).unwrap();
    assert_eq!(text.matches("fence.proxy.async").count(), 1, "{text}");
    assert!(text.contains("cp.async.wait_group"), "{text}");
    // On sm_75 (the plain definition) its accumulator stays in registers: the loops over it,
    // the zeroing one included, are unrolled.
    let plain = compile_ok(gemm, &example, &TargetSpec::ptx(Some("sm_75"))).image;
    let text = String::from_utf8(plain.bytes).unwrap();
    assert!(!text.contains(".local"), "sm_75: {text}");
    let plain = compile_ok(name, &module, &TargetSpec::ptx(Some("sm_75")));
    let text = String::from_utf8(plain.image.bytes.clone()).unwrap();
    assert!(
        !text.contains("wgmma")
            && !text.contains("mma.sync")
            && !plain.image.matrix_units
            && !plain.image.matrix_groups,
        "sm_75: {text}"
    );
    for arch in ["sm_80", "sm_90"] {
        let warps = compile_ok(name, &module, &TargetSpec::ptx(Some(arch)));
        let text = String::from_utf8(warps.image.bytes.clone()).unwrap();
        assert!(
            !text.contains("wgmma") && warps.image.matrix_units && warps.image.matrix_groups,
            "{arch}"
        );
        // One instruction per 8 columns and instruction depth, the depths written out: 16 x 4
        // for N = 128 and depth 64.
        assert_eq!(
            f16_mma_sync_in(&text, "group_mma_wide"),
            64,
            "{arch}: {text}"
        );
        assert!(
            text.contains("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"),
            "{arch}: {text}"
        );
        ptxas_accepts(name, &text, arch);
        // The GEMM example's accumulators stay in registers.
        let gemm = "hgemm_wgmma";
        let path = kdsl_testkit::files::workspace_root().join(format!("examples/{gemm}.krn"));
        let example = module_of(gemm, &std::fs::read_to_string(path).unwrap());
        let image = compile_ok(gemm, &example, &TargetSpec::ptx(Some(arch))).image;
        let text = String::from_utf8(image.bytes).unwrap();
        assert!(
            text.contains("mma.sync.aligned.m16n8k16") && !text.contains(".local"),
            "{arch}: {text}"
        );
        // A statement deeper than 8 instruction depths loops over them: 16 per loop body.
        let deep = module_of("deep_group_mma", DEEP_GROUP_MMA);
        let image = compile_ok("deep_group_mma", &deep, &TargetSpec::ptx(Some(arch))).image;
        let text = String::from_utf8(image.bytes).unwrap();
        assert_eq!(f16_mma_sync_in(&text, "deep"), 16, "{arch}: {text}");
    }
}

/// A matrix-group statement of depth 256: 16 instruction depths of 16.
const DEEP_GROUP_MMA: &str = "#[work_group_size(128)]
kernel deep(d: global mut [f32], a_tile: local mut [f16], b_tile: local mut [f16]) {
    let mut acc: [f32; 64];
    for i in 0u32..64 {
        acc[i] = 0.0;
    }
    matrix_group_mma(acc, a_tile, 0, 4096, b_tile, 0, 16384, 256);
    for i in 0u32..64 {
        d[get_local_id(0) * 64 + i] = acc[i];
    }
}
";

/// The f16 `mma.sync` instructions of `kernel` in the PTX `text` (its `.entry` up to the next).
fn f16_mma_sync_in(text: &str, kernel: &str) -> usize {
    let start = text.find(&format!(".entry {kernel}(")).expect(kernel);
    let rest = &text[start + 1..];
    let end = rest
        .find(".entry")
        .map_or(text.len(), |end| start + 1 + end);
    text[start..end]
        .matches("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32")
        .count()
}

/// Matrix tiles reach the tensor cores on NVIDIA (`wmma`; tf32 tiles `mma.sync` m16n8k8, in
/// registers: no local memory), and every other target, or an NVIDIA processor without the
/// shape, is told apart.
#[test]
fn matrix_tiles_use_tensor_cores_where_the_target_has_them() {
    for name in [
        "matrix",
        "matrix_tf32",
        "matrix_i8",
        "matrix_u8",
        "matrix_bf16",
    ] {
        let path = kdsl_testkit::files::workspace_root().join(format!("tests/kernels/{name}.krn"));
        let module = module_of(name, &std::fs::read_to_string(path).unwrap());
        let ptx = compile_ok(name, &module, &TargetSpec::ptx(Some("sm_90")));
        let ptx = String::from_utf8(ptx.image.bytes).unwrap();
        let tf32 = kdsl_ir::analysis::ModuleFeatures::new(&module)
            .matrix_shapes()
            .contains(&kdsl_ir::MatrixShape::Tf32M16N16K8);
        let instruction = if tf32 {
            "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"
        } else {
            "wmma.mma.sync.aligned.row.row"
        };
        assert!(ptx.contains(instruction), "{ptx}");
        assert!(
            !ptx.contains(".local"),
            "fragments spilled to local memory: {ptx}"
        );
        let ir = emit_llvm_ir(&module, &TargetSpec::spirv(), &Options::default()).unwrap();
        assert!(
            !ir.contains("wmma") && ir.contains("get_sub_group_local_id"),
            "{ir}"
        );
        refused_naming_the_target(name, &module, &TargetSpec::ptx(Some("sm_60")));
        // The bundle records which images use matrix units.
        let targets = [TargetSpec::spirv(), TargetSpec::ptx(Some("sm_90"))];
        let bundle = compile_bundle(name, &module, &targets, &Options::default()).unwrap();
        let flags: Vec<bool> = bundle.images.iter().map(|i| i.matrix_units).collect();
        assert_eq!(flags, [false, true], "{name}");
        let read = Bundle::from_bytes(&bundle.to_bytes()).unwrap();
        assert!(read.images[1].matrix_units);
    }
    // tf32 `A` tiles in local memory load with one `ldmatrix` each, `B` tiles word by word;
    // every input rounded to tf32 on the way.
    let path = kdsl_testkit::files::workspace_root().join("examples/sgemm_tf32.krn");
    let module = module_of("sgemm_tf32", &std::fs::read_to_string(path).unwrap());
    let ptx = compile_ok("sgemm_tf32", &module, &TargetSpec::ptx(Some("sm_90")));
    let ptx = String::from_utf8(ptx.image.bytes).unwrap();
    let count = |pattern: &str| ptx.matches(pattern).count();
    let (loads, products) = (
        count("ldmatrix.sync.aligned.m8n8.x4.shared.b16"),
        count("mma.sync.aligned.m16n8k8"),
    );
    // Four `A` and four `B` tiles and sixteen products (two instructions each) per k-step.
    assert!(
        loads > 0 && products == 8 * loads,
        "{loads} ldmatrix, {products} mma"
    );
    assert!(
        !ptx.contains("wmma.load") && count("cvt.rna.tf32.f32") == 8 * loads,
        "{ptx}"
    );
    let path = kdsl_testkit::files::workspace_root().join("tests/kernels/matrix_tf32.krn");
    let module = module_of("matrix_tf32", &std::fs::read_to_string(path).unwrap());
    refused_naming_the_target("matrix_tf32", &module, &TargetSpec::ptx(Some("sm_75")));
    // Checked mode takes the plain lowering everywhere, so sm_75 compiles tf32 tiles there.
    let checked = Options {
        checked: true,
        ..Options::default()
    };
    compile(&module, &TargetSpec::ptx(Some("sm_75")), &checked).expect("checked tf32 on sm_75");
    // Integer tiles need sm_72: sm_70 has only the `f16` tensor cores.
    for name in ["matrix_i8", "matrix_u8"] {
        let path = kdsl_testkit::files::workspace_root().join(format!("tests/kernels/{name}.krn"));
        let module = module_of(name, &std::fs::read_to_string(path).unwrap());
        refused_naming_the_target(name, &module, &TargetSpec::ptx(Some("sm_70")));
        // sm_72's PTX is raised to 6.3, the first with integer `wmma`, which ptxas accepts
        // (CUDA 13's ptxas no longer targets sm_72: it reads the PTX and builds it for sm_75).
        let ptx = compile_ok(name, &module, &TargetSpec::ptx(Some("sm_72")));
        let text = String::from_utf8(ptx.image.bytes).unwrap();
        assert!(
            text.contains(".version 6.3") && text.contains("wmma.mma.sync"),
            "{text}"
        );
        let file = scratch_file(&format!("{name}-sm_72.ptx"), text.as_bytes());
        run(
            Command::new(ptxas())
                .arg("-arch=sm_75")
                .arg(&file)
                .arg("-o")
                .arg("/dev/null"),
            &format!("ptxas -arch=sm_72 on {name}"),
        );
        let _ = std::fs::remove_file(file);
    }
}

#[test]
fn every_kernel_is_valid_spirv() {
    let spirv_val = tool(&["spirv-val"]);
    for (name, module) in kernel_modules() {
        let artifact = cached(name, module, &TargetSpec::spirv());
        let bytes = &artifact.image.bytes;
        assert_eq!(
            &bytes[..4],
            &[0x03, 0x02, 0x23, 0x07],
            "{name}: SPIR-V magic"
        );
        assert!(artifact
            .requirements
            .contains(&"capability Kernel".to_string()));
        // The backend keeps no state between modules: compiling again gives the same bytes.
        let again = compile_ok(name, module, &TargetSpec::spirv());
        assert_eq!(
            &again.image.bytes, bytes,
            "{name}: SPIR-V differs between two compiles"
        );
        let file = scratch_file(&format!("{name}.spv"), bytes);
        run(
            Command::new(&spirv_val).arg(&file),
            &format!("spirv-val on {name}"),
        );
        let _ = std::fs::remove_file(file);
        // Only the extensions the lowering enables may appear: the no-wrap decorations of
        // integer arithmetic anywhere, the float-atomic ones only where float atomics are.
        let extensions: Vec<&String> = artifact
            .requirements
            .iter()
            .filter(|r| {
                r.starts_with("extension")
                    && r.as_str() != "extension SPV_KHR_no_integer_wrap_decoration"
            })
            .collect();
        for extension in &extensions {
            assert!(
                [
                    "extension SPV_EXT_shader_atomic_float_add",
                    "extension SPV_EXT_shader_atomic_float_min_max"
                ]
                .contains(&extension.as_str()),
                "{name}: {extension}"
            );
        }
        // The files with float atomics: tests/kernels/atomics.krn and the k-means sums.
        assert_eq!(
            !extensions.is_empty(),
            ["atomics", "kmeans", "kmeans_tf32"].contains(&name.as_str()),
            "{name}: {extensions:?}"
        );
    }
}

#[test]
fn every_kernel_assembles_with_ptxas() {
    let ptxas = ptxas();
    for (name, module) in kernel_modules() {
        for arch in [None, Some("sm_90")] {
            let spec = TargetSpec::ptx(arch);
            if needs_sm_80(module) && arch.is_none() {
                refused_naming_the_target(name, module, &spec);
                continue;
            }
            let artifact = cached(name, module, &spec);
            let text = String::from_utf8(artifact.image.bytes.clone()).expect("PTX is text");
            let resolved = spec.resolved_arch();
            assert!(
                text.contains(&format!(".target {resolved}")),
                "{name}: {resolved}"
            );
            for kernel in kernel_names(module) {
                assert!(
                    text.contains(&format!(".entry {kernel}(")),
                    "{name}: entry {kernel}"
                );
            }
            let file = scratch_file(&format!("{name}.ptx"), text.as_bytes());
            run(
                Command::new(&ptxas)
                    .arg(format!("-arch={resolved}"))
                    .arg(&file)
                    .arg("-o")
                    .arg("/dev/null"),
                &format!("ptxas -arch={resolved} on {name}"),
            );
            let _ = std::fs::remove_file(file);
        }
    }
}

#[test]
fn every_kernel_links_into_amdgpu_code_objects() {
    let readobj = tool(&["llvm-readobj-22", "llvm-readobj"]);
    for (name, module) in kernel_modules() {
        for arch in ["gfx90a", "gfx9-generic", "gfx1100"] {
            let artifact = cached(name, module, &TargetSpec::amdgpu(Some(arch)));
            assert_eq!(&artifact.image.bytes[..4], b"\x7fELF", "{name}: ELF magic");
            let file = scratch_file(&format!("{name}.hsaco"), &artifact.image.bytes);
            // One run for both; llvm-readobj prints the symbols, then the notes.
            let symbols_and_notes = run(
                Command::new(&readobj)
                    .args(["--notes", "--symbols"])
                    .arg(&file),
                &format!("llvm-readobj --notes --symbols on {name} for {arch}"),
            );
            let _ = std::fs::remove_file(file);
            let (symbols, notes) = symbols_and_notes
                .split_once("NoteSections [")
                .unwrap_or_else(|| panic!("{name} {arch}: no notes after the symbols"));
            assert!(
                notes.contains("amdhsa.kernels"),
                "{name} {arch}: no amdhsa.kernels"
            );
            assert!(
                notes.contains(&format!("amdgcn-amd-amdhsa--{arch}")),
                "{name}: target {arch} missing from the notes"
            );
            let wavefront = if arch == "gfx1100" { 32 } else { 64 };
            assert!(
                notes.contains(&format!(".wavefront_size: {wavefront}")),
                "{name} {arch}"
            );
            for kernel in kernel_names(module) {
                assert!(
                    notes.contains(&format!(".name:           {kernel}\n")),
                    "{name} {arch}: kernel {kernel} not in amdhsa.kernels"
                );
                assert!(
                    symbols.contains(&format!("Name: {kernel}.kd")),
                    "{name} {arch}: kernel descriptor {kernel}.kd missing"
                );
            }
        }
    }
}

/// lld in process (the default where the build has it) links the same code object as the
/// `ld.lld` program, also when several AMDGPU targets of one bundle link concurrently.
#[test]
fn in_process_lld_links_what_the_ld_lld_program_links() {
    let linker = tool(&["ld.lld-22", "ld.lld"]);
    let with_program = Options {
        amdgpu: kdsl_codegen::amdgpu::Options {
            linker: Some(linker),
            libclc: None,
        },
        ..Options::default()
    };
    let arches = ["gfx90a", "gfx1100", "gfx9-generic", "gfx942"];
    let targets: Vec<TargetSpec> = arches.iter().map(|a| TargetSpec::amdgpu(Some(a))).collect();
    // Four small files: the generated GEMMs would link eight large code objects more, no
    // different to the linker.
    let files = kernel_sources()
        .into_iter()
        .filter(|(name, _)| !GENERATED_GEMMS.contains(&name.as_str()))
        .take(4);
    for (name, source) in files {
        let module = module_of(&name, &source);
        let default = compile_bundle(&name, &module, &targets, &Options::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let program = compile_bundle(&name, &module, &targets, &with_program)
            .unwrap_or_else(|e| panic!("{name} with ld.lld: {e}"));
        for ((arch, by_default), by_program) in
            arches.iter().zip(&default.images).zip(&program.images)
        {
            assert!(
                by_default.bytes == by_program.bytes,
                "{name} {arch}: the code objects differ ({} and {} bytes)",
                by_default.bytes.len(),
                by_program.bytes.len()
            );
        }
    }
}

/// AMDGPU target machines are reused from compilation to compilation (NVPTX ones are not:
/// they number call sequences in the PTX across modules): whatever came before, a module gets
/// the same code. Each file's shared image (`common::artifact`, compiled after whatever the
/// test asking first had compiled) is compared with a fresh compile of every file in reverse
/// order.
#[test]
fn reused_target_machines_give_the_same_code_whatever_came_before() {
    let targets = [TargetSpec::ptx(None), TargetSpec::amdgpu(None)];
    let supported = |module: &kdsl_ir::Module, spec: &TargetSpec| {
        !(needs_sm_80(module) && spec.kind == TargetKind::Ptx)
    };
    let mut shared = std::collections::BTreeMap::new();
    for (name, module) in kernel_modules() {
        for spec in targets.iter().filter(|spec| supported(module, spec)) {
            shared.insert((name, spec.to_string()), cached(name, module, spec));
        }
    }
    for (name, module) in kernel_modules().iter().rev() {
        for spec in targets.iter().filter(|spec| supported(module, spec)) {
            let fresh = compile_ok(name, module, spec);
            assert!(
                shared[&(name, spec.to_string())].image.bytes == fresh.image.bytes,
                "{name} for {spec}: the code differs with another compilation before it"
            );
        }
    }
}

/// What the generated code looks like where performance depends on it.
#[test]
fn hot_paths_use_the_fast_instructions() {
    let saxpy = module_of(
        "saxpy",
        &std::fs::read_to_string(kdsl_testkit::files::workspace_root().join("examples/saxpy.krn"))
            .unwrap(),
    );
    let ptx = compile_ok("saxpy", &saxpy, &TargetSpec::ptx(Some("sm_90")));
    let ptx = String::from_utf8(ptx.image.bytes).unwrap();
    assert!(
        ptx.contains("ld.global.nc.b32") || ptx.contains("ld.global.nc.f32"),
        "read-only loads: {ptx}"
    );
    assert!(ptx.contains("fma.rn.f32"), "contracted multiply-add: {ptx}");
    assert!(!ptx.contains("cvta"), "no generic pointers: {ptx}");

    let reduction = module_of(
        "reduction",
        &std::fs::read_to_string(
            kdsl_testkit::files::workspace_root().join("examples/reduction.krn"),
        )
        .unwrap(),
    );
    let ptx = compile_ok("reduction", &reduction, &TargetSpec::ptx(Some("sm_90")));
    let ptx = String::from_utf8(ptx.image.bytes).unwrap();
    assert!(ptx.contains("bar.sync"), "{ptx}");
    assert!(
        ptx.contains("ld.shared") && ptx.contains("st.shared"),
        "{ptx}"
    );

    let spirv_ir = emit_llvm_ir(&saxpy, &TargetSpec::spirv(), &Options::default()).unwrap();
    assert!(
        spirv_ir.contains("noalias") && spirv_ir.contains("readonly"),
        "{spirv_ir}"
    );
    assert!(spirv_ir.contains("spir_kernel void @saxpy"), "{spirv_ir}");
}

/// The guarded tile loads of `examples/sgemm.krn` (`if inside { tile[i] = a[j]; } else {
/// tile[i] = 0.0; }`) become one shared store each after a predicated global load, as nvcc
/// makes of the CUDA twin's ternary: two stores per load kept ptxas from issuing a tile's eight
/// global loads before the first shared store (on the H200 the SGEMM took 7.52 ms with two
/// stores per load, 7.30 ms with one; nvcc's 7.44 ms).
#[test]
fn a_guarded_tile_load_stores_once() {
    let sgemm = module_of(
        "sgemm",
        &std::fs::read_to_string(kdsl_testkit::files::workspace_root().join("examples/sgemm.krn"))
            .unwrap(),
    );
    let ptx = compile_ok("sgemm", &sgemm, &TargetSpec::ptx(Some("sm_90")));
    let ptx = String::from_utf8(ptx.image.bytes).unwrap();
    assert_eq!(ptx.matches("st.shared").count(), 8, "{ptx}");
    assert_eq!(ptx.matches("ld.global.nc").count(), 8, "{ptx}");
}

/// `vload4`/`vstore4` are one aligned vector access on every target, and the components of
/// one `vload4` share it.
#[test]
fn vector_accesses_use_vector_memory_instructions() {
    let source = std::fs::read_to_string(
        kdsl_testkit::files::workspace_root().join("tests/kernels/vectors.krn"),
    )
    .unwrap();
    let module = module_of("vectors", &source);
    let saxpy4 = kdsl_ir::Module {
        functions: module
            .functions
            .iter()
            .filter(|f| f.name == "saxpy4")
            .cloned()
            .collect(),
        constants: Vec::new(),
    };
    let ptx = compile_ok("vectors", &saxpy4, &TargetSpec::ptx(Some("sm_90")));
    let ptx = String::from_utf8(ptx.image.bytes).unwrap();
    let count = |text: &str, what: &str| text.matches(what).count();
    assert_eq!(count(&ptx, "ld.global.nc.v4.b32"), 1, "{ptx}");
    assert_eq!(count(&ptx, "ld.global.v4.b32"), 1, "{ptx}");
    assert_eq!(count(&ptx, "st.global.v4.b32"), 1, "{ptx}");
    assert!(!ptx.contains("ld.global.nc.b32"), "{ptx}");

    let object = compile_ok("vectors", &saxpy4, &TargetSpec::amdgpu(Some("gfx90a")));
    let path = scratch_file("vectors.hsaco", &object.image.bytes);
    let disassembly = run(
        Command::new(tool(&["llvm-objdump-22", "llvm-objdump"]))
            .arg("-d")
            .arg(&path),
        "llvm-objdump",
    );
    let _ = std::fs::remove_file(path);
    assert_eq!(
        count(&disassembly, "global_load_dwordx4"),
        2,
        "{disassembly}"
    );
    assert_eq!(
        count(&disassembly, "global_store_dwordx4"),
        1,
        "{disassembly}"
    );

    let spirv_ir = emit_llvm_ir(&saxpy4, &TargetSpec::spirv(), &Options::default()).unwrap();
    assert_eq!(count(&spirv_ir, "load <4 x float>"), 2, "{spirv_ir}");
    assert!(spirv_ir.contains("store <4 x float>"), "{spirv_ir}");
    assert!(spirv_ir.contains("align 16"), "{spirv_ir}");
}

/// LLVM 22's AMDGPU backend fails on unoptimized IR below -O3, so its code generation runs at
/// -O3 whatever the module's `-O` (`Legalization::minimum_backend_opt_level`). At -O0 it emitted
/// `V_SUB_U32_e32` with an SGPR operand for the loop step (fuzzgen seed 4001069); at -O1 and
/// -O2 it folded the literal 11.0 into gfx90a's and gfx942's `V_FMAC_F64_e64` (seed 5000290).
/// Not in backend_regressions.krn: at -O3 LLVM narrows the `abs` of the extended `i16` to PTX
/// `abs.s16`, which that file's PTX test forbids (see docs/fuzzgen.md).
#[test]
fn amdgpu_compiles_unoptimized_modules() {
    let sources = [
        (
            "uniform_abs_step",
            "kernel uniform_abs_step(out: global mut [i32], input: global [i16], s: u32) {
    let mut steps = 0i32;
    for j in 1i32..4i32 step (abs((input[s] as i32) % 3i32) + 1i32) {
        steps += 1i32;
    }
    out[get_global_id(0)] = steps;
}
",
        ),
        (
            "fma_of_a_variable",
            "kernel fma_of_a_variable(out: global mut [f64], n: u32) {
    let x = n as f64;
    let c = -4.0f64;
    if x - c > (fma(c, 11.0f64, 2.875f64) + x % 53.0f64) % (abs(x + x) + 1.0f64) {
        out[0] = 1.0f64;
    }
}
",
        ),
    ];
    for (name, source) in sources {
        let module = module_of(name, source);
        for arch in ["gfx90a", "gfx942", "gfx1100"] {
            for opt_level in 0..3 {
                let options = Options {
                    opt_level,
                    ..Options::default()
                };
                compile(&module, &TargetSpec::amdgpu(Some(arch)), &options).unwrap_or_else(
                    |error| panic!("{name} for {arch} at -O{opt_level}: {error:?}"),
                );
            }
        }
    }
}

/// `tests/kernels/backend_regressions.krn` as PTX for sm_90 at -O0 and at -O3.
fn backend_regressions_ptx() -> Vec<(u8, String)> {
    let source = std::fs::read_to_string(
        kdsl_testkit::files::workspace_root().join("tests/kernels/backend_regressions.krn"),
    )
    .unwrap();
    let module = module_of("backend_regressions", &source);
    [0, 3]
        .into_iter()
        .map(|opt_level| {
            let options = Options {
                opt_level,
                ..Options::default()
            };
            let ptx = compile(&module, &TargetSpec::ptx(Some("sm_90")), &options).unwrap();
            (opt_level, String::from_utf8(ptx.image.bytes).unwrap())
        })
        .collect()
}

/// ptxas computes `abs.s16`/`abs.s8` in 32 bits without wrapping the minimum; the lowering
/// takes narrow `abs` on a 32-bit value LLVM cannot narrow back.
#[test]
fn narrow_abs_never_uses_ptx_narrow_abs() {
    for (opt_level, ptx) in backend_regressions_ptx() {
        assert!(
            !ptx.contains("abs.s16") && !ptx.contains("abs.s8"),
            "-O{opt_level}: {ptx}"
        );
        assert!(ptx.contains("abs.s32"), "-O{opt_level}: {ptx}");
    }
}

/// ptxas 13.0 (the H200 driver's JIT) takes `neg.s16` of a sign-extended value to be
/// sign-extended, and folds `setp.eq` of a 16-bit `min`/`max` with its own immediate into a
/// wrong predicate (fuzzgen seeds 9709 and 9708): after the optimizer kdsl negates narrow
/// values in 32-bit assembly and compares the `min`'s operand directly.
#[test]
fn ptx_avoids_narrow_negation_and_min_max_compared_with_their_constant() {
    for (opt_level, ptx) in backend_regressions_ptx() {
        assert!(!ptx.contains("neg.s16"), "-O{opt_level}: {ptx}");
        assert_eq!(
            min_max_compared_with_its_constant(&ptx),
            None,
            "-O{opt_level}: {ptx}"
        );
        if opt_level == 3 {
            // `narrow_min_compare`'s loop bound, compared directly; the negations in 32 bits.
            assert!(ptx.contains("setp.gt.u16"), "{ptx}");
            assert!(ptx.contains("neg.s32"), "{ptx}");
        }
    }
    // What ptxas 13.0 got wrong (from seed 9708's PTX) is found.
    let seed_9708 = "min.u16 \t%rs1, %rs3, 3;\n\tsetp.eq.b16 \t%p3, %rs1, 3;";
    assert!(min_max_compared_with_its_constant(seed_9708).is_some());
}

/// A `setp.eq`/`setp.ne` of a 16-bit `min`/`max` result with the immediate the `min`/`max`
/// took, as `min.u16 %rs1, %rs3, 3;` then `setp.eq.b16 %p3, %rs1, 3;`.
fn min_max_compared_with_its_constant(ptx: &str) -> Option<String> {
    let operands = |line: &str| -> Vec<String> {
        line.split_whitespace()
            .skip(1)
            .map(|o| o.trim_end_matches([',', ';']).to_string())
            .collect()
    };
    let mut immediates = std::collections::HashMap::new();
    for line in ptx.lines().map(str::trim) {
        let opcode = line.split_whitespace().next().unwrap_or("");
        let narrow_min_max =
            ["min.", "max."].iter().any(|p| opcode.starts_with(p)) && opcode.ends_with("16");
        if narrow_min_max {
            if let [result, _, immediate] = operands(line).as_slice() {
                immediates.insert(result.clone(), immediate.clone());
            }
        } else if opcode.starts_with("setp.eq.") || opcode.starts_with("setp.ne.") {
            if let [_, value, immediate] = operands(line).as_slice() {
                if immediates.get(value) == Some(immediate) {
                    return Some(line.to_string());
                }
            }
        }
    }
    None
}

/// AMDGPU's printf binding needs constant `%s` strings, so each `bool` of a `print` doubles
/// its `printf` calls there: more than 4 is a diagnostic on AMDGPU only.
#[test]
fn printing_many_bools_is_limited_on_amdgpu_only() {
    let source = "kernel flags(n: u32) {\n    let b = n > 0;\n    print(\"{} {} {} {} {}\", b, b, b, b, b);\n}\n";
    let module = module_of("flags", source);
    let error = compile(&module, &TargetSpec::amdgpu(None), &Options::default())
        .expect_err("5 bools on AMDGPU");
    let diagnostics = error.into_diagnostics();
    assert_eq!(diagnostics[0].code, "E0601", "{diagnostics:?}");
    assert!(
        diagnostics[0].message.contains("4 `bool` values"),
        "{diagnostics:?}"
    );
    let span = diagnostics[0].primary_span().expect("a span");
    assert!(source[span.range()].starts_with("print("));
    for spec in [TargetSpec::spirv(), TargetSpec::ptx(None)] {
        compile(&module, &spec, &Options::default()).expect("5 bools elsewhere");
    }
    let four = module_of(
        "flags",
        &source.replace(", b);", ");").replace("{} {}\"", "{}\""),
    );
    compile(&four, &TargetSpec::amdgpu(None), &Options::default()).expect("4 bools on AMDGPU");
}

#[test]
fn unsupported_features_are_diagnostics_naming_the_target() {
    let source = "kernel sum(total: global mut [f64], input: global [f64]) {\n    atomic_add(total[0], input[get_global_id(0)]);\n}\n";
    let module = module_of("f64_atomic", source);
    let error = compile(
        &module,
        &TargetSpec::ptx(Some("sm_52")),
        &Options::default(),
    )
    .expect_err("sm_52 has no f64 atomic add");
    let CodegenError::Unsupported(diagnostics) = error else {
        panic!("expected diagnostics, got {error:?}");
    };
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    let diagnostic = &diagnostics[0];
    assert_eq!(diagnostic.code, "E0601");
    assert!(
        diagnostic.message.contains("ptx:sm_52"),
        "{}",
        diagnostic.message
    );
    let span = diagnostic.primary_span().expect("a span");
    assert_eq!(
        &source[span.range()],
        "atomic_add(total[0], input[get_global_id(0)])"
    );
    // The same module is fine where the feature exists.
    compile(
        &module,
        &TargetSpec::ptx(Some("sm_60")),
        &Options::default(),
    )
    .expect("sm_60 has it");

    let big = "kernel big(output: global mut [f32]) {\n    local tile: [f32; 20000];\n    tile[get_local_id(0)] = 1.0;\n    barrier();\n    output[0] = tile[0];\n}\n";
    let module = module_of("big", big);
    for spec in [TargetSpec::ptx(None), TargetSpec::amdgpu(None)] {
        let error =
            compile(&module, &spec, &Options::default()).expect_err("too much local memory");
        let diagnostics = error.into_diagnostics();
        assert_eq!(diagnostics[0].code, "E0602", "{diagnostics:?}");
        assert!(
            diagnostics[0].message.contains("80000 bytes"),
            "{}",
            diagnostics[0].message
        );
    }
    // SPIR-V leaves the limit to the device.
    compile(&module, &TargetSpec::spirv(), &Options::default()).expect("SPIR-V has no fixed limit");
}

/// A kernel of `buffers` buffer parameters and one `u32`.
fn many_parameters(buffers: usize) -> kdsl_ir::Module {
    let parameters: Vec<String> = (0..buffers)
        .map(|i| format!("b{i}: global [f32]"))
        .collect();
    let source = format!(
        "kernel many(out: global mut [f32], {}, n: u32) {{\n    out[0] = b0[n];\n}}\n",
        parameters.join(", ")
    );
    module_of("many", &source)
}

#[test]
fn parameters_beyond_a_targets_limit_are_diagnostics() {
    let limit_error = |module: &kdsl_ir::Module, spec: &TargetSpec, options: &Options| {
        let error = compile(module, spec, options).expect_err("too many arguments");
        let diagnostics = error.into_diagnostics();
        assert_eq!(diagnostics[0].code, "E0603", "{diagnostics:?}");
        diagnostics[0].message.clone()
    };
    // 126 + 1 pointers and a u32: 1020 bytes, within OpenCL's guaranteed 1024.
    let fits = many_parameters(126);
    compile(&fits, &TargetSpec::spirv(), &Options::default()).expect("1020 bytes fit");
    // Checked mode adds a length per buffer and the fault record.
    let checked = Options {
        checked: true,
        ..Options::default()
    };
    let message = limit_error(&fits, &TargetSpec::spirv(), &checked);
    assert!(
        message.contains("2048 bytes") && message.contains("checked"),
        "{message}"
    );
    let message = limit_error(
        &many_parameters(128),
        &TargetSpec::spirv(),
        &Options::default(),
    );
    assert!(
        message.contains("1036 bytes") && message.contains("`spirv`"),
        "{message}"
    );
    compile(
        &many_parameters(128),
        &TargetSpec::ptx(None),
        &Options::default(),
    )
    .expect("PTX takes 4096 bytes");
    for spec in [TargetSpec::ptx(None), TargetSpec::amdgpu(None)] {
        let message = limit_error(&many_parameters(520), &spec, &Options::default());
        assert!(message.contains("4172 bytes"), "{message}");
    }
}

#[test]
fn bad_target_names_are_errors() {
    let module = module_of(
        "saxpy",
        &std::fs::read_to_string(kdsl_testkit::files::workspace_root().join("examples/saxpy.krn"))
            .unwrap(),
    );
    for (spec, expected) in [
        (
            TargetSpec::ptx(Some("sm_999")),
            "unknown NVIDIA processor `sm_999`",
        ),
        (
            TargetSpec::amdgpu(Some("gfx42")),
            "unknown AMD GPU processor `gfx42`",
        ),
        (
            TargetSpec::new(TargetKind::Spirv, Some("sm_90".into())),
            "SPIR-V takes no processor name",
        ),
    ] {
        let message = compile(&module, &spec, &Options::default())
            .expect_err("invalid target")
            .to_string();
        assert!(message.contains(expected), "{message}");
    }
    let options = Options {
        amdgpu: kdsl_codegen::amdgpu::Options {
            linker: Some("/nonexistent/ld.lld".into()),
            libclc: None,
        },
        ..Options::default()
    };
    let message = compile(&module, &TargetSpec::amdgpu(None), &options)
        .expect_err("no linker")
        .to_string();
    assert!(message.contains("/nonexistent/ld.lld"), "{message}");
    let options = Options {
        nvptx: kdsl_codegen::nvptx::Options {
            libdevice: Some("/nonexistent/libdevice.10.bc".into()),
            ..Default::default()
        },
        ..Options::default()
    };
    let message = compile(&module, &TargetSpec::ptx(None), &options)
        .expect_err("no libdevice")
        .to_string();
    assert!(
        message.contains("/nonexistent/libdevice.10.bc"),
        "{message}"
    );
}

/// Without optimization the output must still be valid: device functions are still
/// inlined (`alwaysinline`) and nothing relies on the optimizer for correctness.
#[test]
fn unoptimized_builds_are_valid_too() {
    let spirv_val = tool(&["spirv-val"]);
    let ptxas = ptxas();
    let options = Options::with_opt_level(0);
    for (name, source) in kernel_sources() {
        if ![
            "language",
            "sub_groups",
            "atomics",
            "math",
            "softmax",
            "backend_regressions",
        ]
        .contains(&name.as_str())
        {
            continue;
        }
        let module = module_of(&name, &source);
        let spirv = compile(&module, &TargetSpec::spirv(), &options).unwrap();
        let file = scratch_file(&format!("{name}-O0.spv"), &spirv.image.bytes);
        run(
            Command::new(&spirv_val).arg(&file),
            &format!("spirv-val on {name} at -O0"),
        );
        let _ = std::fs::remove_file(file);
        let ptx = compile(&module, &TargetSpec::ptx(Some("sm_90")), &options).unwrap();
        let file = scratch_file(&format!("{name}-O0.ptx"), &ptx.image.bytes);
        run(
            Command::new(&ptxas)
                .arg("-arch=sm_90")
                .arg(&file)
                .arg("-o")
                .arg("/dev/null"),
            &format!("ptxas on {name} at -O0"),
        );
        let _ = std::fs::remove_file(file);
        let amdgpu = compile(&module, &TargetSpec::amdgpu(Some("gfx1100")), &options).unwrap();
        assert_eq!(&amdgpu.image.bytes[..4], b"\x7fELF", "{name} at -O0");
    }
}

#[test]
fn bundles_hold_every_image_and_the_kernel_metadata() {
    let source =
        std::fs::read_to_string(kdsl_testkit::files::workspace_root().join("examples/generic.krn"))
            .unwrap();
    let module = module_of("generic", &source);
    let targets = [
        TargetSpec::spirv(),
        TargetSpec::ptx(Some("sm_90")),
        TargetSpec::ptx(None),
        TargetSpec::amdgpu(Some("gfx90a")),
        TargetSpec::amdgpu(Some("gfx1100")),
    ];
    let bundle = compile_bundle("generic.krn", &module, &targets, &Options::default()).unwrap();
    assert_eq!(
        bundle.describe_images(),
        "spirv, ptx:sm_90, ptx:sm_75, amdgpu:gfx90a, amdgpu:gfx1100"
    );
    let names: Vec<&str> = bundle.kernels.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["axpby_f32", "axpby_f64"]);
    assert_eq!(bundle.kernels[0].parameters.len(), 5);
    let reread = Bundle::from_bytes(&bundle.to_bytes()).unwrap();
    assert_eq!(reread, bundle);
}

/// Compile time per example and target (printed with `--nocapture`), with a generous bound
/// that catches pathological slowdowns: the times of the images the other tests share
/// (`common::timed_artifact`), each compiled once for the binary.
#[test]
fn compile_times() {
    let mut report = String::new();
    for (name, module) in kernel_modules() {
        for spec in [
            TargetSpec::spirv(),
            TargetSpec::ptx(Some("sm_90")),
            TargetSpec::amdgpu(Some("gfx90a")),
        ] {
            let (_, elapsed) = timed_artifact(name, module, &spec, false)
                .unwrap_or_else(|e| panic!("{name}.krn for {spec}: {e}"));
            report.push_str(&format!(
                "{name:>12} {spec:<14} {:>6} ms\n",
                elapsed.as_millis()
            ));
            assert!(elapsed.as_secs() < 60, "{name} for {spec} took {elapsed:?}");
        }
    }
    println!("{report}");
}

/// At -O0 an AMDGPU compile whose loads index loads of the same buffer ends (LLVM 22's
/// load-store vectorizer, run by the backend, looped forever on such unoptimized IR: fuzzgen
/// seed 8700381); a regression fails after a minute instead of hanging the suite.
#[test]
fn amdgpu_compiles_loads_indexed_by_loads_at_o0() {
    let source = "kernel fuzz(output7: global mut [[u16]], out: global mut [i16]) {\n\
        let gid = get_global_id(0);\n\
        let mut m82: i16 = clz(9i16);\n\
        out[gid] = select(((if false { output7[gid, 0x1u8] } else { (output7.shape(0) as u16) }) != \
        output7[gid, (((wrapping_mul(0x1CF0u16, output7[gid, 1i8]) as i32) & 2147483647i32) % 2i32)]), m82, 3i16);\n\
    }\n";
    let module = module_of("indexed_loads", source);
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let options = Options {
            opt_level: 0,
            ..Options::default()
        };
        let result = compile(&module, &TargetSpec::amdgpu(Some("gfx90a")), &options);
        let _ = sender.send(result.map(|artifact| artifact.image.bytes.len()));
    });
    let compiled = receiver
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the -O0 AMDGPU compile finishes within a minute");
    assert!(compiled.expect("compiles") > 0);
}
