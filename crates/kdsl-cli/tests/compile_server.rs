//! `kdsl compile` on a compile server behaves as in its own process (streams, umask, relative
//! paths, messages, exit codes), and nothing a server or another process does makes it hang or
//! locks the server out. Each test has its own runtime folder, hence its own server. Waits are
//! hang guards only: each check waits for an event, never for a fixed time.

use std::ffi::OsString;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Longer than any command here takes, even on a loaded machine.
const HANG_GUARD: Duration = Duration::from_secs(180);

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let folder = std::env::temp_dir().join(format!("kdsl-server-test-{}", std::process::id()));
    std::fs::create_dir_all(&folder).unwrap();
    folder.join(name)
}

/// A private folder made fresh for one test.
fn private_folder(name: &str) -> PathBuf {
    let folder = scratch(name);
    let _ = std::fs::remove_dir_all(&folder);
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o700)).unwrap();
    folder
}

/// Runs `command` to its end, failing the test if it takes longer than `HANG_GUARD`.
fn output_of(mut command: Command) -> Output {
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    let child = command.spawn().expect("the command runs");
    let pid = child.id();
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || sender.send(child.wait_with_output()));
    match receiver.recv_timeout(HANG_GUARD) {
        Ok(output) => output.expect("the command's output is read"),
        Err(_) => {
            signal(pid, "KILL");
            panic!("{command:?} hung (still running after {HANG_GUARD:?})");
        }
    }
}

fn signal(pid: u32, name: &str) {
    let _ = Command::new("kill")
        .args([format!("-{name}"), pid.to_string()])
        .status();
}

/// The environment of the commands of one test: a runtime folder of its own (or a temporary
/// folder of its own, without `XDG_RUNTIME_DIR`), so that they share a compile server that no
/// other test reaches. Dropping it stops that server.
struct Scope {
    variables: Vec<(&'static str, Option<OsString>)>,
}

impl Scope {
    fn with_runtime_folder(name: &str) -> Self {
        Scope {
            variables: vec![("XDG_RUNTIME_DIR", Some(private_folder(name).into()))],
        }
    }

    fn with_temporary_folder(folder: &Path) -> Self {
        Scope {
            variables: vec![
                ("XDG_RUNTIME_DIR", None),
                ("TMPDIR", Some(folder.as_os_str().to_owned())),
            ],
        }
    }

    /// `kdsl` with `arguments`, run in the workspace, its standard input empty.
    fn kdsl(&self, arguments: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_kdsl"));
        command
            .args(arguments)
            .current_dir(workspace())
            .stdin(Stdio::null());
        self.apply(&mut command);
        command
    }

    /// `kdsl` compiling in its own process.
    fn kdsl_without_server(&self, arguments: &[&str]) -> Command {
        let mut command = self.kdsl(arguments);
        command.env("KDSL_COMPILE_SERVER", "off");
        command
    }

    /// `script` run by bash, which finds the `kdsl` binary in `$KDSL`.
    fn bash(&self, script: &str) -> Command {
        let mut command = Command::new("bash");
        command
            .args(["-c", script])
            .current_dir(workspace())
            .stdin(Stdio::null())
            .env("KDSL", env!("CARGO_BIN_EXE_kdsl"));
        self.apply(&mut command);
        command
    }

    fn apply(&self, command: &mut Command) {
        for (name, value) in &self.variables {
            match value {
                Some(value) => command.env(name, value),
                None => command.env_remove(name),
            };
        }
    }

    fn run(&self, arguments: &[&str]) -> Output {
        output_of(self.kdsl(arguments))
    }

