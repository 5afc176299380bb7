//! The lexer: turns source text into tokens with byte spans.
//!
//! Bytes that start no token and unterminated block comments become diagnostics; the
//! offending text is skipped so that the parser still sees the rest of the file.

use kdsl_ir::ErrorCode;
use kdsl_ir::{Diagnostic, Span};
use logos::Logos;
use std::fmt;

/// What went wrong while lexing one token.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum LexicalErrorKind {
    #[default]
    InvalidCharacter,
    UnterminatedComment,
    UnterminatedString,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Logos)]
#[logos(error = LexicalErrorKind)]
#[logos(skip r"[ \t\r\n\f]+")]
#[logos(skip r"//[^\n]*")]
pub enum Token<'input> {
    #[token("/*", block_comment)]
    BlockComment,

    #[token("fn")]
    Fn,
    #[token("kernel")]
    Kernel,
    #[token("const")]
    Const,
    #[token("instance")]
    Instance,
    #[token("struct")]
    Struct,
    #[token("let")]
    Let,
    #[token("mut")]
    Mut,
    #[token("local")]
    Local,
    #[token("private")]
    Private,
    #[token("global")]
    Global,
    #[token("constant")]
    Constant,
    #[token("if")]
    If,
    #[token("else")]
    Else,
    #[token("while")]
    While,
    #[token("for")]
    For,
    #[token("in")]
    In,
    #[token("step")]
    Step,
    #[token("unroll")]
    Unroll,
    #[token("break")]
    Break,
    #[token("continue")]
    Continue,
    #[token("return")]
    Return,
    #[token("as")]
    As,
    #[token("true")]
    True,
    #[token("false")]
    False,

    #[regex(r"[A-Za-z_][A-Za-z0-9_]*", |lex| lex.slice())]
    Identifier(&'input str),
    /// Decimal, hexadecimal or binary integers, optionally with a type suffix.
    #[regex(r"[0-9][0-9_]*([iu](8|16|32|64)|f(16|32|64)|bf16)?", |lex| lex.slice())]
    #[regex(r"0x[0-9a-fA-F_]+([iu](8|16|32|64))?", |lex| lex.slice())]
    #[regex(r"0b[01_]+([iu](8|16|32|64)|f(16|32|64)|bf16)?", |lex| lex.slice())]
    Integer(&'input str),
    /// Decimal floats with a fraction and/or exponent, optionally with a type suffix.
    #[regex(r"[0-9][0-9_]*\.[0-9][0-9_]*([eE][+-]?[0-9][0-9_]*)?(f16|f32|f64|bf16)?", |lex| lex.slice())]
    #[regex(r"[0-9][0-9_]*[eE][+-]?[0-9][0-9_]*(f16|f32|f64|bf16)?", |lex| lex.slice())]
    Float(&'input str),
    /// A string literal with its quotes, escapes unprocessed: only `print`'s format uses one.
    #[regex(r#""([^"\\\n]|\\[^\n])*""#, |lex| lex.slice())]
    #[regex(r#""([^"\\\n]|\\[^\n])*"#, unterminated_string)]
    String(&'input str),

    #[token("#")]
    Hash,
    #[token("(")]
    LeftParen,
    #[token(")")]
    RightParen,
    #[token("{")]
    LeftBrace,
    #[token("}")]
    RightBrace,
    #[token("[")]
    LeftBracket,
    #[token("]")]
    RightBracket,
    #[token(",")]
    Comma,
    #[token(";")]
    Semicolon,
    #[token(":")]
    Colon,
    /// Only to explain C's `c ? a : b`, which kdsl writes `if c { a } else { b }`.
    #[token("?")]
    Question,
    #[token("::")]
    PathSeparator,
    #[token("->")]
    Arrow,
    #[token("..")]
    DotDot,
    #[token(".")]
    Dot,
    #[token("=")]
    Assign,
    #[token("+=")]
    PlusAssign,
    #[token("-=")]
    MinusAssign,
    #[token("*=")]
    StarAssign,
    #[token("/=")]
    SlashAssign,
    #[token("%=")]
    PercentAssign,
    #[token("&=")]
    AmpersandAssign,
    #[token("|=")]
    PipeAssign,
    #[token("^=")]
    CaretAssign,
    #[token("<<=")]
    ShiftLeftAssign,
    #[token(">>=")]
    ShiftRightAssign,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("/")]
    Slash,
    #[token("%")]
    Percent,
    #[token("&")]
    Ampersand,
    #[token("|")]
    Pipe,
    #[token("^")]
    Caret,
    #[token("~")]
    Tilde,
    #[token("!")]
    Bang,
    #[token("<<")]
    ShiftLeft,
    #[token(">>")]
    ShiftRight,
    #[token("==")]
    EqualEqual,
    #[token("!=")]
    NotEqual,
    #[token("<")]
    Less,
    #[token("<=")]
    LessEqual,
    #[token(">")]
    Greater,
    #[token(">=")]
    GreaterEqual,
    #[token("&&")]
    AndAnd,
    #[token("||")]
    OrOr,
}

/// Skips a `/* ... */` comment (not nested). Fails when the file ends first.
fn block_comment<'input>(
    lexer: &mut logos::Lexer<'input, Token<'input>>,
) -> Result<logos::Skip, LexicalErrorKind> {
    let rest = lexer.remainder();
    match rest.find("*/") {
        Some(end) => {
            lexer.bump(end + 2);
            Ok(logos::Skip)
        }
        None => {
            lexer.bump(rest.len());
            Err(LexicalErrorKind::UnterminatedComment)
        }
    }
}

/// The reserved words, which cannot be names (docs/language.md lists them).
pub const KEYWORDS: [&str; 24] = [
    "fn", "kernel", "const", "instance", "struct", "let", "mut", "local", "private", "global",
    "constant", "if", "else", "while", "for", "in", "step", "unroll", "break", "continue",
    "return", "as", "true", "false",
];

impl Token<'_> {
    /// The word, when this token is a reserved word.
    pub fn keyword(&self) -> Option<&'static str> {
        Some(match self {
            Token::Fn => "fn",
            Token::Kernel => "kernel",
            Token::Const => "const",
            Token::Instance => "instance",
            Token::Struct => "struct",
            Token::Let => "let",
            Token::Mut => "mut",
            Token::Local => "local",
            Token::Private => "private",
            Token::Global => "global",
            Token::Constant => "constant",
            Token::If => "if",
            Token::Else => "else",
            Token::While => "while",
            Token::For => "for",
            Token::In => "in",
            Token::Step => "step",
            Token::Unroll => "unroll",
            Token::Break => "break",
            Token::Continue => "continue",
            Token::Return => "return",
            Token::As => "as",
            Token::True => "true",
            Token::False => "false",
            _ => return None,
        })
    }
}

