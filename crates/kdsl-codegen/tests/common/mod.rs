//! What the code generator's test modules share: the validators images are checked with, and
//! the kernel files parsed and compiled once for the whole binary.

use kdsl_codegen::{compile, Artifact, Options, TargetSpec};
pub use kdsl_testkit::tools::{ptxas, tool};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// `bytes` in a new scratch file, its name unique in the process: tests run in parallel and
/// may write the same kernel's image at once.
pub fn scratch_file(name: &str, bytes: &[u8]) -> PathBuf {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let path = std::env::temp_dir().join(format!(
        "kdsl-codegen-test-{}-{}-{name}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&path, bytes).expect("writable temporary directory");
    path
}

/// Runs a validator on `bytes` written to a scratch file; panics with its output on failure.
pub fn validate(name: &str, extension: &str, bytes: &[u8], command: &mut Command) -> String {
    let file = scratch_file(&format!("{name}.{extension}"), bytes);
    let output = command.arg(&file).output().expect("validator runs");
    let _ = std::fs::remove_file(&file);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{command:?} on {name}: {text}");
    text
}

/// Every example and test kernel file as (stem, module), parsed once for the whole binary.
pub fn kernel_modules() -> &'static [(String, kdsl_ir::Module)] {
    static MODULES: OnceLock<Vec<(String, kdsl_ir::Module)>> = OnceLock::new();
    MODULES.get_or_init(|| {
        let modules: Vec<(String, kdsl_ir::Module)> = kdsl_testkit::files::kernel_sources()
            .into_iter()
            .map(|(stem, source)| {
                let module = kdsl_frontend::compile_to_ir(&source).unwrap_or_else(|d| {
                    panic!(
                        "{stem}.krn does not compile:\n{}",
                        kdsl_frontend::render_diagnostics(&stem, &source, &d, false)
                    )
                });
                (stem, module)
            })
            .collect();
        assert!(
            modules.len() >= 14,
            "expected the kernels, found {}",
            modules.len()
        );
        modules
    })
}

/// The generated GEMMs among the examples (`benchmarks/matrix/gemm_variants.py`: launch-sized
/// rings, 4 x 4 accumulator tiles, hundreds of statements; `wgmma_variants.py`: 128-element
/// matrix-group accumulators). Checked mode expands their tiles
/// into plain loops with a check at every access, which makes their checked images by far the
/// slowest of this binary to build and validate (`hgemm`: 20 to 30 s per AMDGPU processor and
/// 11 s of `ptxas`, where its plain images take about 1 s). `tests/kernels/matrix_ring.krn`,
/// a smaller GEMM of the same generator, stands in for them where they are compiled for fewer
/// processors.
pub const GENERATED_GEMMS: [&str; 5] = [
    "hgemm",
    "sgemm_tf32",
    "hgemm_wgmma",
    "sgemm_tf32_wgmma",
    "gemm_bf16_wgmma",
];

/// The processors a kernel file is compiled checked for (`checked.rs`, `image_checks.rs`):
/// SPIR-V, PTX for sm_75 and sm_90, AMDGPU for gfx90a and gfx1100. The [`GENERATED_GEMMS`]
/// are compiled checked for SPIR-V and sm_90 alone: checked mode lowers their tiles, copies and
/// rings as it does `matrix_ring.krn`'s, which is compiled for all of them, so the other
/// processors would only build the same lowering larger.
pub fn checked_targets(stem: &str) -> Vec<TargetSpec> {
    let mut targets = vec![TargetSpec::spirv(), TargetSpec::ptx(Some("sm_90"))];
    if !GENERATED_GEMMS.contains(&stem) {
        targets.extend([
            TargetSpec::ptx(Some("sm_75")),
            TargetSpec::amdgpu(Some("gfx90a")),
            TargetSpec::amdgpu(Some("gfx1100")),
        ]);
    }
    targets
}

/// The files of the [`GENERATED_GEMMS`] and `matrix_ring.krn`, with their sources.
fn generated_gemm_sources() -> Vec<(PathBuf, String)> {
    let root = kdsl_testkit::files::workspace_root();
    GENERATED_GEMMS
        .iter()
        .map(|stem| root.join(format!("examples/{stem}.krn")))
        .chain([root.join("tests/kernels/matrix_ring.krn")])
        .map(|path| {
            let source = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            (path, source)
        })
        .collect()
}

/// The generated GEMMs are examples written by the generator, and `matrix_ring.krn`, which
/// stands in for them, is one too: a renamed file would silently leave the list.
#[test]
fn generated_gemms_are_the_generators_examples() {
    for (path, source) in generated_gemm_sources() {
        let sub_group = source.contains("gemm_variants.py") && source.contains("matrix_mma(");
        let group = source.contains("wgmma_variants.py") && source.contains("matrix_group_mma");
        assert!(
            sub_group || group,
            "{} is no GEMM of benchmarks/matrix/gemm_variants.py or wgmma_variants.py",
            path.display()
        );
    }
}

/// Each generated GEMM is what its generator writes today for the arguments its header names
/// (`(Generated by ...py ARGS.)`, `OUT` standing for the output file or appended): a change
/// to a generator that would change an example fails here until the example is regenerated.
/// Comments may differ (the examples explain more).
#[test]
fn generated_gemms_match_their_generators_output() {
    let root = kdsl_testkit::files::workspace_root();
    let folder = std::env::temp_dir().join(format!("kdsl-generated-gemms-{}", std::process::id()));
    std::fs::create_dir_all(&folder).expect("a temporary folder");
    let code = |text: &str| -> Vec<String> {
        text.lines()
            .map(str::trim_end)
            .filter(|line| !line.trim_start().starts_with("//") && !line.is_empty())
            .map(String::from)
            .collect()
    };
    for (path, source) in generated_gemm_sources() {
        let comments: Vec<&str> = source
            .lines()
            .filter_map(|line| line.trim_start().strip_prefix("//"))
            .map(str::trim)
            .collect();
        let comments = comments.join(" ");
        let (_, generated) = comments
            .split_once("(Generated by ")
            .unwrap_or_else(|| panic!("{} names no generator", path.display()));
        let (command, _) = generated
            .split_once(".)")
            .unwrap_or_else(|| panic!("{}: the generator's arguments end in `.)`", path.display()));
        let mut words = command.split_whitespace();
        let script = words.next().expect("a generator script");
        let script = root
            .join("benchmarks/matrix")
            .join(Path::new(script).file_name().expect("a script file name"));
        let output = folder.join(path.file_name().expect("a file name"));
        let output_text = output.to_string_lossy().into_owned();
        let mut arguments: Vec<String> = words
            .map(|word| {
                if word == "OUT" {
                    output_text.clone()
                } else {
                    word.to_string()
                }
            })
            .collect();
        if !arguments.contains(&output_text) {
            arguments.push(output_text.clone());
        }
        let status = Command::new("python3")
            .arg(&script)
            .args(&arguments)
            .status()
            .unwrap_or_else(|e| panic!("python3 {}: {e}", script.display()));
        assert!(
            status.success(),
            "python3 {} {arguments:?}: {status}",
            script.display()
        );
        let written = std::fs::read_to_string(&output).expect("the generator's output");
        assert_eq!(
            code(&written),
            code(&source),
            "{} is not what `{command}` writes now: regenerate it",
            path.display()
        );
    }
    std::fs::remove_dir_all(&folder).ok();
}

type ArtifactKey = (String, String, bool);
/// A compiled image (or the error) and how long the compile took.
type Compiled = Result<(Arc<Artifact>, Duration), String>;
type Artifacts = Mutex<HashMap<ArtifactKey, Arc<OnceLock<Compiled>>>>;

/// A kernel file (from [`kernel_modules`]) compiled for `spec`, plain or checked, once per
/// binary: the validation, image-check and checked-mode modules look at the same images, and
/// compiling each only once is most of this binary's time saved. A test asking for an image
/// another test is compiling waits for it instead of compiling it too. Tests of the compiler's
/// own determinism compile afresh instead.
pub fn artifact(
    stem: &str,
    module: &kdsl_ir::Module,
    spec: &TargetSpec,
    checked: bool,
) -> Result<Arc<Artifact>, String> {
    timed_artifact(stem, module, spec, checked).map(|(artifact, _)| artifact)
}

/// [`artifact`] with the time its one compile took (`targets::compile_times` reports them).
pub fn timed_artifact(
    stem: &str,
    module: &kdsl_ir::Module,
    spec: &TargetSpec,
    checked: bool,
) -> Compiled {
    static ARTIFACTS: OnceLock<Artifacts> = OnceLock::new();
    let key = (stem.to_string(), spec.to_string(), checked);
    let slot = ARTIFACTS
        .get_or_init(Default::default)
        .lock()
        .unwrap()
        .entry(key)
        .or_default()
        .clone();
    slot.get_or_init(|| {
        let options = Options {
            checked,
            ..Options::default()
        };
        let start = Instant::now();
        compile(module, spec, &options)
            .map(|artifact| (Arc::new(artifact), start.elapsed()))
            .map_err(|e| e.to_string())
    })
    .clone()
}

/// The text of `define ... @name(` up to its closing brace in LLVM IR.
pub fn llvm_function<'a>(ir: &'a str, name: &str) -> &'a str {
    let marker = format!("@{name}(");
    let start = ir
        .match_indices("define ")
        .map(|(index, _)| index)
        .find(|&index| ir[index..].lines().next().unwrap_or("").contains(&marker))
        .unwrap_or_else(|| panic!("no function {name} in\n{ir}"));
    let end = ir[start..].find("\n}").map_or(ir.len(), |end| start + end);
    &ir[start..end]
}
