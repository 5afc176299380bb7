//! Running the LLVM tools kdsl needs as child processes (`llc`, `ld.lld`).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// Runs `program` with `arguments`, feeding `input` on standard input; returns standard
/// output, or standard error (or why it could not run) on failure.
pub(crate) fn run(program: &Path, arguments: &[String], input: &[u8]) -> Result<Vec<u8>, String> {
    let mut child = Command::new(program)
        .args(arguments)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run it: {e}"))?;
    // Feed standard input from another thread so that a full output pipe cannot deadlock.
    let mut stdin = child.stdin.take().ok_or("no standard input")?;
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let output = child
        .wait_with_output()
        .map_err(|e| format!("cannot wait for it: {e}"))?;
    let written = writer
        .join()
        .map_err(|_| "the input writer stopped".to_string())?;
    if !output.status.success() {
        let message = String::from_utf8_lossy(&output.stderr).trim().to_string();
        return Err(if message.is_empty() {
            format!("it exited with {}", output.status)
        } else {
            message
        });
    }
    written.map_err(|e| format!("cannot write its input: {e}"))?;
    Ok(output.stdout)
}
