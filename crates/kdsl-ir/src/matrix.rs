//! Sub-group matrix tiles: the language's matrix operation (`matrix_load_a`, `matrix_mma`, ...)
//! and its one definition as plain IR.
//!
//! A tile lives in a private array holding the whole tile (`[f16; 256]` for a 16×16 `A`); the
//! sub-group holds it jointly and which of its elements a work-item's array holds is
//! unspecified (see docs/language.md, "Matrix tiles"). Targets with matrix units lower the
//! statements to them; every other target, and the interpreter, runs [`expand_plain`]'s
//! loops, which define what the operation computes.

use crate::analysis::FunctionFeatures;
use crate::ir::*;
use crate::matrix_group::{GroupInput, GroupShape};
use crate::span::Span;
use crate::types::{AddressSpace, ScalarType};
use serde::{Deserialize, Serialize};

/// The multiply-accumulate shapes and input types of the language.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MatrixShape {
    /// `f16` inputs, `f32` accumulator, M = N = K = 16.
    F16M16N16K16,
    /// `f32` inputs computed as tf32 (rounded to 10 mantissa bits), `f32` accumulator,
    /// M = N = 16, K = 8.
    Tf32M16N16K8,
    /// `i8` inputs, `i32` accumulator, M = N = K = 16.
    I8M16N16K16,
    /// `u8` inputs, `i32` accumulator, M = N = K = 16.
    U8M16N16K16,
    /// `bf16` inputs, `f32` accumulator, M = N = K = 16.
    Bf16M16N16K16,
}

impl MatrixShape {
    pub const ALL: [MatrixShape; 5] = [
        MatrixShape::F16M16N16K16,
        MatrixShape::Tf32M16N16K8,
        MatrixShape::I8M16N16K16,
        MatrixShape::U8M16N16K16,
        MatrixShape::Bf16M16N16K16,
    ];

    /// (M, N, K).
    pub fn mnk(self) -> (u32, u32, u32) {
        match self {
            MatrixShape::Tf32M16N16K8 => (16, 16, 8),
            MatrixShape::F16M16N16K16
            | MatrixShape::I8M16N16K16
            | MatrixShape::U8M16N16K16
            | MatrixShape::Bf16M16N16K16 => (16, 16, 16),
        }
    }

    /// The element type of the `A` and `B` tiles.
    pub fn input(self) -> ScalarType {
        match self {
            MatrixShape::F16M16N16K16 => ScalarType::F16,
            MatrixShape::Tf32M16N16K8 => ScalarType::F32,
            MatrixShape::I8M16N16K16 => ScalarType::I8,
            MatrixShape::U8M16N16K16 => ScalarType::U8,
            MatrixShape::Bf16M16N16K16 => ScalarType::Bf16,
        }
    }

    /// The element type of the accumulator (`C` and `D`): `i32` for integer inputs, else `f32`.
    pub fn accumulator(self) -> ScalarType {
        if self.input().is_integer() {
            ScalarType::I32
        } else {
            ScalarType::F32
        }
    }

    /// The shape as users read it: `m16n16k16 f16`.
    pub fn name(self) -> &'static str {
        match self {
            MatrixShape::F16M16N16K16 => "m16n16k16 f16",
            MatrixShape::Tf32M16N16K8 => "m16n16k8 tf32",
            MatrixShape::I8M16N16K16 => "m16n16k16 i8",
            MatrixShape::U8M16N16K16 => "m16n16k16 u8",
            MatrixShape::Bf16M16N16K16 => "m16n16k16 bf16",
        }
    }

    /// (rows, columns) of a tile of `role`.
    pub fn dimensions(self, role: MatrixRole) -> (u32, u32) {
        let (m, n, k) = self.mnk();
        match role {
            MatrixRole::A => (m, k),
            MatrixRole::B => (k, n),
            MatrixRole::Accumulator => (m, n),
        }
    }

    /// The element type of a tile of `role`.
    pub fn element(self, role: MatrixRole) -> ScalarType {
        match role {
            MatrixRole::A | MatrixRole::B => self.input(),
            MatrixRole::Accumulator => self.accumulator(),
        }
    }

    /// The shape whose `role` tile is a private array of `length` `element`s: `A` and `B`
    /// tiles name one shape; an accumulator fits every shape of its element type (`f32`:
    /// `f16` and tf32; `i32`: `i8` and `u8`), and gives the first.
    pub fn of_tile(role: MatrixRole, element: ScalarType, length: u64) -> Option<MatrixShape> {
        MatrixShape::ALL.into_iter().find(|shape| {
            let (rows, columns) = shape.dimensions(role);
            shape.element(role) == element && u64::from(rows * columns) == length
        })
    }
}

