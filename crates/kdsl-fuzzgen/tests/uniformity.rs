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
    // included: about one module in 22 has them, so ask for half that (one in 20 was the
    // mean itself, which other seeds or any new construct moved below).
    assert!(
        tuples * 40 >= count as usize,
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
/// expressions, 2-D and 3-D buffers with `a[i, j]` and `a.shape(k)`, writable ones, record
/// buffers, launch-sized and 2-D local arrays, asynchronous copies, `bf16` values and buffers)
/// appear in a fair share of the modules, and
/// every module using them passes the front end.
#[test]
fn generated_modules_use_the_language_v2_constructs() {
    let count = environment_number("KDSL_FUZZGEN_COUNT", 400);
    let first_seed = environment_number("KDSL_FUZZGEN_SEED", 1);
    let options = GeneratorOptions::default();
    // Each with the share of modules (in percent) it must at least reach.
    let constructs = [
        (".rev()", 10),
        ("(if ", 10),
        ("[[", 10),
        (".shape(", 10),
        ("[[[", 2),
        ("global mut [[", 5),
        ("struct Rec", 10),
        (": local mut [", 2),
        (": [[", 2),
        ("async_copy(", 5),
        ("bf16", 50),
        ("[bf16]", 15),
    ];
    let mut seen = [0usize; 12];
    let mut rejected = Vec::new();
    for seed in first_seed..first_seed + count {
        let source = generate(seed, &options).source;
        let uses: Vec<bool> = constructs.iter().map(|c| source.contains(c.0)).collect();
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
    for ((construct, share), seen) in constructs.iter().zip(seen) {
        assert!(
            seen * 100 >= share * count as usize,
            "`{construct}` in only {seen} of {count} modules"
        );
    }
}

/// Modules with multi-dimensional outputs, records and launch-sized or 2-D local arrays run
/// on the reference interpreter (with the sub-group size 8): each gives outputs or reports
/// undefined behaviour only where the generator left an operation unguarded, and a record
/// output's padding bytes keep their contents.
#[test]
fn generated_records_outputs_and_local_arrays_run_on_the_interpreter() {
    use kdsl_fuzzgen::reference::{front_end, interpret, ReferenceFailure};
    use kdsl_fuzzgen::run::ArgumentValue;
    // The interpreter is slow in debug builds: fewer modules than the checks above.
    let count = environment_number("KDSL_FUZZGEN_COUNT", 40);
    let first_seed = environment_number("KDSL_FUZZGEN_SEED", 1);
    let options = GeneratorOptions::default();
    let (mut ran, mut records) = (0, 0);
    for seed in first_seed..first_seed + count {
        let generated = generate(seed, &options);
        let source = &generated.source;
        let new_constructs = [
            "global mut [[",
            "[[[",
            "struct Rec",
            ": local mut [",
            ": [[",
            "async_copy(",
        ];
        if !new_constructs.iter().any(|c| source.contains(c)) {
            continue;
        }
        let module = front_end(source).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        for run in &generated.runs {
            match interpret(&module, run, 8) {
                Ok(outputs) => {
                    ran += 1;
                    for (argument, output) in run.arguments.iter().zip(&outputs) {
                        let ArgumentValue::Buffer {
                            data,
                            record: Some(layout),
                            ..
                        } = &argument.value
                        else {
                            continue;
                        };
                        records += 1;
                        let output = output.as_ref().expect("a record buffer's contents");
                        for (position, (before, after)) in data.iter().zip(output).enumerate() {
                            if layout.is_padding((position % layout.size as usize) as u32) {
                                assert_eq!(before, after, "seed {seed}: padding byte {position}");
                            }
                        }
                    }
                }
                Err(ReferenceFailure::Undefined(why)) => assert!(
                    generated.may_be_undefined,
                    "seed {seed}: undefined behaviour in a guarded module: {why}\n{source}"
                ),
                Err(ReferenceFailure::Error(why)) => {
                    panic!("seed {seed}: the interpreter failed: {why}\n{source}")
                }
            }
        }
    }
    assert!(ran * 10 >= count as usize, "only {ran} runs");
    assert!(
        records * 20 >= count as usize,
        "only {records} record outputs"
    );
}

/// Tile modules (one seed in ten, `tiles.rs`): every shape, source and construct comes up,
/// and each module runs on the interpreter without undefined behaviour at the sub-group sizes
/// 4 and 32 (its offsets, strides and output regions fit any size), storing tiles to its
/// output.
#[test]
fn generated_tile_modules_cover_the_shapes_and_run_on_the_interpreter() {
    use kdsl_fuzzgen::reference::{front_end, interpret};
    use kdsl_fuzzgen::run::{values_of, ArgumentValue};
    let count = environment_number("KDSL_FUZZGEN_COUNT", 400);
    let first_seed = environment_number("KDSL_FUZZGEN_SEED", 1);
    let options = GeneratorOptions::default();
    let constructs = [
        "f16 m16n16k16",
        "bf16 m16n16k16",
        "tf32 m16n16k8",
        "i8 m16n16k16",
        "u8 m16n16k16",
        "matrix tiles: from a local array",
        "matrix tiles: from launch-sized local memory",
        "matrix tiles: in a loop",
        "matrix tiles: under a sub-group uniform branch",
        "matrix tiles: offset from a loop",
        "matrix tiles: offset from the sub-group",
        "matrix tiles: stride parameter",
        "matrix tiles: matrix_load_c",
        "matrix tiles: matrix_fill",
    ];
    let mut seen = vec![0usize; constructs.len()];
    let mut modules = 0;
    for seed in first_seed..first_seed + count {
        let generated = generate(seed, &options);
        if !generated.source.contains("matrix_mma(") {
            continue;
        }
        modules += 1;
        for (seen, construct) in seen.iter_mut().zip(constructs) {
            *seen += usize::from(
                generated
                    .coverage
                    .keys()
                    .any(|key| key == construct || key.ends_with(construct)),
            );
        }
        // The interpreter is slow in debug builds: run one module in four.
        if modules % 4 != 1 {
            continue;
        }
        let module = front_end(&generated.source)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{}", generated.source));
        let run = &generated.runs[0];
        let out = run
            .arguments
            .iter()
            .position(|a| a.name == "out")
            .expect("an output");
        let ArgumentValue::Buffer { data, element, .. } = &run.arguments[out].value else {
            panic!("seed {seed}: `out` is not a buffer");
        };
        for sub_group_size in [4, 32] {
            let outputs = interpret(&module, run, sub_group_size).unwrap_or_else(|e| {
                panic!(
                    "seed {seed}, sub-group size {sub_group_size}: {e:?}\n{}",
                    generated.source
                )
            });
            let after = outputs[out].as_ref().expect("the output's contents");
            let changed = values_of(data, *element)
                .iter()
                .zip(values_of(after, *element))
                .filter(|(before, after)| **before != *after)
                .count();
            assert!(
                changed >= 128,
                "seed {seed}, sub-group size {sub_group_size}: {changed} elements stored\n{}",
                generated.source
            );
        }
    }
    assert!(
        modules * 100 >= 9 * count as usize,
        "{modules} tile modules"
    );
    for (construct, seen) in constructs.iter().zip(seen) {
        assert!(seen > 0, "`{construct}` in none of {modules} tile modules");
    }
}

/// Matrix-group modules (one seed in ten, `groups.rs`): every input type and construct comes
/// up, and each module runs on the interpreter without undefined behaviour (its copies and
/// statements stay inside their local arrays).
#[test]
fn generated_matrix_group_modules_cover_the_inputs_and_run_on_the_interpreter() {
    use kdsl_fuzzgen::reference::{front_end, interpret};
    let count = environment_number("KDSL_FUZZGEN_COUNT", 400);
    let first_seed = environment_number("KDSL_FUZZGEN_SEED", 1);
    let options = GeneratorOptions::default();
    let constructs = [
        "matrix groups: F16",
        "matrix groups: Bf16",
        "matrix groups: Tf32",
        "matrix groups: launch-sized local memory",
        "matrix groups: asynchronous",
        "matrix groups: two statements over halves of the depth",
        "matrix groups: N = 256",
    ];
    let mut seen = vec![0usize; constructs.len()];
    let mut modules = 0;
    for seed in first_seed..first_seed + count {
        let generated = generate(seed, &options);
        if !generated.matrix_groups {
            continue;
        }
        modules += 1;
        for (seen, construct) in seen.iter_mut().zip(constructs) {
            *seen += usize::from(generated.coverage.contains_key(construct));
        }
        // The interpreter is slow in debug builds: run one module in four.
        if modules % 4 != 1 {
            continue;
        }
        let module = front_end(&generated.source)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{}", generated.source));
        let run = &generated.runs[0];
        interpret(&module, run, 32)
            .unwrap_or_else(|e| panic!("seed {seed}: {e:?}\n{}", generated.source));
    }
    assert!(
        modules * 100 >= 9 * count as usize,
        "{modules} matrix-group modules"
    );
    for (construct, seen) in constructs.iter().zip(seen) {
        assert!(
            seen > 0,
            "`{construct}` in none of {modules} matrix-group modules"
        );
    }
}
