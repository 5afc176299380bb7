//! The long run: generates kernels and compiles each for every target at -O0 and -O3 and
//! validates the images, until the compile time reaches a limit; with `--differential` it
//! also compares every kernel with the devices found. Failures go to
//! `target/fuzzgen-failures/` (seed, source, messages).
//!
//! `fuzzgen-long [--minutes M] [--first-seed S] [--differential] [--with-known-bugs]`
//!
//! The work runs in a child process (this binary with `--worker`), so that a compiler crash
//! (LLVM aborting the process) is recorded as a failure of that seed and the run goes on
//! from the next seed. A worker that spends more than [`MODULE_TIME_LIMIT`] on one module
//! (a hung device compiler) is killed, and that seed is recorded the same way.

use kdsl_fuzzgen::check::{check_generated, every_target, OpenDevice, Validators, OPT_LEVELS};
use kdsl_fuzzgen::{generate, GeneratorOptions};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const FAILURE_FOLDER: &str = "target/fuzzgen-failures";

/// The longest one module may take in the worker (a module usually takes about a second).
const MODULE_TIME_LIMIT: Duration = Duration::from_secs(300);

/// Kills process `pid` unless `progress` (seconds since `started`, at the worker's last
/// line) moves within [`MODULE_TIME_LIMIT`]; ends when `done` is set.
fn watch_worker(
    pid: u32,
    started: Instant,
    progress: std::sync::Arc<std::sync::atomic::AtomicU64>,
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
) {
    use std::sync::atomic::Ordering;
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_secs(1));
        let last = Duration::from_secs(progress.load(Ordering::Relaxed));
        if started.elapsed().saturating_sub(last) > MODULE_TIME_LIMIT {
            eprintln!("the worker made no progress for {MODULE_TIME_LIMIT:?}: killing it");
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            return;
        }
    }
}

fn flag_number(arguments: &[String], flag: &str, default: u64) -> u64 {
    arguments
        .iter()
        .position(|a| a == flag)
        .and_then(|i| arguments.get(i + 1))
        .map(|v| {
            v.parse()
                .unwrap_or_else(|_| panic!("{flag} needs a number"))
        })
        .unwrap_or(default)
}

fn options(arguments: &[String]) -> GeneratorOptions {
    if arguments.iter().any(|a| a == "--with-known-bugs") {
        GeneratorOptions::with_known_bugs()
    } else {
        GeneratorOptions::default()
    }
}

fn record_failure(seed: u64, source: &str, report: &str) {
    let folder = Path::new(FAILURE_FOLDER);
    let _ = std::fs::create_dir_all(folder);
    let _ = std::fs::write(folder.join(format!("seed-{seed}.krn")), source);
    let _ = std::fs::write(folder.join(format!("seed-{seed}.txt")), report);
}