/// Which operand of `D = A × B + C` a tile is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MatrixRole {
    /// M × K, row-major in memory.
    A,
    /// K × N, row-major in memory.
    B,
    /// M × N: `C` and `D`.
    Accumulator,
}

impl MatrixRole {
    pub fn name(self) -> &'static str {
        match self {
            MatrixRole::A => "a",
            MatrixRole::B => "b",
            MatrixRole::Accumulator => "accumulator",
        }
    }
}

/// A buffer parameter or a one-dimensional local array that a tile is loaded from or
/// stored to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MatrixMemory {
    pub base: PlaceBase,
    pub element: ScalarType,
    pub space: AddressSpace,
}

/// One matrix statement. Every work-item of a sub-group reaches it together with the same
/// operands (offsets, strides and fill values are sub-group uniform).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum MatrixOp {
    /// `matrix_load_a(tile, memory, offset, stride)` (and `_b`, `_c`): element (r, c) of the
    /// tile is `memory[offset + r * stride + c]`.
    Load {
        shape: MatrixShape,
        role: MatrixRole,
        tile: PlaceBase,
        memory: MatrixMemory,
        offset: Expression,
        stride: Expression,
    },
    /// `matrix_store(tile, memory, offset, stride)`: an accumulator tile to memory.
    Store {
        shape: MatrixShape,
        tile: PlaceBase,
        memory: MatrixMemory,
        offset: Expression,
        stride: Expression,
    },
    /// `matrix_fill(tile, value)`: every element of an accumulator tile.
    Fill {
        shape: MatrixShape,
        tile: PlaceBase,
        value: Expression,
    },
    /// `matrix_mma(d, a, b, c)`: `D = A × B + C`; `d` may be `c`.
    MultiplyAdd {
        shape: MatrixShape,
        d: PlaceBase,
        a: PlaceBase,
        b: PlaceBase,
        c: PlaceBase,
    },
    /// `matrix_group_mma(acc, a, a_offset, a_chunk, b, b_offset, b_chunk, depth)`: a matrix
    /// group's `acc += A × B` (see [`crate::matrix_group`]). Its operands are uniform in the
    /// matrix group rather than the sub-group. `matrix_group_mma_async` (`asynchronous`) may
    /// go on after the statement, until a `matrix_group_wait`.
    GroupMultiplyAdd {
        shape: GroupShape,
        asynchronous: bool,
        accumulator: PlaceBase,
        a: MatrixMemory,
        a_offset: Expression,
        a_chunk: Expression,
        b: MatrixMemory,
        b_offset: Expression,
        b_chunk: Expression,
    },
    /// `matrix_group_wait(pending)`: waits until at most `pending` of the work-item's
    /// `matrix_group_mma_async` statements are still going on.
    GroupWait { pending: u32 },
}

impl MatrixOp {
    /// The sub-group tile shape; `None` for a matrix group's operation.
    pub fn shape(&self) -> Option<MatrixShape> {
        match self {
            MatrixOp::Load { shape, .. }
            | MatrixOp::Store { shape, .. }
            | MatrixOp::Fill { shape, .. }
            | MatrixOp::MultiplyAdd { shape, .. } => Some(*shape),
            MatrixOp::GroupMultiplyAdd { .. } | MatrixOp::GroupWait { .. } => None,
        }
    }