impl fmt::Display for Token<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            Token::BlockComment => "comment",
            Token::Fn => "`fn`",
            Token::Kernel => "`kernel`",
            Token::Const => "`const`",
            Token::Instance => "`instance`",
            Token::Struct => "`struct`",
            Token::Let => "`let`",
            Token::Mut => "`mut`",
            Token::Local => "`local`",
            Token::Private => "`private`",
            Token::Global => "`global`",
            Token::Constant => "`constant`",
            Token::If => "`if`",
            Token::Else => "`else`",
            Token::While => "`while`",
            Token::For => "`for`",
            Token::In => "`in`",
            Token::Step => "`step`",
            Token::Unroll => "`unroll`",
            Token::Break => "`break`",
            Token::Continue => "`continue`",
            Token::Return => "`return`",
            Token::As => "`as`",
            Token::True => "`true`",
            Token::False => "`false`",
            Token::Identifier(name) => return write!(f, "identifier `{name}`"),
            Token::Integer(text) => return write!(f, "integer `{text}`"),
            Token::Float(text) => return write!(f, "float `{text}`"),
            Token::String(text) => return write!(f, "string {text}"),
            Token::Hash => "`#`",
            Token::LeftParen => "`(`",
            Token::RightParen => "`)`",
            Token::LeftBrace => "`{`",
            Token::RightBrace => "`}`",
            Token::LeftBracket => "`[`",
            Token::RightBracket => "`]`",
            Token::Comma => "`,`",
            Token::Semicolon => "`;`",
            Token::Colon => "`:`",
            Token::Question => "`?`",
            Token::PathSeparator => "`::`",
            Token::Arrow => "`->`",
            Token::DotDot => "`..`",
            Token::Dot => "`.`",
            Token::Assign => "`=`",
            Token::PlusAssign => "`+=`",
            Token::MinusAssign => "`-=`",
            Token::StarAssign => "`*=`",
            Token::SlashAssign => "`/=`",
            Token::PercentAssign => "`%=`",
            Token::AmpersandAssign => "`&=`",
            Token::PipeAssign => "`|=`",
            Token::CaretAssign => "`^=`",
            Token::ShiftLeftAssign => "`<<=`",
            Token::ShiftRightAssign => "`>>=`",
            Token::Plus => "`+`",
            Token::Minus => "`-`",
            Token::Star => "`*`",
            Token::Slash => "`/`",
            Token::Percent => "`%`",
            Token::Ampersand => "`&`",
            Token::Pipe => "`|`",
            Token::Caret => "`^`",
            Token::Tilde => "`~`",
            Token::Bang => "`!`",
            Token::ShiftLeft => "`<<`",
            Token::ShiftRight => "`>>`",
            Token::EqualEqual => "`==`",
            Token::NotEqual => "`!=`",
            Token::Less => "`<`",
            Token::LessEqual => "`<=`",
            Token::Greater => "`>`",
            Token::GreaterEqual => "`>=`",
            Token::AndAnd => "`&&`",
            Token::OrOr => "`||`",
        };
        f.write_str(text)
    }
}

