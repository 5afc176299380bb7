//! Host emulation of the AMDGPU tile lowering: tiles loaded into lanes per [`Layout`], the
//! instruction executed as its ISA documents it (operand positions written independently below,
//! from the ISA's side: where element (i, k) of `A` lives), results stored per [`Layout`]; the
//! stored tile must be `A × B + C` exactly (small integers, exact in any summation order).
//!
//! Sources of the ISA positions:
//! - MFMA: "AMD Instinct MI300 CDNA3 Instruction Set Architecture", chapter 7 "Matrix
//!   Arithmetic Instructions" (7.1, the dependent-layout tables of the 16×16 instructions, as
//!   AMD's Matrix Instruction Calculator prints them), and AMD's "Matrix cores" lab notes and
//!   "Matrix Core Programming on CDNA3/CDNA4" (examples of `16x16x4f32` and `16x16x16f16`).
//!   All three follow the calculator's rule for one-block 16×16 MFMA: with kl = k / 4 items per
//!   lane, A[i][k] is in lane i + 16 (k / kl), item k % kl (xf32: kl = 2; `16x16x16i8`: kl = 4
//!   bytes in one register; `16x16x32_i8`: kl = 8 bytes in two).
//! - WMMA: "RDNA3 Instruction Set Architecture", 7.9 "Wave Matrix Multiply-Accumulate" and
//!   GPUOpen's "How to accelerate AI applications on RDNA 3 using WMMA" (wave32: lanes 16-31
//!   repeat `A` rows / `B` columns of lanes 0-15; `D` element (i, j) in lane j + 16 (i % 2),
//!   VGPR i / 2). `iu8` packs the same 16 k per lane as bytes, and its `i32` `D` lies as the
//!   `f32` one.

use super::{AmdgpuMatrixInstruction, Layout};
use AmdgpuMatrixInstruction::*;

/// A register position: (lane, item of the lane's operand).
type Position = (u32, u32);

/// One instruction as the ISA describes it: D (16×16) = A (16×k) × B (k×16) + C.
struct Isa {
    lanes: u32,
    /// k of one instruction.
    k: u32,
    /// Items of the `A` and `B` operands per lane.
    items: u32,
    /// Every register holding A[i][k] (WMMA holds each twice, and both copies must agree).
    a: fn(u32, u32) -> Vec<Position>,
    b: fn(u32, u32) -> Vec<Position>,
    /// The register of C[i][j] and D[i][j].
    d: fn(u32, u32) -> Position,
}

fn isa(instruction: AmdgpuMatrixInstruction) -> Isa {
    // 16×16 MFMA, one block: `D`/`C` element (i, j) is in lane j + 16 (i / 4), item i % 4.
    fn mfma_d(i: u32, j: u32) -> Position {
        (j + 16 * (i / 4), i % 4)
    }
    match instruction {
        // A[i][k]: lane i + 16 (k / 4), item k % 4; B[k][j]: lane j + 16 (k / 4), item k % 4.
        Mfma16x16x16F16 | Mfma16x16x16I8 | Mfma16x16x16Bf16 => Isa {
            lanes: 64,
            k: 16,
            items: 4,
            a: |i, k| vec![(i + 16 * (k / 4), k % 4)],
            b: |k, j| vec![(j + 16 * (k / 4), k % 4)],
            d: mfma_d,
        },
        // A[i][k]: lane i + 16 k; B[k][j]: lane j + 16 k.
        Mfma16x16x4F32 => Isa {
            lanes: 64,
            k: 4,
            items: 1,
            a: |i, k| vec![(i + 16 * k, 0)],
            b: |k, j| vec![(j + 16 * k, 0)],
            d: mfma_d,
        },
        // A[i][k]: lane i + 16 (k / 2), item k % 2; B likewise.
        Mfma16x16x8Xf32 => Isa {
            lanes: 64,
            k: 8,
            items: 2,
            a: |i, k| vec![(i + 16 * (k / 2), k % 2)],
            b: |k, j| vec![(j + 16 * (k / 2), k % 2)],
            d: mfma_d,
        },
        // A[i][k]: lanes i and i + 16, item k; B[k][j]: lanes j and j + 16, item k;
        // D[i][j]: lane j + 16 (i % 2), item i / 2.
        // A[i][k]: lane i + 16 (k / 8), item k % 8; B likewise.
        Mfma16x16x32I8 => Isa {
            lanes: 64,
            k: 32,
            items: 8,
            a: |i, k| vec![(i + 16 * (k / 8), k % 8)],
            b: |k, j| vec![(j + 16 * (k / 8), k % 8)],
            d: mfma_d,
        },
        Wmma16x16x16F16Wave32 | Wmma16x16x16Iu8Wave32 | Wmma16x16x16Bf16Wave32 => Isa {
            lanes: 32,
            k: 16,
            items: 16,
            a: |i, k| vec![(i, k), (i + 16, k)],
            b: |k, j| vec![(j, k), (j + 16, k)],
            d: |i, j| (j + 16 * (i % 2), i / 2),
        },
    }
}

