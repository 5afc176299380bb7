//! The generator puts barriers and sub-group operations only where the whole work-group or
//! sub-group gets, and the front end's uniformity analysis (E0518, E0519) must agree: every
//! generated module compiles. Needs only the front end (no LLVM):
//! `cargo test -p kdsl-fuzzgen --no-default-features --features interpreter --test uniformity`.

use kdsl_fuzzgen::{generate, GeneratorOptions};

fn environment_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(default)
}

#[test]
fn generated_barriers_and_sub_group_operations_are_uniform_enough() {
    let count = environment_number("KDSL_FUZZGEN_COUNT", 400);
    let first_seed = environment_number("KDSL_FUZZGEN_SEED", 1);
    let options = GeneratorOptions::default();
    let (mut barriers, mut sub_groups, mut tuples) = (0, 0, 0);
    let mut failures = Vec::new();
    for seed in first_seed..first_seed + count {
        let generated = generate(seed, &options);
        barriers += usize::from(generated.source.contains("barrier()"));
        sub_groups += usize::from(
            generated.source.contains("sub_group_reduce")
                || generated.source.contains("sub_group_shuffle"),
        );
        tuples += usize::from(generated.source.contains("_tag) = "));
        let Err(diagnostics) = kdsl_frontend::compile_to_ir(&generated.source) else {
            continue;
        };
        // Other rejections are the bounded run's business (tests/fuzzgen.rs); the analysis
        // runs only on modules the checker accepts.
        if diagnostics
            .iter()
            .any(|d| d.code == "E0518" || d.code == "E0519")
        {
            let name = format!("seed-{seed}.krn");
            // Kept for reading, with the other failures of the generator.
            let folder = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../target/fuzzgen-failures/uniformity");
            if std::fs::create_dir_all(&folder).is_ok() {
                let _ = std::fs::write(folder.join(&name), &generated.source);
            }
            failures.push(kdsl_frontend::render_diagnostics(
                &name,
                &generated.source,
                &diagnostics,
                false,
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {count} generated modules rejected as divergent:\n{}",
        failures.len(),
        failures
            .iter()
            .take(5)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    // The run must have exercised what it checks, tuple results (bound before their use)
    // included.
    assert!(
        tuples * 20 >= count as usize,
        "{tuples} modules with tuple results"
    );
    assert!(
        barriers * 10 >= count as usize,
        "{barriers} modules with barriers"
    );
    assert!(
        sub_groups * 10 >= count as usize,
        "{sub_groups} with sub-group operations"
    );
}

/// The constructs of language v2 that the generator makes (descending ranges, `if`
/// expressions, 2-D buffers with `a[i, j]` and `a.shape(k)`) appear in a fair share of the
/// modules, and every module using them passes the front end.
#[test]
fn generated_modules_use_descending_ranges_if_expressions_and_2d_buffers() {
    let count = environment_number("KDSL_FUZZGEN_COUNT", 400);
    let first_seed = environment_number("KDSL_FUZZGEN_SEED", 1);
    let options = GeneratorOptions::default();
    let constructs = [".rev()", "(if ", "[[", ".shape("];
    let mut seen = [0usize; 4];
    let mut rejected = Vec::new();
    for seed in first_seed..first_seed + count {
        let source = generate(seed, &options).source;
        let uses: Vec<bool> = constructs.iter().map(|c| source.contains(c)).collect();
        for (seen, used) in seen.iter_mut().zip(&uses) {
            *seen += usize::from(*used);
        }
        if uses.iter().any(|&used| used) {
            if let Err(diagnostics) = kdsl_frontend::compile_to_ir(&source) {
                let name = format!("seed-{seed}.krn");
                rejected.push(kdsl_frontend::render_diagnostics(
                    &name,
                    &source,
                    &diagnostics,
                    false,
                ));
            }
        }
    }
    assert!(
        rejected.is_empty(),
        "{} generated modules rejected:\n{}",
        rejected.len(),
        rejected
            .iter()
            .take(3)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    for (construct, seen) in constructs.iter().zip(seen) {
        assert!(
            seen * 10 >= count as usize,
            "`{construct}` in only {seen} of {count} modules"
        );
    }
}