/// A token with its byte range, in the triple form the parser expects.
pub type Spanned<'input> = (usize, Token<'input>, usize);

/// A `"` whose string does not end on its line.
fn unterminated_string<'input>(
    _: &mut logos::Lexer<'input, Token<'input>>,
) -> Result<&'input str, LexicalErrorKind> {
    Err(LexicalErrorKind::UnterminatedString)
}

/// The deepest nesting of `(`, `[` and `{` the parser accepts.
pub const MAX_NESTING: usize = 256;

const BYTE_ORDER_MARK: char = '\u{FEFF}';

/// Lexes the whole source. Invalid input is reported in `diagnostics` and skipped.
pub fn tokenize<'input>(
    source: &'input str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<Spanned<'input>> {
    let mut tokens = Vec::new();
    let mut lexer = Token::lexer(source);
    // The byte-order mark some editors write at the start of a UTF-8 file is no part of the
    // program; spans still count from the file's first byte.
    if source.starts_with(BYTE_ORDER_MARK) {
        lexer.bump(BYTE_ORDER_MARK.len_utf8());
    }
    // Consecutive invalid characters are reported once, as one range.
    let mut invalid_run: Option<Span> = None;
    let flush = |run: &mut Option<Span>, diagnostics: &mut Vec<Diagnostic>| {
        if let Some(span) = run.take() {
            diagnostics.push(invalid_character(source, span));
        }
    };
    while let Some(result) = lexer.next() {
        let range = lexer.span();
        let span = Span::new(range.start, range.end);
        match result {
            Ok(token) => {
                flush(&mut invalid_run, diagnostics);
                tokens.push((range.start, token, range.end));
            }
            Err(LexicalErrorKind::UnterminatedComment) => {
                flush(&mut invalid_run, diagnostics);
                diagnostics.push(
                    Diagnostic::error(
                        ErrorCode::E0002,
                        "unterminated block comment",
                        Span::new(range.start, range.start + 2),
                        "this comment is never closed",
                    )
                    .with_hint("close the comment with `*/`"),
                );
            }
            Err(LexicalErrorKind::UnterminatedString) => {
                flush(&mut invalid_run, diagnostics);
                diagnostics.push(
                    Diagnostic::error(
                        ErrorCode::E0001,
                        "unterminated string literal",
                        Span::new(range.start, range.start + 1),
                        "this string is never closed",
                    )
                    .with_hint("end it with `\"` on the same line"),
                );
            }
            Err(LexicalErrorKind::InvalidCharacter) => {
                invalid_run = Some(match invalid_run {
                    Some(run) if run.end == span.start => run.to(span),
                    Some(run) => {
                        diagnostics.push(invalid_character(source, run));
                        span
                    }
                    None => span,
                });
            }
        }
    }
    flush(&mut invalid_run, diagnostics);
    tokens
}

fn invalid_character(source: &str, span: Span) -> Diagnostic {
    let text = source.get(span.range()).unwrap_or("");
    let shown: String = text
        .chars()
        .take(8)
        .map(|c| c.escape_default().to_string())
        .collect();
    let noun = if text.chars().count() > 1 {
        "characters"
    } else {
        "character"
    };
    let mut diagnostic = Diagnostic::error(
        ErrorCode::E0001,
        format!("invalid {noun} `{shown}` in source"),
        span,
        "not part of any token",
    );
    if text.contains('\'') {
        diagnostic = diagnostic.with_hint("kdsl has no character literals");
    }
    diagnostic
}

