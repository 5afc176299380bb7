//! `print("x = {}, v = {}", x, v);`: the format string checked against its values at
//! compile time and lowered to `StatementKind::Print`. A vector prints as `(x, y, z, w)`.

use super::*;
use kdsl_ir::print_format::MAX_VALUES;

/// A format string's text pieces (escapes resolved, `{{` and `}}` undoubled) and the source
/// span of each `{}` placeholder.
struct Format {
    text: Vec<String>,
    placeholders: Vec<Span>,
}

impl Checker<'_> {
    /// Checks `print(format, values...)` as a statement and appends the `Print` statement.
    pub(super) fn print_statement(
        &mut self,
        arguments: &[ast::Expression],
        span: Span,
        out: &mut Block,
    ) {
        let Some((format_argument, values)) = arguments.split_first() else {
            self.report(
                print_error("`print` needs a format string", span, "no format")
                    .with_hint("write `print(\"x = {}\", x);`"),
            );
            return;
        };
        let E::String(literal) = &format_argument.kind else {
            let _ = self.expression_or_vector(format_argument);
            self.report(
                print_error(
                    "`print`'s format must be a string literal",
                    format_argument.span,
                    "not a string literal",
                )
                .with_hint(
                    "write the text in place, with `{}` for each value: `print(\"x = {}\", x);`",
                ),
            );
            return;
        };
        let format = parse_format(literal, format_argument.span);
        // Every value is checked, for its own errors, even when the format is wrong.
        let checked: Vec<Option<Vec<Expression>>> =
            values.iter().map(|value| self.print_value(value)).collect();
        let format = match format {
            Ok(format) => format,
            Err(diagnostic) => {
                self.report(diagnostic);
                return;
            }
        };
        if format.placeholders.len() != values.len() {
            self.report(count_mismatch(&format, values, format_argument.span, span));
            return;
        }
        let Some(checked) = checked.into_iter().collect::<Option<Vec<_>>>() else {
            return;
        };
        let count: usize = checked.iter().map(Vec::len).sum();
        if count > MAX_VALUES {
            self.report(
                print_error(
                    format!(
                        "`print` takes at most {MAX_VALUES} values, this one has {count} (a vector counts each component)"
                    ),
                    span,
                    "too many values",
                )
                .with_hint("split it into several `print` calls"),
            );
            return;
        }
        let (text, arguments) = assemble(&format.text, checked);
        out.push(Statement {
            kind: StatementKind::Print { text, arguments },
            span,
        });
    }

    /// One value of a `print`: a scalar, or a vector's components.
    fn print_value(&mut self, value: &ast::Expression) -> Option<Vec<Expression>> {
        if let E::Name(name) = &strip_parentheses(value).kind {
            let what = match self.lookup(&name.name) {
                Resolved::Parameter(_, ParameterType::Buffer { .. }, _) => Some("the buffer"),
                Resolved::Parameter(_, ParameterType::Array { .. }, _) => Some("the array"),
                Resolved::Binding(Binding::Variable {
                    ty: VariableType::Array { .. },
                    ..
                }) => Some("the array"),
                _ => None,
            };
            if let Some(what) = what {
                self.report(
                    print_error(
                        format!("cannot print {what} `{}`", name.name),
                        value.span,
                        "not a scalar or vector",
                    )
                    .with_hint(format!(
                        "`print` writes integers, floats, `bool` and vectors: print an element, `{}[i]`",
                        name.name
                    )),
                );
                return None;
            }
        }
        if let E::String(_) = &value.kind {
            self.report(
                print_error(
                    "only the first argument of `print` may be a string",
                    value.span,
                    "a second string",
                )
                .with_hint("write the text into the format string"),
            );
            return None;
        }
        if self.tuple_shape(value).is_some() {
            self.report(
                print_error("cannot print a tuple", value.span, "a tuple")
                    .with_hint("print its elements: `print(\"({}, {})\", t.0, t.1);`"),
            );
            return None;
        }
        if self.vector_shape(value).is_some() {
            return self
                .vector_value(value, None, None)
                .map(|vector| vector.components);
        }
        self.expression(value, None).map(|value| vec![value])
    }
}

/// The IR's text pieces and values: the format's pieces around each value, a vector's
/// components as `(x, y)`, and the newline that ends every `print`.
fn assemble(pieces: &[String], values: Vec<Vec<Expression>>) -> (Vec<String>, Vec<Expression>) {
    let mut text = vec![String::new()];
    let mut arguments = Vec::new();
    for (index, components) in values.into_iter().enumerate() {
        let vector = components.len() > 1;
        push_text(&mut text, &pieces[index]);
        if vector {
            push_text(&mut text, "(");
        }
        for (component_index, component) in components.into_iter().enumerate() {
            if component_index > 0 {
                push_text(&mut text, ", ");
            }
            arguments.push(component);
            text.push(String::new());
        }
        if vector {
            push_text(&mut text, ")");
        }
    }
    push_text(&mut text, pieces.last().map_or("", String::as_str));
    push_text(&mut text, "\n");
    (text, arguments)
}

