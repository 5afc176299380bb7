//! The diagnostics every stage reports in one shape: a stable [`ErrorCode`], a message, labelled
//! spans and hints. The front end, the IR's analyses and code generation all return them;
//! `render.rs` beside this file prints them.

use crate::codes::ErrorCode;
use crate::span::Span;
use serde::{Deserialize, Serialize};

/// The hint every internal compiler error carries.
pub const INTERNAL_ERROR_HINT: &str =
    "this is a bug in kdsl; please report it with the source file";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Severity {
    Error,
    Warning,
}

/// A labelled place in the source.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Label {
    pub span: Span,
    pub message: String,
}

/// One problem found in a `.krn` file, rendered by [`crate::render_diagnostics`] as
/// `file:line:col`, a snippet, labels and hints.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    pub severity: Severity,
    /// A short stable identifier such as `E0301` (written so by `Display`).
    pub code: ErrorCode,
    pub message: String,
    /// The first label is the primary one.
    pub labels: Vec<Label>,
    /// Advice on how to fix the problem.
    pub hints: Vec<String>,
}

impl Diagnostic {
    pub fn error(
        code: ErrorCode,
        message: impl Into<String>,
        span: Span,
        label: impl Into<String>,
    ) -> Self {
        Diagnostic {
            severity: Severity::Error,
            code,
            message: message.into(),
            labels: vec![Label {
                span,
                message: label.into(),
            }],
            hints: Vec::new(),
        }
    }

    /// A warning: the module still compiles.
    pub fn warning(
        code: ErrorCode,
        message: impl Into<String>,
        span: Span,
        label: impl Into<String>,
    ) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(code, message, span, label)
        }
    }

    /// An error about something outside the source text, such as a compile-time definition
    /// from the command line: it renders without a snippet.
    pub fn without_location(code: ErrorCode, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            code,
            message: message.into(),
            labels: Vec::new(),
            hints: Vec::new(),
        }
    }

    /// An internal compiler error (a bug in kdsl, never the user's): E0901 from the front end,
    /// E0902 from code generation and later stages, with the hint that asks for a report.
    pub fn internal(
        code: ErrorCode,
        message: impl Into<String>,
        span: Span,
        label: impl Into<String>,
    ) -> Self {
        debug_assert!(matches!(code, ErrorCode::E0901 | ErrorCode::E0902));
        Diagnostic::error(code, message, span, label).with_hint(INTERNAL_ERROR_HINT)
    }

    pub fn with_label(mut self, span: Span, message: impl Into<String>) -> Self {
        self.labels.push(Label {
            span,
            message: message.into(),
        });
        self
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hints.push(hint.into());
        self
    }

    pub fn primary_span(&self) -> Option<Span> {
        self.labels.first().map(|l| l.span)
    }
}
