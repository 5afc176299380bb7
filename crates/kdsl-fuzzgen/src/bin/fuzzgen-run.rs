//! Runs a pack (see `kdsl_fuzzgen::pack`) on one device and compares with the interpreter's
//! expected outputs. Depends on kdsl-runtime only (no LLVM): build it with
//! `--no-default-features` for a machine with only a CUDA driver.
//!
//! `fuzzgen-run PACK_FOLDER [--device FILTER] [--report FILE]`; the device defaults to
//! `KDSL_DEVICE` or the runtime's default. Exit status 1 if any run disagreed or failed, 2 if
//! there is no device or no pack.

use kdsl_fuzzgen::compare::compare_outputs;
use kdsl_fuzzgen::device::{probed_sub_group_size, run_on_device};
use kdsl_fuzzgen::pack::{decode_case, read_manifest};
use kdsl_runtime::{Bundle, Device};
use std::path::PathBuf;
use std::time::Instant;

fn main() {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let folder = PathBuf::from(
        arguments
            .first()
            .expect("usage: fuzzgen-run PACK_FOLDER [--device FILTER] [--report FILE]"),
    );
    let value = |flag: &str| {
        arguments
            .iter()
            .position(|a| a == flag)
            .and_then(|i| arguments.get(i + 1))
            .cloned()
    };
    let device = match value("--device") {
        Some(filter) => Device::select(&filter),
        None => Device::default(),
    }
    .unwrap_or_else(|e| {
        eprintln!("fuzzgen-run: no device: {e}");
        std::process::exit(2)
    });
    let manifest = read_manifest(&folder).unwrap_or_else(|why| {
        eprintln!("fuzzgen-run: {why}");
        std::process::exit(2)
    });
    println!(
        "running {} cases ({}; expected outputs for sub-group size {}) on {}",
        manifest.cases.len(),
        manifest.images,
        manifest.sub_group_size,
        device.label()
    );
    let started = Instant::now();
    let (mut ran, mut agreed, mut undefined, mut other_sub_group_size) = (0u64, 0u64, 0u64, 0u64);
    let mut problems: Vec<String> = Vec::new();
    let mut disagreed = 0u64;
    for entry in &manifest.cases {
        let stem = &entry.stem;
        let case = match std::fs::read(folder.join(format!("{stem}.case")))
            .map_err(|e| e.to_string())
            .and_then(|bytes| decode_case(&bytes))
        {
            Ok(case) => case,
            Err(why) => {
                problems.push(format!("seed {}: reading the case: {why}", entry.seed));
                continue;
            }
        };
        let program = match Bundle::read(folder.join(format!("{stem}.kbundle")))
            .map_err(|e| e.to_string())
            .and_then(|bundle| device.load(&bundle).map_err(|e| e.to_string()))
        {
            Ok(program) => program,
            Err(why) => {
                problems.push(format!(
                    "seed {}: loading {stem}.kbundle: {why}",
                    entry.seed
                ));
                continue;
            }
        };
        for (run, expected) in &case.runs {
            let Ok(expected) = expected else {
                undefined += 1;
                continue;
            };
            ran += 1;
            let got = match run_on_device(&device, &program, run) {
                Ok(got) => got,
                Err(why) => {
                    problems.push(format!(
                        "seed {} {} ({stem}.krn): {why}",
                        entry.seed, run.kernel
                    ));
                    continue;
                }
            };
            if let Some(size) = probed_sub_group_size(run, &got) {
                if size != manifest.sub_group_size {
                    other_sub_group_size += 1;
                    continue;
                }
            }
            match compare_outputs(run, expected, &got) {
                Ok(()) => agreed += 1,
                Err(why) => {
                    disagreed += 1;
                    problems.push(format!(
                        "seed {} {} DISAGREES ({stem}.krn): {why}",
                        entry.seed, run.kernel
                    ));
                }
            }
        }
    }
    for problem in &problems {
        println!("{problem}");
    }
    let summary = format!(
        "{} cases, {ran} kernel runs launched: {agreed} agreed, {disagreed} disagreed, {} load or launch errors, {other_sub_group_size} not compared (another sub-group size), {undefined} skipped for undefined behaviour; {:.1} s on {}",
        manifest.cases.len(),
        problems.len() as u64 - disagreed,
        started.elapsed().as_secs_f64(),
        device.label()
    );
    println!("{summary}");
    if let Some(path) = value("--report") {
        let mut report = problems.join("\n");
        report.push_str(&format!("\n{summary}\n"));
        std::fs::write(&path, report).unwrap_or_else(|e| panic!("writing {path}: {e}"));
    }
    std::process::exit(if problems.is_empty() { 0 } else { 1 });
}
