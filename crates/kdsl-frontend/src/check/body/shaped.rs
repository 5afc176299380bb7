//! Multi-dimensional buffer parameters (`a: global [[f32]]`): their hidden shape and stride
//! parameters, the flat index of `a[i, j]`, and `a.shape(k)` / `a.stride(k)`.

use super::*;
use kdsl_ir::{ShapedBuffer, CONTIGUOUS_ENTRY_SUFFIX};

/// Appends a shaped buffer's IR parameters to `parameters`: the buffer `name`, then one `u32`
/// extent per dimension (`name.shape0`, ...), then one `u64` stride in elements per dimension
/// (`name.stride0`, ...), outermost dimension first.
pub(super) fn push_shaped_parameters(
    parameters: &mut Vec<Parameter>,
    name: &str,
    buffer: ParameterType,
    rank: u8,
    span: Span,
) -> ShapedBuffer {
    let mut push = |name: String, ty: ParameterType| {
        parameters.push(Parameter { name, ty, span });
        ParameterId(parameters.len() as u32 - 1)
    };
    let buffer = push(name.to_string(), buffer);
    let shape = (0..rank)
        .map(|k| {
            let ty = ParameterType::Scalar {
                ty: ScalarType::U32,
            };
            push(format!("{name}.shape{k}"), ty)
        })
        .collect();
    let strides = (0..rank)
        .map(|k| {
            let ty = ParameterType::Scalar {
                ty: ScalarType::U64,
            };
            push(format!("{name}.stride{k}"), ty)
        })
        .collect();
    ShapedBuffer {
        buffer,
        shape,
        strides,
    }
}

