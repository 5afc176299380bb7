//! A command's side: reach the server and wait for its answer, never longer than
//! `ANSWER_TIMEOUT` without a word from it.

use super::protocol::{read_fields, write_fields, ANSWER_TIMEOUT};
use super::socket::{socket_path, Folder};
use std::io::ErrorKind;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::mpsc;

/// Why a request got no answer.
pub(super) enum Unanswered {
    /// No server listens (no socket, or nobody behind it).
    NoServer,
    /// A server listens at this socket but did not answer in time.
    Silent(PathBuf),
    /// The server closed the connection or answered something else.
    Lost,
}

/// Sends one request to the server and returns its answer.
pub(super) fn exchange(request: &[Vec<u8>]) -> Result<Vec<Vec<u8>>, Unanswered> {
    let socket = socket_path(Folder::Existing).map_err(|_| Unanswered::NoServer)?;
    let mut stream = connect(&socket)?;
    let failed = |error: std::io::Error| match error.kind() {
        ErrorKind::WouldBlock | ErrorKind::TimedOut => Unanswered::Silent(socket.clone()),
        _ => Unanswered::Lost,
    };
    stream
        .set_read_timeout(Some(ANSWER_TIMEOUT))
        .and_then(|()| stream.set_write_timeout(Some(ANSWER_TIMEOUT)))
        .map_err(|_| Unanswered::Lost)?;
    write_fields(&mut stream, request).map_err(failed)?;
    loop {
        let fields = read_fields(&mut stream).map_err(failed)?;
        // Empty messages are the server saying it is still at work.
        if !fields.is_empty() {
            return Ok(fields);
        }
    }
}

/// Connects to `socket`, waiting at most `ANSWER_TIMEOUT` (connecting blocks while a server
/// that stopped accepting has a full backlog).
fn connect(socket: &Path) -> Result<UnixStream, Unanswered> {
    let (sender, receiver) = mpsc::channel();
    let path = socket.to_path_buf();
    std::thread::spawn(move || {
        let _ = sender.send(UnixStream::connect(path));
    });
    match receiver.recv_timeout(ANSWER_TIMEOUT) {
        Ok(Ok(stream)) => Ok(stream),
        Ok(Err(_)) => Err(Unanswered::NoServer),
        Err(_) => Err(Unanswered::Silent(socket.to_path_buf())),
    }
}
