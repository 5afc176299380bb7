//! Finding and running the validators the code generation tests check images with.

pub use kdsl_testkit::tools::{ptxas, tool};
use std::process::Command;

/// Runs a validator on `bytes` written to a scratch file; panics with its output on failure.
pub fn validate(name: &str, extension: &str, bytes: &[u8], command: &mut Command) -> String {
    let file = std::env::temp_dir().join(format!(
        "kdsl-codegen-test-{}-{name}.{extension}",
        std::process::id()
    ));
    std::fs::write(&file, bytes).unwrap();
    let output = command.arg(&file).output().expect("validator runs");
    let _ = std::fs::remove_file(&file);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{command:?} on {name}: {text}");
    text
}
