//! Every ```krn block of docs/language.md compiles; every ```krn,error block is rejected.
//! A fence may end with compile-time definitions, as on the command line:
//! ```krn -D BLOCK=128```.

use kdsl_frontend::Define;

/// Splits a fence's text after `krn` into whether the block must fail and its definitions.
fn fence_kind(fence: &str) -> Option<(bool, Vec<Define>)> {
    let rest = fence.strip_prefix("```krn")?;
    let (must_fail, rest) = match rest.strip_prefix(",error") {
        Some(rest) => (true, rest),
        None => (false, rest),
    };
    if !rest.is_empty() && !rest.starts_with(' ') {
        return None;
    }
    let words: Vec<&str> = rest.split_whitespace().collect();
    let mut defines = Vec::new();
    for pair in words.chunks(2) {
        match pair {
            ["-D", definition] => defines.push(Define::parse(definition)?),
            _ => panic!("malformed fence `{fence}`: expected `-D NAME=VALUE` pairs"),
        }
    }
    Some((must_fail, defines))
}

#[test]
fn language_reference_examples() {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/language.md");
    let text = std::fs::read_to_string(&path).expect("docs/language.md exists");
    let mut blocks = Vec::new();
    let mut current: Option<(usize, bool, Vec<Define>, String)> = None;
    for (number, line) in text.lines().enumerate() {
        match &mut current {
            None => {
                if let Some((must_fail, defines)) = fence_kind(line.trim()) {
                    current = Some((number + 1, must_fail, defines, String::new()));
                }
            }
            Some((_, _, _, body)) if line.trim() != "```" => {
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
    for (line, must_fail, defines, source) in blocks {
        let result = kdsl_frontend::compile_to_ir_with_defines(&source, &defines);
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