    /// The shape as users read it: `m16n16k16 f16`, `m64n128k64 f16`.
    pub fn shape_name(&self) -> String {
        match self {
            MatrixOp::GroupMultiplyAdd { shape, .. } => shape.name(),
            MatrixOp::GroupWait { pending } => pending.to_string(),
            _ => self
                .shape()
                .map(MatrixShape::name)
                .unwrap_or_default()
                .into(),
        }
    }

    /// The source name of the operation.
    pub fn name(&self) -> &'static str {
        match self {
            MatrixOp::Load {
                role: MatrixRole::A,
                ..
            } => "matrix_load_a",
            MatrixOp::Load {
                role: MatrixRole::B,
                ..
            } => "matrix_load_b",
            MatrixOp::Load {
                role: MatrixRole::Accumulator,
                ..
            } => "matrix_load_c",
            MatrixOp::Store { .. } => "matrix_store",
            MatrixOp::Fill { .. } => "matrix_fill",
            MatrixOp::MultiplyAdd { .. } => "matrix_mma",
            MatrixOp::GroupMultiplyAdd {
                asynchronous: false,
                ..
            } => GROUP_MULTIPLY_ADD,
            MatrixOp::GroupMultiplyAdd { .. } => GROUP_MULTIPLY_ADD_ASYNC,
            MatrixOp::GroupWait { .. } => GROUP_WAIT,
        }
    }

    /// The scalar operands.
    pub fn expressions(&self) -> Vec<&Expression> {
        match self {
            MatrixOp::Load { offset, stride, .. } | MatrixOp::Store { offset, stride, .. } => {
                vec![offset, stride]
            }
            MatrixOp::Fill { value, .. } => vec![value],
            MatrixOp::MultiplyAdd { .. } => Vec::new(),
            MatrixOp::GroupMultiplyAdd {
                a_offset,
                a_chunk,
                b_offset,
                b_chunk,
                ..
            } => vec![a_offset, a_chunk, b_offset, b_chunk],
            MatrixOp::GroupWait { .. } => Vec::new(),
        }
    }

    /// The tiles it writes and those it reads.
    pub fn tiles(&self) -> (Vec<PlaceBase>, Vec<PlaceBase>) {
        match self {
            MatrixOp::Load { tile, .. } | MatrixOp::Fill { tile, .. } => (vec![*tile], vec![]),
            MatrixOp::Store { tile, .. } => (vec![], vec![*tile]),
            MatrixOp::MultiplyAdd { d, a, b, c, .. } => (vec![*d], vec![*a, *b, *c]),
            MatrixOp::GroupMultiplyAdd { accumulator, .. } => {
                (vec![*accumulator], vec![*accumulator])
            }
            MatrixOp::GroupWait { .. } => (Vec::new(), Vec::new()),
        }
    }

    /// The buffers or local arrays it reads or writes.
    pub fn memories(&self) -> Vec<&MatrixMemory> {
        match self {
            MatrixOp::Load { memory, .. } | MatrixOp::Store { memory, .. } => vec![memory],
            MatrixOp::GroupMultiplyAdd { a, b, .. } => vec![a, b],
            MatrixOp::Fill { .. } | MatrixOp::MultiplyAdd { .. } | MatrixOp::GroupWait { .. } => {
                Vec::new()
            }
        }
    }
}

/// The source names of the matrix operations, which the checker handles apart from the
/// table of scalar built-ins (their operands are arrays).
pub const MATRIX_FUNCTIONS: &[&str] = &[
    "matrix_load_a",
    "matrix_load_b",
    "matrix_load_c",
    "matrix_store",
    "matrix_fill",
    "matrix_mma",
    GROUP_MULTIPLY_ADD,
    GROUP_MULTIPLY_ADD_ASYNC,
    GROUP_WAIT,
];

/// The names of a matrix group's statements: [`MatrixOp::GroupMultiplyAdd`] and its
/// asynchronous form, [`MatrixOp::GroupWait`].
pub const GROUP_MULTIPLY_ADD: &str = "matrix_group_mma";
pub const GROUP_MULTIPLY_ADD_ASYNC: &str = "matrix_group_mma_async";
pub const GROUP_WAIT: &str = "matrix_group_wait";

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

