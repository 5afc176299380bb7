//! Every ```krn block of docs/language.md compiles; every ```krn,error block is rejected.

#[test]
fn language_reference_examples() {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/language.md");
    let text = std::fs::read_to_string(&path).expect("docs/language.md exists");
    let mut blocks = Vec::new();
    let mut current: Option<(usize, bool, String)> = None;
    for (number, line) in text.lines().enumerate() {
        match &mut current {
            None => {
                let fence = line.trim();
                if fence == "```krn" || fence == "```krn,error" {
                    current = Some((number + 1, fence.ends_with(",error"), String::new()));
                }
            }
            Some((_, _, body)) if line.trim() != "```" => {
                body.push_str(line);
                body.push('\n');
            }
            Some(_) => blocks.extend(current.take()),
        }
    }
    assert!(current.is_none(), "unclosed code block in docs/language.md");
    assert!(
        blocks.len() >= 20,
        "expected examples for every feature, found {}",
        blocks.len()
    );
    for (line, must_fail, source) in blocks {
        let result = kdsl_frontend::compile_to_ir(&source);
        match (result, must_fail) {
            (Ok(_), true) => panic!("the block at docs/language.md:{line} should be rejected"),
            (Err(diagnostics), false) => panic!(
                "the block at docs/language.md:{line} does not compile:\n{}",
                kdsl_frontend::render_diagnostics("language.md", &source, &diagnostics, false)
            ),
            (Err(diagnostics), true) => {
                assert!(
                    diagnostics.iter().all(|d| d.code != "E0901"),
                    "{diagnostics:#?}"
                );
            }
            (Ok(_), false) => {}
        }
    }
}
