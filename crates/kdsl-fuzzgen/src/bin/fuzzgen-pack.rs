//! Builds a pack (see `kdsl_fuzzgen::pack`): generated kernels compiled to PTX for one
//! processor, with their inputs and the interpreter's expected outputs, for `fuzzgen-run`
//! on a GPU machine.
//!
//! `fuzzgen-pack OUT_FOLDER [--count M] [--first-seed S] [--arch sm_90] [--opt-level 3]
//! [--sub-group-size 32] [--spirv] [--source FILE | --source-dir DIR]`
//!
//! `--spirv` packs SPIR-V instead of PTX, for trying a pack on a SYCL device.
//! `--source FILE` packs an edited source for the seed `--first-seed` (one module), and
//! `--source-dir DIR` every `SEED.krn` or `SEED-VARIANT.krn` in DIR (the seeds and counts are
//! then ignored), each with its seed's parameters and data, as `fuzzgen-replay --source`
//! does: for reducing a disagreement with many candidates in one GPU run.

use kdsl_fuzzgen::pack::{encode_case, write_manifest, Manifest, ManifestEntry};
use kdsl_fuzzgen::reference::{front_end, interpret, ReferenceFailure};
use kdsl_fuzzgen::{generate, GeneratorOptions, KernelRun, Outputs};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// One module to pack: the seed whose parameters and data it runs with, its source, and
/// the file stem of its case in the pack.
struct Module {
    seed: u64,
    source: Option<String>,
    stem: String,
}

/// Totals over the modules packed so far.
#[derive(Default)]
struct Totals {
    runs: u64,
    undefined: u64,
    bytes: u64,
    problems: Vec<String>,
}

/// The edited sources of `folder`: files `SEED.krn` or `SEED-VARIANT.krn`, by name.
fn sources_in(folder: &Path) -> Vec<Module> {
    let entries =
        std::fs::read_dir(folder).unwrap_or_else(|e| panic!("reading {}: {e}", folder.display()));
    let mut modules: Vec<Module> = entries
        .filter_map(|entry| {
            let path = entry.expect("a readable source folder").path();
            let stem = path.file_stem()?.to_str()?.to_string();
            if path.extension()? != "krn" {
                return None;
            }
            let seed = stem.split('-').next()?.parse().ok().unwrap_or_else(|| {
                panic!("{}: name it SEED.krn or SEED-VARIANT.krn", path.display())
            });
            let source = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
            Some(Module {
                seed,
                source: Some(source),
                stem,
            })
        })
        .collect();
    modules.sort_by(|a, b| a.stem.cmp(&b.stem));
    modules
}

fn main() {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let folder = PathBuf::from(arguments.first().expect(
        "usage: fuzzgen-pack OUT_FOLDER [--count M] [--first-seed S] [--arch sm_90] [--opt-level 3] [--sub-group-size 32] [--spirv] [--source FILE | --source-dir DIR]",
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
    let modules: Vec<Module> = match (value("--source"), value("--source-dir")) {
        (Some(_), Some(_)) => panic!("--source and --source-dir exclude each other"),
        (Some(path), None) => vec![Module {
            seed: first_seed,
            source: Some(
                std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path}: {e}")),
            ),
            stem: format!("{first_seed:07}"),
        }],
        (None, Some(directory)) => sources_in(Path::new(&directory)),
        (None, None) => (first_seed..first_seed + count)
            .map(|seed| Module {
                seed,
                source: None,
                stem: format!("{seed:07}"),
            })
            .collect(),
    };
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
    let mut totals = Totals::default();
    let options = GeneratorOptions::default();
    for module in modules {
        let packed = pack_module(
            &folder,
            module,
            &options,
            &target,
            &compile_options,
            sub_group_size,
            &mut totals,
        );
        manifest.cases.extend(packed);
    }
    write_manifest(&folder, &manifest).expect("a writable pack folder");
    for problem in &totals.problems {
        eprintln!("{problem}");
    }
    println!(
        "wrote {}: {} modules ({} kernel runs, {} with undefined behaviour, not to be launched), {:.1} MiB, in {:.1} s; {} modules left out (see above)",
        folder.display(),
        manifest.cases.len(),
        totals.runs,
        totals.undefined,
        totals.bytes as f64 / (1024.0 * 1024.0),
        started.elapsed().as_secs_f64(),
        totals.problems.len()
    );
}

/// Compiles one module, runs the interpreter on its seed's runs and writes its three files;
/// `None` (the reason in `totals.problems`) when the front end, the compiler or the
/// interpreter failed.
fn pack_module(
    folder: &Path,
    module: Module,
    options: &GeneratorOptions,
    target: &kdsl::TargetSpec,
    compile_options: &kdsl::CompileOptions,
    sub_group_size: u32,
    totals: &mut Totals,
) -> Option<ManifestEntry> {
    let Module { seed, source, stem } = module;
    let mut generated = generate(seed, options);
    if let Some(source) = source {
        generated.source = source;
    }
    let file_name = format!("{stem}.krn");
    let parsed = match front_end(&generated.source) {
        Ok(parsed) => parsed,
        Err(message) => {
            totals
                .problems
                .push(format!("{stem}: the front end rejected it: {message}"));
            return None;
        }
    };
    let bundle = match kdsl::compile(
        &file_name,
        &generated.source,
        std::slice::from_ref(target),
        compile_options,
    ) {
        Ok(bundle) => bundle,
        Err(error) => {
            totals.problems.push(format!(
                "{stem}: {}",
                error.render(&file_name, &generated.source, false)
            ));
            return None;
        }
    };
    let mut case_runs: Vec<(KernelRun, Result<Outputs, String>)> = Vec::new();
    for run in &generated.runs {
        let expected = match interpret(&parsed, run, sub_group_size) {
            Ok(outputs) => Ok(outputs),
            Err(ReferenceFailure::Undefined(why)) => {
                totals.undefined += 1;
                Err(why)
            }
            Err(ReferenceFailure::Error(why)) => {
                totals.problems.push(format!(
                    "{stem}: the interpreter failed on {}: {why}",
                    run.kernel
                ));
                return None;
            }
        };
        case_runs.push((run.clone(), expected));
    }
    totals.runs += case_runs.len() as u64;
    let case = encode_case(seed, &case_runs);
    let bundle_path = folder.join(format!("{stem}.kbundle"));
    bundle
        .write(&bundle_path)
        .unwrap_or_else(|e| panic!("writing {}: {e}", bundle_path.display()));
    std::fs::write(folder.join(format!("{stem}.case")), &case).expect("a writable pack folder");
    std::fs::write(folder.join(&file_name), &generated.source).expect("a writable pack folder");
    totals.bytes += case.len() as u64
        + generated.source.len() as u64
        + std::fs::metadata(&bundle_path)
            .map(|m| m.len())
            .unwrap_or(0);
    Some(ManifestEntry { seed, stem })
}