    /// Starts a server and returns its pid and socket.
    fn start(&self, idle_timeout_seconds: u32) -> (u32, PathBuf) {
        let seconds = idle_timeout_seconds.to_string();
        let started = self.run(&["server", "start", "--idle-timeout", &seconds]);
        let said = stderr(&started);
        assert!(started.status.success(), "{said}");
        let pid = said
            .split("(pid ")
            .nth(1)
            .and_then(|rest| rest.split(')').next())
            .and_then(|pid| pid.parse().ok())
            .unwrap_or_else(|| panic!("start names the pid: {said}"));
        let socket = said
            .split(") at ")
            .nth(1)
            .and_then(|rest| rest.split(';').next())
            .map(PathBuf::from)
            .unwrap_or_else(|| panic!("start names the socket: {said}"));
        (pid, socket)
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        let _ = self.kdsl(&["server", "stop"]).output();
    }
}

/// A suspended process, resumed when this is dropped (also when the test fails midway).
struct Suspended(u32);

impl Suspended {
    fn new(pid: u32) -> Self {
        signal(pid, "STOP");
        Suspended(pid)
    }
}

impl Drop for Suspended {
    fn drop(&mut self) {
        signal(self.0, "CONT");
    }
}

#[test]
fn served_compiles_read_and_write_through_the_commands_own_streams_and_umask() {
    let scope = Scope::with_runtime_folder("streams");
    scope.start(120);
    let served_note = "compiled by the compile server";

    // A source on standard input: the command's, not the server's.
    let stdin_bundle = |served: bool, name: &str| {
        let output = scratch(name);
        let arguments = [
            "compile",
            "/dev/stdin",
            "-o",
            output.to_str().unwrap(),
            "--timings",
        ];
        let mut command = if served {
            scope.kdsl(&arguments)
        } else {
            scope.kdsl_without_server(&arguments)
        };
        let source = std::fs::File::open(workspace().join("examples/saxpy.krn")).unwrap();
        command.stdin(source);
        let compiled = output_of(command);
        assert!(compiled.status.success(), "{}", stderr(&compiled));
        assert_eq!(stderr(&compiled).contains(served_note), served);
        assert!(
            stderr(&compiled).contains("(1 kernel;"),
            "{}",
            stderr(&compiled)
        );
        std::fs::read(output).unwrap()
    };
    assert!(stdin_bundle(true, "stdin-served.kbundle") == stdin_bundle(false, "stdin-own.kbundle"));

    // Output to standard output: the command's, not the server's.
    let arguments = [
        "compile",
        "examples/saxpy.krn",
        "--target",
        "spirv",
        "-o",
        "/dev/stdout",
    ];
    let served = scope.run(&arguments);
    let own = output_of(scope.kdsl_without_server(&arguments));
    assert!(served.status.success(), "{}", stderr(&served));
    assert!(own.status.success(), "{}", stderr(&own));
    assert!(!own.stdout.is_empty());
    assert!(
        served.stdout == own.stdout,
        "served -o /dev/stdout wrote other bytes"
    );
    assert_eq!(stderr(&served), stderr(&own));

    // Process substitution names a pipe only the command can read.
    let substituted = scratch("substituted.kbundle");
    let compiled = output_of(scope.bash(&format!(
        "exec \"$KDSL\" compile <(cat examples/saxpy.krn) -o {} --timings",
        substituted.display()
    )));
    assert!(compiled.status.success(), "{}", stderr(&compiled));
    assert!(
        stderr(&compiled).contains(served_note),
        "{}",
        stderr(&compiled)
    );
    assert!(
        stderr(&compiled).contains("(1 kernel;"),
        "{}",
        stderr(&compiled)
    );

    // The output file's permissions follow the command's umask.
    let private = scratch("umask.kbundle");
    let _ = std::fs::remove_file(&private);
    let compiled = output_of(scope.bash(&format!(
        "umask 077 && exec \"$KDSL\" compile examples/saxpy.krn -o {} --timings",
        private.display()
    )));
    assert!(compiled.status.success(), "{}", stderr(&compiled));
    assert!(
        stderr(&compiled).contains(served_note),
        "{}",
        stderr(&compiled)
    );
    let mode = std::fs::metadata(&private).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "umask 077 gives {mode:o}");

    // A file that cannot be written fails the command after what it said before.
    let arguments = [
        "compile",
        "examples/saxpy.krn",
        "-o",
        "no/such/folder/x.kbundle",
    ];
    let served = scope.run(&arguments);
    let own = output_of(scope.kdsl_without_server(&arguments));
    assert_eq!(served.status.code(), Some(1), "{}", stderr(&served));
    assert_eq!(own.status.code(), Some(1));
    assert_eq!(stderr(&served), stderr(&own));
}