impl Checker<'_> {
    /// The shaped buffer whose buffer parameter is `id` in the function being checked.
    pub(super) fn shaped_buffer(&self, id: ParameterId) -> Option<ShapedBuffer> {
        let state = self.function.as_ref()?;
        state
            .shaped_buffers
            .iter()
            .find(|shaped| shaped.buffer == id)
            .cloned()
    }

    /// Reports (E0313) and returns true when the buffer parameter `id`, used where a flat
    /// buffer is needed (`what`: a vector access, a `global [T]` argument), is
    /// multi-dimensional.
    pub(super) fn refuse_shaped(&mut self, id: ParameterId, span: Span, what: &str) -> bool {
        let Some(shaped) = self.shaped_buffer(id) else {
            return false;
        };
        self.report(
            Diagnostic::error(
                ErrorCode::E0313,
                format!(
                    "{what} takes a flat buffer, not a {}-dimensional one",
                    shaped.rank()
                ),
                span,
                "a multi-dimensional buffer",
            )
            .with_hint(
                "index its elements (`a[i, j]`); a device function takes it as `global [[T]]`",
            ),
        );
        true
    }

    /// The flat element index of `a[i, j, ...]`: `i * stride0 + j * stride1 + ...` in `u64`,
    /// each index checked against its extent ([`ExpressionKind::DimensionIndex`]). The `u64`
    /// operations must not overflow (docs/language.md, "Semantics"), which gives the optimizer
    /// the same no-wrap facts as a hand-written `row * n + col`.
    pub(super) fn shaped_index(
        &self,
        shaped: &ShapedBuffer,
        indices: Vec<Expression>,
    ) -> Expression {
        let u64_expression = |kind, span| Expression {
            id: kdsl_ir::ExprId::UNNUMBERED,
            kind,
            ty: ScalarType::U64,
            span,
        };
        let mut flat: Option<Expression> = None;
        for (dimension, index) in indices.into_iter().enumerate() {
            let span = index.span;
            let checked = u64_expression(
                ExpressionKind::DimensionIndex {
                    index: Box::new(index),
                    buffer: shaped.buffer,
                    dimension: dimension as u8,
                    extent: shaped.shape[dimension],
                },
                span,
            );
            let stride = u64_expression(ExpressionKind::Parameter(shaped.strides[dimension]), span);
            let term = u64_expression(
                ExpressionKind::Binary {
                    op: BinaryOp::Multiply,
                    left: Box::new(checked),
                    right: Box::new(stride),
                },
                span,
            );
            flat = Some(match flat {
                None => term,
                Some(sum) => {
                    let span = sum.span.to(span);
                    u64_expression(
                        ExpressionKind::Binary {
                            op: BinaryOp::Add,
                            left: Box::new(sum),
                            right: Box::new(term),
                        },
                        span,
                    )
                }
            });
        }
        flat.expect("a shaped buffer has at least two dimensions")
    }

    /// The arguments passing the caller's multi-dimensional buffer `argument` (a parameter
    /// name) to a device-function parameter of type `expected` with `rank` dimensions: the
    /// buffer, then the caller's extents and strides.
    pub(super) fn shaped_argument(
        &mut self,
        argument: &ast::Expression,
        expected: &ParameterType,
        rank: u8,
        callee: &str,
    ) -> Option<Vec<Argument>> {
        let describe = |ty: &ParameterType, rank: usize| match ty {
            ParameterType::Buffer {
                element,
                space,
                writable,
                ..
            } => {
                let mutability = if *writable { " mut" } else { "" };
                let element = format!("{}{element}{}", "[".repeat(rank), "]".repeat(rank));
                format!("{space}{mutability} {element}")
            }
            other => other.to_string(),
        };
        let wanted = describe(expected, usize::from(rank));
        let found = match &strip_parentheses(argument).kind {
            E::Name(name) => match self.lookup(&name.name) {
                Resolved::Parameter(id, ty @ ParameterType::Buffer { .. }, declared_at) => {
                    let shaped = self.shaped_buffer(id);
                    Some((id, ty, declared_at, shaped))
                }
                Resolved::Unknown => {
                    self.unknown_name(name);
                    return None;
                }
                Resolved::Binding(Binding::Poisoned) => return None,
                _ => None,
            },
            _ => None,
        };
        let Some((id, found, declared_at, shaped)) = found else {
            let _ = self.expression(argument, None);
            self.report(
                Diagnostic::error(
                    ErrorCode::E0313,
                    format!("`{callee}` takes a `{wanted}` buffer here"),
                    argument.span,
                    "not a multi-dimensional buffer parameter",
                )
                .with_hint("pass a parameter of the calling kernel or function declared with as many dimensions"),
            );
            return None;
        };
        let found_rank = shaped.as_ref().map_or(1, |s| s.rank());
        let (
            ParameterType::Buffer {
                element,
                space,
                writable,
                ..
            },
            ParameterType::Buffer {
                element: found_element,
                space: found_space,
                writable: found_writable,
                ..
            },
        ) = (expected, &found)
        else {
            return None;
        };
        let shaped = match shaped {
            Some(shaped)
                if found_rank == usize::from(rank)
                    && found_element == element
                    && found_space == space =>
            {
                shaped
            }
            _ => {
                self.report(Diagnostic::error(
                    ErrorCode::E0313,
                    format!(
                        "expected a `{wanted}` buffer, found `{}`",
                        describe(&found, found_rank)
                    ),
                    argument.span,
                    "wrong buffer type",
                ));
                return None;
            }
        };
        if *writable && !found_writable {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0402,
                    format!("`{callee}` writes to this buffer, but it is read-only"),
                    argument.span,
                    "read-only buffer",
                )
                .with_label(declared_at, "declared read-only here")
                .with_hint("declare the parameter with `mut`, as `global mut [[T]]`"),
            );
            return None;
        }
        let value = |id: ParameterId, ty: ScalarType| {
            Argument::Value(Expression {
                id: kdsl_ir::ExprId::UNNUMBERED,
                kind: ExpressionKind::Parameter(id),
                ty,
                span: argument.span,
            })
        };
        let mut arguments = vec![Argument::Buffer(id)];
        arguments.extend(shaped.shape.iter().map(|&id| value(id, ScalarType::U32)));
        arguments.extend(shaped.strides.iter().map(|&id| value(id, ScalarType::U64)));
        Some(arguments)
    }

    /// `base.method(arguments)`: `a.shape(k)` (a `u32`, adapting to the integer type its use
    /// asks for like a work-item query) and `a.stride(k)` (a `u64`, in elements) of a shaped
    /// buffer `a`, with `k` a constant below its rank.
    pub(super) fn method_call(
        &mut self,
        base: &ast::Expression,
        method: &ast::Identifier,
        arguments: &[ast::Expression],
        span: Span,
        expected: Option<ScalarType>,
    ) -> Option<Expression> {
        let base = strip_parentheses(base);
        let shaped = match &base.kind {
            E::Name(name) => match self.lookup(&name.name) {
                Resolved::Parameter(id, ParameterType::Buffer { .. }, _) => {
                    self.shaped_buffer(id).map(|shaped| (name, shaped))
                }
                Resolved::Unknown => {
                    self.unknown_name(name);
                    return None;
                }
                Resolved::Binding(Binding::Poisoned) => return None,
                _ => None,
            },
            E::Error => return None,
            _ => None,
        };
        let Some((name, shaped)) = shaped else {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0207,
                    format!("`.{}(...)` needs a multi-dimensional buffer", method.name),
                    base.span,
                    "not a multi-dimensional buffer",
                )
                .with_hint(
                    "`shape` and `stride` are queries of parameters declared `global [[T]]` or `global [[[T]]]`",
                ),
            );
            return None;
        };
        let is_shape = match method.name.as_str() {
            "shape" => true,
            "stride" => false,
            _ => {
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0203,
                        format!("buffer `{}` has no method `{}`", name.name, method.name),
                        method.span,
                        "unknown method",
                    )
                    .with_hint(format!(
                        "a multi-dimensional buffer has `{0}.shape(k)` and `{0}.stride(k)`",
                        name.name
                    )),
                );
                return None;
            }
        };
        let rank = shaped.rank();
        if arguments.len() != 1 {
            self.report(Diagnostic::error(
                ErrorCode::E0307,
                format!(
                    "`{}` takes 1 argument (the dimension), {} given",
                    method.name,
                    arguments.len()
                ),
                span,
                "expected a dimension",
            ));
            return None;
        }
        let dimension = self.expression(&arguments[0], Some(ScalarType::U32))?;
        let value = constant::evaluate(&dimension)
            .ok()
            .and_then(|v| v.as_i128())
            .filter(|v| (0..rank as i128).contains(v));
        let Some(dimension) = value else {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0503,
                    format!(
                        "the dimension of `{}.{}` must be a constant from 0 to {}",
                        name.name,
                        method.name,
                        rank - 1
                    ),
                    arguments[0].span,
                    format!("`{}` has {} dimensions", name.name, rank),
                )
                .with_hint("dimensions are numbered from 0, outermost first"),
            );
            return None;
        };
        let dimension = dimension as usize;
        if is_shape {
            let extent = Expression {
                id: kdsl_ir::ExprId::UNNUMBERED,
                kind: ExpressionKind::Parameter(shaped.shape[dimension]),
                ty: ScalarType::U32,
                span,
            };
            Some(match expected {
                Some(ty) if ty.is_integer() && ty != ScalarType::U32 => Expression {
                    id: kdsl_ir::ExprId::UNNUMBERED,
                    kind: ExpressionKind::Cast {
                        value: Box::new(extent),
                    },
                    ty,
                    span,
                },
                _ => extent,
            })
        } else {
            Some(Expression {
                id: kdsl_ir::ExprId::UNNUMBERED,
                kind: ExpressionKind::Parameter(shaped.strides[dimension]),
                ty: ScalarType::U64,
                span,
            })
        }
    }
}

