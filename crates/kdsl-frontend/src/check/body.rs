//! Checking and lowering of function bodies: statements, expressions, places and built-ins.

use super::attributes::{work_group_size_constant, work_group_size_hint, WorkGroupSize};
use super::constant::{self, integer_range, round_float};
use super::names::Builtin;
use super::{block_has_errors, ir_kind, suggest, Checker, Global, ResolvedType};
use crate::ast::{
    self, AssignOperator, BinaryOperator, ExpressionKind as E, StatementKind as S, UnaryOperator,
};
use kdsl_ir::{
    AddressSpace, Argument, ArrayType, AtomicOp, BinaryOp, Block, Diagnostic, Expression,
    ExpressionKind, FenceFlags, Function, FunctionKind, Literal, LogicalOp, Parameter, ParameterId,
    ParameterType, Place, PlaceBase, ScalarType, Span, Statement, StatementKind, SubGroupOp,
    UnaryOp, Unroll, Variable, VariableId, VariableType,
};

/// How a binding came to be, for better messages about assignments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Origin {
    Let,
    ForLoop,
    Local,
}

#[derive(Clone, Debug)]
enum Binding {
    Variable {
        id: VariableId,
        ty: VariableType,
        mutable: bool,
        space: AddressSpace,
        origin: Origin,
        span: Span,
    },
    /// A binding whose declaration failed to check; its uses report nothing more.
    Poisoned,
}

/// The function body being checked.
pub(crate) struct FunctionState {
    kind: FunctionKind,
    name: String,
    return_type: Option<ScalarType>,
    parameters: Vec<Parameter>,
    variables: Vec<Variable>,
    scopes: Vec<Vec<(String, Binding)>>,
    loop_depth: u32,
    /// Parameters whose types failed to resolve; their uses report nothing more.
    poisoned_parameters: Vec<String>,
    /// The kernel's `#[work_group_size]`, which gives its body `WORK_GROUP_SIZE_X` and friends.
    work_group_size: WorkGroupSize,
}

/// What a name in an expression refers to.
enum Resolved {
    Binding(Binding),
    Parameter(ParameterId, ParameterType, Span),
    Constant(usize),
    /// `WORK_GROUP_SIZE_X` and friends in a kernel with `#[work_group_size]`; `None` when
    /// the attribute is malformed.
    WorkGroupSize(Option<u32>),
    Function,
    Unknown,
}

/// Where an element access points, for writability checks.
#[derive(Clone, Debug)]
struct PlaceAccess {
    writable: bool,
    base_name: String,
    declared_at: Span,
    origin: PlaceOrigin,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PlaceOrigin {
    Buffer,
    LocalArray,
    PrivateArray,
}

fn literal_expression(literal: Literal, ty: ScalarType, span: Span) -> Expression {
    Expression {
        kind: ExpressionKind::Literal(literal),
        ty,
        span,
    }
}

fn zero_literal(ty: ScalarType, span: Span) -> Expression {
    let literal = if ty == ScalarType::Bool {
        Literal::Bool(false)
    } else if ty.is_float() {
        Literal::Float(0.0)
    } else {
        Literal::Integer(0)
    };
    literal_expression(literal, ty, span)
}

fn not(condition: Expression) -> Expression {
    let span = condition.span;
    Expression {
        kind: ExpressionKind::Unary {
            op: UnaryOp::Not,
            operand: Box::new(condition),
        },
        ty: ScalarType::Bool,
        span,
    }
}

fn statement(kind: StatementKind, span: Span) -> Statement {
    Statement { kind, span }
}

fn variable_expression(id: VariableId, ty: ScalarType, span: Span) -> Expression {
    Expression {
        kind: ExpressionKind::Variable(id),
        ty,
        span,
    }
}

/// `if !condition { break; }`, the head of every lowered `while` and `for`.
fn break_unless(condition: Expression, span: Span) -> Statement {
    statement(
        StatementKind::If {
            condition: not(condition),
            accept: vec![statement(StatementKind::Break, span)],
            reject: Vec::new(),
        },
        span,
    )
}

/// Whether an expression is made only of unsuffixed numeric literals, so its type comes from
/// the context.
fn is_untyped(expression: &ast::Expression) -> bool {
    match &expression.kind {
        E::Literal(
            ast::Literal::Integer { suffix: None, .. } | ast::Literal::Float { suffix: None, .. },
        ) => true,
        E::Parenthesized(inner) => is_untyped(inner),
        E::Unary {
            operator: UnaryOperator::Negate | UnaryOperator::BitNot,
            operand,
        } => is_untyped(operand),
        E::Binary {
            operator,
            left,
            right,
        } => match operator {
            BinaryOperator::ShiftLeft | BinaryOperator::ShiftRight => is_untyped(left),
            BinaryOperator::Add
            | BinaryOperator::Subtract
            | BinaryOperator::Multiply
            | BinaryOperator::Divide
            | BinaryOperator::Remainder
            | BinaryOperator::BitAnd
            | BinaryOperator::BitOr
            | BinaryOperator::BitXor => is_untyped(left) && is_untyped(right),
            _ => false,
        },
        _ => false,
    }
}

fn strip_parentheses(mut expression: &ast::Expression) -> &ast::Expression {
    while let E::Parenthesized(inner) = &expression.kind {
        expression = inner;
    }
    expression
}

/// Whether every path through the block ends in `return`.
fn always_returns(block: &ast::Block) -> bool {
    block.statements.last().is_some_and(|s| match &s.kind {
        S::Return(_) => true,
        S::If {
            accept,
            reject: Some(reject),
            ..
        } => always_returns(accept) && always_returns(reject),
        S::Block(block) => always_returns(block),
        _ => false,
    })
}

fn ir_binary_op(operator: BinaryOperator) -> Option<BinaryOp> {
    Some(match operator {
        BinaryOperator::Add => BinaryOp::Add,
        BinaryOperator::Subtract => BinaryOp::Subtract,
        BinaryOperator::Multiply => BinaryOp::Multiply,
        BinaryOperator::Divide => BinaryOp::Divide,
        BinaryOperator::Remainder => BinaryOp::Remainder,
        BinaryOperator::BitAnd => BinaryOp::BitAnd,
        BinaryOperator::BitOr => BinaryOp::BitOr,
        BinaryOperator::BitXor => BinaryOp::BitXor,
        BinaryOperator::ShiftLeft => BinaryOp::ShiftLeft,
        BinaryOperator::ShiftRight => BinaryOp::ShiftRight,
        BinaryOperator::Equal => BinaryOp::Equal,
        BinaryOperator::NotEqual => BinaryOp::NotEqual,
        BinaryOperator::Less => BinaryOp::Less,
        BinaryOperator::LessEqual => BinaryOp::LessEqual,
        BinaryOperator::Greater => BinaryOp::Greater,
        BinaryOperator::GreaterEqual => BinaryOp::GreaterEqual,
        BinaryOperator::And | BinaryOperator::Or => return None,
    })
}

fn plural(count: usize, word: &str) -> String {
    match (count, word) {
        (1, _) => format!("{count} {word}"),
        (_, "index") => format!("{count} indices"),
        _ => format!("{count} {word}s"),
    }
}

impl Checker<'_> {
    fn state(&mut self) -> Option<&mut FunctionState> {
        self.function.as_mut()
    }

