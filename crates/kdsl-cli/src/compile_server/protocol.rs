//! What commands and the compile server say to each other. A message is the number of fields,
//! then each field's length and bytes (little-endian u32s). A command sends one request; the
//! server answers with one message, sending empty messages (no fields) every `HEARTBEAT`
//! while it works, so that a command can tell a long compile from a server that stopped
//! answering.

use crate::outcome::{Outcome, OutputFile};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::time::Duration;

/// The first field of every request; a server of another protocol refuses the request.
pub(super) const PROTOCOL: &str = "kdsl-compile-server 2";

/// How often a server at work on a request says so.
pub(super) const HEARTBEAT: Duration = Duration::from_secs(1);

/// How long a command waits for the server, to connect and between messages, before it
/// compiles in its own process; many heartbeats long, so that only a server that stopped
/// answering (suspended, deadlocked, swamped) runs out of it.
pub(super) const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a server waits for each part of a request (commands send theirs at once) and for
/// a command to take each part of its answer.
pub(super) const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// The most fields, and the longest field, a message may have.
const MAX_FIELDS: u32 = 4096;
const MAX_FIELD_BYTES: u32 = 256 << 20;

pub(super) fn write_fields(stream: &mut impl Write, fields: &[Vec<u8>]) -> std::io::Result<()> {
    let mut message = Vec::new();
    message.extend_from_slice(&(fields.len() as u32).to_le_bytes());
    for field in fields {
        let length = u32::try_from(field.len())
            .ok()
            .filter(|length| *length <= MAX_FIELD_BYTES)
            .ok_or_else(too_large)?;
        message.extend_from_slice(&length.to_le_bytes());
        message.extend_from_slice(field);
    }
    stream.write_all(&message)
}

pub(super) fn read_fields(stream: &mut impl Read) -> std::io::Result<Vec<Vec<u8>>> {
    let read_u32 = |stream: &mut dyn Read| -> std::io::Result<u32> {
        let mut bytes = [0u8; 4];
        stream.read_exact(&mut bytes)?;
        Ok(u32::from_le_bytes(bytes))
    };
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

fn too_large() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, "message too large")
}

/// A compile's outcome as answer fields: the exit code and messages, then, if there is a file
/// to write, its path, bytes and where in the messages it is written.
pub(super) fn outcome_fields(outcome: Outcome) -> Vec<Vec<u8>> {
    use std::os::unix::ffi::OsStringExt;
    let mut fields = vec![
        outcome.exit_code.to_string().into_bytes(),
        outcome.messages.into_bytes(),
    ];
    if let Some(output) = outcome.output {
        fields.push(output.path.into_os_string().into_vec());
        fields.push(output.bytes);
        fields.push(output.said_before.to_string().into_bytes());
    }
    fields
}

fn number<T: std::str::FromStr>(field: &[u8]) -> Option<T> {
    std::str::from_utf8(field).ok()?.parse().ok()
}

/// The outcome `outcome_fields` sent; `None` for anything else.
pub(super) fn outcome_from_fields(fields: Vec<Vec<u8>>) -> Option<Outcome> {
    use std::os::unix::ffi::OsStringExt;
    let mut fields = fields.into_iter();
    let exit_code = number(&fields.next()?)?;
    let messages = String::from_utf8(fields.next()?).ok()?;
    let output = match (fields.next(), fields.next(), fields.next(), fields.next()) {
        (None, ..) => None,
        (Some(path), Some(bytes), Some(said_before), None) => Some(OutputFile {
            path: PathBuf::from(std::ffi::OsString::from_vec(path)),
            bytes,
            said_before: number(&said_before).filter(|at| messages.is_char_boundary(*at))?,
        }),
        _ => return None,
    };
    Some(Outcome {
        exit_code,
        messages,
        output,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outcome_with_its_file_survives_the_trip() {
        let sent = Outcome {
            exit_code: 0,
            messages: "warning: é\nwrote out.kbundle\n".to_string(),
            output: Some(OutputFile {
                path: PathBuf::from("out.kbundle"),
                bytes: vec![0, 1, 255],
                said_before: 12,
            }),
        };
        let mut wire = Vec::new();
        write_fields(&mut wire, &outcome_fields(sent)).unwrap();
        let fields = read_fields(&mut wire.as_slice()).unwrap();
        let received = outcome_from_fields(fields).unwrap();
        assert_eq!(received.exit_code, 0);
        assert_eq!(received.messages, "warning: é\nwrote out.kbundle\n");
        let output = received.output.unwrap();
        assert_eq!(output.path, PathBuf::from("out.kbundle"));
        assert_eq!(output.bytes, [0, 1, 255]);
        assert_eq!(output.said_before, 12);
    }

    #[test]
    fn a_malformed_answer_is_no_outcome() {
        let field = |text: &str| text.as_bytes().to_vec();
        // The message offset falls inside `é`.
        let inside_a_character = vec![field("0"), field("é"), field("out"), vec![], field("1")];
        assert!(outcome_from_fields(inside_a_character).is_none());
        assert!(outcome_from_fields(vec![field("256"), field("")]).is_none());
        assert!(outcome_from_fields(vec![field("0"), field(""), field("out")]).is_none());
    }

    #[test]
    fn oversized_messages_are_refused() {
        let mut wire = Vec::new();
        wire.extend_from_slice(&(MAX_FIELDS + 1).to_le_bytes());
        assert!(read_fields(&mut wire.as_slice()).is_err());
    }
}
