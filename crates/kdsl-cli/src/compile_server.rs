//! The compile server: a `kdsl` process that stays running (`kdsl server start`) and compiles
//! for the `kdsl compile` commands that find it, with LLVM's state warm. A command's own process
//! spends tens of milliseconds getting LLVM ready (start-up, first use of each target's tables
//! and code) before compiling anything; the server spends that once.
//!
//! A server belongs to one `kdsl` executable (its path, size, modification time and inode) and
//! one compiler environment (the variables code generation reads): the socket's name hashes
//! both, so a rebuilt `kdsl` or another environment never reaches an old server. The socket
//! lives in `$XDG_RUNTIME_DIR/kdsl`, else in `kdsl-<uid>` in the temporary directory, a folder
//! only its owner may use. A command sends its working directory, whether its standard error
//! is a terminal, and its arguments; the server runs the same `kdsl compile` code for it
//! (`compile_command.rs`) and sends back the exit code and what the command would have printed.
//! A command that reaches no server, or loses it midway, compiles in its own process;
//! `KDSL_COMPILE_SERVER=off` makes it always do so. A server stops after `--idle-timeout`
//! seconds without commands, or on `kdsl server stop`.

use crate::compile_command::{self, Invocation};
use clap::Subcommand;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
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

/// The first field of every request; a server of another protocol refuses the request.
const PROTOCOL: &str = "kdsl-compile-server 1";

/// What a served `kdsl compile` printed and how it exited.
pub(crate) struct Served {
    pub exit_code: u8,
    pub messages: String,
}

/// Runs this process's `kdsl compile` command on a compile server, if one runs for it.
pub(crate) fn compile(color: bool) -> Option<Served> {
    if std::env::var_os("KDSL_COMPILE_SERVER").is_some_and(|value| value == "off") {
        return None;
    }
    let directory = std::env::current_dir().ok()?;
    let mut request: Vec<Vec<u8>> = vec![
        PROTOCOL.into(),
        "compile".into(),
        directory.into_os_string().into_vec(),
        if color { "1" } else { "0" }.into(),
    ];
    request.extend(std::env::args_os().map(OsString::into_vec));
    let response = exchange(&request)?;
    match response.as_slice() {
        [exit_code, messages] => Some(Served {
            exit_code: std::str::from_utf8(exit_code).ok()?.parse().ok()?,
            messages: String::from_utf8_lossy(messages).into_owned(),
        }),
        _ => None,
    }
}

/// `kdsl server ...`.
pub(crate) fn command(action: ServerAction) -> Result<(), String> {
    let socket = socket_path(Folder::Create)?;
    match action {
        ServerAction::Run { idle_timeout } => serve(socket, Duration::from_secs(idle_timeout)),
        ServerAction::Start { idle_timeout } => start(socket, idle_timeout),
        ServerAction::Stop => match exchange(&[PROTOCOL.into(), "stop".into()]) {
            Some(response) => {
                eprintln!("stopped the compile server ({})", describe(&response));
                Ok(())
            }
            None => {
                eprintln!("no compile server runs for this kdsl at {}", socket.display());
                Ok(())
            }
        },
        ServerAction::Status => match ping() {
            Some(pid) => {
                eprintln!("a compile server runs (pid {pid}) at {}", socket.display());
                Ok(())
            }
            None => Err(format!(
                "no compile server runs for this kdsl and environment (it would listen at {})\n  = hint: `kdsl server start` starts one",
                socket.display()
            )),
        },
    }
}

fn describe(response: &[Vec<u8>]) -> String {
    match response {
        [pid] => format!("pid {}", String::from_utf8_lossy(pid)),
        _ => "unknown pid".to_string(),
    }
}

fn ping() -> Option<String> {
    match exchange(&[PROTOCOL.into(), "ping".into()])?.as_slice() {
        [pid] => Some(String::from_utf8_lossy(pid).into_owned()),
        _ => None,
    }
}

