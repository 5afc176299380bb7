//! `ld.lld`, which links an AMDGPU object into an HSA code object, started before the object
//! exists: its start-up (loading LLVM's shared library, tens of milliseconds) then overlaps
//! lowering, optimization and the backend. It reads the object from a pipe (`/dev/stdin`)
//! and writes the code object to standard output, so no temporary file is involved.

use crate::target::amdgpu;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

pub(crate) struct StartedLinker {
    linker: PathBuf,
    /// `None` once [`StartedLinker::link`] has taken it.
    child: Option<Child>,
}

impl StartedLinker {
    /// Starts `linker -shared /dev/stdin -o -`, which waits for its input.
    pub fn start(linker: &Path) -> Result<StartedLinker, amdgpu::Error> {
        let child = Command::new(linker)
            .args(["-shared", "/dev/stdin", "-o", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| amdgpu::Error::LinkFailed {
                linker: linker.display().to_string(),
                message: format!("cannot run it: {e}"),
            })?;
        Ok(StartedLinker {
            linker: linker.to_path_buf(),
            child: Some(child),
        })
    }

    /// Feeds the relocatable object and returns the linked code object.
    pub fn link(mut self, object: &[u8]) -> Result<Vec<u8>, amdgpu::Error> {
        let failed = |message: String| amdgpu::Error::LinkFailed {
            linker: self.linker.display().to_string(),
            message,
        };
        let mut child = self
            .child
            .take()
            .ok_or_else(|| failed("already used".into()))?;
        let mut stdin = child
            .stdin
            .take()
            .ok_or_else(|| failed("no standard input".into()))?;
        // Write from another thread so that a full output pipe cannot deadlock.
        let input = object.to_vec();
        let writer = std::thread::spawn(move || stdin.write_all(&input));
        let output = child
            .wait_with_output()
            .map_err(|e| failed(format!("cannot wait for it: {e}")))?;
        let written = writer
            .join()
            .map_err(|_| failed("the input writer stopped".into()))?;
        if !output.status.success() {
            let message = String::from_utf8_lossy(&output.stderr).trim().to_string();
            return Err(failed(if message.is_empty() {
                format!("it exited with {}", output.status)
            } else {
                message
            }));
        }
        written.map_err(|e| failed(format!("cannot write its input: {e}")))?;
        if output.stdout.is_empty() {
            return Err(failed("it wrote no code object".into()));
        }
        Ok(output.stdout)
    }
}

impl Drop for StartedLinker {
    /// A linker never given its object (code generation failed) is stopped and reaped.
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
