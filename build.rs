//! Checks, before anything links against LLVM, that the toolchain kdsl needs is present,
//! and turns a missing piece into one actionable message instead of a linker or
//! llvm-sys error deep in the build log.

use std::path::{Path, PathBuf};
use std::process::Command;

const SETUP_HINT: &str = "run `bash scripts/setup.sh` (it installs LLVM 22 and the SYCL prefix), \
or point LLVM_SYS_221_PREFIX at an LLVM 22 installation";

fn main() {
    println!("cargo:rerun-if-env-changed=LLVM_SYS_221_PREFIX");
    println!("cargo:rerun-if-env-changed=KDSL_PREFIX");
    println!("cargo:rerun-if-changed=build.rs");

    let llvm_prefix = std::env::var_os("LLVM_SYS_221_PREFIX")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/lib/llvm-22"));
    match llvm_version(&llvm_prefix) {
        Some(version) if version.starts_with("22.") => {}
        Some(version) => fail(&format!(
            "kdsl needs LLVM 22, but {} reports version {version}",
            llvm_prefix.join("bin/llvm-config").display()
        )),
        None => fail(&format!(
            "kdsl needs LLVM 22, and there is no llvm-config under {}",
            llvm_prefix.display()
        )),
    }

    // The SYCL runtime is optional for the compiler but needed by the default `sycl` feature.
    if std::env::var_os("CARGO_FEATURE_SYCL").is_some() {
        let prefix = std::env::var_os("KDSL_PREFIX").map(PathBuf::from);
        let has_sycl = prefix.as_deref().is_some_and(|p| {
            p.join("include/sycl/sycl.hpp").exists() && p.join("lib").join("libsycl.so").exists()
        });
        if !has_sycl {
            fail(&format!(
                "the `sycl` feature needs the Intel SYCL runtime in KDSL_PREFIX ({}), which lacks \
                 include/sycl/sycl.hpp or lib/libsycl.so; build with --no-default-features to leave it out",
                prefix.as_deref().map_or("unset".into(), |p| p.display().to_string())
            ));
        }
    }
}

fn llvm_version(prefix: &Path) -> Option<String> {
    let output = Command::new(prefix.join("bin/llvm-config"))
        .arg("--version")
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_string())
}

fn fail(problem: &str) -> ! {
    eprintln!("error: {problem}.\n  help: {SETUP_HINT}.");
    std::process::exit(1);
}