fn start(socket: PathBuf, idle_timeout: u64) -> Result<(), String> {
    if let Some(pid) = ping() {
        eprintln!(
            "a compile server already runs (pid {pid}) at {}",
            socket.display()
        );
        return Ok(());
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
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if let Some(pid) = ping() {
            eprintln!(
                "started a compile server (pid {pid}) at {}; it stops after {idle_timeout} s without commands, or on `kdsl server stop`",
                socket.display()
            );
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Err("error: the compile server did not start within 30 s\n  = hint: `kdsl server run` runs it in the foreground, where its errors show".to_string())
}

/// Sends one request to the server and returns its response; `None` when no server answers.
fn exchange(request: &[Vec<u8>]) -> Option<Vec<Vec<u8>>> {
    let mut stream = UnixStream::connect(socket_path(Folder::Existing).ok()?).ok()?;
    write_fields(&mut stream, request).ok()?;
    read_fields(&mut stream).ok()
}

/// Whether finding the socket may create its folder (a command looking for a server does not:
/// without the folder there is none).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Folder {
    Create,
    Existing,
}

/// The socket of the server for this executable and compiler environment.
fn socket_path(folder: Folder) -> Result<PathBuf, String> {
    let directory = socket_directory(folder)?;
    let executable = std::env::current_exe()
        .map_err(|e| format!("error: cannot find the kdsl executable: {e}"))?;
    let metadata = std::fs::metadata(&executable)
        .map_err(|e| format!("error: cannot read `{}`: {e}", executable.display()))?;
    let mut identity = Fnv1a::default();
    identity.add(executable.as_os_str().as_bytes());
    for number in [
        metadata.len(),
        metadata.mtime() as u64,
        metadata.mtime_nsec() as u64,
        metadata.ino(),
    ] {
        identity.add(&number.to_le_bytes());
    }
    for name in kdsl::COMPILER_ENVIRONMENT_VARIABLES {
        identity.add(name.as_bytes());
        match std::env::var_os(name) {
            Some(value) => identity.add(&[&[1], value.as_bytes()].concat()),
            None => identity.add(&[0]),
        }
    }
    Ok(directory.join(format!("compile-{:016x}.sock", identity.0)))
}

/// `$XDG_RUNTIME_DIR/kdsl`, else `kdsl-<uid>` in the temporary directory: created if missing
/// and `folder` allows it,
/// and used only if this user owns it and nobody else may enter it.
fn socket_directory(folder: Folder) -> Result<PathBuf, String> {
    let uid = std::fs::metadata("/proc/self")
        .map_err(|e| format!("error: cannot read /proc/self: {e}"))?
        .uid();
    let directory = match std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        Some(runtime) => PathBuf::from(runtime).join("kdsl"),
        None => std::env::temp_dir().join(format!("kdsl-{uid}")),
    };
    if folder == Folder::Create {
        let _ = std::fs::DirBuilder::new().mode(0o700).create(&directory);
    }
    let metadata = std::fs::symlink_metadata(&directory)
        .map_err(|e| format!("error: cannot create `{}`: {e}", directory.display()))?;
    if !metadata.is_dir() || metadata.uid() != uid || metadata.permissions().mode() & 0o077 != 0 {
        return Err(format!(
            "error: `{}` is not a folder only this user may use, so no compile server runs there",
            directory.display()
        ));
    }
    Ok(directory)
}

/// Runs a server on `socket` until it is stopped or idle for `idle_timeout`.
fn serve(socket: PathBuf, idle_timeout: Duration) -> Result<(), String> {
    if ping().is_some() {
        return Err(format!(
            "error: a compile server already runs at {}",
            socket.display()
        ));
    }
    let _ = std::fs::remove_file(&socket);
    let listener = UnixListener::bind(&socket)
        .map_err(|e| format!("error: cannot listen at `{}`: {e}", socket.display()))?;
    // Relative paths come with each command; the server's own directory stays free.
    let _ = std::env::set_current_dir("/");
    let started = Instant::now();
    let activity = Arc::new(Activity::default());
    std::thread::spawn(warm_up);
    {
        let (activity, socket) = (Arc::clone(&activity), socket.clone());
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(500));
            let idle = started.elapsed().saturating_sub(Duration::from_millis(
                activity.last_millis.load(Ordering::SeqCst),
            ));
            if activity.running.load(Ordering::SeqCst) == 0 && idle >= idle_timeout {
                stop_serving(&socket);
            }
        });
    }
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let (activity, socket) = (Arc::clone(&activity), socket.clone());
        activity.running.fetch_add(1, Ordering::SeqCst);
        std::thread::spawn(move || {
            handle(stream, &socket);
            let now = started.elapsed().as_millis() as u64;
            activity.last_millis.store(now, Ordering::SeqCst);
            activity.running.fetch_sub(1, Ordering::SeqCst);
        });
    }
    Ok(())
}

#[derive(Default)]
struct Activity {
    /// Requests being handled.
    running: AtomicUsize,
    /// When the last request ended, in milliseconds since the server started.
    last_millis: AtomicU64,
}

fn stop_serving(socket: &std::path::Path) -> ! {
    let _ = std::fs::remove_file(socket);
    std::process::exit(0)
}