impl Expander<'_> {
    /// A matrix group's `acc += A × B`: work-item `t` (its place in the group) computes the
    /// elements it owns (`matrix_group::accumulator_position`), reading `A` and `B` from local
    /// memory in their chunked layouts. Its elements `4 q` to `4 q + 3` are the corners of a
    /// 2 x 2 block (rows r and r + 8, columns c and c + 1), and quads `q` to `q + 3` lie 8
    /// columns apart, so one pass over k computes 16 elements from two elements of `A` and
    /// eight of `B` per k. Each element's sum still starts from the accumulator and adds its
    /// products in k order, so the results are those of one element at a time.
    fn group_mma(&mut self, op: &MatrixOp, s: Scratch, span: Span) -> Block {
        // Every statement completes where it stands: a wait has nothing to wait for.
        let MatrixOp::GroupMultiplyAdd {
            shape,
            accumulator,
            a,
            a_offset,
            a_chunk,
            b,
            b_offset,
            b_chunk,
            ..
        } = op
        else {
            return Vec::new();
        };
        let item = self.add("matrix.item", ScalarType::U32, span);
        let e = Build { span };
        let u32v = |id| e.var(id, ScalarType::U32);
        let i = || e.var(s.index, ScalarType::U32);
        let kk = || e.var(s.k, ScalarType::U32);
        // The place in the group: the local linear id modulo 128.
        let local = |dimension| {
            e.expression(
                ExpressionKind::WorkItem {
                    query: WorkItemQuery::LocalId,
                    dimension,
                },
                ScalarType::U32,
            )
        };
        let size = |dimension| {
            e.expression(
                ExpressionKind::WorkItem {
                    query: WorkItemQuery::LocalSize,
                    dimension,
                },
                ScalarType::U32,
            )
        };
        let linear = e.add(
            local(0),
            e.mul(size(0), e.add(local(1), e.mul(size(1), local(2)))),
        );
        let position = e.rem(linear, e.u32(crate::matrix_group::GROUP_SIZE));
        // Element 4 q sits at (row, column); 4 q + 1 one column right, 4 q + 2 eight rows down,
        // 4 q + 3 both; quad q + 1 eight columns right (`matrix_group::accumulator_position`).
        // A pass over k takes 4 quads (16 sums, 2 elements of A and 8 of B per k: on the Intel
        // CPU device 1.3x and 1.2x faster than 1 and 2 quads, as fast as 8), or fewer where the
        // accumulator holds no whole blocks of 4.
        let quads = [4, 2, 1]
            .into_iter()
            .find(|quads| shape.accumulator_length().is_multiple_of(4 * quads))
            .unwrap_or(1);
        let first = e.mul(e.u32(4 * quads), i());
        let Ok((row, column)) =
            crate::matrix_group::accumulator_position_in(&mut IrIndices(&e), u32v(item), first);
        let row_var = self.add("matrix.row", ScalarType::U32, span);
        let column_var = self.add("matrix.column", ScalarType::U32, span);
        let f32 = ScalarType::F32;
        // Element (row, k) of `A` and (k, column) of `B` where the layouts put them, widened:
        // `f16` exactly, `f32` inputs rounded to tf32 as the sub-group tiles' are.
        let widen = |value: Expression| match shape.input {
            GroupInput::F16 | GroupInput::Bf16 => e.cast(value, f32),
            GroupInput::Tf32 => e.math(MathFunction::RoundTf32, value),
        };
        let a_element = |row: Expression| {
            let Ok(index) = shape.a_index_in(
                &mut IrIndices(&e),
                a_offset.clone(),
                row,
                kk(),
                a_chunk.clone(),
            );
            widen(e.load(e.memory_place(a, index)))
        };
        let b_element = |column: Expression| {
            let Ok(index) = shape.b_index_in(
                &mut IrIndices(&e),
                b_offset.clone(),
                kk(),
                column,
                b_chunk.clone(),
            );
            widen(e.load(e.memory_place(b, index)))
        };
        let [upper, lower] =
            ["matrix.a_upper", "matrix.a_lower"].map(|name| self.add(name, f32, span));
        let mut products = vec![
            e.assign(upper, a_element(u32v(row_var))),
            e.assign(lower, a_element(e.add(u32v(row_var), e.u32(8)))),
        ];
        // Column offsets of the block's B values: 8 j and 8 j + 1 for quad j.
        let offsets: Vec<u32> = (0..quads).flat_map(|j| [8 * j, 8 * j + 1]).collect();
        let mut b_values = Vec::new();
        for offset in &offsets {
            let value = self.add("matrix.b", f32, span);
            products.push(e.assign(value, b_element(e.add(u32v(column_var), e.u32(*offset)))));
            b_values.push(value);
        }
        // Element 4 j + 2 h + p of the block: row half h, B value 2 j + p.
        let mut sums = Vec::new();
        for corner in 0..4 * quads {
            let (j, h, p) = (corner / 4, corner % 4 / 2, corner % 2);
            let sum = self.add("matrix.sum", f32, span);
            let a_value = if h == 0 { upper } else { lower };
            let b_value = b_values[(2 * j + p) as usize];
            let product = e.binary(BinaryOp::Multiply, e.var(a_value, f32), e.var(b_value, f32));
            products.push(e.assign(sum, e.binary(BinaryOp::Add, e.var(sum, f32), product)));
            sums.push(sum);
        }
        let element = |corner: u32| e.add(e.mul(e.u32(4 * quads), i()), e.u32(corner));
        let mut body = vec![e.assign(row_var, row), e.assign(column_var, column)];
        for (corner, sum) in (0u32..).zip(&sums) {
            body.push(e.assign(
                *sum,
                e.load(e.array_place(*accumulator, f32, element(corner))),
            ));
        }
        body.extend(e.full_loop(s.k, shape.depth, products));
        for (corner, sum) in (0u32..).zip(&sums) {
            body.push(e.store(
                e.array_place(*accumulator, f32, element(corner)),
                e.var(*sum, f32),
            ));
        }
        let mut out = vec![e.assign(item, position)];
        out.extend(e.unrolled_loop(s.index, shape.accumulator_length() / (4 * quads), body));
        out
    }
}

