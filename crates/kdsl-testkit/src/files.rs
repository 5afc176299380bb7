//! The repository and its kernel files, as every harness finds them.

use std::path::{Path, PathBuf};

/// The repository root: `KDSL_WORKSPACE` when set (a test binary copied to a GPU machine),
/// else the folder two levels above this crate.
pub fn workspace_root() -> PathBuf {
    if let Some(root) = std::env::var_os(kdsl_bundle::environment::WORKSPACE) {
        return PathBuf::from(root);
    }
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root exists")
}

/// The folders of kernel files that compile (`examples/`, `tests/kernels/`).
pub const KERNEL_FOLDERS: [&str; 2] = ["examples", "tests/kernels"];
/// Every folder of valid `.krn` files: the examples, the feature kernels, the benchmark's and
/// the Python tests' inputs, the generator's kept regressions.
pub const VALID_FOLDERS: [&str; 7] = [
    "examples",
    "examples/python",
    "tests/kernels",
    "crates/kdsl-bench/inputs",
    "crates/kdsl-bench/python",
    "crates/kdsl-fuzzgen/tests",
    "python/tests/kernels",
];
/// The folder of kernel files that must fail with diagnostics.
pub const ERROR_FOLDER: &str = "tests/errors";

/// The `.krn` files of a folder of the repository, sorted; an unreadable folder panics.
pub fn krn_files(folder: &str) -> Vec<PathBuf> {
    let directory = workspace_root().join(folder);
    let entries = std::fs::read_dir(&directory)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", directory.display()));
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "krn"))
        .collect();
    files.sort();
    files
}

/// Every kernel file that compiles: `examples/*.krn`, then `tests/kernels/*.krn`.
pub fn kernel_files() -> Vec<PathBuf> {
    KERNEL_FOLDERS.iter().flat_map(|f| krn_files(f)).collect()
}

/// A kernel file's stem and text.
pub fn read_kernel(path: &Path) -> (String, String) {
    let stem = path
        .file_stem()
        .expect("a file name")
        .to_string_lossy()
        .into_owned();
    let source = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    (stem, source)
}

/// `(stem, source)` of every kernel file that compiles.
pub fn kernel_sources() -> Vec<(String, String)> {
    kernel_files().iter().map(|p| read_kernel(p)).collect()
}