    fn new_variable(
        &mut self,
        name: &str,
        ty: VariableType,
        space: AddressSpace,
        span: Span,
    ) -> Option<VariableId> {
        let state = self.state()?;
        state.variables.push(Variable {
            name: name.to_string(),
            ty,
            space,
            span,
        });
        Some(VariableId((state.variables.len() - 1) as u32))
    }

    fn bind(&mut self, name: &str, binding: Binding) {
        if let Some(state) = self.state() {
            if let Some(scope) = state.scopes.last_mut() {
                scope.push((name.to_string(), binding));
            }
        }
    }

    fn lookup(&self, name: &str) -> Resolved {
        if let Some(state) = &self.function {
            for scope in state.scopes.iter().rev() {
                if let Some((_, binding)) = scope.iter().rev().find(|(n, _)| n == name) {
                    return Resolved::Binding(binding.clone());
                }
            }
            if state.poisoned_parameters.iter().any(|p| p == name) {
                return Resolved::Binding(Binding::Poisoned);
            }
            if let Some(index) = state.parameters.iter().position(|p| p.name == name) {
                let parameter = &state.parameters[index];
                return Resolved::Parameter(
                    ParameterId(index as u32),
                    parameter.ty.clone(),
                    parameter.span,
                );
            }
            if let Some(value) = work_group_size_constant(state.work_group_size, name) {
                return Resolved::WorkGroupSize(value);
            }
        }
        match self.globals.get(name) {
            Some(Global::Constant(index)) => Resolved::Constant(*index),
            Some(Global::Function(_) | Global::Instance(_)) => Resolved::Function,
            None => Resolved::Unknown,
        }
    }

