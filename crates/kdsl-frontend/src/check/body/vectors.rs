//! Vectors (`f32x4`, `u8x2`, ...), flattened here like tuples: a vector variable is one
//! variable per component, a vector parameter one parameter per component, a vector result
//! the hidden arrays of a tuple result, and every operation one scalar operation per
//! component. The IR sees vectors only in `vloadN`/`vstoreN`, each one wide memory access.
//! An operand every component reads (a scalar against a vector, a splat, the index of a
//! `vload4`) is evaluated once per component, so it may not have effects (E0315).

use super::tuples::tuple_element_expression;
use super::*;
use kdsl_ir::visit::walk_expression;

/// A checked vector: its type and one expression per component.
pub(super) struct VectorValue {
    pub ty: VectorType,
    pub components: Vec<Expression>,
}

/// One side of a binary operation with a vector.
enum Operand {
    Vector(VectorValue),
    Scalar(Expression),
}

const COMPONENT_NAMES: [&str; 4] = ["x", "y", "z", "w"];

/// The name of component `index`: `x`, `y`, `z` or `w`.
pub(super) fn component_name(index: u8) -> &'static str {
    COMPONENT_NAMES[usize::from(index)]
}

/// The index of component `field` (`x`..`w`, or `0`..`3`) of a vector of `width`.
fn component_index(field: &str, width: u8) -> Option<usize> {
    COMPONENT_NAMES
        .iter()
        .position(|&name| name == field)
        .or_else(|| field.parse::<usize>().ok())
        .filter(|&index| index < usize::from(width))
}

/// Whether evaluating `expression` twice could differ from evaluating it once (the sub-group
/// queries such as `sub_group_local_id()` cannot; shuffles and reductions are collectives).
fn has_effects(expression: &Expression) -> bool {
    let mut effects = false;
    walk_expression(
        expression,
        &mut |e| {
            effects |= match &e.kind {
                ExpressionKind::SubGroup { op, .. } => op.arity() > 0,
                ExpressionKind::Call { .. }
                | ExpressionKind::Atomic { .. }
                | ExpressionKind::WorkGroup { .. } => true,
                _ => false,
            }
        },
        &mut |_| {},
    );
    effects
}

fn is_comparison_or_logic(operator: BinaryOperator) -> bool {
    matches!(
        operator,
        BinaryOperator::And
            | BinaryOperator::Or
            | BinaryOperator::Equal
            | BinaryOperator::NotEqual
            | BinaryOperator::Less
            | BinaryOperator::LessEqual
            | BinaryOperator::Greater
            | BinaryOperator::GreaterEqual
    )
}

