//! Compile-time definitions of module constants (`kdsl compile -D WINDOW=8`).
//!
//! A definition replaces the declared value of a module constant before constants are folded,
//! so constants computed from it, array lengths and work-group sizes follow. Its value is one
//! literal of the constant's type, optionally negated: `14`, `-3`, `0x10`, `1.5e-3`, `true`.
//! A definition has no place in the source, so its diagnostics have no snippet of their own;
//! those about the value point at the constant's declaration instead.

use super::constant::{integer_range, truncate};
use super::{suggest, Checker, ConstantState, Global};
use crate::ast;
use crate::lexer::{tokenize, Token};
use crate::parser::{float_literal, integer_literal};
use kdsl_ir::scalar;
use kdsl_ir::ErrorCode;
use kdsl_ir::{Diagnostic, Literal, ModuleConstant, ScalarType};
use std::collections::HashMap;

/// A module constant's value given at compile time: `NAME=VALUE` on the command line.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Define {
    pub name: String,
    /// A literal of the constant's type, as text: `14`, `-3`, `0x10`, `0.5`, `true`.
    pub value: String,
}

impl Define {
    pub fn new(name: impl Into<String>, value: impl ToString) -> Define {
        Define {
            name: name.into(),
            value: value.to_string(),
        }
    }

    /// Parses `NAME=VALUE` as written after `-D`; `None` without an `=`.
    pub fn parse(text: &str) -> Option<Define> {
        let (name, value) = text.split_once('=')?;
        Some(Define::new(name.trim(), value.trim()))
    }

    fn shown(&self) -> String {
        format!("`-D {}={}`", self.name, self.value)
    }
}

/// Why a definition's value does not suit its constant.
enum ValueProblem {
    /// Not a literal of the constant's type; says what was found instead.
    WrongKind(String),
    /// A literal of the right kind that the type cannot hold; says what the type holds.
    OutOfRange(String),
}

/// A value as written: an optional `-` and one literal.
struct WrittenValue {
    negated: bool,
    literal: ast::Literal,
    /// A decimal integer too long for 128 bits read as a float (Rust writes `1e300_f64` out
    /// in full), for float constants.
    long_decimal: Option<f64>,
}

/// Reads the text of a definition's value with the language's own lexer, so literals have
/// exactly the source syntax. `None` when it is not one (optionally negated) literal.
fn read_value(text: &str) -> Option<WrittenValue> {
    let mut lexical_errors = Vec::new();
    let tokens = tokenize(text, &mut lexical_errors);
    if !lexical_errors.is_empty() {
        return None;
    }
    let (negated, rest) = match tokens.as_slice() {
        [(_, Token::Minus, _), rest @ ..] => (true, rest),
        rest => (false, rest),
    };
    let mut long_decimal = None;
    let literal = match rest {
        [(_, Token::Integer(text), _)] => {
            long_decimal = text.replace('_', "").parse::<f64>().ok();
            integer_literal(text)
        }
        [(_, Token::Float(text), _)] => float_literal(text),
        [(_, Token::True, _)] if !negated => ast::Literal::Bool(true),
        [(_, Token::False, _)] if !negated => ast::Literal::Bool(false),
        _ => return None,
    };
    Some(WrittenValue {
        negated,
        literal,
        long_decimal,
    })
}

/// The literal a written value gives a constant of type `ty`, by the rules of literals in
/// source: integers stand for floats, floats never for integers, a suffix must name `ty`.
fn convert(value: &WrittenValue, ty: ScalarType) -> Result<Literal, ValueProblem> {
    let wrong = |found: &str| Err(ValueProblem::WrongKind(found.to_string()));
    let suffix = match &value.literal {
        ast::Literal::Integer { suffix, .. } | ast::Literal::Float { suffix, .. } => {
            suffix.as_deref()
        }
        ast::Literal::Bool(_) => None,
    };
    if let Some(suffix) = suffix.filter(|s| *s != ty.name()) {
        return Err(ValueProblem::WrongKind(format!(
            "a literal with the suffix `{suffix}`"
        )));
    }
    match (&value.literal, ty) {
        (ast::Literal::Bool(b), ScalarType::Bool) => Ok(Literal::Bool(*b)),
        (ast::Literal::Bool(b), _) => wrong(&format!("`{b}`")),
        (_, ScalarType::Bool) => wrong("a number"),
        (ast::Literal::Float { .. }, ty) if ty.is_integer() => wrong("a floating-point number"),
        (ast::Literal::Integer { value: digits, .. }, ty) if ty.is_integer() => {
            let (low, high) = integer_range(ty);
            let number = digits
                .and_then(|v| i128::try_from(v).ok())
                .map(|v| if value.negated { -v } else { v })
                .filter(|n| (low..=high).contains(n));
            match number {
                Some(number) => Ok(Literal::Integer(truncate(number, ty))),
                None => Err(ValueProblem::OutOfRange(format!(
                    "`{ty}` holds {low} to {high}"
                ))),
            }
        }
        (literal, ty) => {
            let digits = match literal {
                ast::Literal::Integer { value: digits, .. } => digits
                    .map(|v| v.to_string())
                    .or_else(|| value.long_decimal.map(|v| format!("{v:e}")))
                    .unwrap_or_else(|| "1e400".to_string()),
                ast::Literal::Float { text, .. } => text.clone(),
                ast::Literal::Bool(b) => return wrong(&format!("`{b}`")),
            };
            // Rounded once from the digits to `ty`; finite when in range.
            let magnitude = scalar::parse_float(&digits, ty).unwrap_or(f64::INFINITY);
            let number = if value.negated { -magnitude } else { magnitude };
            if number.is_finite() {
                Ok(Literal::Float(number))
            } else {
                Err(ValueProblem::OutOfRange(format!(
                    "`{ty}` holds finite values only"
                )))
            }
        }
    }
}

