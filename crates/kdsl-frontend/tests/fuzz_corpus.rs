//! Replays the `frontend` fuzz target's committed corpus and crash regressions
//! (`crates/kdsl-fuzz/corpus/frontend`, `crates/kdsl-fuzz/regressions/frontend`) through the
//! same check the fuzz target runs, `kdsl_frontend::fuzzing::run_frontend_input`.

use std::path::{Path, PathBuf};

fn inputs(folder: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../kdsl-fuzz")
        .join(folder)
        .join("frontend");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| p.is_file() && p.file_name().is_some_and(|n| n != ".gitkeep"));
    files.sort();
    files
}

fn replay(files: &[PathBuf]) -> (usize, usize) {
    let mut compiled = 0;
    for path in files {
        let data = std::fs::read(path).unwrap();
        let outcome =
            std::panic::catch_unwind(|| kdsl_frontend::fuzzing::run_frontend_input(&data))
                .unwrap_or_else(|_| panic!("{} fails the fuzz check", path.display()));
        compiled += usize::from(outcome.compiled);
    }
    (files.len(), compiled)
}

#[test]
fn corpus_passes_the_fuzz_check() {
    let files = inputs("corpus");
    let (count, compiled) = replay(&files);
    assert!(count >= 20, "only {count} corpus files");
    // The corpus holds whole kernels as well as broken ones.
    assert!(
        compiled > 0 && compiled < count,
        "{compiled} of {count} compiled"
    );
}

#[test]
fn crash_regressions_pass_the_fuzz_check() {
    replay(&inputs("regressions"));
}
