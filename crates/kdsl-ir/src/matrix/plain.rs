//! The plain definition of the matrix operations: every matrix statement replaced by loops
//! over private arrays, local memory and sub-group queries ([`expand_plain`]), for targets
//! without matrix units and for the interpreter. Sub-group tiles here, matrix groups in
//! [`groups`]; [`build`] makes the IR.

pub(crate) mod build;
mod groups;

use super::*;
use crate::analysis::FunctionFeatures;
use crate::span::Span;

use build::{Build, IrIndices};

/// How the plain definition spreads a tile over the work-items of a sub-group. Which
/// elements a work-item holds is unspecified (docs/language.md), so the layouts compute the
/// same results: each accumulator element's sum over `k` in order from `C`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlainLayout {
    /// For a sub-group of any size, whole or not: every work-item holds `A` and `B` whole;
    /// accumulator element `i` is held, computed and stored by lane `i % sub_group_size()`.
    AnySize,
    /// For sub-groups of exactly `lanes` work-items (a size the kernel requires, every
    /// sub-group whole), `lanes` dividing 16: lane `l` holds element `j * lanes + l` of every
    /// tile in its array's element `j`, so every private index is sub-group uniform and a
    /// product reads `A[row][k]`, the same in every lane, with a sub-group broadcast.
    Lanes(u32),
}

/// `module` with every matrix statement replaced by its plain definition: loops over the
/// tile in private memory and sub-group queries, for targets without matrix units and for
/// the interpreter.
///
/// `A` and `B` tiles are held whole by every work-item; an accumulator element `i` is held
/// by lane `i % sub_group_size()`, which loads, computes and stores it. Products of the
/// (tf32-rounded) inputs are exact in `f32`; each element's sum runs over `k` in order, in
/// `f32`, starting from `C`. Integer inputs are widened to `i32`, whose products are exact,
/// and summed from `C` with wrapping `i32` additions.
pub fn expand_plain(module: &Module) -> Module {
    expand(module, false, PlainLayout::AnySize)
}

/// [`expand_plain`] in `layout`: the same results, where [`PlainLayout::Lanes`] holds.
pub fn expand_plain_in(module: &Module, layout: PlainLayout) -> Module {
    expand(module, false, layout)
}

/// `module` with only its matrix-group statements (`matrix_group_mma`) expanded, for targets
/// whose sub-group tiles reach matrix units but whose matrix groups do not.
pub fn expand_plain_groups(module: &Module) -> Module {
    expand(module, true, PlainLayout::AnySize)
}

fn expand(module: &Module, only_groups: bool, layout: PlainLayout) -> Module {
    if let PlainLayout::Lanes(lanes) = layout {
        assert!(
            lanes > 0 && 16u32.is_multiple_of(lanes),
            "tiles in lanes of {lanes}: the lanes must divide 16"
        );
    }
    let mut module = module.clone();
    for function in &mut module.functions {
        if !FunctionFeatures::new(function).uses_matrix() {
            continue;
        }
        let mut expander = Expander {
            variables: &mut function.variables,
            scratch: None,
            integer_sum: None,
            only_groups,
            layout,
        };
        let body = std::mem::take(&mut function.body);
        function.body = expander.block(body);
        // The loops copy the operands; the function's nodes are numbered afresh.
        crate::ids::number_function(function);
    }
    module
}

/// The private scalars the loops use, added to the function once.
#[derive(Clone, Copy)]
struct Scratch {
    index: VariableId,
    k: VariableId,
    sum: VariableId,
}

struct Expander<'a> {
    variables: &'a mut Vec<Variable>,
    scratch: Option<Scratch>,
    /// The `i32` sum of integer tiles, added when first needed.
    integer_sum: Option<VariableId>,
    /// Expand matrix-group statements only, leaving sub-group tiles.
    only_groups: bool,
    layout: PlainLayout,
}

