//! The tile statements (`async_tile_copy(destination, source[row, column], rows, slot)`,
//! `async_tile_wait(slot)`, `async_tile_release(slot)`,
//! `async_tile_store(destination[row, column], source, rows)`, `async_tile_store_wait()`):
//! statements whose operands are a local memory element, the corner of a 2-D buffer and
//! constants (`kdsl_ir::tile_copy`).

use super::*;
use kdsl_ir::tile_copy::{self, TileCopyKind, TileCopyOp};

const COPY_EXAMPLE: &str = "`async_tile_copy(tile[0], a[row, column], 64, 0)`";
const STORE_EXAMPLE: &str = "`async_tile_store(c[row, column], tile[0], 64)`";

/// Which way a statement moves its tile, for the words of its diagnostics.
#[derive(Clone, Copy)]
enum Way {
    /// From the buffer into local memory (`async_tile_copy`).
    Copy,
    /// From local memory into the buffer (`async_tile_store`).
    Store,
}

impl Way {
    fn name(self) -> &'static str {
        match self {
            Way::Copy => "async_tile_copy",
            Way::Store => "async_tile_store",
        }
    }

    fn example(self) -> &'static str {
        match self {
            Way::Copy => COPY_EXAMPLE,
            Way::Store => STORE_EXAMPLE,
        }
    }

    /// What the statement calls its local memory and its buffer.
    fn roles(self) -> (&'static str, &'static str) {
        match self {
            Way::Copy => ("destination", "source"),
            Way::Store => ("source", "destination"),
        }
    }
}

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
        if matches!(kind, TileCopyKind::Copy | TileCopyKind::Store) {
            self.tile_statement_in_function(kind, span);
        }
        let op = match kind {
            TileCopyKind::Copy => self.tile_copy(arguments),
            TileCopyKind::Wait => self
                .tile_slot(&arguments[0])
                .map(|slot| TileCopyOp::Wait { slot }),
            TileCopyKind::Release => self
                .tile_slot(&arguments[0])
                .map(|slot| TileCopyOp::Release { slot }),
            TileCopyKind::Store => self.tile_store(arguments),
            TileCopyKind::StoreWait => Some(TileCopyOp::StoreWait),
        };
        if let Some(op) = op {
            out.push(statement(StatementKind::TileCopy(op), span));
        }
    }

    /// A copy or store in a device function: the lowering keeps tensor copies only where no
    /// device function holds tile statements (a kernel's waits would not wait for a
    /// function's), so the whole module takes the plain path, which deserves a warning.
    fn tile_statement_in_function(&mut self, kind: TileCopyKind, span: Span) {
        let Some(state) = &self.function else {
            return;
        };
        if state.kind != FunctionKind::Device {
            return;
        }
        let way = match kind {
            TileCopyKind::Store => Way::Store,
            _ => Way::Copy,
        };
        let label = format!("in device function `{}`", state.name);
        self.report(
            Diagnostic::warning(
                ErrorCode::W0342,
                format!(
                    "`{}` in a device function: this module's tile statements take the plain path on every target",
                    way.name()
                ),
                span,
                label,
            )
            .with_hint("issue tile copies and stores in the kernel's body: only there do they reach the tensor memory accelerator (sm_90a)"),
        );
    }

    fn tile_copy(&mut self, arguments: &[ast::Expression]) -> Option<TileCopyOp> {
        let destination = self.tile_local(&arguments[0], Way::Copy);
        let source = self.tile_buffer(&arguments[1], Way::Copy);
        let rows = self.tile_constant(&arguments[2], 1..=tile_copy::MAX_ROWS, "the rows to copy");
        let slot = self.tile_slot(&arguments[3]);
        let (destination, (source, element, row, column), rows, slot) =
            (destination?, source?, rows?, slot?);
        self.tile_elements(
            Way::Copy,
            element,
            &arguments[1],
            &destination,
            &arguments[0],
        )?;
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

    fn tile_store(&mut self, arguments: &[ast::Expression]) -> Option<TileCopyOp> {
        let destination = self.tile_buffer(&arguments[0], Way::Store);
        let source = self.tile_local(&arguments[1], Way::Store);
        let rows = self.tile_constant(&arguments[2], 1..=tile_copy::MAX_ROWS, "the rows to store");
        let ((destination, element, row, column), source, rows) = (destination?, source?, rows?);
        self.tile_elements(Way::Store, element, &arguments[0], &source, &arguments[1])?;
        Some(TileCopyOp::Store {
            destination,
            element,
            row,
            column,
            rows,
            source,
        })
    }

    /// The buffer's elements (`element`) and the local memory's are of one type, which fills
    /// a tile's rows (E0342).
    fn tile_elements(
        &mut self,
        way: Way,
        element: ScalarType,
        buffer: &ast::Expression,
        local: &Place,
        local_argument: &ast::Expression,
    ) -> Option<()> {
        if local.element != element {
            let (from, into) = match way {
                Way::Copy => (element, local.element),
                Way::Store => (local.element, element),
            };
            self.report(
                Diagnostic::error(
                    ErrorCode::E0342,
                    format!(
                        "`{}` moves `{from}` elements into `{into}` memory",
                        way.name()
                    ),
                    buffer.span,
                    format!("`{element}` elements"),
                )
                .with_label(local_argument.span, format!("`{}` elements", local.element))
                .with_hint("move tiles between memories of one element type"),
            );
            return None;
        }
        if tile_copy::columns(element).is_none() {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0342,
                    format!("`{}` cannot move `{element}` elements", way.name()),
                    buffer.span,
                    format!("`{element}` elements"),
                )
                .with_hint(format!(
                    "a tile's rows are {} bytes: use numbers whose size divides them",
                    tile_copy::ROW_BYTES
                )),
            );
            return None;
        }
        Some(())
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
                        "a tile statement takes a constant from {} to {} here: {what}",
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

    /// The tile's local memory: an element of a one-dimensional local array, writable for a
    /// copy.
    fn tile_local(&mut self, argument: &ast::Expression, way: Way) -> Option<Place> {
        let role = way.roles().0;
        let refuse = |checker: &mut Self, label: &str| {
            checker.report(
                Diagnostic::error(
                    ErrorCode::E0342,
                    format!(
                        "the {role} of `{}` must be an element of local memory",
                        way.name()
                    ),
                    argument.span,
                    label.to_string(),
                )
                .with_hint(format!(
                    "name the tile's first element in a one-dimensional local array: {}",
                    way.example()
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
        if matches!(way, Way::Copy) && !access.writable {
            self.report_read_only(&access, argument.span, "copy into");
            return None;
        }
        Some(place)
    }

    /// The tile's buffer: `a[row, column]` of a 2-D buffer parameter `a` (writable for a
    /// store), its indices `u32`.
    fn tile_buffer(
        &mut self,
        argument: &ast::Expression,
        way: Way,
    ) -> Option<(ParameterId, ScalarType, Expression, Expression)> {
        let role = way.roles().1;
        let refuse = |checker: &mut Self, label: &str| {
            checker.report(
                Diagnostic::error(
                    ErrorCode::E0342,
                    format!(
                        "the {role} of `{}` must be the corner of a 2-D buffer",
                        way.name()
                    ),
                    argument.span,
                    label.to_string(),
                )
                .with_hint(format!(
                    "name the tile's first element in a `global [[T]]` parameter: {}",
                    way.example()
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
                        space: space @ (AddressSpace::Global | AddressSpace::Constant),
                        writable,
                        record: None,
                    },
                    declared_at,
                ) => self
                    .shaped_buffer(id)
                    .filter(|shaped| shaped.rank() == 2)
                    .map(|_| {
                        let access = PlaceAccess {
                            writable: writable && space == AddressSpace::Global,
                            array_parameter: false,
                            base_name: name.name.clone(),
                            declared_at,
                            origin: PlaceOrigin::Buffer,
                        };
                        (id, element, access)
                    }),
                _ => None,
            },
            _ => None,
        };
        let Some((id, element, access)) = buffer else {
            refuse(self, "not an element of a 2-D buffer parameter");
            return None;
        };
        if matches!(way, Way::Store) && !access.writable {
            self.report_read_only(&access, argument.span, "store into");
            return None;
        }
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
