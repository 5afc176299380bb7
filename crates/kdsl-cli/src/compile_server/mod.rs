//! The compile server: a `kdsl` process that stays running (`kdsl server start`) and compiles
//! for the `kdsl compile` commands that find it, with LLVM's state warm. A command's own process
//! spends tens of milliseconds getting LLVM ready (start-up, first use of each target's tables
//! and code) before compiling anything; the server spends that once.
//!
//! A command reads its source itself and sends the bytes, whether its standard error is a
//! terminal, and its arguments (`protocol.rs`); the server runs the same `kdsl compile` code for
//! it (`compile_command.rs`) and answers with the exit code, what the command would have printed
//! and the file it would have written, which the command then writes and prints itself
//! (`outcome.rs`). A command that reaches no server, loses it midway, or hears nothing from it
//! for `ANSWER_TIMEOUT` compiles in its own process (the last with a note);
//! `KDSL_COMPILE_SERVER=off` makes it always do so. Where the socket lives: `socket.rs`. A
//! server stops `--idle-timeout` seconds after its last answer, or on `kdsl server stop`.

mod client;
mod protocol;
mod serve;
mod socket;

use crate::outcome::Outcome;
use clap::Subcommand;
use client::{exchange, Unanswered};
use protocol::{outcome_from_fields, ANSWER_TIMEOUT, PROTOCOL};
use socket::{socket_path, Folder};
use std::os::unix::ffi::OsStringExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[derive(Subcommand)]
pub(crate) enum ServerAction {
    /// Start a compile server in the background, unless one runs for this kdsl and
    /// environment, and wait until it takes commands.
    Start {
        /// Stop after this many seconds without commands.
        #[arg(long, default_value_t = DEFAULT_IDLE_SECONDS)]
        idle_timeout: u64,
    },
    /// Stop the compile server.
    Stop,
    /// Say whether a compile server runs, and where.
    Status,
    /// Run a compile server in the foreground (what `start` runs in the background).
    Run {
        /// Stop after this many seconds without commands.
        #[arg(long, default_value_t = DEFAULT_IDLE_SECONDS)]
        idle_timeout: u64,
    },
}

const DEFAULT_IDLE_SECONDS: u64 = 900;

/// Compiles this process's `kdsl compile` command, whose source is `source`, on a compile
/// server if one runs for it; `None` when the command is to compile in its own process.
pub(crate) fn compile(color: bool, source: &str) -> Option<Outcome> {
    if std::env::var_os(kdsl::bundle::environment::COMPILE_SERVER)
        .is_some_and(|value| value == "off")
    {
        return None;
    }
    let mut request: Vec<Vec<u8>> = vec![
        PROTOCOL.into(),
        "compile".into(),
        if color { "1" } else { "0" }.into(),
        source.into(),
    ];
    request.extend(std::env::args_os().map(|argument| argument.into_vec()));
    match exchange(&request) {
        Ok(answer) => outcome_from_fields(answer),
        Err(Unanswered::Silent(socket)) => {
            say_line!(
                "note: the compile server at {} did not answer within {} s; compiling in this process\n  = hint: end that `kdsl server run` process, or set KDSL_COMPILE_SERVER=off",
                socket.display(),
                ANSWER_TIMEOUT.as_secs()
            );
            None
        }
        Err(Unanswered::NoServer | Unanswered::Lost) => None,
    }
}

/// `kdsl server ...`.
pub(crate) fn command(action: ServerAction) -> Result<(), String> {
    let socket = socket_path(Folder::Create)?;
    match action {
        ServerAction::Run { idle_timeout } => {
            if let Ok(pid) = ping() {
                return Err(format!(
                    "error: a compile server (pid {pid}) already runs at {}",
                    socket.display()
                ));
            }
            serve::serve(socket, Duration::from_secs(idle_timeout))
        }
        ServerAction::Start { idle_timeout } => start(socket, idle_timeout),
        ServerAction::Stop => match exchange(&[PROTOCOL.into(), "stop".into()]) {
            Ok(answer) => {
                say_line!("stopped the compile server ({})", describe(&answer));
                Ok(())
            }
            Err(Unanswered::Silent(_)) => Err(not_answering(&socket)),
            Err(Unanswered::NoServer | Unanswered::Lost) => {
                say_line!("no compile server runs for this kdsl at {}", socket.display());
                Ok(())
            }
        },
        ServerAction::Status => match ping() {
            Ok(pid) => {
                say_line!("a compile server runs (pid {pid}) at {}", socket.display());
                Ok(())
            }
            Err(Unanswered::Silent(_)) => Err(not_answering(&socket)),
            Err(Unanswered::NoServer | Unanswered::Lost) => Err(format!(
                "no compile server runs for this kdsl and environment (it would listen at {})\n  = hint: `kdsl server start` starts one",
                socket.display()
            )),
        },
    }
}

fn not_answering(socket: &Path) -> String {
    format!(
        "error: a compile server listens at {} but did not answer within {} s (suspended or stuck); `kdsl compile` compiles in its own process meanwhile\n  = hint: end that `kdsl server run` process; `kdsl server start` starts a new server in its place",
        socket.display(),
        ANSWER_TIMEOUT.as_secs()
    )
}

fn describe(answer: &[Vec<u8>]) -> String {
    match answer {
        [pid] => format!("pid {}", String::from_utf8_lossy(pid)),
        _ => "unknown pid".to_string(),
    }
}

fn ping() -> Result<String, Unanswered> {
    match exchange(&[PROTOCOL.into(), "ping".into()])?.as_slice() {
        [pid] => Ok(String::from_utf8_lossy(pid).into_owned()),
        _ => Err(Unanswered::Lost),
    }
}

fn start(socket: PathBuf, idle_timeout: u64) -> Result<(), String> {
    match ping() {
        Ok(pid) => {
            say_line!(
                "a compile server already runs (pid {pid}) at {}",
                socket.display()
            );
            return Ok(());
        }
        Err(Unanswered::Silent(_)) => say_line!(
            "note: the compile server at {} does not answer; starting a new one in its place",
            socket.display()
        ),
        Err(Unanswered::NoServer | Unanswered::Lost) => {}
    }
    let executable = std::env::current_exe()
        .map_err(|e| format!("error: cannot find the kdsl executable: {e}"))?;
    std::process::Command::new(executable)
        .args(["server", "run", "--idle-timeout", &idle_timeout.to_string()])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("error: cannot start the compile server: {e}"))?;
    // Replacing a server that does not answer takes a timeout or two more.
    let deadline = Instant::now() + Duration::from_secs(30) + 2 * ANSWER_TIMEOUT;
    while Instant::now() < deadline {
        if let Ok(pid) = ping() {
            say_line!(
                "started a compile server (pid {pid}) at {}; it stops after {idle_timeout} s without commands, or on `kdsl server stop`",
                socket.display()
            );
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Err("error: the compile server did not start in time\n  = hint: `kdsl server run` runs it in the foreground, where its errors show".to_string())
}
