//! Runs the generated parser over the lexer's tokens and turns syntax errors into diagnostics.

use crate::ast::{
    BinaryOperator, BufferSpace, Expression, ExpressionKind, Identifier, Literal, Parameter,
    ParameterTypeExpression, SourceFile, TypeExpression, MAX_EXPRESSION_DEPTH,
};
use crate::lexer::{check_nesting, tokenize, Token};
use kdsl_ir::ErrorCode;
use kdsl_ir::{Diagnostic, Span};
use lalrpop_util::{ErrorRecovery, ParseError};
use std::convert::Infallible;

lalrpop_util::lalrpop_mod!(
    #[allow(
        clippy::all,
        clippy::pedantic,
        unused_parens,
        unused_imports,
        dead_code
    )]
    grammar,
    "/kdsl.rs"
);

/// State the grammar's actions share: recovered errors and the expression-depth limit.
pub struct ParseState<'input> {
    pub errors: Vec<ErrorRecovery<usize, Token<'input>, Infallible>>,
    /// The first expression that was nested too deeply, if any, and whether it is a chain of
    /// binary operators (`a + b + ... + z`, which nests one level per operator).
    pub too_deep: Option<(Span, bool)>,
    /// Errors the grammar's actions report themselves (constructs kdsl spells differently).
    pub diagnostics: Vec<Diagnostic>,
}

impl ParseState<'_> {
    /// Builds an expression node, replacing it by an error node when nested too deeply.
    /// `base[first, rest...]` as the nested `base[first][rest]...`, each level spanning up to
    /// its last index.
    pub fn multi_index(
        &mut self,
        base: Expression,
        first: Expression,
        rest: Vec<Expression>,
        span: Span,
    ) -> Expression {
        let mut expression = base;
        for index in std::iter::once(first).chain(rest) {
            let depth = expression.depth.max(index.depth);
            let level = Span {
                start: span.start,
                end: index.span.end.max(span.start),
            };
            expression = self.node(
                ExpressionKind::Index {
                    base: Box::new(expression),
                    index: Box::new(index),
                },
                level,
                depth,
            );
        }
        expression.span = span;
        expression
    }

    pub fn node(&mut self, kind: ExpressionKind, span: Span, children_depth: u32) -> Expression {
        let chain = match &kind {
            ExpressionKind::Binary { left, .. } => {
                matches!(left.kind, ExpressionKind::Binary { .. })
            }
            _ => false,
        };
        let expression = Expression::node(kind, span, children_depth);
        if expression.depth > MAX_EXPRESSION_DEPTH {
            if self.too_deep.is_none() {
                self.too_deep = Some((span, chain));
            }
            return Expression::leaf(ExpressionKind::Error, span);
        }
        expression
    }

    /// `condition ? accept : reject`: reported, then kept as the `if` expression it means.
    pub fn conditional_operator(
        &mut self,
        condition: Expression,
        accept: Expression,
        reject: Expression,
        span: Span,
        question: usize,
    ) -> Expression {
        self.diagnostics.push(
            Diagnostic::error(
                ErrorCode::E0101,
                "kdsl has no conditional operator `?:`",
                Span::new(question, question + 1),
                "C's `c ? a : b`",
            )
            .with_hint("write it as an `if` expression: `if c { a } else { b }`"),
        );
        let depth = condition.depth.max(accept.depth).max(reject.depth);
        self.node(
            ExpressionKind::If {
                condition: Box::new(condition),
                accept: Box::new(accept),
                reject: Box::new(reject),
            },
            span,
            depth,
        )
    }

    /// OpenCL C's `__local float* tile`: reported with the kdsl form, then kept as that form
    /// so the rest of the kernel is checked.
    pub fn opencl_parameter(
        &mut self,
        qualifier: &str,
        element: Identifier,
        name: Identifier,
        span: Span,
    ) -> Parameter {
        let (space, writable) = match qualifier.trim_start_matches("__") {
            "local" => (BufferSpace::Local, true),
            "constant" => (BufferSpace::Constant, false),
            _ => (BufferSpace::Global, true),
        };
        let element_name = opencl_scalar_name(&element.name).unwrap_or(&element.name);
        let kdsl_type = format!(
            "{}{} [{element_name}]",
            match space {
                BufferSpace::Local => "local",
                BufferSpace::Constant => "constant",
                BufferSpace::Global | BufferSpace::Private => "global",
            },
            if writable { " mut" } else { "" }
        );
        let mut diagnostic = Diagnostic::error(
            ErrorCode::E0101,
            format!(
                "OpenCL C parameter syntax: kdsl writes `{}: {kdsl_type}`",
                name.name
            ),
            span,
            format!("OpenCL C's `{qualifier}` pointer"),
        )
        .with_hint(format!(
            "kdsl parameters are `name: type`; write `{}: {kdsl_type}`",
            name.name
        ));
        if space == BufferSpace::Local {
            diagnostic = diagnostic.with_hint(
                "a `local mut [T]` parameter's length is given at launch (`kdsl.local(n, \"f32\")` from Python, `Argument::local` from Rust)",
            );
        }
        self.diagnostics.push(diagnostic);
        let element_span = element.span;
        Parameter {
            name,
            ty: ParameterTypeExpression::Buffer {
                space,
                writable,
                element: TypeExpression::Named(Identifier {
                    name: element_name.to_string(),
                    span: element_span,
                }),
                span,
            },
            span,
        }
    }

    /// `(a..b).rev()` is the one method a range takes.
    pub fn expect_rev(&mut self, method: &Identifier) {
        if method.name != "rev" {
            self.diagnostics.push(
                Diagnostic::error(
                    ErrorCode::E0101,
                    format!("a range has no method `{}`", method.name),
                    method.span,
                    "not `rev`",
                )
                .with_hint("count down with `for i in (a..b).rev() { ... }`"),
            );
        }
    }

    pub fn binary(
        &mut self,
        operator: BinaryOperator,
        left: Expression,
        right: Expression,
        span: Span,
    ) -> Expression {
        let depth = left.depth.max(right.depth);
        self.node(
            ExpressionKind::Binary {
                operator,
                left: Box::new(left),
                right: Box::new(right),
            },
            span,
            depth,
        )
    }
}