/// The instruction executed on register files (`[lane][item]`) as the ISA defines it.
fn execute(isa: &Isa, a: &[Vec<f32>], b: &[Vec<f32>], c: &[Vec<f32>]) -> Vec<Vec<f32>> {
    let read = |registers: &[Vec<f32>], positions: Vec<Position>| {
        let values: Vec<f32> = positions
            .iter()
            .map(|&(lane, item)| registers[lane as usize][item as usize])
            .collect();
        assert!(
            values.iter().all(|v| *v == values[0]),
            "replicated operand copies differ at {positions:?}: {values:?}"
        );
        values[0]
    };
    let mut d = c.to_vec();
    for i in 0..16 {
        for j in 0..16 {
            let (lane, item) = (isa.d)(i, j);
            let mut sum = c[lane as usize][item as usize];
            for k in 0..isa.k {
                sum += read(a, (isa.a)(i, k)) * read(b, (isa.b)(k, j));
            }
            d[lane as usize][item as usize] = sum;
        }
    }
    d
}

/// A small deterministic generator of integers in -8..=8 (exact in f16 and tf32).
struct Numbers(u64);

impl Numbers {
    fn next(&mut self) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) % 17) as f32 - 8.0
    }

    fn matrix(&mut self, rows: u32, columns: u32) -> Vec<Vec<f32>> {
        (0..rows)
            .map(|_| (0..columns).map(|_| self.next()).collect())
            .collect()
    }
}

/// `matrix_load_*` per the layout: every lane's fragment, checking every element is held.
fn load(layout: &Layout, fragment: super::Fragment, matrix: &[Vec<f32>]) -> Vec<Vec<f32>> {
    let mut held = vec![vec![false; matrix[0].len()]; matrix.len()];
    let registers = (0..layout.lanes)
        .map(|lane| {
            (0..fragment.items)
                .map(|item| {
                    let row = fragment.row.at(lane, item) as usize;
                    let column = fragment.column.at(lane, item) as usize;
                    held[row][column] = true;
                    matrix[row][column]
                })
                .collect()
        })
        .collect();
    assert!(
        held.iter().flatten().all(|h| *h),
        "an element no lane holds"
    );
    registers
}

/// `matrix_store` per the layout: every element written exactly once.
fn store(layout: &Layout, registers: &[Vec<f32>]) -> Vec<Vec<f32>> {
    let fragment = layout.accumulator;
    let mut out = vec![vec![f32::NAN; 16]; 16];
    for lane in 0..layout.lanes {
        for item in 0..fragment.items {
            let (row, column) = (fragment.row.at(lane, item), fragment.column.at(lane, item));
            let slot = &mut out[row as usize][column as usize];
            assert!(slot.is_nan(), "({row}, {column}) stored twice");
            *slot = registers[lane as usize][item as usize];
        }
    }
    out
}

