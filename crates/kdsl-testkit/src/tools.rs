//! The validators the tests check images with (`spirv-val`, `ptxas`, `llvm-readobj`, `llc`),
//! found where `scripts/setup.sh` installs them; a missing one fails the test with a pointer
//! to that script.

use std::path::PathBuf;

/// A tool from `PATH` or LLVM 22's directory, the first of `names` found.
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
    panic!("validator {names:?} not found in PATH or /usr/lib/llvm-22/bin; run scripts/setup.sh")
}

/// The CUDA assembler the set-up script installs into the prefix (PyPI `nvidia-cuda-nvcc`).
pub fn ptxas() -> PathBuf {
    find_ptxas().unwrap_or_else(|why| panic!("{why}"))
}

/// [`ptxas`], or why it is missing.
pub fn find_ptxas() -> Result<PathBuf, String> {
    let prefix = std::env::var_os(kdsl_bundle::environment::PREFIX)
        .map(PathBuf::from)
        .or_else(|| option_env!("KDSL_PREFIX").map(PathBuf::from))
        .ok_or("KDSL_PREFIX is not set; run scripts/setup.sh (or use cargo, which sets it)")?;
    let lib = prefix.join("lib");
    std::fs::read_dir(&lib)
        .ok()
        .and_then(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
                .map(|e| e.path().join("site-packages/nvidia/cu13/bin/ptxas"))
                .find(|p| p.is_file())
        })
        .ok_or_else(|| {
            format!(
                "ptxas not found under {}/python3.*/site-packages/nvidia/cu13/bin; run scripts/setup.sh",
                lib.display()
            )
        })
}
