//! Measures how long kdsl takes to compile each example kernel for each target, in process
//! (front end, LLVM O3, backend, and ld.lld for AMDGPU): the median of several compilations.
//!
//! `cargo run --release --example compile_times [-- RUNS]`

use kdsl::{CompileOptions, TargetSpec};
use std::time::Instant;

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(9);
    let targets = [
        TargetSpec::spirv(),
        TargetSpec::ptx(Some("sm_90")),
        TargetSpec::amdgpu(Some("gfx90a")),
    ];
    let folder = concat!(env!("CARGO_MANIFEST_DIR"), "/examples");
    let mut sources: Vec<_> = std::fs::read_dir(folder)
        .expect("the examples folder")
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|e| e == "krn"))
        .collect();
    sources.sort();
    println!("median of {runs} compilations, milliseconds");
    println!(
        "{:<12} {:>8} {:>8} {:>8} {:>8}",
        "example", "check", "spirv", "ptx", "amdgpu"
    );
    for path in sources {
        let source = std::fs::read_to_string(&path).expect("a readable example");
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let mut row = format!(
            "{name:<12} {:>8.2}",
            median_ms(runs, || {
                kdsl::check(&source).expect("the example checks");
            })
        );
        for target in &targets {
            let options = CompileOptions::default();
            row += &format!(
                " {:>8.2}",
                median_ms(runs, || {
                    kdsl::compile_for_target(&source, target, &options)
                        .expect("the example compiles");
                })
            );
        }
        println!("{row}");
    }
}

fn median_ms(runs: usize, mut work: impl FnMut()) -> f64 {
    work();
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let started = Instant::now();
            work();
            started.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}
