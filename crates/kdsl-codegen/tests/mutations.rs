//! Deterministic mutations of every example and test kernel (cut after a statement with the
//! brackets closed, a line deleted, two neighbouring tokens swapped, a bracket deleted) through
//! the whole compile: the front end must answer with a module or diagnostics, and every module
//! it accepts must compile for every target or be refused with a typed error, never panic.
//! (`kdsl-frontend`'s `no_panic.rs` mutates at random through the front end alone; libFuzzer
//! covers the front end further, docs/fuzzing.md.)

use crate::common::GENERATED_GEMMS;
use kdsl_codegen::{compile, Options, TargetSpec};
use std::collections::BTreeSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

/// Mutations tried per file and accepted mutants compiled per file, each spread evenly over
/// all of them: code generation costs far more than the front end, and the test must stay
/// within a few seconds. A generated GEMM (`common::GENERATED_GEMMS`), one mutant of which
/// takes as long to compile as a small file's two, has one mutant compiled; `matrix_ring.krn`,
/// a GEMM of the same generator, has two. The long run (`KDSL_LONG_TESTS=1`) tries every
/// mutation.
fn budget(stem: &str) -> (usize, usize) {
    let long = std::env::var(kdsl_bundle::environment::LONG_TESTS).as_deref() == Ok("1");
    match (long, GENERATED_GEMMS.contains(&stem)) {
        (true, _) => (usize::MAX, 40),
        (false, false) => (40, 2),
        (false, true) => (40, 1),
    }
}

/// The source cut after byte `end`, with the brackets still open closed in order.
fn truncated(source: &str, end: usize) -> String {
    let mut text = source[..end].to_string();
    let mut open = Vec::new();
    for byte in text.bytes() {
        match byte {
            b'(' => open.push(b')'),
            b'[' => open.push(b']'),
            b'{' => open.push(b'}'),
            b')' | b']' | b'}' => {
                open.pop();
            }
            _ => {}
        }
    }
    text.extend(open.iter().rev().map(|&closer| char::from(closer)));
    text
}

/// Byte ranges of the tokens: identifier or number runs and single punctuation characters.
fn tokens(source: &str) -> Vec<(usize, usize)> {
    let bytes = source.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut ranges = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let start = at;
        if word(bytes[at]) {
            while at < bytes.len() && word(bytes[at]) {
                at += 1;
            }
        } else {
            at += source[at..].chars().next().map_or(1, char::len_utf8);
        }
        if !bytes[start].is_ascii_whitespace() {
            ranges.push((start, at));
        }
    }
    ranges
}

/// Every mutation of one source, as (description, text).
fn mutations(source: &str) -> Vec<(String, String)> {
    let mut all = Vec::new();
    for (at, byte) in source.bytes().enumerate() {
        if byte == b';' || byte == b'}' {
            all.push((format!("cut after byte {at}"), truncated(source, at + 1)));
        }
    }
    let lines: Vec<&str> = source.lines().collect();
    for (index, line) in lines.iter().enumerate() {
        if !line.trim().is_empty() && !line.trim_start().starts_with("//") {
            let mut rest = lines.clone();
            rest.remove(index);
            all.push((format!("line {} deleted", index + 1), rest.join("\n")));
        }
    }
    let tokens = tokens(source);
    for pair in tokens.windows(2) {
        let ((a, a_end), (b, b_end)) = (pair[0], pair[1]);
        let text = format!(
            "{}{}{}{}{}",
            &source[..a],
            &source[b..b_end],
            &source[a_end..b],
            &source[a..a_end],
            &source[b_end..]
        );
        all.push((format!("tokens at bytes {a} and {b} swapped"), text));
    }
    for (at, byte) in source.bytes().enumerate() {
        if b"()[]{}".contains(&byte) {
            let text = format!("{}{}", &source[..at], &source[at + 1..]);
            all.push((format!("bracket at byte {at} deleted"), text));
        }
    }
    all
}

/// `count` items spread evenly over `items`, first and last included (one: the middle one).
fn spread<T>(items: Vec<T>, count: usize) -> Vec<T> {
    let total = items.len();
    if total <= count {
        return items;
    }
    let picked: BTreeSet<usize> = match count {
        1 => BTreeSet::from([total / 2]),
        _ => (0..count).map(|i| i * (total - 1) / (count - 1)).collect(),
    };
    items
        .into_iter()
        .enumerate()
        .filter_map(|(index, item)| picked.contains(&index).then_some(item))
        .collect()
}

#[test]
fn mutated_kernels_never_panic_in_any_phase() {
    let sources = kdsl_testkit::files::kernel_sources();
    assert!(sources.len() >= 14, "expected the kernels");
    let targets = [
        TargetSpec::spirv(),
        TargetSpec::ptx(None),
        TargetSpec::amdgpu(None),
    ];
    let (mut tried, mut accepted, mut compiled, mut refused) = (0, 0, 0, 0);
    let (mut front_end, mut code_generation) = (Duration::ZERO, Duration::ZERO);
    for (stem, source) in &sources {
        let (per_file, compiled_per_file) = budget(stem);
        let start = Instant::now();
        let mut modules = Vec::new();
        for (what, text) in spread(mutations(source), per_file) {
            tried += 1;
            let result = catch_unwind(|| kdsl_frontend::compile_to_ir(&text))
                .unwrap_or_else(|_| panic!("{stem}.krn, {what}: the front end panicked"));
            match result {
                Ok(module) if text != *source => modules.push((what, module)),
                Ok(_) => {}
                Err(diagnostics) => assert!(
                    !diagnostics.is_empty(),
                    "{stem}.krn, {what}: an error without diagnostics"
                ),
            }
        }
        accepted += modules.len();
        front_end += start.elapsed();
        let start = Instant::now();
        for (what, module) in spread(modules, compiled_per_file) {
            for target in &targets {
                let outcome = catch_unwind(AssertUnwindSafe(|| {
                    compile(&module, target, &Options::default())
                }))
                .unwrap_or_else(|_| {
                    panic!("{stem}.krn, {what}: code generation for {target} panicked")
                });
                match outcome {
                    Ok(artifact) => {
                        assert!(
                            !artifact.image.bytes.is_empty(),
                            "{stem}.krn, {what}: an empty image for {target}"
                        );
                        compiled += 1;
                    }
                    Err(error) => {
                        assert!(!error.into_diagnostics().is_empty());
                        refused += 1;
                    }
                }
            }
        }
        code_generation += start.elapsed();
    }
    eprintln!(
        "{tried} mutants, {accepted} accepted ({front_end:.1?}); {compiled} images, \
         {refused} refusals ({code_generation:.1?})"
    );
    // Cuts at item boundaries and many swaps keep a valid program; most mutants do not.
    assert!(
        accepted > sources.len() && accepted < tried / 2,
        "{accepted} of {tried} accepted"
    );
    assert!(compiled > 0);
}