#[test]
fn a_server_that_stops_answering_costs_commands_a_timeout_not_a_hang() {
    let scope = Scope::with_runtime_folder("suspended");
    let (pid, _) = scope.start(120);
    let suspended = Suspended::new(pid);

    let output = scratch("suspended.kbundle");
    // Both commands wait out the answer timeout, at the same time.
    let (compiled, status) = std::thread::scope(|threads| {
        let status = threads.spawn(|| scope.run(&["server", "status"]));
        let compiled = scope.run(&[
            "compile",
            "examples/saxpy.krn",
            "-o",
            output.to_str().unwrap(),
        ]);
        (compiled, status.join().expect("`server status` ran"))
    });
    assert!(compiled.status.success(), "{}", stderr(&compiled));
    assert!(
        stderr(&compiled).contains("did not answer within"),
        "{}",
        stderr(&compiled)
    );
    assert!(
        stderr(&compiled).contains("(1 kernel;"),
        "{}",
        stderr(&compiled)
    );
    assert!(kdsl_bundle::Bundle::from_bytes(&std::fs::read(&output).unwrap()).is_ok());

    assert_eq!(status.status.code(), Some(1), "{}", stderr(&status));
    assert!(
        stderr(&status).contains("did not answer"),
        "{}",
        stderr(&status)
    );

    // Once it answers again, it serves again.
    drop(suspended);
    let status = scope.run(&["server", "status"]);
    assert!(status.status.success(), "{}", stderr(&status));
}