/// Builds IR expressions and statements at one span.
struct Build {
    span: Span,
}

/// The layouts' index arithmetic (`matrix_group::IndexArithmetic`) as `u32` IR expressions.
struct IrIndices<'b>(&'b Build);

impl crate::matrix_group::IndexArithmetic for IrIndices<'_> {
    type Value = Expression;
    type Error = std::convert::Infallible;

    fn constant(&mut self, value: u32) -> Result<Expression, Self::Error> {
        Ok(self.0.u32(value))
    }

    fn add(&mut self, a: Expression, b: Expression) -> Result<Expression, Self::Error> {
        Ok(self.0.add(a, b))
    }

    fn multiply(&mut self, a: Expression, b: Expression) -> Result<Expression, Self::Error> {
        Ok(self.0.mul(a, b))
    }

    fn shift_left(&mut self, a: Expression, bits: u32) -> Result<Expression, Self::Error> {
        Ok(self.0.mul(a, self.0.u32(1 << bits)))
    }

    fn shift_right(&mut self, a: Expression, bits: u32) -> Result<Expression, Self::Error> {
        Ok(self.0.div(a, self.0.u32(1 << bits)))
    }

    fn low_bits(&mut self, a: Expression, bits: u32) -> Result<Expression, Self::Error> {
        Ok(self.0.rem(a, self.0.u32(1 << bits)))
    }

    fn xor(&mut self, a: Expression, b: Expression) -> Result<Expression, Self::Error> {
        Ok(self.0.binary(BinaryOp::BitXor, a, b))
    }
}

