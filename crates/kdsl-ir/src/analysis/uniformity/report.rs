//! The uniformity diagnostics: E0518 (work-group) and E0519 (sub-group), with the condition,
//! exit or value that made control or an operand divergent.

use super::levels::{Cause, CauseKind, Control, Need, Origin, Value};
use super::walk::FunctionAnalysis;
use super::Uniformity;
use crate::codes::ErrorCode;
use crate::diagnostic::Diagnostic;
use crate::ir::*;
use crate::span::Span;

impl FunctionAnalysis<'_, '_> {
    /// A broadcast's source (lane or local id) must be the same in every work-item of the
    /// sub-group (`allowed` = `SubGroup`) or work-group (`Uniform`).
    pub(super) fn require_same_argument(
        &mut self,
        operation: &str,
        argument: &Expression,
        value: Value,
        allowed: Uniformity,
    ) {
        if value.level <= allowed {
            return;
        }
        let (code, group, instead) = if allowed == Uniformity::Uniform {
            (ErrorCode::E0518, "work-group", "local memory and a barrier")
        } else {
            (ErrorCode::E0519, "sub-group", "`sub_group_shuffle`")
        };
        let label = match value.origin {
            Some(origin) => format!(
                "depends on {}",
                describe_origin(self.analyzer.module, origin)
            ),
            None => "differs between work-items".to_string(),
        };
        self.diagnostics.push(
            Diagnostic::error(
                code,
                format!(
                    "the source of `{operation}` must be the same in every work-item of the {group}"
                ),
                argument.span,
                label,
            )
            .with_hint(format!(
                "to read a different work-item's value in each work-item, use {instead}"
            )),
        );
    }

    /// A matrix statement's offset, stride or fill value must be the same in every work-item
    /// of the sub-group (`matrix_mma`, ...) or matrix group (`matrix_group_mma`); a tile
    /// copy's corner and destination in every work-item of the work-group (`allowed`).
    pub(super) fn require_same_operand(
        &mut self,
        operation: &str,
        operand: &Expression,
        value: Value,
        allowed: Uniformity,
    ) {
        if value.level <= allowed {
            return;
        }
        let label = match value.origin {
            Some(origin) => format!(
                "depends on {}",
                describe_origin(self.analyzer.module, origin)
            ),
            None => "differs between work-items".to_string(),
        };
        let hint = if allowed == Uniformity::Uniform {
            "compute the local element, the corner and the slot from kernel arguments, \
             constants, group ids and counters the whole work-group shares"
        } else if is_matrix_group(operation) {
            "compute offsets and chunk strides from kernel arguments, constants, group ids and \
             the matrix group's index, `get_matrix_group_id()`"
        } else {
            "compute offsets, strides and fill values from kernel arguments, constants, group \
             ids and `get_sub_group_id()`"
        };
        self.diagnostics.push(
            Diagnostic::error(
                ErrorCode::E0519,
                format!(
                    "the operands of `{operation}` must be the same in every work-item of the {}",
                    group_name(operation, allowed)
                ),
                operand.span,
                label,
            )
            .with_hint(hint),
        );
    }

    /// Checks an operation that needs control at most `need.allowed` divergent.
    pub(super) fn require(
        &mut self,
        need: Need,
        span: Span,
        control: Control,
        callee: Option<FunctionId>,
    ) {
        self.needs = Need::join(self.needs, need);
        if control.level <= need.allowed {
            return;
        }
        let module = self.analyzer.module;
        let code = if need.allowed == Uniformity::Uniform {
            ErrorCode::E0518
        } else {
            ErrorCode::E0519
        };
        let group = group_name(need.operation, need.allowed);
        let operation = format!("`{}`", need.operation);
        let (message, label) = match callee {
            None => (
                format!("{operation} is not reached by every work-item of the {group}"),
                format!("not every work-item of the {group} gets here"),
            ),
            Some(callee) => {
                let name = &module.function(callee).name;
                (
                    format!(
                        "`{name}` calls {operation} but is not called by every work-item of the \
                         {group}"
                    ),
                    format!("not every work-item of the {group} makes this call"),
                )
            }
        };
        let mut diagnostic = Diagnostic::error(code, message, span, label);
        if let Some(cause) = control.cause {
            diagnostic = diagnostic.with_label(cause.span, describe_cause(module, cause, control));
        }
        let hint = if is_matrix_group(need.operation) {
            format!(
                "move {operation} out of the divergent code: all 128 work-items of a matrix group \
                 reach it together, so make the conditions that lead to it the same in each \
                 matrix group (kernel arguments, constants, group ids)"
            )
        } else if need.allowed == Uniformity::Uniform {
            format!(
                "move {operation} out of the divergent code, or make the conditions that lead to \
                 it depend only on kernel arguments, constants and group ids"
            )
        } else {
            format!(
                "move {operation} out of the divergent code, or make the conditions that lead to \
                 it the same in every work-item of a sub-group (kernel arguments, constants, \
                 group ids, sub-group reductions)"
            )
        };
        self.diagnostics.push(diagnostic.with_hint(hint));
    }
}

