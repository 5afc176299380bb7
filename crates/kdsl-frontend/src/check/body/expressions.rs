//! Expressions: names, literals, unary and binary operators, type unification.

use super::*;

impl Checker<'_> {
    pub(crate) fn mismatch(
        &mut self,
        expected: ScalarType,
        found: ScalarType,
        span: Span,
        context: &str,
    ) {
        let mut diagnostic = Diagnostic::error(
            ErrorCode::E0301,
            format!("mismatched types: expected `{expected}`, found `{found}`"),
            span,
            format!("{context} must be `{expected}`"),
        );
        if expected == ScalarType::Bool && found.is_numeric() {
            diagnostic = diagnostic.with_hint("compare explicitly, e.g. `value != 0`");
        } else if found != ScalarType::Bool && expected != ScalarType::Bool {
            diagnostic = diagnostic.with_hint(format!(
                "kdsl has no implicit conversions: convert with `as {expected}`"
            ));
        }
        self.report(diagnostic);
    }

    /// Checks an expression that must have type `ty`.
    pub(super) fn coerce(
        &mut self,
        expression: &ast::Expression,
        ty: ScalarType,
        context: &str,
    ) -> Option<Expression> {
        let value = self.expression(expression, Some(ty))?;
        if value.ty != ty {
            self.mismatch(ty, value.ty, expression.span, context);
            return None;
        }
        Some(value)
    }

    pub(super) fn condition(&mut self, expression: &ast::Expression) -> Option<Expression> {
        let value = self.expression(expression, Some(ScalarType::Bool))?;
        if value.ty != ScalarType::Bool {
            let mut diagnostic = Diagnostic::error(
                ErrorCode::E0304,
                format!("condition must be `bool`, found `{}`", value.ty),
                expression.span,
                "not a `bool`",
            );
            if value.ty.is_numeric() {
                diagnostic = diagnostic.with_hint("compare explicitly, e.g. `value != 0`");
            }
            self.report(diagnostic);
            return None;
        }
        Some(value)
    }

    // ----- Functions -----

    /// Checks an expression and lowers it. `expected` is only a hint for literals; callers
    /// compare the result's type themselves.
    pub(crate) fn expression(
        &mut self,
        expression: &ast::Expression,
        expected: Option<ScalarType>,
    ) -> Option<Expression> {
        let span = expression.span;
        if self.vector_shape(expression).is_some() {
            self.vector_where_scalar(expression);
            return None;
        }
        if let E::Binary { left, right, .. } = &expression.kind {
            if self.vector_shape(left).is_some() || self.vector_shape(right).is_some() {
                // A comparison or logic on vectors, which `vector_value` explains.
                let _ = self.vector_value(expression, None, None);
                return None;
            }
        }
        match &expression.kind {
            E::Literal(literal) => self.literal(literal, span, expected, false),
            E::Name(name) => self.name_expression(name),
            E::AssociatedConstant { ty, name } => self.associated_constant(ty, name, span),
            E::Parenthesized(inner) => self.expression(inner, expected),
            E::Unary { operator, operand } => self.unary(*operator, operand, span, expected),
            E::Binary {
                operator,
                left,
                right,
            } => self.binary(*operator, left, right, span, expected),
            E::Cast { value, ty } => {
                let value = self.expression(value, None);
                let target = match self.resolve_type(ty)? {
                    ResolvedType::Scalar(target) => target,
                    tuple @ ResolvedType::Tuple(_) => {
                        self.report(Diagnostic::error(
                            ErrorCode::E0303,
                            format!("cannot cast to the tuple type `{}`", describe_type(&tuple)),
                            ty.span(),
                            "casts convert between scalar types",
                        ));
                        return None;
                    }
                    ResolvedType::Vector(vector) => {
                        self.report(
                            Diagnostic::error(
                                ErrorCode::E0315,
                                format!("cannot convert a scalar to the vector `{vector}`"),
                                ty.span(),
                                "a vector type",
                            )
                            .with_hint(format!(
                                "repeat it instead: `{vector}(x as {})`",
                                vector.element
                            )),
                        );
                        return None;
                    }
                    ResolvedType::Array(array) => {
                        self.report(Diagnostic::error(
                            ErrorCode::E0303,
                            format!("cannot cast to the array type `{array}`"),
                            ty.span(),
                            "casts convert between scalar types",
                        ));
                        return None;
                    }
                };
                let value = value?;
                if value.ty == target {
                    return Some(Expression { span, ..value });
                }
                Some(Expression {
                    id: kdsl_ir::ExprId::UNNUMBERED,
                    kind: ExpressionKind::Cast {
                        value: Box::new(value),
                    },
                    ty: target,
                    span,
                })
            }
            E::Index { .. } => {
                let (place, _) = self.place(expression)?;
                let ty = place.element;
                Some(Expression {
                    id: kdsl_ir::ExprId::UNNUMBERED,
                    kind: ExpressionKind::Load(Box::new(place)),
                    ty,
                    span,
                })
            }
            E::Call { callee, arguments } => self.call(callee, arguments, span, expected, false),
            E::If {
                condition,
                accept,
                reject,
            } => self.if_expression(condition, accept, reject, span, expected),
            E::Field { base, field } => self.field_expression(base, field, span),
            E::MethodCall {
                base,
                method,
                arguments,
            } => self.method_call(base, method, arguments, span, expected),
            E::Tuple(elements) => {
                for element in elements {
                    let _ = self.expression(element, None);
                }
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0314,
                        "a tuple cannot be used as a scalar value",
                        span,
                        "a tuple",
                    )
                    .with_hint(
                        "bind it (`let t = (a, b);`), return it or pass it to a tuple parameter",
                    ),
                );
                None
            }
            E::String(_) => {
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0330,
                        "a string literal can only be `print`'s format",
                        span,
                        "not a value",
                    )
                    .with_hint("kdsl has no string values: `print(\"x = {}\", x);` writes text"),
                );
                None
            }
            E::RecordLiteral { .. } => {
                self.record_value_as_scalar(expression);
                None
            }
            E::Error => None,
        }
    }

    pub(super) fn name_expression(&mut self, name: &ast::Identifier) -> Option<Expression> {
        let span = name.span;
        let resolved = self.lookup(&name.name);
        if self.constant_context
            && matches!(resolved, Resolved::Binding(_) | Resolved::Parameter(..))
        {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0509,
                    format!("`{}` is not a constant", name.name),
                    span,
                    "only known at run time",
                )
                .with_hint(
                    "array lengths must be known at compile time: use a literal or a `const` item",
                ),
            );
            return None;
        }
        match resolved {
            Resolved::Binding(Binding::Variable {
                id,
                ty: VariableType::Scalar { ty },
                ..
            }) => Some(variable_expression(id, ty, span)),
            Resolved::Binding(Binding::Variable {
                ty: VariableType::Array { ty },
                ..
            }) => {
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0206,
                        format!("`{}` is an array, not a value", name.name),
                        span,
                        format!("`{ty}`"),
                    )
                    .with_hint(format!("read an element: `{}[i]`", name.name)),
                );
                None
            }
            Resolved::Binding(Binding::Record { .. }) => {
                self.record_value_as_scalar(&ast::Expression::leaf(E::Name(name.clone()), span));
                None
            }
            Resolved::Binding(Binding::Vector { ty, .. }) => {
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0315,
                        format!("`{}` is a vector `{ty}`, not a scalar", name.name),
                        span,
                        "a vector",
                    )
                    .with_hint(format!("take a component: `{}.x`", name.name)),
                );
                None
            }
            Resolved::Binding(Binding::Tuple { types, .. }) => {
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0314,
                        format!(
                            "`{}` is a tuple `{}`, not a scalar",
                            name.name,
                            describe_type(&ResolvedType::Tuple(types))
                        ),
                        span,
                        "a tuple",
                    )
                    .with_hint(format!("read an element: `{}.0`", name.name)),
                );
                None
            }
            Resolved::Binding(Binding::Poisoned) => None,
            Resolved::Parameter(id, ParameterType::Scalar { ty }, _) => Some(Expression {
                id: kdsl_ir::ExprId::UNNUMBERED,
                kind: ExpressionKind::Parameter(id),
                ty,
                span,
            }),
            Resolved::Parameter(_, ty @ ParameterType::Array { .. }, _) => {
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0206,
                        format!("`{}` is an array, not a value", name.name),
                        span,
                        format!("`{ty}`"),
                    )
                    .with_hint(format!("read an element: `{}[i]`", name.name)),
                );
                None
            }
            Resolved::Parameter(_, ty @ ParameterType::Buffer { .. }, _) => {
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0206,
                        format!("`{}` is a buffer, not a value", name.name),
                        span,
                        format!("`{ty}`"),
                    )
                    .with_hint(format!("read an element: `{}[i]`", name.name)),
                );
                None
            }
            Resolved::Constant(index) => {
                let (ty, literal) = self.constant_value(index)?;
                Some(literal_expression(literal, ty, span))
            }
            Resolved::WorkGroupSize(value) => Some(literal_expression(
                Literal::Integer(u64::from(value?)),
                ScalarType::U32,
                span,
            )),
            Resolved::Function => {
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0206,
                        format!("`{}` is a function, not a value", name.name),
                        span,
                        "not a value",
                    )
                    .with_hint(format!("call it: `{}(...)`", name.name)),
                );
                None
            }
            Resolved::Unknown => {
                self.unknown_name(name);
                None
            }
        }
    }

    /// `f32::INFINITY`, `i32::MAX`: a literal of the named scalar type.
    fn associated_constant(
        &mut self,
        ty: &ast::Identifier,
        name: &ast::Identifier,
        span: Span,
    ) -> Option<Expression> {
        let type_argument = self.type_arguments.get(&ty.name).copied();
        let Some(scalar_type) = type_argument.or_else(|| ScalarType::from_name(&ty.name)) else {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0203,
                    format!("unknown scalar type `{}`", ty.name),
                    ty.span,
                    "not a scalar type",
                )
                .with_hint(
                    "constants such as `MAX` belong to scalar types: `u32::MAX`, `f32::INFINITY`",
                ),
            );
            return None;
        };
        let Some(bits) = scalar::associated_constant(scalar_type, &name.name) else {
            let names = scalar::associated_constant_names(scalar_type);
            let hint = if names.is_empty() {
                format!("`{scalar_type}` has no constants")
            } else {
                format!(
                    "`{scalar_type}` has {}",
                    names
                        .iter()
                        .map(|n| format!("`{scalar_type}::{n}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            self.report(
                Diagnostic::error(
                    ErrorCode::E0201,
                    format!("no constant `{}` in `{scalar_type}`", name.name),
                    name.span,
                    "unknown constant",
                )
                .with_hint(hint),
            );
            return None;
        };
        Some(literal_expression(
            scalar::bits_literal(bits, scalar_type),
            scalar_type,
            span,
        ))
    }

    pub(super) fn literal(
        &mut self,
        literal: &ast::Literal,
        span: Span,
        expected: Option<ScalarType>,
        negated: bool,
    ) -> Option<Expression> {
        let adapt = |predicate: fn(ScalarType) -> bool| expected.filter(|t| predicate(*t));
        match literal {
            ast::Literal::Bool(value) => Some(literal_expression(
                Literal::Bool(*value),
                ScalarType::Bool,
                span,
            )),
            ast::Literal::Integer { value, suffix } => {
                let ty = suffix
                    .as_deref()
                    .and_then(ScalarType::from_name)
                    .or_else(|| adapt(ScalarType::is_numeric))
                    .unwrap_or(ScalarType::I32);
                if ty.is_float() {
                    let digits = value.map_or_else(|| "1e400".to_string(), |v| v.to_string());
                    return self.float_literal(&digits, negated, ty, span);
                }
                let number =
                    value
                        .and_then(|v| i128::try_from(v).ok())
                        .map(|v| if negated { -v } else { v });
                let (low, high) = integer_range(ty);
                match number {
                    Some(number) if number >= low && number <= high => Some(literal_expression(
                        Literal::Integer(constant::truncate(number, ty)),
                        ty,
                        span,
                    )),
                    _ => {
                        let mut diagnostic = Diagnostic::error(
                            ErrorCode::E0305,
                            format!("integer literal out of range for `{ty}`"),
                            span,
                            format!("`{ty}` holds {low} to {high}"),
                        );
                        if suffix.is_none() && expected.is_none() {
                            diagnostic = diagnostic
                                .with_hint("unsuffixed integers default to `i32`: add a suffix such as `u64` or `i64`");
                        } else if negated && !ty.is_signed_integer() {
                            diagnostic =
                                diagnostic.with_hint("unsigned types cannot hold negative values");
                        }
                        self.report(diagnostic);
                        None
                    }
                }
            }
            ast::Literal::Float { text, suffix, .. } => {
                let suffix_type = suffix.as_deref().and_then(ScalarType::from_name);
                if suffix_type.is_none() {
                    if let Some(integer) = expected.filter(|t| t.is_integer()) {
                        self.report(
                            Diagnostic::error(
                                ErrorCode::E0306,
                                format!("expected `{integer}`, found a floating-point literal"),
                                span,
                                format!("`{integer}` expected here"),
                            )
                            .with_hint(format!(
                                "write an integer literal, or convert: `(... as {integer})`"
                            )),
                        );
                        return None;
                    }
                }
                let ty = suffix_type
                    .or_else(|| adapt(ScalarType::is_float))
                    .unwrap_or(ScalarType::F32);
                self.float_literal(text, negated, ty, span)
            }
        }
    }

    /// A float literal of type `ty` from its decimal digits, rounded once to `ty`.
    pub(super) fn float_literal(
        &mut self,
        digits: &str,
        negated: bool,
        ty: ScalarType,
        span: Span,
    ) -> Option<Expression> {
        let value = scalar::parse_float(digits, ty).unwrap_or(f64::NAN);
        let value = if negated { -value } else { value };
        let largest = match ty {
            ScalarType::F16 => 65504.0,
            ScalarType::Bf16 => kdsl_ir::bf16::bf16_to_f64(0x7f7f),
            ScalarType::F32 => f64::from(f32::MAX),
            _ => f64::MAX,
        };
        // A literal is in range when it rounds to a finite value of its type.
        if !value.is_finite() {
            self.report(Diagnostic::error(
                ErrorCode::E0305,
                format!("floating-point literal out of range for `{ty}`"),
                span,
                format!("the largest `{ty}` is {largest:e}"),
            ));
            return None;
        }
        Some(literal_expression(Literal::Float(value), ty, span))
    }

    pub(super) fn unary(
        &mut self,
        operator: UnaryOperator,
        operand: &ast::Expression,
        span: Span,
        expected: Option<ScalarType>,
    ) -> Option<Expression> {
        if operator == UnaryOperator::Negate {
            if let E::Literal(
                literal @ (ast::Literal::Integer { .. } | ast::Literal::Float { .. }),
            ) = &strip_parentheses(operand).kind
            {
                return self.literal(literal, span, expected, true);
            }
        }
        let value = self.expression(operand, expected)?;
        let ty = value.ty;
        let (op, valid, message, hint) = match operator {
            UnaryOperator::Negate => (
                UnaryOp::Negate,
                ty.is_signed_integer() || ty.is_float(),
                format!("cannot negate a value of type `{ty}`"),
                if ty.is_integer() {
                    "for wrapping negation of an unsigned value write `0 - x`"
                } else {
                    "negation needs a signed integer or a float"
                },
            ),
            UnaryOperator::Not => (
                UnaryOp::Not,
                ty == ScalarType::Bool,
                format!("`!` needs a `bool`, found `{ty}`"),
                "use `~` for the bitwise complement of an integer",
            ),
            UnaryOperator::BitNot => (
                UnaryOp::BitNot,
                ty.is_integer(),
                format!("`~` needs an integer, found `{ty}`"),
                "use `!` to negate a `bool`",
            ),
        };
        if !valid {
            self.report(
                Diagnostic::error(ErrorCode::E0302, message, span, "invalid operand")
                    .with_hint(hint),
            );
            return None;
        }
        Some(Expression {
            id: kdsl_ir::ExprId::UNNUMBERED,
            kind: ExpressionKind::Unary {
                op,
                operand: Box::new(value),
            },
            ty,
            span,
        })
    }

    pub(super) fn binary(
        &mut self,
        operator: BinaryOperator,
        left: &ast::Expression,
        right: &ast::Expression,
        span: Span,
        expected: Option<ScalarType>,
    ) -> Option<Expression> {
        if matches!(operator, BinaryOperator::And | BinaryOperator::Or) {
            let l = self.logical_operand(left, operator);
            let r = self.logical_operand(right, operator);
            let op = if operator == BinaryOperator::And {
                LogicalOp::And
            } else {
                LogicalOp::Or
            };
            return Some(Expression {
                id: kdsl_ir::ExprId::UNNUMBERED,
                kind: ExpressionKind::ShortCircuit {
                    op,
                    left: Box::new(l?),
                    right: Box::new(r?),
                },
                ty: ScalarType::Bool,
                span,
            });
        }
        let is_comparison = matches!(
            operator,
            BinaryOperator::Equal
                | BinaryOperator::NotEqual
                | BinaryOperator::Less
                | BinaryOperator::LessEqual
                | BinaryOperator::Greater
                | BinaryOperator::GreaterEqual
        );
        let is_shift = matches!(
            operator,
            BinaryOperator::ShiftLeft | BinaryOperator::ShiftRight
        );
        let operand_hint = if is_comparison { None } else { expected };
        let (l, r) = if !is_shift && is_untyped(left) && !is_untyped(right) {
            let r = self.expression(right, operand_hint);
            let l = self.expression(left, r.as_ref().map(|r| r.ty).or(operand_hint));
            (l, r)
        } else {
            let l = self.expression(left, operand_hint);
            let r = self.expression(right, l.as_ref().map(|l| l.ty).or(operand_hint));
            (l, r)
        };
        let operator_span = Span::new(left.span.end as usize, right.span.start as usize);
        self.binary_typed(operator, l?, r?, span, operator_span)
    }

    pub(super) fn logical_operand(
        &mut self,
        operand: &ast::Expression,
        operator: BinaryOperator,
    ) -> Option<Expression> {
        let value = self.expression(operand, Some(ScalarType::Bool))?;
        if value.ty != ScalarType::Bool {
            let mut diagnostic = Diagnostic::error(
                ErrorCode::E0302,
                format!(
                    "`{}` needs `bool` operands, found `{}`",
                    operator.symbol(),
                    value.ty
                ),
                operand.span,
                "not a `bool`",
            );
            if value.ty.is_integer() {
                let bitwise = if operator == BinaryOperator::And {
                    "&"
                } else {
                    "|"
                };
                diagnostic = diagnostic.with_hint(format!(
                    "compare explicitly (`x != 0`), or use `{bitwise}` for bitwise logic"
                ));
            }
            self.report(diagnostic);
            return None;
        }
        Some(value)
    }

    /// Type-checks a binary operation on already lowered operands.
    pub(super) fn binary_typed(
        &mut self,
        operator: BinaryOperator,
        left: Expression,
        right: Expression,
        span: Span,
        operator_span: Span,
    ) -> Option<Expression> {
        let op = ir_binary_op(operator)?;
        let (lt, rt) = (left.ty, right.ty);
        let symbol = operator.symbol();
        if op.is_shift() {
            if !lt.is_integer() || !rt.is_integer() {
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0302,
                        format!("`{symbol}` needs integer operands, found `{lt}` and `{rt}`"),
                        span,
                        "invalid shift",
                    )
                    .with_label(left.span, format!("`{lt}`"))
                    .with_label(right.span, format!("`{rt}`")),
                );
                return None;
            }
        } else {
            if lt != rt {
                let mut diagnostic = Diagnostic::error(
                    ErrorCode::E0301,
                    format!("mismatched types: `{lt}` {symbol} `{rt}`"),
                    operator_span,
                    "operands of different types",
                )
                .with_label(left.span, format!("`{lt}`"))
                .with_label(right.span, format!("`{rt}`"));
                if lt.is_numeric() && rt.is_numeric() {
                    let hint = if lt.is_float() && rt.is_float() && lt.bit_width() == rt.bit_width()
                    {
                        // `f16` and `bf16`: neither holds the other's values.
                        format!(
                            "kdsl has no implicit conversions, and neither `{lt}` nor `{rt}` holds the other's values: convert both operands with `as f32`"
                        )
                    } else {
                        let (from, to) = conversion_towards_wider(lt, rt);
                        format!("kdsl has no implicit conversions: convert the `{from}` operand with `as {to}`")
                    };
                    diagnostic = diagnostic.with_hint(hint);
                }
                self.report(diagnostic);
                return None;
            }
            let valid = match op {
                BinaryOp::Add
                | BinaryOp::Subtract
                | BinaryOp::Multiply
                | BinaryOp::Divide
                | BinaryOp::Remainder => lt.is_numeric(),
                BinaryOp::BitAnd | BinaryOp::BitOr | BinaryOp::BitXor => {
                    lt.is_integer() || lt == ScalarType::Bool
                }
                BinaryOp::Equal | BinaryOp::NotEqual => true,
                _ => lt.is_numeric(),
            };
            if !valid {
                let mut diagnostic = Diagnostic::error(
                    ErrorCode::E0302,
                    format!("operator `{symbol}` cannot be applied to `{lt}`"),
                    span,
                    "invalid operands",
                );
                if lt == ScalarType::Bool && matches!(op, BinaryOp::Add | BinaryOp::Multiply) {
                    diagnostic = diagnostic.with_hint("use `||` or `&&` for logic on `bool`");
                } else if lt.is_float() {
                    diagnostic = diagnostic.with_hint("bitwise operators need integers");
                }
                self.report(diagnostic);
                return None;
            }
        }
        let ty = if op.is_comparison() {
            ScalarType::Bool
        } else {
            lt
        };
        Some(binary_expression(op, left, right, ty, span))
    }

    /// `if condition { accept } else { reject }`: both arms share one type, as with `select`,
    /// but only the chosen one is evaluated.
    fn if_expression(
        &mut self,
        condition: &ast::Expression,
        accept: &ast::Expression,
        reject: &ast::Expression,
        span: Span,
        expected: Option<ScalarType>,
    ) -> Option<Expression> {
        let condition = self.condition(condition);
        let (arms, ty) = self.unify(&[accept, reject], expected, "both arms of `if`")?;
        let [accept, reject]: [Expression; 2] = arms.try_into().ok()?;
        Some(Expression {
            id: kdsl_ir::ExprId::UNNUMBERED,
            kind: ExpressionKind::Conditional {
                condition: Box::new(condition?),
                accept: Box::new(accept),
                reject: Box::new(reject),
            },
            ty,
            span,
        })
    }

    /// Checks expressions that must share one type; literals take the type of the others.
    pub(super) fn unify(
        &mut self,
        arguments: &[&ast::Expression],
        expected: Option<ScalarType>,
        context: &str,
    ) -> Option<(Vec<Expression>, ScalarType)> {
        if arguments.is_empty() {
            return None;
        }
        let pivot = arguments.iter().position(|a| !is_untyped(a)).unwrap_or(0);
        let first = self.expression(arguments[pivot], expected);
        let ty = first.as_ref().map(|e| e.ty);
        let mut results: Vec<Option<Expression>> = vec![None; arguments.len()];
        results[pivot] = first;
        for (index, argument) in arguments.iter().enumerate() {
            if index == pivot {
                continue;
            }
            results[index] = match ty {
                Some(ty) => self.coerce(argument, ty, context),
                None => {
                    let _ = self.expression(argument, None);
                    None
                }
            };
        }
        let values: Option<Vec<Expression>> = results.into_iter().collect();
        Some((values?, ty?))
    }

    // ----- Places -----
}

/// The conversion of a mismatched operand that loses the least, as `(from, to)`: an integer to
/// the float, else the narrower operand to the wider type.
fn conversion_towards_wider(lt: ScalarType, rt: ScalarType) -> (ScalarType, ScalarType) {
    if lt.is_float() != rt.is_float() {
        if lt.is_float() {
            (rt, lt)
        } else {
            (lt, rt)
        }
    } else if lt.bit_width() < rt.bit_width() {
        (lt, rt)
    } else {
        (rt, lt)
    }
}
