//! Building the plain definition's IR: expressions and statements at one span.

use super::*;

/// Builds IR expressions and statements at one span.
pub(crate) struct Build {
    pub(crate) span: Span,
}

/// The layouts' index arithmetic (`matrix_group::IndexArithmetic`) as `u32` IR expressions.
pub(super) struct IrIndices<'b>(pub(super) &'b Build);

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
    pub(crate) fn expression(&self, kind: ExpressionKind, ty: ScalarType) -> Expression {
        Expression {
            id: crate::ExprId::UNNUMBERED,
            kind,
            ty,
            span: self.span,
        }
    }

    pub(crate) fn statement(&self, kind: StatementKind) -> Statement {
        Statement {
            kind,
            span: self.span,
        }
    }

    pub(crate) fn u32(&self, value: u32) -> Expression {
        self.expression(
            ExpressionKind::Literal(Literal::Integer(u64::from(value))),
            ScalarType::U32,
        )
    }

    pub(crate) fn var(&self, id: VariableId, ty: ScalarType) -> Expression {
        self.expression(ExpressionKind::Variable(id), ty)
    }

    pub(crate) fn binary(&self, op: BinaryOp, left: Expression, right: Expression) -> Expression {
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
    pub(crate) fn wrapping(
        &self,
        function: MathFunction,
        left: Expression,
        right: Expression,
    ) -> Expression {
        let ty = left.ty;
        self.expression(
            ExpressionKind::Math {
                function,
                arguments: vec![left, right],
            },
            ty,
        )
    }

    pub(crate) fn add(&self, left: Expression, right: Expression) -> Expression {
        self.wrapping(MathFunction::WrappingAdd, left, right)
    }

    pub(crate) fn mul(&self, left: Expression, right: Expression) -> Expression {
        self.wrapping(MathFunction::WrappingMul, left, right)
    }

    pub(crate) fn div(&self, left: Expression, right: Expression) -> Expression {
        self.binary(BinaryOp::Divide, left, right)
    }

    pub(crate) fn rem(&self, left: Expression, right: Expression) -> Expression {
        self.binary(BinaryOp::Remainder, left, right)
    }

    pub(crate) fn cast(&self, value: Expression, ty: ScalarType) -> Expression {
        self.expression(
            ExpressionKind::Cast {
                value: Box::new(value),
            },
            ty,
        )
    }

    pub(crate) fn math(&self, function: MathFunction, value: Expression) -> Expression {
        let ty = value.ty;
        self.expression(
            ExpressionKind::Math {
                function,
                arguments: vec![value],
            },
            ty,
        )
    }

    pub(crate) fn sub_group(&self, op: SubGroupOp) -> Expression {
        self.expression(
            ExpressionKind::SubGroup {
                op,
                arguments: Vec::new(),
            },
            ScalarType::U32,
        )
    }

    pub(crate) fn array_place(
        &self,
        base: PlaceBase,
        element: ScalarType,
        index: Expression,
    ) -> Place {
        Place {
            id: crate::PlaceId::UNNUMBERED,
            base,
            indices: vec![index],
            element,
            space: AddressSpace::Private,
            field: None,
        }
    }

    pub(crate) fn memory_place(&self, memory: &MatrixMemory, index: Expression) -> Place {
        Place {
            id: crate::PlaceId::UNNUMBERED,
            base: memory.base,
            indices: vec![index],
            element: memory.element,
            space: memory.space,
            field: None,
        }
    }

    pub(crate) fn load(&self, place: Place) -> Expression {
        let ty = place.element;
        self.expression(ExpressionKind::Load(Box::new(place)), ty)
    }

    pub(crate) fn store(&self, place: Place, value: Expression) -> Statement {
        self.statement(StatementKind::Store { place, value })
    }

    pub(crate) fn assign(&self, variable: VariableId, value: Expression) -> Statement {
        self.statement(StatementKind::Assign { variable, value })
    }

    /// `index = start; loop { if index >= end { break } body; continuing { index += step } }`.
    pub(crate) fn counted_loop(
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
    pub(crate) fn full_loop(&self, index: VariableId, end: u32, body: Block) -> Block {
        self.counted_loop(index, self.u32(0), end, self.u32(1), body, Unroll::Count(1))
    }

    /// [`Build::full_loop`] unrolled, so that the indices of private arrays in `body` become
    /// constants and the arrays can live in registers.
    pub(crate) fn unrolled_loop(&self, index: VariableId, end: u32, body: Block) -> Block {
        self.counted_loop(index, self.u32(0), end, self.u32(1), body, Unroll::Full)
    }

    /// The elements `i` with `i % sub_group_size() == sub_group_local_id()`.
    pub(crate) fn lane_loop(&self, index: VariableId, end: u32, body: Block) -> Block {
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
