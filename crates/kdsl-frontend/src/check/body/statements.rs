//! Statements, with their desugaring: `for` and `while` become loops, compound assignments
//! become reads and writes, declarations zero their arrays.

use super::*;

impl Checker<'_> {
    pub(super) fn block(&mut self, block: &ast::Block) -> Block {
        if let Some(state) = self.state() {
            state.scopes.push(Vec::new());
        }
        let lowered = self.statements(&block.statements);
        if let Some(state) = self.state() {
            state.scopes.pop();
        }
        lowered
    }

    pub(super) fn statements(&mut self, statements: &[ast::Statement]) -> Block {
        let mut lowered = Vec::new();
        for statement in statements {
            self.statement(statement, &mut lowered);
        }
        lowered
    }

    pub(super) fn statement(&mut self, source: &ast::Statement, out: &mut Block) {
        let span = source.span;
        match &source.kind {
            S::Let {
                mutable,
                name,
                ty,
                value,
            } => self.let_statement(*mutable, name, ty.as_ref(), value.as_ref(), span, out),
            S::LetTuple { names, ty, value } => {
                self.let_destructure(names, ty.as_ref(), value, span, out)
            }
            S::Local { name, ty } => self.local_statement(name, ty, span),
            S::Assign {
                target,
                operator,
                operator_span,
                value,
            } => self.assign_statement(target, *operator, *operator_span, value, span, out),
            S::If {
                condition,
                accept,
                reject,
            } => {
                let condition = self.condition(condition);
                let accept = self.block(accept);
                let reject = reject.as_ref().map(|r| self.block(r)).unwrap_or_default();
                if let Some(condition) = condition {
                    out.push(statement_if(condition, accept, reject, span));
                }
            }
            S::While { condition, body } => {
                let condition = self.condition(condition);
                let body = self.loop_body(body, None);
                if let Some(condition) = condition {
                    let mut loop_body = vec![break_unless(condition, span)];
                    loop_body.extend(body);
                    out.push(statement(
                        StatementKind::Loop {
                            body: loop_body,
                            continuing: Vec::new(),
                            unroll: Unroll::Default,
                        },
                        span,
                    ));
                }
            }
            S::For {
                variable,
                start,
                end,
                descending,
                step,
                unroll,
                body,
            } => {
                let range = ForRange {
                    start,
                    end,
                    step: step.as_ref(),
                    descending: *descending,
                };
                self.for_statement(variable, range, unroll.as_ref(), body, span, out)
            }
            S::Break | S::Continue => {
                let inside_loop = self.function.as_ref().is_some_and(|f| f.loop_depth > 0);
                let is_break = matches!(source.kind, S::Break);
                let word = if is_break { "break" } else { "continue" };
                if !inside_loop {
                    self.report(
                        Diagnostic::error(
                            ErrorCode::E0504,
                            format!("`{word}` outside of a loop"),
                            span,
                            "not inside `while` or `for`",
                        )
                        .with_hint(if is_break {
                            "use `return;` to leave the function"
                        } else {
                            "remove it, or move it into a loop"
                        }),
                    );
                } else {
                    out.push(statement(
                        if is_break {
                            StatementKind::Break
                        } else {
                            StatementKind::Continue
                        },
                        span,
                    ));
                }
            }
            S::Return(value) => self.return_statement(value.as_ref(), span, out),
            S::Block(block) => {
                let lowered = self.block(block);
                out.extend(lowered);
            }
            S::Expression(expression) => self.expression_statement(expression, span, out),
            S::Error => {}
        }
    }

    pub(super) fn loop_body(
        &mut self,
        body: &ast::Block,
        variable: Option<(&str, Binding)>,
    ) -> Block {
        if let Some(state) = self.state() {
            state.loop_depth += 1;
            state.scopes.push(Vec::new());
        }
        if let Some((name, binding)) = variable {
            self.bind(name, binding);
        }
        let lowered = self.statements(&body.statements);
        if let Some(state) = self.state() {
            state.loop_depth -= 1;
            state.scopes.pop();
        }
        lowered
    }

    pub(super) fn let_statement(
        &mut self,
        mutable: bool,
        name: &ast::Identifier,
        ty: Option<&ast::TypeExpression>,
        value: Option<&ast::Expression>,
        span: Span,
        out: &mut Block,
    ) {
        let declared = ty.map(|t| self.resolve_type(t));
        let binding = |id, ty| Binding::Variable {
            id,
            ty,
            mutable,
            space: AddressSpace::Private,
            origin: Origin::Let,
            span: name.span,
        };
        let untyped_vector =
            declared.is_none() && value.is_some_and(|v| self.vector_shape(v).is_some());
        let untyped_tuple =
            declared.is_none() && value.is_some_and(|v| self.tuple_shape(v).is_some());
        let untyped_record =
            declared.is_none() && value.is_some_and(|v| self.record_shape(v).is_some());
        match declared {
            None if untyped_record => {
                if let Some(value) = value {
                    self.let_record(mutable, name, value, span, out);
                }
            }
            Some(Some(ResolvedType::Vector(vector))) => {
                self.let_vector(mutable, name, Some(vector), value, span, out)
            }
            None if untyped_vector => self.let_vector(mutable, name, None, value, span, out),
            Some(Some(ResolvedType::Tuple(types))) => {
                self.let_tuple(mutable, name, Some(&types), value, span, out)
            }
            None if untyped_tuple => self.let_tuple(mutable, name, None, value, span, out),
            Some(Some(ResolvedType::Array(array))) => {
                if let Some(value) = value {
                    self.report(
                        Diagnostic::error(
                            ErrorCode::E0301,
                            format!("array `{}` cannot have an initializer", name.name),
                            value.span,
                            "arrays are zero-initialized",
                        )
                        .with_hint(format!(
                            "declare it `let mut {}: {array};` and assign elements",
                            name.name
                        )),
                    );
                }
                let ty = VariableType::Array { ty: array.clone() };
                if let Some(id) =
                    self.new_variable(&name.name, ty.clone(), AddressSpace::Private, name.span)
                {
                    self.zero_array(id, &array, &name.name, span, out);
                    self.bind(&name.name, binding(id, ty));
                }
            }
            Some(Some(ResolvedType::Scalar(scalar))) => {
                let initial = match value {
                    Some(value) => self.coerce(value, scalar, "the initializer"),
                    None if mutable => Some(zero_literal(scalar, name.span)),
                    None => {
                        self.no_initial_value(name, &format!(": {scalar} = value"));
                        None
                    }
                };
                let ty = VariableType::Scalar { ty: scalar };
                if let Some(id) =
                    self.new_variable(&name.name, ty.clone(), AddressSpace::Private, name.span)
                {
                    if let Some(initial) = initial {
                        out.push(statement(
                            StatementKind::Assign {
                                variable: id,
                                value: initial,
                            },
                            span,
                        ));
                    }
                    self.bind(&name.name, binding(id, ty));
                }
            }
            Some(None) => {
                if let Some(value) = value {
                    let _ = self.expression(value, None);
                }
                self.bind(&name.name, Binding::Poisoned);
            }
            None => {
                let Some(value) = value else {
                    self.report(
                        Diagnostic::error(
                            ErrorCode::E0301,
                            format!("`{}` needs a type or a value", name.name),
                            name.span,
                            "type unknown",
                        )
                        .with_hint(format!(
                            "write `let mut {}: f32 = 0.0;` or give a type",
                            name.name
                        )),
                    );
                    self.bind(&name.name, Binding::Poisoned);
                    return;
                };
                match self.expression(value, None) {
                    Some(initial) => {
                        let ty = VariableType::Scalar { ty: initial.ty };
                        if let Some(id) = self.new_variable(
                            &name.name,
                            ty.clone(),
                            AddressSpace::Private,
                            name.span,
                        ) {
                            out.push(statement(
                                StatementKind::Assign {
                                    variable: id,
                                    value: initial,
                                },
                                span,
                            ));
                            self.bind(&name.name, binding(id, ty));
                        }
                    }
                    None => self.bind(&name.name, Binding::Poisoned),
                }
            }
        }
    }

    /// Emits loops that set every element of a private array to zero.
    pub(super) fn zero_array(
        &mut self,
        id: VariableId,
        array: &ArrayType,
        name: &str,
        span: Span,
        out: &mut Block,
    ) {
        let mut counters = Vec::new();
        for dimension in 0..array.dimensions.len() {
            let counter_name = format!("{name}.zero{dimension}");
            let ty = VariableType::Scalar {
                ty: ScalarType::U32,
            };
            match self.new_variable(&counter_name, ty, AddressSpace::Private, span) {
                Some(counter) => counters.push(counter),
                None => return,
            }
        }
        let place = Place {
            id: kdsl_ir::PlaceId::UNNUMBERED,
            base: PlaceBase::Variable(id),
            indices: counters
                .iter()
                .map(|&c| variable_expression(c, ScalarType::U32, span))
                .collect(),
            element: array.element,
            space: AddressSpace::Private,
            field: None,
        };
        let mut inner = vec![statement(
            StatementKind::Store {
                place,
                value: zero_literal(array.element, span),
            },
            span,
        )];
        for (dimension, &counter) in counters.iter().enumerate().rev() {
            let extent = literal_expression(
                Literal::Integer(u64::from(array.dimensions[dimension])),
                ScalarType::U32,
                span,
            );
            let counter_value = variable_expression(counter, ScalarType::U32, span);
            let condition = binary_expression(
                BinaryOp::Less,
                counter_value.clone(),
                extent,
                ScalarType::Bool,
                span,
            );
            let mut body = vec![break_unless(condition, span)];
            body.extend(inner);
            let one = literal_expression(Literal::Integer(1), ScalarType::U32, span);
            let next = binary_expression(BinaryOp::Add, counter_value, one, ScalarType::U32, span);
            inner = vec![
                statement(
                    StatementKind::Assign {
                        variable: counter,
                        value: zero_literal(ScalarType::U32, span),
                    },
                    span,
                ),
                statement(
                    StatementKind::Loop {
                        body,
                        continuing: vec![statement(
                            StatementKind::Assign {
                                variable: counter,
                                value: next,
                            },
                            span,
                        )],
                        unroll: Unroll::Default,
                    },
                    span,
                ),
            ];
        }
        out.extend(inner);
    }

    pub(super) fn local_statement(
        &mut self,
        name: &ast::Identifier,
        ty: &ast::TypeExpression,
        span: Span,
    ) {
        let (kind, depth) = match &self.function {
            Some(state) => (state.kind, state.scopes.len()),
            None => return,
        };
        let resolved = self.resolve_type(ty);
        if kind != FunctionKind::Kernel {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0501,
                    "`local` arrays are allowed only in kernels",
                    span,
                    "inside a device function",
                )
                .with_hint(
                    "declare the array in the kernel and pass it in as a `local [T; N]` parameter",
                ),
            );
            self.bind(&name.name, Binding::Poisoned);
            return;
        }
        if depth != 1 {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0501,
                    "`local` arrays must be declared at the top level of the kernel body",
                    span,
                    "nested inside a block",
                )
                .with_hint("move the declaration to the start of the kernel"),
            );
            self.bind(&name.name, Binding::Poisoned);
            return;
        }
        match resolved {
            Some(ResolvedType::Array(array)) => {
                let ty = VariableType::Array { ty: array };
                if let Some(id) =
                    self.new_variable(&name.name, ty.clone(), AddressSpace::Local, name.span)
                {
                    self.bind(
                        &name.name,
                        Binding::Variable {
                            id,
                            ty,
                            mutable: true,
                            space: AddressSpace::Local,
                            origin: Origin::Local,
                            span: name.span,
                        },
                    );
                }
            }
            Some(
                other
                @ (ResolvedType::Scalar(_) | ResolvedType::Tuple(_) | ResolvedType::Vector(_)),
            ) => {
                let scalar = match other {
                    ResolvedType::Scalar(scalar) => scalar,
                    ResolvedType::Vector(vector) => vector.element,
                    _ => ScalarType::F32,
                };
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0501,
                        "a `local` declaration needs an array type",
                        ty.span(),
                        format!("`{}` is not an array", describe_type(&other)),
                    )
                    .with_hint(format!(
                        "declare an array, e.g. `local {}: [{scalar}; 256];`",
                        name.name
                    )),
                );
                self.bind(&name.name, Binding::Poisoned);
            }
            None => self.bind(&name.name, Binding::Poisoned),
        }
    }

    pub(super) fn assign_statement(
        &mut self,
        target: &ast::Expression,
        operator: AssignOperator,
        operator_span: Span,
        value: &ast::Expression,
        span: Span,
        out: &mut Block,
    ) {
        let target = strip_parentheses(target);
        let whole_record_target = match &target.kind {
            E::Index { .. } | E::Name(_) => self.record_shape(target).is_some(),
            _ => false,
        };
        if whole_record_target || self.record_shape(value).is_some() {
            self.assign_record(target, (operator, operator_span), value, span, out);
            return;
        }
        match &target.kind {
            E::Field { .. } => {
                self.assign_field(target, (operator, operator_span), value, span, out)
            }
            E::Name(name) => match self.lookup(&name.name) {
                Resolved::Binding(Binding::Tuple { .. }) => {
                    self.assign_tuple(name, operator, value, span, out)
                }
                Resolved::Binding(Binding::Vector { .. }) => {
                    self.assign_vector(name, (operator, operator_span), value, span, out)
                }
                Resolved::Binding(Binding::Variable {
                    id,
                    ty: VariableType::Scalar { ty },
                    mutable,
                    origin,
                    span: declared_at,
                    ..
                }) => {
                    if !mutable {
                        let hint = if origin == Origin::ForLoop {
                            format!("a `for` loop variable cannot be assigned; copy it: `let mut copy = {};`", name.name)
                        } else {
                            format!("declare it `let mut {}`", name.name)
                        };
                        self.assigned_immutable(&name.name, target.span, declared_at, hint);
                        let _ = self.expression(value, Some(ty));
                        return;
                    }
                    let current = variable_expression(id, ty, target.span);
                    if let Some(value) =
                        self.assigned_value(operator, operator_span, current, value, span)
                    {
                        out.push(statement(
                            StatementKind::Assign {
                                variable: id,
                                value,
                            },
                            span,
                        ));
                    }
                }
                Resolved::Binding(Binding::Variable {
                    ty: VariableType::Array { ty },
                    ..
                }) => {
                    self.report(
                        Diagnostic::error(
                            ErrorCode::E0404,
                            format!("cannot assign to the whole array `{}`", name.name),
                            target.span,
                            format!("`{}` is a `{ty}`", name.name),
                        )
                        .with_hint(format!("assign its elements: `{}[i] = value;`", name.name)),
                    );
                }
                Resolved::Binding(Binding::Poisoned | Binding::Record { .. }) => {
                    let _ = self.expression(value, None);
                }
                Resolved::Parameter(_, ParameterType::Scalar { .. }, declared_at) => {
                    self.report(
                        Diagnostic::error(
                            ErrorCode::E0401,
                            format!("cannot assign to parameter `{}`", name.name),
                            target.span,
                            "parameters are immutable",
                        )
                        .with_label(declared_at, "parameter declared here")
                        .with_hint(format!(
                            "copy it into a mutable binding: `let mut {0} = {0};`",
                            name.name
                        )),
                    );
                }
                Resolved::Parameter(_, ty @ ParameterType::Array { .. }, _) => {
                    self.report(
                        Diagnostic::error(
                            ErrorCode::E0404,
                            format!("cannot assign to the whole array `{}`", name.name),
                            target.span,
                            format!("`{}` is a `{ty}`", name.name),
                        )
                        .with_hint(format!("assign its elements: `{}[i] = value;`", name.name)),
                    );
                }
                Resolved::Parameter(_, ParameterType::Buffer { .. }, _) => {
                    self.report(
                        Diagnostic::error(
                            ErrorCode::E0404,
                            format!("cannot assign to the whole buffer `{}`", name.name),
                            target.span,
                            "a buffer is not a value",
                        )
                        .with_hint(format!("assign its elements: `{}[i] = value;`", name.name)),
                    );
                }
                Resolved::Constant(_) | Resolved::WorkGroupSize(_) => {
                    self.report(Diagnostic::error(
                        ErrorCode::E0401,
                        format!("cannot assign to constant `{}`", name.name),
                        target.span,
                        "constants never change",
                    ));
                }
                Resolved::Function => {
                    self.report(Diagnostic::error(
                        ErrorCode::E0404,
                        format!("cannot assign to function `{}`", name.name),
                        target.span,
                        "not a variable",
                    ));
                }
                Resolved::Unknown => {
                    self.unknown_name(name);
                    let _ = self.expression(value, None);
                }
            },
            E::Index { .. } => {
                let Some((place, access)) = self.place(target) else {
                    let _ = self.expression(value, None);
                    return;
                };
                if !access.writable {
                    self.report_read_only(&access, target.span, "write to");
                    let _ = self.expression(value, Some(place.element));
                    return;
                }
                let current = Expression {
                    id: kdsl_ir::ExprId::UNNUMBERED,
                    kind: ExpressionKind::Load(Box::new(place.clone())),
                    ty: place.element,
                    span: target.span,
                };
                if let Some(value) =
                    self.assigned_value(operator, operator_span, current, value, span)
                {
                    out.push(statement(StatementKind::Store { place, value }, span));
                }
            }
            E::Error => {
                let _ = self.expression(value, None);
            }
            _ => {
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0404,
                        "invalid assignment target",
                        target.span,
                        "cannot assign to this expression",
                    )
                    .with_hint("assign to a mutable variable or to an element such as `y[i]`"),
                );
                let _ = self.expression(value, None);
            }
        }
    }

    /// The value stored by `target = value` or `target op= value`.
    pub(super) fn assigned_value(
        &mut self,
        operator: AssignOperator,
        operator_span: Span,
        current: Expression,
        value: &ast::Expression,
        span: Span,
    ) -> Option<Expression> {
        let ty = current.ty;
        match operator {
            AssignOperator::Assign => self.coerce(value, ty, "the assigned value"),
            AssignOperator::Compound(operator) => {
                let right = self.expression(value, Some(ty))?;
                self.binary_typed(operator, current, right, span, operator_span)
            }
        }
    }

    pub(super) fn for_statement(
        &mut self,
        variable: &ast::Identifier,
        range: ForRange<'_>,
        unroll: Option<&ast::UnrollRequest>,
        body: &ast::Block,
        span: Span,
        out: &mut Block,
    ) {
        let ForRange {
            start,
            end,
            step,
            descending,
        } = range;
        let bounds = self.unify(&[start, end], None, "the range bounds");
        let ty = bounds.as_ref().map(|(_, ty)| *ty);
        if let Some(ty) = ty {
            if !ty.is_integer() {
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0302,
                        format!("`for` ranges need integer bounds, found `{ty}`"),
                        start.span.to(end.span),
                        "not an integer range",
                    )
                    .with_hint("use a `while` loop for floating-point iteration"),
                );
            }
        }
        let ty = ty.filter(|t| t.is_integer());
        let step = match (step, ty) {
            (Some(step), Some(ty)) => {
                let value = self.coerce(step, ty, "the step");
                if let Some(value) = &value {
                    if let Ok(constant) = constant::evaluate(value) {
                        if constant.as_i128().is_some_and(|v| v <= 0) {
                            self.report(
                                Diagnostic::error(
                                    ErrorCode::E0512,
                                    "the step of a `for` loop must be positive",
                                    step.span,
                                    "not positive",
                                )
                                .with_hint("count down with `for i in (a..b).rev()`"),
                            );
                        }
                    }
                }
                value
            }
            (Some(step), None) => {
                let _ = self.expression(step, None);
                None
            }
            (None, Some(ty)) => Some(literal_expression(Literal::Integer(1), ty, variable.span)),
            (None, None) => None,
        };
        let id = ty.and_then(|ty| {
            self.new_variable(
                &variable.name,
                VariableType::Scalar { ty },
                AddressSpace::Private,
                variable.span,
            )
        });
        let binding = match (id, ty) {
            (Some(id), Some(ty)) => Binding::Variable {
                id,
                ty: VariableType::Scalar { ty },
                mutable: false,
                space: AddressSpace::Private,
                origin: Origin::ForLoop,
                span: variable.span,
            },
            _ => Binding::Poisoned,
        };
        let body = self.loop_body(body, Some((&variable.name, binding)));
        let (Some((bounds, ty)), Some(step), Some(id)) = (bounds, step, id) else {
            return;
        };
        let mut bounds = bounds.into_iter();
        let (Some(start), Some(end)) = (bounds.next(), bounds.next()) else {
            return;
        };
        let unroll = self.unroll_hint(unroll, (&start, &end, &step), &body);
        if descending {
            let cursor = self.new_variable(
                &format!("{}_cursor", variable.name),
                VariableType::Scalar { ty },
                AddressSpace::Private,
                variable.span,
            );
            if let Some(cursor) = cursor {
                let loop_statements = DescendingLoop {
                    variable: id,
                    cursor,
                    ty,
                    span,
                };
                out.extend(loop_statements.lower(start, end, step, body, unroll));
            }
            return;
        }
        let counter = variable_expression(id, ty, variable.span);
        let condition =
            binary_expression(BinaryOp::Less, counter.clone(), end, ScalarType::Bool, span);
        let next = binary_expression(BinaryOp::Add, counter, step, ty, span);
        out.push(statement(
            StatementKind::Assign {
                variable: id,
                value: start,
            },
            span,
        ));
        let mut loop_body = vec![break_unless(condition, span)];
        loop_body.extend(body);
        out.push(statement(
            StatementKind::Loop {
                body: loop_body,
                continuing: vec![statement(
                    StatementKind::Assign {
                        variable: id,
                        value: next,
                    },
                    span,
                )],
                unroll,
            },
            span,
        ));
    }

    pub(super) fn return_statement(
        &mut self,
        value: Option<&ast::Expression>,
        span: Span,
        out: &mut Block,
    ) {
        let Some(state) = &self.function else { return };
        let (kind, return_type, name) = (state.kind, state.return_type, state.name.clone());
        if let Some(results) = state.tuple_result.clone() {
            match value {
                Some(value) => self.return_tuple(results, value, span, out),
                None => self.report(
                    Diagnostic::error(
                        ErrorCode::E0507,
                        format!("`return;` in function `{name}`, which returns a tuple"),
                        span,
                        "missing value",
                    )
                    .with_hint("return a tuple: `return (a, b);`"),
                ),
            }
            return;
        }
        match (kind, return_type, value) {
            (FunctionKind::Kernel, _, Some(value)) => {
                let _ = self.expression(value, None);
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0507,
                        "kernels cannot return a value",
                        value.span,
                        "returned here",
                    )
                    .with_hint("write the result to a `global mut` buffer and use `return;`"),
                );
            }
            (FunctionKind::Device, Some(ty), Some(value)) => {
                if let Some(value) = self.coerce(value, ty, "the returned value") {
                    out.push(statement(
                        StatementKind::Return { value: Some(value) },
                        span,
                    ));
                }
            }
            (FunctionKind::Device, Some(ty), None) => {
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0507,
                        format!("`return;` in function `{name}`, which returns `{ty}`"),
                        span,
                        "missing value",
                    )
                    .with_hint("return a value: `return value;`"),
                );
            }
            (FunctionKind::Device, None, Some(value)) => {
                let _ = self.expression(value, None);
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0507,
                        format!("function `{name}` has no result type but returns a value"),
                        value.span,
                        "unexpected value",
                    )
                    .with_hint("declare the result type: `fn name(...) -> T`"),
                );
            }
            (_, _, None) => out.push(statement(StatementKind::Return { value: None }, span)),
        }
    }

    pub(super) fn expression_statement(
        &mut self,
        expression: &ast::Expression,
        span: Span,
        out: &mut Block,
    ) {
        let inner = strip_parentheses(expression);
        match &inner.kind {
            E::Call { callee, arguments } if callee.name == "barrier" => {
                if !arguments.is_empty() {
                    self.arity_error(callee, 0, arguments.len(), inner.span);
                    return;
                }
                out.push(statement(
                    StatementKind::Barrier {
                        fence: FenceFlags {
                            local: true,
                            global: true,
                        },
                    },
                    span,
                ));
            }
            E::Call { callee, arguments } if callee.name == "device_fence" => {
                if !arguments.is_empty() {
                    self.arity_error(callee, 0, arguments.len(), inner.span);
                    return;
                }
                out.push(statement(StatementKind::DeviceFence, span));
            }
            E::Call { callee, arguments }
                if kdsl_ir::matrix::MATRIX_FUNCTIONS.contains(&callee.name.as_str()) =>
            {
                self.matrix_statement(callee, arguments, span, out);
            }
            E::Call { callee, arguments } if callee.name == "print" => {
                self.print_statement(arguments, span, out);
            }
            E::Call { callee, arguments }
                if matches!(
                    Builtin::from_name(&callee.name),
                    Some(Builtin::AsyncCopy(_))
                ) =>
            {
                if let Some(Builtin::AsyncCopy(kind)) = Builtin::from_name(&callee.name) {
                    self.async_copy_statement(kind, callee, arguments, span, out);
                }
            }
            E::Call { callee, arguments }
                if matches!(Builtin::from_name(&callee.name), Some(Builtin::TileCopy(_))) =>
            {
                if let Some(Builtin::TileCopy(kind)) = Builtin::from_name(&callee.name) {
                    self.tile_copy_statement(kind, callee, arguments, span, out);
                }
            }
            E::Call { callee, arguments } if self.tuple_shape(inner).is_some() => {
                let _ = self.tuple_call(callee, arguments, inner.span, None, out);
            }
            E::Call { callee, arguments }
                if matches!(
                    Builtin::from_name(&callee.name),
                    Some(Builtin::VectorStore(_))
                ) =>
            {
                if let Some(Builtin::VectorStore(width)) = Builtin::from_name(&callee.name) {
                    self.vector_store(callee, width, arguments, span, out);
                }
            }
            E::Call { callee, arguments }
                if self
                    .signatures
                    .get(&callee.name)
                    .is_some_and(|s| s.vector_result.is_some()) =>
            {
                let _ = self.tuple_call(callee, arguments, inner.span, None, out);
            }
            E::Call { callee, arguments } => {
                if let Some(value) = self.call(callee, arguments, inner.span, None, true) {
                    out.push(statement(StatementKind::Evaluate { value }, span));
                }
            }
            E::Error => {}
            _ => {
                // In a function with syntax errors this is usually a fragment left by recovery.
                if self.expression(expression, None).is_some() && !self.suppress_unknown_names {
                    self.report(
                        Diagnostic::error(
                            ErrorCode::E0511,
                            "this expression statement does nothing",
                            expression.span,
                            "value is computed and dropped",
                        )
                        .with_hint("assign it (`x = ...;`) or bind it (`let x = ...;`)"),
                    );
                }
            }
        }
    }

    // ----- Expressions -----
}

