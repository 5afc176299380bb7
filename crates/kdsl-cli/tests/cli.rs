//! The `kdsl` command as a user runs it: exit codes, rendered diagnostics, written artifacts.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn kdsl(arguments: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kdsl"))
        .args(arguments)
        .current_dir(workspace())
        .output()
        .expect("the kdsl binary runs")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let folder = std::env::temp_dir().join(format!("kdsl-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&folder).unwrap();
    folder.join(name)
}

#[test]
fn check_accepts_every_example() {
    for entry in std::fs::read_dir(workspace().join("examples")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "krn") {
            let output = kdsl(&["check", path.to_str().unwrap()]);
            assert!(
                output.status.success(),
                "{}: {}",
                path.display(),
                stderr(&output)
            );
            assert!(stderr(&output).contains(": ok ("), "{}", stderr(&output));
        }
    }
}

#[test]
fn errors_are_rendered_with_location_snippet_and_hint_and_several_at_once() {
    let output = kdsl(&["check", "tests/errors/several_errors.krn"]);
    assert_eq!(
        output.status.code(),
        Some(1),
        "a diagnostic is a plain failure, not a panic"
    );
    let text = stderr(&output);
    assert!(
        text.contains("tests/errors/several_errors.krn:5:5"),
        "{text}"
    );
    assert!(
        text.contains("tests/errors/several_errors.krn:20:24"),
        "{text}"
    );
    assert!(text.contains("= hint:"), "{text}");
    assert!(
        text.contains("let x: f32 = 1;"),
        "the snippet is shown: {text}"
    );
    assert!(
        text.matches("error[").count() >= 5,
        "several errors in one run: {text}"
    );
}

#[test]
fn arbitrary_bytes_give_diagnostics_not_panics() {
    let path = scratch("garbage.krn");
    let mut bytes: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    bytes.extend_from_slice(b"kernel k(");
    std::fs::write(&path, &bytes).unwrap();
    for command in ["check", "compile"] {
        let output = kdsl(&[command, path.to_str().unwrap()]);
        assert_eq!(
            output.status.code(),
            Some(1),
            "{command}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains("garbage.krn:"),
            "{}",
            stderr(&output)
        );
    }
}

