//! What a `kdsl compile` comes to, wherever it was compiled: an exit code, what it says on
//! standard error, and the file it writes. The command's own process delivers it (writes the
//! file, prints the messages), so that a compile on the server behaves exactly like one in the
//! command's process.

use crate::compile_command::Invocation;
use std::path::PathBuf;
use std::process::ExitCode;

/// A file `kdsl compile` writes, and how much of its messages come before writing it.
pub(crate) struct OutputFile {
    pub path: PathBuf,
    pub bytes: Vec<u8>,
    /// The length of the messages said before the file is written; when writing fails, only
    /// these are printed, then the error.
    pub said_before: usize,
}

/// The result of a `kdsl compile`, ready for its process to deliver.
pub(crate) struct Outcome {
    pub exit_code: u8,
    pub messages: String,
    pub output: Option<OutputFile>,
}

impl Outcome {
    /// The outcome of a compile that ended with `result` after saying what `invocation` holds.
    pub(crate) fn new(result: Result<(), String>, invocation: Invocation) -> Self {
        let Invocation {
            mut messages,
            output,
            ..
        } = invocation;
        match result {
            Ok(()) => Outcome {
                exit_code: 0,
                messages,
                output,
            },
            Err(error) => {
                append_line(&mut messages, &error);
                Outcome {
                    exit_code: 1,
                    messages,
                    output: None,
                }
            }
        }
    }

    /// Writes the output file (relative to this process's directory, with its umask) and
    /// prints the messages; a file that cannot be written makes the command fail.
    pub(crate) fn deliver(self) -> ExitCode {
        if let Some(output) = &self.output {
            if let Err(e) = std::fs::write(&output.path, &output.bytes) {
                let mut messages = self.messages;
                messages.truncate(output.said_before);
                append_line(
                    &mut messages,
                    &format!("error: cannot write `{}`: {e}", output.path.display()),
                );
                say!("{messages}");
                return ExitCode::FAILURE;
            }
        }
        say!("{}", self.messages);
        ExitCode::from(self.exit_code)
    }
}

/// Appends `text`, ending it with a newline if it has none.
fn append_line(messages: &mut String, text: &str) {
    *messages += text;
    if !text.ends_with('\n') {
        messages.push('\n');
    }
}