/// A `for` loop's range as written: `start..end`, or `(start..end).rev()` when `descending`.
pub(super) struct ForRange<'a> {
    pub start: &'a ast::Expression,
    pub end: &'a ast::Expression,
    pub step: Option<&'a ast::Expression>,
    pub descending: bool,
}

/// `for variable in (start..end).rev() step s`: `variable` takes `end - 1`, `end - 1 - s`, ...
/// while it is at least `start`. A hidden `cursor` holds one past the current value, so no
/// value below `start` is ever computed (an unsigned range down to 0 does not wrap).
struct DescendingLoop {
    variable: VariableId,
    cursor: VariableId,
    ty: ScalarType,
    span: Span,
}

impl DescendingLoop {
    /// `cursor = end; loop { if !(start < cursor) break; variable = cursor - 1; body }
    /// continuing { cursor = if cursor - start > step { cursor - step } else { start } }`.
    fn lower(
        &self,
        start: Expression,
        end: Expression,
        step: Expression,
        body: Block,
        unroll: Unroll,
    ) -> Block {
        let (ty, span) = (self.ty, self.span);
        let cursor = || variable_expression(self.cursor, ty, span);
        let one = literal_expression(Literal::Integer(1), ty, span);
        let condition = binary_expression(
            BinaryOp::Less,
            start.clone(),
            cursor(),
            ScalarType::Bool,
            span,
        );
        let mut loop_body = vec![
            break_unless(condition, span),
            statement(
                StatementKind::Assign {
                    variable: self.variable,
                    value: binary_expression(BinaryOp::Subtract, cursor(), one, ty, span),
                },
                span,
            ),
        ];
        loop_body.extend(body);
        let distance = binary_expression(BinaryOp::Subtract, cursor(), start.clone(), ty, span);
        let next = Expression {
            id: kdsl_ir::ExprId::UNNUMBERED,
            kind: ExpressionKind::Conditional {
                condition: Box::new(binary_expression(
                    BinaryOp::Greater,
                    distance,
                    step.clone(),
                    ScalarType::Bool,
                    span,
                )),
                accept: Box::new(binary_expression(
                    BinaryOp::Subtract,
                    cursor(),
                    step,
                    ty,
                    span,
                )),
                reject: Box::new(start),
            },
            ty,
            span,
        };
        vec![
            statement(
                StatementKind::Assign {
                    variable: self.cursor,
                    value: end,
                },
                span,
            ),
            statement(
                StatementKind::Loop {
                    body: loop_body,
                    continuing: vec![statement(
                        StatementKind::Assign {
                            variable: self.cursor,
                            value: next,
                        },
                        span,
                    )],
                    unroll,
                },
                span,
            ),
        ]
    }
}
