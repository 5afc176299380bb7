//! The front end's `.krn` file tests: `// test: diagnostics` (the rendered diagnostics of
//! `tests/errors/*.krn`) and `// test: ir` (the IR of the examples and test kernels), compared
//! with `expected/` beside each file; `KDSL_BLESS=1` rewrites them (docs/testing.md).

use kdsl_testkit::files::{ERROR_FOLDER, KERNEL_FOLDERS};
use kdsl_testkit::filetest::{self, Check, FileTest};

fn diagnostics(test: &FileTest, _: &Check) -> Result<String, String> {
    let diagnostics = match kdsl_frontend::compile_to_ir(&test.source) {
        Ok(_) => return Err("compiled without errors".into()),
        Err(diagnostics) => diagnostics,
    };
    if let Some(internal) = diagnostics.iter().find(|d| d.code == "E0901") {
        return Err(format!("hit an internal error: {internal:#?}"));
    }
    Ok(kdsl_frontend::render_diagnostics(
        &test.name,
        &test.source,
        &diagnostics,
        false,
    ))
}

fn ir(test: &FileTest, _: &Check) -> Result<String, String> {
    kdsl_frontend::compile_to_ir(&test.source)
        .map(|module| module.to_string())
        .map_err(|d| kdsl_frontend::render_diagnostics(&test.name, &test.source, &d, false))
}

#[test]
fn krn_file_tests() {
    let mut folders = vec![ERROR_FOLDER];
    folders.extend(KERNEL_FOLDERS);
    filetest::run(&folders, &[("diagnostics", diagnostics), ("ir", ir)]);
}

#[test]
fn every_error_file_and_kernel_file_has_a_header() {
    for folder in [ERROR_FOLDER, KERNEL_FOLDERS[0], KERNEL_FOLDERS[1]] {
        let tests = filetest::file_tests(folder).unwrap_or_else(|e| panic!("{e:#?}"));
        assert!(tests.len() >= 8, "{folder}: {} files", tests.len());
        for test in tests {
            let expected_kind = if folder == ERROR_FOLDER {
                "diagnostics"
            } else {
                "ir"
            };
            assert!(
                test.checks.iter().any(|c| c.kind == expected_kind),
                "{}: a file here needs `// test: {expected_kind}`",
                test.name
            );
        }
    }
}