/// Versions the body of a device function with multi-dimensional buffers for contiguous rows:
/// when every buffer's innermost stride is 1 (a C-contiguous array, or rows sliced from one), a
/// copy of the body with those strides replaced by the literal 1 runs, whose accesses the
/// optimizer sees as consecutive in the innermost index (so the CPU device vectorizes them as
/// it does a hand-written `row * n + col`); otherwise the body as written. The condition is
/// uniform, and folds away where the caller passes the literal 1 (a kernel's contiguous copy).
pub(super) fn specialize_contiguous(body: Block, shaped: &[ShapedBuffer], span: Span) -> Block {
    let innermost: Vec<ParameterId> = shaped
        .iter()
        .filter_map(|shaped| shaped.strides.last().copied())
        .collect();
    let Some(condition) = innermost
        .iter()
        .map(|&stride| Expression {
            id: kdsl_ir::ExprId::UNNUMBERED,
            kind: ExpressionKind::Binary {
                op: BinaryOp::Equal,
                left: Box::new(Expression {
                    id: kdsl_ir::ExprId::UNNUMBERED,
                    kind: ExpressionKind::Parameter(stride),
                    ty: ScalarType::U64,
                    span,
                }),
                right: Box::new(unit_stride(span)),
            },
            ty: ScalarType::Bool,
            span,
        })
        .reduce(|all, next| Expression {
            id: kdsl_ir::ExprId::UNNUMBERED,
            kind: ExpressionKind::ShortCircuit {
                op: LogicalOp::And,
                left: Box::new(all),
                right: Box::new(next),
            },
            ty: ScalarType::Bool,
            span,
        })
    else {
        return body;
    };
    vec![Statement {
        kind: StatementKind::If {
            condition,
            accept: with_unit_strides(&body, &innermost),
            reject: body,
        },
        span,
    }]
}

/// The contiguous copy of a kernel with multi-dimensional buffers: an entry point of its own
/// (named with [`CONTIGUOUS_ENTRY_SUFFIX`]) whose innermost strides are the literal 1, which a
/// host launches instead of the kernel when every innermost stride is 1. A separate entry
/// point, not a branch in the body, because the CPU device's vectorizer keeps both branches
/// of a uniform test inside its work-item loop (docs/benchmarks.md, 2026-12-04). `None` for a
/// kernel without such buffers.
pub(in crate::check) fn contiguous_copy(kernel: &Function) -> Option<Function> {
    let innermost: Vec<ParameterId> = kernel.innermost_strides().collect();
    if innermost.is_empty() {
        return None;
    }
    Some(Function {
        name: format!("{}{CONTIGUOUS_ENTRY_SUFFIX}", kernel.name),
        body: with_unit_strides(&kernel.body, &innermost),
        ..kernel.clone()
    })
}

/// `body` with every read of the parameters `strides` replaced by the literal 1.
fn with_unit_strides(body: &Block, strides: &[ParameterId]) -> Block {
    let mut copy = body.clone();
    kdsl_ir::visit_mut::rewrite_block(&mut copy, &mut |expression| {
        if matches!(expression.kind, ExpressionKind::Parameter(id) if strides.contains(&id)) {
            *expression = unit_stride(expression.span);
        }
    });
    copy
}

fn unit_stride(span: Span) -> Expression {
    Expression {
        id: kdsl_ir::ExprId::UNNUMBERED,
        kind: ExpressionKind::Literal(Literal::Integer(1)),
        ty: ScalarType::U64,
        span,
    }
}