fn multiply_add(a: &[Vec<f32>], b: &[Vec<f32>], c: &[Vec<f32>]) -> Vec<Vec<f32>> {
    (0..16)
        .map(|i| {
            (0..16)
                .map(|j| c[i][j] + (0..b.len()).map(|k| a[i][k] * b[k][j]).sum::<f32>())
                .collect()
        })
        .collect()
}

const ALL: [AmdgpuMatrixInstruction; 9] = [
    Mfma16x16x16F16,
    Mfma16x16x4F32,
    Mfma16x16x8Xf32,
    Wmma16x16x16F16Wave32,
    Mfma16x16x16I8,
    Mfma16x16x32I8,
    Wmma16x16x16Iu8Wave32,
    Mfma16x16x16Bf16,
    Wmma16x16x16Bf16Wave32,
];

/// The tile's K: one more than the largest column of `A` any lane holds.
fn tile_k(layout: &Layout) -> u32 {
    let a = layout.a;
    (0..layout.lanes)
        .flat_map(|lane| (0..a.items).map(move |item| a.column.at(lane, item)))
        .max()
        .expect("a fragment")
        + 1
}

#[test]
fn loading_multiplying_and_storing_per_the_layout_computes_a_times_b_plus_c() {
    let mut numbers = Numbers(25);
    for instruction in ALL {
        let layout = instruction.layout();
        let isa = isa(instruction);
        assert_eq!(layout.lanes, isa.lanes, "{instruction:?}");
        assert_eq!(layout.operand_items, isa.items, "{instruction:?}");
        assert!(
            layout.a.items <= isa.items * layout.calls,
            "{instruction:?}"
        );
        assert_eq!(layout.b.items, layout.a.items, "{instruction:?}");
        let k = tile_k(&layout);
        assert!(k <= isa.k * layout.calls, "{instruction:?}");
        for _ in 0..20 {
            let (a, b, c) = (
                numbers.matrix(16, k),
                numbers.matrix(k, 16),
                numbers.matrix(16, 16),
            );
            let a_registers = load(&layout, layout.a, &a);
            let b_registers = load(&layout, layout.b, &b);
            let mut accumulator = load(&layout, layout.accumulator, &c);
            let per_call = (layout.a.items / layout.calls) as usize;
            for call in 0..layout.calls as usize {
                // The lowering's operand: the call's items, then zeros up to the instruction's.
                let operand = |registers: &[Vec<f32>]| -> Vec<Vec<f32>> {
                    registers
                        .iter()
                        .map(|items| {
                            let mut operand = items[call * per_call..][..per_call].to_vec();
                            operand.resize(isa.items as usize, 0.0);
                            operand
                        })
                        .collect()
                };
                accumulator = execute(
                    &isa,
                    &operand(&a_registers),
                    &operand(&b_registers),
                    &accumulator,
                );
            }
            assert_eq!(
                store(&layout, &accumulator),
                multiply_add(&a, &b, &c),
                "{instruction:?}"
            );
        }
    }
}

/// The check above is not vacuous: a layout with `A`'s k order wrong fails it.
#[test]
fn a_wrong_layout_is_caught() {
    let mut layout = Mfma16x16x16F16.layout();
    layout.a.column = super::affine(0, 1, 4); // k = l / 16 + 4 v instead of 4 (l / 16) + v
    let isa = isa(Mfma16x16x16F16);
    let mut numbers = Numbers(7);
    let (a, b, c) = (
        numbers.matrix(16, 16),
        numbers.matrix(16, 16),
        numbers.matrix(16, 16),
    );
    let d = execute(
        &isa,
        &load(&layout, layout.a, &a),
        &load(&layout, layout.b, &b),
        &load(&layout, layout.accumulator, &c),
    );
    assert_ne!(store(&layout, &d), multiply_add(&a, &b, &c));
}
