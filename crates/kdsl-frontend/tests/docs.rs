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
    // `run`: the interpreter's tests also run the block (crates/kdsl-interp/tests/docs_print.rs).
    let words: Vec<&str> = rest.split_whitespace().filter(|&w| w != "run").collect();
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

/// The codes in the first column of the docs' table of error codes (`## Errors`).
fn documented_codes() -> Vec<String> {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/language.md");
    let text = std::fs::read_to_string(path).unwrap();
    let errors = &text[text.find("## Errors").expect("docs have an Errors section")..];
    let mut codes = Vec::new();
    for line in errors
        .lines()
        .filter(|l| l.starts_with("| E") || l.starts_with("| W"))
    {
        let first = line.split('|').nth(1).unwrap_or("");
        codes.extend(first.split(',').map(|c| c.trim().to_string()));
    }
    codes
}

#[test]
fn the_docs_code_table_lists_every_error_code_once() {
    let documented = documented_codes();
    let known: Vec<String> = kdsl_ir::ErrorCode::ALL
        .iter()
        .map(|c| c.to_string())
        .collect();
    assert_eq!(
        documented, known,
        "docs/language.md's table and ErrorCode differ"
    );
}

/// Every `"E0..."` code written in the sources of the workspace is an `ErrorCode`.
#[test]
fn every_code_in_the_sources_is_an_error_code() {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut folders = vec![root.join("src"), root.join("crates")];
    let mut unknown = Vec::new();
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() && name != "target" && name != "snapshots" {
                folders.push(path);
            } else if name.ends_with(".rs") {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                for piece in text.split("\"E0").skip(1) {
                    let digits: String = piece.chars().take_while(char::is_ascii_digit).collect();
                    let code = format!("E0{digits}");
                    if digits.len() == 3
                        && piece[3..].starts_with('"')
                        && kdsl_ir::ErrorCode::from_name(&code).is_none()
                    {
                        unknown.push(format!("{code} in {}", path.display()));
                    }
                }
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "codes missing from ErrorCode: {unknown:?}"
    );
}