impl Expander<'_> {
    fn block(&mut self, block: Block) -> Block {
        let mut out = Vec::with_capacity(block.len());
        for statement in block {
            let span = statement.span;
            match statement.kind {
                StatementKind::Matrix(op) if !self.only_groups || op.shape().is_none() => {
                    out.extend(self.matrix(&op, span))
                }
                StatementKind::If {
                    condition,
                    accept,
                    reject,
                } => out.push(Statement {
                    kind: StatementKind::If {
                        condition,
                        accept: self.block(accept),
                        reject: self.block(reject),
                    },
                    span,
                }),
                StatementKind::Loop {
                    body,
                    continuing,
                    unroll,
                } => out.push(Statement {
                    kind: StatementKind::Loop {
                        body: self.block(body),
                        continuing: self.block(continuing),
                        unroll,
                    },
                    span,
                }),
                kind => out.push(Statement { kind, span }),
            }
        }
        out
    }

    fn scratch(&mut self, span: Span) -> Scratch {
        if let Some(scratch) = self.scratch {
            return scratch;
        }
        let scratch = Scratch {
            index: self.add("matrix.i", ScalarType::U32, span),
            k: self.add("matrix.k", ScalarType::U32, span),
            sum: self.add("matrix.sum", ScalarType::F32, span),
        };
        self.scratch = Some(scratch);
        scratch
    }

    fn add(&mut self, name: &str, ty: ScalarType, span: Span) -> VariableId {
        self.variables.push(Variable {
            name: name.to_string(),
            ty: VariableType::Scalar { ty },
            space: AddressSpace::Private,
            span,
        });
        VariableId(self.variables.len() as u32 - 1)
    }

    /// The running sum of `shape`'s accumulator elements, and its type.
    fn sum(&mut self, shape: MatrixShape, span: Span) -> (VariableId, ScalarType) {
        let ty = shape.accumulator();
        if ty == ScalarType::F32 {
            return (self.scratch(span).sum, ty);
        }
        let sum = match self.integer_sum {
            Some(sum) => sum,
            None => {
                let sum = self.add("matrix.isum", ty, span);
                self.integer_sum = Some(sum);
                sum
            }
        };
        (sum, ty)
    }

    fn matrix(&mut self, op: &MatrixOp, span: Span) -> Block {
        let s = self.scratch(span);
        let Some(shape) = op.shape() else {
            return self.group_mma(op, s, span);
        };
        let (sum, ty) = self.sum(shape, span);
        let e = Build { span };
        if let PlainLayout::Lanes(lanes) = self.layout {
            return Lanes {
                e,
                lanes,
                s,
                sum,
                ty,
            }
            .matrix(op);
        }
        let i = || e.var(s.index, ScalarType::U32);
        match op {
            MatrixOp::Load {
                shape,
                role,
                tile,
                memory,
                offset,
                stride,
            } => {
                let (rows, columns) = shape.dimensions(*role);
                let element = shape.element(*role);
                let address = e.add(
                    offset.clone(),
                    e.add(
                        e.mul(e.div(i(), e.u32(columns)), stride.clone()),
                        e.rem(i(), e.u32(columns)),
                    ),
                );
                let body = vec![e.store(
                    e.array_place(*tile, element, i()),
                    e.load(e.memory_place(memory, address)),
                )];
                if *role == MatrixRole::Accumulator {
                    e.lane_loop(s.index, rows * columns, body)
                } else {
                    e.full_loop(s.index, rows * columns, body)
                }
            }
            MatrixOp::Store {
                shape,
                tile,
                memory,
                offset,
                stride,
            } => {
                let (rows, columns) = shape.dimensions(MatrixRole::Accumulator);
                let address = e.add(
                    offset.clone(),
                    e.add(
                        e.mul(e.div(i(), e.u32(columns)), stride.clone()),
                        e.rem(i(), e.u32(columns)),
                    ),
                );
                let body = vec![e.store(
                    e.memory_place(memory, address),
                    e.load(e.array_place(*tile, shape.accumulator(), i())),
                )];
                e.lane_loop(s.index, rows * columns, body)
            }
            MatrixOp::Fill { shape, tile, value } => {
                // `value` is evaluated once, into the sum.
                let (rows, columns) = shape.dimensions(MatrixRole::Accumulator);
                let body = vec![e.store(e.array_place(*tile, ty, i()), e.var(sum, ty))];
                let mut out = vec![e.assign(sum, value.clone())];
                out.extend(e.full_loop(s.index, rows * columns, body));
                out
            }
            MatrixOp::MultiplyAdd { shape, d, a, b, c } => {
                let (m, n, k) = shape.mnk();
                let input = shape.input();
                let kk = || e.var(s.k, ScalarType::U32);
                let widen = |value: Expression| match input {
                    ScalarType::F32 => e.math(MathFunction::RoundTf32, value),
                    _ => e.cast(value, ty),
                };
                let a_element = e.load(e.array_place(
                    *a,
                    input,
                    e.add(e.mul(e.div(i(), e.u32(n)), e.u32(k)), kk()),
                ));
                let b_element = e.load(e.array_place(
                    *b,
                    input,
                    e.add(e.mul(kk(), e.u32(n)), e.rem(i(), e.u32(n))),
                ));
                let (a_element, b_element) = (widen(a_element), widen(b_element));
                let total = if ty == ScalarType::F32 {
                    let product = e.binary(BinaryOp::Multiply, a_element, b_element);
                    e.binary(BinaryOp::Add, e.var(sum, ty), product)
                } else {
                    // Products (below 2^16 in magnitude) are exact; the sum wraps (docs/language.md).
                    let product = e.wrapping(MathFunction::WrappingMul, a_element, b_element);
                    e.wrapping(MathFunction::WrappingAdd, e.var(sum, ty), product)
                };
                let accumulate = vec![e.assign(sum, total)];
                let mut body = vec![e.assign(sum, e.load(e.array_place(*c, ty, i())))];
                body.extend(e.full_loop(s.k, k, accumulate));
                body.push(e.store(e.array_place(*d, ty, i()), e.var(sum, ty)));
                e.lane_loop(s.index, m * n, body)
            }
            MatrixOp::GroupMultiplyAdd { .. } | MatrixOp::GroupWait { .. } => {
                self.group_mma(op, s, span)
            }
        }
    }
}

