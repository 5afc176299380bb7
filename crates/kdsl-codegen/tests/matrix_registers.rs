//! Matrix tiles stay in registers on targets with matrix units: the front end's zeroing loop
//! of a tile array is unrolled completely (`kdsl_ir::tile_registers`), so SROA splits the
//! array into the fragment registers instead of leaving it on the stack.

use kdsl_codegen::{emit_llvm_ir, Options, TargetSpec};
use std::path::Path;

fn double_buffered_hgemm() -> kdsl_ir::Module {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/inputs/double_buffered_hgemm.krn");
    let source = std::fs::read_to_string(&path).expect("double_buffered_hgemm.krn");
    kdsl_frontend::compile_to_ir(&source).expect("double_buffered_hgemm.krn compiles")
}

#[test]
fn tiles_of_a_double_buffered_gemm_leave_no_stack_array() {
    let module = double_buffered_hgemm();
    let ir = emit_llvm_ir(
        &module,
        &TargetSpec::ptx(Some("sm_90")),
        &Options::default(),
    )
    .expect("compiles for sm_90");
    let allocas: Vec<&str> = ir.lines().filter(|line| line.contains("alloca")).collect();
    assert!(
        allocas.is_empty(),
        "tiles left in memory:\n{}",
        allocas.join("\n")
    );
    assert!(
        ir.contains("llvm.nvvm.wmma"),
        "the tiles reach the tensor cores"
    );
}

#[test]
fn the_zeroing_loops_of_tiles_ask_for_full_unrolling() {
    let module = double_buffered_hgemm();
    let prepared = kdsl_ir::tile_registers::unroll_tile_zeroing(&module);
    let kernel = &prepared.functions[0];
    let full = count_loops(&kernel.body, kdsl_ir::Unroll::Full);
    // Eight accumulators and six input tiles, each zeroed by one loop; the sub-step loop was
    // already `unroll`.
    assert_eq!(full, 14 + 1, "loops marked for full unrolling");
    let before = count_loops(&module.functions[0].body, kdsl_ir::Unroll::Full);
    assert_eq!(before, 1, "only the source's `unroll` loop before");
}

fn count_loops(block: &kdsl_ir::Block, unroll: kdsl_ir::Unroll) -> usize {
    block
        .iter()
        .map(|statement| match &statement.kind {
            kdsl_ir::StatementKind::Loop {
                body,
                continuing,
                unroll: this,
            } => {
                usize::from(*this == unroll)
                    + count_loops(body, unroll)
                    + count_loops(continuing, unroll)
            }
            kdsl_ir::StatementKind::If { accept, reject, .. } => {
                count_loops(accept, unroll) + count_loops(reject, unroll)
            }
            _ => 0,
        })
        .sum()
}

/// examples/kmeans_tf32.krn on sm_90: its eight accumulators and twelve input tiles stay in
/// registers, and each accumulator takes three tile products (3xTF32) or one (`SPLIT=false`)
/// a stage, two `mma.sync` m16n8k8 each, in both of the kernel's entry points (any strides, and
/// contiguous arrays).
#[test]
fn kmeans_tiles_stay_in_registers_with_three_products_or_one() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/kmeans_tf32.krn");
    let source = std::fs::read_to_string(&path).expect("kmeans_tf32.krn");
    for (split, products) in [(true, 3), (false, 1)] {
        let module = kdsl_frontend::compile_to_ir_with_defines(
            &source,
            &[kdsl_frontend::Define::new("SPLIT", split)],
        )
        .expect("kmeans_tf32.krn compiles");
        let ir = emit_llvm_ir(
            &module,
            &TargetSpec::ptx(Some("sm_90")),
            &Options::default(),
        )
        .expect("compiles for sm_90");
        assert!(
            !ir.contains("alloca"),
            "SPLIT={split}: tiles left in memory"
        );
        let mma = ir
            .lines()
            .filter(|line| !line.starts_with("declare"))
            .map(|line| line.matches("@llvm.nvvm.mma.m16n8k8.row.col.tf32").count())
            .sum::<usize>();
        assert_eq!(mma, 2 * 8 * products * 2, "SPLIT={split}: mma calls");
    }
}