/// The kdsl name of an OpenCL C scalar type, such as `f32` for `float`.
fn opencl_scalar_name(c_name: &str) -> Option<&'static str> {
    Some(match c_name {
        "float" => "f32",
        "double" => "f64",
        "half" => "f16",
        "char" => "i8",
        "uchar" => "u8",
        "short" => "i16",
        "ushort" => "u16",
        "int" => "i32",
        "uint" | "unsigned" => "u32",
        "long" => "i64",
        "ulong" | "size_t" => "u64",
        _ => return None,
    })
}

/// Whether a literal's suffix names a float type (`f32`, `bf16`).
fn is_float_suffix(suffix: &str) -> bool {
    suffix.starts_with('f') || suffix == "bf16"
}

/// Splits a type suffix such as `u32` off a numeric literal.
fn split_suffix(text: &str, allow_integer_suffix: bool) -> (&str, Option<String>) {
    // `bf16` before `f16`, which it ends with.
    const SUFFIXES: [&str; 12] = [
        "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "bf16", "f16", "f32", "f64",
    ];
    for suffix in SUFFIXES {
        let is_integer_suffix = !is_float_suffix(suffix);
        if is_integer_suffix && !allow_integer_suffix {
            continue;
        }
        if let Some(digits) = text.strip_suffix(suffix) {
            // `0x1f32` is the hexadecimal number 0x1f32, not 0x1 with a suffix.
            if !text.starts_with("0x") || is_integer_suffix {
                return (digits, Some(suffix.to_string()));
            }
        }
    }
    (text, None)
}

/// Parses the text of an integer token (the lexer guarantees its shape).
pub fn integer_literal(text: &str) -> Literal {
    let (digits, suffix) = split_suffix(text, true);
    let digits = digits.replace('_', "");
    let value = if let Some(hex) = digits.strip_prefix("0x") {
        u128::from_str_radix(hex, 16).ok()
    } else if let Some(binary) = digits.strip_prefix("0b") {
        u128::from_str_radix(binary, 2).ok()
    } else {
        digits.parse::<u128>().ok()
    };
    match &suffix {
        Some(s) if is_float_suffix(s) => Literal::Float {
            value: value.map_or(f64::INFINITY, |v| v as f64),
            text: value.map_or_else(|| "1e400".to_string(), |v| v.to_string()),
            suffix,
        },
        _ => Literal::Integer { value, suffix },
    }
}

/// Parses the text of a float token (the lexer guarantees its shape).
pub fn float_literal(text: &str) -> Literal {
    let (digits, suffix) = split_suffix(text, false);
    let text = digits.replace('_', "");
    let value = text.parse::<f64>().unwrap_or(f64::NAN);
    Literal::Float {
        value,
        text,
        suffix,
    }
}