/// Whether `operation` is a matrix group's statement, whose work-items must agree like a
/// sub-group's (the analysis checks them at that level: sub-groups never straddle matrix
/// groups).
fn is_matrix_group(operation: &str) -> bool {
    [
        crate::matrix::GROUP_MULTIPLY_ADD,
        crate::matrix::GROUP_MULTIPLY_ADD_ASYNC,
        crate::matrix::GROUP_WAIT,
    ]
    .contains(&operation)
}

/// The work-items that must reach `operation` together, and agree on its operands, at level
/// `allowed`.
fn group_name(operation: &str, allowed: Uniformity) -> &'static str {
    if is_matrix_group(operation) {
        "matrix group"
    } else if allowed == Uniformity::Uniform {
        "work-group"
    } else {
        "sub-group"
    }
}

/// Where to point at a condition. A `for` loop lowers to a loop that starts with
/// `if !(i < end) { break; }`, all of it spanning the whole loop: point at the loop's head,
/// `for i in start..end`, instead.
pub(super) fn condition_span(condition: &Expression, statement: Span) -> Span {
    if condition.span == statement {
        if let ExpressionKind::Unary {
            op: UnaryOp::Not,
            operand,
        } = &condition.kind
        {
            if let ExpressionKind::Binary { right, .. } = &operand.kind {
                if operand.span == statement && right.span.end > statement.start {
                    return Span {
                        start: statement.start,
                        end: right.span.end.min(statement.end),
                    };
                }
            }
        }
    }
    condition.span
}

/// The secondary label: why control is divergent at the operation.
pub(super) fn describe_cause(module: &Module, cause: Cause, control: Control) -> String {
    let origin = describe_origin(module, cause.origin);
    let qualifier = if control.level == Uniformity::SubGroup {
        ", which is the same only within a sub-group"
    } else {
        ""
    };
    match cause.kind {
        CauseKind::Condition => format!("this condition depends on {origin}{qualifier}"),
        CauseKind::LoopCondition => format!(
            "work-items run this loop a different number of times: its condition depends on \
             {origin}{qualifier}"
        ),
        CauseKind::Return => {
            format!("some work-items return here: the condition depends on {origin}{qualifier}")
        }
        CauseKind::Break => format!(
            "some work-items leave the loop here: the condition depends on {origin}{qualifier}"
        ),
        CauseKind::Continue => format!(
            "some work-items skip the rest of the loop body here: the condition depends on \
             {origin}{qualifier}"
        ),
    }
}

pub(super) fn describe_origin(module: &Module, origin: Origin) -> String {
    match origin {
        Origin::Builtin(name) => format!("`{name}`"),
        Origin::Load(function, base) => {
            let function = module.function(function);
            let name = match base {
                PlaceBase::Parameter(id) => &function.parameter(id).name,
                PlaceBase::Variable(id) => &function.variable(id).name,
            };
            format!("a value read from `{name}`")
        }
        Origin::Atomic(name) => format!("the result of `{name}`"),
        Origin::Assigned(function, variable) => format!(
            "`{}`, which is assigned under a condition that differs between work-items",
            module.function(function).variable(variable).name
        ),
        Origin::Parameter(function, parameter) => format!(
            "the parameter `{}`, which is given a value that differs between work-items",
            module.function(function).parameter(parameter).name
        ),
    }
}