impl Build {
    fn expression(&self, kind: ExpressionKind, ty: ScalarType) -> Expression {
        Expression {
            id: crate::ExprId::UNNUMBERED,
            kind,
            ty,
            span: self.span,
        }
    }

    fn statement(&self, kind: StatementKind) -> Statement {
        Statement {
            kind,
            span: self.span,
        }
    }

    fn u32(&self, value: u32) -> Expression {
        self.expression(
            ExpressionKind::Literal(Literal::Integer(u64::from(value))),
            ScalarType::U32,
        )
    }

    fn var(&self, id: VariableId, ty: ScalarType) -> Expression {
        self.expression(ExpressionKind::Variable(id), ty)
    }

    fn binary(&self, op: BinaryOp, left: Expression, right: Expression) -> Expression {
        let ty = if op.is_comparison() {
            ScalarType::Bool
        } else {
            left.ty
        };
        self.expression(
            ExpressionKind::Binary {
                op,
                left: Box::new(left),
                right: Box::new(right),
            },
            ty,
        )
    }

    /// Integer arithmetic that wraps, of `left`'s type: `u32` addresses (past 2^32 elements
    /// are out of the operation's range, and a wrapped index is caught as out of bounds) and
    /// integer sums.
    fn wrapping(&self, function: MathFunction, left: Expression, right: Expression) -> Expression {
        let ty = left.ty;
        self.expression(
            ExpressionKind::Math {
                function,
                arguments: vec![left, right],
            },
            ty,
        )
    }

    fn add(&self, left: Expression, right: Expression) -> Expression {
        self.wrapping(MathFunction::WrappingAdd, left, right)
    }

    fn mul(&self, left: Expression, right: Expression) -> Expression {
        self.wrapping(MathFunction::WrappingMul, left, right)
    }

    fn div(&self, left: Expression, right: Expression) -> Expression {
        self.binary(BinaryOp::Divide, left, right)
    }

    fn rem(&self, left: Expression, right: Expression) -> Expression {
        self.binary(BinaryOp::Remainder, left, right)
    }

    fn cast(&self, value: Expression, ty: ScalarType) -> Expression {
        self.expression(
            ExpressionKind::Cast {
                value: Box::new(value),
            },
            ty,
        )
    }

    fn math(&self, function: MathFunction, value: Expression) -> Expression {
        let ty = value.ty;
        self.expression(
            ExpressionKind::Math {
                function,
                arguments: vec![value],
            },
            ty,
        )
    }

    fn sub_group(&self, op: SubGroupOp) -> Expression {
        self.expression(
            ExpressionKind::SubGroup {
                op,
                arguments: Vec::new(),
            },
            ScalarType::U32,
        )
    }

    fn array_place(&self, base: PlaceBase, element: ScalarType, index: Expression) -> Place {
        Place {
            id: crate::PlaceId::UNNUMBERED,
            base,
            indices: vec![index],
            element,
            space: AddressSpace::Private,
            field: None,
        }
    }

    fn memory_place(&self, memory: &MatrixMemory, index: Expression) -> Place {
        Place {
            id: crate::PlaceId::UNNUMBERED,
            base: memory.base,
            indices: vec![index],
            element: memory.element,
            space: memory.space,
            field: None,
        }
    }

    fn load(&self, place: Place) -> Expression {
        let ty = place.element;
        self.expression(ExpressionKind::Load(Box::new(place)), ty)
    }

    fn store(&self, place: Place, value: Expression) -> Statement {
        self.statement(StatementKind::Store { place, value })
    }

    fn assign(&self, variable: VariableId, value: Expression) -> Statement {
        self.statement(StatementKind::Assign { variable, value })
    }

