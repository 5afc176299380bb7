//! Replays the `bundle` fuzz target's committed corpus and crash regressions
//! (`crates/kdsl-fuzz/corpus/bundle`, `crates/kdsl-fuzz/regressions/bundle`) through the same
//! check the fuzz target runs, `kdsl_bundle::fuzzing::run_bundle_input`.

use std::path::{Path, PathBuf};

fn inputs(folder: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../kdsl-fuzz")
        .join(folder)
        .join("bundle");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| p.is_file() && p.file_name().is_some_and(|n| n != ".gitkeep"));
    files.sort();
    files
}

#[derive(Default)]
struct Counts {
    files: usize,
    kbundles: usize,
    syclbins: usize,
    loaded: usize,
    images: usize,
}

fn replay(files: &[PathBuf]) -> Counts {
    let mut counts = Counts::default();
    for path in files {
        let data = std::fs::read(path).unwrap();
        let outcome = std::panic::catch_unwind(|| kdsl_bundle::fuzzing::run_bundle_input(&data))
            .unwrap_or_else(|_| panic!("{} fails the fuzz check", path.display()));
        counts.files += 1;
        counts.kbundles += usize::from(outcome.kbundle.is_some());
        counts.syclbins += usize::from(outcome.syclbin.is_some());
        if let Some(bundle) = &outcome.loaded {
            counts.loaded += 1;
            counts.images += bundle.images.len();
        }
    }
    counts
}

#[test]
fn corpus_passes_the_fuzz_check() {
    let counts = replay(&inputs("corpus"));
    assert!(counts.files >= 10, "only {} corpus files", counts.files);
    // The corpus holds real bundles of both formats, not only rejected bytes.
    assert!(counts.kbundles > 0, "no .kbundle in the corpus parses");
    assert!(counts.syclbins > 0, "no SYCLBIN in the corpus parses");
    assert!(counts.images > 0, "no image in the corpus");
    assert!(counts.loaded < counts.files, "every corpus file loads");
}

#[test]
fn crash_regressions_pass_the_fuzz_check() {
    replay(&inputs("regressions"));
}
