//! Arbitrary bytes (not only UTF-8) through the whole front end: lex, parse, check, lower,
//! validate, render the diagnostics. `//-D NAME=VALUE` lines in the input set module
//! constants as `kdsl compile -D` does. The check itself is
//! `kdsl_frontend::fuzzing::run_frontend_input`, which `crates/kdsl-frontend/tests/fuzz_corpus.rs`
//! replays on the committed corpus.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    kdsl_frontend::fuzzing::run_frontend_input(data);
});
