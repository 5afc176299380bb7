//! A host emulation of the `mma.sync` lowering of matrix groups: the lanes' `ldmatrix` row
//! addresses come from the lowering's own functions ([`a_row_of_lane`], [`b_row_of_lane`])
//! and the layout ([`GroupShape::a_index`], `b_index`); what `ldmatrix` and `mma` do with
//! them is transcribed here from the PTX ISA ("Warp-level matrix load instruction: ldmatrix",
//! "Matrix Fragments for mma.m16n8k16 / mma.m16n8k8"). The accumulators must come out as
//! `accumulator_position` places A x B.

use super::{a_row_of_lane, b_row_of_lane};
use kdsl_ir::matrix_group::{accumulator_position, GroupInput, GroupShape, Numbers, GROUP_SIZE};

/// The index of the first element of the 16-byte row each lane addresses.
type Rows = Vec<usize>;

/// Element `element` (in elements of `size` bytes) of row `row` of an 8 x 16-byte matrix
/// whose row r lane `8 m + r` addressed.
fn at(memory: &[f64], rows: &Rows, matrix: usize, row: usize, element: usize) -> f64 {
    memory[rows[8 * matrix + row] + element]
}

/// `ldmatrix.x4` (`trans` or not) of 16-bit elements: register m of lane t holds two
/// elements: without `trans` (row t / 4, elements 2 (t % 4) and + 1) of matrix m, with
/// `trans` elements t / 4 of rows 2 (t % 4) and + 1.
fn ldmatrix_b16(memory: &[f64], rows: &Rows, trans: bool) -> Vec<[[f64; 2]; 4]> {
    (0..32)
        .map(|t| {
            std::array::from_fn(|m| {
                std::array::from_fn(|e| {
                    if trans {
                        at(memory, rows, m, 2 * (t % 4) + e, t / 4)
                    } else {
                        at(memory, rows, m, t / 4, 2 * (t % 4) + e)
                    }
                })
            })
        })
        .collect()
}

/// `ldmatrix.x4` of 32-bit elements (tf32), not transposed: register m of lane t is element
/// t % 4 of row t / 4 of matrix m.
fn ldmatrix_b32(memory: &[f64], rows: &Rows) -> Vec<[f64; 4]> {
    (0..32)
        .map(|t| std::array::from_fn(|m| at(memory, rows, m, t / 4, t % 4)))
        .collect()
}

/// `mma.m16n8k16` (`f16`, `bf16`): A a_{2v}, a_{2v+1} in register v at rows g + 8 (v % 2),
/// columns 2 q + 8 (v / 2) + {0, 1}; B b_{2v}, b_{2v+1} in register v at rows 2 q + 8 v +
/// {0, 1}, column g; C and D c_i at row g + 8 (i / 2), column 2 q + i % 2 (g = t / 4, q = t % 4).
fn mma_k16(a: &[[[f64; 2]; 4]], b: &[[[f64; 2]; 2]], c: &mut [[f64; 4]]) {
    let mut a_tile = [[0.0; 16]; 16];
    let mut b_tile = [[0.0; 8]; 16];
    for t in 0..32 {
        let (g, q) = (t / 4, t % 4);
        for v in 0..4 {
            for e in 0..2 {
                a_tile[g + 8 * (v % 2)][2 * q + 8 * (v / 2) + e] = a[t][v][e];
            }
        }
        for v in 0..2 {
            for e in 0..2 {
                b_tile[2 * q + 8 * v + e][g] = b[t][v][e];
            }
        }
    }
    accumulate(&a_tile, &b_tile, 16, c);
}

/// `mma.m16n8k8` (tf32): A a_v at row g + 8 (v % 2), column q + 4 (v / 2); B b_v at row
/// q + 4 v, column g; C and D as for k16.
fn mma_k8(a: &[[f64; 4]], b: &[[f64; 2]], c: &mut [[f64; 4]]) {
    let mut a_tile = [[0.0; 16]; 16];
    let mut b_tile = [[0.0; 8]; 16];
    for t in 0..32 {
        let (g, q) = (t / 4, t % 4);
        for v in 0..4 {
            a_tile[g + 8 * (v % 2)][q + 4 * (v / 2)] = a[t][v];
        }
        for v in 0..2 {
            b_tile[q + 4 * v][g] = b[t][v];
        }
    }
    accumulate(&a_tile, &b_tile, 8, c);
}

