//! The first SPIR-V module of a process goes through LLVM's SPIR-V backend in process, later
//! ones through an `llc-22` child process (LLVM 22 keeps backend state in a static; see
//! `target/spirv.rs`). This file holds one test so that it owns its process: both ways must
//! give the same valid SPIR-V, kernel by kernel file.

use kdsl_codegen::{compile, Options, TargetSpec};
use std::path::{Path, PathBuf};

fn spirv_val() -> PathBuf {
    let mut directories: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    directories.push("/usr/bin".into());
    directories
        .into_iter()
        .map(|directory| directory.join("spirv-val"))
        .find(|candidate| candidate.is_file())
        .expect("spirv-val not found; run scripts/setup.sh")
}

fn validate(name: &str, binary: &[u8]) {
    let path = std::env::temp_dir().join(format!(
        "kdsl-spirv-in-process-{}-{}.spv",
        std::process::id(),
        name.replace('/', "_")
    ));
    std::fs::write(&path, binary).expect("writable temporary directory");
    let output = std::process::Command::new(spirv_val())
        .arg(&path)
        .output()
        .expect("spirv-val runs");
    let _ = std::fs::remove_file(&path);
    assert!(
        output.status.success(),
        "{name}: spirv-val rejects the module:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn the_in_process_backend_and_llc_give_the_same_valid_spirv() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    // `language.krn` holds the private-array indexing that LLVM 22 miscompiles at -O1: both
    // ways run the backend at -O0.
    for file in ["tests/kernels/language.krn", "examples/softmax.krn"] {
        let source = std::fs::read_to_string(root.join(file)).expect("kernel file");
        let module = kdsl_frontend::compile_to_ir(&source).expect("compiles");
        let first = compile(&module, &TargetSpec::spirv(), &Options::default()).expect("SPIR-V");
        let second = compile(&module, &TargetSpec::spirv(), &Options::default()).expect("SPIR-V");
        if file == "tests/kernels/language.krn" {
            assert_eq!(first.timings.backend_runs, "in process");
        } else {
            assert_ne!(first.timings.backend_runs, "in process");
        }
        assert!(
            second.timings.backend_runs.contains("child process"),
            "{}",
            second.timings.backend_runs
        );
        validate(file, &first.image.bytes);
        validate(file, &second.image.bytes);
        assert!(
            first.image.bytes == second.image.bytes,
            "{file}: the in-process backend and llc disagree"
        );
    }
}
