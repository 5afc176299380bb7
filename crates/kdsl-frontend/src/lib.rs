//! The kdsl front end: lexer, parser, semantic analysis and lowering to [`kdsl_ir`].
//!
//! It never depends on LLVM. Problems in the source are collected as
//! [`kdsl_ir::Diagnostic`]s, never panics; [`render_diagnostics`] prints them.

pub mod ast;
pub mod lexer;
mod parser;

pub use kdsl_ir::Diagnostic;

/// Parses a file into its syntax tree, or returns every lexical and syntax error.
pub fn parse(source: &str) -> Result<ast::SourceFile, Vec<Diagnostic>> {
    match parser::parse_with_recovery(source) {
        (Some(file), diagnostics) if diagnostics.is_empty() => Ok(file),
        (_, diagnostics) => Err(diagnostics),
    }
}