/// Compiles a small kernel for the default targets, so that the first command finds LLVM's
/// state for each of them ready.
fn warm_up() {
    const SOURCE: &str = include_str!("../../../examples/saxpy.krn");
    let _ = kdsl::compile(
        "warm_up.krn",
        SOURCE,
        &kdsl::default_targets(),
        &kdsl::CompileOptions::default(),
    );
}

fn handle(mut stream: UnixStream, socket: &std::path::Path) {
    let Ok(request) = read_fields(&mut stream) else {
        return;
    };
    let response: Vec<Vec<u8>> = match request.as_slice() {
        [protocol, ..] if protocol.as_slice() != PROTOCOL.as_bytes() => return,
        [_, kind] if kind == b"ping" => vec![std::process::id().to_string().into()],
        [_, kind] if kind == b"stop" => {
            // The socket goes first, so that no command reaches this server once `stop` returns.
            let _ = std::fs::remove_file(socket);
            let _ = write_fields(&mut stream, &[std::process::id().to_string().into()]);
            std::process::exit(0);
        }
        [_, kind, directory, color, arguments @ ..] if kind == b"compile" => {
            let invocation = Invocation {
                directory: PathBuf::from(OsString::from_vec(directory.clone())),
                color: color == b"1",
                messages: String::new(),
            };
            let arguments: Vec<OsString> =
                arguments.iter().cloned().map(OsString::from_vec).collect();
            let (exit_code, messages) = compile_for(invocation, arguments);
            vec![exit_code.to_string().into(), messages.into()]
        }
        _ => return,
    };
    let _ = write_fields(&mut stream, &response);
}

/// Runs a command's `kdsl compile` for it: its exit code and what it prints.
fn compile_for(mut invocation: Invocation, arguments: Vec<OsString>) -> (u8, String) {
    use clap::Parser;
    let parsed = match crate::Command::try_parse_from(arguments) {
        Ok(crate::Command {
            action: crate::Action::Compile(arguments),
        }) => arguments,
        Ok(_) => {
            return (
                2,
                "error: the compile server only runs `kdsl compile`\n".to_string(),
            )
        }
        Err(error) => return (2, error.to_string()),
    };
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let result = compile_command::run(&parsed, &mut invocation);
        (result, invocation)
    }));
    match outcome {
        Ok((result, invocation)) => {
            let mut messages = invocation.messages;
            if parsed.timings {
                messages += &format!(
                    "compiled by the compile server (pid {}; `kdsl server stop` stops it)\n",
                    std::process::id()
                );
            }
            match result {
                Ok(()) => (0, messages),
                Err(error) => {
                    messages += &error;
                    if !error.ends_with('\n') {
                        messages.push('\n');
                    }
                    (1, messages)
                }
            }
        }
        Err(_) => (
            101,
            "error: internal compiler error: the compiler panicked (the compile server goes on)\n"
                .to_string(),
        ),
    }
}

/// The most fields, and the longest field, a message may have.
const MAX_FIELDS: u32 = 4096;
const MAX_FIELD_BYTES: u32 = 256 << 20;

/// A message: the number of fields, then each field's length and bytes (little-endian u32s).
fn write_fields(stream: &mut UnixStream, fields: &[Vec<u8>]) -> std::io::Result<()> {
    let mut message = Vec::new();
    message.extend_from_slice(&(fields.len() as u32).to_le_bytes());
    for field in fields {
        message.extend_from_slice(&(field.len() as u32).to_le_bytes());
        message.extend_from_slice(field);
    }
    stream.write_all(&message)
}

fn read_fields(stream: &mut UnixStream) -> std::io::Result<Vec<Vec<u8>>> {
    let read_u32 = |stream: &mut UnixStream| -> std::io::Result<u32> {
        let mut bytes = [0u8; 4];
        stream.read_exact(&mut bytes)?;
        Ok(u32::from_le_bytes(bytes))
    };
    let too_large = || std::io::Error::new(std::io::ErrorKind::InvalidData, "message too large");
    let count = read_u32(stream)?;
    if count > MAX_FIELDS {
        return Err(too_large());
    }
    let mut fields = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let length = read_u32(stream)?;
        if length > MAX_FIELD_BYTES {
            return Err(too_large());
        }
        let mut field = vec![0u8; length as usize];
        stream.read_exact(&mut field)?;
        fields.push(field);
    }
    Ok(fields)
}

/// 64-bit FNV-1a, for the socket's name.
struct Fnv1a(u64);

impl Default for Fnv1a {
    fn default() -> Self {
        Fnv1a(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv1a {
    fn add(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 = (self.0 ^ u64::from(*byte)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}
