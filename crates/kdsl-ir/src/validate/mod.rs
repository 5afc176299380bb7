//! Structural and type checks on a [`Module`].
//!
//! The front end only produces valid modules; the validator exists so that every
//! back end may rely on the invariants listed in ARCHITECTURE.md without rechecking them.
//!
//! One convention beyond the types: a call to a device function without a result has no
//! meaningful `ty`; such a call may appear only as the value of a `StatementKind::Evaluate`.

use crate::ir::*;
use crate::span::Span;
use crate::types::{AddressSpace, ParameterType, ScalarType};

mod expressions;
mod places;
mod tiles;

#[cfg(test)]
mod tests;

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid IR in function `{function}`: {message}")]
pub struct ValidationError {
    pub function: String,
    pub message: String,
    pub span: Span,
}

/// Checks every invariant of the IR. Returns all problems found.
pub fn validate(module: &Module) -> Result<(), Vec<ValidationError>> {
    let mut errors = Vec::new();
    for (index, function) in module.functions.iter().enumerate() {
        let mut validator = FunctionValidator {
            module,
            index,
            function,
            loop_depth: 0,
            errors: &mut errors,
        };
        validator.function();
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

struct FunctionValidator<'a> {
    module: &'a Module,
    index: usize,
    function: &'a Function,
    loop_depth: u32,
    errors: &'a mut Vec<ValidationError>,
}

impl FunctionValidator<'_> {
    fn error(&mut self, span: Span, message: impl Into<String>) {
        self.errors.push(ValidationError {
            function: self.function.name.clone(),
            message: message.into(),
            span,
        });
    }

    /// Each multi-dimensional buffer: a buffer parameter with 2 or 3 dimensions, a `u32`
    /// extent and a `u64` stride parameter each.
    fn shaped_buffers(&mut self) {
        let function = self.function;
        let scalar = |id: ParameterId| match function.parameters.get(id.0 as usize) {
            Some(Parameter {
                ty: ParameterType::Scalar { ty },
                ..
            }) => Some(*ty),
            _ => None,
        };
        for shaped in &function.shaped_buffers {
            let buffer = function.parameters.get(shaped.buffer.0 as usize);
            let is_buffer = matches!(
                buffer,
                Some(Parameter {
                    ty: ParameterType::Buffer { .. },
                    ..
                })
            );
            let well_formed = is_buffer
                && (2..=3).contains(&shaped.rank())
                && shaped.strides.len() == shaped.rank()
                && shaped
                    .shape
                    .iter()
                    .all(|&id| scalar(id) == Some(ScalarType::U32))
                && shaped
                    .strides
                    .iter()
                    .all(|&id| scalar(id) == Some(ScalarType::U64));
            if !well_formed {
                self.error(
                    function.span,
                    format!(
                        "shaped buffer %{} lacks a buffer or 2 or 3 `u32` extents and `u64` strides",
                        shaped.buffer.0
                    ),
                );
            }
        }
    }

    /// A kernel and its contiguous copy name each other and take the same parameters; device
    /// functions have neither.
    fn contiguous_entry(&mut self) {
        let function = self.function;
        let index = FunctionId(self.index as u32);
        let other = |id: FunctionId| self.module.functions.get(id.0 as usize);
        let pair = match (function.contiguous_entry, function.contiguous_copy_of) {
            (None, None) => return,
            (Some(copy), None) => other(copy).map(|copy| (function, copy, copy.contiguous_copy_of)),
            (None, Some(kernel)) => {
                other(kernel).map(|kernel| (kernel, function, kernel.contiguous_entry))
            }
            (Some(_), Some(_)) => None,
        };
        let paired = pair.is_some_and(|(kernel, copy, back)| {
            back == Some(index)
                && kernel.kind == FunctionKind::Kernel
                && copy.kind == FunctionKind::Kernel
                && !kernel.shaped_buffers.is_empty()
                && kernel.parameters == copy.parameters
                && kernel.shaped_buffers == copy.shaped_buffers
                && kernel.work_group_size == copy.work_group_size
                && copy.name == format!("{}{CONTIGUOUS_ENTRY_SUFFIX}", kernel.name)
        });
        if !paired {
            self.error(
                function.span,
                "a contiguous entry and its kernel do not name each other, or differ in kind, name or parameters",
            );
        }
    }

    fn function(&mut self) {
        let function = self.function;
        if let Err(problem) = crate::ids::check_function(function) {
            self.error(function.span, format!("node ids: {problem}"));
        }
        if function.kind == FunctionKind::Kernel && function.return_type.is_some() {
            self.error(function.span, "a kernel has a return type");
        }
        if let Some(size) = function.work_group_size {
            if function.kind != FunctionKind::Kernel {
                self.error(function.span, "a device function has a work-group size");
            }
            let total = size.iter().map(|&d| u64::from(d)).product::<u64>();
            if size.contains(&0) || total > u64::from(u32::MAX) {
                self.error(
                    function.span,
                    format!("the work-group size {size:?} is empty or above 2^32 - 1 work-items"),
                );
            }
        }
        self.shaped_buffers();
        self.contiguous_entry();
        for parameter in &function.parameters {
            if let ParameterType::Buffer {
                space, writable, ..
            } = parameter.ty
            {
                if space == AddressSpace::Private {
                    self.error(
                        parameter.span,
                        format!("buffer `{}` is in {space} memory", parameter.name),
                    );
                }
                if space == AddressSpace::Constant && writable {
                    self.error(
                        parameter.span,
                        format!("constant buffer `{}` is writable", parameter.name),
                    );
                }
            }
            if let ParameterType::Buffer {
                element,
                record: Some(record),
                ..
            } = &parameter.ty
            {
                let fields: Vec<_> = record
                    .fields
                    .iter()
                    .map(|f| (f.name.clone(), f.ty))
                    .collect();
                if *element != ScalarType::U8
                    || fields.is_empty()
                    || **record != crate::records::RecordType::new(record.name.clone(), &fields)
                {
                    self.error(
                        parameter.span,
                        format!(
                            "record buffer `{}` has an inconsistent layout",
                            parameter.name
                        ),
                    );
                }
            }
            if let ParameterType::Array { ty, space, .. } = &parameter.ty {
                if function.kind == FunctionKind::Kernel {
                    self.error(
                        parameter.span,
                        format!("kernel parameter `{}` is an array", parameter.name),
                    );
                }
                if !matches!(space, AddressSpace::Local | AddressSpace::Private) {
                    self.error(
                        parameter.span,
                        format!("array parameter `{}` is in {space} memory", parameter.name),
                    );
                }
                if ty.dimensions.is_empty() || ty.dimensions.contains(&0) {
                    self.error(
                        parameter.span,
                        format!(
                            "array parameter `{}` has an empty dimension",
                            parameter.name
                        ),
                    );
                }
            }
        }
        for variable in &function.variables {
            match &variable.ty {
                VariableType::Array { ty } => {
                    if ty.dimensions.is_empty() || ty.dimensions.contains(&0) {
                        self.error(
                            variable.span,
                            format!("array `{}` has an empty dimension", variable.name),
                        );
                    }
                }
                VariableType::Scalar { .. } => {
                    if variable.space == AddressSpace::Local {
                        self.error(
                            variable.span,
                            format!("local variable `{}` is not an array", variable.name),
                        );
                    }
                }
            }
            if !matches!(variable.space, AddressSpace::Private | AddressSpace::Local) {
                self.error(
                    variable.span,
                    format!(
                        "variable `{}` is in {} memory",
                        variable.name, variable.space
                    ),
                );
            }
            if variable.space == AddressSpace::Local && function.kind != FunctionKind::Kernel {
                self.error(
                    variable.span,
                    format!("device function declares local array `{}`", variable.name),
                );
            }
        }
        self.block(&function.body);
    }

    fn block(&mut self, block: &Block) {
        for statement in block {
            self.statement(statement);
        }
    }

    fn statement(&mut self, statement: &Statement) {
        let span = statement.span;
        match &statement.kind {
            StatementKind::Assign { variable, value } => {
                let ty = self.expression(value);
                match self.function.variables.get(variable.0 as usize) {
                    Some(Variable {
                        ty: VariableType::Scalar { ty: expected },
                        ..
                    }) => {
                        if ty.is_some_and(|t| t != *expected) {
                            self.error(
                                span,
                                format!(
                                    "assigns a `{}` to a `{expected}` variable",
                                    ty.unwrap_or(*expected)
                                ),
                            );
                        }
                    }
                    Some(_) => self.error(
                        span,
                        format!("assigns a scalar to array variable ${}", variable.0),
                    ),
                    None => self.error(span, format!("variable ${} does not exist", variable.0)),
                }
            }
            StatementKind::Store { place, value } => {
                self.place(place, span, true);
                if let Some(ty) = self.expression(value) {
                    if ty != place.element {
                        self.error(
                            span,
                            format!("stores a `{ty}` into a `{}` element", place.element),
                        );
                    }
                }
            }
            StatementKind::VectorStore { place, values } => {
                self.vector_place(place, values.len(), span, true);
                for value in values {
                    if let Some(ty) = self.expression(value) {
                        if ty != place.element {
                            self.error(
                                span,
                                format!("stores a `{ty}` into a `{}` vector", place.element),
                            );
                        }
                    }
                }
            }
            StatementKind::If {
                condition,
                accept,
                reject,
            } => {
                self.condition(condition);
                self.block(accept);
                self.block(reject);
            }
            StatementKind::Loop {
                body,
                continuing,
                unroll,
            } => {
                if *unroll == Unroll::Count(0) {
                    self.error(span, "unroll count 0");
                }
                self.loop_depth += 1;
                self.block(body);
                // `break` and `continue` are meaningless in `continuing`.
                let saved = std::mem::replace(&mut self.loop_depth, 0);
                self.block(continuing);
                self.loop_depth = saved - 1;
            }
            StatementKind::Break | StatementKind::Continue => {
                if self.loop_depth == 0 {
                    self.error(span, "`break` or `continue` outside of a loop body");
                }
            }
            StatementKind::Return { value } => {
                let found = value.as_ref().and_then(|v| self.expression(v));
                match (self.function.return_type, value.is_some(), found) {
                    (None, true, _) => {
                        self.error(span, "returns a value from a function without a result")
                    }
                    (Some(expected), false, _) => {
                        self.error(span, format!("returns nothing, expected `{expected}`"))
                    }
                    (Some(expected), true, Some(found)) if found != expected => {
                        self.error(span, format!("returns a `{found}`, expected `{expected}`"))
                    }
                    _ => {}
                }
            }
            StatementKind::Barrier { .. } | StatementKind::DeviceFence => {}
            StatementKind::Matrix(op) => self.matrix(op, span),
            StatementKind::AsyncCopy(op) => self.async_copy(op, span),
            StatementKind::TileCopy(op) => self.tile_copy(op, span),
            StatementKind::Print { text, arguments } => {
                if text.len() != arguments.len() + 1 {
                    self.error(
                        span,
                        format!(
                            "print has {} text pieces for {} values",
                            text.len(),
                            arguments.len()
                        ),
                    );
                }
                if arguments.len() > crate::print_format::MAX_VALUES {
                    self.error(span, "print has too many values");
                }
                for argument in arguments {
                    self.expression(argument);
                }
            }
            StatementKind::Evaluate { value } => {
                if let ExpressionKind::Call { .. } = value.kind {
                    self.call(value, true);
                } else {
                    self.expression(value);
                }
            }
        }
    }

    fn condition(&mut self, condition: &Expression) {
        if let Some(ty) = self.expression(condition) {
            if ty != ScalarType::Bool {
                self.error(
                    condition.span,
                    format!("condition has type `{ty}`, not `bool`"),
                );
            }
        }
    }
}