/// Parses a file, recovering from syntax errors. Returns the (possibly partial) file and all
/// lexical and syntax diagnostics. `None` means nothing usable could be parsed.
pub fn parse_with_recovery(source: &str) -> (Option<SourceFile>, Vec<Diagnostic>) {
    let mut diagnostics = Vec::new();
    let tokens = tokenize(source, &mut diagnostics);
    if let Some(diagnostic) = check_nesting(&tokens) {
        diagnostics.push(diagnostic);
        return (None, diagnostics);
    }
    let mut state = ParseState {
        errors: Vec::new(),
        too_deep: None,
        diagnostics: Vec::new(),
    };
    let result = grammar::SourceFileParser::new().parse(&mut state, tokens);
    for recovery in state.errors {
        diagnostics.push(syntax_error(recovery.error, source.len()));
    }
    diagnostics.append(&mut state.diagnostics);
    if let Some((span, chain)) = state.too_deep {
        // Each binary operator is one level of the expression tree, so a flat chain of more
        // than 1024 operands is as deep as the tree may be; say which one it is.
        let (message, label) = if chain {
            (
                format!("operator chain longer than {MAX_EXPRESSION_DEPTH} operands"),
                "too many operands in one expression",
            )
        } else {
            (
                format!("expression nests deeper than {MAX_EXPRESSION_DEPTH} levels"),
                "too deeply nested",
            )
        };
        diagnostics.push(
            Diagnostic::error(ErrorCode::E0004, message, span, label)
                .with_hint("split the expression with `let` bindings"),
        );
    }
    match result {
        Ok(file) => (Some(file), diagnostics),
        Err(error) => {
            diagnostics.push(syntax_error(error, source.len()));
            (None, diagnostics)
        }
    }
}

/// Describes the grammar's expected terminals in words.
fn expected_list(expected: &[String]) -> String {
    let has = |terminal: &str| expected.iter().any(|e| e == terminal);
    if has("\";\"") {
        return "`;`".to_string();
    }
    if has("\"{\"") && !has("identifier") {
        return "`{`".to_string();
    }
    if has("identifier") && has("integer") && has("\"(\"") {
        return "an expression".to_string();
    }
    let names: Vec<String> = expected
        .iter()
        .map(|e| {
            if let Some(inner) = e.strip_prefix('"').and_then(|e| e.strip_suffix('"')) {
                format!("`{}`", inner.replace("\\\"", "\""))
            } else {
                e.clone()
            }
        })
        .collect();
    match names.len() {
        0 => "something else".to_string(),
        1 => names[0].clone(),
        n if n <= 8 => format!("one of {}", names.join(", ")),
        _ => format!("one of {}, ...", names[..8].join(", ")),
    }
}

fn syntax_error(
    error: ParseError<usize, Token<'_>, Infallible>,
    source_length: usize,
) -> Diagnostic {
    match error {
        ParseError::UnrecognizedToken {
            token: (start, token, end),
            expected,
        } => {
            let mut diagnostic = Diagnostic::error(
                ErrorCode::E0101,
                format!("syntax error: unexpected {token}"),
                Span::new(start, end),
                format!("expected {}", expected_list(&expected)),
            );
            let only = |terminal: &str| expected.len() == 1 && expected[0] == terminal;
            let has = |terminal: &str| expected.iter().any(|e| e == terminal);
            if let Some(word) = token.keyword().filter(|_| has("identifier")) {
                return Diagnostic::error(
                    ErrorCode::E0101,
                    format!("`{word}` is a reserved word and cannot be a name"),
                    Span::new(start, end),
                    "reserved word",
                )
                .with_hint(format!(
                    "choose another name, such as `{word}_`; the reserved words are {}",
                    crate::lexer::KEYWORDS.join(", ")
                ));
            }
            if has("\";\"") {
                diagnostic =
                    diagnostic.with_hint("is a `;` missing at the end of the previous statement?");
            } else if only("\"[\"") {
                diagnostic = diagnostic.with_hint(
                    "attributes are written `#[name(arguments)]`, such as `#[work_group_size(256)]`",
                );
            } else if only("\"else\"") {
                diagnostic = diagnostic
                    .with_hint("an `if` used as a value needs an `else`: `if c { a } else { b }`");
            } else if only("\"]\"") {
                diagnostic = diagnostic.with_hint("is a closing `]` missing?");
            } else if has("\"#\"") && has("\"kernel\"") && !has("\"const\"") {
                // After an attribute, where only another attribute or a function may follow.
                diagnostic = diagnostic.with_hint(
                    "attributes go right before a kernel: `#[work_group_size(256)] kernel name(...) { ... }`",
                );
            } else if matches!(token, Token::Identifier(_)) && has("\"{\"") {
                diagnostic =
                    diagnostic.with_hint("`if`, `while` and `for` bodies need braces `{ ... }`");
            }
            diagnostic
        }
        ParseError::UnrecognizedEof { location, expected } => {
            let start = location.min(source_length);
            Diagnostic::error(
                ErrorCode::E0102,
                "syntax error: unexpected end of file",
                Span::new(start, start),
                format!("expected {}", expected_list(&expected)),
            )
            .with_hint("check for an unclosed `{`, `(` or `[`")
        }
        ParseError::ExtraToken {
            token: (start, token, end),
        } => Diagnostic::error(
            ErrorCode::E0101,
            format!("syntax error: unexpected {token}"),
            Span::new(start, end),
            "expected the end of the file",
        ),
        ParseError::InvalidToken { location } => Diagnostic::error(
            ErrorCode::E0101,
            "syntax error: invalid token",
            Span::new(location, location),
            "here",
        ),
        ParseError::User { error } => match error {},
    }
}