/// Checks that brackets do not nest deeper than [`MAX_NESTING`], so that later recursive
/// passes stay within the stack. Returns the diagnostic for the first too-deep bracket.
pub fn check_nesting(tokens: &[Spanned<'_>]) -> Option<Diagnostic> {
    let mut depth = 0usize;
    for &(start, token, end) in tokens {
        match token {
            Token::LeftParen | Token::LeftBracket | Token::LeftBrace => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Some(
                        Diagnostic::error(
                            ErrorCode::E0004,
                            format!("brackets nest deeper than {MAX_NESTING} levels"),
                            Span::new(start, end),
                            "too deeply nested",
                        )
                        .with_hint("split the code into smaller functions or expressions"),
                    );
                }
            }
            Token::RightParen | Token::RightBracket | Token::RightBrace => {
                depth = depth.saturating_sub(1);
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(source: &str) -> (Vec<Token<'_>>, Vec<Diagnostic>) {
        let mut diagnostics = Vec::new();
        let tokens = tokenize(source, &mut diagnostics);
        (tokens.into_iter().map(|(_, t, _)| t).collect(), diagnostics)
    }

    #[test]
    fn lexes_numbers_and_ranges() {
        let (tokens, diagnostics) = kinds("0..n 1.5f64 2u32 0xFF_u8 1e-3 7");
        assert!(diagnostics.is_empty());
        assert_eq!(
            tokens,
            vec![
                Token::Integer("0"),
                Token::DotDot,
                Token::Identifier("n"),
                Token::Float("1.5f64"),
                Token::Integer("2u32"),
                Token::Integer("0xFF_u8"),
                Token::Float("1e-3"),
                Token::Integer("7"),
            ]
        );
    }

    #[test]
    fn skips_a_byte_order_mark_at_the_start_only() {
        let mut diagnostics = Vec::new();
        let tokens = tokenize("\u{FEFF}kernel k", &mut diagnostics);
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        // Spans count from the file's first byte, so diagnostics point at the right column.
        assert_eq!(tokens[0], (3, Token::Kernel, 9));
        let (_, diagnostics) = kinds("kernel \u{FEFF}k");
        assert_eq!(diagnostics.len(), 1);
        assert_eq!(diagnostics[0].code, "E0001");
    }

    #[test]
    fn lexes_string_literals_with_escapes_and_reports_unterminated_ones() {
        let (tokens, diagnostics) = kinds(r#"print("a {} \" b\n", x)"#);
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        assert_eq!(tokens[2], Token::String(r#""a {} \" b\n""#));
        assert_eq!(tokens.len(), 6);
        let (tokens, diagnostics) = kinds("print(\"open\nx");
        assert_eq!(diagnostics.len(), 1);
        assert_eq!(diagnostics[0].message, "unterminated string literal");
        assert_eq!(tokens.last(), Some(&Token::Identifier("x")));
    }

    #[test]
    fn lexes_tuple_fields() {
        let (tokens, diagnostics) = kinds("t.0 t.1+1.5");
        assert!(diagnostics.is_empty());
        assert_eq!(
            tokens,
            vec![
                Token::Identifier("t"),
                Token::Dot,
                Token::Integer("0"),
                Token::Identifier("t"),
                Token::Dot,
                Token::Integer("1"),
                Token::Plus,
                Token::Float("1.5"),
            ]
        );
    }

    #[test]
    fn skips_comments() {
        let (tokens, diagnostics) = kinds("a /* b */ c // d\n e");
        assert!(diagnostics.is_empty());
        assert_eq!(
            tokens,
            vec![
                Token::Identifier("a"),
                Token::Identifier("c"),
                Token::Identifier("e")
            ]
        );
    }

    #[test]
    fn reports_invalid_characters_once_per_run() {
        let (tokens, diagnostics) = kinds("a $$ b \0 c");
        assert_eq!(tokens.len(), 3);
        assert_eq!(diagnostics.len(), 2);
        assert_eq!(diagnostics[0].primary_span(), Some(Span::new(2, 4)));
        assert!(diagnostics[1].message.contains("\\u{0}"));
    }

    #[test]
    fn reports_unterminated_comment() {
        let (tokens, diagnostics) = kinds("a /* b");
        assert_eq!(tokens, vec![Token::Identifier("a")]);
        assert_eq!(diagnostics[0].code, ErrorCode::E0002);
    }

    #[test]
    fn rejects_deep_nesting() {
        let source = "(".repeat(MAX_NESTING + 1);
        let mut diagnostics = Vec::new();
        let tokens = tokenize(&source, &mut diagnostics);
        assert_eq!(
            check_nesting(&tokens).map(|d| d.code),
            Some(ErrorCode::E0004)
        );
    }
}