    /// Names visible here, for suggestions.
    fn visible_names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        if let Some(state) = &self.function {
            for scope in &state.scopes {
                names.extend(scope.iter().map(|(n, _)| n.clone()));
            }
            names.extend(state.parameters.iter().map(|p| p.name.clone()));
        }
        names.extend(
            self.globals
                .iter()
                .filter(|(_, g)| matches!(g, Global::Constant(_)))
                .map(|(n, _)| n.clone()),
        );
        names
    }

    fn unknown_name(&mut self, name: &ast::Identifier) {
        if self.suppress_unknown_names {
            return;
        }
        let mut diagnostic = Diagnostic::error(
            "E0201",
            format!("unknown name `{}`", name.name),
            name.span,
            "not found in this scope",
        );
        if Builtin::from_name(&name.name).is_some() {
            diagnostic = diagnostic.with_hint(format!(
                "`{}` is a built-in function: call it with `(...)`",
                name.name
            ));
        } else if let Some(hint) = work_group_size_hint(&name.name) {
            diagnostic = diagnostic.with_hint(hint);
        } else {
            let names = self.visible_names();
            if let Some(best) = suggest(&name.name, names.iter().map(String::as_str)) {
                diagnostic = diagnostic.with_hint(format!("did you mean `{best}`?"));
            }
        }
        self.report(diagnostic);
    }

    pub(crate) fn mismatch(
        &mut self,
        expected: ScalarType,
        found: ScalarType,
        span: Span,
        context: &str,
    ) {
        let mut diagnostic = Diagnostic::error(
            "E0301",
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
    fn coerce(
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

    fn condition(&mut self, expression: &ast::Expression) -> Option<Expression> {
        let value = self.expression(expression, Some(ScalarType::Bool))?;
        if value.ty != ScalarType::Bool {
            let mut diagnostic = Diagnostic::error(
                "E0304",
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

    pub(crate) fn check_function(
        &mut self,
        item: &ast::FunctionItem,
        name: &str,
    ) -> Option<Function> {
        let kind = ir_kind(item.kind);
        let saved_suppress = self.suppress_unknown_names;
        let has_syntax_errors = block_has_errors(&item.body);
        self.suppress_unknown_names |= has_syntax_errors;

        let mut parameters = Vec::new();
        let mut poisoned_parameters = Vec::new();
        let mut parameters_ok = true;
        for parameter in &item.parameters {
            if let Some(previous) = parameters
                .iter()
                .find(|p: &&Parameter| p.name == parameter.name.name)
            {
                self.report(
                    Diagnostic::error(
                        "E0205",
                        format!("parameter `{}` is declared twice", parameter.name.name),
                        parameter.name.span,
                        "declared again here",
                    )
                    .with_label(previous.span, "first declared here"),
                );
                parameters_ok = false;
                continue;
            }
            match self.resolve_parameter(parameter, kind == FunctionKind::Kernel) {
                Some(ty) => parameters.push(Parameter {
                    name: parameter.name.name.clone(),
                    ty,
                    span: parameter.span,
                }),
                None => {
                    parameters_ok = false;
                    poisoned_parameters.push(parameter.name.name.clone());
                }
            }
        }
        let return_type = match (&item.return_type, kind) {
            (Some(ty), FunctionKind::Device) => self.resolve_scalar_type(ty, "a function result"),
            _ => None,
        };
        let work_group_size = self.function_attributes(item);
        self.function = Some(FunctionState {
            kind,
            name: name.to_string(),
            return_type,
            parameters: parameters.clone(),
            variables: Vec::new(),
            scopes: vec![Vec::new()],
            loop_depth: 0,
            poisoned_parameters,
            work_group_size,
        });
        let body = self.statements(&item.body.statements);
        if let (Some(ty), false) = (return_type, has_syntax_errors) {
            if !always_returns(&item.body) {
                let end = item.body.span.end as usize;
                self.report(
                    Diagnostic::error(
                        "E0505",
                        format!("function `{name}` may end without returning a `{ty}`"),
                        Span::new(end.saturating_sub(1), end),
                        "the body can reach its end here",
                    )
                    .with_label(item.name.span, format!("declared to return `{ty}`"))
                    .with_hint("end the body with `return value;` (or an `if`/`else` that returns in both branches)"),
                );
            }
        }
        let state = self.function.take()?;
        self.suppress_unknown_names = saved_suppress;
        parameters_ok.then(|| Function {
            name: name.to_string(),
            kind,
            parameters,
            return_type,
            variables: state.variables,
            body,
            span: item.span,
            work_group_size: work_group_size.required(),
        })
    }

    // ----- Statements -----

    fn block(&mut self, block: &ast::Block) -> Block {
        if let Some(state) = self.state() {
            state.scopes.push(Vec::new());
        }
        let lowered = self.statements(&block.statements);
        if let Some(state) = self.state() {
            state.scopes.pop();
        }
        lowered
    }

    fn statements(&mut self, statements: &[ast::Statement]) -> Block {
        let mut lowered = Vec::new();
        for statement in statements {
            self.statement(statement, &mut lowered);
        }
        lowered
    }

    fn statement(&mut self, source: &ast::Statement, out: &mut Block) {
        let span = source.span;
        match &source.kind {
            S::Let {
                mutable,
                name,
                ty,
                value,
            } => self.let_statement(*mutable, name, ty.as_ref(), value.as_ref(), span, out),
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
                step,
                unroll,
                body,
            } => {
                let range = (start, end, step.as_ref());
                self.for_statement(variable, range, unroll.as_ref(), body, span, out)
            }
            S::Break | S::Continue => {
                let inside_loop = self.function.as_ref().is_some_and(|f| f.loop_depth > 0);
                let is_break = matches!(source.kind, S::Break);
                let word = if is_break { "break" } else { "continue" };
                if !inside_loop {
                    self.report(
                        Diagnostic::error(
                            "E0504",
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

    fn loop_body(&mut self, body: &ast::Block, variable: Option<(&str, Binding)>) -> Block {
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

    fn let_statement(
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
        match declared {
            Some(Some(ResolvedType::Array(array))) => {
                if let Some(value) = value {
                    self.report(
                        Diagnostic::error(
                            "E0301",
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
                        self.report(
                            Diagnostic::error(
                                "E0301",
                                format!("immutable binding `{}` has no value", name.name),
                                name.span,
                                "needs a value",
                            )
                            .with_hint(format!("write `let {}: {scalar} = value;`", name.name)),
                        );
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
                            "E0301",
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
    fn zero_array(
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
            base: PlaceBase::Variable(id),
            indices: counters
                .iter()
                .map(|&c| variable_expression(c, ScalarType::U32, span))
                .collect(),
            element: array.element,
            space: AddressSpace::Private,
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

    fn local_statement(&mut self, name: &ast::Identifier, ty: &ast::TypeExpression, span: Span) {
        let (kind, depth) = match &self.function {
            Some(state) => (state.kind, state.scopes.len()),
            None => return,
        };
        let resolved = self.resolve_type(ty);
        if kind != FunctionKind::Kernel {
            self.report(
                Diagnostic::error(
                    "E0501",
                    "`local` arrays are allowed only in kernels",
                    span,
                    "inside a device function",
                )
                .with_hint("declare the array in the kernel and pass values in, or compute in private variables"),
            );
            self.bind(&name.name, Binding::Poisoned);
            return;
        }
        if depth != 1 {
            self.report(
                Diagnostic::error(
                    "E0501",
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
            Some(ResolvedType::Scalar(scalar)) => {
                self.report(
                    Diagnostic::error(
                        "E0501",
                        "a `local` declaration needs an array type",
                        ty.span(),
                        format!("`{scalar}` is a scalar"),
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

    fn assign_statement(
        &mut self,
        target: &ast::Expression,
        operator: AssignOperator,
        operator_span: Span,
        value: &ast::Expression,
        span: Span,
        out: &mut Block,
    ) {
        let target = strip_parentheses(target);
        match &target.kind {
            E::Name(name) => match self.lookup(&name.name) {
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
                        self.report(
                            Diagnostic::error(
                                "E0401",
                                format!("cannot assign to immutable binding `{}`", name.name),
                                target.span,
                                "cannot assign",
                            )
                            .with_label(declared_at, "declared immutable here")
                            .with_hint(hint),
                        );
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
                            "E0404",
                            format!("cannot assign to the whole array `{}`", name.name),
                            target.span,
                            format!("`{}` is a `{ty}`", name.name),
                        )
                        .with_hint(format!("assign its elements: `{}[i] = value;`", name.name)),
                    );
                }
                Resolved::Binding(Binding::Poisoned) => {
                    let _ = self.expression(value, None);
                }
                Resolved::Parameter(_, ParameterType::Scalar { .. }, declared_at) => {
                    self.report(
                        Diagnostic::error(
                            "E0401",
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
                Resolved::Parameter(_, ParameterType::Buffer { .. }, _) => {
                    self.report(
                        Diagnostic::error(
                            "E0404",
                            format!("cannot assign to the whole buffer `{}`", name.name),
                            target.span,
                            "a buffer is not a value",
                        )
                        .with_hint(format!("assign its elements: `{}[i] = value;`", name.name)),
                    );
                }
                Resolved::Constant(_) | Resolved::WorkGroupSize(_) => {
                    self.report(Diagnostic::error(
                        "E0401",
                        format!("cannot assign to constant `{}`", name.name),
                        target.span,
                        "constants never change",
                    ));
                }
                Resolved::Function => {
                    self.report(Diagnostic::error(
                        "E0404",
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
                        "E0404",
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

    fn report_read_only(&mut self, access: &PlaceAccess, span: Span, action: &str) {
        let diagnostic = match access.origin {
            PlaceOrigin::Buffer => Diagnostic::error(
                "E0402",
                format!(
                    "cannot {action} `{}`: the buffer is read-only",
                    access.base_name
                ),
                span,
                "read-only buffer",
            )
            .with_label(access.declared_at, "declared read-only here")
            .with_hint("declare the parameter as `global mut [T]`"),
            _ => Diagnostic::error(
                "E0401",
                format!(
                    "cannot {action} an element of immutable array `{}`",
                    access.base_name
                ),
                span,
                "immutable array",
            )
            .with_label(access.declared_at, "declared immutable here")
            .with_hint(format!("declare it `let mut {}`", access.base_name)),
        };
        self.report(diagnostic);
    }

    /// The value stored by `target = value` or `target op= value`.
    fn assigned_value(
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

    #[allow(clippy::too_many_arguments)]
    fn for_statement(
        &mut self,
        variable: &ast::Identifier,
        range: (&ast::Expression, &ast::Expression, Option<&ast::Expression>),
        unroll: Option<&ast::UnrollRequest>,
        body: &ast::Block,
        span: Span,
        out: &mut Block,
    ) {
        let (start, end, step) = range;
        let bounds = self.unify(&[start, end], None, "the range bounds");
        let ty = bounds.as_ref().map(|(_, ty)| *ty);
        if let Some(ty) = ty {
            if !ty.is_integer() {
                self.report(
                    Diagnostic::error(
                        "E0302",
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
                        if constant.as_i128(ty).is_some_and(|v| v <= 0) {
                            self.report(
                                Diagnostic::error(
                                    "E0512",
                                    "the step of a `for` loop must be positive",
                                    step.span,
                                    "not positive",
                                )
                                .with_hint("count down with a `while` loop"),
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
        let unroll = self.unroll_hint(unroll, (&start, &end, &step), ty, &body);
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

    fn return_statement(&mut self, value: Option<&ast::Expression>, span: Span, out: &mut Block) {
        let Some(state) = &self.function else { return };
        let (kind, return_type, name) = (state.kind, state.return_type, state.name.clone());
        match (kind, return_type, value) {
            (FunctionKind::Kernel, _, Some(value)) => {
                let _ = self.expression(value, None);
                self.report(
                    Diagnostic::error(
                        "E0507",
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
                        "E0507",
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
                        "E0507",
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

    fn expression_statement(&mut self, expression: &ast::Expression, span: Span, out: &mut Block) {
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
                            "E0511",
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

    /// Checks an expression and lowers it. `expected` is only a hint for literals; callers
    /// compare the result's type themselves.
    pub(crate) fn expression(
        &mut self,
        expression: &ast::Expression,
        expected: Option<ScalarType>,
    ) -> Option<Expression> {
        let span = expression.span;
        match &expression.kind {
            E::Literal(literal) => self.literal(literal, span, expected, false),
            E::Name(name) => self.name_expression(name),
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
                    ResolvedType::Array(array) => {
                        self.report(Diagnostic::error(
                            "E0303",
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
                    kind: ExpressionKind::Load(Box::new(place)),
                    ty,
                    span,
                })
            }
            E::Call { callee, arguments } => self.call(callee, arguments, span, expected, false),
            E::Error => None,
        }
    }

    fn name_expression(&mut self, name: &ast::Identifier) -> Option<Expression> {
        let span = name.span;
        let resolved = self.lookup(&name.name);
        if self.constant_context
            && matches!(resolved, Resolved::Binding(_) | Resolved::Parameter(..))
        {
            self.report(
                Diagnostic::error(
                    "E0509",
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
                        "E0206",
                        format!("`{}` is an array, not a value", name.name),
                        span,
                        format!("`{ty}`"),
                    )
                    .with_hint(format!("read an element: `{}[i]`", name.name)),
                );
                None
            }
            Resolved::Binding(Binding::Poisoned) => None,
            Resolved::Parameter(id, ParameterType::Scalar { ty }, _) => Some(Expression {
                kind: ExpressionKind::Parameter(id),
                ty,
                span,
            }),
            Resolved::Parameter(_, ty @ ParameterType::Buffer { .. }, _) => {
                self.report(
                    Diagnostic::error(
                        "E0206",
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
                        "E0206",
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

    fn literal(
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
                    let number = value.map_or(f64::INFINITY, |v| v as f64);
                    return self.float_literal(if negated { -number } else { number }, ty, span);
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
                            "E0305",
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
            ast::Literal::Float { value, suffix } => {
                let suffix_type = suffix.as_deref().and_then(ScalarType::from_name);
                if suffix_type.is_none() {
                    if let Some(integer) = expected.filter(|t| t.is_integer()) {
                        self.report(
                            Diagnostic::error(
                                "E0306",
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
                self.float_literal(if negated { -value } else { *value }, ty, span)
            }
        }
    }

    fn float_literal(&mut self, value: f64, ty: ScalarType, span: Span) -> Option<Expression> {
        // A literal is in range when it rounds to a finite value of its type.
        let (in_range, largest) = match ty {
            ScalarType::F16 => (value.abs() < 65520.0, 65504.0),
            ScalarType::F32 => ((value as f32).is_finite(), f64::from(f32::MAX)),
            _ => (value.is_finite(), f64::MAX),
        };
        if !in_range {
            self.report(Diagnostic::error(
                "E0305",
                format!("floating-point literal out of range for `{ty}`"),
                span,
                format!("the largest `{ty}` is {largest:e}"),
            ));
            return None;
        }
        Some(literal_expression(
            Literal::Float(round_float(value, ty)),
            ty,
            span,
        ))
    }

    fn unary(
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
                Diagnostic::error("E0302", message, span, "invalid operand").with_hint(hint),
            );
            return None;
        }
        Some(Expression {
            kind: ExpressionKind::Unary {
                op,
                operand: Box::new(value),
            },
            ty,
            span,
        })
    }

    fn binary(
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

    fn logical_operand(
        &mut self,
        operand: &ast::Expression,
        operator: BinaryOperator,
    ) -> Option<Expression> {
        let value = self.expression(operand, Some(ScalarType::Bool))?;
        if value.ty != ScalarType::Bool {
            let mut diagnostic = Diagnostic::error(
                "E0302",
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
    fn binary_typed(
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
                        "E0302",
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
                    "E0301",
                    format!("mismatched types: `{lt}` {symbol} `{rt}`"),
                    operator_span,
                    "operands of different types",
                )
                .with_label(left.span, format!("`{lt}`"))
                .with_label(right.span, format!("`{rt}`"));
                if lt.is_numeric() && rt.is_numeric() {
                    diagnostic = diagnostic.with_hint(format!(
                        "kdsl has no implicit conversions: convert one side, e.g. `... as {lt}`"
                    ));
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
                    "E0302",
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

    /// Checks expressions that must share one type; literals take the type of the others.
    fn unify(
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

    fn place(&mut self, expression: &ast::Expression) -> Option<(Place, PlaceAccess)> {
        let mut index_expressions = Vec::new();
        let mut base = expression;
        loop {
            match &base.kind {
                E::Index { base: inner, index } => {
                    index_expressions.push(index.as_ref());
                    base = inner;
                }
                E::Parenthesized(inner) => base = inner,
                _ => break,
            }
        }
        index_expressions.reverse();
        let mut indices = Vec::new();
        let mut indices_ok = true;
        for index in &index_expressions {
            match self.expression(index, Some(ScalarType::U32)) {
                Some(value) if value.ty.is_integer() => indices.push(value),
                Some(value) => {
                    self.report(
                        Diagnostic::error(
                            "E0308",
                            format!("index must be an integer, found `{}`", value.ty),
                            index.span,
                            "not an integer",
                        )
                        .with_hint("convert it with `as u32`"),
                    );
                    indices_ok = false;
                }
                None => indices_ok = false,
            }
        }
        let name = match &base.kind {
            E::Name(name) => name,
            E::Error => return None,
            _ => {
                self.report(Diagnostic::error(
                    "E0207",
                    "only buffers and arrays can be indexed",
                    base.span,
                    "not a buffer or array",
                ));
                return None;
            }
        };
        let (place_base, element, space, dimensions, access) = match self.lookup(&name.name) {
            Resolved::Binding(Binding::Variable {
                id,
                ty: VariableType::Array { ty },
                mutable,
                space,
                span,
                ..
            }) => (
                PlaceBase::Variable(id),
                ty.element,
                space,
                ty.dimensions.len(),
                PlaceAccess {
                    writable: mutable,
                    base_name: name.name.clone(),
                    declared_at: span,
                    origin: if space == AddressSpace::Local {
                        PlaceOrigin::LocalArray
                    } else {
                        PlaceOrigin::PrivateArray
                    },
                },
            ),
            Resolved::Parameter(
                id,
                ParameterType::Buffer {
                    element,
                    space,
                    writable,
                },
                span,
            ) => (
                PlaceBase::Parameter(id),
                element,
                space,
                1,
                PlaceAccess {
                    writable,
                    base_name: name.name.clone(),
                    declared_at: span,
                    origin: PlaceOrigin::Buffer,
                },
            ),
            Resolved::Binding(Binding::Poisoned) => return None,
            Resolved::Unknown => {
                self.unknown_name(name);
                return None;
            }
            Resolved::Binding(Binding::Variable {
                ty: VariableType::Scalar { ty },
                ..
            })
            | Resolved::Parameter(_, ParameterType::Scalar { ty }, _) => {
                self.report(Diagnostic::error(
                    "E0207",
                    format!("cannot index `{}` of type `{ty}`", name.name),
                    name.span,
                    "not a buffer or array",
                ));
                return None;
            }
            Resolved::Constant(_) | Resolved::WorkGroupSize(_) | Resolved::Function => {
                self.report(Diagnostic::error(
                    "E0207",
                    format!("cannot index `{}`", name.name),
                    name.span,
                    "not a buffer or array",
                ));
                return None;
            }
        };
        if self.constant_context {
            self.report(Diagnostic::error(
                "E0509",
                "expected a constant expression",
                expression.span,
                "reads memory",
            ));
            return None;
        }
        if index_expressions.len() != dimensions {
            let what = if access.origin == PlaceOrigin::Buffer {
                "buffer"
            } else {
                "array"
            };
            self.report(
                Diagnostic::error(
                    "E0308",
                    format!(
                        "{what} `{}` has {} but {} given",
                        name.name,
                        plural(dimensions, "dimension"),
                        if index_expressions.len() == 1 {
                            "1 index was".to_string()
                        } else {
                            format!("{} indices were", index_expressions.len())
                        }
                    ),
                    expression.span,
                    format!("needs {}", plural(dimensions, "index")),
                )
                .with_hint(if dimensions == 1 {
                    format!("write `{}[i]`", name.name)
                } else {
                    format!(
                        "index every dimension: `{}{}`",
                        name.name,
                        "[i]".repeat(dimensions)
                    )
                }),
            );
            return None;
        }
        if !indices_ok {
            return None;
        }
        Some((
            Place {
                base: place_base,
                indices,
                element,
                space,
            },
            access,
        ))
    }

    // ----- Calls -----

    fn arity_error(&mut self, callee: &ast::Identifier, expected: usize, found: usize, span: Span) {
        self.report(Diagnostic::error(
            "E0307",
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

    fn call(
        &mut self,
        callee: &ast::Identifier,
        arguments: &[ast::Expression],
        span: Span,
        expected: Option<ScalarType>,
        as_statement: bool,
    ) -> Option<Expression> {
        if self.constant_context || self.function.is_none() {
            self.report(
                Diagnostic::error(
                    "E0509",
                    "calls are not allowed in constant expressions",
                    span,
                    "not known at compile time",
                )
                .with_hint("use literals, `const` items, operators and casts"),
            );
            return None;
        }
        if let Some(builtin) = Builtin::from_name(&callee.name) {
            return self.builtin(builtin, callee, arguments, span, expected);
        }
        let arguments_ref: Vec<&ast::Expression> = arguments.iter().collect();
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
                if arguments.len() != signature.parameters.len() {
                    self.arity_error(callee, signature.parameters.len(), arguments.len(), span);
                    return None;
                }
                let mut lowered = Vec::new();
                let mut ok = true;
                for (argument, parameter) in arguments_ref.iter().zip(&signature.parameters) {
                    match self.call_argument(argument, parameter, &callee.name) {
                        Some(value) => lowered.push(value),
                        None => ok = false,
                    }
                }
                if !ok {
                    return None;
                }
                let ty = match signature.return_type {
                    Some(ty) => ty,
                    None if as_statement => ScalarType::Bool,
                    None => {
                        self.report(
                            Diagnostic::error(
                                "E0312",
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
                        "E0513",
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
                    "E0202",
                    format!("`{}` is a constant, not a function", callee.name),
                    callee.span,
                    "not a function",
                ));
                None
            }
            None => {
                for argument in arguments {
                    let _ = self.expression(argument, None);
                }
                if self.suppress_unknown_names {
                    return None;
                }
                let mut candidates: Vec<&str> = Builtin::all_names();
                let device_names: Vec<String> = self.signatures.keys().cloned().collect();
                candidates.extend(device_names.iter().map(String::as_str));
                let mut diagnostic = Diagnostic::error(
                    "E0202",
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

    fn call_argument(
        &mut self,
        argument: &ast::Expression,
        parameter: &ParameterType,
        callee: &str,
    ) -> Option<Argument> {
        match parameter {
            ParameterType::Scalar { ty } => self
                .coerce(argument, *ty, &format!("this argument of `{callee}`"))
                .map(Argument::Value),
            ParameterType::Buffer {
                element,
                space,
                writable,
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
                            },
                            declared_at,
                        ),
                    )) => {
                        if found_element != *element || found_space != *space {
                            self.report(Diagnostic::error(
                                "E0313",
                                format!(
                                    "expected a `{parameter}` buffer, found `{}`",
                                    ParameterType::Buffer {
                                        element: found_element,
                                        space: found_space,
                                        writable: found_writable
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
                                    "E0402",
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
                                "E0313",
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

    fn builtin(
        &mut self,
        builtin: Builtin,
        callee: &ast::Identifier,
        arguments: &[ast::Expression],
        span: Span,
        expected: Option<ScalarType>,
    ) -> Option<Expression> {
        let arity = match builtin {
            Builtin::WorkItem(_) => 1,
            Builtin::Barrier => 0,
            Builtin::Math(function) => function.arity(),
            Builtin::Select => 3,
            Builtin::Atomic(AtomicOp::CompareExchange) => 3,
            Builtin::Atomic(_) => 2,
            Builtin::SubGroup(SubGroupOp::LocalId | SubGroupOp::Size) => 0,
            Builtin::SubGroup(SubGroupOp::Shuffle | SubGroupOp::ShuffleXor) => 2,
            Builtin::SubGroup(_) => 1,
        };
        if arguments.len() != arity {
            self.arity_error(callee, arity, arguments.len(), span);
            return None;
        }
        let arguments: Vec<&ast::Expression> = arguments.iter().collect();
        let make = |kind, ty| Some(Expression { kind, ty, span });
        match builtin {
            Builtin::Barrier => {
                self.report(
                    Diagnostic::error(
                        "E0513",
                        "`barrier()` is a statement, not a value",
                        span,
                        "used as a value",
                    )
                    .with_hint("write `barrier();` on its own line"),
                );
                None
            }
            Builtin::WorkItem(query) => {
                let dimension = self.expression(arguments[0], Some(ScalarType::U32))?;
                let value = constant::evaluate(&dimension)
                    .ok()
                    .and_then(|v| v.as_i128(dimension.ty))
                    .filter(|v| (0..=2).contains(v));
                let Some(value) = value else {
                    self.report(
                        Diagnostic::error(
                            "E0503",
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
                make(
                    ExpressionKind::WorkItem {
                        query,
                        dimension: value as u8,
                    },
                    ScalarType::U32,
                )
            }
            Builtin::Math(function) => {
                let (values, ty) = self.unify(
                    &arguments,
                    expected,
                    &format!("each argument of `{}`", function.name()),
                )?;
                let valid = ty.is_float() || (function.accepts_integers() && ty.is_integer());
                if !valid {
                    let what = if function.accepts_integers() {
                        "integers or floats"
                    } else {
                        "floats"
                    };
                    let mut diagnostic = Diagnostic::error(
                        "E0309",
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
                    ty,
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
            Builtin::SubGroup(op) => {
                let values = match op {
                    SubGroupOp::LocalId | SubGroupOp::Size => {
                        return make(
                            ExpressionKind::SubGroup {
                                op,
                                arguments: Vec::new(),
                            },
                            ScalarType::U32,
                        )
                    }
                    SubGroupOp::Shuffle | SubGroupOp::ShuffleXor => {
                        let value = self.expression(arguments[0], expected);
                        let lane = self.coerce(arguments[1], ScalarType::U32, "the lane");
                        vec![value?, lane?]
                    }
                    _ => vec![self.expression(arguments[0], expected)?],
                };
                let ty = values[0].ty;
                if !matches!(
                    ty,
                    ScalarType::I32
                        | ScalarType::U32
                        | ScalarType::I64
                        | ScalarType::U64
                        | ScalarType::F32
                        | ScalarType::F64
                ) {
                    self.report(
                        Diagnostic::error(
                            "E0311",
                            format!(
                                "`{}` works on 32- and 64-bit integers and floats, found `{ty}`",
                                op.name()
                            ),
                            arguments[0].span,
                            "unsupported type",
                        )
                        .with_hint("convert the value with `as i32`, `as u32` or `as f32`"),
                    );
                    return None;
                }
                make(
                    ExpressionKind::SubGroup {
                        op,
                        arguments: values,
                    },
                    ty,
                )
            }
        }
    }

    fn atomic(
        &mut self,
        op: AtomicOp,
        callee: &ast::Identifier,
        arguments: &[&ast::Expression],
        span: Span,
    ) -> Option<Expression> {
        let target = strip_parentheses(arguments[0]);
        if !matches!(target.kind, E::Index { .. }) {
            let _ = self.expression(target, None);
            self.report(
                Diagnostic::error(
                    "E0403",
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
                        "E0403",
                        format!("`{}` needs global or local memory", callee.name),
                        target.span,
                        "a private array belongs to one work-item",
                    )
                    .with_label(access.declared_at, "declared here")
                    .with_hint("use a plain read-modify-write on private arrays"),
                );
                return None;
            }
            PlaceOrigin::Buffer if !access.writable || place.space != AddressSpace::Global => {
                self.report_read_only(&access, target.span, &format!("use `{}` on", callee.name));
                return None;
            }
            _ => {}
        }
        let valid = match op {
            AtomicOp::Add => matches!(
                element,
                ScalarType::I32
                    | ScalarType::U32
                    | ScalarType::I64
                    | ScalarType::U64
                    | ScalarType::F32
                    | ScalarType::F64
            ),
            _ => matches!(
                element,
                ScalarType::I32 | ScalarType::U32 | ScalarType::I64 | ScalarType::U64
            ),
        };
        if !valid {
            let allowed = if op == AtomicOp::Add {
                "`i32`, `u32`, `i64`, `u64`, `f32` and `f64`"
            } else {
                "`i32`, `u32`, `i64` and `u64`"
            };
            self.report(
                Diagnostic::error(
                    "E0310",
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

fn statement_if(condition: Expression, accept: Block, reject: Block, span: Span) -> Statement {
    statement(
        StatementKind::If {
            condition,
            accept,
            reject,
        },
        span,
    )
}

fn binary_expression(
    op: BinaryOp,
    left: Expression,
    right: Expression,
    ty: ScalarType,
    span: Span,
) -> Expression {
    Expression {
        kind: ExpressionKind::Binary {
            op,
            left: Box::new(left),
            right: Box::new(right),
        },
        ty,
        span,
    }
}
