//! Linking an AMDGPU object into an HSA code object (`ld.lld -shared`).
//!
//! Where the build found Debian's liblld-22-dev (cfg `kdsl_in_process_lld`), lld's ELF driver
//! runs in this process, one link at a time, on an object and a code object in a private
//! temporary directory. Otherwise (or with an explicit `amdgpu::Options::linker`, or after
//! lld crashed in this process) `ld.lld` runs as a child process, started before the object
//! exists so that its start-up (loading LLVM's shared library, tens of milliseconds) overlaps
//! lowering, optimization and the backend; it reads the object from a pipe (`/dev/stdin`)
//! and writes the code object to standard output.

use crate::target::{amdgpu, AmdgpuLinker};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// A linker ready for one object.
pub(crate) enum Linker {
    InProcess,
    Child(StartedLinker),
}

impl Linker {
    /// Gets the linker ready: a child process starts now.
    pub fn prepare(linker: &AmdgpuLinker) -> Result<Linker, amdgpu::Error> {
        match linker {
            AmdgpuLinker::InProcess => Ok(Linker::InProcess),
            AmdgpuLinker::Program(program) => Ok(Linker::Child(StartedLinker::start(program)?)),
        }
    }

    /// Links the relocatable object into a code object.
    pub fn link(self, object: &[u8]) -> Result<Vec<u8>, amdgpu::Error> {
        match self {
            Linker::InProcess => in_process::link(object),
            Linker::Child(child) => child.link(object),
        }
    }
}

/// Whether this build links AMDGPU code objects in process (and lld has not crashed here).
pub(crate) fn in_process_available() -> bool {
    in_process::usable()
}

#[cfg(kdsl_in_process_lld)]
mod in_process {
    use super::{amdgpu, StartedLinker};
    use std::ffi::{c_char, c_int, CStr, CString};
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Mutex;

    extern "C" {
        /// `crates/kdsl-codegen/cpp/kdsl_lld_link.cpp`, linked with lld's ELF driver by the build script.
        fn kdsl_lld_link(
            arguments: *const *const c_char,
            count: usize,
            diagnostics: *mut *mut c_char,
            can_run_again: *mut c_int,
        ) -> c_int;
        fn kdsl_lld_free_message(message: *mut c_char);
    }

    /// lld keeps global state: one link at a time. `false` once lld could not reset it.
    static LLD_USABLE: Mutex<bool> = Mutex::new(true);

    pub(super) fn usable() -> bool {
        *LLD_USABLE
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    const NAME: &str = "lld (in process)";

    fn failed(message: String) -> amdgpu::Error {
        amdgpu::Error::LinkFailed {
            linker: NAME.to_string(),
            message,
        }
    }

    /// A directory of its own for one link, removed when dropped.
    struct LinkDirectory(std::path::PathBuf);

    impl LinkDirectory {
        fn create() -> Result<LinkDirectory, amdgpu::Error> {
            static NEXT: AtomicU64 = AtomicU64::new(0);
            let path = std::env::temp_dir().join(format!(
                "kdsl-lld-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ));
            std::fs::create_dir(&path).map_err(|e| {
                failed(format!(
                    "cannot create the directory {}: {e}",
                    path.display()
                ))
            })?;
            Ok(LinkDirectory(path))
        }
    }

    impl Drop for LinkDirectory {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    pub(super) fn link(object: &[u8]) -> Result<Vec<u8>, amdgpu::Error> {
        let mut usable = LLD_USABLE
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if !*usable {
            drop(usable);
            return link_in_child_process(object);
        }
        let directory = LinkDirectory::create()?;
        let input = directory.0.join("kernels.o");
        let output = directory.0.join("kernels.hsaco");
        std::fs::write(&input, object)
            .map_err(|e| failed(format!("cannot write {}: {e}", input.display())))?;
        let path_argument = |path: &std::path::Path| {
            CString::new(path.as_os_str().as_encoded_bytes())
                .map_err(|_| failed(format!("the path {} has a NUL byte", path.display())))
        };
        let arguments = [
            CString::new("ld.lld").expect("no NUL"),
            CString::new("-shared").expect("no NUL"),
            CString::new("--threads=1").expect("no NUL"),
            path_argument(&input)?,
            CString::new("-o").expect("no NUL"),
            path_argument(&output)?,
        ];
        let pointers: Vec<*const c_char> = arguments.iter().map(|a| a.as_ptr()).collect();
        let mut diagnostics: *mut c_char = std::ptr::null_mut();
        let mut can_run_again: c_int = 1;
        // lld resets LLVM's command-line options: no SPIR-V backend runs meanwhile, and kdsl's
        // options are set again before anything reads them.
        let options = crate::llvm::command_line_options();
        // SAFETY: the arguments are NUL-terminated strings that outlive the call; the mutex
        // held here serialises every call, as lld's global state requires.
        let status = unsafe {
            kdsl_lld_link(
                pointers.as_ptr(),
                pointers.len(),
                &mut diagnostics,
                &mut can_run_again,
            )
        };
        crate::llvm::set_command_line_options();
        drop(options);
        let message = if diagnostics.is_null() {
            String::new()
        } else {
            // SAFETY: a NUL-terminated copy the shim allocated; freed right after.
            let text = unsafe { CStr::from_ptr(diagnostics) }
                .to_string_lossy()
                .trim()
                .to_string();
            // SAFETY: `diagnostics` is the shim's allocation, copied above and freed only here.
            unsafe { kdsl_lld_free_message(diagnostics) };
            text
        };
        if can_run_again == 0 {
            *usable = false;
        }
        if status != 0 {
            return Err(failed(if message.is_empty() {
                format!("it returned {status}")
            } else {
                message
            }));
        }
        let code_object = std::fs::read(&output)
            .map_err(|e| failed(format!("cannot read {}: {e}", output.display())))?;
        if code_object.is_empty() {
            return Err(failed("it wrote no code object".into()));
        }
        Ok(code_object)
    }

    /// After lld crashed in this process: the `ld.lld` program instead.
    fn link_in_child_process(object: &[u8]) -> Result<Vec<u8>, amdgpu::Error> {
        let program = crate::target::find_tool(&["ld.lld-22", "ld.lld"])
            .ok_or(amdgpu::Error::LinkerNotFound)?;
        StartedLinker::start(&program)?.link(object)
    }
}

#[cfg(not(kdsl_in_process_lld))]
mod in_process {
    use super::amdgpu;

    pub(super) fn usable() -> bool {
        false
    }

    pub(super) fn link(_object: &[u8]) -> Result<Vec<u8>, amdgpu::Error> {
        Err(amdgpu::Error::LinkFailed {
            linker: "lld (in process)".to_string(),
            message: "this build has no in-process lld".to_string(),
        })
    }
}

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
