//! The bounded fuzzgen run: generated kernels must pass the front end, compile for every
//! target at -O0 and -O3 and validate (`spirv-val`, `ptxas`, `llvm-readobj`), and, compiled at
//! -O3, give the interpreter's outputs on every available device (those the interpreter runs
//! without undefined behaviour).
//!
//! `KDSL_FUZZGEN_COUNT` kernels from seed `KDSL_FUZZGEN_SEED` (default 1): by default 50,
//! about a minute on a 2-core machine, and 200 with `KDSL_LONG_TESTS=1` (GPU and nightly runs;
//! longer runs are `fuzzgen-long`, docs/fuzzgen.md). A
//! failing kernel's source and messages go to `target/fuzzgen-failures/` (and the module being
//! checked is `in-progress.krn` there, in case the compiler crashes the process). With no
//! device the test fails unless `KDSL_ALLOW_NO_DEVICE=1`, as the differential tests do.

use kdsl_fuzzgen::check::{check_generated, every_target, OpenDevice, Validators, OPT_LEVELS};
use kdsl_fuzzgen::device::devices_under_test;
use kdsl_fuzzgen::{generate, GeneratorOptions};
use std::time::Instant;

/// The bundles run on devices here: -O3 (the -O0 bundles are compiled and validated; the long
/// run, `fuzzgen-long --differential`, runs both), to keep the test's time modest.
const DEVICE_OPT_LEVELS: [u8; 1] = [3];

fn environment_number(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(text) if !text.trim().is_empty() => text
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={text} is not a number")),
        _ => default,
    }
}

fn open_devices() -> Vec<OpenDevice> {
    match devices_under_test() {
        Ok(infos) => infos
            .iter()
            .map(|info| OpenDevice {
                name: info.id(),
                device: kdsl::runtime::Device::open(info)
                    .unwrap_or_else(|e| panic!("opening {}: {e}", info.id())),
            })
            .collect(),
        Err(why) if kdsl_testkit::devices::no_device_allowed() => {
            eprintln!("KDSL_ALLOW_NO_DEVICE=1, so comparing with no device: {why}");
            Vec::new()
        }
        Err(why) => panic!("{why}\n(set KDSL_ALLOW_NO_DEVICE=1 to allow this)"),
    }
}

#[test]
fn generated_kernels_compile_validate_and_agree_with_the_interpreter() {
    let long = std::env::var("KDSL_LONG_TESTS").as_deref() == Ok("1");
    let count = environment_number("KDSL_FUZZGEN_COUNT", if long { 200 } else { 50 });
    let first_seed = environment_number("KDSL_FUZZGEN_SEED", 1);
    let validators = Validators::find().unwrap_or_else(|why| panic!("{why}"));
    let devices = open_devices();
    let targets = every_target();
    let options = GeneratorOptions::default();
    let failure_folder = kdsl_testkit::files::workspace_root().join("target/fuzzgen-failures");
    let started = Instant::now();
    let (mut compared, mut undefined, mut runs) = (0, 0, 0);
    let mut times = [std::time::Duration::ZERO; 3];
    let mut failures = Vec::new();
    std::fs::create_dir_all(&failure_folder).expect("a writable target folder");
    // The module being checked, for reproducing a crash of the compiler (which ends the
    // process before anything else is written).
    let in_progress = failure_folder.join("in-progress.krn");
    for seed in first_seed..first_seed + count {
        let generated = generate(seed, &options);
        std::fs::write(
            &in_progress,
            format!("// seed {seed}\n{}", generated.source),
        )
        .expect("writable failure folder");
        runs += generated.runs.len();
        let outcome = check_generated(
            &generated,
            &targets,
            &OPT_LEVELS,
            &DEVICE_OPT_LEVELS,
            &validators,
            &devices,
        );
        compared += outcome.compared;
        undefined += outcome.undefined;
        times[0] += outcome.compile_time;
        times[1] += outcome.validate_time;
        times[2] += outcome.differential_time;
        if !outcome.failures.is_empty() {
            let source = failure_folder.join(format!("seed-{seed}.krn"));
            std::fs::write(&source, &generated.source).expect("writable failure folder");
            let mut report = String::new();
            for failure in &outcome.failures {
                report += &format!(
                    "{:?} {}: {}\n",
                    failure.stage, failure.kernel, failure.message
                );
            }
            std::fs::write(failure_folder.join(format!("seed-{seed}.txt")), &report)
                .expect("writable failure folder");
            eprintln!("seed {seed} FAILED ({}):\n{report}", source.display());
            failures.push(seed);
        }
    }
    let _ = std::fs::remove_file(&in_progress);
    eprintln!(
        "fuzzgen: {count} modules from seed {first_seed} ({runs} kernel runs) in {:.1} s (compile {:.1} s, validate {:.1} s, interpreter and devices {:.1} s): {compared} compared on {} device(s), {undefined} skipped for undefined behaviour, {} failing",
        started.elapsed().as_secs_f64(),
        times[0].as_secs_f64(),
        times[1].as_secs_f64(),
        times[2].as_secs_f64(),
        devices.len(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "failing seeds (rerun one with KDSL_FUZZGEN_SEED=<seed> KDSL_FUZZGEN_COUNT=1; sources in {}): {failures:?}",
        failure_folder.display()
    );
}
