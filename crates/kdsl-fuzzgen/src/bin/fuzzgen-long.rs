//! The long run: generates kernels and compiles each for every target at -O0 and -O3 and
//! validates the images, until the compile time reaches a limit; optionally also compares
//! with the devices found (`--differential`). Prints progress and the totals.
//!
//! `fuzzgen-long [--minutes M] [--first-seed S] [--differential]`

use kdsl_fuzzgen::check::{check_generated, every_target, OpenDevice, Validators};
use kdsl_fuzzgen::{generate, GeneratorOptions};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

fn main() {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str, default: u64| -> u64 {
        arguments
            .iter()
            .position(|a| a == flag)
            .and_then(|i| arguments.get(i + 1))
            .map(|v| {
                v.parse()
                    .unwrap_or_else(|_| panic!("{flag} needs a number"))
            })
            .unwrap_or(default)
    };
    let minutes = value("--minutes", 35);
    let first_seed = value("--first-seed", 1_000_000);
    let differential = arguments.iter().any(|a| a == "--differential");
    let validators = Validators::find().unwrap_or_else(|why| panic!("{why}"));
    let devices: Vec<OpenDevice> = if differential {
        kdsl_fuzzgen::device::devices_under_test()
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
            .collect()
    } else {
        Vec::new()
    };
    let targets = every_target();
    let options = GeneratorOptions::default();
    let limit = Duration::from_secs(minutes * 60);
    let started = Instant::now();
    let (mut compile_time, mut validate_time, mut differential_time) =
        (Duration::ZERO, Duration::ZERO, Duration::ZERO);
    let (mut modules, mut runs, mut compared, mut undefined) = (0u64, 0u64, 0u64, 0u64);
    let mut failing = Vec::new();
    let mut coverage: BTreeMap<String, u64> = BTreeMap::new();
    let failure_folder = std::path::Path::new("target/fuzzgen-failures");
    let mut seed = first_seed;
    while compile_time < limit {
        let generated = generate(seed, &options);
        let outcome = check_generated(&generated, &targets, &validators, &devices);
        modules += 1;
        runs += generated.runs.len() as u64;
        compared += outcome.compared;
        undefined += outcome.undefined;
        compile_time += outcome.compile_time;
        validate_time += outcome.validate_time;
        differential_time += outcome.differential_time;
        for (construct, count) in &generated.coverage {
            *coverage.entry(construct.clone()).or_insert(0) += count;
        }
        if !outcome.failures.is_empty() {
            let _ = std::fs::create_dir_all(failure_folder);
            let _ = std::fs::write(
                failure_folder.join(format!("seed-{seed}.krn")),
                &generated.source,
            );
            let report: Vec<String> = outcome
                .failures
                .iter()
                .map(|f| format!("{:?} {}: {}", f.stage, f.kernel, f.message))
                .collect();
            let _ = std::fs::write(
                failure_folder.join(format!("seed-{seed}.txt")),
                report.join("\n"),
            );
            println!(
                "seed {seed} FAILED: {}",
                report.join(" | ").chars().take(600).collect::<String>()
            );
            failing.push(seed);
        }
        if modules % 100 == 0 {
            println!(
                "{modules} modules, compile {:.0} s, validate {:.0} s, differential {:.0} s, wall {:.0} s, {} failing",
                compile_time.as_secs_f64(),
                validate_time.as_secs_f64(),
                differential_time.as_secs_f64(),
                started.elapsed().as_secs_f64(),
                failing.len()
            );
        }
        seed += 1;
    }
    println!(
        "done: seeds {first_seed}..{seed}: {modules} modules ({runs} kernels), {} compiles (2 optimization levels x {} targets each), compile time {:.1} min, validation {:.1} min, differential {:.1} min ({compared} compared, {undefined} skipped for undefined behaviour), wall {:.1} min, {} failing seeds: {failing:?}",
        modules * 2,
        targets.len(),
        compile_time.as_secs_f64() / 60.0,
        validate_time.as_secs_f64() / 60.0,
        differential_time.as_secs_f64() / 60.0,
        started.elapsed().as_secs_f64() / 60.0,
        failing.len()
    );
    println!("coverage (constructs generated):");
    for (construct, count) in coverage {
        println!("  {count:9}  {construct}");
    }
}
