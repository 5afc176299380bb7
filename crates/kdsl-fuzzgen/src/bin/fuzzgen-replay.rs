//! Re-checks one generated module, as the bounded test does, and says what failed: for
//! reproducing a failure and for reducing it by hand or with a delta-debugging script.
//!
//! `fuzzgen-replay SEED [--source EDITED.krn] [--print-source] [--print-runs] [--targets spirv|all]
//! [--opt-levels 0,3] [--with-known-bugs]`
//!
//! `--print-runs` prints each run's launch and arguments (scalars' values, buffers' lengths),
//! what a hand-written reproducer needs.
//!
//! With `--source`, the edited source is checked with the seed's parameters and data (keep
//! the kernel's signature). Exit status 0 when everything agrees, 1 when something failed.

use kdsl_fuzzgen::check::{check_generated, every_target, OpenDevice, Validators, OPT_LEVELS};
use kdsl_fuzzgen::run::{ArgumentValue, KernelRun};
use kdsl_fuzzgen::{generate, GeneratorOptions};

const USAGE: &str = "usage: fuzzgen-replay SEED [--source FILE] [--print-source] [--print-runs] \
[--targets spirv|all] [--opt-levels 0,3] [--with-known-bugs]";

fn main() {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let Some(seed) = arguments.first().and_then(|s| s.parse::<u64>().ok()) else {
        eprintln!("{USAGE}");
        std::process::exit(2);
    };
    let flag_value = |flag: &str| {
        arguments
            .iter()
            .position(|a| a == flag)
            .and_then(|i| arguments.get(i + 1))
            .cloned()
    };
    let options = if arguments.iter().any(|a| a == "--with-known-bugs") {
        GeneratorOptions::with_known_bugs()
    } else {
        GeneratorOptions::default()
    };
    let mut generated = generate(seed, &options);
    if let Some(path) = flag_value("--source") {
        generated.source =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path}: {e}"));
    }
    if arguments.iter().any(|a| a == "--print-source") {
        println!("{}", generated.source);
        return;
    }
    if arguments.iter().any(|a| a == "--print-runs") {
        for run in &generated.runs {
            print_run(run);
        }
        return;
    }
    let targets = match flag_value("--targets").as_deref() {
        Some("spirv") => vec![kdsl::TargetSpec::spirv()],
        _ => every_target(),
    };
    let validators = Validators::find().unwrap_or_else(|why| panic!("{why}"));
    let devices: Vec<OpenDevice> = kdsl_fuzzgen::device::devices_under_test()
        .unwrap_or_default()
        .iter()
        .filter_map(|info| {
            kdsl::runtime::Device::open(info)
                .ok()
                .map(|device| OpenDevice {
                    name: info.id(),
                    device,
                })
        })
        .collect();
    let opt_levels: Vec<u8> = match flag_value("--opt-levels") {
        Some(list) => list
            .split(',')
            .map(|l| l.parse().expect("--opt-levels 0,3"))
            .collect(),
        None => OPT_LEVELS.to_vec(),
    };
    let outcome = check_generated(
        &generated,
        &targets,
        &opt_levels,
        &opt_levels,
        &validators,
        &devices,
    );
    println!(
        "seed {seed}: {} runs compared, {} skipped for undefined behaviour, {} failures",
        outcome.compared,
        outcome.undefined,
        outcome.failures.len()
    );
    for failure in &outcome.failures {
        println!(
            "{:?} {}: {}",
            failure.stage, failure.kernel, failure.message
        );
    }
    std::process::exit(if outcome.failures.is_empty() { 0 } else { 1 });
}

fn print_run(run: &KernelRun) {
    println!(
        "{}: global {:?}, local {:?}",
        run.kernel,
        run.global_sizes(),
        run.local_sizes()
    );
    for argument in &run.arguments {
        let what = match &argument.value {
            ArgumentValue::Scalar { ty, bits } => format!("{ty:?} bits {bits:#x}"),
            ArgumentValue::Buffer {
                element,
                writable,
                length,
                ..
            } => format!(
                "{} buffer of {length} {element:?}",
                if *writable { "writable" } else { "read-only" }
            ),
            ArgumentValue::Local { element, length } => {
                format!("local array of {length} {element:?} per work-group")
            }
        };
        println!("  {}: {what}", argument.name);
    }
}
