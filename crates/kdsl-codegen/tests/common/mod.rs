//! Finding and running the validators the code generation tests check images with.

use std::path::PathBuf;
use std::process::Command;

/// A tool from `PATH` or LLVM 22's directory; fails with a pointer to the set-up script.
pub fn tool(names: &[&str]) -> PathBuf {
    let mut directories: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    directories.push("/usr/lib/llvm-22/bin".into());
    for name in names {
        for directory in &directories {
            if directory.join(name).is_file() {
                return directory.join(name);
            }
        }
    }
    panic!("validator {names:?} not found; run scripts/setup.sh")
}

/// The CUDA assembler the set-up script installs into the prefix.
pub fn ptxas() -> PathBuf {
    let prefix = std::env::var_os("KDSL_PREFIX")
        .map(PathBuf::from)
        .or_else(|| option_env!("KDSL_PREFIX").map(PathBuf::from))
        .expect("KDSL_PREFIX is not set; run scripts/setup.sh");
    std::fs::read_dir(prefix.join("lib"))
        .ok()
        .and_then(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
                .map(|e| e.path().join("site-packages/nvidia/cu13/bin/ptxas"))
                .find(|p| p.is_file())
        })
        .expect("ptxas not found in the prefix; run scripts/setup.sh")
}

/// Runs a validator on `bytes` written to a scratch file; panics with its output on failure.
pub fn validate(name: &str, extension: &str, bytes: &[u8], command: &mut Command) -> String {
    let file = std::env::temp_dir().join(format!(
        "kdsl-codegen-test-{}-{name}.{extension}",
        std::process::id()
    ));
    std::fs::write(&file, bytes).unwrap();
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
