//! Checking and lowering of function bodies, split by concern: scopes, statements (with
//! their desugaring), expressions, places, and calls with the built-ins.

mod aggregates;
mod async_copy;
mod calls;
mod expressions;
mod matrix;
mod places;
mod print;
mod records;
mod scopes;
pub(super) mod shaped;
mod statements;
mod tile_copy;
mod tuples;
mod vectors;

use super::attributes::{work_group_size_constant, work_group_size_hint, WorkGroupSize};
use super::constant::{self, integer_range};
use super::suggestions::Builtin;
use super::{
    block_has_errors, describe_type, ir_kind, suggest, tuple_result_parameter, Checker, Global,
    ParameterShape, ResolvedType, VectorType,
};
use crate::ast::{
    self, AssignOperator, BinaryOperator, ExpressionKind as E, StatementKind as S, UnaryOperator,
};
use kdsl_ir::scalar;
use kdsl_ir::ErrorCode;
use kdsl_ir::{
    AddressSpace, Argument, ArrayType, AtomicOp, BinaryOp, Block, Diagnostic, Expression,
    ExpressionKind, FenceFlags, Function, FunctionKind, Literal, LogicalOp, Parameter, ParameterId,
    ParameterType, Place, PlaceBase, ScalarType, Span, Statement, StatementKind, UnaryOp, Unroll,
    Variable, VariableId, VariableType,
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
    /// A tuple: a variable (or, for a tuple parameter, a parameter) per element.
    Tuple {
        elements: Vec<TupleElement>,
        types: Vec<ScalarType>,
        mutable: bool,
        span: Span,
    },
    /// A vector: a variable (or, for a vector parameter, a parameter) per component.
    Vector {
        components: Vec<TupleElement>,
        ty: VectorType,
        mutable: bool,
        span: Span,
    },
    /// A whole record (`let n = nodes[i];`): a variable per field, in declaration order.
    Record {
        fields: Vec<VariableId>,
        record: Box<kdsl_ir::RecordType>,
        mutable: bool,
        span: Span,
    },
    /// A binding whose declaration failed to check; its uses report nothing more.
    Poisoned,
}

/// Where one element of a tuple binding lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TupleElement {
    Variable(VariableId),
    Parameter(ParameterId),
}

