//! The kdsl front end: lexer, parser, semantic analysis and lowering to [`kdsl_ir`].
//!
//! It never depends on LLVM. Problems in the source are collected as
//! [`kdsl_ir::Diagnostic`]s, never panics; [`render_diagnostics`] prints them.

pub mod ast;
mod check;
#[doc(hidden)]
pub mod fuzzing;
pub mod lexer;
mod parser;

pub use check::Define;
/// Rendering lives beside `Diagnostic` in kdsl-ir; re-exported for existing callers.
pub use kdsl_ir::render_diagnostics;
use kdsl_ir::Diagnostic;
pub use kdsl_ir::ErrorCode;

/// The stack the checker runs on: its passes recurse over the syntax tree, whose depth the
/// parser caps, and this leaves ample room for the deepest tree the caps allow.
const CHECKER_STACK_BYTES: usize = 64 * 1024 * 1024;

/// Parses a file into its syntax tree, or returns every lexical and syntax error.
pub fn parse(source: &str) -> Result<ast::SourceFile, Vec<Diagnostic>> {
    match parser::parse_with_recovery(source) {
        (Some(file), diagnostics) if diagnostics.is_empty() => Ok(file),
        (_, diagnostics) => Err(diagnostics),
    }
}

/// Parses, checks and lowers a `.krn` source to a validated IR module, or returns every
/// diagnostic found (syntax and semantic errors together, as far as recovery allows).
pub fn compile_to_ir(source: &str) -> Result<kdsl_ir::Module, Vec<Diagnostic>> {
    compile_to_ir_with_defines(source, &[])
}

/// Like [`compile_to_ir`], with module constants set at compile time (`-D NAME=VALUE`): each
/// definition replaces the declared value of the constant it names before constants are
/// folded. An unknown name, a value of the wrong type or out of range is a diagnostic.
pub fn compile_to_ir_with_defines(
    source: &str,
    defines: &[Define],
) -> Result<kdsl_ir::Module, Vec<Diagnostic>> {
    compile_to_ir_reporting(source, defines).0
}

/// How long the front end's phases took.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrontEndTimings {
    /// Lexing and parsing into the syntax tree.
    pub parse: std::time::Duration,
    /// Name resolution, type checking, lowering to the IR, validating it and the uniformity
    /// analysis.
    pub check: std::time::Duration,
}

/// What the front end found besides the module: warnings (when there is no error; with
/// errors they are among the errors' diagnostics) and how long it took.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FrontEndReport {
    pub warnings: Vec<Diagnostic>,
    pub timings: FrontEndTimings,
}

/// [`compile_to_ir_with_defines`], also giving the warnings and how long parsing and
/// checking took.
pub fn compile_to_ir_reporting(
    source: &str,
    defines: &[Define],
) -> (Result<kdsl_ir::Module, Vec<Diagnostic>>, FrontEndReport) {
    let run = || {
        let mut report = FrontEndReport::default();
        let result = compile_on_this_thread(source, defines, &mut report);
        (result, report)
    };
    let result = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("kdsl-frontend".into())
            .stack_size(CHECKER_STACK_BYTES)
            .spawn_scoped(scope, run)
            .map(|handle| handle.join())
    });
    match result {
        Ok(Ok(finished)) => finished,
        // The thread could not start (or panicked, which is a bug): report rather than abort.
        Ok(Err(_)) => (
            Err(vec![internal_error("the front end stopped unexpectedly")]),
            FrontEndReport::default(),
        ),
        Err(_) => run(),
    }
}

fn internal_error(message: impl Into<String>) -> Diagnostic {
    Diagnostic::internal(
        ErrorCode::E0901,
        message,
        kdsl_ir::Span::default(),
        "internal compiler error",
    )
}

fn compile_on_this_thread(
    source: &str,
    defines: &[Define],
    report: &mut FrontEndReport,
) -> Result<kdsl_ir::Module, Vec<Diagnostic>> {
    let started = std::time::Instant::now();
    let (file, diagnostics) = parser::parse_with_recovery(source);
    report.timings.parse = started.elapsed();
    let Some(file) = file else {
        return Err(diagnostics);
    };
    let checking = std::time::Instant::now();
    let result = check_parsed(&file, defines, diagnostics, &mut report.warnings);
    report.timings.check = checking.elapsed();
    result
}

fn check_parsed(
    file: &ast::SourceFile,
    defines: &[Define],
    mut diagnostics: Vec<Diagnostic>,
    warnings: &mut Vec<Diagnostic>,
) -> Result<kdsl_ir::Module, Vec<Diagnostic>> {
    let (module, semantic) = check::Checker::new(file).with_defines(defines).check();
    diagnostics.extend(semantic);
    if diagnostics
        .iter()
        .all(|d| d.severity == kdsl_ir::Severity::Warning)
    {
        *warnings = std::mem::take(&mut diagnostics);
    }
    if !diagnostics.is_empty() {
        diagnostics.sort_by_key(|d| d.primary_span().map(|s| (s.start, s.end)));
        return Err(diagnostics);
    }
    if let Err(errors) = kdsl_ir::validate(&module) {
        return Err(errors
            .into_iter()
            .map(|error| {
                Diagnostic::internal(
                    ErrorCode::E0901,
                    format!("internal compiler error: {error}"),
                    error.span,
                    "here",
                )
            })
            .collect());
    }
    // Barriers and sub-group operations under divergent control (E0518, E0519).
    let divergent = kdsl_ir::check_uniformity(&module);
    if !divergent.is_empty() {
        let mut diagnostics = std::mem::take(warnings);
        diagnostics.extend(divergent);
        diagnostics.sort_by_key(|d| d.primary_span().map(|s| (s.start, s.end)));
        return Err(diagnostics);
    }
    Ok(module)
}