fn accumulate(a: &[[f64; 16]; 16], b: &[[f64; 8]; 16], depth: usize, c: &mut [[f64; 4]]) {
    for (t, lane) in c.iter_mut().enumerate() {
        let (g, q) = (t / 4, t % 4);
        for (i, value) in lane.iter_mut().enumerate() {
            let (row, column) = (g + 8 * (i / 2), 2 * q + i % 2);
            *value += (0..depth).map(|k| a[row][k] * b[k][column]).sum::<f64>();
        }
    }
}

/// The rows (first element indices) each lane addresses, from the lowering's functions.
fn rows(address: impl Fn(u32) -> usize) -> Rows {
    (0..32).map(address).collect()
}

/// One matrix-group statement of `shape` emulated warp by warp, against A x B.
fn check(shape: GroupShape) {
    let (n, k) = (shape.columns as usize, shape.depth as usize);
    let per_row = shape.row_elements();
    // A: blocks of 64 rows of W; B: blocks of 64 columns of K rows (f16/bf16), of 32 k of N
    // rows (tf32); 8 elements of padding first, as a statement's offset may be.
    let offset = 8;
    let a_chunk = 64 * per_row;
    let b_chunk = match shape.input {
        GroupInput::Tf32 => n as u32 * per_row,
        _ => k as u32 * per_row,
    };
    let size = offset as usize + 64 * (k + per_row as usize) * (n + 64);
    let (mut a_memory, mut b_memory) = (vec![0.0; size], vec![0.0; size]);
    let value = |r: usize, c: usize, salt: usize| ((r * 7 + c * 13 + salt) % 9) as f64 - 4.0;
    let mut a = vec![vec![0.0; k]; 64];
    let mut b = vec![vec![0.0; n]; k];
    for (r, row) in a.iter_mut().enumerate() {
        for (c, element) in row.iter_mut().enumerate() {
            *element = value(r, c, 1);
            a_memory[shape.a_index(offset, r as u32, c as u32, a_chunk) as usize] = *element;
        }
    }
    for (r, row) in b.iter_mut().enumerate() {
        for (c, element) in row.iter_mut().enumerate() {
            *element = value(r, c, 5);
            b_memory[shape.b_index(offset, r as u32, c as u32, b_chunk) as usize] = *element;
        }
    }
    let blocks = shape.columns / 8;
    for warp in 0..4u32 {
        // accumulator[t][4 j + i]: lane t's element 4 j + i.
        let mut accumulator = vec![vec![[0.0; 4]; blocks as usize]; 32];
        for step in 0..shape.depth / shape.depth_step() {
            let depth = step * shape.depth_step();
            let a_rows = rows(|lane| {
                let Ok((row, column)) = a_row_of_lane(&mut Numbers, shape, 16 * warp, lane, depth);
                shape.a_index(offset, row, column, a_chunk) as usize
            });
            for pair in (0..blocks).step_by(2) {
                let single = pair + 1 == blocks;
                let b_rows = rows(|lane| {
                    let Ok((row, column)) =
                        b_row_of_lane(&mut Numbers, shape, lane, depth, pair, single);
                    shape.b_index(offset, row, column, b_chunk) as usize
                });
                for half in 0..(if single { 1 } else { 2 }) {
                    let block = (pair + half) as usize;
                    let mut c: Vec<[f64; 4]> = (0..32).map(|t| accumulator[t][block]).collect();
                    match shape.input {
                        GroupInput::Tf32 => {
                            let a_registers = ldmatrix_b32(&a_memory, &a_rows);
                            let b_registers: Vec<[f64; 2]> = ldmatrix_b32(&b_memory, &b_rows)
                                .iter()
                                .map(|r| [r[2 * half as usize], r[2 * half as usize + 1]])
                                .collect();
                            mma_k8(&a_registers, &b_registers, &mut c);
                        }
                        _ => {
                            let a_registers = ldmatrix_b16(&a_memory, &a_rows, false);
                            let b_registers: Vec<[[f64; 2]; 2]> =
                                ldmatrix_b16(&b_memory, &b_rows, true)
                                    .iter()
                                    .map(|r| [r[2 * half as usize], r[2 * half as usize + 1]])
                                    .collect();
                            mma_k16(&a_registers, &b_registers, &mut c);
                        }
                    }
                    for t in 0..32 {
                        accumulator[t][block] = c[t];
                    }
                }
            }
        }
        for (t, blocks) in accumulator.iter().enumerate() {
            let item = 32 * warp + t as u32;
            assert!(item < GROUP_SIZE);
            for (index, value) in blocks.iter().flatten().enumerate() {
                let (row, column) = accumulator_position(item, index as u32);
                let want: f64 = (0..k)
                    .map(|kk| a[row as usize][kk] * b[kk][column as usize])
                    .sum();
                assert_eq!(
                    *value,
                    want,
                    "{}: work-item {item} element {index} ({row}, {column})",
                    shape.name()
                );
            }
        }
    }
}

