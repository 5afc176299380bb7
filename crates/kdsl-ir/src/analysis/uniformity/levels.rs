//! The level of a value and of the control flow at a point, each with where its
//! non-uniformity comes from, for the diagnostics.

use super::Uniformity;
use crate::ir::*;
use crate::span::Span;

/// Where a non-uniform value comes from, for the diagnostics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Origin {
    /// A built-in query or operation.
    Builtin(&'static str),
    /// A read of memory.
    Load(FunctionId, PlaceBase),
    /// The old value an atomic returns.
    Atomic(&'static str),
    /// A variable assigned under divergent control.
    Assigned(FunctionId, VariableId),
    /// A parameter of a device function given a non-uniform argument.
    Parameter(FunctionId, ParameterId),
}

/// A value's level and, unless uniform, where the non-uniformity comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Value {
    pub(super) level: Uniformity,
    pub(super) origin: Option<Origin>,
}

impl Value {
    pub(super) const UNIFORM: Value = Value {
        level: Uniformity::Uniform,
        origin: None,
    };

    pub(super) fn new(level: Uniformity, origin: Origin) -> Value {
        if level == Uniformity::Uniform {
            Value::UNIFORM
        } else {
            Value {
                level,
                origin: Some(origin),
            }
        }
    }

    /// The least uniform of both; on a tie the first, so an origin once found stays.
    pub(super) fn join(self, other: Value) -> Value {
        if other.level > self.level {
            other
        } else {
            self
        }
    }
}

pub(super) fn join_values(into: &mut [Value], other: &[Value]) {
    for (value, other) in into.iter_mut().zip(other) {
        *value = value.join(*other);
    }
}

pub(super) fn same_levels(a: &[Value], b: &[Value]) -> bool {
    a.iter().zip(b).all(|(a, b)| a.level == b.level)
}

/// Why control is divergent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum CauseKind {
    /// An `if` (or `&&`, `||`) condition.
    Condition,
    /// A loop's own condition: work-items run different numbers of iterations.
    LoopCondition,
    /// An earlier `return` taken by some work-items only.
    Return,
    /// A `break` taken by some work-items only.
    Break,
    /// A `continue` taken by some work-items only.
    Continue,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Cause {
    pub(super) span: Span,
    pub(super) kind: CauseKind,
    /// What the deciding condition depends on.
    pub(super) origin: Origin,
}

/// The level of the control flow at a point, with the place that made it divergent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Control {
    pub(super) level: Uniformity,
    pub(super) cause: Option<Cause>,
}

impl Control {
    pub(super) const UNIFORM: Control = Control {
        level: Uniformity::Uniform,
        cause: None,
    };

    /// Control under a condition of value `condition`.
    pub(super) fn condition(condition: Value, span: Span) -> Control {
        match condition.origin {
            Some(origin) if condition.level > Uniformity::Uniform => Control {
                level: condition.level,
                cause: Some(Cause {
                    span,
                    kind: CauseKind::Condition,
                    origin,
                }),
            },
            _ => Control::UNIFORM,
        }
    }

    pub(super) fn join(self, other: Control) -> Control {
        if other.level > self.level {
            other
        } else {
            self
        }
    }

    /// What an exit (`return`, `break`, `continue`) under this control does to the code that
    /// some work-items still run after it. An exit under control that an earlier exit already
    /// made divergent keeps that earlier cause.
    pub(super) fn exit(self, span: Span, kind: CauseKind) -> Control {
        match self.cause {
            Some(cause)
                if matches!(cause.kind, CauseKind::Condition | CauseKind::LoopCondition) =>
            {
                let span = if kind == CauseKind::LoopCondition {
                    cause.span
                } else {
                    span
                };
                Control {
                    level: self.level,
                    cause: Some(Cause {
                        span,
                        kind,
                        origin: cause.origin,
                    }),
                }
            }
            _ => self,
        }
    }

    /// The control's level as a value's, for a value computed under it.
    pub(super) fn as_value(self) -> Value {
        match self.cause {
            Some(cause) => Value::new(self.level, cause.origin),
            None => Value::UNIFORM,
        }
    }

    /// The value of a variable assigned under this control.
    pub(super) fn assigned(self, function: FunctionId, variable: VariableId) -> Value {
        Value::new(self.level, Origin::Assigned(function, variable))
    }
}

/// An operation that needs control at most this divergent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Need {
    pub(super) allowed: Uniformity,
    /// The operation as written: `barrier()`, `sub_group_reduce_add`.
    pub(super) operation: &'static str,
}

impl Need {
    /// The strictest of both; on a tie the first.
    pub(super) fn join(this: Option<Need>, other: Need) -> Option<Need> {
        match this {
            Some(this) if this.allowed <= other.allowed => Some(this),
            _ => Some(other),
        }
    }
}