fn example_hint(name: &str, ty: ScalarType) -> String {
    if ty == ScalarType::Bool {
        format!("write `-D {name}=true` or `-D {name}=false`")
    } else if ty.is_float() {
        format!("write a number, such as `-D {name}=0.5` or `-D {name}=2`")
    } else {
        format!("write an integer, such as `-D {name}=16` (decimal, `0x` or `0b`)")
    }
}

impl<'file> Checker<'file> {
    /// Records the compile-time definitions to apply.
    pub fn with_defines(mut self, defines: &'file [Define]) -> Self {
        self.defines = defines;
        self
    }

    /// Reports definitions that name no module constant or are given twice. Runs after the
    /// module's items are collected, before any constant is folded.
    pub(super) fn check_define_names(&mut self) {
        let mut seen: HashMap<&str, &Define> = HashMap::new();
        for define in self.defines {
            if let Some(first) = seen.insert(define.name.as_str(), define) {
                if first.value != define.value {
                    self.report(
                        Diagnostic::without_location(
                            ErrorCode::E0704,
                            format!(
                                "module constant `{}` is defined twice: {} and {}",
                                define.name,
                                first.shown(),
                                define.shown()
                            ),
                        )
                        .with_hint("give each constant one value"),
                    );
                }
                continue;
            }
            match self.globals.get(&define.name) {
                Some(Global::Constant(_)) => {}
                Some(Global::Function(_) | Global::Instance(_)) => self.report(
                    Diagnostic::without_location(
                        ErrorCode::E0701,
                        format!(
                            "{}: `{}` is a function, not a module constant",
                            define.shown(),
                            define.name
                        ),
                    )
                    .with_hint("`-D` sets module constants (`const NAME: T = value;`) only"),
                ),
                None => {
                    let names: Vec<&str> = self
                        .constants
                        .iter()
                        .map(|c| c.name.name.as_str())
                        .collect();
                    let hint = match suggest(&define.name, names.iter().copied()) {
                        Some(best) => format!("did you mean `{best}`?"),
                        None if names.is_empty() => {
                            "this file declares no module constants (`const NAME: T = value;`)"
                                .to_string()
                        }
                        None => format!("the module constants are: {}", names.join(", ")),
                    };
                    self.report(
                        Diagnostic::without_location(
                            ErrorCode::E0701,
                            format!(
                                "{}: there is no module constant `{}`",
                                define.shown(),
                                define.name
                            ),
                        )
                        .with_hint(hint),
                    );
                }
            }
        }
    }

