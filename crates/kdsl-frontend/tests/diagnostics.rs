//! Snapshots of the rendered diagnostics for every `tests/errors/*.krn` file.

use std::path::PathBuf;

#[test]
fn error_files_render_expected_diagnostics() {
    let folder = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/errors");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&folder)
        .expect("tests/errors exists")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "krn"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 20,
        "expected at least 20 error files, found {}",
        files.len()
    );
    for path in files {
        let bytes = std::fs::read(&path).unwrap();
        let source = String::from_utf8_lossy(&bytes);
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let diagnostics = match kdsl_frontend::compile_to_ir(&source) {
            Ok(_) => panic!("{stem}.krn compiled without errors"),
            Err(diagnostics) => diagnostics,
        };
        assert!(
            diagnostics.iter().all(|d| d.code != "E0901"),
            "{stem}.krn hit an internal error: {diagnostics:#?}"
        );
        let file_name = format!("tests/errors/{stem}.krn");
        let rendered = kdsl_frontend::render_diagnostics(&file_name, &source, &diagnostics, false);
        insta::assert_snapshot!(stem, rendered);
    }
}
