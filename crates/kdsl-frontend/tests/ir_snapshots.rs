//! IR snapshots (compact text form) of every example and test kernel.

use std::path::PathBuf;

#[test]
fn kernels_lower_to_expected_ir() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for folder in ["examples", "tests/kernels"] {
        if let Ok(entries) = std::fs::read_dir(root.join(folder)) {
            files.extend(
                entries
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|e| e == "krn")),
            );
        }
    }
    files.sort();
    assert!(files.len() >= 8);
    for path in files {
        let source = std::fs::read_to_string(&path).unwrap();
        let module = kdsl_frontend::compile_to_ir(&source)
            .unwrap_or_else(|d| panic!("{} failed: {d:#?}", path.display()));
        let folder = path
            .parent()
            .and_then(|p| p.file_name())
            .unwrap()
            .to_string_lossy();
        let stem = path.file_stem().unwrap().to_string_lossy();
        insta::assert_snapshot!(format!("{folder}_{stem}"), module.to_string());
    }
}
