//! The matrix operations (`matrix_load_a`, `matrix_mma`, ...): statements whose operands are
//! whole private arrays (tiles), a buffer or local array, and `u32` offsets and strides. The
//! tile's element type and length choose the shape (`kdsl_ir::matrix`). A matrix group's
//! `matrix_group_mma` takes its accumulator's length for N and a constant depth for K
//! (`kdsl_ir::matrix_group`).

use super::*;
use kdsl_ir::matrix::{MatrixMemory, MatrixOp, MatrixRole, MatrixShape};
use kdsl_ir::matrix::{GROUP_MULTIPLY_ADD, GROUP_MULTIPLY_ADD_ASYNC, GROUP_WAIT};
use kdsl_ir::matrix_group::{self, GroupInput, GroupShape};

/// A tile operand: the array, its type, and where it was declared.
struct Tile {
    base: PlaceBase,
    ty: ArrayType,
}

impl Checker<'_> {
    pub(super) fn matrix_statement(
        &mut self,
        callee: &ast::Identifier,
        arguments: &[ast::Expression],
        span: Span,
        out: &mut Block,
    ) {
        let name = callee.name.as_str();
        let arity = match name {
            "matrix_fill" => 2,
            GROUP_MULTIPLY_ADD | GROUP_MULTIPLY_ADD_ASYNC => 8,
            GROUP_WAIT => 1,
            _ => 4,
        };
        if arguments.len() != arity {
            self.arity_error(callee, arity, arguments.len(), span);
            return;
        }
        let op = match name {
            "matrix_load_a" | "matrix_load_b" | "matrix_load_c" => {
                let role = match name {
                    "matrix_load_a" => MatrixRole::A,
                    "matrix_load_b" => MatrixRole::B,
                    _ => MatrixRole::Accumulator,
                };
                self.matrix_memory_op(name, role, arguments, true)
            }
            "matrix_store" => {
                self.matrix_memory_op(name, MatrixRole::Accumulator, arguments, false)
            }
            "matrix_fill" => self.matrix_fill(name, arguments),
            GROUP_MULTIPLY_ADD | GROUP_MULTIPLY_ADD_ASYNC => self.matrix_group_mma(name, arguments),
            GROUP_WAIT => self
                .group_pending(name, &arguments[0])
                .map(|pending| MatrixOp::GroupWait { pending }),
            _ => self.matrix_mma(name, arguments),
        };
        if let Some(op) = op {
            out.push(statement(StatementKind::Matrix(op), span));
        }
    }

    fn matrix_fill(&mut self, name: &str, arguments: &[ast::Expression]) -> Option<MatrixOp> {
        let tile = self.matrix_tile(name, &arguments[0], true);
        let shape = tile
            .as_ref()
            .and_then(|tile| self.tile_shape(name, &arguments[0], tile, MatrixRole::Accumulator));
        // The value has the accumulator's element type (`f32` when the tile is unknown).
        let element = shape.map_or(ScalarType::F32, MatrixShape::accumulator);
        let value = self.matrix_scalar(&arguments[1], element);
        Some(MatrixOp::Fill {
            shape: shape?,
            tile: tile?.base,
            value: value?,
        })
    }

    fn matrix_mma(&mut self, name: &str, arguments: &[ast::Expression]) -> Option<MatrixOp> {
        let roles = [
            (MatrixRole::Accumulator, true),
            (MatrixRole::A, false),
            (MatrixRole::B, false),
            (MatrixRole::Accumulator, false),
        ];
        let mut tiles = Vec::new();
        for (argument, (role, write)) in arguments.iter().zip(roles) {
            let tile = self.matrix_tile(name, argument, write);
            let shape = tile
                .as_ref()
                .and_then(|tile| self.tile_shape(name, argument, tile, role));
            tiles.push(tile.zip(shape));
        }
        let [Some(d), Some(a), Some(b), Some(c)] = <[_; 4]>::try_from(tiles).ok()? else {
            return None;
        };
        // `A` and `B` name the shape; their K must agree, and the accumulators' element type
        // must be the shape's.
        let shape = a.1;
        if b.1 != shape {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0340,
                    format!(
                        "`{name}` multiplies an `A` tile of {} by a `B` tile of {}",
                        shape.name(),
                        b.1.name()
                    ),
                    arguments[2].span,
                    format!("a `B` tile of {}", b.1.name()),
                )
                .with_label(
                    arguments[1].span,
                    format!("an `A` tile of {}", shape.name()),
                )
                .with_hint(
                    "`A` and `B` must have the same element type: both `f16`, `f32`, `i8` or `u8`",
                ),
            );
            return None;
        }
        // The accumulators hold the shape's sums: `f32` for float inputs, `i32` for integers.
        for (index, (tile, _)) in [(0, &d), (3, &c)] {
            let element = tile.ty.element;
            if element != shape.accumulator() {
                self.report(
                    Diagnostic::error(
                        ErrorCode::E0340,
                        format!(
                            "`{name}` of {} accumulates in `{}`, but this accumulator holds `{element}`",
                            shape.name(),
                            shape.accumulator()
                        ),
                        arguments[index].span,
                        format!("a `{}`", tile.ty),
                    )
                    .with_label(arguments[1].span, format!("an `A` tile of {}", shape.name()))
                    .with_hint(format!(
                        "declare the accumulator `[{}; 256]`",
                        shape.accumulator()
                    )),
                );
                return None;
            }
        }
        Some(MatrixOp::MultiplyAdd {
            shape,
            d: d.0.base,
            a: a.0.base,
            b: b.0.base,
            c: c.0.base,
        })
    }

    /// `matrix_group_mma(acc, a, a_offset, a_chunk, b, b_offset, b_chunk, depth)` (and
    /// `_async`): the accumulator's length names N, the memories' element type the input
    /// (`f16`, `bf16`, or `f32` as tf32), the constant depth K.
    fn matrix_group_mma(&mut self, name: &str, arguments: &[ast::Expression]) -> Option<MatrixOp> {
        let accumulator = self.matrix_tile(name, &arguments[0], true);
        let columns = accumulator
            .as_ref()
            .and_then(|tile| self.group_columns(name, &arguments[0], tile));
        let a = self.group_memory(name, &arguments[1]);
        let a_offset = self.matrix_scalar(&arguments[2], ScalarType::U32);
        let a_chunk = self.matrix_scalar(&arguments[3], ScalarType::U32);
        let b = self.group_memory(name, &arguments[4]);
        let b_offset = self.matrix_scalar(&arguments[5], ScalarType::U32);
        let b_chunk = self.matrix_scalar(&arguments[6], ScalarType::U32);
        let (a, b) = (a?, b?);
        let input = GroupInput::of_element(a.element)?;
        if b.element != a.element {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0340,
                    format!(
                        "`{name}` multiplies an `A` of `{}` by a `B` of `{}`",
                        a.element, b.element
                    ),
                    arguments[4].span,
                    format!("`{}` elements", b.element),
                )
                .with_label(arguments[1].span, format!("`{}` elements", a.element))
                .with_hint(
                    "`A` and `B` are both `f16`, both `bf16` or both `f32` (computed as tf32)",
                ),
            );
            return None;
        }
        let depth = self.group_depth(name, &arguments[7], input);
        Some(MatrixOp::GroupMultiplyAdd {
            shape: GroupShape {
                input,
                columns: columns?,
                depth: depth?,
            },
            asynchronous: name == GROUP_MULTIPLY_ADD_ASYNC,
            accumulator: accumulator?.base,
            a,
            a_offset: a_offset?,
            a_chunk: a_chunk?,
            b,
            b_offset: b_offset?,
            b_chunk: b_chunk?,
        })
    }

    /// N of a matrix group's accumulator `[f32; N / 2]`, or E0340 saying which arrays fit.
    fn group_columns(
        &mut self,
        name: &str,
        argument: &ast::Expression,
        tile: &Tile,
    ) -> Option<u32> {
        let columns = (tile.ty.dimensions.len() == 1 && tile.ty.element == GroupShape::ACCUMULATOR)
            .then(|| GroupShape::columns_of_accumulator(tile.ty.element_count()))
            .flatten();
        if columns.is_none() {
            let example = GroupShape {
                input: GroupInput::F16,
                columns: 128,
                depth: GroupInput::F16.depth_step(),
            };
            self.report(
                Diagnostic::error(
                    ErrorCode::E0340,
                    format!(
                        "`{name}` needs an accumulator `[f32; N / 2]`, found a `{}`",
                        tile.ty
                    ),
                    argument.span,
                    "no matrix-group shape has this accumulator",
                )
                .with_hint(format!(
                    "each work-item holds {rows} x N / {group} elements of the {rows} x N \
                     accumulator: `[f32; N / 2]` with N a multiple of 8 up to {max}, such as \
                     `[f32; {length}]` for N = {columns}",
                    rows = matrix_group::ROWS,
                    group = matrix_group::GROUP_SIZE,
                    max = matrix_group::MAX_COLUMNS,
                    length = example.accumulator_length(),
                    columns = example.columns,
                )),
            );
        }
        columns
    }

    /// `A` or `B` of a matrix group: `f16`, `bf16` or `f32` local memory, read only.
    fn group_memory(&mut self, name: &str, argument: &ast::Expression) -> Option<MatrixMemory> {
        let memory = self.matrix_memory(name, argument, false, true)?;
        if GroupInput::of_element(memory.element).is_none() {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0340,
                    format!(
                        "`{name}` multiplies `f16`, `bf16` or `f32` elements, but this memory holds `{}`",
                        memory.element
                    ),
                    argument.span,
                    format!("`{}` elements", memory.element),
                )
                .with_hint(
                    "a matrix group's `A` and `B` are `f16` or `bf16` local arrays, or `f32` ones (computed as tf32)",
                ),
            );
            return None;
        }
        Some(memory)
    }

    /// The operand of `matrix_group_wait`: a constant from 0 to `MAX_PENDING`, or E0340.
    fn group_pending(&mut self, name: &str, argument: &ast::Expression) -> Option<u32> {
        let value = self.matrix_scalar(argument, ScalarType::U32)?;
        let constant = constant_u32(&value).filter(|&pending| pending <= matrix_group::MAX_PENDING);
        if constant.is_none() {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0340,
                    format!(
                        "`{name}` takes a constant from 0 to {}: the statements left going on",
                        matrix_group::MAX_PENDING
                    ),
                    argument.span,
                    "not such a constant",
                )
                .with_hint("write a literal or a module constant"),
            );
        }
        constant
    }

    /// The depth K of `matrix_group_mma`: a constant positive multiple of the input's step (16
    /// for `f16`, 8 for tf32), at most 4096.
    fn group_depth(
        &mut self,
        name: &str,
        argument: &ast::Expression,
        input: GroupInput,
    ) -> Option<u32> {
        let value = self.matrix_scalar(argument, ScalarType::U32)?;
        let step = input.depth_step();
        let Some(depth) = constant_u32(&value) else {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0340,
                    format!("the depth of `{name}` must be a constant"),
                    argument.span,
                    "not a constant",
                )
                .with_hint(format!(
                    "write a literal or a module constant: K, a multiple of {step} such as 64"
                )),
            );
            return None;
        };
        if !input.valid_depth(depth.into()) {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0340,
                    format!("`{name}` cannot have a depth of {depth}"),
                    argument.span,
                    format!("K = {depth}"),
                )
                .with_hint(format!(
                    "the depth K is a multiple of {step} from {step} to {}",
                    matrix_group::MAX_DEPTH
                )),
            );
            return None;
        }
        Some(depth)
    }

    fn matrix_memory_op(
        &mut self,
        name: &str,
        role: MatrixRole,
        arguments: &[ast::Expression],
        load: bool,
    ) -> Option<MatrixOp> {
        let tile = self.matrix_tile(name, &arguments[0], load);
        let shape = tile
            .as_ref()
            .and_then(|tile| self.tile_shape(name, &arguments[0], tile, role));
        let memory = self.matrix_memory(name, &arguments[1], !load, false);
        let offset = self.matrix_scalar(&arguments[2], ScalarType::U32);
        let stride = self.matrix_scalar(&arguments[3], ScalarType::U32);
        let (tile, shape, memory, offset, stride) = (tile?, shape?, memory?, offset?, stride?);
        let element = shape.element(role);
        if memory.element != element {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0340,
                    format!(
                        "`{name}` moves `{element}` elements, but this memory holds `{}`",
                        memory.element
                    ),
                    arguments[1].span,
                    format!("`{}` elements", memory.element),
                )
                .with_hint(format!("the tile is a `{}`", tile.ty)),
            );
            return None;
        }
        Some(if load {
            MatrixOp::Load {
                shape,
                role,
                tile: tile.base,
                memory,
                offset,
                stride,
            }
        } else {
            MatrixOp::Store {
                shape,
                tile: tile.base,
                memory,
                offset,
                stride,
            }
        })
    }

    fn matrix_scalar(&mut self, argument: &ast::Expression, ty: ScalarType) -> Option<Expression> {
        let value = self.expression(argument, Some(ty))?;
        if value.ty != ty {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0301,
                    format!("expected `{ty}`, found `{}`", value.ty),
                    argument.span,
                    format!("a `{}`", value.ty),
                )
                .with_hint(format!("convert it: `({}) as {ty}`", "...")),
            );
            return None;
        }
        Some(value)
    }

    /// The shape a tile of `role` names, or E0340 listing the tiles there are.
    fn tile_shape(
        &mut self,
        name: &str,
        argument: &ast::Expression,
        tile: &Tile,
        role: MatrixRole,
    ) -> Option<MatrixShape> {
        let shape = (tile.ty.dimensions.len() == 1)
            .then(|| MatrixShape::of_tile(role, tile.ty.element, tile.ty.element_count()))
            .flatten();
        if shape.is_none() {
            // Each array once, with the shapes it serves (accumulators serve several).
            let mut expected: Vec<(String, Vec<&str>)> = Vec::new();
            for shape in MatrixShape::ALL {
                let (rows, columns) = shape.dimensions(role);
                let array = format!("`[{}; {}]`", shape.element(role), rows * columns);
                match expected.iter_mut().find(|(known, _)| *known == array) {
                    Some((_, shapes)) => shapes.push(shape.name()),
                    None => expected.push((array, vec![shape.name()])),
                }
            }
            let expected: Vec<String> = expected
                .into_iter()
                .map(|(array, shapes)| format!("{array} ({})", shapes.join(", ")))
                .collect();
            let what = match role {
                MatrixRole::A => "an `A` tile",
                MatrixRole::B => "a `B` tile",
                MatrixRole::Accumulator => "an accumulator tile",
            };
            self.report(
                Diagnostic::error(
                    ErrorCode::E0340,
                    format!("`{name}` needs {what}, found a `{}`", tile.ty),
                    argument.span,
                    "no matrix shape has this tile",
                )
                .with_hint(format!("{what} is one of {}", expected.join(", "))),
            );
        }
        shape
    }

    /// A private array variable or private array parameter, writable when `write`.
    fn matrix_tile(&mut self, name: &str, argument: &ast::Expression, write: bool) -> Option<Tile> {
        let not_a_tile = |checker: &mut Self| {
            let example = if name == kdsl_ir::matrix::GROUP_MULTIPLY_ADD {
                64
            } else {
                256
            };
            checker.report(
                Diagnostic::error(
                    ErrorCode::E0340,
                    format!("`{name}` expects a tile, a private array, here"),
                    argument.span,
                    "not a private array",
                )
                .with_hint(format!(
                    "declare the tile `let mut acc: [f32; {example}];` and pass it by name"
                )),
            );
        };
        let E::Name(identifier) = &strip_parentheses(argument).kind else {
            let _ = self.expression(argument, None);
            not_a_tile(self);
            return None;
        };
        let (base, ty, writable) = match self.lookup(&identifier.name) {
            Resolved::Binding(Binding::Variable {
                id,
                ty: VariableType::Array { ty },
                mutable,
                space: AddressSpace::Private,
                ..
            }) => (PlaceBase::Variable(id), ty, mutable),
            Resolved::Parameter(
                id,
                ParameterType::Array {
                    ty,
                    space: AddressSpace::Private,
                    writable,
                },
                _,
            ) => (PlaceBase::Parameter(id), ty, writable),
            Resolved::Binding(Binding::Poisoned) => return None,
            Resolved::Unknown => {
                self.unknown_name(identifier);
                return None;
            }
            _ => {
                not_a_tile(self);
                return None;
            }
        };
        if write && !writable {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0401,
                    format!(
                        "`{name}` writes the tile `{}`, which is immutable",
                        identifier.name
                    ),
                    argument.span,
                    "immutable array",
                )
                .with_hint(format!("declare it `let mut {}`", identifier.name)),
            );
            return None;
        }
        Some(Tile { base, ty })
    }

    /// A buffer parameter or a one-dimensional local array, writable when `write`; local
    /// memory only (a local array or a `local` parameter) when `local_only`.
    fn matrix_memory(
        &mut self,
        name: &str,
        argument: &ast::Expression,
        write: bool,
        local_only: bool,
    ) -> Option<MatrixMemory> {
        let not_memory = |checker: &mut Self| {
            let (expected, label) = if local_only {
                ("one-dimensional local memory", "not a local array")
            } else {
                (
                    "a buffer or a one-dimensional local array",
                    "not a buffer or local array",
                )
            };
            checker.report(
                Diagnostic::error(
                    ErrorCode::E0340,
                    format!("`{name}` expects {expected} here"),
                    argument.span,
                    label,
                )
                .with_hint(if local_only {
                    "pass a one-dimensional `local` array or `local` parameter by name; the offset \
                     says where the tile starts"
                } else {
                    "pass the buffer or local array by name; the offset says where the tile starts"
                }),
            );
        };
        let E::Name(identifier) = &strip_parentheses(argument).kind else {
            let _ = self.expression(argument, None);
            not_memory(self);
            return None;
        };
        let (memory, writable) = match self.lookup(&identifier.name) {
            Resolved::Parameter(
                id,
                // Buffers of scalars only: a buffer of records is not matrix memory.
                ParameterType::Buffer {
                    element,
                    space,
                    writable,
                    record: None,
                },
                _,
            ) => (
                MatrixMemory {
                    base: PlaceBase::Parameter(id),
                    element,
                    space,
                },
                writable,
            ),
            Resolved::Binding(Binding::Variable {
                id,
                ty: VariableType::Array { ty },
                space: AddressSpace::Local,
                ..
            }) if ty.dimensions.len() == 1 => (
                MatrixMemory {
                    base: PlaceBase::Variable(id),
                    element: ty.element,
                    space: AddressSpace::Local,
                },
                true,
            ),
            Resolved::Parameter(
                id,
                ParameterType::Array {
                    ty,
                    space: AddressSpace::Local,
                    writable,
                },
                _,
            ) if ty.dimensions.len() == 1 => (
                MatrixMemory {
                    base: PlaceBase::Parameter(id),
                    element: ty.element,
                    space: AddressSpace::Local,
                },
                writable,
            ),
            Resolved::Binding(Binding::Poisoned) => return None,
            Resolved::Unknown => {
                self.unknown_name(identifier);
                return None;
            }
            _ => {
                not_memory(self);
                return None;
            }
        };
        if local_only && memory.space != AddressSpace::Local {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0340,
                    format!(
                        "`{name}` reads its tiles from local memory, but `{}` is a {} buffer",
                        identifier.name, memory.space
                    ),
                    argument.span,
                    format!("a {} buffer", memory.space),
                )
                .with_hint(
                    "copy the tiles into a `local` array first (`async_copy`, then \
                     `async_wait` and `barrier()`), and pass that array",
                ),
            );
            return None;
        }
        if write && !writable {
            self.report(
                Diagnostic::error(
                    ErrorCode::E0402,
                    format!(
                        "`{name}` writes to `{}`, which is read-only",
                        identifier.name
                    ),
                    argument.span,
                    "read-only",
                )
                .with_hint("declare the parameter `mut`"),
            );
            return None;
        }
        Some(memory)
    }
}
