//! Expressions, calls and collectives.

use super::FunctionValidator;
use crate::builtins::{Builtin, Operands};
use crate::ir::*;
use crate::span::Span;
use crate::types::{AddressSpace, ParameterType, ScalarType};

impl FunctionValidator<'_> {
    pub(super) fn call(
        &mut self,
        expression: &Expression,
        as_statement: bool,
    ) -> Option<ScalarType> {
        let ExpressionKind::Call {
            function,
            arguments,
        } = &expression.kind
        else {
            return None;
        };
        let span = expression.span;
        let Some(callee) = self.module.functions.get(function.0 as usize) else {
            self.error(
                span,
                format!("calls function #{} that does not exist", function.0),
            );
            return None;
        };
        if function.0 as usize >= self.index {
            self.error(
                span,
                format!(
                    "calls `{}`, which does not come before the caller",
                    callee.name
                ),
            );
        }
        if callee.kind == FunctionKind::Kernel {
            self.error(span, format!("calls kernel `{}`", callee.name));
        }
        if arguments.len() != callee.parameters.len() {
            self.error(
                span,
                format!(
                    "passes {} arguments to `{}`, which takes {}",
                    arguments.len(),
                    callee.name,
                    callee.parameters.len()
                ),
            );
        }
        for (argument, parameter) in arguments.iter().zip(&callee.parameters) {
            match (argument, &parameter.ty) {
                (Argument::Value(value), ParameterType::Scalar { ty }) => {
                    if let Some(found) = self.expression(value) {
                        if found != *ty {
                            self.error(
                                value.span,
                                format!(
                                    "passes a `{found}` for parameter `{}` of type `{ty}`",
                                    parameter.name
                                ),
                            );
                        }
                    }
                }
                (Argument::Buffer(id), expected @ ParameterType::Buffer { .. }) => {
                    match self.function.parameters.get(id.0 as usize).map(|p| &p.ty) {
                        Some(ParameterType::Buffer {
                            element,
                            space,
                            writable,
                            record,
                        }) => {
                            let ParameterType::Buffer {
                                element: expected_element,
                                space: expected_space,
                                writable: expected_writable,
                                record: expected_record,
                            } = expected
                            else {
                                continue;
                            };
                            if element != expected_element
                                || space != expected_space
                                || record != expected_record
                            {
                                self.error(
                                    span,
                                    format!("passes buffer %{} as `{expected}`", id.0),
                                );
                            }
                            if *expected_writable && !writable {
                                self.error(
                                    span,
                                    format!("passes read-only buffer %{} as writable", id.0),
                                );
                            }
                        }
                        _ => self.error(
                            span,
                            format!("passes %{} as a buffer, but it is not one", id.0),
                        ),
                    }
                }
                (
                    Argument::Array(base),
                    ParameterType::Array {
                        ty,
                        space,
                        writable,
                    },
                ) => match self.array_of(*base) {
                    Some((found, found_space, found_writable)) => {
                        if found != *ty || found_space != *space {
                            self.error(
                                span,
                                format!(
                                    "passes a `{found_space} {found}` array as `{}`",
                                    parameter.ty
                                ),
                            );
                        }
                        if *writable && !found_writable {
                            self.error(span, "passes a read-only array as writable");
                        }
                    }
                    None => self.error(
                        span,
                        format!("passes {base:?} as an array, but it is not one"),
                    ),
                },
                _ => self.error(
                    span,
                    format!("argument kind differs from parameter `{}`", parameter.name),
                ),
            }
        }
        match callee.return_type {
            Some(ty) => {
                if ty != expression.ty {
                    self.error(
                        span,
                        format!(
                            "call has type `{}`, but `{}` returns `{ty}`",
                            expression.ty, callee.name
                        ),
                    );
                }
                Some(ty)
            }
            None => {
                if !as_statement {
                    self.error(
                        span,
                        format!(
                            "uses the result of `{}`, which returns nothing",
                            callee.name
                        ),
                    );
                }
                None
            }
        }
    }

    /// Checks an expression and returns its type, or `None` when it has none to compare.
    pub(super) fn expression(&mut self, expression: &Expression) -> Option<ScalarType> {
        let ty = expression.ty;
        let span = expression.span;
        match &expression.kind {
            ExpressionKind::Literal(literal) => {
                let fits = match literal {
                    Literal::Bool(_) => ty == ScalarType::Bool,
                    Literal::Integer(bits) => {
                        ty.is_integer() && (ty.bit_width() >= 64 || *bits >> ty.bit_width() == 0)
                    }
                    Literal::Float(_) => ty.is_float(),
                };
                if !fits {
                    self.error(
                        span,
                        format!("literal {literal:?} does not fit type `{ty}`"),
                    );
                }
            }
            ExpressionKind::Parameter(id) => {
                match self.function.parameters.get(id.0 as usize).map(|p| &p.ty) {
                    Some(ParameterType::Scalar { ty: declared }) => {
                        if *declared != ty {
                            self.error(
                                span,
                                format!("parameter %{} is `{declared}`, used as `{ty}`", id.0),
                            );
                        }
                    }
                    Some(_) => self.error(span, format!("buffer %{} used as a value", id.0)),
                    None => self.error(span, format!("parameter %{} does not exist", id.0)),
                }
            }
            ExpressionKind::Variable(id) => {
                match self.function.variables.get(id.0 as usize).map(|v| &v.ty) {
                    Some(VariableType::Scalar { ty: declared }) => {
                        if *declared != ty {
                            self.error(
                                span,
                                format!("variable ${} is `{declared}`, used as `{ty}`", id.0),
                            );
                        }
                    }
                    Some(_) => self.error(span, format!("array ${} used as a value", id.0)),
                    None => self.error(span, format!("variable ${} does not exist", id.0)),
                }
            }
            ExpressionKind::Load(place) => {
                self.place(place, span, false);
                if place.element != ty {
                    self.error(
                        span,
                        format!("load of a `{}` element has type `{ty}`", place.element),
                    );
                }
            }
            ExpressionKind::VectorLoad {
                place,
                width,
                component,
            } => {
                self.vector_place(place, usize::from(*width), span, false);
                if place.element != ty || component >= width {
                    self.error(
                        span,
                        format!(
                            "component {component} of a `{}` vector of {width} has type `{ty}`",
                            place.element
                        ),
                    );
                }
            }
            ExpressionKind::Unary { op, operand } => {
                if let Some(operand_type) = self.expression(operand) {
                    let valid = match op {
                        UnaryOp::Negate => {
                            operand_type.is_signed_integer() || operand_type.is_float()
                        }
                        UnaryOp::Not => operand_type == ScalarType::Bool,
                        UnaryOp::BitNot => operand_type.is_integer(),
                    };
                    if !valid || operand_type != ty {
                        self.error(span, format!("{op:?} of `{operand_type}` typed `{ty}`"));
                    }
                }
            }
            ExpressionKind::Binary { op, left, right } => {
                let (l, r) = (self.expression(left), self.expression(right));
                if let (Some(l), Some(r)) = (l, r) {
                    let valid = if op.is_shift() {
                        l.is_integer() && r.is_integer() && ty == l
                    } else if op.is_comparison() {
                        l == r
                            && ty == ScalarType::Bool
                            && (matches!(op, BinaryOp::Equal | BinaryOp::NotEqual)
                                || l.is_numeric())
                    } else {
                        let operands = match op {
                            BinaryOp::BitAnd | BinaryOp::BitOr | BinaryOp::BitXor => {
                                l.is_integer() || l == ScalarType::Bool
                            }
                            _ => l.is_numeric(),
                        };
                        l == r && ty == l && operands
                    };
                    if !valid {
                        self.error(span, format!("{op:?} of `{l}` and `{r}` typed `{ty}`"));
                    }
                }
            }
            ExpressionKind::ShortCircuit { left, right, .. } => {
                for operand in [left, right] {
                    if let Some(t) = self.expression(operand) {
                        if t != ScalarType::Bool {
                            self.error(operand.span, format!("logical operand has type `{t}`"));
                        }
                    }
                }
                if ty != ScalarType::Bool {
                    self.error(span, format!("logical operation typed `{ty}`"));
                }
            }
            ExpressionKind::Cast { value } => {
                self.expression(value);
            }
            ExpressionKind::DimensionIndex {
                index,
                buffer,
                dimension,
                extent,
            } => {
                if self.expression(index).is_some_and(|t| !t.is_integer()) {
                    self.error(index.span, "a dimension index is not an integer");
                }
                if ty != ScalarType::U64 {
                    self.error(span, format!("a dimension index typed `{ty}`"));
                }
                let declared = self.function.shaped_buffers.iter().any(|shaped| {
                    shaped.buffer == *buffer
                        && shaped.shape.get(usize::from(*dimension)) == Some(extent)
                });
                if !declared {
                    self.error(
                        span,
                        format!(
                            "%{} is not the extent of dimension {dimension} of buffer %{}",
                            extent.0, buffer.0
                        ),
                    );
                }
            }
            ExpressionKind::Select {
                condition,
                accept,
                reject,
            } => {
                self.condition(condition);
                let (a, r) = (self.expression(accept), self.expression(reject));
                if a.is_some_and(|a| a != ty) || r.is_some_and(|r| r != ty) {
                    self.error(span, format!("`select` arms differ from its type `{ty}`"));
                }
            }
            ExpressionKind::Conditional {
                condition,
                accept,
                reject,
            } => {
                self.condition(condition);
                let (a, r) = (self.expression(accept), self.expression(reject));
                if a.is_some_and(|a| a != ty) || r.is_some_and(|r| r != ty) {
                    self.error(span, format!("`if` arms differ from its type `{ty}`"));
                }
            }
            ExpressionKind::Call { .. } => return self.call(expression, false),
            ExpressionKind::WorkItem { dimension, .. } => {
                if *dimension > 2 {
                    self.error(
                        span,
                        format!("work-item dimension {dimension} is not 0, 1 or 2"),
                    );
                }
                if ty != ScalarType::U32 {
                    self.error(span, format!("work-item query typed `{ty}`, not `u32`"));
                }
            }
            ExpressionKind::Math {
                function,
                arguments,
            } => {
                if arguments.len() != function.arity() {
                    self.error(
                        span,
                        format!("`{}` has {} arguments", function.name(), arguments.len()),
                    );
                }
                let operand = MathFunction::operand_type(arguments, ty);
                for argument in arguments {
                    if self.expression(argument).is_some_and(|t| t != operand) {
                        self.error(
                            argument.span,
                            format!("argument of `{}` is not `{operand}`", function.name()),
                        );
                    }
                }
                if function.result_type(operand) != ty {
                    self.error(
                        span,
                        format!(
                            "`{}` on `{operand}` typed `{ty}`, not `{}`",
                            function.name(),
                            function.result_type(operand)
                        ),
                    );
                }
                if !function.types().contains(operand) {
                    self.error(span, format!("`{}` on `{operand}`", function.name()));
                }
            }
            ExpressionKind::Atomic {
                op,
                place,
                value,
                comparand,
            } => {
                self.place(place, span, true);
                if !(place.space == AddressSpace::Global || place.space == AddressSpace::Local) {
                    self.error(span, format!("atomic on {} memory", place.space));
                }
                let valid = op.types().contains(place.element);
                if !valid {
                    self.error(
                        span,
                        format!("`{}` on `{}` elements", op.name(), place.element),
                    );
                }
                if ty != place.element {
                    self.error(span, "atomic result type differs from the element type");
                }
                if self.expression(value).is_some_and(|t| t != place.element) {
                    self.error(
                        value.span,
                        "atomic operand type differs from the element type",
                    );
                }
                match (op, comparand) {
                    (AtomicOp::CompareExchange, Some(comparand)) => {
                        if self
                            .expression(comparand)
                            .is_some_and(|t| t != place.element)
                        {
                            self.error(
                                comparand.span,
                                "comparand type differs from the element type",
                            );
                        }
                    }
                    (AtomicOp::CompareExchange, None) => {
                        self.error(span, "compare-exchange without comparand")
                    }
                    (_, Some(_)) => {
                        self.error(span, "comparand on an atomic other than compare-exchange")
                    }
                    (_, None) => {}
                }
            }
            ExpressionKind::SubGroup { op, arguments } => {
                self.collective(Builtin::SubGroup(*op), arguments, ty, span)
            }
            ExpressionKind::WorkGroup { op, arguments } => {
                self.collective(Builtin::WorkGroup(*op), arguments, ty, span)
            }
        }
        Some(ty)
    }
}

impl FunctionValidator<'_> {
    /// A sub-group or work-group operation: arguments and result as its row says.
    pub(super) fn collective(
        &mut self,
        builtin: Builtin,
        arguments: &[Expression],
        ty: ScalarType,
        span: Span,
    ) {
        let row = builtin.row();
        let types: Vec<Option<ScalarType>> = arguments.iter().map(|a| self.expression(a)).collect();
        if arguments.len() != row.operands.arity() {
            self.error(
                span,
                format!("`{}` has {} arguments", row.name, arguments.len()),
            );
            return;
        }
        let operand = types.first().copied().flatten();
        if let (Some(operand), Some(accepted)) = (operand, row.operands.types()) {
            if !accepted.contains(operand) {
                self.error(span, format!("`{}` on `{operand}`", row.name));
            }
        }
        if matches!(row.operands, Operands::ValueAndLane { .. })
            && types[1].is_some_and(|t| t != ScalarType::U32)
        {
            self.error(span, format!("lane of `{}` is not `u32`", row.name));
        }
        let expected = row.result_type(operand.or(Some(ty)));
        if (operand.is_some() || arguments.is_empty()) && expected != Some(ty) {
            self.error(span, format!("`{}` typed `{ty}`", row.name));
        }
    }
}
