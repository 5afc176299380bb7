//! Calls of device functions and of the built-ins (from the table in `kdsl_ir::builtins`).

use super::super::Signature;
use super::*;
use kdsl_ir::{Operands, ResultRule, TypeSet};

impl Checker<'_> {
    /// E0513: a statement (`async_copy`, `matrix_mma`, ...) called where a value is needed.
    fn statement_as_value(&mut self, callee: &ast::Identifier, span: Span) {
        self.report(
            Diagnostic::error(
                ErrorCode::E0513,
                format!("`{}` is a statement, not a value", callee.name),
                span,
                "used as a value",
            )
            .with_hint(format!("write `{}(...);` on its own line", callee.name)),
        );
    }

    pub(super) fn arity_error(
        &mut self,
        callee: &ast::Identifier,
        expected: usize,
        found: usize,
        span: Span,
    ) {
        self.report(Diagnostic::error(
            ErrorCode::E0307,
            format!(
                "`{}` takes {} but {} {} given",
                callee.name,
                plural(expected, "argument"),
                found,
                if found == 1 { "was" } else { "were" }
            ),
            span,
            format!("expected {}", plural(expected, "argument")),
        ));
    }

    pub(super) fn call(
        &mut self,
        callee: &ast::Identifier,
        arguments: &[ast::Expression],
        span: Span,
        expected: Option<ScalarType>,
        as_statement: bool,
    ) -> Option<Expression> {
        // `select` is an operator on values, and the exact math functions fold to the bits
        // every target computes, so constants may use them.
        let foldable = match Builtin::from_name(&callee.name) {
            Some(Builtin::Select) => true,
            Some(Builtin::Math(function)) => function.folds_exactly(),
            _ => false,
        };
        if (self.constant_context || self.function.is_none()) && !foldable {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0509,
                    "calls are not allowed in constant expressions",
                    span,
                    "not known at compile time",
                )
                .with_hint(
                    "use literals, `const` items, operators, casts, `select` and exact math functions such as `min` or `wrapping_add`",
                ),
            );
            return None;
        }
        if let Some(builtin) = Builtin::from_name(&callee.name) {
            return self.builtin(builtin, callee, arguments, span, expected);
        }
        match self.globals.get(&callee.name).copied() {
            Some(Global::Function(index))
                if self.functions[index].kind == ast::FunctionKind::Device =>
            {
                let Some(signature) = self.signatures.get(&callee.name).cloned() else {
                    for argument in arguments {
                        let _ = self.expression(argument, None);
                    }
                    return None;
                };
                if signature.tuple_result.is_some() {
                    for argument in arguments {
                        let _ = self.expression(argument, None);
                    }
                    self.report(
                        Diagnostic::error(
                            ErrorCode::E0314,
                            format!(
                                "`{}` returns a tuple, which cannot be used inside an expression",
                                callee.name
                            ),
                            span,
                            "returns a tuple",
                        )
                        .with_hint(format!(
                            "bind it first: `let (a, b) = {}(...);`",
                            callee.name
                        )),
                    );
                    return None;
                }
                let lowered = self.device_call_arguments(callee, &signature, arguments, span)?;
                let ty = match signature.return_type {
                    Some(ty) => ty,
                    None if as_statement => ScalarType::Bool,
                    None => {
                        self.report(
                            Diagnostic::error(
                                ErrorCode::E0312,
                                format!("function `{}` returns no value", callee.name),
                                span,
                                "used as a value here",
                            )
                            .with_hint("call it as a statement, or give it a result type"),
                        );
                        return None;
                    }
                };
                Some(Expression {
                    id: kdsl_ir::ExprId::UNNUMBERED,
                    kind: ExpressionKind::Call {
                        function: signature.id,
                        arguments: lowered,
                    },
                    ty,
                    span,
                })
            }
            Some(Global::Function(_) | Global::Instance(_)) => {
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0513,
                        format!("kernel `{}` cannot be called", callee.name),
                        callee.span,
                        "kernels are launched from the host",
                    )
                    .with_hint("move the shared code into a device function (`fn`)"),
                );
                None
            }
            Some(Global::Constant(_)) => {
                self.report(Diagnostic::error(
                    ErrorCode::E0202,
                    format!("`{}` is a constant, not a function", callee.name),
                    callee.span,
                    "not a function",
                ));
                None
            }
            None if kdsl_ir::matrix::MATRIX_FUNCTIONS.contains(&callee.name.as_str()) => {
                // Its operands are arrays, which no expression reads: leave them unchecked.
                self.statement_as_value(callee, span);
                None
            }
            None => {
                for argument in arguments {
                    let _ = self.expression(argument, None);
                }
                if self.suppress_unknown_names {
                    return None;
                }
                let mut candidates: Vec<&str> = Builtin::all_names().collect();
                candidates.extend(kdsl_ir::matrix::MATRIX_FUNCTIONS);
                let device_names: Vec<String> = self.signatures.keys().cloned().collect();
                candidates.extend(device_names.iter().map(String::as_str));
                let mut diagnostic = Diagnostic::error(
                    ErrorCode::E0202,
                    format!("unknown function `{}`", callee.name),
                    callee.span,
                    "not a built-in or a device function",
                );
                if let Some(best) = suggest(&callee.name, candidates) {
                    diagnostic = diagnostic.with_hint(format!("did you mean `{best}`?"));
                }
                self.report(diagnostic);
                None
            }
        }
    }

    /// The IR arguments of a call to a device function: each source argument checked against
    /// its parameter, tuples flattened, an array never passed twice where it may be written.
    /// The hidden result arrays of a tuple result are not included.
    pub(super) fn device_call_arguments(
        &mut self,
        callee: &ast::Identifier,
        signature: &Signature,
        arguments: &[ast::Expression],
        span: Span,
    ) -> Option<Vec<Argument>> {
        if arguments.len() != signature.shapes.len() {
            self.arity_error(callee, signature.shapes.len(), arguments.len(), span);
            return None;
        }
        let mut lowered = Vec::new();
        let mut ok = true;
        let mut next_parameter = 0;
        for (argument, shape) in arguments.iter().zip(&signature.shapes) {
            match shape {
                ParameterShape::Single(parameter) => {
                    next_parameter += 1;
                    match self.call_argument(argument, parameter, &callee.name) {
                        Some(value) => lowered.push(value),
                        None => ok = false,
                    }
                }
                ParameterShape::Tuple(types) => {
                    next_parameter += types.len();
                    match self.tuple_value(argument, Some(types), None) {
                        Some(values) => lowered.extend(values.into_iter().map(Argument::Value)),
                        None => ok = false,
                    }
                }
                ParameterShape::Vector(ty) => {
                    next_parameter += usize::from(ty.width);
                    match self.vector_value(argument, Some(*ty), None) {
                        Some(value) => {
                            lowered.extend(value.components.into_iter().map(Argument::Value))
                        }
                        None => ok = false,
                    }
                }
                ParameterShape::Shaped { buffer, rank } => {
                    next_parameter += 1 + 2 * usize::from(*rank);
                    match self.shaped_argument(argument, buffer, *rank, &callee.name) {
                        Some(values) => lowered.extend(values),
                        None => ok = false,
                    }
                }
            }
        }
        debug_assert!(next_parameter <= signature.parameters.len());
        if !ok {
            return None;
        }
        self.check_array_aliasing(callee, signature, &lowered, arguments)?;
        Some(lowered)
    }

    /// Refuses one array passed twice to a call when the callee may write it: inside the
    /// callee the two names would be one memory.
    fn check_array_aliasing(
        &mut self,
        callee: &ast::Identifier,
        signature: &Signature,
        lowered: &[Argument],
        arguments: &[ast::Expression],
    ) -> Option<()> {
        let array_arguments: Vec<(usize, PlaceBase, bool)> = lowered
            .iter()
            .zip(&signature.parameters)
            .enumerate()
            .filter_map(
                |(index, (argument, parameter))| match (argument, parameter) {
                    (Argument::Array(base), ParameterType::Array { writable, .. }) => {
                        Some((index, *base, *writable))
                    }
                    _ => None,
                },
            )
            .collect();
        for (position, &(index, base, writable)) in array_arguments.iter().enumerate() {
            for &(other_index, other_base, other_writable) in &array_arguments[..position] {
                if base == other_base && (writable || other_writable) {
                    // Array arguments are never tuples, so IR positions that hold arrays are
                    // source positions shifted only by tuples before them.
                    let source = |ir_index: usize| source_position(signature, ir_index);
                    let (first, second) = (source(other_index), source(index));
                    let (Some(first), Some(second)) = (first, second) else {
                        continue;
                    };
                    self.report(
                        Diagnostic::error(
                            ErrorCode::E0405,
                            format!(
                                "the same array is passed twice to `{}`, which may write it",
                                callee.name
                            ),
                            arguments[second].span,
                            "passed again here",
                        )
                        .with_label(arguments[first].span, "first passed here")
                        .with_hint("pass it once, or copy it into a second array"),
                    );
                    return None;
                }
            }
        }
        Some(())
    }

    pub(super) fn call_argument(
        &mut self,
        argument: &ast::Expression,
        parameter: &ParameterType,
        callee: &str,
    ) -> Option<Argument> {
        match parameter {
            ParameterType::Scalar { ty } => self
                .coerce(argument, *ty, &format!("this argument of `{callee}`"))
                .map(Argument::Value),
            ParameterType::Array {
                ty,
                space,
                writable,
            } => self.array_argument(argument, ty, *space, *writable, callee),
            ParameterType::Buffer {
                element,
                space,
                writable,
                record,
            } => {
                let resolved = match &strip_parentheses(argument).kind {
                    E::Name(name) => Some((name, self.lookup(&name.name))),
                    _ => None,
                };
                match resolved {
                    Some((
                        _,
                        Resolved::Parameter(
                            id,
                            ParameterType::Buffer {
                                element: found_element,
                                space: found_space,
                                writable: found_writable,
                                record: found_record,
                            },
                            declared_at,
                        ),
                    )) => {
                        let what = format!("this parameter of `{callee}`");
                        if self.refuse_shaped(id, argument.span, &what) {
                            return None;
                        }
                        if found_element != *element
                            || found_space != *space
                            || found_record != *record
                        {
                            self.report(Diagnostic::error(
                                ErrorCode::E0313,
                                format!(
                                    "expected a `{parameter}` buffer, found `{}`",
                                    ParameterType::Buffer {
                                        element: found_element,
                                        space: found_space,
                                        writable: found_writable,
                                        record: found_record,
                                    }
                                ),
                                argument.span,
                                "wrong buffer type",
                            ));
                            return None;
                        }
                        if *writable && !found_writable {
                            self.report(
                                Diagnostic::error(
                                    ErrorCode::E0402,
                                    format!(
                                        "`{callee}` writes to this buffer, but it is read-only"
                                    ),
                                    argument.span,
                                    "read-only buffer",
                                )
                                .with_label(declared_at, "declared read-only here")
                                .with_hint("declare the parameter as `global mut [T]`"),
                            );
                            return None;
                        }
                        Some(Argument::Buffer(id))
                    }
                    Some((name, Resolved::Unknown)) => {
                        self.unknown_name(name);
                        None
                    }
                    Some((_, Resolved::Binding(Binding::Poisoned))) => None,
                    _ => {
                        let _ = self.expression(argument, None);
                        self.report(
                            Diagnostic::error(
                                ErrorCode::E0313,
                                format!("`{callee}` expects a buffer (`{parameter}`) here"),
                                argument.span,
                                "not a buffer parameter",
                            )
                            .with_hint("pass a buffer parameter of the caller by name"),
                        );
                        None
                    }
                }
            }
        }
    }

    /// An array argument: an array variable or array parameter of the caller, by name, of
    /// exactly the parameter's type and space.
    fn array_argument(
        &mut self,
        argument: &ast::Expression,
        ty: &ArrayType,
        space: AddressSpace,
        writable: bool,
        callee: &str,
    ) -> Option<Argument> {
        let expected = ParameterType::Array {
            ty: ty.clone(),
            space,
            writable,
        };
        let not_an_array = |checker: &mut Self| {
            checker.report(
                Diagnostic::error(
                    ErrorCode::E0313,
                    format!("`{callee}` expects an array (`{expected}`) here"),
                    argument.span,
                    "not an array",
                )
                .with_hint("pass a local or private array of the caller by name"),
            );
        };
        let name = match &strip_parentheses(argument).kind {
            E::Name(name) => name,
            _ => {
                let _ = self.expression(argument, None);
                not_an_array(self);
                return None;
            }
        };
        let (base, found_ty, found_space, found_writable, declared_at) =
            match self.lookup(&name.name) {
                Resolved::Binding(Binding::Variable {
                    id,
                    ty: VariableType::Array { ty },
                    mutable,
                    space,
                    span,
                    ..
                }) => (PlaceBase::Variable(id), ty, space, mutable, span),
                Resolved::Parameter(
                    id,
                    ParameterType::Array {
                        ty,
                        space,
                        writable,
                    },
                    span,
                ) => (PlaceBase::Parameter(id), ty, space, writable, span),
                Resolved::Binding(Binding::Poisoned) => return None,
                Resolved::Unknown => {
                    self.unknown_name(name);
                    return None;
                }
                _ => {
                    not_an_array(self);
                    return None;
                }
            };
        if found_ty != *ty || found_space != space {
            let private_hint = if found_space != space {
                format!(
                    "declare the parameter `{found_space} [T; N]`, as the array is {found_space}"
                )
            } else {
                "array types must match exactly, element type and every length".to_string()
            };
            self.report(
                Diagnostic::error(
                    ErrorCode::E0313,
                    format!("expected a `{expected}` array, found `{found_space} {found_ty}`"),
                    argument.span,
                    "wrong array type",
                )
                .with_label(declared_at, "declared here")
                .with_hint(private_hint),
            );
            return None;
        }
        if writable && !found_writable {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0401,
                    format!(
                        "`{callee}` writes to this array, but `{}` is immutable",
                        name.name
                    ),
                    argument.span,
                    "immutable array",
                )
                .with_label(declared_at, "declared immutable here")
                .with_hint(format!(
                    "declare it `let mut {}` (or the parameter `{space} mut`)",
                    name.name
                )),
            );
            return None;
        }
        Some(Argument::Array(base))
    }

    pub(super) fn builtin(
        &mut self,
        builtin: Builtin,
        callee: &ast::Identifier,
        arguments: &[ast::Expression],
        span: Span,
        expected: Option<ScalarType>,
    ) -> Option<Expression> {
        if builtin == Builtin::Print {
            for argument in arguments.iter().skip(1) {
                let _ = self.expression_or_vector(argument);
            }
            self.report(
                Diagnostic::error(
                    ErrorCode::E0513,
                    "`print(...)` is a statement, not a value",
                    span,
                    "used as a value",
                )
                .with_hint("write `print(\"x = {}\", x);` on its own line"),
            );
            return None;
        }
        let arity = builtin.arity();
        if arguments.len() != arity {
            self.arity_error(callee, arity, arguments.len(), span);
            return None;
        }
        let arguments: Vec<&ast::Expression> = arguments.iter().collect();
        let make = |kind, ty| {
            Some(Expression {
                id: kdsl_ir::ExprId::UNNUMBERED,
                kind,
                ty,
                span,
            })
        };
        match builtin {
            Builtin::Print => None,
            Builtin::Barrier | Builtin::DeviceFence => {
                let name = &callee.name;
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0513,
                        format!("`{name}()` is a statement, not a value"),
                        span,
                        "used as a value",
                    )
                    .with_hint(format!("write `{name}();` on its own line")),
                );
                None
            }
            Builtin::AsyncCopy(_) | Builtin::TileCopy(_) => {
                for argument in &arguments {
                    let _ = self.expression(argument, None);
                }
                self.statement_as_value(callee, span);
                None
            }
            Builtin::WorkItem(query) => {
                let dimension = self.expression(arguments[0], Some(ScalarType::U32))?;
                let value = constant::evaluate(&dimension)
                    .ok()
                    .and_then(|v| v.as_i128())
                    .filter(|v| (0..=2).contains(v));
                let Some(value) = value else {
                    self.report(
                        Diagnostic::error(
                            ErrorCode::E0503,
                            format!(
                                "the dimension of `{}` must be a constant 0, 1 or 2",
                                query.name()
                            ),
                            arguments[0].span,
                            "invalid dimension",
                        )
                        .with_hint("launches have at most three dimensions, numbered 0 to 2"),
                    );
                    return None;
                };
                let id = make(
                    ExpressionKind::WorkItem {
                        query,
                        dimension: value as u8,
                    },
                    ScalarType::U32,
                )?;
                // Like a literal, a work-item query takes the integer type its use asks for
                // (`y * n + x` with `n: i32`), converting as `as` does; `u32` otherwise.
                match expected {
                    Some(ty) if ty.is_integer() && ty != ScalarType::U32 => Some(Expression {
                        id: kdsl_ir::ExprId::UNNUMBERED,
                        kind: ExpressionKind::Cast {
                            value: Box::new(id),
                        },
                        ty,
                        span,
                    }),
                    _ => Some(id),
                }
            }
            Builtin::Math(function) => {
                let (values, ty) = self.unify(
                    &arguments,
                    expected,
                    &format!("each argument of `{}`", function.name()),
                )?;
                let types = function.types();
                if !types.contains(ty) {
                    let what = types.describe();
                    let mut diagnostic = Diagnostic::error(
                        ErrorCode::E0309,
                        format!("`{}` takes {what}, found `{ty}`", function.name()),
                        span,
                        format!("called with `{ty}`"),
                    );
                    if ty.is_integer() {
                        diagnostic = diagnostic.with_hint("convert the arguments with `as f32`");
                    }
                    self.report(diagnostic);
                    return None;
                }
                make(
                    ExpressionKind::Math {
                        function,
                        arguments: values,
                    },
                    function.result_type(ty),
                )
            }
            Builtin::Select => {
                let condition = self.condition(arguments[0]);
                let (values, ty) =
                    self.unify(&arguments[1..], expected, "both choices of `select`")?;
                let mut values = values.into_iter();
                let (accept, reject) = (values.next()?, values.next()?);
                make(
                    ExpressionKind::Select {
                        condition: Box::new(condition?),
                        accept: Box::new(accept),
                        reject: Box::new(reject),
                    },
                    ty,
                )
            }
            Builtin::Atomic(op) => self.atomic(op, callee, &arguments, span),
            Builtin::VectorLoad(_) | Builtin::VectorStore(_) => {
                let owned: Vec<ast::Expression> = arguments.iter().map(|&a| a.clone()).collect();
                let write = matches!(builtin, Builtin::VectorStore(_));
                self.vector_place(callee, &owned, write)?;
                let (message, hint) = match builtin {
                    Builtin::VectorStore(_) => (
                        format!("`{}` is a statement, not a value", callee.name),
                        format!(
                            "write `{}(buffer, index, value);` on its own line",
                            callee.name
                        ),
                    ),
                    _ => (
                        format!("`{}` gives a vector, not a scalar", callee.name),
                        "bind it (`let v = vload4(x, i);`) or take a component: `vload4(x, i).x`"
                            .to_string(),
                    ),
                };
                self.report(
                    Diagnostic::error(ErrorCode::E0315, message, span, "used as a scalar")
                        .with_hint(hint),
                );
                None
            }
            Builtin::SubGroup(_) | Builtin::WorkGroup(_) => {
                self.collective(builtin, &arguments, span, expected)
            }
        }
    }

    /// A sub-group or work-group operation, its operands as its row of the table says.
    fn collective(
        &mut self,
        builtin: Builtin,
        arguments: &[&ast::Expression],
        span: Span,
        expected: Option<ScalarType>,
    ) -> Option<Expression> {
        let row = builtin.row();
        let make = |arguments: Vec<Expression>, ty: ScalarType| {
            let kind = match builtin {
                Builtin::WorkGroup(op) => ExpressionKind::WorkGroup { op, arguments },
                Builtin::SubGroup(op) => ExpressionKind::SubGroup { op, arguments },
                _ => return None,
            };
            Some(Expression {
                id: kdsl_ir::ExprId::UNNUMBERED,
                kind,
                ty,
                span,
            })
        };
        let value_hint = (row.result == ResultRule::Operand)
            .then_some(expected)
            .flatten();
        let values = match row.operands {
            Operands::Nothing => return make(Vec::new(), ScalarType::U32),
            Operands::ValueAndLane { .. } => {
                let value = self.expression(arguments[0], value_hint);
                let lane = self.coerce(arguments[1], ScalarType::U32, "the lane");
                vec![value?, lane?]
            }
            Operands::Values {
                types: TypeSet::Conditions,
                ..
            } => vec![self.condition(arguments[0])?],
            _ => vec![self.expression(arguments[0], value_hint)?],
        };
        let ty = values[0].ty;
        let types = row.operands.types();
        if !types.is_some_and(|types| types.contains(ty)) {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0311,
                    format!(
                        "`{}` works on {}, found `{ty}`",
                        row.name,
                        types.map_or("no values", |types| types.describe())
                    ),
                    arguments[0].span,
                    "unsupported type",
                )
                .with_hint("convert the value with `as i32`, `as u32` or `as f32`"),
            );
            return None;
        }
        make(values, row.result_type(Some(ty))?)
    }

    pub(super) fn atomic(
        &mut self,
        op: AtomicOp,
        callee: &ast::Identifier,
        arguments: &[&ast::Expression],
        span: Span,
    ) -> Option<Expression> {
        let target = strip_parentheses(arguments[0]);
        let record_field = match &target.kind {
            E::Field { base, .. } => {
                matches!(strip_parentheses(base).kind, E::Index { .. })
                    && self.record_shape(base).is_some()
            }
            _ => false,
        };
        if !matches!(target.kind, E::Index { .. }) && !record_field {
            let _ = self.expression(target, None);
            self.report(
                Diagnostic::error(
                    ErrorCode::E0403,
                    format!(
                        "the first argument of `{}` must be a memory element",
                        callee.name
                    ),
                    target.span,
                    "not a buffer or local array element",
                )
                .with_hint(format!("write `{}(buffer[i], value)`", callee.name)),
            );
            return None;
        }
        let (place, access) = self.place(target)?;
        let element = place.element;
        let value_checks: Vec<Option<Expression>> = arguments[1..]
            .iter()
            .map(|a| self.coerce(a, element, &format!("this argument of `{}`", callee.name)))
            .collect();
        match access.origin {
            PlaceOrigin::PrivateArray => {
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0403,
                        format!("`{}` needs global or local memory", callee.name),
                        target.span,
                        "a private array belongs to one work-item",
                    )
                    .with_label(access.declared_at, "declared here")
                    .with_hint("use a plain read-modify-write on private arrays"),
                );
                return None;
            }
            PlaceOrigin::Buffer if !access.writable || place.space == AddressSpace::Constant => {
                self.report_read_only(&access, target.span, &format!("use `{}` on", callee.name));
                return None;
            }
            _ => {}
        }
        let types = op.types();
        if !types.contains(element) {
            let allowed = types.describe();
            self.report(
                Diagnostic::error(
                    ErrorCode::E0310,
                    format!(
                        "`{}` does not support elements of type `{element}`",
                        callee.name
                    ),
                    target.span,
                    format!("`{element}` element"),
                )
                .with_hint(format!("`{}` works on {allowed}", callee.name)),
            );
            return None;
        }
        let mut values: Vec<Expression> = value_checks.into_iter().collect::<Option<Vec<_>>>()?;
        let (value, comparand) = if op == AtomicOp::CompareExchange {
            let desired = values.pop()?;
            let expected = values.pop()?;
            (desired, Some(Box::new(expected)))
        } else {
            (values.pop()?, None)
        };
        Some(Expression {
            id: kdsl_ir::ExprId::UNNUMBERED,
            kind: ExpressionKind::Atomic {
                op,
                place: Box::new(place),
                value: Box::new(value),
                comparand,
            },
            ty: element,
            span,
        })
    }
}

/// The source argument position of IR parameter `ir_index` (not a tuple element).
fn source_position(signature: &Signature, ir_index: usize) -> Option<usize> {
    let mut start = 0;
    for (position, shape) in signature.shapes.iter().enumerate() {
        let width = shape.width();
        if ir_index < start + width {
            return Some(position);
        }
        start += width;
    }
    None
}