/// The function body being checked.
pub(crate) struct FunctionState {
    kind: FunctionKind,
    name: String,
    return_type: Option<ScalarType>,
    /// For a function returning a tuple: the hidden array parameter and type of each element.
    tuple_result: Option<Vec<(ParameterId, ScalarType)>>,
    /// For a function returning a vector (through `tuple_result`): its type.
    vector_result: Option<VectorType>,
    parameters: Vec<Parameter>,
    variables: Vec<Variable>,
    scopes: Vec<Vec<(String, Binding)>>,
    loop_depth: u32,
    /// Parameters whose types failed to resolve; their uses report nothing more.
    poisoned_parameters: Vec<String>,
    /// The kernel's `#[work_group_size]`, which gives its body `WORK_GROUP_SIZE_X` and friends.
    work_group_size: WorkGroupSize,
    /// The multi-dimensional buffer parameters.
    shaped_buffers: Vec<kdsl_ir::ShapedBuffer>,
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
    /// An array parameter (`local [T; N]`), whose writability its declaration states.
    array_parameter: bool,
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

impl PlaceOrigin {
    /// A local or private array's.
    fn of_array(space: AddressSpace) -> PlaceOrigin {
        if space == AddressSpace::Local {
            PlaceOrigin::LocalArray
        } else {
            PlaceOrigin::PrivateArray
        }
    }
}

fn literal_expression(literal: Literal, ty: ScalarType, span: Span) -> Expression {
    Expression {
        id: kdsl_ir::ExprId::UNNUMBERED,
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
        id: kdsl_ir::ExprId::UNNUMBERED,
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
        id: kdsl_ir::ExprId::UNNUMBERED,
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
        E::If { accept, reject, .. } => is_untyped(accept) && is_untyped(reject),
        // Work-item queries adapt to their use like literals (see `builtin`).
        E::Call { callee, .. } => {
            matches!(Builtin::from_name(&callee.name), Some(Builtin::WorkItem(_)))
        }
        // So does a buffer's `shape(k)`.
        E::MethodCall { method, .. } => method.name == "shape",
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
    pub(crate) fn check_function(
        &mut self,
        item: &ast::FunctionItem,
        name: &str,
    ) -> Option<Function> {
        let kind = ir_kind(item.kind);
        let saved_suppress = self.suppress_unknown_names;
        let has_syntax_errors = block_has_errors(&item.body);
        self.suppress_unknown_names |= has_syntax_errors;

        let mut parameters: Vec<Parameter> = Vec::new();
        let mut poisoned_parameters = Vec::new();
        let mut tuple_parameters = Vec::new();
        let mut shaped_buffers = Vec::new();
        let mut parameters_ok = true;
        let mut seen: Vec<&ast::Parameter> = Vec::new();
        for parameter in &item.parameters {
            if let Some(previous) = seen.iter().find(|p| p.name.name == parameter.name.name) {
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0205,
                        format!("parameter `{}` is declared twice", parameter.name.name),
                        parameter.name.span,
                        "declared again here",
                    )
                    .with_label(previous.span, "first declared here"),
                );
                parameters_ok = false;
                continue;
            }
            seen.push(parameter);
            match self.resolve_parameter(parameter, kind == FunctionKind::Kernel) {
                Some(ParameterShape::Single(ty)) => parameters.push(Parameter {
                    name: parameter.name.name.clone(),
                    ty,
                    span: parameter.span,
                }),
                Some(ParameterShape::Tuple(types)) => {
                    let mut elements = Vec::with_capacity(types.len());
                    for (index, &ty) in types.iter().enumerate() {
                        elements.push(TupleElement::Parameter(
                            ParameterId(parameters.len() as u32),
                        ));
                        parameters.push(Parameter {
                            name: format!("{}.{index}", parameter.name.name),
                            ty: ParameterType::Scalar { ty },
                            span: parameter.span,
                        });
                    }
                    let binding = Binding::Tuple {
                        elements,
                        types,
                        mutable: false,
                        span: parameter.name.span,
                    };
                    tuple_parameters.push((parameter.name.name.clone(), binding));
                }
                Some(ParameterShape::Vector(ty)) => {
                    let mut components = Vec::with_capacity(usize::from(ty.width));
                    for index in 0..ty.width {
                        components.push(TupleElement::Parameter(ParameterId(
                            parameters.len() as u32
                        )));
                        parameters.push(Parameter {
                            name: format!(
                                "{}.{}",
                                parameter.name.name,
                                vectors::component_name(index)
                            ),
                            ty: ParameterType::Scalar { ty: ty.element },
                            span: parameter.span,
                        });
                    }
                    let binding = Binding::Vector {
                        components,
                        ty,
                        mutable: false,
                        span: parameter.name.span,
                    };
                    tuple_parameters.push((parameter.name.name.clone(), binding));
                }
                Some(ParameterShape::Shaped { buffer, rank }) => {
                    shaped_buffers.push(shaped::push_shaped_parameters(
                        &mut parameters,
                        &parameter.name.name,
                        buffer,
                        rank,
                        parameter.span,
                    ));
                }
                None => {
                    parameters_ok = false;
                    poisoned_parameters.push(parameter.name.name.clone());
                }
            }
        }
        let (return_type, tuple_types, vector_result) =
            self.resolve_result(item).unwrap_or_default();
        let tuple_result = tuple_types.map(|types| {
            types
                .iter()
                .enumerate()
                .map(|(index, &ty)| {
                    let id = ParameterId(parameters.len() as u32);
                    parameters.push(Parameter {
                        name: format!("result.{index}"),
                        ty: tuple_result_parameter(ty),
                        span: item.return_type.as_ref().map_or(item.span, |t| t.span()),
                    });
                    (id, ty)
                })
                .collect::<Vec<_>>()
        });
        let work_group_size = self.function_attributes(item);
        self.function = Some(FunctionState {
            kind,
            name: name.to_string(),
            return_type,
            tuple_result: tuple_result.clone(),
            vector_result,
            parameters: parameters.clone(),
            variables: Vec::new(),
            scopes: vec![tuple_parameters],
            loop_depth: 0,
            poisoned_parameters,
            work_group_size,
            shaped_buffers,
        });
        let body = self.statements(&item.body.statements);
        let result_name = match (&tuple_result, return_type) {
            (Some(_), _) => item
                .return_type
                .as_ref()
                .map(|ty| match self.resolve_type(ty) {
                    Some(resolved) => describe_type(&resolved),
                    None => String::new(),
                }),
            (None, ty) => ty.map(|ty| ty.to_string()),
        };
        if let (Some(ty), false) = (result_name, has_syntax_errors) {
            if !always_returns(&item.body) {
                let end = item.body.span.end as usize;
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0505,
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
        // A kernel's contiguous form is an entry point of its own (`shaped::contiguous_copy`); a
        // device function keeps both forms in its body, chosen where it is called.
        let body = match kind {
            FunctionKind::Kernel => body,
            FunctionKind::Device => {
                shaped::specialize_contiguous(body, &state.shaped_buffers, item.body.span)
            }
        };
        parameters_ok.then(|| Function {
            name: name.to_string(),
            kind,
            parameters,
            return_type,
            variables: state.variables,
            body,
            span: item.span,
            work_group_size: work_group_size.required(),
            shaped_buffers: state.shaped_buffers,
            contiguous_entry: None,
            contiguous_copy_of: None,
        })
    }

    // ----- Statements -----
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
        id: kdsl_ir::ExprId::UNNUMBERED,
        kind: ExpressionKind::Binary {
            op,
            left: Box::new(left),
            right: Box::new(right),
        },
        ty,
        span,
    }
}

/// The value of a constant `u32` expression (a literal, a module constant, arithmetic on them).
fn constant_u32(value: &Expression) -> Option<u32> {
    constant::evaluate(value)
        .ok()
        .and_then(|v| v.as_i128())
        .and_then(|v| u32::try_from(v).ok())
}
