//! Structural and type checks on a [`Module`](crate::Module).
//!
//! The front end only produces valid modules; the validator exists so that every
//! back end may rely on the invariants listed in ARCHITECTURE.md without rechecking them.
//!
//! One convention beyond the types: a call to a device function without a result has no
//! meaningful `ty`; such a call may appear only as the value of a `StatementKind::Evaluate`.

use crate::builtins::{Builtin, Operands};
use crate::ir::*;
use crate::span::Span;
use crate::types::{AddressSpace, ArrayType, ParameterType, ScalarType};

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
            StatementKind::Barrier { .. } => {}
            StatementKind::Matrix(op) => self.matrix(op, span),
            StatementKind::AsyncCopy(op) => self.async_copy(op, span),
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

    /// Checks a place; `write` means it is stored to or used atomically.
    /// A vector access: a buffer of a non-`bool` element, 2 to 4 components.
    fn vector_place(&mut self, place: &Place, width: usize, span: Span, write: bool) {
        self.place(place, span, write);
        let buffer = match place.base {
            PlaceBase::Parameter(id) => matches!(
                self.function.parameters.get(id.0 as usize).map(|p| &p.ty),
                Some(ParameterType::Buffer { .. })
            ),
            PlaceBase::Variable(_) => false,
        };
        if !buffer || place.field.is_some() {
            self.error(
                span,
                "a vector access of something other than a buffer of scalars",
            );
        }
        if !(2..=4).contains(&width) || place.element == ScalarType::Bool {
            self.error(
                span,
                format!("a vector of {width} `{}` components", place.element),
            );
        }
    }

    fn place(&mut self, place: &Place, span: Span, write: bool) {
        for index in &place.indices {
            if let Some(ty) = self.expression(index) {
                if !ty.is_integer() {
                    self.error(index.span, format!("index has type `{ty}`, not an integer"));
                }
            }
        }
        match place.base {
            PlaceBase::Parameter(id) => {
                match self.function.parameters.get(id.0 as usize).map(|p| &p.ty) {
                    Some(ParameterType::Buffer {
                        element,
                        space,
                        writable,
                        record,
                    }) => {
                        if place.indices.len() != 1 {
                            self.error(
                                span,
                                format!("buffer access has {} indices", place.indices.len()),
                            );
                        }
                        let element = match (record, place.field) {
                            (None, None) => *element,
                            (Some(record), Some(field)) => {
                                match record.fields.get(field as usize) {
                                    Some(field) => field.ty,
                                    None => {
                                        self.error(
                                            span,
                                            format!("record `{record}` has no field {field}"),
                                        );
                                        place.element
                                    }
                                }
                            }
                            (Some(record), None) => {
                                self.error(span, format!("an access of a whole `{record}`"));
                                place.element
                            }
                            (None, Some(_)) => {
                                self.error(span, "a field access of a buffer of scalars");
                                place.element
                            }
                        };
                        if element != place.element || *space != place.space {
                            self.error(
                                span,
                                "place element type or space differs from the buffer's",
                            );
                        }
                        if write && !writable {
                            self.error(span, format!("writes to read-only buffer %{}", id.0));
                        }
                    }
                    Some(ParameterType::Array { .. }) => self.array_place(place, span, write),
                    Some(ParameterType::Scalar { .. }) => {
                        self.error(span, format!("parameter %{} is not a buffer", id.0))
                    }
                    None => self.error(span, format!("parameter %{} does not exist", id.0)),
                }
            }
            PlaceBase::Variable(id) => match self.function.variables.get(id.0 as usize) {
                Some(Variable {
                    ty: VariableType::Array { .. },
                    ..
                }) => self.array_place(place, span, write),
                Some(_) => self.error(span, format!("variable ${} is not an array", id.0)),
                None => self.error(span, format!("variable ${} does not exist", id.0)),
            },
        }
    }

    /// An access of an array variable or array parameter: an index per dimension, the
    /// array's element type and space, and writability.
    fn array_place(&mut self, place: &Place, span: Span, write: bool) {
        if place.field.is_some() {
            self.error(span, "a field access of an array");
        }
        let Some((ty, space, writable)) = self.array_of(place.base) else {
            return;
        };
        if place.indices.len() != ty.dimensions.len() {
            self.error(
                span,
                format!(
                    "array access has {} indices for {} dimensions",
                    place.indices.len(),
                    ty.dimensions.len()
                ),
            );
        }
        if ty.element != place.element || space != place.space {
            self.error(span, "place element type or space differs from the array's");
        }
        if write && !writable {
            let PlaceBase::Parameter(id) = place.base else {
                return;
            };
            self.error(span, format!("writes to read-only array %{}", id.0));
        }
    }

    /// A matrix statement: tiles are private arrays of the shape's length and element type,
    /// memory is a buffer or a one-dimensional local array of the tile's element type, and
    /// offsets and strides are `u32`.
    fn async_copy(&mut self, op: &crate::AsyncCopyOp, span: Span) {
        match op {
            crate::AsyncCopyOp::Copy {
                destination,
                source,
                count,
            } => {
                self.place(destination, span, true);
                self.place(source, span, false);
                if destination.space != AddressSpace::Local
                    || !matches!(source.space, AddressSpace::Global | AddressSpace::Constant)
                {
                    self.error(span, "an asynchronous copy not from global to local memory");
                }
                if destination.element != source.element
                    || !crate::async_copy::valid_count(source.element, *count)
                {
                    self.error(
                        span,
                        format!(
                            "an asynchronous copy of {count} `{}` to `{}`",
                            source.element, destination.element
                        ),
                    );
                }
                if destination.indices.len() != 1
                    || source.indices.len() != 1
                    || destination.field.is_some()
                    || source.field.is_some()
                {
                    self.error(span, "an asynchronous copy's place is not one-dimensional");
                }
            }
            crate::AsyncCopyOp::Commit => {}
            crate::AsyncCopyOp::Wait { pending } => {
                if *pending > crate::async_copy::MAX_PENDING {
                    self.error(span, format!("`async_wait({pending})`"));
                }
            }
        }
    }

    fn matrix(&mut self, op: &crate::matrix::MatrixOp, span: Span) {
        use crate::matrix::{MatrixOp, MatrixRole};
        let Some(shape) = op.shape() else {
            return self.group_matrix(op, span);
        };
        let tile = |checker: &mut Self, base: PlaceBase, role: MatrixRole, write: bool| {
            let (rows, columns) = shape.dimensions(role);
            match checker.array_of(base) {
                Some((ty, AddressSpace::Private, writable))
                    if ty.element == shape.element(role)
                        && ty.element_count() == u64::from(rows * columns)
                        && ty.dimensions.len() == 1
                        && (writable || !write) => {}
                _ => checker.error(
                    span,
                    format!(
                        "{} tile of {} is not a private mut [{}; {}]",
                        role.name(),
                        shape.name(),
                        shape.element(role),
                        rows * columns
                    ),
                ),
            }
        };
        let memory = |checker: &mut Self, memory: &crate::matrix::MatrixMemory, role, write| {
            let place = Place {
                id: crate::PlaceId::UNNUMBERED,
                base: memory.base,
                indices: vec![Expression {
                    id: crate::ExprId::UNNUMBERED,
                    kind: ExpressionKind::Literal(Literal::Integer(0)),
                    ty: ScalarType::U32,
                    span,
                }],
                element: memory.element,
                space: memory.space,
                field: None,
            };
            checker.place(&place, span, write);
            if memory.element != shape.element(role)
                || !matches!(
                    memory.space,
                    AddressSpace::Global | AddressSpace::Constant | AddressSpace::Local
                )
            {
                checker.error(span, "matrix memory of the wrong element type or space");
            }
        };
        for value in op.expressions() {
            let expected = if matches!(op, MatrixOp::Fill { .. }) {
                shape.accumulator()
            } else {
                ScalarType::U32
            };
            if self.expression(value).is_some_and(|ty| ty != expected) {
                self.error(value.span, format!("matrix operand is not `{expected}`"));
            }
        }
        match op {
            MatrixOp::Load {
                role,
                tile: base,
                memory: source,
                ..
            } => {
                tile(self, *base, *role, true);
                memory(self, source, *role, false);
            }
            MatrixOp::Store {
                tile: base,
                memory: destination,
                ..
            } => {
                tile(self, *base, MatrixRole::Accumulator, false);
                memory(self, destination, MatrixRole::Accumulator, true);
            }
            MatrixOp::Fill { tile: base, .. } => {
                tile(self, *base, MatrixRole::Accumulator, true);
            }
            MatrixOp::MultiplyAdd { d, a, b, c, .. } => {
                tile(self, *d, MatrixRole::Accumulator, true);
                tile(self, *a, MatrixRole::A, false);
                tile(self, *b, MatrixRole::B, false);
                tile(self, *c, MatrixRole::Accumulator, false);
            }
            MatrixOp::GroupMultiplyAdd { .. } | MatrixOp::GroupWait { .. } => {}
        }
    }

    /// `matrix_group_mma`: a private `f32` accumulator of the shape's length, `f16` local
    /// memories, `u32` offsets and chunk strides.
    fn group_matrix(&mut self, op: &crate::matrix::MatrixOp, span: Span) {
        if let crate::matrix::MatrixOp::GroupWait { pending } = op {
            if *pending > crate::matrix_group::MAX_PENDING {
                self.error(span, format!("`matrix_group_wait({pending})`"));
            }
            return;
        }
        let crate::matrix::MatrixOp::GroupMultiplyAdd {
            shape,
            accumulator,
            a,
            b,
            ..
        } = op
        else {
            return;
        };
        let length = u64::from(shape.accumulator_length());
        match self.array_of(*accumulator) {
            Some((ty, AddressSpace::Private, true))
                if ty.element == crate::GroupShape::ACCUMULATOR
                    && ty.element_count() == length
                    && ty.dimensions.len() == 1 => {}
            _ => self.error(
                span,
                format!(
                    "accumulator of {} is not a private mut [f32; {length}]",
                    shape.name()
                ),
            ),
        }
        for memory in [a, b] {
            if memory.element != shape.input_element() || memory.space != AddressSpace::Local {
                self.error(
                    span,
                    format!(
                        "matrix group memory of `{}` in {:?} is not local `{}`",
                        memory.element,
                        memory.space,
                        shape.input_element()
                    ),
                );
            }
        }
        for value in op.expressions() {
            if self
                .expression(value)
                .is_some_and(|ty| ty != ScalarType::U32)
            {
                self.error(value.span, "matrix operand is not `u32`");
            }
        }
    }

    /// The type, space and writability of an array variable or array parameter. Array
    /// variables are writable: the IR does not record `let` versus `let mut`.
    fn array_of(&self, base: PlaceBase) -> Option<(ArrayType, AddressSpace, bool)> {
        match base {
            PlaceBase::Parameter(id) => match &self.function.parameters.get(id.0 as usize)?.ty {
                ParameterType::Array {
                    ty,
                    space,
                    writable,
                } => Some((ty.clone(), *space, *writable)),
                _ => None,
            },
            PlaceBase::Variable(id) => match self.function.variables.get(id.0 as usize)? {
                Variable {
                    ty: VariableType::Array { ty },
                    space,
                    ..
                } => Some((ty.clone(), *space, true)),
                _ => None,
            },
        }
    }

    fn call(&mut self, expression: &Expression, as_statement: bool) -> Option<ScalarType> {
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
    fn expression(&mut self, expression: &Expression) -> Option<ScalarType> {
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
    fn collective(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ArrayType;

    fn expression(kind: ExpressionKind, ty: ScalarType) -> Expression {
        Expression {
            id: crate::ExprId::UNNUMBERED,
            kind,
            ty,
            span: Span::default(),
        }
    }

    fn literal(value: u64, ty: ScalarType) -> Expression {
        expression(ExpressionKind::Literal(Literal::Integer(value)), ty)
    }

    fn statement(kind: StatementKind) -> Statement {
        Statement {
            kind,
            span: Span::default(),
        }
    }

    fn kernel(parameters: Vec<ParameterType>, variables: Vec<Variable>, body: Block) -> Function {
        let mut function = Function {
            name: "k".into(),
            kind: FunctionKind::Kernel,
            parameters: parameters
                .into_iter()
                .enumerate()
                .map(|(i, ty)| Parameter {
                    name: format!("p{i}"),
                    ty,
                    span: Span::default(),
                })
                .collect(),
            return_type: None,
            variables,
            body,
            span: Span::default(),
            work_group_size: None,
            shaped_buffers: Vec::new(),
            contiguous_entry: None,
            contiguous_copy_of: None,
        };
        crate::ids::number_function(&mut function);
        function
    }

    fn scalar_variable(ty: ScalarType) -> Variable {
        Variable {
            name: "v".into(),
            ty: VariableType::Scalar { ty },
            space: AddressSpace::Private,
            span: Span::default(),
        }
    }

    fn messages(module: &Module) -> Vec<String> {
        validate(module)
            .err()
            .unwrap_or_default()
            .into_iter()
            .map(|e| e.message)
            .collect()
    }

    fn read_only_buffer() -> ParameterType {
        ParameterType::Buffer {
            element: ScalarType::F32,
            space: AddressSpace::Global,
            writable: false,
            record: None,
        }
    }

    fn buffer_place(element: ScalarType) -> Place {
        Place {
            id: crate::PlaceId::UNNUMBERED,
            base: PlaceBase::Parameter(ParameterId(0)),
            indices: vec![literal(0, ScalarType::U32)],
            element,
            space: AddressSpace::Global,
            field: None,
        }
    }

    #[test]
    fn accepts_a_valid_kernel() {
        let body = vec![statement(StatementKind::Assign {
            variable: VariableId(0),
            value: expression(
                ExpressionKind::WorkItem {
                    query: WorkItemQuery::GlobalId,
                    dimension: 0,
                },
                ScalarType::U32,
            ),
        })];
        let module = Module {
            functions: vec![kernel(vec![], vec![scalar_variable(ScalarType::U32)], body)],
            constants: Vec::new(),
        };
        assert_eq!(validate(&module), Ok(()));
    }

    #[test]
    fn rejects_mismatched_binary_operands_and_bad_ids() {
        let sum = expression(
            ExpressionKind::Binary {
                op: BinaryOp::Add,
                left: Box::new(literal(1, ScalarType::U32)),
                right: Box::new(literal(1, ScalarType::I32)),
            },
            ScalarType::U32,
        );
        let body = vec![
            statement(StatementKind::Assign {
                variable: VariableId(0),
                value: sum,
            }),
            statement(StatementKind::Assign {
                variable: VariableId(7),
                value: literal(1, ScalarType::U32),
            }),
        ];
        let module = Module {
            functions: vec![kernel(vec![], vec![scalar_variable(ScalarType::U32)], body)],
            constants: Vec::new(),
        };
        let found = messages(&module);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].contains("Add of `u32` and `i32`"));
        assert!(found[1].contains("variable $7 does not exist"));
    }

    #[test]
    fn rejects_writes_and_atomics_on_read_only_buffers() {
        let atomic = expression(
            ExpressionKind::Atomic {
                op: AtomicOp::Add,
                place: Box::new(buffer_place(ScalarType::F32)),
                value: Box::new(expression(
                    ExpressionKind::Literal(Literal::Float(1.0)),
                    ScalarType::F32,
                )),
                comparand: None,
            },
            ScalarType::F32,
        );
        let body = vec![
            statement(StatementKind::Store {
                place: buffer_place(ScalarType::F32),
                value: expression(
                    ExpressionKind::Literal(Literal::Float(1.0)),
                    ScalarType::F32,
                ),
            }),
            statement(StatementKind::Evaluate { value: atomic }),
        ];
        let module = Module {
            functions: vec![kernel(vec![read_only_buffer()], vec![], body)],
            constants: Vec::new(),
        };
        let found = messages(&module);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found.iter().all(|m| m.contains("read-only buffer %0")));
    }

    #[test]
    fn checks_record_buffers_and_field_places() {
        let record = crate::records::RecordType::new(
            "Node",
            &[
                ("start".into(), ScalarType::I32),
                ("edges".into(), ScalarType::I32),
            ],
        );
        let records = ParameterType::Buffer {
            element: ScalarType::U8,
            space: AddressSpace::Global,
            writable: true,
            record: Some(Box::new(record.clone())),
        };
        let mut tampered = record;
        tampered.size = 12;
        let bad_layout = ParameterType::Buffer {
            element: ScalarType::U8,
            space: AddressSpace::Global,
            writable: true,
            record: Some(Box::new(tampered)),
        };
        let store = |field: Option<u32>, element: ScalarType, parameter: u32| {
            statement(StatementKind::Store {
                place: Place {
                    id: crate::PlaceId::UNNUMBERED,
                    base: PlaceBase::Parameter(ParameterId(parameter)),
                    field,
                    ..buffer_place(element)
                },
                value: literal(1, element),
            })
        };
        let good = Module {
            functions: vec![kernel(
                vec![records.clone()],
                vec![],
                vec![store(Some(1), ScalarType::I32, 0)],
            )],
            constants: Vec::new(),
        };
        assert_eq!(messages(&good), Vec::<String>::new());
        let body = vec![
            store(None, ScalarType::U8, 0),
            store(Some(2), ScalarType::I32, 0),
            store(Some(0), ScalarType::U32, 0),
            store(Some(0), ScalarType::F32, 1),
        ];
        let module = Module {
            functions: vec![kernel(
                vec![records, read_only_buffer(), bad_layout],
                vec![],
                body,
            )],
            constants: Vec::new(),
        };
        let found = messages(&module).join("\n");
        for expected in [
            "an access of a whole `Node`",
            "record `Node` has no field 2",
            "place element type or space differs",
            "a field access of a buffer of scalars",
            "record buffer `p2` has an inconsistent layout",
        ] {
            assert!(found.contains(expected), "{expected}: {found}");
        }
    }

    #[test]
    fn rejects_break_outside_loops_and_non_bool_conditions() {
        let body = vec![
            statement(StatementKind::Break),
            statement(StatementKind::If {
                condition: literal(1, ScalarType::U32),
                accept: vec![],
                reject: vec![],
            }),
            statement(StatementKind::Loop {
                body: vec![statement(StatementKind::Break)],
                continuing: vec![],
                unroll: Unroll::Default,
            }),
        ];
        let module = Module {
            functions: vec![kernel(vec![], vec![], body)],
            constants: Vec::new(),
        };
        let found = messages(&module);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].contains("outside of a loop"));
        assert!(found[1].contains("condition has type `u32`"));
    }

    #[test]
    fn rejects_calls_to_later_functions_and_bad_arguments() {
        let call = expression(
            ExpressionKind::Call {
                function: FunctionId(1),
                arguments: vec![Argument::Value(literal(1, ScalarType::I32))],
            },
            ScalarType::F32,
        );
        let caller = kernel(
            vec![],
            vec![],
            vec![statement(StatementKind::Evaluate { value: call })],
        );
        let callee = Function {
            name: "f".into(),
            kind: FunctionKind::Device,
            parameters: vec![Parameter {
                name: "x".into(),
                ty: ParameterType::Scalar {
                    ty: ScalarType::F32,
                },
                span: Span::default(),
            }],
            return_type: Some(ScalarType::F32),
            variables: vec![],
            body: vec![statement(StatementKind::Return { value: None })],
            span: Span::default(),
            shaped_buffers: Vec::new(),
            contiguous_entry: None,
            contiguous_copy_of: None,
            work_group_size: None,
        };
        let module = Module {
            functions: vec![caller, callee],
            constants: Vec::new(),
        };
        let found = messages(&module);
        assert!(
            found
                .iter()
                .any(|m| m.contains("does not come before the caller")),
            "{found:?}"
        );
        assert!(
            found
                .iter()
                .any(|m| m.contains("passes a `i32` for parameter `x`")),
            "{found:?}"
        );
        assert!(
            found
                .iter()
                .any(|m| m.contains("returns nothing, expected `f32`")),
            "{found:?}"
        );
    }

    #[test]
    fn rejects_bad_places_dimensions_and_atomic_types() {
        let array = Variable {
            name: "tile".into(),
            ty: VariableType::Array {
                ty: ArrayType {
                    element: ScalarType::U8,
                    dimensions: vec![4, 4],
                },
            },
            space: AddressSpace::Local,
            span: Span::default(),
        };
        let place = Place {
            id: crate::PlaceId::UNNUMBERED,
            base: PlaceBase::Variable(VariableId(0)),
            indices: vec![expression(
                ExpressionKind::Literal(Literal::Float(0.0)),
                ScalarType::F32,
            )],
            element: ScalarType::U8,
            space: AddressSpace::Local,
            field: None,
        };
        let atomic = expression(
            ExpressionKind::Atomic {
                op: AtomicOp::Max,
                place: Box::new(place),
                value: Box::new(literal(1, ScalarType::U8)),
                comparand: None,
            },
            ScalarType::U8,
        );
        let query = expression(
            ExpressionKind::WorkItem {
                query: WorkItemQuery::LocalId,
                dimension: 3,
            },
            ScalarType::U32,
        );
        let body = vec![
            statement(StatementKind::Evaluate { value: atomic }),
            statement(StatementKind::Evaluate { value: query }),
        ];
        let module = Module {
            functions: vec![kernel(vec![], vec![array], body)],
            constants: Vec::new(),
        };
        let found = messages(&module);
        assert!(
            found.iter().any(|m| m.contains("not an integer")),
            "{found:?}"
        );
        assert!(
            found
                .iter()
                .any(|m| m.contains("1 indices for 2 dimensions")),
            "{found:?}"
        );
        assert!(
            found.iter().any(|m| m.contains("`atomic_max` on `u8`")),
            "{found:?}"
        );
        assert!(found.iter().any(|m| m.contains("dimension 3")), "{found:?}");
    }
}
