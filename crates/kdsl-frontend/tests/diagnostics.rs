//! Snapshots of diagnostics that no `.krn` file shows: wrong `-D` definitions. The error files'
//! diagnostics are file tests (`filetests.rs`).

/// A file whose constants the tests below set with `-D`; it compiles as it is.
const SPECIALIZED: &str = "\
const N_FEATURES: u32 = 8;
const WINDOW: u8 = 4;
const SCALE: f32 = 0.5;
const CLAMPED: bool = false;
const OFFSET: u32 = 1;
const BIAS: i16 = -3;

fn scaled(x: f32) -> f32 {
    return x * SCALE;
}

kernel specialized(output: global mut [f32]) {
    local window: [f32; WINDOW];
    let i = get_global_id(0);
    window[i % (WINDOW as u32)] = scaled(i as f32);
    if CLAMPED {
        output[i] = window[0] + ((N_FEATURES + OFFSET) as f32) + (BIAS as f32);
    }
}
";

fn render_with_defines(defines: &[(&str, &str)]) -> String {
    let defines: Vec<kdsl_frontend::Define> = defines
        .iter()
        .map(|(name, value)| kdsl_frontend::Define::new(*name, value))
        .collect();
    let diagnostics = kdsl_frontend::compile_to_ir_with_defines(SPECIALIZED, &defines)
        .expect_err("the definitions are wrong");
    assert!(diagnostics.iter().all(|d| d.code != "E0901"));
    kdsl_frontend::render_diagnostics("specialized.krn", SPECIALIZED, &diagnostics, false)
}

#[test]
fn wrong_definitions_render_expected_diagnostics() {
    assert!(kdsl_frontend::compile_to_ir(SPECIALIZED).is_ok());
    // Every mistake at once: unknown names, wrong types, out-of-range values, non-literals.
    let rendered = render_with_defines(&[
        ("N_FEATURES", "14.5"),
        ("SCALE", "true"),
        ("WINDOW", "300"),
        ("OFFSET", "-1"),
        ("BIAS", "2*3"),
        ("CLAMPED", "1"),
        ("WINDOWS", "3"),
        ("scaled", "2"),
    ]);
    insta::assert_snapshot!("defines_wrong", rendered);
    let twice = render_with_defines(&[("WINDOW", "8"), ("WINDOW", "16")]);
    insta::assert_snapshot!("defines_twice", twice);
}
