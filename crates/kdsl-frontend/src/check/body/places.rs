//! Places: buffer and array elements, and whether they may be written.

use super::*;

impl Checker<'_> {
    pub(super) fn report_read_only(&mut self, access: &PlaceAccess, span: Span, action: &str) {
        let local = matches!(
            self.lookup(&access.base_name),
            Resolved::Parameter(
                _,
                ParameterType::Buffer {
                    space: AddressSpace::Local,
                    ..
                },
                _
            )
        );
        let buffer_hint = if local {
            "declare the parameter as `local mut [T]`"
        } else {
            "declare the parameter as `global mut [T]`"
        };
        let diagnostic = match access.origin {
            PlaceOrigin::Buffer => Diagnostic::error(
                ErrorCode::E0402,
                format!(
                    "cannot {action} `{}`: the buffer is read-only",
                    access.base_name
                ),
                span,
                "read-only buffer",
            )
            .with_label(access.declared_at, "declared read-only here")
            .with_hint(buffer_hint),
            _ => Diagnostic::error(
                ErrorCode::E0401,
                format!(
                    "cannot {action} an element of immutable array `{}`",
                    access.base_name
                ),
                span,
                "immutable array",
            )
            .with_label(access.declared_at, "declared immutable here")
            .with_hint(if access.array_parameter {
                "declare the parameter with `mut`, such as `local mut [T; N]`".to_string()
            } else {
                format!("declare it `let mut {}`", access.base_name)
            }),
        };
        self.report(diagnostic);
    }

    /// An index written at `span`, which must be an integer (E0308).
    pub(super) fn integer_index(&mut self, index: Expression, span: Span) -> Option<Expression> {
        if index.ty.is_integer() {
            return Some(index);
        }
        self.report(
            Diagnostic::error(
                ErrorCode::E0308,
                format!("index must be an integer, found `{}`", index.ty),
                span,
                "not an integer",
            )
            .with_hint("convert it with `as u32`"),
        );
        None
    }

    pub(super) fn place(&mut self, expression: &ast::Expression) -> Option<(Place, PlaceAccess)> {
        if let E::Field { base, field } = &strip_parentheses(expression).kind {
            if self.record_shape(base).is_some()
                && matches!(strip_parentheses(base).kind, E::Index { .. })
            {
                return self.record_field_place(base, field);
            }
        }
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
            let value = self.expression(index, Some(ScalarType::U32));
            match value.and_then(|value| self.integer_index(value, index.span)) {
                Some(value) => indices.push(value),
                None => indices_ok = false,
            }
        }
        let name = match &base.kind {
            E::Name(name) => name,
            E::Error => return None,
            _ => {
                self.report(Diagnostic::error(
                    ErrorCode::E0207,
                    "only buffers and arrays can be indexed",
                    base.span,
                    "not a buffer or array",
                ));
                return None;
            }
        };
        let mut lengths: Vec<u32> = Vec::new();
        let mut shaped = None;
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
                {
                    lengths = ty.dimensions.clone();
                    ty.element
                },
                space,
                ty.dimensions.len(),
                PlaceAccess {
                    array_parameter: false,
                    writable: mutable,
                    base_name: name.name.clone(),
                    declared_at: span,
                    origin: PlaceOrigin::of_array(space),
                },
            ),
            Resolved::Parameter(
                _,
                ParameterType::Buffer {
                    record: Some(record),
                    ..
                },
                _,
            ) => {
                self.whole_record_as_scalar(expression, &name.name, &record);
                return None;
            }
            Resolved::Parameter(
                id,
                ParameterType::Buffer {
                    element,
                    space,
                    writable,
                    record: None,
                },
                span,
            ) => (
                PlaceBase::Parameter(id),
                element,
                space,
                {
                    shaped = self.shaped_buffer(id);
                    shaped.as_ref().map_or(1, |s| s.rank())
                },
                PlaceAccess {
                    array_parameter: false,
                    writable,
                    base_name: name.name.clone(),
                    declared_at: span,
                    origin: PlaceOrigin::Buffer,
                },
            ),
            Resolved::Parameter(
                id,
                ParameterType::Array {
                    ty,
                    space,
                    writable,
                },
                span,
            ) => (
                PlaceBase::Parameter(id),
                {
                    lengths = ty.dimensions.clone();
                    ty.element
                },
                space,
                ty.dimensions.len(),
                PlaceAccess {
                    array_parameter: true,
                    writable,
                    base_name: name.name.clone(),
                    declared_at: span,
                    origin: PlaceOrigin::of_array(space),
                },
            ),
            Resolved::Binding(Binding::Record { record, .. }) => {
                self.report(Diagnostic::error(
                    ErrorCode::E0207,
                    format!("cannot index the record `{}`", name.name),
                    name.span,
                    format!("a `{record}`, not an array"),
                ));
                return None;
            }
            Resolved::Binding(Binding::Tuple { .. }) => {
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0207,
                        format!("cannot index tuple `{}`", name.name),
                        name.span,
                        "a tuple, not an array",
                    )
                    .with_hint(format!("read an element with a field: `{}.0`", name.name)),
                );
                return None;
            }
            Resolved::Binding(Binding::Vector { ty, .. }) => {
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0207,
                        format!("cannot index the vector `{}`", name.name),
                        name.span,
                        format!("a `{ty}`, not an array"),
                    )
                    .with_hint(format!("read a component: `{}.x`", name.name)),
                );
                return None;
            }
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
                    ErrorCode::E0207,
                    format!("cannot index `{}` of type `{ty}`", name.name),
                    name.span,
                    "not a buffer or array",
                ));
                return None;
            }
            Resolved::Constant(_) | Resolved::WorkGroupSize(_) | Resolved::Function => {
                self.report(Diagnostic::error(
                    ErrorCode::E0207,
                    format!("cannot index `{}`", name.name),
                    name.span,
                    "not a buffer or array",
                ));
                return None;
            }
        };
        if self.constant_context {
            self.report(Diagnostic::error(
                ErrorCode::E0509,
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
                    ErrorCode::E0308,
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
                } else if shaped.is_some() {
                    let names = ["i", "j", "k"];
                    format!(
                        "index every dimension: `{}[{}]`",
                        name.name,
                        names[..dimensions.min(3)].join(", ")
                    )
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
        if !self.constant_indices_in_bounds(&indices, &lengths, &name.name) {
            return None;
        }
        if let Some(shaped) = &shaped {
            indices = vec![self.shaped_index(shaped, indices)];
        }
        Some((
            Place {
                id: kdsl_ir::PlaceId::UNNUMBERED,
                base: place_base,
                indices,
                element,
                space,
                field: None,
            },
            access,
        ))
    }

    // ----- Calls -----

    /// Reports each constant index outside its fixed-size array dimension (E0517); whether
    /// every index is allowed.
    fn constant_indices_in_bounds(
        &mut self,
        indices: &[kdsl_ir::Expression],
        lengths: &[u32],
        array: &str,
    ) -> bool {
        let mut in_bounds = true;
        for (dimension, (index, &length)) in indices.iter().zip(lengths).enumerate() {
            let Ok(value) = constant::evaluate(index) else {
                continue;
            };
            let Literal::Integer(bits) = value.to_literal() else {
                continue;
            };
            let number = constant::sign_extend(bits, index.ty);
            if (0..i128::from(length)).contains(&number) {
                continue;
            }
            let which = if lengths.len() > 1 {
                format!(" in dimension {dimension}")
            } else {
                String::new()
            };
            self.report(
                Diagnostic::error(
                    ErrorCode::E0517,
                    format!("index {number} is out of bounds for array `{array}` of length {length}{which}"),
                    index.span,
                    format!("valid indices are 0 to {}", i128::from(length) - 1),
                )
                .with_hint("a constant index must be smaller than the array's length"),
            );
            in_bounds = false;
        }
        in_bounds
    }
}
