//! Every ```krn run block of docs/language.md runs on the interpreter (its first kernel, one
//! work-group of 4 work-items, no arguments), and what it prints equals the ```text block
//! that follows it.

mod common;

use common::compile;
use kdsl_interp::{run_kernel_with_output, InterpLaunch};

#[test]
fn printed_output_of_the_language_reference_examples() {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/language.md");
    let text = std::fs::read_to_string(&path).expect("docs/language.md exists");
    let mut blocks: Vec<(usize, String, String)> = Vec::new();
    let mut lines = text.lines().enumerate();
    let block = |lines: &mut dyn Iterator<Item = (usize, &str)>| -> String {
        lines
            .take_while(|(_, line)| line.trim() != "```")
            .map(|(_, line)| format!("{line}\n"))
            .collect()
    };
    while let Some((number, line)) = lines.next() {
        if line.trim() != "```krn run" {
            continue;
        }
        let source = block(&mut lines);
        let fence = lines
            .by_ref()
            .map(|(_, line)| line.trim())
            .find(|line| !line.is_empty());
        assert_eq!(
            fence,
            Some("```text"),
            "docs/language.md:{}: a `krn run` block must be followed by a `text` block",
            number + 1
        );
        let expected = block(&mut lines);
        blocks.push((number + 1, source, expected));
    }
    assert!(
        !blocks.is_empty(),
        "docs/language.md has no `krn run` block"
    );
    for (line, source, expected) in blocks {
        let module = compile(&source);
        let kernel = module.kernels().next().expect("a kernel").name.clone();
        let (result, output) =
            run_kernel_with_output(&module, &kernel, &InterpLaunch::new([4], [4]), &mut []);
        result.unwrap_or_else(|error| panic!("docs/language.md:{line}: {error}"));
        assert_eq!(output, expected, "docs/language.md:{line}");
    }
}
