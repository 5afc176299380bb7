//! Runs tests/dpctl_smoke.py: dpctl (an independent SYCL front end) builds the SPIR-V of a
//! saxpy bundle and runs it, which cross-checks the bundle format and the SPIR-V image.
//! Uses `<bundles>/saxpy.kbundle` when present, otherwise the hand-made bundle of tests/data.

mod common;

use std::path::PathBuf;
use std::process::Command;

#[test]
fn dpctl_runs_the_saxpy_spirv() {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let prefix = std::env::var("KDSL_PREFIX")
        .map(PathBuf::from)
        .unwrap_or_else(|_| manifest.join("../../.kdsl/prefix"));
    let python = prefix.join("bin/python");
    if !python.exists() {
        eprintln!(
            "skipping: no Python prefix at {} (run `bash scripts/setup.sh` to install dpctl there)",
            python.display()
        );
        return;
    }
    let bundles = std::env::var("KDSL_TEST_BUNDLES")
        .map(PathBuf::from)
        .unwrap_or_else(|_| manifest.join("../../target/kdsl-bundles"));
    let mut bundle = bundles.join("saxpy.kbundle");
    let temporary = !bundle.exists();
    if temporary {
        bundle = std::env::temp_dir().join(format!("kdsl-handmade-{}.kbundle", std::process::id()));
        common::handmade_bundle()
            .write(&bundle)
            .expect("the temporary bundle is writable");
    }
    let library_path = match std::env::var("LD_LIBRARY_PATH") {
        Ok(existing) if !existing.is_empty() => {
            format!("{}:{existing}", prefix.join("lib").display())
        }
        _ => prefix.join("lib").display().to_string(),
    };
    let output = Command::new(&python)
        .arg(manifest.join("tests/dpctl_smoke.py"))
        .arg(&bundle)
        .env("LD_LIBRARY_PATH", library_path)
        .env(
            "OCL_ICD_FILENAMES",
            std::env::var("OCL_ICD_FILENAMES")
                .unwrap_or_else(|_| prefix.join("lib/libintelocl.so").display().to_string()),
        )
        .output()
        .expect("the prefix's python runs");
    if temporary {
        let _ = std::fs::remove_file(&bundle);
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "dpctl_smoke.py failed on {}:\n{stdout}\n{stderr}",
        bundle.display()
    );
    assert!(
        stdout.contains("dpctl saxpy OK"),
        "unexpected output: {stdout}"
    );
    eprintln!("{}", stdout.trim());
}
