//! Types and signatures: source types resolved, buffer and parameter types, device
//! functions' signatures and results.

use super::{
    describe_type, suggest, tuple_result_parameter, Checker, ParameterShape, ResolvedType,
    Signature, VectorType,
};
use crate::ast::{self, FunctionKind as AstFunctionKind};
use kdsl_ir::{
    AddressSpace, ArrayType, Diagnostic, ErrorCode, FunctionId, ParameterType, ScalarType, Span,
};

impl Checker<'_> {
    /// Resolves a type written in source.
    pub(crate) fn resolve_type(&mut self, ty: &ast::TypeExpression) -> Option<ResolvedType> {
        match ty {
            ast::TypeExpression::Named(name) => {
                if let Some(ty) = self.type_arguments.get(&name.name) {
                    return Some(ResolvedType::Scalar(*ty));
                }
                if let Some(ty) = ScalarType::from_name(&name.name) {
                    return Some(ResolvedType::Scalar(ty));
                }
                if let Some(vector) = VectorType::from_name(&name.name) {
                    return Some(ResolvedType::Vector(vector));
                }
                if self.record_type_misused(name) {
                    return None;
                }
                let candidates: Vec<&str> = ScalarType::ALL
                    .iter()
                    .map(|t| t.name())
                    .chain(self.type_arguments.keys().map(String::as_str))
                    .collect();
                let mut diagnostic = Diagnostic::error(
                    ErrorCode::E0203,
                    format!("unknown type `{}`", name.name),
                    name.span,
                    "not a type",
                );
                let best = suggest(&name.name, candidates)
                    .map(str::to_string)
                    .or_else(|| self.suggest_record(&name.name));
                if let Some(best) = best {
                    diagnostic = diagnostic.with_hint(format!("did you mean `{best}`?"));
                }
                self.report(diagnostic);
                None
            }
            ast::TypeExpression::Array {
                element,
                length,
                span,
            } => {
                let element = self.resolve_type(element);
                let length = self.array_length(length);
                let (element, length) = (element?, length?);
                let mut dimensions = vec![length];
                let scalar = match element {
                    ResolvedType::Scalar(ty) => ty,
                    ResolvedType::Array(inner) => {
                        dimensions.extend(inner.dimensions);
                        inner.element
                    }
                    tuple @ ResolvedType::Tuple(_) => {
                        self.report(
                            Diagnostic::error(
                                ErrorCode::E0314,
                                format!(
                                    "array elements must be scalars, not `{}`",
                                    describe_type(&tuple)
                                ),
                                *span,
                                "arrays of tuples are not supported",
                            )
                            .with_hint("use one array per tuple element"),
                        );
                        return None;
                    }
                    ResolvedType::Vector(vector) => {
                        self.report(
                            Diagnostic::error(
                                ErrorCode::E0315,
                                format!("array elements must be scalars, not `{vector}`"),
                                *span,
                                "arrays of vectors are not supported",
                            )
                            .with_hint(format!(
                                "use an array of `{}` and `vload{}`/`vstore{}` on buffers",
                                vector.element, vector.width, vector.width
                            )),
                        );
                        return None;
                    }
                };
                let array = ArrayType {
                    element: scalar,
                    dimensions,
                };
                if array.element_count() > (1 << 28) {
                    self.report(Diagnostic::error(
                        ErrorCode::E0502,
                        format!("array `{array}` is too large"),
                        *span,
                        "more than 2^28 elements",
                    ));
                    return None;
                }
                Some(ResolvedType::Array(array))
            }
            ast::TypeExpression::Tuple { elements, span } => {
                let mut scalars = Vec::with_capacity(elements.len());
                for element in elements {
                    match self.resolve_type(element)? {
                        ResolvedType::Scalar(ty) => scalars.push(ty),
                        other => {
                            self.report(Diagnostic::error(
                                ErrorCode::E0314,
                                format!(
                                    "tuple elements must be scalars, not `{}`",
                                    describe_type(&other)
                                ),
                                element.span(),
                                "not a scalar",
                            ));
                            return None;
                        }
                    }
                }
                if scalars.len() < 2 {
                    self.report(
                        Diagnostic::error(
                            ErrorCode::E0314,
                            "a tuple type needs at least two elements",
                            *span,
                            "too few elements",
                        )
                        .with_hint("write the scalar type itself, such as `f32`"),
                    );
                    return None;
                }
                Some(ResolvedType::Tuple(scalars))
            }
        }
    }

    /// Resolves the type of a value: a scalar, or an error naming `what`.
    pub(crate) fn resolve_scalar_type(
        &mut self,
        ty: &ast::TypeExpression,
        what: &str,
    ) -> Option<ScalarType> {
        match self.resolve_type(ty)? {
            ResolvedType::Scalar(scalar) => Some(scalar),
            ResolvedType::Array(array) => {
                self.report(Diagnostic::error(
                    ErrorCode::E0301,
                    format!("{what} must have a scalar type, not `{array}`"),
                    ty.span(),
                    "array type not allowed here",
                ));
                None
            }
            tuple @ ResolvedType::Tuple(_) => {
                self.report(Diagnostic::error(
                    ErrorCode::E0314,
                    format!(
                        "{what} must have a scalar type, not `{}`",
                        describe_type(&tuple)
                    ),
                    ty.span(),
                    "tuple type not allowed here",
                ));
                None
            }
            ResolvedType::Vector(vector) => {
                self.report(Diagnostic::error(
                    ErrorCode::E0315,
                    format!("{what} must have a scalar type, not `{vector}`"),
                    ty.span(),
                    "vector type not allowed here",
                ));
                None
            }
        }
    }

    /// The IR type of a buffer parameter `space [mut] [element]`.
    pub(super) fn resolve_buffer(
        &mut self,
        space: ast::BufferSpace,
        writable: bool,
        element: &ast::TypeExpression,
        span: Span,
    ) -> Option<ParameterType> {
        let record = self.record_element(element);
        let element = match record {
            Some(_) => ScalarType::U8,
            None => self.resolve_scalar_type(element, "a buffer element")?,
        };
        let space = match space {
            ast::BufferSpace::Global => AddressSpace::Global,
            ast::BufferSpace::Constant => AddressSpace::Constant,
            ast::BufferSpace::Local => AddressSpace::Local,
            ast::BufferSpace::Private => {
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0301,
                        "private memory cannot be sized at launch",
                        span,
                        "`private [T]` has no length",
                    )
                    .with_hint(
                        "give the length (`private mut [T; N]`, device functions only), or take work-group memory sized at launch: `local mut [T]`",
                    ),
                );
                return None;
            }
        };
        if space == AddressSpace::Local && record.is_some() {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0301,
                    "records in local memory sized at launch are not supported",
                    span,
                    "a launch-sized local array of records",
                )
                .with_hint(
                    "use one launch-sized local array per field, such as `starts: local mut [i32]`",
                ),
            );
            return None;
        }
        if space == AddressSpace::Constant && writable {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0402,
                    "`constant` buffers are read-only",
                    span,
                    "`constant mut` is not allowed",
                )
                .with_hint("use `global mut [T]` for a writable buffer"),
            );
            return None;
        }
        if element == ScalarType::Bool {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0301,
                    "buffers of `bool` are not supported",
                    span,
                    "`bool` has no defined size on the host",
                )
                .with_hint("use a buffer of `u8`"),
            );
            return None;
        }
        Some(ParameterType::Buffer {
            element,
            space,
            writable,
            record,
        })
    }

    pub(super) fn resolve_parameter(
        &mut self,
        parameter: &ast::Parameter,
        kernel: bool,
    ) -> Option<ParameterShape> {
        match &parameter.ty {
            ast::ParameterTypeExpression::Value(ty) => {
                match (self.resolve_type(ty), kernel) {
                    (Some(ResolvedType::Tuple(elements)), false) => {
                        return Some(ParameterShape::Tuple(elements));
                    }
                    (Some(ResolvedType::Vector(vector)), false) => {
                        return Some(ParameterShape::Vector(vector));
                    }
                    _ => {}
                }
                let scalar = self.resolve_scalar_type(ty, "a parameter passed by value");
                if scalar.is_none() && kernel && matches!(ty, ast::TypeExpression::Tuple { .. }) {
                    if let Some(last) = self.diagnostics.last_mut() {
                        last.hints.push(
                            "kernels take scalars and buffers: pass each element as a parameter"
                                .into(),
                        );
                    }
                }
                if scalar.is_none() && matches!(ty, ast::TypeExpression::Array { .. }) {
                    if let Some(last) = self.diagnostics.last_mut() {
                        last.hints.push(
                            "pass arrays as buffers (`global [T]`, `global mut [T]`) or, to a device function, by reference (`local [T; N]`, `private mut [T; N]`)".into(),
                        );
                    }
                }
                let scalar = scalar?;
                if kernel && scalar == ScalarType::Bool {
                    self.report(
                        Diagnostic::error(
                            ErrorCode::E0301,
                            "kernel parameters cannot have type `bool`",
                            ty.span(),
                            "`bool` has no defined size on the host",
                        )
                        .with_hint("pass a `u32` and compare it with 0"),
                    );
                    return None;
                }
                Some(ParameterShape::Single(ParameterType::Scalar { ty: scalar }))
            }
            ast::ParameterTypeExpression::ShapedBuffer {
                space,
                writable,
                element,
                rank,
                span,
            } => {
                let buffer = self.resolve_buffer(*space, *writable, element, *span)?;
                if matches!(
                    &buffer,
                    ParameterType::Buffer {
                        record: Some(_),
                        ..
                    }
                ) {
                    self.report(
                        Diagnostic::error(
                            ErrorCode::E0301,
                            "multi-dimensional buffers of records are not supported",
                            *span,
                            "a record element type",
                        )
                        .with_hint("pass the records as a flat buffer (`global [Node]`) and index it with `row * n + col`"),
                    );
                    return None;
                }
                Some(ParameterShape::Shaped {
                    buffer,
                    rank: *rank,
                })
            }
            ast::ParameterTypeExpression::Buffer {
                space,
                writable,
                element,
                span,
            } => self
                .resolve_buffer(*space, *writable, element, *span)
                .map(ParameterShape::Single),
            ast::ParameterTypeExpression::Array {
                space,
                writable,
                ty,
                span,
            } => {
                let space = match space {
                    ast::ArraySpace::Local => AddressSpace::Local,
                    ast::ArraySpace::Private => AddressSpace::Private,
                };
                if kernel {
                    let mut diagnostic = Diagnostic::error(
                        ErrorCode::E0301,
                        format!(
                            "kernel parameter `{}` cannot be a {space} array",
                            parameter.name.name
                        ),
                        *span,
                        "kernels take scalars and buffers",
                    )
                    .with_hint(
                        "declare the array inside the kernel and pass it to device functions",
                    );
                    if space == AddressSpace::Local {
                        diagnostic = diagnostic.with_hint(format!(
                            "or take local memory whose length the launch gives: `{}: local mut [T]`",
                            parameter.name.name
                        ));
                    }
                    self.report(diagnostic);
                    return None;
                }
                match self.resolve_type(ty)? {
                    ResolvedType::Array(array) => {
                        Some(ParameterShape::Single(ParameterType::Array {
                            ty: array,
                            space,
                            writable: *writable,
                        }))
                    }
                    other => {
                        self.report(
                            Diagnostic::error(
                                ErrorCode::E0301,
                                format!(
                                    "a {space} parameter must have an array type, not `{}`",
                                    describe_type(&other)
                                ),
                                ty.span(),
                                "not an array type",
                            )
                            .with_hint(format!("write `{space} [T; N]`")),
                        );
                        None
                    }
                }
            }
        }
    }

    pub(super) fn device_signature(
        &mut self,
        item: &ast::FunctionItem,
        id: FunctionId,
    ) -> Option<Signature> {
        let mut shapes = Vec::new();
        let mut ok = true;
        for parameter in &item.parameters {
            match self.resolve_parameter(parameter, false) {
                Some(shape) => shapes.push(shape),
                None => ok = false,
            }
        }
        let (return_type, tuple_result, vector_result) = self.resolve_result(item)?;
        let mut parameters: Vec<ParameterType> =
            shapes.iter().flat_map(ParameterShape::flattened).collect();
        if let Some(elements) = &tuple_result {
            parameters.extend(elements.iter().map(|&ty| tuple_result_parameter(ty)));
        }
        ok.then_some(Signature {
            id,
            parameters,
            shapes,
            return_type,
            tuple_result,
            vector_result,
        })
    }

    /// A device function's result: a scalar, a tuple (a vector returns as the tuple of its
    /// components), or nothing (also for kernels, which report a result type elsewhere).
    /// `None` when the type does not resolve.
    #[allow(clippy::type_complexity)]
    pub(crate) fn resolve_result(
        &mut self,
        item: &ast::FunctionItem,
    ) -> Option<(
        Option<ScalarType>,
        Option<Vec<ScalarType>>,
        Option<VectorType>,
    )> {
        match (&item.return_type, item.kind) {
            (Some(ty), AstFunctionKind::Device) => match self.resolve_type(ty)? {
                ResolvedType::Tuple(elements) => Some((None, Some(elements), None)),
                ResolvedType::Vector(vector) => {
                    Some((None, Some(vector.components()), Some(vector)))
                }
                _ => Some((
                    Some(self.resolve_scalar_type(ty, "a function result")?),
                    None,
                    None,
                )),
            },
            _ => Some((None, None, None)),
        }
    }
}
