//! Every example and test kernel parses and compiles (checks, the uniformity analysis included).

use std::path::PathBuf;

/// Every valid `.krn` file of the repository (`kdsl_testkit::files::VALID_FOLDERS`).
fn kernel_files() -> Vec<PathBuf> {
    kdsl_testkit::files::VALID_FOLDERS
        .iter()
        .flat_map(|folder| kdsl_testkit::files::krn_files(folder))
        .collect()
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