/// The statements of [`PlainLayout::Lanes`]: lane `l` holds element `j * lanes + l` of a
/// tile in its array's element (slot) `j`. Tiles are 8 or 16 columns wide and `lanes` divides
/// 16, so a slot holds part of one row ([`Lanes::position`]); an accumulator slot's row is
/// the same in every lane, so a product's `A[row][k]` is one lane's slot, broadcast. tf32
/// tiles hold their inputs rounded.
struct Lanes {
    e: Build,
    lanes: u32,
    s: Scratch,
    sum: VariableId,
    ty: ScalarType,
}

impl Lanes {
    fn matrix(&self, op: &MatrixOp) -> Block {
        let e = &self.e;
        let j = || e.var(self.s.index, ScalarType::U32);
        match op {
            MatrixOp::Load {
                shape,
                role,
                tile,
                memory,
                offset,
                stride,
            } => {
                let (rows, columns) = shape.dimensions(*role);
                let element = shape.element(*role);
                let mut value =
                    e.load(e.memory_place(memory, self.address(offset, stride, columns)));
                if element == ScalarType::F32 && *role != MatrixRole::Accumulator {
                    // tf32 inputs are rounded once, here, rather than at every product
                    // (rounding again changes nothing).
                    value = e.math(MathFunction::RoundTf32, value);
                }
                let body = vec![e.store(e.array_place(*tile, element, j()), value)];
                self.slot_loop(rows * columns, body)
            }
            MatrixOp::Store {
                shape,
                tile,
                memory,
                offset,
                stride,
            } => {
                let (rows, columns) = shape.dimensions(MatrixRole::Accumulator);
                let body = vec![e.store(
                    e.memory_place(memory, self.address(offset, stride, columns)),
                    e.load(e.array_place(*tile, shape.accumulator(), j())),
                )];
                self.slot_loop(rows * columns, body)
            }
            MatrixOp::Fill { shape, tile, value } => {
                // `value` is evaluated once, into the sum.
                let (rows, columns) = shape.dimensions(MatrixRole::Accumulator);
                let body =
                    vec![e.store(e.array_place(*tile, self.ty, j()), e.var(self.sum, self.ty))];
                let mut out = vec![e.assign(self.sum, value.clone())];
                out.extend(self.slot_loop(rows * columns, body));
                out
            }
            MatrixOp::MultiplyAdd { shape, d, a, b, c } => {
                self.multiply_add(*shape, *d, *a, *b, *c)
            }
            MatrixOp::GroupMultiplyAdd { .. } | MatrixOp::GroupWait { .. } => {
                unreachable!("matrix groups are expanded by `Expander::group_mma`")
            }
        }
    }