/// Checks modules from `first_seed` on, one line per module on standard output:
/// `module SEED COMPILE_US VALIDATE_US DIFFERENTIAL_US RUNS COMPARED UNDEFINED FAILED`.
fn worker(arguments: &[String]) {
    let first_seed = flag_number(arguments, "--first-seed", 1_000_000);
    let options = options(arguments);
    let validators = Validators::find().unwrap_or_else(|why| panic!("{why}"));
    let devices: Vec<OpenDevice> = if arguments.iter().any(|a| a == "--differential") {
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
    let mut stdout = std::io::stdout();
    for seed in first_seed.. {
        let generated = generate(seed, &options);
        // Announced first, so that the supervisor knows which seed a crash belongs to.
        let _ = writeln!(stdout, "start {seed}");
        let _ = stdout.flush();
        let outcome = check_generated(
            &generated,
            &targets,
            &OPT_LEVELS,
            &OPT_LEVELS,
            &validators,
            &devices,
        );
        if !outcome.failures.is_empty() {
            let report: Vec<String> = outcome
                .failures
                .iter()
                .map(|f| format!("{:?} {}: {}", f.stage, f.kernel, f.message))
                .collect();
            record_failure(seed, &generated.source, &report.join("\n"));
        }
        let _ = writeln!(
            stdout,
            "module {seed} {} {} {} {} {} {} {}",
            outcome.compile_time.as_micros(),
            outcome.validate_time.as_micros(),
            outcome.differential_time.as_micros(),
            generated.runs.len(),
            outcome.compared,
            outcome.undefined,
            u8::from(!outcome.failures.is_empty())
        );
        let _ = stdout.flush();
    }
}

#[derive(Default)]
struct Totals {
    modules: u64,
    runs: u64,
    compared: u64,
    undefined: u64,
    compile: Duration,
    validate: Duration,
    differential: Duration,
    failing: Vec<u64>,
    crashes: Vec<u64>,
    coverage: BTreeMap<String, u64>,
}

fn main() {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    if arguments.iter().any(|a| a == "--worker") {
        worker(&arguments);
        return;
    }
    let minutes = flag_number(&arguments, "--minutes", 35);
    let first_seed = flag_number(&arguments, "--first-seed", 1_000_000);
    let options = options(&arguments);
    let limit = Duration::from_secs(minutes * 60);
    let started = Instant::now();
    let mut totals = Totals::default();
    let mut next_seed = first_seed;
    let _ = std::fs::create_dir_all(FAILURE_FOLDER);
    let worker_log = PathBuf::from(FAILURE_FOLDER).join("long-run-worker.log");
    let passed: Vec<String> = arguments
        .iter()
        .filter(|a| *a == "--differential" || *a == "--with-known-bugs")
        .cloned()
        .collect();
    'restart: while totals.compile < limit {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&worker_log)
            .expect("a writable worker log");
        let mut child = Command::new(std::env::current_exe().expect("this binary"))
            .arg("--worker")
            .arg("--first-seed")
            .arg(next_seed.to_string())
            .args(&passed)
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .expect("starting the worker");
        let reader = BufReader::new(child.stdout.take().expect("the worker's output"));
        let progress = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(
            started.elapsed().as_secs(),
        ));
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let watchdog = {
            let (pid, progress, done) = (child.id(), progress.clone(), done.clone());
            std::thread::spawn(move || watch_worker(pid, started, progress, done))
        };
        let mut in_progress = None;
        for line in reader.lines() {
            let Ok(line) = line else { break };
            progress.store(
                started.elapsed().as_secs(),
                std::sync::atomic::Ordering::Relaxed,
            );
            let fields: Vec<&str> = line.split_whitespace().collect();
            match fields.as_slice() {
                ["start", seed] => in_progress = seed.parse::<u64>().ok(),
                ["module", seed, compile, validate, differential, runs, compared, undefined, failed] =>
                {
                    let number = |text: &str| text.parse::<u64>().unwrap_or(0);
                    let seed = number(seed);
                    in_progress = None;
                    totals.modules += 1;
                    totals.compile += Duration::from_micros(number(compile));
                    totals.validate += Duration::from_micros(number(validate));
                    totals.differential += Duration::from_micros(number(differential));
                    totals.runs += number(runs);
                    totals.compared += number(compared);
                    totals.undefined += number(undefined);
                    if number(failed) == 1 {
                        totals.failing.push(seed);
                        let report = std::fs::read_to_string(
                            Path::new(FAILURE_FOLDER).join(format!("seed-{seed}.txt")),
                        )
                        .unwrap_or_default();
                        println!(
                            "seed {seed} FAILED: {}",
                            report.chars().take(500).collect::<String>()
                        );
                    }
                    for (construct, count) in generate(seed, &options).coverage {
                        *totals.coverage.entry(construct).or_insert(0) += count;
                    }
                    next_seed = seed + 1;
                    if totals.modules % 100 == 0 {
                        println!(
                            "{} modules, compile {:.0} s, validate {:.0} s, differential {:.0} s, wall {:.0} s, {} failing, {} crashes",
                            totals.modules,
                            totals.compile.as_secs_f64(),
                            totals.validate.as_secs_f64(),
                            totals.differential.as_secs_f64(),
                            started.elapsed().as_secs_f64(),
                            totals.failing.len(),
                            totals.crashes.len()
                        );
                    }
                    if totals.compile >= limit {
                        let _ = child.kill();
                        let _ = child.wait();
                        done.store(true, std::sync::atomic::Ordering::Relaxed);
                        break 'restart;
                    }
                }
                _ => {}
            }
        }
        let status = child.wait().expect("the worker's status");
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        let _ = watchdog.join();
        let Some(seed) = in_progress else {
            panic!(
                "the worker stopped ({status}) between modules; see {}",
                worker_log.display()
            );
        };
        // The worker died while checking `seed`: a crash of the compiler.
        let log_text = std::fs::read_to_string(&worker_log).unwrap_or_default();
        let tail: Vec<&str> = log_text.lines().rev().take(15).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        let report = format!("Crash: the process died ({status}) while compiling or checking this module; the end of its standard error:\n{}", tail.join("\n"));
        record_failure(seed, &generate(seed, &options).source, &report);
        println!(
            "seed {seed} CRASHED ({status}): {}",
            tail.iter()
                .find(|l| l.contains("ERROR") || l.contains("panicked"))
                .unwrap_or(&"")
        );
        totals.modules += 1;
        totals.crashes.push(seed);
        next_seed = seed + 1;
    }
    println!(
        "done: seeds {first_seed}..{next_seed}: {} modules ({} kernels), {} compiles of {} targets each, compile time {:.1} min, validation {:.1} min, differential {:.1} min ({} compared, {} skipped for undefined behaviour), wall {:.1} min, {} failing seeds {:?}, {} crashes {:?}",
        totals.modules,
        totals.runs,
        totals.modules * 2,
        every_target().len(),
        totals.compile.as_secs_f64() / 60.0,
        totals.validate.as_secs_f64() / 60.0,
        totals.differential.as_secs_f64() / 60.0,
        totals.compared,
        totals.undefined,
        started.elapsed().as_secs_f64() / 60.0,
        totals.failing.len(),
        totals.failing,
        totals.crashes.len(),
        totals.crashes
    );
    println!("coverage (constructs generated):");
    for (construct, count) in totals.coverage {
        println!("  {count:9}  {construct}");
    }
}
