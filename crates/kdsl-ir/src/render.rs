//! Renders diagnostics as `file:line:col` headers with source snippets, labels and hints. It
//! sits beside `Diagnostic` so that every layer (front end, code generation, the facade) prints
//! the same way without depending on the front end.

use crate::diagnostic::{Diagnostic, Severity};
use codespan_reporting::diagnostic::{
    Diagnostic as Report, Label, LabelStyle, Severity as ReportSeverity,
};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, termcolor::Buffer};

/// Renders `diagnostics` for `source` (named `file_name`) as text, with ANSI colours when
/// `color` is set.
pub fn render_diagnostics(
    file_name: &str,
    source: &str,
    diagnostics: &[Diagnostic],
    color: bool,
) -> String {
    let file = SimpleFile::new(file_name, source);
    let mut buffer = if color {
        Buffer::ansi()
    } else {
        Buffer::no_color()
    };
    let config = term::Config::default();
    for diagnostic in diagnostics {
        let severity = match diagnostic.severity {
            Severity::Error => ReportSeverity::Error,
            Severity::Warning => ReportSeverity::Warning,
        };
        let labels = diagnostic
            .labels
            .iter()
            .enumerate()
            .map(|(index, label)| {
                let style = if index == 0 {
                    LabelStyle::Primary
                } else {
                    LabelStyle::Secondary
                };
                // Spans are clamped to the source so that rendering never fails.
                let start = (label.span.start as usize).min(source.len());
                let end = (label.span.end as usize).clamp(start, source.len());
                let start = floor_char_boundary(source, start);
                let end = floor_char_boundary(source, end).max(start);
                Label::new(style, (), start..end).with_message(label.message.clone())
            })
            .collect();
        let report = Report::new(severity)
            .with_code(diagnostic.code.as_str())
            .with_message(diagnostic.message.clone())
            .with_labels(labels)
            .with_notes(
                diagnostic
                    .hints
                    .iter()
                    .map(|h| format!("hint: {h}"))
                    .collect(),
            );
        if term::emit(&mut buffer, &config, &file, &report).is_err() {
            // Fall back to a plain line when the snippet cannot be drawn.
            let line = format!("error[{}]: {}\n", diagnostic.code, diagnostic.message);
            buffer.as_mut_slice();
            return format!("{}{line}", String::from_utf8_lossy(buffer.as_slice()));
        }
    }
    String::from_utf8_lossy(buffer.as_slice()).into_owned()
}

fn floor_char_boundary(text: &str, mut index: usize) -> usize {
    while index > 0 && !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}
