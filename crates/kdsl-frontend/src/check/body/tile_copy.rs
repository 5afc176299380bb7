//! The tile copies (`async_tile_copy(destination, source[row, column], rows, slot)`,
//! `async_tile_wait(slot)`): statements whose operands are a local memory element, the corner
//! of a 2-D buffer and constants (`kdsl_ir::tile_copy`).

use super::*;
use kdsl_ir::tile_copy::{self, TileCopyKind, TileCopyOp};

const EXAMPLE: &str = "`async_tile_copy(tile[0], a[row, column], 64, 0)`";

impl Checker<'_> {
    pub(super) fn tile_copy_statement(
        &mut self,
        kind: TileCopyKind,
        callee: &ast::Identifier,
        arguments: &[ast::Expression],
        span: Span,
        out: &mut Block,
    ) {
        let arity = Builtin::TileCopy(kind).arity();
        if arguments.len() != arity {
            self.arity_error(callee, arity, arguments.len(), span);
            return;
        }
        let op = match kind {
            TileCopyKind::Copy => self.tile_copy(arguments),
            TileCopyKind::Wait => self
                .tile_slot(&arguments[0])
                .map(|slot| TileCopyOp::Wait { slot }),
            TileCopyKind::Release => self
                .tile_slot(&arguments[0])
                .map(|slot| TileCopyOp::Release { slot }),
        };
        if let Some(op) = op {
            out.push(statement(StatementKind::TileCopy(op), span));
        }
    }

    fn tile_copy(&mut self, arguments: &[ast::Expression]) -> Option<TileCopyOp> {
        let destination = self.tile_destination(&arguments[0]);
        let source = self.tile_source(&arguments[1]);
        let rows = self.tile_constant(&arguments[2], 1..=tile_copy::MAX_ROWS, "the rows to copy");
        let slot = self.tile_slot(&arguments[3]);
        let (destination, (source, element, row, column), rows, slot) =
            (destination?, source?, rows?, slot?);
        if destination.element != element {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0342,
                    format!(
                        "`async_tile_copy` copies `{element}` elements into `{}` memory",
                        destination.element
                    ),
                    arguments[1].span,
                    format!("`{element}` elements"),
                )
                .with_label(
                    arguments[0].span,
                    format!("`{}` elements", destination.element),
                )
                .with_hint("copy between memories of one element type"),
            );
            return None;
        }
        if tile_copy::columns(element).is_none() {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0342,
                    format!("`async_tile_copy` cannot copy `{element}` elements"),
                    arguments[1].span,
                    format!("`{element}` elements"),
                )
                .with_hint(format!(
                    "a tile's rows are {} bytes: copy numbers whose size divides them",
                    tile_copy::ROW_BYTES
                )),
            );
            return None;
        }
        Some(TileCopyOp::Copy {
            destination,
            source,
            element,
            row,
            column,
            rows,
            slot,
        })
    }

    /// A slot: a `u32`, below `SLOTS` where it is a constant (E0342).
    fn tile_slot(&mut self, argument: &ast::Expression) -> Option<Expression> {
        let value = self.expression(argument, Some(ScalarType::U32))?;
        let refuse = |checker: &mut Self, label: String| {
            checker.report(
                Diagnostic::error(
                    ErrorCode::E0342,
                    format!(
                        "a tile copy's slot is a `u32` from 0 to {}",
                        tile_copy::SLOTS - 1
                    ),
                    argument.span,
                    label,
                )
                .with_hint(format!(
                    "copies complete on {} slots: a ring of tiles takes one each",
                    tile_copy::SLOTS
                )),
            );
        };
        if value.ty != ScalarType::U32 {
            refuse(self, format!("`{}`, not `u32`", value.ty));
            return None;
        }
        if let Some(constant) = constant_u32(&value).filter(|&v| v >= tile_copy::SLOTS) {
            refuse(self, format!("slot {constant}"));
            return None;
        }
        Some(value)
    }

    /// A constant `u32` in `range`, or E0342 naming `what` it is.
    fn tile_constant(
        &mut self,
        argument: &ast::Expression,
        range: std::ops::RangeInclusive<u32>,
        what: &str,
    ) -> Option<u32> {
        let value = self.expression(argument, Some(ScalarType::U32))?;
        let constant = constant_u32(&value).filter(|v| range.contains(v));
        if constant.is_none() {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0342,
                    format!(
                        "a tile copy takes a constant from {} to {} here: {what}",
                        range.start(),
                        range.end()
                    ),
                    argument.span,
                    "not such a constant",
                )
                .with_hint("write a literal or a module constant"),
            );
        }
        constant
    }

    /// The destination: a writable element of a one-dimensional local array.
    fn tile_destination(&mut self, argument: &ast::Expression) -> Option<Place> {
        let refuse = |checker: &mut Self, label: &str| {
            checker.report(
                Diagnostic::error(
                    ErrorCode::E0342,
                    "the destination of `async_tile_copy` must be an element of local memory",
                    argument.span,
                    label.to_string(),
                )
                .with_hint(format!(
                    "copy into a one-dimensional local array: {EXAMPLE}"
                )),
            );
        };
        if !matches!(strip_parentheses(argument).kind, E::Index { .. }) {
            refuse(self, "not a memory element");
            return None;
        }
        let (place, access) = self.place(argument)?;
        if place.space != AddressSpace::Local || place.indices.len() != 1 || place.field.is_some() {
            refuse(self, "not an element of a one-dimensional local array");
            return None;
        }
        if !access.writable {
            self.report_read_only(&access, argument.span, "copy into");
            return None;
        }
        Some(place)
    }

    /// The source: `a[row, column]` of a 2-D buffer parameter `a`, its indices `u32`.
    fn tile_source(
        &mut self,
        argument: &ast::Expression,
    ) -> Option<(ParameterId, ScalarType, Expression, Expression)> {
        let refuse = |checker: &mut Self, label: &str| {
            checker.report(
                Diagnostic::error(
                    ErrorCode::E0342,
                    "the source of `async_tile_copy` must be the corner of a 2-D buffer",
                    argument.span,
                    label.to_string(),
                )
                .with_hint(format!(
                    "name the tile's first element in a `global [[T]]` parameter: {EXAMPLE}"
                )),
            );
        };
        let mut indices = Vec::new();
        let mut base = strip_parentheses(argument);
        while let E::Index { base: inner, index } = &base.kind {
            indices.push(index.as_ref());
            base = strip_parentheses(inner);
        }
        indices.reverse();
        let buffer = match &base.kind {
            E::Name(name) => match self.lookup(&name.name) {
                Resolved::Parameter(
                    id,
                    ParameterType::Buffer {
                        element,
                        space: AddressSpace::Global | AddressSpace::Constant,
                        record: None,
                        ..
                    },
                    _,
                ) => self
                    .shaped_buffer(id)
                    .filter(|shaped| shaped.rank() == 2)
                    .map(|_| (id, element)),
                _ => None,
            },
            _ => None,
        };
        let Some((id, element)) = buffer else {
            refuse(self, "not an element of a 2-D buffer parameter");
            return None;
        };
        if indices.len() != 2 {
            refuse(self, "index both dimensions, row first");
            return None;
        }
        let mut corner = Vec::with_capacity(2);
        for index in indices {
            let value = self.expression(index, Some(ScalarType::U32))?;
            if value.ty != ScalarType::U32 {
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0342,
                        format!("a tile's corner is a `u32`, found `{}`", value.ty),
                        index.span,
                        "not a `u32`",
                    )
                    .with_hint("convert it with `as u32`"),
                );
                return None;
            }
            corner.push(value);
        }
        let column = corner.pop()?;
        let row = corner.pop()?;
        Some((id, element, row, column))
    }
}
