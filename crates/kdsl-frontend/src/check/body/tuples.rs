//! Tuples, flattened here so that the IR and every back end see only scalars: a tuple
//! variable is one variable per element, a tuple parameter one parameter per element, and a
//! tuple result one hidden `private mut [T; 1]` array parameter per element, which the
//! callee's `return` writes and the caller reads after the call (inlining keeps it all in
//! registers). A call returning a tuple is a statement of its own: it may be bound
//! (`let (i, d) = nearest(x);`), assigned, returned or passed on, never nested in an
//! expression, so evaluation order stays as written.

use super::*;

/// A tuple value, element by element.
pub(super) type TupleValue = Vec<Expression>;

impl Checker<'_> {
    /// The element types of the tuple `expression` denotes, without checking it: a tuple
    /// literal's length (types unknown), a tuple binding's types, a call's result types.
    pub(super) fn tuple_shape(&self, expression: &ast::Expression) -> Option<usize> {
        match &strip_parentheses(expression).kind {
            E::Tuple(elements) => Some(elements.len()),
            E::Name(name) => match self.lookup(&name.name) {
                Resolved::Binding(Binding::Tuple { types, .. }) => Some(types.len()),
                _ => None,
            },
            E::Call { callee, .. } => self
                .signatures
                .get(&callee.name)
                .filter(|s| s.vector_result.is_none())
                .and_then(|s| s.tuple_result.as_ref())
                .map(Vec::len),
            _ => None,
        }
    }

    fn tuple_error(&mut self, message: String, span: Span, label: &str, hint: &str) {
        self.report(Diagnostic::error(ErrorCode::E0314, message, span, label).with_hint(hint));
    }

    /// Checks a tuple-valued expression. `expected` gives the element types where known;
    /// `out` receives the call of a tuple-returning function, which is refused where `out`
    /// is `None` (inside another call's arguments).
    pub(super) fn tuple_value(
        &mut self,
        expression: &ast::Expression,
        expected: Option<&[ScalarType]>,
        out: Option<&mut Block>,
    ) -> Option<TupleValue> {
        let expression = strip_parentheses(expression);
        let span = expression.span;
        let value = match &expression.kind {
            E::Tuple(elements) => {
                let mut values = Vec::with_capacity(elements.len());
                for (index, element) in elements.iter().enumerate() {
                    let hint = expected.and_then(|types| types.get(index)).copied();
                    values.push(self.expression(element, hint));
                }
                values.into_iter().collect::<Option<Vec<_>>>()?
            }
            E::Name(name) => match self.lookup(&name.name) {
                Resolved::Binding(Binding::Tuple {
                    elements, types, ..
                }) => elements
                    .iter()
                    .zip(&types)
                    .map(|(&element, &ty)| tuple_element_expression(element, ty, span))
                    .collect(),
                Resolved::Binding(Binding::Poisoned) => return None,
                _ => {
                    return self.not_a_tuple(expression);
                }
            },
            E::Call { callee, arguments } if self.tuple_shape(expression).is_some() => {
                let Some(out) = out else {
                    for argument in arguments {
                        let _ = self.tuple_or_scalar(argument);
                    }
                    self.tuple_error(
                        format!(
                            "the tuple `{}` returns must be bound before it is passed on",
                            callee.name
                        ),
                        span,
                        "a call returning a tuple, inside a call",
                        &format!("bind it first: `let t = {}(...);`", callee.name),
                    );
                    return None;
                };
                self.tuple_call(callee, arguments, span, None, out)?
            }
            E::Error => return None,
            _ => {
                return self.not_a_tuple(expression);
            }
        };
        if let Some(types) = expected {
            if types.len() != value.len() {
                self.tuple_error(
                    format!(
                        "expected a tuple of {} elements, found {}",
                        types.len(),
                        value.len()
                    ),
                    span,
                    "wrong number of elements",
                    "give one value per element",
                );
                return None;
            }
            for (element, &ty) in value.iter().zip(types) {
                if element.ty != ty {
                    self.mismatch(ty, element.ty, element.span, "this tuple element");
                    return None;
                }
            }
        }
        Some(value)
    }

    /// Reports a scalar where a tuple is expected.
    fn not_a_tuple(&mut self, expression: &ast::Expression) -> Option<TupleValue> {
        let found = self.expression(expression, None)?;
        self.tuple_error(
            format!("expected a tuple, found `{}`", found.ty),
            expression.span,
            "not a tuple",
            "write a tuple such as `(a, b)`",
        );
        None
    }

    /// Checks an argument for its errors only, whatever its shape.
    fn tuple_or_scalar(&mut self, expression: &ast::Expression) -> Option<()> {
        if self.tuple_shape(expression).is_some() {
            self.tuple_value(expression, None, None).map(|_| ())
        } else {
            self.expression(expression, None).map(|_| ())
        }
    }

    /// Calls a function returning a tuple as a statement in `out`. The results go to the
    /// hidden arrays `results` when given (a `return` passing its callee's tuple on) and then
    /// the value is empty; otherwise to fresh hidden arrays, read back as the value.
    pub(super) fn tuple_call(
        &mut self,
        callee: &ast::Identifier,
        arguments: &[ast::Expression],
        span: Span,
        results: Option<Vec<ParameterId>>,
        out: &mut Block,
    ) -> Option<TupleValue> {
        let signature = self.signatures.get(&callee.name).cloned()?;
        let types = signature.tuple_result.clone()?;
        let mut lowered = self.device_call_arguments(callee, &signature, arguments, span)?;
        let mut value = Vec::new();
        match results {
            Some(results) => {
                lowered.extend(
                    results
                        .into_iter()
                        .map(|id| Argument::Array(PlaceBase::Parameter(id))),
                );
            }
            None => {
                for (index, &ty) in types.iter().enumerate() {
                    let array = ArrayType {
                        element: ty,
                        dimensions: vec![1],
                    };
                    let id = self.new_variable(
                        &format!("{}.result.{index}", callee.name),
                        VariableType::Array { ty: array },
                        AddressSpace::Private,
                        span,
                    )?;
                    lowered.push(Argument::Array(PlaceBase::Variable(id)));
                    value.push(Expression {
                        id: kdsl_ir::ExprId::UNNUMBERED,
                        kind: ExpressionKind::Load(Box::new(result_place(
                            PlaceBase::Variable(id),
                            ty,
                            span,
                        ))),
                        ty,
                        span,
                    });
                }
            }
        }
        out.push(statement(
            StatementKind::Evaluate {
                value: Expression {
                    id: kdsl_ir::ExprId::UNNUMBERED,
                    kind: ExpressionKind::Call {
                        function: signature.id,
                        arguments: lowered,
                    },
                    ty: ScalarType::Bool,
                    span,
                },
            },
            span,
        ));
        Some(value)
    }

    /// `let t = value;` or `let t: (T, U) = value;` for a tuple: one variable per element.
    pub(super) fn let_tuple(
        &mut self,
        mutable: bool,
        name: &ast::Identifier,
        declared: Option<&[ScalarType]>,
        value: Option<&ast::Expression>,
        span: Span,
        out: &mut Block,
    ) {
        let values = match (value, declared) {
            (Some(value), _) => self.tuple_value(value, declared, Some(out)),
            (None, Some(types)) if mutable => Some(
                types
                    .iter()
                    .map(|&ty| zero_literal(ty, name.span))
                    .collect(),
            ),
            (None, _) => {
                self.no_initial_value(name, " = (a, b)");
                None
            }
        };
        let Some(values) = values else {
            self.bind(&name.name, Binding::Poisoned);
            return;
        };
        let types: Vec<ScalarType> = values.iter().map(|v| v.ty).collect();
        let element_name = |index| format!("{}.{index}", name.name);
        let Some(variables) = self.element_variables(values, element_name, (name.span, span), out)
        else {
            return;
        };
        self.bind(
            &name.name,
            Binding::Tuple {
                elements: variables.into_iter().map(TupleElement::Variable).collect(),
                types,
                mutable,
                span: name.span,
            },
        );
    }

    /// `let (a, mut b) [: (T, U)] = value;`
    pub(super) fn let_destructure(
        &mut self,
        names: &[(bool, ast::Identifier)],
        ty: Option<&ast::TypeExpression>,
        value: &ast::Expression,
        span: Span,
        out: &mut Block,
    ) {
        let declared = match ty.map(|t| self.resolve_type(t)) {
            Some(Some(ResolvedType::Tuple(types))) => Some(types),
            Some(Some(other)) => {
                self.tuple_error(
                    format!(
                        "a destructuring `let` needs a tuple type, not `{}`",
                        describe_type(&other)
                    ),
                    ty.map_or(span, |t| t.span()),
                    "not a tuple type",
                    "write a tuple type such as `(u32, f32)`",
                );
                None
            }
            _ => None,
        };
        let values = self
            .tuple_value(value, declared.as_deref(), Some(out))
            .filter(|values| values.len() == names.len());
        let Some(values) = values else {
            if let Some(found) = self.tuple_shape(value).filter(|&n| n != names.len()) {
                self.tuple_error(
                    format!(
                        "this pattern has {} names but the tuple has {found} elements",
                        names.len()
                    ),
                    value.span,
                    "wrong number of elements",
                    "give one name per element",
                );
            }
            for (_, name) in names {
                self.bind(&name.name, Binding::Poisoned);
            }
            return;
        };
        for (previous, (_, name)) in names.iter().enumerate() {
            if let Some((_, first)) = names[..previous].iter().find(|(_, n)| n.name == name.name) {
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0205,
                        format!("`{}` is bound twice in this pattern", name.name),
                        name.span,
                        "bound again here",
                    )
                    .with_label(first.span, "first bound here"),
                );
            }
        }
        for ((mutable, name), value) in names.iter().zip(values) {
            let ty = VariableType::Scalar { ty: value.ty };
            let Some(id) = self.assigned_variable(&name.name, value, (name.span, span), out) else {
                return;
            };
            self.bind(
                &name.name,
                Binding::Variable {
                    id,
                    ty,
                    mutable: *mutable,
                    space: AddressSpace::Private,
                    origin: Origin::Let,
                    span: name.span,
                },
            );
        }
    }

    /// `t = value;` for a tuple binding `t`. The elements are evaluated into temporaries
    /// first, so `t = (t.1, t.0);` swaps.
    pub(super) fn assign_tuple(
        &mut self,
        name: &ast::Identifier,
        operator: AssignOperator,
        value: &ast::Expression,
        span: Span,
        out: &mut Block,
    ) {
        let Resolved::Binding(Binding::Tuple {
            elements,
            types,
            mutable,
            span: declared_at,
        }) = self.lookup(&name.name)
        else {
            return;
        };
        if !mutable {
            let hint = format!("declare it `let mut {}`", name.name);
            self.assigned_immutable(&name.name, name.span, declared_at, hint);
            return;
        }
        if operator != AssignOperator::Assign {
            self.tuple_error(
                format!("tuple `{}` has no compound assignment", name.name),
                span,
                "operators work on scalars",
                &format!("update one element: `{}.0 += value;`", name.name),
            );
            return;
        }
        let Some(values) = self.tuple_value(value, Some(&types), Some(out)) else {
            return;
        };
        let temporary = |index| format!("{}.new{index}", name.name);
        self.assign_elements(elements, values, temporary, span, out);
    }

    /// `return value;` in a function returning a tuple: writes each element to its hidden
    /// array, then returns. A returned call writes to those arrays itself.
    pub(super) fn return_tuple(
        &mut self,
        results: Vec<(ParameterId, ScalarType)>,
        value: &ast::Expression,
        span: Span,
        out: &mut Block,
    ) {
        let types: Vec<ScalarType> = results.iter().map(|&(_, ty)| ty).collect();
        let vector_result = self.function.as_ref().and_then(|f| f.vector_result);
        let inner = strip_parentheses(value);
        if let E::Call { callee, arguments } = &inner.kind {
            let returns_same = self.signatures.get(&callee.name).is_some_and(|s| {
                s.tuple_result.as_ref() == Some(&types) && s.vector_result == vector_result
            });
            if returns_same {
                let ids = results.iter().map(|&(id, _)| id).collect();
                if self
                    .tuple_call(callee, arguments, inner.span, Some(ids), out)
                    .is_some()
                {
                    out.push(statement(StatementKind::Return { value: None }, span));
                }
                return;
            }
        }
        let values = match vector_result {
            Some(vector) => self
                .vector_value(value, Some(vector), Some(out))
                .map(|v| v.components),
            None => self.tuple_value(value, Some(&types), Some(out)),
        };
        let Some(values) = values else {
            return;
        };
        for ((id, ty), value) in results.into_iter().zip(values) {
            out.push(statement(
                StatementKind::Store {
                    place: result_place(PlaceBase::Parameter(id), ty, span),
                    value,
                },
                span,
            ));
        }
        out.push(statement(StatementKind::Return { value: None }, span));
    }

    /// Resolves `base.N` to the element's binding: its storage, type and the tuple's
    /// mutability and declaration.
    pub(super) fn field(
        &mut self,
        base: &ast::Expression,
        field: &ast::Identifier,
    ) -> Option<(TupleElement, ScalarType, bool, Span)> {
        let base = strip_parentheses(base);
        let E::Name(name) = &base.kind else {
            let hint = match &base.kind {
                E::Call { callee, .. } => format!(
                    "bind the result first: `let t = {}(...);`, then use `t{}`",
                    callee.name,
                    format_args!(".{}", field.name)
                ),
                _ => "fields are read from tuple variables and parameters".to_string(),
            };
            // A base that fails to check has reported already.
            let checked = match &base.kind {
                E::Call { arguments, .. } => arguments
                    .iter()
                    .all(|argument| self.expression_or_vector(argument).is_some()),
                _ => self.expression(base, None).is_some(),
            };
            if !checked {
                return None;
            }
            self.tuple_error(
                format!("cannot take field `{}` of this expression", field.name),
                base.span,
                "not a tuple variable",
                &hint,
            );
            return None;
        };
        match self.lookup(&name.name) {
            Resolved::Binding(Binding::Tuple {
                elements,
                types,
                mutable,
                span,
            }) => {
                let index = field
                    .name
                    .parse::<usize>()
                    .ok()
                    .filter(|&i| i < types.len());
                let Some(index) = index else {
                    self.tuple_error(
                        format!("tuple `{}` has no field `{}`", name.name, field.name),
                        field.span,
                        &format!("fields are 0 to {}", types.len() - 1),
                        &format!(
                            "`{}` is a `{}`",
                            name.name,
                            describe_type(&ResolvedType::Tuple(types.clone()))
                        ),
                    );
                    return None;
                };
                Some((elements[index], types[index], mutable, span))
            }
            Resolved::Binding(Binding::Vector {
                components,
                ty,
                mutable,
                span,
            }) => {
                let index = self.vector_component(ty, field)?;
                Some((components[index], ty.element, mutable, span))
            }
            Resolved::Binding(Binding::Record { .. }) => self.record_binding_field(name, field),
            Resolved::Binding(Binding::Poisoned) => None,
            Resolved::Unknown => {
                self.unknown_name(name);
                None
            }
            _ => {
                self.tuple_error(
                    format!("`{}` is not a tuple", name.name),
                    base.span,
                    "has no fields",
                    "fields such as `.0` exist only on tuples",
                );
                None
            }
        }
    }

    /// The value of `base.N`.
    pub(super) fn field_expression(
        &mut self,
        base: &ast::Expression,
        field: &ast::Identifier,
        span: Span,
    ) -> Option<Expression> {
        let named = matches!(strip_parentheses(base).kind, E::Name(_));
        if matches!(strip_parentheses(base).kind, E::Index { .. })
            && self.record_shape(base).is_some()
        {
            let (place, _) = self.record_field_place(base, field)?;
            let ty = place.element;
            return Some(Expression {
                id: kdsl_ir::ExprId::UNNUMBERED,
                kind: ExpressionKind::Load(Box::new(place)),
                ty,
                span,
            });
        }
        if !named && self.vector_shape(base).is_some() {
            return self.component_of_value(base, field);
        }
        let (element, ty, _, _) = self.field(base, field)?;
        Some(tuple_element_expression(element, ty, span))
    }

    /// `t.N = value;` and `t.N op= value;`.
    pub(super) fn assign_field(
        &mut self,
        target: &ast::Expression,
        operator: (AssignOperator, Span),
        value: &ast::Expression,
        span: Span,
        out: &mut Block,
    ) {
        let E::Field { base, field } = &target.kind else {
            return;
        };
        if matches!(strip_parentheses(base).kind, E::Index { .. })
            && self.record_shape(base).is_some()
        {
            let Some((place, access)) = self.record_field_place(base, field) else {
                let _ = self.expression(value, None);
                return;
            };
            if !access.writable {
                self.report_read_only(&access, target.span, "store to");
                return;
            }
            let current = Expression {
                id: kdsl_ir::ExprId::UNNUMBERED,
                kind: ExpressionKind::Load(Box::new(place.clone())),
                ty: place.element,
                span: target.span,
            };
            if let Some(value) = self.assigned_value(operator.0, operator.1, current, value, span) {
                out.push(statement(StatementKind::Store { place, value }, span));
            }
            return;
        }
        let Some((element, ty, mutable, declared_at)) = self.field(base, field) else {
            let _ = self.expression(value, None);
            return;
        };
        let owner = match &strip_parentheses(base).kind {
            E::Name(name) => name.name.clone(),
            _ => String::new(),
        };
        let TupleElement::Variable(variable) = element else {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0401,
                    format!("cannot assign to a field of parameter `{owner}`"),
                    target.span,
                    "parameters are immutable",
                )
                .with_label(declared_at, "parameter declared here")
                .with_hint("copy it into a mutable binding: `let mut t = t;`"),
            );
            return;
        };
        if !mutable {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0401,
                    format!("cannot assign to a field of immutable `{owner}`"),
                    target.span,
                    "cannot assign",
                )
                .with_label(declared_at, "declared immutable here")
                .with_hint("declare it `let mut`"),
            );
            return;
        }
        let current = variable_expression(variable, ty, target.span);
        if let Some(value) = self.assigned_value(operator.0, operator.1, current, value, span) {
            out.push(statement(StatementKind::Assign { variable, value }, span));
        }
    }
}

pub(super) fn tuple_element_expression(
    element: TupleElement,
    ty: ScalarType,
    span: Span,
) -> Expression {
    let kind = match element {
        TupleElement::Variable(id) => ExpressionKind::Variable(id),
        TupleElement::Parameter(id) => ExpressionKind::Parameter(id),
    };
    Expression {
        id: kdsl_ir::ExprId::UNNUMBERED,
        kind,
        ty,
        span,
    }
}

/// Element 0 of a hidden `private [T; 1]` result array.
fn result_place(base: PlaceBase, ty: ScalarType, span: Span) -> Place {
    Place {
        id: kdsl_ir::PlaceId::UNNUMBERED,
        base,
        indices: vec![literal_expression(
            Literal::Integer(0),
            ScalarType::U32,
            span,
        )],
        element: ty,
        space: AddressSpace::Private,
        field: None,
    }
}
