//! Places: scalar, vector and array accesses, and what they may name.

use super::FunctionValidator;
use crate::ir::*;
use crate::span::Span;
use crate::types::{AddressSpace, ArrayType, ParameterType, ScalarType};

impl FunctionValidator<'_> {
    /// A vector access: a buffer of a non-`bool` element, 2 to 4 components.
    pub(super) fn vector_place(&mut self, place: &Place, width: usize, span: Span, write: bool) {
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

    /// Checks a place; `write` means it is stored to or used atomically.
    pub(super) fn place(&mut self, place: &Place, span: Span, write: bool) {
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
    pub(super) fn array_place(&mut self, place: &Place, span: Span, write: bool) {
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

    /// The type, space and writability of an array variable or array parameter. Array
    /// variables are writable: the IR does not record `let` versus `let mut`.
    pub(super) fn array_of(&self, base: PlaceBase) -> Option<(ArrayType, AddressSpace, bool)> {
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
}
