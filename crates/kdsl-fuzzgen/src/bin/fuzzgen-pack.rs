//! Builds a pack (see `kdsl_fuzzgen::pack`): generated kernels compiled to PTX for one
//! processor, with their inputs and the interpreter's expected outputs, for `fuzzgen-run`
//! on a GPU machine.
//!
//! `fuzzgen-pack OUT_FOLDER [--count M] [--first-seed S] [--arch sm_90] [--opt-level 3]
//! [--sub-group-size 32] [--spirv]`
//!
//! `--spirv` packs SPIR-V instead of PTX, for trying a pack on a SYCL device.

use kdsl_fuzzgen::pack::{encode_case, write_manifest, Manifest, ManifestEntry};
use kdsl_fuzzgen::reference::{front_end, interpret, ReferenceFailure};
use kdsl_fuzzgen::{generate, GeneratorOptions, KernelRun, Outputs};
use std::path::PathBuf;
use std::time::Instant;

fn main() {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let folder = PathBuf::from(arguments.first().expect(
        "usage: fuzzgen-pack OUT_FOLDER [--count M] [--first-seed S] [--arch sm_90] [--opt-level 3] [--sub-group-size 32]",
    ));
    let value = |flag: &str| {
        arguments
            .iter()
            .position(|a| a == flag)
            .and_then(|i| arguments.get(i + 1))
            .cloned()
    };
    let number = |flag: &str, default: u64| {
        value(flag)
            .map(|v| {
                v.parse()
                    .unwrap_or_else(|_| panic!("{flag} needs a number"))
            })
            .unwrap_or(default)
    };
    let count = number("--count", 1000);
    let first_seed = number("--first-seed", 5_000_000);
    let opt_level = number("--opt-level", 3) as u8;
    let sub_group_size = number("--sub-group-size", 32) as u32;
    let arch = value("--arch").unwrap_or_else(|| "sm_90".into());
    let options = GeneratorOptions::default();
    std::fs::create_dir_all(&folder)
        .unwrap_or_else(|e| panic!("creating {}: {e}", folder.display()));
    let spirv = arguments.iter().any(|a| a == "--spirv");
    let target = if spirv {
        kdsl::TargetSpec::spirv()
    } else {
        kdsl::TargetSpec::ptx(Some(&arch))
    };
    let compile_options = kdsl::CompileOptions {
        opt_level,
        ..Default::default()
    };
    let started = Instant::now();
    let mut manifest = Manifest {
        sub_group_size,
        images: format!(
            "{} at -O{opt_level}",
            if spirv {
                "spirv".to_string()
            } else {
                format!("ptx:{arch}")
            }
        ),
        cases: Vec::new(),
    };
    let (mut runs, mut undefined, mut bytes) = (0u64, 0u64, 0u64);
    let mut problems = Vec::new();
    for seed in first_seed..first_seed + count {
        let generated = generate(seed, &options);
        let module = match front_end(&generated.source) {
            Ok(module) => module,
            Err(message) => {
                problems.push(format!("seed {seed}: the front end rejected it: {message}"));
                continue;
            }
        };
        let bundle = match kdsl::compile(
            "generated.krn",
            &generated.source,
            std::slice::from_ref(&target),
            &compile_options,
        ) {
            Ok(bundle) => bundle,
            Err(error) => {
                problems.push(format!(
                    "seed {seed}: {}",
                    error.render("generated.krn", &generated.source, false)
                ));
                continue;
            }
        };
        let mut case_runs: Vec<(KernelRun, Result<Outputs, String>)> = Vec::new();
        let mut broken = false;
        for run in &generated.runs {
            let expected = match interpret(&module, run, sub_group_size) {
                Ok(outputs) => Ok(outputs),
                Err(ReferenceFailure::Undefined(why)) => {
                    undefined += 1;
                    Err(why)
                }
                Err(ReferenceFailure::Error(why)) => {
                    problems.push(format!(
                        "seed {seed}: the interpreter failed on {}: {why}",
                        run.kernel
                    ));
                    broken = true;
                    break;
                }
            };
            case_runs.push((run.clone(), expected));
        }
        if broken {
            continue;
        }
        runs += case_runs.len() as u64;
        let stem = format!("{seed:07}");
        let case = encode_case(seed, &case_runs);
        let bundle_path = folder.join(format!("{stem}.kbundle"));
        bundle
            .write(&bundle_path)
            .unwrap_or_else(|e| panic!("writing {}: {e}", bundle_path.display()));
        std::fs::write(folder.join(format!("{stem}.case")), &case).expect("a writable pack folder");
        std::fs::write(folder.join(format!("{stem}.krn")), &generated.source)
            .expect("a writable pack folder");
        bytes += case.len() as u64
            + generated.source.len() as u64
            + std::fs::metadata(&bundle_path)
                .map(|m| m.len())
                .unwrap_or(0);
        manifest.cases.push(ManifestEntry { seed, stem });
    }
    write_manifest(&folder, &manifest).expect("a writable pack folder");
    for problem in &problems {
        eprintln!("{problem}");
    }
    println!(
        "wrote {}: {} modules ({runs} kernel runs, {undefined} with undefined behaviour, not to be launched), {:.1} MiB, in {:.1} s; {} seeds left out (see above)",
        folder.display(),
        manifest.cases.len(),
        bytes as f64 / (1024.0 * 1024.0),
        started.elapsed().as_secs_f64(),
        problems.len()
    );
}
