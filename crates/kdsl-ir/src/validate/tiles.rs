//! Asynchronous copies and matrix statements (sub-group tiles, matrix groups).

use super::FunctionValidator;
use crate::ir::*;
use crate::span::Span;
use crate::types::{AddressSpace, ParameterType, ScalarType};

impl FunctionValidator<'_> {
    /// An asynchronous copy, its commit or its wait.
    pub(super) fn async_copy(&mut self, op: &crate::AsyncCopyOp, span: Span) {
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

    /// A tile statement: a copy's local destination (a store's local source) and 2-D buffer
    /// source (destination, writable) of one element type, whose rows fill a swizzled row;
    /// `u32` corner and slot; rows and slot in range.
    pub(super) fn tile_copy(&mut self, op: &crate::TileCopyOp, span: Span) {
        use crate::tile_copy::{columns, MAX_ROWS};
        if let Some(slot) = op.slot() {
            if self.expression(slot) != Some(ScalarType::U32) {
                self.error(span, "a tile copy's slot is not `u32`");
            }
        }
        let (local, buffer, element, row, column, rows, store) = match op {
            crate::TileCopyOp::Copy {
                destination,
                source,
                element,
                row,
                column,
                rows,
                ..
            } => (destination, source, element, row, column, rows, false),
            crate::TileCopyOp::Store {
                destination,
                element,
                row,
                column,
                rows,
                source,
            } => (source, destination, element, row, column, rows, true),
            _ => return,
        };
        self.place(local, span, !store);
        for corner in [row, column] {
            if self.expression(corner) != Some(ScalarType::U32) {
                self.error(span, "a tile copy's corner is not `u32`");
            }
        }
        if local.space != AddressSpace::Local
            || local.indices.len() != 1
            || local.element != *element
            || columns(*element).is_none()
            || !(1..=MAX_ROWS).contains(rows)
        {
            self.error(span, "a tile's local memory, element type or rows");
        }
        let shaped = self
            .function
            .shaped_buffers
            .iter()
            .find(|s| s.buffer == *buffer);
        let parameter = self.function.parameters.get(buffer.0 as usize);
        let buffer_matches = match parameter.map(|p| &p.ty) {
            Some(ParameterType::Buffer {
                element: e,
                space,
                writable,
                record: None,
            }) => {
                e == element
                    && if store {
                        *space == AddressSpace::Global && *writable
                    } else {
                        matches!(space, AddressSpace::Global | AddressSpace::Constant)
                    }
            }
            _ => false,
        };
        if shaped.map(|s| s.rank()) != Some(2) || !buffer_matches {
            self.error(
                span,
                "a tile's buffer is not a 2-D buffer of its element type (writable for a store)",
            );
        }
    }

    /// A matrix statement: tiles are private arrays of the shape's length and element type,
    /// memory is a buffer or a one-dimensional local array of the tile's element type, and
    /// offsets and strides are `u32`.
    pub(super) fn matrix(&mut self, op: &crate::matrix::MatrixOp, span: Span) {
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
    pub(super) fn group_matrix(&mut self, op: &crate::matrix::MatrixOp, span: Span) {
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
}