#[test]
fn a_client_that_sends_nothing_neither_blocks_others_nor_keeps_the_server_alive() {
    let scope = Scope::with_runtime_folder("silent");
    // Long enough for the connection below to be made before the server stops.
    let (_, socket) = scope.start(10);
    let silent = std::os::unix::net::UnixStream::connect(&socket).expect("the server listens");

    let status = scope.run(&["server", "status"]);
    assert!(status.status.success(), "{}", stderr(&status));

    // The server stops (and removes its socket) while the silent connection stays open.
    let deadline = Instant::now() + HANG_GUARD;
    while socket.exists() {
        assert!(
            Instant::now() < deadline,
            "a silent connection kept the server past its idle timeout"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let status = scope.run(&["server", "status"]);
    assert_eq!(status.status.code(), Some(1), "{}", stderr(&status));
    drop(silent);
}

#[test]
fn a_socket_folder_taken_by_another_user_does_not_lock_the_server_out() {
    let temporary = private_folder("taken");
    let uid = std::fs::metadata("/proc/self").unwrap().uid();
    let taken = temporary.join(format!("kdsl-{uid}"));
    std::fs::create_dir(&taken).unwrap();
    std::fs::set_permissions(&taken, std::fs::Permissions::from_mode(0o777)).unwrap();
    if uid == 0 {
        // As root, make it truly another user's.
        std::os::unix::fs::chown(&taken, Some(65534), Some(65534)).unwrap();
    }
    let scope = Scope::with_temporary_folder(&temporary);
    let (_, socket) = scope.start(120);
    assert!(!socket.starts_with(&taken), "{}", socket.display());

    let output = scratch("taken.kbundle");
    let compiled = scope.run(&[
        "compile",
        "examples/saxpy.krn",
        "-o",
        output.to_str().unwrap(),
        "--timings",
    ]);
    assert!(compiled.status.success(), "{}", stderr(&compiled));
    assert!(
        stderr(&compiled).contains("compiled by the compile server"),
        "{}",
        stderr(&compiled)
    );
    let stopped = scope.run(&["server", "stop"]);
    assert!(
        stderr(&stopped).contains("stopped the compile server"),
        "{}",
        stderr(&stopped)
    );
}

/// `kdsl server stop` for one runtime folder, also when the test fails midway.
struct ServerGuard(PathBuf);

impl Drop for ServerGuard {
    fn drop(&mut self) {
        let _ = Command::new(env!("CARGO_BIN_EXE_kdsl"))
            .args(["server", "stop"])
            .env("XDG_RUNTIME_DIR", &self.0)
            .output();
    }
}

#[test]
fn a_compile_server_does_what_the_command_does_in_its_own_process() {
    use std::os::unix::fs::PermissionsExt;
    let runtime = scratch("runtime");
    std::fs::create_dir_all(&runtime).unwrap();
    std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700)).unwrap();
    let run = |arguments: &[&str], directory: &Path, server: bool| -> Output {
        let mut command = Command::new(env!("CARGO_BIN_EXE_kdsl"));
        command
            .args(arguments)
            .current_dir(directory)
            .env("XDG_RUNTIME_DIR", &runtime);
        if !server {
            command.env("KDSL_COMPILE_SERVER", "off");
        }
        command.output().expect("the kdsl binary runs")
    };
    let root = workspace();
    let status = run(&["server", "status"], &root, true);
    assert!(!status.status.success(), "{}", stderr(&status));
    let socket = stderr(&status)
        .split("it would listen at ")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .map(PathBuf::from)
        .expect("status names the socket");

    // A socket nobody listens on: the command compiles in its own process.
    drop(std::os::unix::net::UnixListener::bind(&socket).unwrap());
    let output = scratch("served-stale.kbundle");
    let compiled = run(
        &[
            "compile",
            "examples/saxpy.krn",
            "-o",
            output.to_str().unwrap(),
            "--timings",
        ],
        &root,
        true,
    );
    assert!(compiled.status.success(), "{}", stderr(&compiled));
    assert!(
        !stderr(&compiled).contains("compile server"),
        "{}",
        stderr(&compiled)
    );

    let started = run(&["server", "start", "--idle-timeout", "120"], &root, true);
    let _guard = ServerGuard(runtime.clone());
    assert!(started.status.success(), "{}", stderr(&started));
    assert!(
        stderr(&started).contains("started a compile server"),
        "{}",
        stderr(&started)
    );
    let again = run(&["server", "start"], &root, true);
    assert!(
        stderr(&again).contains("already runs"),
        "{}",
        stderr(&again)
    );

    // Relative paths resolve in the command's directory; the bundle is the one the command
    // itself writes.
    let examples = root.join("examples");
    let served = run(
        &[
            "compile",
            "saxpy.krn",
            "-o",
            "../target/served.kbundle",
            "--timings",
        ],
        &examples,
        true,
    );
    assert!(served.status.success(), "{}", stderr(&served));
    assert!(
        stderr(&served).contains("compiled by the compile server"),
        "{}",
        stderr(&served)
    );
    assert!(
        stderr(&served).contains("wrote ../target/served.kbundle (1 kernel"),
        "{}",
        stderr(&served)
    );
    let own = run(
        &["compile", "saxpy.krn", "-o", "../target/own.kbundle"],
        &examples,
        false,
    );
    assert!(own.status.success(), "{}", stderr(&own));
    let served_bytes = std::fs::read(root.join("target/served.kbundle")).unwrap();
    assert!(served_bytes == std::fs::read(root.join("target/own.kbundle")).unwrap());

    // Failures say the same and exit the same way.
    for arguments in [
        &["compile", "tests/errors/several_errors.krn"][..],
        &["compile", "tests/errors/no_such_file.krn"],
        &["compile", "examples/saxpy.krn", "--target", "metal"],
    ] {
        let served = run(arguments, &root, true);
        let own = run(arguments, &root, false);
        assert_eq!(
            served.status.code(),
            Some(1),
            "{arguments:?}: {}",
            stderr(&served)
        );
        assert_eq!(own.status.code(), Some(1), "{arguments:?}");
        assert_eq!(stderr(&served), stderr(&own), "{arguments:?}");
    }

    let stopped = run(&["server", "stop"], &root, true);
    assert!(
        stderr(&stopped).contains("stopped the compile server"),
        "{}",
        stderr(&stopped)
    );
    assert!(!socket.exists(), "the server removes its socket");
    let status = run(&["server", "status"], &root, true);
    assert!(!status.status.success(), "{}", stderr(&status));
}