impl Checker<'_> {
    fn vector_error(&mut self, message: String, span: Span, label: &str, hint: &str) {
        self.report(Diagnostic::error(ErrorCode::E0315, message, span, label).with_hint(hint));
    }

    /// The vector type `expression` has, found without checking it; `None` for scalars,
    /// tuples and expressions whose type cannot be known yet.
    pub(super) fn vector_shape(&self, expression: &ast::Expression) -> Option<VectorType> {
        match &strip_parentheses(expression).kind {
            E::Name(name) => match self.lookup(&name.name) {
                Resolved::Binding(Binding::Vector { ty, .. }) => Some(ty),
                _ => None,
            },
            E::Call { callee, arguments } => {
                if let Some(ty) = VectorType::from_name(&callee.name) {
                    return Some(ty);
                }
                match Builtin::from_name(&callee.name) {
                    Some(Builtin::VectorLoad(width)) => {
                        let element = self.buffer_element(arguments.first()?)?;
                        Some(VectorType { element, width })
                    }
                    Some(Builtin::Math(_)) => arguments.iter().find_map(|a| self.vector_shape(a)),
                    Some(Builtin::Select) => {
                        arguments.iter().skip(1).find_map(|a| self.vector_shape(a))
                    }
                    Some(_) => None,
                    None => self
                        .signatures
                        .get(&callee.name)
                        .and_then(|signature| signature.vector_result),
                }
            }
            E::Binary {
                operator,
                left,
                right,
            } if !is_comparison_or_logic(*operator) => {
                self.vector_shape(left).or_else(|| self.vector_shape(right))
            }
            E::Unary {
                operator: UnaryOperator::Negate | UnaryOperator::BitNot,
                operand,
            } => self.vector_shape(operand),
            E::Cast {
                ty: ast::TypeExpression::Named(name),
                ..
            } => VectorType::from_name(&name.name),
            _ => None,
        }
    }

    /// The element type of the buffer parameter `expression` names.
    fn buffer_element(&self, expression: &ast::Expression) -> Option<ScalarType> {
        let E::Name(name) = &strip_parentheses(expression).kind else {
            return None;
        };
        match self.lookup(&name.name) {
            Resolved::Parameter(_, ParameterType::Buffer { element, .. }, _) => Some(element),
            _ => None,
        }
    }

    /// Reports a vector where a scalar is expected (after checking it for its own errors).
    pub(super) fn vector_where_scalar(&mut self, expression: &ast::Expression) {
        if let Some(value) = self.vector_value(expression, None, None) {
            self.vector_error(
                format!("expected a scalar, found the vector `{}`", value.ty),
                expression.span,
                "a vector",
                "take one component (`v.x`), or bind the vector: `let v = ...;`",
            );
        }
    }

    /// Checks a vector-valued expression. `expected` is the type the context needs; `out`
    /// receives the call of a device function returning a vector, which is refused where
    /// `out` is `None` (inside an expression).
    pub(super) fn vector_value(
        &mut self,
        expression: &ast::Expression,
        expected: Option<VectorType>,
        out: Option<&mut Block>,
    ) -> Option<VectorValue> {
        let inner = strip_parentheses(expression);
        let span = inner.span;
        if self.vector_shape(inner).is_none() {
            // Only these report better than "expected a vector": a comparison of vectors and
            // a `vload4` of something that is not a buffer.
            let better = match &inner.kind {
                E::Binary { left, right, .. } => {
                    self.vector_shape(left).is_some() || self.vector_shape(right).is_some()
                }
                E::Call { callee, .. } => {
                    matches!(
                        Builtin::from_name(&callee.name),
                        Some(Builtin::VectorLoad(_))
                    )
                }
                _ => false,
            };
            if !better {
                return self.not_a_vector(inner, expected);
            }
        }
        let value = match &inner.kind {
            E::Name(name) => match self.lookup(&name.name) {
                Resolved::Binding(Binding::Vector { components, ty, .. }) => VectorValue {
                    ty,
                    components: components
                        .iter()
                        .map(|&c| tuple_element_expression(c, ty.element, span))
                        .collect(),
                },
                Resolved::Binding(Binding::Poisoned) => return None,
                _ => return self.not_a_vector(inner, expected),
            },
            E::Call { callee, arguments } => self.vector_call(callee, arguments, span, out)?,
            E::Binary {
                operator,
                left,
                right,
            } => self.vector_binary(*operator, left, right, span)?,
            E::Unary { operator, operand } => self.vector_unary(*operator, operand, span)?,
            E::Cast { value, ty } => self.vector_cast(value, ty, span)?,
            E::Error => return None,
            _ => return self.not_a_vector(inner, expected),
        };
        if let Some(expected) = expected {
            if expected != value.ty {
                self.vector_error(
                    format!("expected `{expected}`, found `{}`", value.ty),
                    span,
                    &format!("a `{}`", value.ty),
                    &format!("convert it with `as {expected}` (the widths must agree)"),
                );
                return None;
            }
        }
        Some(value)
    }

    /// Reports a scalar (or anything else) where a vector is expected.
    fn not_a_vector(
        &mut self,
        expression: &ast::Expression,
        expected: Option<VectorType>,
    ) -> Option<VectorValue> {
        let found = self.expression(expression, expected.map(|v| v.element))?;
        let hint = match expected {
            Some(ty) => format!("build one with `{ty}(a, ...)`, or repeat a scalar: `{ty}(a)`"),
            None => "build one such as `f32x4(a, b, c, d)`".to_string(),
        };
        self.vector_error(
            format!("expected a vector, found `{}`", found.ty),
            expression.span,
            "not a vector",
            &hint,
        );
        None
    }

    /// A scalar operand that every component reads.
    fn repeated_scalar(
        &mut self,
        expression: &ast::Expression,
        ty: ScalarType,
        what: &str,
    ) -> Option<Expression> {
        if let Some(vector) = self.vector_shape(expression) {
            self.vector_error(
                format!("{what} must be a `{ty}`, not the vector `{vector}`"),
                expression.span,
                "a vector",
                "take one component, such as `v.x`",
            );
            return None;
        }
        let value = self.coerce(expression, ty, what)?;
        self.free_of_effects(value, what)
    }

    /// The scalar of `v op= scalar;`, evaluated once into a temporary first when it has
    /// effects: nothing else in the statement has any, so that keeps the order as written.
    fn compound_scalar(
        &mut self,
        expression: &ast::Expression,
        ty: ScalarType,
        span: Span,
        out: &mut Block,
    ) -> Option<Expression> {
        if let Some(vector) = self.vector_shape(expression) {
            self.vector_error(
                format!("the right operand must be a `{ty}` or a vector, not `{vector}`"),
                expression.span,
                "a vector of another type",
                "convert it with `as`",
            );
            return None;
        }
        let value = self.coerce(expression, ty, "the right operand")?;
        if !has_effects(&value) {
            return Some(value);
        }
        let id = self.assigned_variable("operand", value, (span, span), out)?;
        Some(variable_expression(id, ty, span))
    }

    fn free_of_effects(&mut self, value: Expression, what: &str) -> Option<Expression> {
        if has_effects(&value) {
            self.vector_error(
                format!("{what} is evaluated once per component, so it cannot call functions, atomics or collectives"),
                value.span,
                "has effects",
                "bind it first: `let s = ...;`",
            );
            return None;
        }
        Some(value)
    }

    fn vector_call(
        &mut self,
        callee: &ast::Identifier,
        arguments: &[ast::Expression],
        span: Span,
        out: Option<&mut Block>,
    ) -> Option<VectorValue> {
        if let Some(ty) = VectorType::from_name(&callee.name) {
            return self.vector_construction(ty, callee, arguments, span);
        }
        match Builtin::from_name(&callee.name) {
            Some(Builtin::VectorLoad(width)) => self.vector_load(callee, width, arguments, span),
            Some(Builtin::Math(function)) => self.vector_math(function, arguments, span),
            Some(Builtin::Select) => self.vector_select(callee, arguments, span),
            // `vector_shape` admits no other built-in.
            Some(_) => None,
            None => {
                let ty = self.signatures.get(&callee.name)?.vector_result?;
                let Some(out) = out else {
                    for argument in arguments {
                        let _ = self.expression_or_vector(argument);
                    }
                    self.vector_error(
                        format!(
                            "the vector `{}` returns must be bound before it is used",
                            callee.name
                        ),
                        span,
                        "a call returning a vector, inside an expression",
                        &format!("bind it first: `let v = {}(...);`", callee.name),
                    );
                    return None;
                };
                let components = self.tuple_call(callee, arguments, span, None, out)?;
                Some(VectorValue { ty, components })
            }
        }
    }

    /// Checks an argument for its errors only, whatever its shape.
    pub(super) fn expression_or_vector(&mut self, expression: &ast::Expression) -> Option<()> {
        if self.vector_shape(expression).is_some() {
            self.vector_value(expression, None, None).map(|_| ())
        } else {
            self.expression(expression, None).map(|_| ())
        }
    }

    /// `f32x4(a, b, c, d)`, or `f32x4(a)` for four copies of `a`.
    fn vector_construction(
        &mut self,
        ty: VectorType,
        callee: &ast::Identifier,
        arguments: &[ast::Expression],
        span: Span,
    ) -> Option<VectorValue> {
        let width = usize::from(ty.width);
        let components = if arguments.len() == 1 {
            let value = self.repeated_scalar(&arguments[0], ty.element, "the repeated value")?;
            vec![value; width]
        } else if arguments.len() == width {
            let mut components = Vec::with_capacity(width);
            for argument in arguments {
                if let Some(vector) = self.vector_shape(argument) {
                    self.vector_error(
                        format!(
                            "a component of `{ty}` must be a `{}`, not `{vector}`",
                            ty.element
                        ),
                        argument.span,
                        "a vector",
                        "pass one scalar per component",
                    );
                    return None;
                }
                components.push(self.coerce(argument, ty.element, "each component"));
            }
            components.into_iter().collect::<Option<Vec<_>>>()?
        } else {
            for argument in arguments {
                let _ = self.expression_or_vector(argument);
            }
            self.vector_error(
                format!(
                    "`{ty}` takes 1 or {width} arguments but {} were given",
                    arguments.len()
                ),
                span,
                &format!("expected 1 or {width}"),
                &format!(
                    "write `{}(a)` to repeat one value, or give all {width} components",
                    callee.name
                ),
            );
            return None;
        };
        Some(VectorValue { ty, components })
    }

    /// The buffer parameter and vector index of `vloadN(buffer, index)` and
    /// `vstoreN(buffer, index, value)`.
    pub(super) fn vector_place(
        &mut self,
        callee: &ast::Identifier,
        arguments: &[ast::Expression],
        write: bool,
    ) -> Option<Place> {
        let buffer = &arguments[0];
        let resolved = match &strip_parentheses(buffer).kind {
            E::Name(name) => Some((name, self.lookup(&name.name))),
            _ => None,
        };
        let index = self.expression(&arguments[1], Some(ScalarType::U32));
        let (id, element, space, writable, declared_at, name) = match resolved {
            Some((
                name,
                Resolved::Parameter(
                    id,
                    ParameterType::Buffer {
                        element,
                        space,
                        writable,
                        record: None,
                    },
                    declared_at,
                ),
            )) => {
                if self.refuse_shaped(id, buffer.span, &format!("`{}`", callee.name)) {
                    return None;
                }
                (id, element, space, writable, declared_at, name.name.clone())
            }
            Some((_, Resolved::Binding(Binding::Poisoned))) => return None,
            Some((name, Resolved::Unknown)) => {
                self.unknown_name(name);
                return None;
            }
            _ => {
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0309,
                        format!("the first argument of `{}` must be a buffer", callee.name),
                        buffer.span,
                        "not a buffer parameter",
                    )
                    .with_hint("vector loads and stores work on buffers (`global [T]`)"),
                );
                return None;
            }
        };
        if element == ScalarType::Bool {
            self.vector_error(
                format!("`{}` cannot work on a buffer of `bool`", callee.name),
                buffer.span,
                "a `bool` buffer",
                "vectors have integer or float components",
            );
            return None;
        }
        if write && !writable {
            let access = PlaceAccess {
                writable,
                array_parameter: false,
                base_name: name,
                declared_at,
                origin: PlaceOrigin::Buffer,
            };
            self.report_read_only(&access, buffer.span, "store to");
            return None;
        }
        let index = index?;
        let span = index.span;
        let index = self.integer_index(index, span)?;
        Some(Place {
            id: kdsl_ir::PlaceId::UNNUMBERED,
            base: PlaceBase::Parameter(id),
            indices: vec![index],
            element,
            space,
            field: None,
        })
    }

    /// `vloadN(buffer, index)`: elements `index * N` to `index * N + N - 1`, one load.
    fn vector_load(
        &mut self,
        callee: &ast::Identifier,
        width: u8,
        arguments: &[ast::Expression],
        span: Span,
    ) -> Option<VectorValue> {
        if arguments.len() != 2 {
            self.arity_error(callee, 2, arguments.len(), span);
            return None;
        }
        let place = self.vector_place(callee, arguments, false)?;
        let index = place.indices[0].clone();
        self.free_of_effects(index, &format!("the index of `{}`", callee.name))?;
        let ty = VectorType {
            element: place.element,
            width,
        };
        let components = (0..width)
            .map(|component| Expression {
                id: kdsl_ir::ExprId::UNNUMBERED,
                kind: ExpressionKind::VectorLoad {
                    place: Box::new(place.clone()),
                    width,
                    component,
                },
                ty: place.element,
                span,
            })
            .collect();
        Some(VectorValue { ty, components })
    }

    /// `vstoreN(buffer, index, value);`
    pub(super) fn vector_store(
        &mut self,
        callee: &ast::Identifier,
        width: u8,
        arguments: &[ast::Expression],
        span: Span,
        out: &mut Block,
    ) {
        if arguments.len() != 3 {
            self.arity_error(callee, 3, arguments.len(), span);
            return;
        }
        let place = self.vector_place(callee, arguments, true);
        let expected = place.as_ref().map(|place| VectorType {
            element: place.element,
            width,
        });
        let value = self.vector_value(&arguments[2], expected, Some(out));
        if let (Some(place), Some(value)) = (place, value) {
            out.push(statement(
                StatementKind::VectorStore {
                    place,
                    values: value.components,
                },
                span,
            ));
        }
    }

    /// An element-wise math function with at least one vector argument; scalar arguments
    /// apply to every component.
    fn vector_math(
        &mut self,
        function: kdsl_ir::MathFunction,
        arguments: &[ast::Expression],
        span: Span,
    ) -> Option<VectorValue> {
        if arguments.len() != function.arity() {
            for argument in arguments {
                let _ = self.expression_or_vector(argument);
            }
            let callee = ast::Identifier {
                name: function.name().to_string(),
                span,
            };
            self.arity_error(&callee, function.arity(), arguments.len(), span);
            return None;
        }
        let shape = arguments.iter().find_map(|a| self.vector_shape(a))?;
        let operands = self.vector_operands(arguments, shape, function.name())?;
        let ty = operands.first().map(|o| o.vector_type(shape))?;
        let types = function.types();
        if !types.contains(ty.element) || function.result_type(ty.element) != ty.element {
            self.vector_error(
                format!("`{}` does not apply to `{ty}`", function.name()),
                span,
                &format!("called with `{ty}`"),
                &format!(
                    "`{}` takes {} per component",
                    function.name(),
                    types.describe()
                ),
            );
            return None;
        }
        let components = (0..usize::from(ty.width))
            .map(|component| Expression {
                id: kdsl_ir::ExprId::UNNUMBERED,
                kind: ExpressionKind::Math {
                    function,
                    arguments: operands.iter().map(|o| o.component(component)).collect(),
                },
                ty: ty.element,
                span,
            })
            .collect();
        Some(VectorValue { ty, components })
    }

    /// `select(condition, a, b)` on vectors: one condition for every component.
    fn vector_select(
        &mut self,
        callee: &ast::Identifier,
        arguments: &[ast::Expression],
        span: Span,
    ) -> Option<VectorValue> {
        if arguments.len() != 3 {
            self.arity_error(callee, 3, arguments.len(), span);
            return None;
        }
        let condition = self.condition(&arguments[0]);
        let shape = arguments[1..].iter().find_map(|a| self.vector_shape(a))?;
        let operands = self.vector_operands(&arguments[1..], shape, "`select`")?;
        let condition = self.free_of_effects(condition?, "the condition of `select`")?;
        let ty = operands[0].vector_type(shape);
        let components = (0..usize::from(ty.width))
            .map(|component| Expression {
                id: kdsl_ir::ExprId::UNNUMBERED,
                kind: ExpressionKind::Select {
                    condition: Box::new(condition.clone()),
                    accept: Box::new(operands[0].component(component)),
                    reject: Box::new(operands[1].component(component)),
                },
                ty: ty.element,
                span,
            })
            .collect();
        Some(VectorValue { ty, components })
    }

    /// The operands of an element-wise operation: vectors of one type, and scalars of its
    /// element type that apply to every component.
    fn vector_operands(
        &mut self,
        arguments: &[ast::Expression],
        shape: VectorType,
        what: &str,
    ) -> Option<Vec<Operand>> {
        let mut operands = Vec::with_capacity(arguments.len());
        let mut ok = true;
        for argument in arguments {
            let operand = if self.vector_shape(argument).is_some() {
                self.vector_value(argument, Some(shape), None)
                    .map(Operand::Vector)
            } else {
                self.repeated_scalar(
                    argument,
                    shape.element,
                    &format!("a scalar argument of {what}"),
                )
                .map(Operand::Scalar)
            };
            match operand {
                Some(operand) => operands.push(operand),
                None => ok = false,
            }
        }
        ok.then_some(operands)
    }

    fn vector_binary(
        &mut self,
        operator: BinaryOperator,
        left: &ast::Expression,
        right: &ast::Expression,
        span: Span,
    ) -> Option<VectorValue> {
        if is_comparison_or_logic(operator) {
            let _ = self.expression_or_vector(left);
            let _ = self.expression_or_vector(right);
            self.vector_error(
                format!("`{}` does not apply to vectors", operator.symbol()),
                span,
                "a vector operand",
                "compare or combine the components: `a.x < b.x`",
            );
            return None;
        }
        let shape = self
            .vector_shape(left)
            .or_else(|| self.vector_shape(right))?;
        let operands = self.vector_operands(
            &[left.clone(), right.clone()],
            shape,
            &format!("`{}`", operator.symbol()),
        )?;
        let mut operands = operands.into_iter();
        let (l, r) = (operands.next()?, operands.next()?);
        let operator_span = Span::new(left.span.end as usize, right.span.start as usize);
        self.vector_binary_values(operator, l, r, shape, span, operator_span)
    }

    /// One binary operation per component; the first component's check reports any error.
    fn vector_binary_values(
        &mut self,
        operator: BinaryOperator,
        left: Operand,
        right: Operand,
        shape: VectorType,
        span: Span,
        operator_span: Span,
    ) -> Option<VectorValue> {
        let ty = left.vector_type(shape);
        let mut components = Vec::with_capacity(usize::from(ty.width));
        for component in 0..usize::from(ty.width) {
            let value = self.binary_typed(
                operator,
                left.component(component),
                right.component(component),
                span,
                operator_span,
            )?;
            components.push(value);
        }
        Some(VectorValue { ty, components })
    }

    fn vector_unary(
        &mut self,
        operator: UnaryOperator,
        operand: &ast::Expression,
        span: Span,
    ) -> Option<VectorValue> {
        let value = self.vector_value(operand, None, None)?;
        let element = value.ty.element;
        let (op, valid, symbol) = match operator {
            UnaryOperator::Negate => (
                UnaryOp::Negate,
                element.is_signed_integer() || element.is_float(),
                "-",
            ),
            UnaryOperator::BitNot => (UnaryOp::BitNot, element.is_integer(), "~"),
            UnaryOperator::Not => (UnaryOp::Not, false, "!"),
        };
        if !valid {
            self.report(Diagnostic::error(
                ErrorCode::E0302,
                format!("`{symbol}` does not apply to `{}`", value.ty),
                span,
                "invalid operand",
            ));
            return None;
        }
        let components = value
            .components
            .into_iter()
            .map(|component| Expression {
                id: kdsl_ir::ExprId::UNNUMBERED,
                kind: ExpressionKind::Unary {
                    op,
                    operand: Box::new(component),
                },
                ty: element,
                span,
            })
            .collect();
        Some(VectorValue {
            ty: value.ty,
            components,
        })
    }

    /// `v as i32x4`: a conversion of each component; the widths must agree.
    fn vector_cast(
        &mut self,
        value: &ast::Expression,
        ty: &ast::TypeExpression,
        span: Span,
    ) -> Option<VectorValue> {
        let target = match self.resolve_type(ty)? {
            ResolvedType::Vector(target) => target,
            other => {
                let _ = self.expression_or_vector(value);
                self.vector_error(
                    format!(
                        "a vector converts to a vector, not to `{}`",
                        describe_type(&other)
                    ),
                    ty.span(),
                    "not a vector type",
                    "convert one component instead: `v.x as f32`",
                );
                return None;
            }
        };
        if self.vector_shape(value).is_none() {
            let found = self.expression(value, None)?;
            self.vector_error(
                format!(
                    "cannot convert the scalar `{}` to the vector `{target}`",
                    found.ty
                ),
                span,
                "a scalar",
                &format!("repeat it instead: `{target}(x as {})`", target.element),
            );
            return None;
        }
        let source = self.vector_value(value, None, None)?;
        if source.ty.width != target.width {
            self.vector_error(
                format!(
                    "cannot convert `{}` to `{target}`: the widths differ",
                    source.ty
                ),
                span,
                "different widths",
                "convert to a vector of the same width",
            );
            return None;
        }
        let components = source
            .components
            .into_iter()
            .map(|component| Expression {
                id: kdsl_ir::ExprId::UNNUMBERED,
                kind: ExpressionKind::Cast {
                    value: Box::new(component),
                },
                ty: target.element,
                span,
            })
            .collect();
        Some(VectorValue {
            ty: target,
            components,
        })
    }

    /// `let v = value;` or `let v: f32x4 = value;`: one variable per component.
    pub(super) fn let_vector(
        &mut self,
        mutable: bool,
        name: &ast::Identifier,
        declared: Option<VectorType>,
        value: Option<&ast::Expression>,
        span: Span,
        out: &mut Block,
    ) {
        let value = match (value, declared) {
            (Some(value), _) => self.vector_value(value, declared, Some(out)),
            (None, Some(ty)) if mutable => Some(VectorValue {
                ty,
                components: vec![zero_literal(ty.element, name.span); usize::from(ty.width)],
            }),
            (None, _) => {
                self.no_initial_value(name, " = f32x4(a, b, c, d)");
                None
            }
        };
        let Some(value) = value else {
            self.bind(&name.name, Binding::Poisoned);
            return;
        };
        let variable_name = |index| format!("{}.{}", name.name, component_name(index as u8));
        let Some(variables) =
            self.element_variables(value.components, variable_name, (name.span, span), out)
        else {
            return;
        };
        self.bind(
            &name.name,
            Binding::Vector {
                components: variables.into_iter().map(TupleElement::Variable).collect(),
                ty: value.ty,
                mutable,
                span: name.span,
            },
        );
    }

    /// `v = value;` and `v op= value;` for a vector binding `v`. The components are computed
    /// into temporaries first, so `v = f32x4(v.y, v.x, v.z, v.w);` swaps.
    pub(super) fn assign_vector(
        &mut self,
        name: &ast::Identifier,
        operator: (AssignOperator, Span),
        value: &ast::Expression,
        span: Span,
        out: &mut Block,
    ) {
        let Resolved::Binding(Binding::Vector {
            components,
            ty,
            mutable,
            span: declared_at,
        }) = self.lookup(&name.name)
        else {
            return;
        };
        if !mutable {
            let _ = self.expression_or_vector(value);
            let hint = if components
                .iter()
                .any(|c| matches!(c, TupleElement::Parameter(_)))
            {
                format!(
                    "copy the parameter into a mutable binding: `let mut {0} = {0};`",
                    name.name
                )
            } else {
                format!("declare it `let mut {}`", name.name)
            };
            self.assigned_immutable(&name.name, name.span, declared_at, hint);
            return;
        }
        let current = VectorValue {
            ty,
            components: components
                .iter()
                .map(|&c| tuple_element_expression(c, ty.element, name.span))
                .collect(),
        };
        let new = match operator.0 {
            AssignOperator::Assign => self.vector_value(value, Some(ty), Some(out)),
            AssignOperator::Compound(binary) => {
                let right = if self.vector_shape(value).is_some() {
                    self.vector_value(value, Some(ty), None)
                        .map(Operand::Vector)
                } else {
                    self.compound_scalar(value, ty.element, span, out)
                        .map(Operand::Scalar)
                };
                match right {
                    Some(right) => self.vector_binary_values(
                        binary,
                        Operand::Vector(current),
                        right,
                        ty,
                        span,
                        operator.1,
                    ),
                    None => None,
                }
            }
        };
        let Some(new) = new else { return };
        let temporary = |index| format!("{}.new.{}", name.name, component_name(index as u8));
        self.assign_elements(components, new.components, temporary, span, out);
    }

    /// `v.x` of a vector that is not a variable or parameter, such as `vload4(a, i).x`.
    pub(super) fn component_of_value(
        &mut self,
        base: &ast::Expression,
        field: &ast::Identifier,
    ) -> Option<Expression> {
        let value = self.vector_value(base, None, None)?;
        let Some(index) = component_index(&field.name, value.ty.width) else {
            self.no_component(&value.ty, field);
            return None;
        };
        value.components.into_iter().nth(index)
    }

    /// The component `field` of the vector binding `ty`, by index.
    pub(super) fn vector_component(
        &mut self,
        ty: VectorType,
        field: &ast::Identifier,
    ) -> Option<usize> {
        let index = component_index(&field.name, ty.width);
        if index.is_none() {
            self.no_component(&ty, field);
        }
        index
    }

    fn no_component(&mut self, ty: &VectorType, field: &ast::Identifier) {
        let names = COMPONENT_NAMES[..usize::from(ty.width)].join("`, `");
        self.vector_error(
            format!("`{ty}` has no component `{}`", field.name),
            field.span,
            "no such component",
            &format!("the components are `{names}`"),
        );
    }
}

impl Operand {
    fn vector_type(&self, shape: VectorType) -> VectorType {
        match self {
            Operand::Vector(value) => value.ty,
            Operand::Scalar(_) => shape,
        }
    }

    fn component(&self, index: usize) -> Expression {
        match self {
            Operand::Vector(value) => value.components[index].clone(),
            Operand::Scalar(value) => value.clone(),
        }
    }
}