    /// The definition that replaces `item`'s declared value, if any (the last one given).
    pub(super) fn define_for(&self, item: &ast::ConstantItem) -> Option<&'file Define> {
        self.defines.iter().rev().find(|d| d.name == item.name.name)
    }

    /// The value of constant `item` of type `ty` given by `define`, or a diagnostic that
    /// points at the constant's declaration.
    pub(super) fn defined_value(
        &mut self,
        item: &ast::ConstantItem,
        ty: ScalarType,
        define: &Define,
    ) -> Option<(ScalarType, Literal)> {
        let declared_here = format!("`{}` is declared here as `{ty}`", item.name.name);
        let Some(written) = read_value(&define.value) else {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0702,
                    format!("{}: `{}` is not a literal", define.shown(), define.value),
                    item.name.span,
                    declared_here,
                )
                .with_hint(example_hint(&define.name, ty)),
            );
            return None;
        };
        match convert(&written, ty) {
            Ok(literal) => Some((ty, literal)),
            Err(ValueProblem::WrongKind(found)) => {
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0702,
                        format!("{}: expected `{ty}`, found {found}", define.shown()),
                        item.name.span,
                        declared_here,
                    )
                    .with_hint(example_hint(&define.name, ty)),
                );
                None
            }
            Err(ValueProblem::OutOfRange(holds)) => {
                let mut diagnostic = Diagnostic::error(
                    ErrorCode::E0703,
                    format!(
                        "{}: `{}` is out of range for `{ty}`",
                        define.shown(),
                        define.value
                    ),
                    item.name.span,
                    format!("{declared_here}; {holds}"),
                );
                if written.negated && ty.is_integer() && !ty.is_signed_integer() {
                    diagnostic = diagnostic.with_hint("unsigned types cannot hold negative values");
                }
                self.report(diagnostic);
                None
            }
        }
    }

    /// The module's constants with their folded values, in source order, for the bundle.
    pub(super) fn folded_constants(&self) -> Vec<ModuleConstant> {
        let mut folded = Vec::new();
        for (index, item) in self.constants.iter().enumerate() {
            if self.globals.get(&item.name.name) != Some(&Global::Constant(index)) {
                continue;
            }
            if let ConstantState::Done(Some((ty, value))) = self.constant_states[index] {
                folded.push(ModuleConstant {
                    name: item.name.name.clone(),
                    ty,
                    value,
                    defined: self.define_for(item).is_some(),
                });
            }
        }
        folded
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(text: &str, ty: ScalarType) -> Result<Literal, String> {
        let written = read_value(text).ok_or_else(|| "not a literal".to_string())?;
        convert(&written, ty).map_err(|problem| match problem {
            ValueProblem::WrongKind(found) => format!("found {found}"),
            ValueProblem::OutOfRange(holds) => holds,
        })
    }

    #[test]
    fn reads_literals_of_every_kind() {
        assert_eq!(value("14", ScalarType::U32), Ok(Literal::Integer(14)));
        assert_eq!(value("0x10", ScalarType::U8), Ok(Literal::Integer(16)));
        assert_eq!(
            value("1_000u32", ScalarType::U32),
            Ok(Literal::Integer(1000))
        );
        assert_eq!(value("-3", ScalarType::I16), Ok(Literal::Integer(0xFFFD)));
        assert_eq!(value("-128", ScalarType::I8), Ok(Literal::Integer(0x80)));
        assert_eq!(value("2", ScalarType::F32), Ok(Literal::Float(2.0)));
        assert_eq!(value("-1.5e-1", ScalarType::F64), Ok(Literal::Float(-0.15)));
        assert_eq!(
            value("0.1", ScalarType::F32),
            Ok(Literal::Float(f64::from(0.1f32)))
        );
        assert_eq!(value("true", ScalarType::Bool), Ok(Literal::Bool(true)));
        assert_eq!(value(" false ", ScalarType::Bool), Ok(Literal::Bool(false)));
        assert_eq!(
            value(&1e300f64.to_string(), ScalarType::F64),
            Ok(Literal::Float(1e300))
        );
    }

    #[test]
    fn refuses_wrong_kinds_and_ranges() {
        assert_eq!(
            value("300", ScalarType::U8),
            Err("`u8` holds 0 to 255".into())
        );
        assert_eq!(
            value("-1", ScalarType::U32),
            Err("`u32` holds 0 to 4294967295".into())
        );
        assert_eq!(
            value("1.5", ScalarType::U32),
            Err("found a floating-point number".into())
        );
        assert_eq!(value("true", ScalarType::F32), Err("found `true`".into()));
        assert_eq!(value("1", ScalarType::Bool), Err("found a number".into()));
        assert_eq!(
            value("2u64", ScalarType::U32),
            Err("found a literal with the suffix `u64`".into())
        );
        assert_eq!(
            value("1e39", ScalarType::F32),
            Err("`f32` holds finite values only".into())
        );
        for text in ["", "-", "abc", "1 2", "2*3", "-true", "\"4\"", "1..2"] {
            assert_eq!(
                value(text, ScalarType::U32),
                Err("not a literal".into()),
                "{text}"
            );
        }
    }

    #[test]
    fn parses_name_value_pairs() {
        assert_eq!(Define::parse("N=14"), Some(Define::new("N", "14")));
        assert_eq!(
            Define::parse(" SCALE = 0.5 "),
            Some(Define::new("SCALE", "0.5"))
        );
        assert_eq!(Define::parse("N"), None);
    }
}
