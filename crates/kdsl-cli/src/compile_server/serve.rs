//! The server's side: accept commands on the socket, each on its own thread, and answer them.
//! A connection that does not send its request within `REQUEST_TIMEOUT` is dropped, and only
//! requests count as activity, so a silent client neither blocks others nor keeps the server
//! past its idle timeout.

use super::protocol::{
    outcome_fields, read_fields, write_fields, HEARTBEAT, PROTOCOL, REQUEST_TIMEOUT,
};
use super::socket::socket_identity;
use crate::compile_command::{self, Invocation};
use crate::outcome::Outcome;
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// The stack of a thread that compiles: as large as a main thread's usual 8 MiB, so that deep
/// sources compile on the server as they do in the command's own process.
const COMPILE_STACK_BYTES: usize = 8 << 20;

/// Runs a server on `socket` until it is stopped or idle for `idle_timeout`.
pub(super) fn serve(socket: PathBuf, idle_timeout: Duration) -> Result<(), String> {
    let _ = std::fs::remove_file(&socket);
    let listener = UnixListener::bind(&socket)
        .map_err(|e| format!("error: cannot listen at `{}`: {e}", socket.display()))?;
    let socket = Arc::new(OwnSocket {
        identity: socket_identity(&socket),
        path: socket,
    });
    // Commands send their source and write their output themselves; the server's own
    // directory stays free.
    let _ = std::env::set_current_dir("/");
    let activity = Arc::new(Activity::new());
    std::thread::spawn(warm_up);
    {
        let (activity, socket) = (Arc::clone(&activity), Arc::clone(&socket));
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(200));
            if activity.idle_for() >= idle_timeout {
                socket.stop_serving();
            }
        });
    }
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let (activity, socket) = (Arc::clone(&activity), Arc::clone(&socket));
        std::thread::spawn(move || handle(stream, &socket, &activity));
    }
    Ok(())
}

/// The socket this server made, known by its inode: a server started after this one stopped
/// answering may have put its own socket under the same name.
struct OwnSocket {
    path: PathBuf,
    identity: Option<(u64, u64)>,
}

impl OwnSocket {
    fn remove(&self) {
        if self.identity.is_some() && socket_identity(&self.path) == self.identity {
            let _ = std::fs::remove_file(&self.path);
        }
    }

    fn stop_serving(&self) -> ! {
        self.remove();
        std::process::exit(0)
    }
}

/// Requests being answered, and when the last one was answered.
struct Activity {
    started: Instant,
    answering: AtomicUsize,
    /// In milliseconds since `started`.
    last_answered: AtomicU64,
}

impl Activity {
    fn new() -> Self {
        Activity {
            started: Instant::now(),
            answering: AtomicUsize::new(0),
            last_answered: AtomicU64::new(0),
        }
    }

    /// Zero while a request is being answered, else the time since the last answer.
    fn idle_for(&self) -> Duration {
        if self.answering.load(Ordering::SeqCst) > 0 {
            return Duration::ZERO;
        }
        let last = Duration::from_millis(self.last_answered.load(Ordering::SeqCst));
        self.started.elapsed().saturating_sub(last)
    }

    fn begin(&self) -> Answering<'_> {
        self.answering.fetch_add(1, Ordering::SeqCst);
        Answering(self)
    }
}

/// A request being answered; dropping it records the answer's time.
struct Answering<'a>(&'a Activity);

impl Drop for Answering<'_> {
    fn drop(&mut self) {
        let now = self.0.started.elapsed().as_millis() as u64;
        self.0.last_answered.fetch_max(now, Ordering::SeqCst);
        self.0.answering.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Compiles a small kernel for the default targets, so that the first command finds LLVM's
/// state for each of them ready.
fn warm_up() {
    const SOURCE: &str = include_str!("../../../../examples/saxpy.krn");
    let _ = kdsl::compile(
        "warm_up.krn",
        SOURCE,
        &kdsl::default_targets(),
        &kdsl::CompileOptions::default(),
    );
}

fn handle(mut stream: UnixStream, socket: &OwnSocket, activity: &Activity) {
    if stream.set_read_timeout(Some(REQUEST_TIMEOUT)).is_err()
        || stream.set_write_timeout(Some(REQUEST_TIMEOUT)).is_err()
    {
        return;
    }
    let Ok(request) = read_fields(&mut stream) else {
        return;
    };
    let _answering = activity.begin();
    let response: Vec<Vec<u8>> = match request.as_slice() {
        [protocol, ..] if protocol.as_slice() != PROTOCOL.as_bytes() => return,
        [_, kind] if kind == b"ping" => vec![std::process::id().to_string().into()],
        [_, kind] if kind == b"stop" => {
            // The socket goes first, so that no command reaches this server once `stop` returns.
            socket.remove();
            let _ = write_fields(&mut stream, &[std::process::id().to_string().into()]);
            std::process::exit(0);
        }
        [_, kind, color, source, arguments @ ..] if kind == b"compile" => {
            let color = color == b"1";
            let source = String::from_utf8_lossy(source).into_owned();
            let arguments: Vec<OsString> =
                arguments.iter().cloned().map(OsString::from_vec).collect();
            match compile_with_heartbeats(&mut stream, color, source, arguments) {
                Some(outcome) => outcome_fields(outcome),
                None => return,
            }
        }
        _ => return,
    };
    let _ = write_fields(&mut stream, &response);
}

/// Compiles on another thread, telling the command every `HEARTBEAT` that the server is at
/// work; `None` when the command is gone.
fn compile_with_heartbeats(
    stream: &mut UnixStream,
    color: bool,
    source: String,
    arguments: Vec<OsString>,
) -> Option<Outcome> {
    let (sender, receiver) = mpsc::channel();
    std::thread::Builder::new()
        .stack_size(COMPILE_STACK_BYTES)
        .spawn(move || {
            let _ = sender.send(compile_for(color, &source, arguments));
        })
        .ok()?;
    loop {
        match receiver.recv_timeout(HEARTBEAT) {
            Ok(outcome) => return Some(outcome),
            Err(mpsc::RecvTimeoutError::Timeout) => write_fields(stream, &[]).ok()?,
            Err(mpsc::RecvTimeoutError::Disconnected) => return None,
        }
    }
}

/// Runs a command's `kdsl compile` for it.
fn compile_for(color: bool, source: &str, arguments: Vec<OsString>) -> Outcome {
    use clap::Parser;
    let failure = |exit_code: u8, messages: String| Outcome {
        exit_code,
        messages,
        output: None,
    };
    let parsed = match crate::Command::try_parse_from(arguments) {
        Ok(crate::Command {
            action: crate::Action::Compile(arguments),
        }) => arguments,
        Ok(_) => {
            return failure(
                2,
                "error: the compile server only runs `kdsl compile`\n".to_string(),
            )
        }
        Err(error) => return failure(2, error.to_string()),
    };
    let compiled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut invocation = Invocation::new(color);
        let result = compile_command::run(&parsed, source, &mut invocation);
        if parsed.timings {
            invocation.messages += &format!(
                "compiled by the compile server (pid {}; `kdsl server stop` stops it)\n",
                std::process::id()
            );
        }
        Outcome::new(result, invocation)
    }));
    compiled.unwrap_or_else(|_| {
        failure(
            101,
            "error: internal compiler error: the compiler panicked (the compile server goes on)\n"
                .to_string(),
        )
    })
}
