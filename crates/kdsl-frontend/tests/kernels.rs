//! Every example and test kernel parses and compiles (checks, the uniformity analysis included).

use std::path::PathBuf;

/// Every folder of valid `.krn` files: the examples, the feature kernels, the benchmark's and
/// the Python tests' inputs, the generator's kept regressions.
const KERNEL_FOLDERS: [&str; 7] = [
    "examples",
    "examples/python",
    "tests/kernels",
    "crates/kdsl-bench/inputs",
    "crates/kdsl-bench/python",
    "crates/kdsl-fuzzgen/tests",
    "python/tests/kernels",
];

fn kernel_files() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for folder in KERNEL_FOLDERS {
        if let Ok(entries) = std::fs::read_dir(root.join(folder)) {
            for entry in entries.flatten() {
                let path = entry.path();
                if path.extension().is_some_and(|e| e == "krn") {
                    files.push(path);
                }
            }
        }
    }
    files.sort();
    files
}

#[test]
fn examples_parse() {
    let files = kernel_files();
    assert!(
        files.len() >= 8,
        "expected the example kernels, found {files:?}"
    );
    for path in files {
        let source = std::fs::read_to_string(&path).unwrap();
        if let Err(diagnostics) = kdsl_frontend::parse(&source) {
            panic!("{} does not parse: {diagnostics:#?}", path.display());
        }
    }
}

#[test]
fn examples_compile() {
    for path in kernel_files() {
        let source = std::fs::read_to_string(&path).unwrap();
        if let Err(diagnostics) = kdsl_frontend::compile_to_ir(&source) {
            let name = path.display().to_string();
            panic!(
                "{}",
                kdsl_frontend::render_diagnostics(&name, &source, &diagnostics, false)
            );
        }
    }
}