fn push_text(text: &mut [String], more: &str) {
    if let Some(last) = text.last_mut() {
        last.push_str(more);
    }
}

fn print_error(message: impl Into<String>, span: Span, label: &str) -> Diagnostic {
    Diagnostic::error(ErrorCode::E0330, message, span, label)
}

fn count_mismatch(
    format: &Format,
    values: &[ast::Expression],
    format_span: Span,
    span: Span,
) -> Diagnostic {
    let placeholders = format.placeholders.len();
    let given = values.len();
    let noun = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let message = format!(
        "the format has {} but `print` is given {}",
        noun(placeholders, "placeholder", "placeholders"),
        noun(given, "value", "values")
    );
    if given > placeholders {
        let extra = values[placeholders].span;
        print_error(message, extra, "no `{}` for this value")
            .with_label(format_span, "the format")
            .with_hint("add a `{}` to the format for each value")
    } else {
        let missing = format.placeholders[given];
        print_error(message, missing, "no value for this `{}`")
            .with_label(span, "the call")
            .with_hint("pass one value per `{}`; write `{{` and `}}` for literal braces")
    }
}

/// Parses a string literal as written (with its quotes) into text pieces and placeholders.
/// `literal_span` is the literal's span, so errors point at the offending characters.
fn parse_format(literal: &str, literal_span: Span) -> Result<Format, Diagnostic> {
    let at = |offset: usize, length: usize| {
        let start = literal_span.start as usize + offset;
        Span::new(start, start + length)
    };
    let inner = &literal[1..literal.len().saturating_sub(1).max(1)];
    let mut text = vec![String::new()];
    let mut placeholders = Vec::new();
    let mut characters = inner.char_indices().peekable();
    while let Some((index, c)) = characters.next() {
        let offset = index + 1;
        match c {
            '\\' => {
                let Some((_, escaped)) = characters.next() else {
                    break;
                };
                let resolved = match escaped {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    '\\' => '\\',
                    '"' => '"',
                    '0' => {
                        return Err(print_error(
                            "`print`'s format cannot contain a NUL character",
                            at(offset, 2),
                            "`\\0`",
                        )
                        .with_hint("C's `printf` would stop at it"))
                    }
                    other => {
                        return Err(print_error(
                            format!("unknown escape `\\{other}` in the format"),
                            at(offset, 1 + other.len_utf8()),
                            "unknown escape",
                        )
                        .with_hint("the escapes are `\\n`, `\\t`, `\\r`, `\\\\` and `\\\"`"))
                    }
                };
                text.last_mut().unwrap_or(&mut String::new()).push(resolved);
            }
            '{' => match characters.peek() {
                Some((_, '{')) => {
                    characters.next();
                    if let Some(piece) = text.last_mut() {
                        piece.push('{');
                    }
                }
                Some((_, '}')) => {
                    characters.next();
                    placeholders.push(at(offset, 2));
                    text.push(String::new());
                }
                _ => {
                    // `{` opens a placeholder that has something inside, or never closes.
                    let rest = &inner[index..];
                    return Err(match rest.find('}') {
                        Some(close) if !rest[1..close].contains('{') => print_error(
                            format!(
                                "unsupported placeholder `{}`: `print` has only `{{}}`",
                                &rest[..=close]
                            ),
                            at(offset, close + 1),
                            "not `{}`",
                        )
                        .with_hint("write `{}`; every value prints in its one format"),
                        _ => print_error(
                            "unbalanced `{` in the format",
                            at(offset, 1),
                            "never closed",
                        )
                        .with_hint("write `{}` for a value, or `{{` for a literal `{`"),
                    });
                }
            },
            '}' => match characters.peek() {
                Some((_, '}')) => {
                    characters.next();
                    if let Some(piece) = text.last_mut() {
                        piece.push('}');
                    }
                }
                _ => {
                    return Err(print_error(
                        "unbalanced `}` in the format",
                        at(offset, 1),
                        "never opened",
                    )
                    .with_hint("write `}}` for a literal `}`"))
                }
            },
            other => {
                if let Some(piece) = text.last_mut() {
                    piece.push(other);
                }
            }
        }
    }
    Ok(Format { text, placeholders })
}