    /// `index = start; loop { if index >= end { break } body; continuing { index += step } }`.
    fn counted_loop(
        &self,
        index: VariableId,
        start: Expression,
        end: u32,
        step: Expression,
        body: Block,
        unroll: Unroll,
    ) -> Block {
        let counter = || self.var(index, ScalarType::U32);
        let mut loop_body = vec![self.statement(StatementKind::If {
            condition: self.binary(BinaryOp::GreaterEqual, counter(), self.u32(end)),
            accept: vec![self.statement(StatementKind::Break)],
            reject: Vec::new(),
        })];
        loop_body.extend(body);
        vec![
            self.assign(index, start),
            self.statement(StatementKind::Loop {
                body: loop_body,
                continuing: vec![self.assign(index, self.binary(BinaryOp::Add, counter(), step))],
                unroll,
            }),
        ]
    }

    /// Every element, in every work-item. A correctness path: kept as a loop, so code size
    /// and compile time stay small.
    fn full_loop(&self, index: VariableId, end: u32, body: Block) -> Block {
        self.counted_loop(index, self.u32(0), end, self.u32(1), body, Unroll::Count(1))
    }

    /// [`Build::full_loop`] unrolled, so that the indices of private arrays in `body` become
    /// constants and the arrays can live in registers.
    fn unrolled_loop(&self, index: VariableId, end: u32, body: Block) -> Block {
        self.counted_loop(index, self.u32(0), end, self.u32(1), body, Unroll::Full)
    }

    /// The elements `i` with `i % sub_group_size() == sub_group_local_id()`.
    fn lane_loop(&self, index: VariableId, end: u32, body: Block) -> Block {
        self.counted_loop(
            index,
            self.sub_group(SubGroupOp::LocalId),
            end,
            self.sub_group(SubGroupOp::Size),
            body,
            Unroll::Count(1),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_follow_from_tiles() {
        use MatrixRole::*;
        use ScalarType::*;
        assert_eq!(
            MatrixShape::of_tile(A, F16, 256),
            Some(MatrixShape::F16M16N16K16)
        );
        assert_eq!(
            MatrixShape::of_tile(B, F32, 128),
            Some(MatrixShape::Tf32M16N16K8)
        );
        assert_eq!(
            MatrixShape::of_tile(Accumulator, F32, 256),
            Some(MatrixShape::F16M16N16K16)
        );
        assert_eq!(
            MatrixShape::of_tile(A, I8, 256),
            Some(MatrixShape::I8M16N16K16)
        );
        assert_eq!(
            MatrixShape::of_tile(B, U8, 256),
            Some(MatrixShape::U8M16N16K16)
        );
        assert_eq!(
            MatrixShape::of_tile(Accumulator, I32, 256),
            Some(MatrixShape::I8M16N16K16)
        );
        assert_eq!(MatrixShape::of_tile(A, I32, 256), None);
        assert_eq!(MatrixShape::of_tile(Accumulator, U32, 256), None);
        assert_eq!(MatrixShape::of_tile(A, F32, 256), None);
        assert_eq!(MatrixShape::of_tile(Accumulator, F16, 256), None);
        for role in [A, B] {
            assert_eq!(
                MatrixShape::of_tile(role, Bf16, 256),
                Some(MatrixShape::Bf16M16N16K16)
            );
        }
        assert_eq!(MatrixShape::of_tile(Accumulator, Bf16, 256), None);
        // Matrix groups take them as `f16` ones.
        assert_eq!(
            crate::GroupShape::of_tiles(Bf16, 32, 16).map(|shape| shape.input),
            Some(crate::matrix_group::GroupInput::Bf16)
        );
    }

    #[test]
    fn tf32_rounding_is_to_nearest_ties_away() {
        use crate::scalar::round_tf32;
        assert_eq!(round_tf32(0x3f80_1000), 0x3f80_2000); // a tie rounds up in magnitude
        assert_eq!(round_tf32(0xbf80_1000), 0xbf80_2000);
        assert_eq!(round_tf32(0x3f80_0fff), 0x3f80_0000);
        assert_eq!(round_tf32(0x3fff_f000), 0x4000_0000); // carries into the exponent
        assert_eq!(round_tf32(0x7f7f_f000), 0x7f80_0000); // past the largest tf32: infinity
        assert_eq!(round_tf32(0x7fc0_1234), 0x7fc0_1234); // NaNs unchanged
    }
}
