//! Unroll requests on `for` loops: how they reach the IR, the default for small constant
//! loops, and the warning for a full unroll that cannot happen.

use kdsl_ir::{Block, Severity, StatementKind, Unroll};

/// The unroll hints of every loop in the kernel, in source order.
fn hints(block: &Block, found: &mut Vec<Unroll>) {
    for statement in block {
        match &statement.kind {
            StatementKind::Loop {
                body,
                continuing,
                unroll,
            } => {
                found.push(*unroll);
                hints(body, found);
                hints(continuing, found);
            }
            StatementKind::If { accept, reject, .. } => {
                hints(accept, found);
                hints(reject, found);
            }
            _ => {}
        }
    }
}

fn kernel_hints(source: &str) -> Vec<Unroll> {
    let module = kdsl_frontend::compile_to_ir(source).expect("compiles");
    let kernel = module.kernels().next().expect("a kernel");
    let mut found = Vec::new();
    hints(&kernel.body, &mut found);
    found
}

#[test]
fn requests_and_defaults_reach_the_ir() {
    let source = "
const N: u32 = 4;
kernel k(out: global mut [u32], n: u32) {
    let mut total = 0u32;
    for a in 0..64u32 unroll { total += a; }
    for b in 0..n unroll(N) { total += b; }
    for c in 0..4u32 unroll(1) { total += c; }
    for d in 0..8u32 step 2 { total += d; }
    for e in 0..17u32 { total += e; }
    for f in 0..n { total += f; }
    for g in 0..4u32 { for h in 0..4u32 { total += g * h; } }
    out[0] = total;
}";
    assert_eq!(
        kernel_hints(source),
        vec![
            Unroll::Full,     // asked for
            Unroll::Count(4), // a module constant as the factor
            Unroll::Count(1), // kept rolled
            Unroll::Full,     // 4 iterations: unrolled by default
            Unroll::Default,  // 17 iterations: more than the default unrolls
            Unroll::Default,  // run-time trip count
            Unroll::Default,  // holds a loop
            Unroll::Full,     // the inner loop of 4 iterations
        ]
    );
}

#[test]
fn an_impossible_full_unroll_is_a_warning_and_the_module_compiles() {
    let source = "
kernel k(out: global mut [u32], n: u32) {
    let mut total = 0u32;
    for a in 0..n unroll { total += a; }
    out[0] = total;
}";
    let (module, report) = kdsl_frontend::compile_to_ir_reporting(source, &[]);
    assert!(module.is_ok(), "{module:?}");
    assert_eq!(report.warnings.len(), 1, "{:?}", report.warnings);
    let warning = &report.warnings[0];
    assert_eq!(warning.severity, Severity::Warning);
    assert_eq!(warning.code, "W0516");
    assert_eq!(kernel_hints(source), vec![Unroll::Default]);
    let rendered = kdsl_frontend::render_diagnostics("k.krn", source, &report.warnings, false);
    assert!(rendered.contains("warning[W0516]"), "{rendered}");
}

#[test]
fn the_ir_prints_the_hints() {
    let module = kdsl_frontend::compile_to_ir(
        "kernel k(out: global mut [u32], n: u32) { for a in 0..n unroll(8) { out[a] = a; } }",
    )
    .expect("compiles");
    assert!(module.to_string().contains("loop unroll(8) {"), "{module}");
}