    /// `D = A × B + C`: slot `j` of the accumulator is row `j / (n / lanes)`, the same in
    /// every lane, and columns `(j % (n / lanes)) * lanes + l`, whose `B[k][column]` is the
    /// lane's own slot `k * (n / lanes) + j % (n / lanes)`; `A[row][k]` (element `row * K + k`)
    /// is lane `(row * K + k) % lanes`'s slot `(row * K + k) / lanes`, broadcast.
    fn multiply_add(
        &self,
        shape: MatrixShape,
        d: PlaceBase,
        a: PlaceBase,
        b: PlaceBase,
        c: PlaceBase,
    ) -> Block {
        let (e, ty, sum) = (&self.e, self.ty, self.sum);
        let (m, n, k) = shape.mnk();
        let input = shape.input();
        let per_row = n / self.lanes;
        let j = || e.var(self.s.index, ScalarType::U32);
        let kk = || e.var(self.s.k, ScalarType::U32);
        // tf32 inputs were rounded as they were loaded.
        let widen = |value: Expression| match input {
            ScalarType::F32 => value,
            _ => e.cast(value, ty),
        };
        let a_index = || e.add(e.mul(e.div(j(), e.u32(per_row)), e.u32(k)), kk());
        let a_slot = e.load(e.array_place(a, input, e.div(a_index(), e.u32(self.lanes))));
        let a_element = e.expression(
            ExpressionKind::SubGroup {
                op: SubGroupOp::Broadcast,
                arguments: vec![widen(a_slot), e.rem(a_index(), e.u32(self.lanes))],
            },
            ty,
        );
        let b_slot = e.add(e.mul(kk(), e.u32(per_row)), e.rem(j(), e.u32(per_row)));
        let b_element = widen(e.load(e.array_place(b, input, b_slot)));
        let total = if ty == ScalarType::F32 {
            let product = e.binary(BinaryOp::Multiply, a_element, b_element);
            e.binary(BinaryOp::Add, e.var(sum, ty), product)
        } else {
            // Products (below 2^16 in magnitude) are exact; the sum wraps (docs/language.md).
            let product = e.wrapping(MathFunction::WrappingMul, a_element, b_element);
            e.wrapping(MathFunction::WrappingAdd, e.var(sum, ty), product)
        };
        let mut body = vec![e.assign(sum, e.load(e.array_place(c, ty, j())))];
        body.extend(e.full_loop(self.s.k, k, vec![e.assign(sum, total)]));
        body.push(e.store(e.array_place(d, ty, j()), e.var(sum, ty)));
        self.slot_loop(m * n, body)
    }

    /// (row, column) of the lane's slot `j` in a tile `columns` wide (8 or 16).
    fn position(&self, columns: u32) -> (Expression, Expression) {
        let e = &self.e;
        let j = || e.var(self.s.index, ScalarType::U32);
        let lane = || e.sub_group(SubGroupOp::LocalId);
        if columns.is_multiple_of(self.lanes) {
            // A row is `columns / lanes` slots.
            let per_row = e.u32(columns / self.lanes);
            let column = e.add(
                e.mul(e.rem(j(), per_row.clone()), e.u32(self.lanes)),
                lane(),
            );
            (e.div(j(), per_row), column)
        } else {
            // A slot is `lanes / columns` rows.
            let rows = e.u32(self.lanes / columns);
            let row = e.add(e.mul(j(), rows), e.div(lane(), e.u32(columns)));
            (row, e.rem(lane(), e.u32(columns)))
        }
    }

    /// `offset + row * stride + column` of the lane's slot `j`.
    fn address(&self, offset: &Expression, stride: &Expression, columns: u32) -> Expression {
        let e = &self.e;
        let (row, column) = self.position(columns);
        e.add(offset.clone(), e.add(e.mul(row, stride.clone()), column))
    }

    /// Slots `0..elements / lanes`, the same in every lane.
    fn slot_loop(&self, elements: u32, body: Block) -> Block {
        self.e.full_loop(self.s.index, elements / self.lanes, body)
    }
}