#[test]
fn compile_writes_a_bundle_with_every_requested_image_and_kernel_metadata() {
    let out = scratch("histogram.kbundle");
    let output = kdsl(&[
        "compile",
        "examples/histogram.krn",
        "--target",
        "spirv,ptx,amdgpu",
        "--arch",
        "sm_75,sm_90,gfx90a,gfx9-generic",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let bundle = kdsl_bundle_from(&out);
    assert_eq!(
        bundle.describe_images(),
        "spirv, ptx:sm_75, ptx:sm_90, amdgpu:gfx90a, amdgpu:gfx9-generic"
    );
    let inspect = kdsl(&["inspect", out.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&inspect.stdout);
    assert!(
        text.contains("kernel histogram(bins: global mut [u32], data: global [u8], n: u32) local memory 1024 bytes"),
        "{text}"
    );
}

#[test]
fn intel_gpu_images_come_beside_the_plain_spirv_image() {
    let out = scratch("matrix-intel.kbundle");
    let output = kdsl(&[
        "compile",
        "tests/kernels/matrix.krn",
        "--target",
        "spirv",
        "--arch",
        "intel_gpu_pvc,intel_gpu_dg2_g10",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let bundle = kdsl_bundle_from(&out);
    assert_eq!(
        bundle.describe_images(),
        "spirv, spirv:intel_gpu_pvc, spirv:intel_gpu_dg2_g10"
    );
    let units: Vec<bool> = bundle.images.iter().map(|i| i.matrix_units).collect();
    assert_eq!(units, [false, true, true]);
    // `--emit spirv` writes the named GPU's image.
    let spv = scratch("matrix-pvc.spv");
    let output = kdsl(&[
        "compile",
        "tests/kernels/matrix.krn",
        "--emit",
        "spirv",
        "--arch",
        "intel_gpu_pvc",
        "-o",
        spv.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let bytes = std::fs::read(&spv).unwrap();
    assert_eq!(bytes, bundle.images[1].bytes);
    let output = kdsl(&[
        "compile",
        "tests/kernels/matrix.krn",
        "--arch",
        "intel_gpu_xe9",
    ]);
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("`intel_gpu_xe9`"),
        "{}",
        stderr(&output)
    );
}

fn kdsl_bundle_from(path: &Path) -> kdsl_bundle::Bundle {
    kdsl_bundle::Bundle::read(path).expect("the written bundle reads back")
}

#[test]
fn emit_writes_single_artifacts() {
    let cases: [(&str, &str, &[u8]); 5] = [
        ("spirv", "saxpy.spv", &[0x03, 0x02, 0x23, 0x07]),
        ("ptx", "saxpy.ptx", b"//"),
        ("hsaco", "saxpy.hsaco", b"\x7fELF"),
        ("llvm", "saxpy.ll", b"; ModuleID"),
        ("ir", "saxpy.kir", b""),
    ];
    for (emit, file, starts_with) in cases {
        let out = scratch(file);
        let output = kdsl(&[
            "compile",
            "examples/saxpy.krn",
            "--emit",
            emit,
            "--arch",
            "sm_90,gfx90a",
            "-o",
            out.to_str().unwrap(),
        ]);
        assert!(
            output.status.success(),
            "--emit {emit}: {}",
            stderr(&output)
        );
        let bytes = std::fs::read(&out).unwrap();
        assert!(
            bytes.starts_with(starts_with),
            "--emit {emit} wrote {:?}",
            &bytes[..bytes.len().min(16)]
        );
        assert!(!bytes.is_empty());
    }
    let ptx = std::fs::read_to_string(scratch("saxpy.ptx")).unwrap();
    assert!(ptx.contains(".target sm_90"), "{ptx}");
    let ir = std::fs::read_to_string(scratch("saxpy.kir")).unwrap();
    assert!(ir.contains("saxpy"), "{ir}");
}

#[test]
fn bad_command_lines_are_errors_with_hints() {
    let output = kdsl(&["compile", "examples/saxpy.krn", "--target", "metal"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("unknown target `metal`"),
        "{}",
        stderr(&output)
    );
    let output = kdsl(&["compile", "examples/saxpy.krn", "--arch", "pentium"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("unknown processor `pentium`"),
        "{}",
        stderr(&output)
    );
    let output = kdsl(&[
        "compile",
        "examples/saxpy.krn",
        "--target",
        "spirv",
        "--arch",
        "sm_90",
        "-o",
        scratch("spirv-only.kbundle").to_str().unwrap(),
    ]);
    assert!(output.status.success());
    assert!(
        stderr(&output).contains("warning: --arch sm_90 is ignored: no ptx target was requested"),
        "{}",
        stderr(&output)
    );
    let output = kdsl(&["check", "no/such/file.krn"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("cannot read `no/such/file.krn`"),
        "{}",
        stderr(&output)
    );
    let output = kdsl(&[
        "compile",
        "examples/saxpy.krn",
        "--target",
        "ptx",
        "--arch",
        "sm_1",
    ]);
    assert_eq!(
        output.status.code(),
        Some(1),
        "an unknown sm is a diagnostic: {}",
        stderr(&output)
    );
}

#[test]
fn format_syclbin_writes_a_syclbin_file_that_inspect_shows() {
    // Without -o the file lands next to the source, with the .syclbin extension.
    let source = scratch("reduction.krn");
    std::fs::copy(workspace().join("examples/reduction.krn"), &source).unwrap();
    let output = kdsl(&[
        "compile",
        source.to_str().unwrap(),
        "--format",
        "syclbin",
        "--arch",
        "sm_90,gfx90a",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let out = source.with_extension("syclbin");
    assert!(
        stderr(&output).contains("(SYCLBIN, state executable; 2 kernels; SPIR-V (IR module), nvptx64-nvidia-cuda sm_90 (native image), amdgcn-amd-amdhsa gfx90a (native image))"),
        "{}",
        stderr(&output)
    );
    let bytes = std::fs::read(&out).expect("the .syclbin file is written");
    let syclbin = kdsl_bundle::syclbin::Syclbin::from_bytes(&bytes).unwrap();
    assert_eq!(
        syclbin.modules[0].kernel_names,
        ["__sycl_kernel_reduce_sum", "__sycl_kernel_reduce_total"]
    );
    let bundle = syclbin.to_bundle().unwrap();
    assert_eq!(bundle.kernels[0].local_memory_bytes, 1024);

    let inspect = kdsl(&["inspect", out.to_str().unwrap()]);
    assert!(inspect.status.success(), "{}", stderr(&inspect));
    let text = String::from_utf8_lossy(&inspect.stdout);
    for line in [
        ": SYCLBIN, state executable, 1 abstract module",
        "  entry points: __sycl_kernel_reduce_sum",
        "  IR module: SPIR-V, ",
        "  native image: nvptx64-nvidia-cuda sm_90, ",
        "  native image: amdgcn-amd-amdhsa gfx90a, ",
        "kernel reduce_sum(partial_sums: global mut [f32], input: global [f32], n: u32) local memory 1024 bytes",
    ] {
        assert!(text.contains(line), "missing {line:?} in:\n{text}");
    }

    assert!(
        !stderr(&output).contains("warning:"),
        "one image per target: {}",
        stderr(&output)
    );
    // Several PTX images: only the first is ever taken by a SYCL runtime.
    let output = kdsl(&[
        "compile",
        "examples/saxpy.krn",
        "--format",
        "syclbin",
        "--target",
        "ptx",
        "--arch",
        "sm_75,sm_90",
        "-o",
        scratch("two-ptx.syclbin").to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("warning: the nvptx64-nvidia-cuda sm_90 image will not be used by SYCL runtimes: they take the first nvptx64-nvidia-cuda image (here sm_75)"),
        "{}",
        stderr(&output)
    );

    // A damaged file is an error message, not a panic.
    let damaged = scratch("damaged.syclbin");
    std::fs::write(&damaged, &bytes[..bytes.len() / 2]).unwrap();
    let inspect = kdsl(&["inspect", damaged.to_str().unwrap()]);
    assert_eq!(inspect.status.code(), Some(1), "{}", stderr(&inspect));
    assert!(
        stderr(&inspect).contains("error: the bundle is truncated or corrupt: SYCLBIN:"),
        "{}",
        stderr(&inspect)
    );

    // --emit writes one artifact, so it does not combine with --format.
    let output = kdsl(&[
        "compile",
        "examples/saxpy.krn",
        "--format",
        "syclbin",
        "--emit",
        "ptx",
    ]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("cannot be used with"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn defines_set_module_constants_and_the_bundle_records_them() {
    let file = "tests/kernels/work_group_size.krn";
    let defined = scratch("defined.kbundle");
    let output = kdsl(&[
        "compile",
        file,
        "--target",
        "spirv",
        "-D",
        "BLOCK=128",
        "-o",
        defined.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let bundle = kdsl_bundle_from(&defined);
    let block = bundle.constant("BLOCK").expect("BLOCK is recorded");
    assert_eq!(block.value.as_u64(), Some(128));
    assert!(block.defined);
    // The constant sizes the attribute, and through it the local array.
    let kernel = bundle.kernel("block_sums").unwrap();
    assert_eq!(kernel.work_group_size, Some([128, 1, 1]));
    assert_eq!(kernel.local_memory_bytes, 128 * 4);
    assert_eq!(
        bundle.kernel("reverse_tiles").unwrap().work_group_size,
        Some([8, 4, 1])
    );
    let inspect = kdsl(&["inspect", defined.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&inspect.stdout);
    assert!(
        text.contains("const BLOCK: u32 = 128 (set by -D)"),
        "{text}"
    );
    assert!(
        text.contains("kernel block_sums(sums: global mut [f32], input: global [f32]) local memory 512 bytes, work-group size 128 x 1 x 1"),
        "{text}"
    );

    let declared = scratch("declared.kbundle");
    let output = kdsl(&[
        "compile",
        file,
        "--target",
        "spirv",
        "-o",
        declared.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let bundle = kdsl_bundle_from(&declared);
    let block = bundle.constant("BLOCK").unwrap();
    assert_eq!((block.value.as_u64(), block.defined), (Some(64), false));
    let inspect = kdsl(&["inspect", declared.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&inspect.stdout);
    assert!(text.contains("const BLOCK: u32 = 64\n"), "{text}");

    let ir = scratch("defined.kir");
    let output = kdsl(&[
        "compile",
        file,
        "--emit",
        "ir",
        "--define",
        "BLOCK=32",
        "-o",
        ir.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = std::fs::read_to_string(&ir).unwrap();
    assert!(text.contains("#[work_group_size(32, 1, 1)]"), "{text}");
    assert!(text.contains("[f32; 32] local"), "{text}");
}

#[test]
fn wrong_defines_are_diagnostics() {
    let file = "tests/kernels/work_group_size.krn";
    let output = kdsl(&["check", file, "-D", "BLOK=3"]);
    assert_eq!(output.status.code(), Some(1));
    let text = stderr(&output);
    assert!(
        text.contains("error[E0701]: `-D BLOK=3`: there is no module constant `BLOK`"),
        "{text}"
    );
    assert!(text.contains("= hint: did you mean `BLOCK`?"), "{text}");

    let output = kdsl(&["compile", file, "-D", "BLOCK=1.5", "-D", "BLOCK=2"]);
    assert_eq!(output.status.code(), Some(1));
    let text = stderr(&output);
    assert!(text.contains("error[E0704]"), "{text}");

    let output = kdsl(&["compile", file, "-D", "BLOCK=-64"]);
    assert_eq!(output.status.code(), Some(1));
    let text = stderr(&output);
    assert!(
        text.contains("error[E0703]: `-D BLOCK=-64`: `-64` is out of range for `u32`"),
        "{text}"
    );
    assert!(
        text.contains("tests/kernels/work_group_size.krn:5:7"),
        "the declaration is shown: {text}"
    );

    let output = kdsl(&["check", file, "-D", "BLOCK"]);
    assert_eq!(
        output.status.code(),
        Some(2),
        "a malformed -D is a usage error"
    );
    assert!(
        stderr(&output).contains("expected NAME=VALUE"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn timings_break_the_compilation_down_by_phase_and_target() {
    let output_path = scratch("timed.kbundle");
    let output = kdsl(&[
        "compile",
        "examples/softmax.krn",
        "--timings",
        "-o",
        output_path.to_str().unwrap(),
    ]);
    let text = stderr(&output);
    assert!(output.status.success(), "{text}");
    assert!(text.starts_with("timings (ms"), "{text}");
    let milliseconds = |line: &str| -> f64 {
        line.split_whitespace()
            .find_map(|word| word.parse::<f64>().ok())
            .unwrap_or_else(|| panic!("no figure in `{line}`"))
    };
    let line = |prefix: &str| -> Vec<&str> {
        text.lines()
            .filter(|l| l.trim_start().starts_with(prefix))
            .collect()
    };
    for phase in ["parse", "check", "total"] {
        assert_eq!(line(phase).len(), 1, "{phase} once:\n{text}");
    }
    // The default targets (kdsl::default_targets).
    let targets = [
        "spirv ",
        "ptx:sm_75 ",
        "ptx:sm_90 ",
        "amdgpu:gfx90a ",
        "amdgpu:gfx1100 ",
    ];
    for target in targets {
        assert_eq!(line(target).len(), 1, "{target} once:\n{text}");
    }
    // Every target has each phase; softmax calls exp, so PTX and AMDGPU load a library.
    for phase in [
        "lowering",
        "library loading",
        "optimization",
        "backend",
        "linking",
    ] {
        assert_eq!(
            line(phase).len(),
            targets.len(),
            "{phase} per target:\n{text}"
        );
    }
    let total = milliseconds(line("total")[0]);
    let backend_sum: f64 = line("backend").iter().map(|l| milliseconds(l)).sum();
    assert!(total > 0.0 && backend_sum > 0.0, "{text}");
    // Each target's figure is the sum of its phases, and no target outlasts the total.
    for target in targets {
        assert!(milliseconds(line(target)[0]) <= total, "{text}");
    }
    assert!(
        milliseconds(line("linking")[3]) > 0.0,
        "AMDGPU runs ld.lld:\n{text}"
    );
    // Without --timings, nothing but the summary line.
    let quiet = kdsl(&[
        "compile",
        "examples/saxpy.krn",
        "-o",
        output_path.to_str().unwrap(),
    ]);
    assert!(!stderr(&quiet).contains("timings"), "{}", stderr(&quiet));
}

#[test]
fn an_impossible_unroll_is_a_warning_and_the_file_still_compiles() {
    let source = scratch("unroll_warning.krn");
    std::fs::write(
        &source,
        "kernel k(out: global mut [u32], n: u32) {\n    for a in 0..n unroll { out[a] = a; }\n}\n",
    )
    .unwrap();
    let output_path = scratch("unroll_warning.kbundle");
    for arguments in [
        vec!["check", source.to_str().unwrap()],
        vec![
            "compile",
            source.to_str().unwrap(),
            "--target",
            "ptx",
            "-o",
            output_path.to_str().unwrap(),
        ],
    ] {
        let output = kdsl(&arguments);
        let text = stderr(&output);
        assert!(output.status.success(), "{text}");
        assert!(text.contains("warning[W0516]"), "{text}");
        assert!(text.contains("unroll_warning.krn:2:19"), "{text}");
    }
    assert!(output_path.is_file());
}

#[test]
fn math_library_subsets_are_cached_on_disk_and_a_damaged_cache_is_rebuilt() {
    let cache = scratch("library-cache");
    let _ = std::fs::remove_dir_all(&cache);
    let compile = |output: &Path| {
        let run = Command::new(env!("CARGO_BIN_EXE_kdsl"))
            .args([
                "compile",
                "examples/softmax.krn",
                "--target",
                "ptx,amdgpu",
                "-o",
            ])
            .arg(output)
            .env("KDSL_CACHE_DIR", &cache)
            .current_dir(workspace())
            .output()
            .expect("the kdsl binary runs");
        assert!(run.status.success(), "{}", stderr(&run));
    };
    let cached_files = || -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(&cache)
            .map(|entries| entries.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        files.sort();
        files
    };
    let first = scratch("cache-first.kbundle");
    compile(&first);
    // softmax calls exp: one subset for libdevice (PTX), one for libclc (AMDGPU).
    let files = cached_files();
    assert_eq!(files.len(), 2, "{files:?}");
    let second = scratch("cache-second.kbundle");
    compile(&second);
    assert_eq!(cached_files(), files, "the second run reuses the cache");
    for file in &files {
        std::fs::write(file, b"not bitcode").unwrap();
    }
    let third = scratch("cache-third.kbundle");
    compile(&third);
    for file in &files {
        let bytes = std::fs::read(file).unwrap();
        assert!(
            bytes.starts_with(b"BC"),
            "{} was not rebuilt",
            file.display()
        );
    }
    // Valid bitcode cut in half: the header reads, the rest does not.
    for file in &files {
        let bytes = std::fs::read(file).unwrap();
        std::fs::write(file, &bytes[..bytes.len() / 2]).unwrap();
    }
    let fourth = scratch("cache-fourth.kbundle");
    compile(&fourth);
    let images = |path: &Path| -> Vec<Vec<u8>> {
        kdsl_bundle_from(path)
            .images
            .into_iter()
            .map(|image| image.bytes)
            .collect()
    };
    assert_eq!(images(&first), images(&second));
    assert_eq!(images(&first), images(&third));
    assert_eq!(images(&first), images(&fourth));
    // One byte changed in the middle: the file's hash no longer matches, so it is rebuilt.
    let whole: Vec<Vec<u8>> = files
        .iter()
        .map(|file| std::fs::read(file).unwrap())
        .collect();
    for (file, bytes) in files.iter().zip(&whole) {
        let mut damaged = bytes.clone();
        damaged[bytes.len() / 2] ^= 0x10;
        std::fs::write(file, damaged).unwrap();
    }
    let fifth = scratch("cache-fifth.kbundle");
    compile(&fifth);
    for (file, bytes) in files.iter().zip(&whole) {
        assert!(
            std::fs::read(file).unwrap() == *bytes,
            "{} was not rebuilt",
            file.display()
        );
    }
    assert_eq!(images(&first), images(&fifth));
}

#[test]
fn checked_compiles_record_the_check_sites_with_lines() {
    let file = "tests/kernels/checked.krn";
    let checked = scratch("checked.kbundle");
    let output = kdsl(&[
        "compile",
        file,
        "--checked",
        "--target",
        "spirv,ptx",
        "-o",
        checked.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let bundle = kdsl_bundle_from(&checked);
    let kernel = bundle.kernel("write_past").unwrap();
    assert!(kernel.checked);
    // `output[i + offset] = i + 1;`: the value's `+`, the index's `+`, then the store.
    let sites: Vec<(&str, u32, u32)> = kernel
        .check_sites
        .iter()
        .map(|site| (site.what.as_str(), site.line, site.column))
        .collect();
    assert_eq!(
        sites,
        [
            ("`+` on `u32`", 8, 26),
            ("`+` on `u32`", 8, 12),
            ("buffer `output`", 8, 5)
        ]
    );
    let plain = scratch("unchecked.kbundle");
    let output = kdsl(&[
        "compile",
        file,
        "--target",
        "spirv",
        "-o",
        plain.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(kdsl_bundle_from(&plain).kernels.iter().all(|k| !k.checked));
}

#[test]
fn default_targets_a_kernel_does_not_fit_are_skipped_with_a_warning() {
    // 128 KiB of local memory: fine on the CPU device, more than NVIDIA and AMD GPUs allow.
    let source = scratch("cpu_only.krn");
    std::fs::write(
        &source,
        "kernel big(out: global mut [f32]) {\n    local tile: [f32; 32768];\n    tile[get_local_id(0)] = 1.0;\n    barrier();\n    out[get_global_id(0)] = tile[0];\n}\n",
    )
    .unwrap();
    let output = scratch("cpu_only.kbundle");
    let defaulted = kdsl(&[
        "compile",
        source.to_str().unwrap(),
        "-o",
        output.to_str().unwrap(),
    ]);
    let message = stderr(&defaulted);
    assert!(defaulted.status.success(), "{message}");
    assert!(
        message.contains("warning: skipping target ptx:sm_75"),
        "{message}"
    );
    for skipped in ["ptx:sm_90", "amdgpu:gfx90a", "amdgpu:gfx1100"] {
        assert!(
            message.contains(&format!("warning: skipping target {skipped} ")),
            "{message}"
        );
    }
    assert!(message.contains("E0602"), "{message}");
    assert!(message.contains("--target spirv"), "{message}");
    let bundle = kdsl_bundle_from(&output);
    let targets: Vec<_> = bundle.images.iter().map(|i| i.target).collect();
    assert_eq!(targets, vec![kdsl_bundle::TargetKind::Spirv], "{message}");
    // Asked for by name, the same target is an error.
    let explicit = kdsl(&[
        "compile",
        source.to_str().unwrap(),
        "--target",
        "spirv,ptx",
        "-o",
        output.to_str().unwrap(),
    ]);
    assert!(!explicit.status.success());
    assert!(stderr(&explicit).contains("E0602"), "{}", stderr(&explicit));
}

#[test]
fn default_targets_of_matrix_groups_add_the_wgmma_processor() {
    let output = scratch("hgemm_wgmma.kbundle");
    let describe = |arguments: &[&str]| {
        let mut all = vec!["compile", "examples/hgemm_wgmma.krn", "-o"];
        all.push(output.to_str().unwrap());
        all.extend(arguments);
        let compiled = kdsl(&all);
        assert!(compiled.status.success(), "{}", stderr(&compiled));
        let bundle = kdsl_bundle_from(&output);
        let units: Vec<String> = bundle
            .images
            .iter()
            .filter(|image| image.matrix_units)
            .map(|image| image.describe())
            .collect();
        (bundle.describe_images(), units)
    };
    assert_eq!(
        describe(&[]),
        (
            "spirv, ptx:sm_75, ptx:sm_90, ptx:sm_90a, amdgpu:gfx90a, amdgpu:gfx1100".to_string(),
            vec!["ptx:sm_90".to_string(), "ptx:sm_90a".to_string()]
        )
    );
    let inspect = kdsl(&["inspect", output.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&inspect.stdout);
    assert!(
        text.contains("matrix units: ptx:sm_90, ptx:sm_90a")
            && text.contains("matrix groups on matrix units (whole groups of 128 work-items): ptx:sm_90, ptx:sm_90a")
            && text.contains("matrix groups (work-groups of a multiple of 128 on matrix units)"),
        "{text}"
    );
    // Named PTX processors replace the defaults, extra ones included.
    assert_eq!(
        describe(&["--arch", "sm_80"]).0,
        "spirv, ptx:sm_80, amdgpu:gfx90a, amdgpu:gfx1100"
    );
    // Named targets are taken as they are.
    assert_eq!(describe(&["--target", "ptx"]).0, "ptx:sm_75");
    let saxpy = kdsl(&[
        "compile",
        "examples/saxpy.krn",
        "-o",
        output.to_str().unwrap(),
    ]);
    assert!(saxpy.status.success(), "{}", stderr(&saxpy));
    assert!(!kdsl_bundle_from(&output)
        .describe_images()
        .contains("sm_90a"));
}

#[test]
fn output_to_a_closed_pipe_or_a_full_disk_is_no_panic() {
    let bundle = scratch("inspect_me.kbundle");
    let compiled = kdsl(&[
        "compile",
        "examples/saxpy.krn",
        "--target",
        "spirv",
        "-o",
        bundle.to_str().unwrap(),
    ]);
    assert!(compiled.status.success(), "{}", stderr(&compiled));
    let inspect = || {
        let mut command = Command::new(env!("CARGO_BIN_EXE_kdsl"));
        command
            .args(["inspect", bundle.to_str().unwrap()])
            .current_dir(workspace())
            .stderr(std::process::Stdio::piped());
        command
    };
    // The reader went away before the first line (`kdsl inspect x | head -0`).
    let mut child = inspect()
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let closed = child.wait_with_output().unwrap();
    assert_eq!(closed.status.code(), Some(141), "{}", stderr(&closed));
    assert!(stderr(&closed).is_empty(), "{}", stderr(&closed));
    // Diagnostics to a closed standard error: the failed check still says so by its status.
    let source = scratch("undefined_name.krn");
    std::fs::write(
        &source,
        "kernel k(out: global mut [f32]) {\n    out[0] = missing;\n}\n",
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_kdsl"))
        .args(["check", source.to_str().unwrap()])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take());
    assert_eq!(child.wait().unwrap().code(), Some(1));
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full");
    if let Ok(full) = full {
        let failed = inspect().stdout(full).output().unwrap();
        assert_eq!(failed.status.code(), Some(1));
        assert!(
            stderr(&failed).starts_with("error: cannot write to standard output")
                && !stderr(&failed).contains("panicked"),
            "{}",
            stderr(&failed)
        );
    }
}