#[test]
fn warps_load_and_multiply_what_the_layouts_place() {
    for input in [GroupInput::F16, GroupInput::Bf16, GroupInput::Tf32] {
        // N with an odd number of 8-column blocks too (the last `ldmatrix` repeats itself).
        for (columns, depth) in [(16, 64), (24, 128), (256, 32)] {
            check(GroupShape {
                input,
                columns,
                depth,
            });
        }
    }
}

/// The emulation is no tautology: a lane addressing the wrong row is caught.
#[test]
#[should_panic(expected = "work-item")]
fn a_wrong_lane_address_is_caught() {
    let shape = GroupShape {
        input: GroupInput::F16,
        columns: 16,
        depth: 16,
    };
    // The lowering's A rows swapped in pairs: lane 0 then addresses row 1.
    let row_of = |lane: u32| {
        let Ok((row, column)) = a_row_of_lane(&mut Numbers, shape, 0, lane, 0);
        (row ^ 1, column)
    };
    assert_eq!(row_of(0), (1, 0));
    check_with_rows(shape, row_of);
}

/// [`check`]'s first warp and step with A's rows from `row_of` (for the negative test).
fn check_with_rows(shape: GroupShape, row_of: impl Fn(u32) -> (u32, u32)) {
    let (n, k) = (shape.columns as usize, shape.depth as usize);
    let per_row = shape.row_elements();
    let (offset, a_chunk, b_chunk) = (8, 64 * per_row, k as u32 * per_row);
    let size = 8 + 64 * (k + per_row as usize) * (n + 64);
    let (mut a_memory, mut b_memory) = (vec![0.0; size], vec![0.0; size]);
    let a: Vec<Vec<f64>> = (0..64)
        .map(|r| (0..k).map(|c| (r * 3 + c) as f64).collect())
        .collect();
    let b: Vec<Vec<f64>> = (0..k)
        .map(|r| (0..n).map(|c| (r + 2 * c) as f64).collect())
        .collect();
    for r in 0..64 {
        for c in 0..k {
            a_memory[shape.a_index(offset, r as u32, c as u32, a_chunk) as usize] = a[r][c];
        }
    }
    for r in 0..k {
        for c in 0..n {
            b_memory[shape.b_index(offset, r as u32, c as u32, b_chunk) as usize] = b[r][c];
        }
    }
    let a_rows = rows(|lane| {
        let (row, column) = row_of(lane);
        shape.a_index(offset, row, column, a_chunk) as usize
    });
    let b_rows = rows(|lane| {
        let Ok((row, column)) = b_row_of_lane(&mut Numbers, shape, lane, 0, 0, false);
        shape.b_index(offset, row, column, b_chunk) as usize
    });
    let mut c = vec![[0.0; 4]; 32];
    let b_registers: Vec<[[f64; 2]; 2]> = ldmatrix_b16(&b_memory, &b_rows, true)
        .iter()
        .map(|r| [r[0], r[1]])
        .collect();
    mma_k16(
        &ldmatrix_b16(&a_memory, &a_rows, false),
        &b_registers,
        &mut c,
    );
    for (t, values) in c.iter().enumerate() {
        for (index, value) in values.iter().enumerate() {
            let (row, column) = accumulator_position(t as u32, index as u32);
            let want: f64 = (0..k)
                .map(|kk| a[row as usize][kk] * b[kk][column as usize])
                .sum();
            assert_eq!(*value, want, "work-item {t} element {index}");
        }
    }
}
