//! The plain definition of a matrix group's `acc += A × B`.

use super::*;

impl Expander<'_> {
    /// A matrix group's `acc += A × B`: work-item `t` (its place in the group) computes the
    /// elements it owns (`matrix_group::accumulator_position`), reading `A` and `B` from local
    /// memory in their chunked layouts. Its elements `4 q` to `4 q + 3` are the corners of a
    /// 2 x 2 block (rows r and r + 8, columns c and c + 1), and quads `q` to `q + 3` lie 8
    /// columns apart, so one pass over k computes 16 elements from two elements of `A` and
    /// eight of `B` per k. Each element's sum still starts from the accumulator and adds its
    /// products in k order, so the results are those of one element at a time.
    pub(super) fn group_mma(&mut self, op: &MatrixOp, s: Scratch, span: Span) -> Block {
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
