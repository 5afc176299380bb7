//! The asynchronous copies (`async_copy(destination, source, count)`, `async_commit()`,
//! `async_wait(pending)`): statements whose operands are a local memory element, a global
//! buffer element and constants (`kdsl_ir::async_copy`).

use super::*;
use kdsl_ir::async_copy::{self, AsyncCopyKind, AsyncCopyOp};

impl Checker<'_> {
    pub(super) fn async_copy_statement(
        &mut self,
        kind: AsyncCopyKind,
        callee: &ast::Identifier,
        arguments: &[ast::Expression],
        span: Span,
        out: &mut Block,
    ) {
        let arity = Builtin::AsyncCopy(kind).arity();
        if arguments.len() != arity {
            self.arity_error(callee, arity, arguments.len(), span);
            return;
        }
        let op = match kind {
            AsyncCopyKind::Copy => self.async_copy(arguments),
            AsyncCopyKind::Commit => Some(AsyncCopyOp::Commit),
            AsyncCopyKind::Wait => self
                .async_constant(&arguments[0], 0..=async_copy::MAX_PENDING, "async_wait")
                .map(|pending| AsyncCopyOp::Wait { pending }),
        };
        if let Some(op) = op {
            out.push(statement(StatementKind::AsyncCopy(op), span));
        }
    }

    fn async_copy(&mut self, arguments: &[ast::Expression]) -> Option<AsyncCopyOp> {
        let destination = self.copy_place(&arguments[0], true);
        let source = self.copy_place(&arguments[1], false);
        let count = self.async_constant(&arguments[2], 1..=16, "async_copy");
        let (destination, source, count) = (destination?, source?, count?);
        if destination.element != source.element {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0341,
                    format!(
                        "`async_copy` copies `{}` elements into `{}` memory",
                        source.element, destination.element
                    ),
                    arguments[1].span,
                    format!("`{}` elements", source.element),
                )
                .with_label(
                    arguments[0].span,
                    format!("`{}` elements", destination.element),
                )
                .with_hint("copy between memories of one element type"),
            );
            return None;
        }
        if !async_copy::valid_count(source.element, count) {
            let counts: Vec<String> = async_copy::COUNTS
                .iter()
                .filter(|&&count| async_copy::valid_count(source.element, count))
                .map(u32::to_string)
                .collect();
            let hint = if counts.is_empty() {
                format!(
                    "a copy moves 4, 8 or 16 bytes, and `{}` elements fit none of them",
                    source.element
                )
            } else {
                format!(
                    "a copy moves 4, 8 or 16 bytes: {} `{}` elements",
                    counts.join(", "),
                    source.element
                )
            };
            let bytes = count * source.element.size_in_bytes();
            let plural = |n: u32| if n == 1 { "" } else { "s" };
            self.report(
                Diagnostic::error(
                    ErrorCode::E0341,
                    format!(
                        "`async_copy` cannot copy {count} `{}` element{} at once",
                        source.element,
                        plural(count)
                    ),
                    arguments[2].span,
                    format!("{bytes} byte{}", plural(bytes)),
                )
                .with_hint(hint),
            );
            return None;
        }
        Some(AsyncCopyOp::Copy {
            destination,
            source,
            count,
        })
    }

    /// A constant `u32` in `range`, or E0341 naming `name`.
    fn async_constant(
        &mut self,
        argument: &ast::Expression,
        range: std::ops::RangeInclusive<u32>,
        name: &str,
    ) -> Option<u32> {
        let value = self.expression(argument, Some(ScalarType::U32))?;
        let constant = constant_u32(&value).filter(|v| range.contains(v));
        if constant.is_none() {
            let what = if name == "async_wait" {
                "groups left in flight"
            } else {
                "elements to copy"
            };
            self.report(
                Diagnostic::error(
                    ErrorCode::E0341,
                    format!(
                        "`{name}` takes a constant from {} to {}: the {what}",
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

    /// The destination (a one-dimensional local array's or local buffer's element, writable)
    /// or the source (a flat global buffer's element) of a copy.
    fn copy_place(&mut self, argument: &ast::Expression, destination: bool) -> Option<Place> {
        let (role, hint) = if destination {
            (
                "destination",
                "copy into a one-dimensional local array: `async_copy(tile[i], a[j], 4)`",
            )
        } else {
            (
                "source",
                "copy from a global buffer: `async_copy(tile[i], a[j], 4)`",
            )
        };
        let refuse = |checker: &mut Self, label: &str| {
            checker.report(
                Diagnostic::error(
                    ErrorCode::E0341,
                    format!(
                        "the {role} of `async_copy` must be an element of {}",
                        if destination {
                            "local memory"
                        } else {
                            "a global buffer"
                        }
                    ),
                    argument.span,
                    label.to_string(),
                )
                .with_hint(hint),
            );
        };
        if !matches!(strip_parentheses(argument).kind, E::Index { .. }) {
            refuse(self, "not a memory element");
            return None;
        }
        let (place, access) = self.place(argument)?;
        let right_memory = if destination {
            place.space == AddressSpace::Local
        } else {
            access.origin == PlaceOrigin::Buffer
                && matches!(place.space, AddressSpace::Global | AddressSpace::Constant)
        };
        if !right_memory {
            let label = match (access.origin, place.space) {
                (PlaceOrigin::PrivateArray, _) => "an element of a private array",
                (_, AddressSpace::Local) => "an element of local memory",
                _ => "an element of a global buffer",
            };
            refuse(self, label);
            return None;
        }
        if place.indices.len() != 1 || place.field.is_some() {
            refuse(self, "not an element of a one-dimensional array of scalars");
            return None;
        }
        if let PlaceBase::Parameter(id) = place.base {
            if !destination && self.refuse_shaped(id, argument.span, "`async_copy`") {
                return None;
            }
        }
        if destination && !access.writable {
            self.report_read_only(&access, argument.span, "copy into");
            return None;
        }
        Some(place)
    }
}
