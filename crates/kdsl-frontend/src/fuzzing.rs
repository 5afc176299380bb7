//! The check the `frontend` fuzz target (`crates/kdsl-fuzz`) runs on every input, kept here so
//! that `tests/fuzz_corpus.rs` replays the committed corpus through exactly the same code on
//! stable Rust. Not part of the crate's API.

use crate::{lexer, Define};
use kdsl_ir::{Diagnostic, ErrorCode, Severity};

/// What one input did, for the corpus test's summary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrontendOutcome {
    /// The input compiled to a validated IR module.
    pub compiled: bool,
    /// Diagnostics reported (errors, or warnings of a module that compiled).
    pub diagnostics: usize,
    /// `-D` definitions taken from the input's `//-D NAME=VALUE` lines.
    pub defines: usize,
}

/// Marks a line that sets a module constant like `kdsl compile -D NAME=VALUE` does. It is a
/// comment, so the rest of the input stays an ordinary `.krn` file.
pub const DEFINE_LINE_PREFIX: &str = "//-D ";

/// Runs arbitrary bytes through the whole front end as `kdsl compile` does (bytes that are not
/// UTF-8 replaced, then lex, parse, check, lower, validate, analyse as the code generators do)
/// and renders every diagnostic.
/// Options come from the input: each line starting with [`DEFINE_LINE_PREFIX`] is a `-D`.
///
/// Panics when the front end breaks a promise: a panic inside it (which the front end reports
/// as an internal compiler error), any other internal compiler error, an error result without
/// an error, a token or label span outside the source, or a module that fails validation.
/// (`crate::parse` is not called separately: it is the first phase of `compile_to_ir`, and
/// running it twice cost a quarter of the fuzzer's speed.)
pub fn run_frontend_input(data: &[u8]) -> FrontendOutcome {
    let source = String::from_utf8_lossy(data);
    let source = source.as_ref();
    let defines: Vec<Define> = source
        .lines()
        .filter_map(|line| line.strip_prefix(DEFINE_LINE_PREFIX))
        .filter_map(Define::parse)
        .filter(|define| !define.name.is_empty())
        .collect();

    // The lexer on its own: token spans are in order, inside the source, on char boundaries.
    let mut lexical = Vec::new();
    let tokens = lexer::tokenize(source, &mut lexical);
    let mut previous_end = 0;
    for &(start, _, end) in &tokens {
        assert!(
            previous_end <= start && start <= end && end <= source.len(),
            "token span {start}..{end} after {previous_end} in a {}-byte source",
            source.len()
        );
        assert!(source.is_char_boundary(start) && source.is_char_boundary(end));
        previous_end = end;
    }
    let _ = lexer::check_nesting(&tokens);
    check_diagnostics(source, &lexical, "lexer");

    // Parse, check, lower and validate, on the front end's own thread and stack.
    let (result, report) = crate::compile_to_ir_reporting(source, &defines);
    let diagnostics = match &result {
        Ok(module) => {
            if let Err(errors) = kdsl_ir::validate(module) {
                panic!("the front end produced an invalid module: {errors:?}");
            }
            // The IR's text form must cope with every module the front end makes.
            let _ = module.to_string();
            // So must the analyses every code generator and support check reads (features,
            // buffer alignments, and in checked mode the check sites).
            for checked in [false, true] {
                let _ = kdsl_ir::ModuleInfo::new(module, checked);
            }
            assert!(report
                .warnings
                .iter()
                .all(|w| w.severity == Severity::Warning));
            &report.warnings
        }
        Err(diagnostics) => {
            assert!(
                diagnostics.iter().any(|d| d.severity == Severity::Error),
                "compile_to_ir failed without an error: {diagnostics:?}"
            );
            diagnostics
        }
    };
    check_diagnostics(source, diagnostics, "compile_to_ir");
    FrontendOutcome {
        compiled: result.is_ok(),
        diagnostics: diagnostics.len(),
        defines: defines.len(),
    }
}

/// Every diagnostic is a user error, not an internal one, its labels lie inside the source, and
/// the list renders (with and without colour) to text that carries the first one's code.
fn check_diagnostics(source: &str, diagnostics: &[Diagnostic], stage: &str) {
    for diagnostic in diagnostics {
        assert!(
            diagnostic.code != ErrorCode::E0901,
            "{stage}: internal compiler error: {diagnostic:?}"
        );
        for label in &diagnostic.labels {
            let (start, end) = (label.span.start as usize, label.span.end as usize);
            assert!(
                start <= end && end <= source.len(),
                "{stage}: label span {start}..{end} outside the {}-byte source: {diagnostic:?}",
                source.len()
            );
        }
    }
    if diagnostics.is_empty() {
        return;
    }
    let plain = crate::render_diagnostics("fuzz.krn", source, diagnostics, false);
    assert!(
        plain.contains(diagnostics[0].code.as_str()),
        "{stage}: rendered text without `{}`: {plain}",
        diagnostics[0].code
    );
    let _ = crate::render_diagnostics("fuzz.krn", source, diagnostics, true);
}
