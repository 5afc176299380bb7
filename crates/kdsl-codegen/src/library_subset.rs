//! The part of a math library that kdsl can call: every math function for `f32` and `f64`
//! and what those call. Libraries are big (libclc's AMDGPU build is 8 MB of bitcode with
//! thousands of functions, libdevice 0.5 MB), and opening one costs far more than the few
//! functions a kernel uses; the subset is a few hundred kilobytes. It is extracted once per
//! library file and kept in memory for the process and on disk for later processes (in
//! `$KDSL_CACHE_DIR`, else `$XDG_CACHE_HOME/kdsl`, else `~/.cache/kdsl`; where no directory is
//! writable, only in memory). A cached file is keyed by the library's path, size and
//! modification time, and one that does not parse is rebuilt.

use crate::library::{load_lazily_from_file, MathLibrary};
use inkwell::context::Context;
use kdsl_ir::{MathFunction, ScalarType};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// The extracted subset of one library: its bitcode and the functions it defines for callers.
pub(crate) struct Subset {
    pub bitcode: Vec<u8>,
    pub roots: HashSet<String>,
}

type SubsetSlot = Arc<Mutex<Option<Arc<Subset>>>>;

/// The names of every library function the lowering can call.
fn roots(library: &MathLibrary) -> HashSet<String> {
    MathFunction::ALL
        .iter()
        .flat_map(|&function| {
            [ScalarType::F32, ScalarType::F64].map(|ty| library.function_name(function, ty).0)
        })
        .collect()
}

/// The subset of the library at `path`, extracted at most once per process.
pub(crate) fn subset(library: &MathLibrary, path: &Path) -> Result<Arc<Subset>, String> {
    static SUBSETS: OnceLock<Mutex<HashMap<PathBuf, SubsetSlot>>> = OnceLock::new();
    let slot = {
        let mut subsets = SUBSETS
            .get_or_init(Default::default)
            .lock()
            .map_err(|_| "the math library cache is poisoned".to_string())?;
        subsets.entry(path.to_path_buf()).or_default().clone()
    };
    // One thread per library extracts; others wanting the same library wait for it.
    let mut slot = slot
        .lock()
        .map_err(|_| "the math library cache is poisoned".to_string())?;
    if let Some(subset) = slot.as_ref() {
        return Ok(subset.clone());
    }
    let roots = roots(library);
    let cache_file = cache_file(path);
    let cached = cache_file
        .as_ref()
        .and_then(|file| std::fs::read(file).ok())
        .filter(|bytes| parses(bytes));
    let bitcode = match cached {
        Some(bytes) => bytes,
        None => {
            let bytes = extract(path, &roots)?;
            if let Some(file) = &cache_file {
                store(file, &bytes);
            }
            bytes
        }
    };
    let subset = Arc::new(Subset { bitcode, roots });
    *slot = Some(subset.clone());
    Ok(subset)
}

/// Links the library's `roots` (and what they call) into an empty module and returns its
/// bitcode.
fn extract(path: &Path, roots: &HashSet<String>) -> Result<Vec<u8>, String> {
    let context = Context::create();
    let library = load_lazily_from_file(&context, path)?;
    crate::library::internalize_all_but(&library, roots);
    let subset = context.create_module("kdsl-math-subset");
    subset.set_triple(&library.get_triple());
    subset.set_data_layout(&library.get_data_layout());
    subset.link_in_module(library).map_err(|e| {
        format!(
            "cannot extract from `{}`: {}",
            path.display(),
            e.to_string_lossy()
        )
    })?;
    Ok(subset.write_bitcode_to_memory().as_slice().to_vec())
}

/// Whether `bytes` is whole, valid bitcode: parsed completely (not lazily, so that a damaged
/// function body is found here and not while linking), with LLVM's errors caught instead of
/// ending the process as its default diagnostic handler does.
fn parses(bytes: &[u8]) -> bool {
    use inkwell::llvm_sys::{bit_reader, core, prelude::LLVMModuleRef};
    if !bytes.starts_with(b"BC\xC0\xDE") {
        return false;
    }
    extern "C" fn record_error(
        info: inkwell::llvm_sys::prelude::LLVMDiagnosticInfoRef,
        failed: *mut std::ffi::c_void,
    ) {
        // SAFETY: `failed` is the `bool` registered below, alive during the parse.
        unsafe {
            if core::LLVMGetDiagInfoSeverity(info)
                == inkwell::llvm_sys::LLVMDiagnosticSeverity::LLVMDSError
            {
                *(failed as *mut bool) = true;
            }
        }
    }
    let context = Context::create();
    let mut failed = false;
    let name = c"kdsl-cached-math-library";
    // SAFETY: the handler and its flag outlive the parse; the buffer is a copy LLVM owns and
    // is disposed of here (parsing does not take it); a parsed module is disposed of too.
    unsafe {
        core::LLVMContextSetDiagnosticHandler(
            context.raw(),
            Some(record_error),
            &mut failed as *mut bool as *mut std::ffi::c_void,
        );
        let buffer = core::LLVMCreateMemoryBufferWithMemoryRangeCopy(
            bytes.as_ptr() as *const std::ffi::c_char,
            bytes.len(),
            name.as_ptr(),
        );
        let mut module: LLVMModuleRef = std::ptr::null_mut();
        let error = bit_reader::LLVMParseBitcodeInContext2(context.raw(), buffer, &mut module);
        core::LLVMDisposeMemoryBuffer(buffer);
        if !module.is_null() {
            core::LLVMDisposeModule(module);
        }
        core::LLVMContextSetDiagnosticHandler(context.raw(), None, std::ptr::null_mut());
        error == 0 && !failed
    }
}

fn cache_directory() -> Option<PathBuf> {
    let from = |variable: &str| std::env::var_os(variable).filter(|v| !v.is_empty());
    from("KDSL_CACHE_DIR")
        .map(PathBuf::from)
        .or_else(|| from("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("kdsl")))
        .or_else(|| from("HOME").map(|d| PathBuf::from(d).join(".cache/kdsl")))
}

/// The cache file of the library at `path`: its name hashes the path, size and modification
/// time, kdsl's version and the LLVM major version, so a changed library or kdsl misses.
fn cache_file(path: &Path) -> Option<PathBuf> {
    let metadata = std::fs::metadata(path).ok()?;
    let modified = metadata
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    let key = format!(
        "{}\n{}\n{}\n{}\nllvm22\n",
        std::fs::canonicalize(path).ok()?.display(),
        metadata.len(),
        modified.as_nanos(),
        env!("CARGO_PKG_VERSION"),
    );
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in key.bytes() {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    }
    let stem = path.file_stem()?.to_string_lossy();
    Some(cache_directory()?.join(format!("{stem}-{hash:016x}.bc")))
}

/// Writes the cache file through a temporary file and a rename, so that a concurrent reader
/// never sees half of it. Failing to cache is not an error.
fn store(file: &Path, bytes: &[u8]) {
    let Some(directory) = file.parent() else {
        return;
    };
    if std::fs::create_dir_all(directory).is_err() {
        return;
    }
    let temporary = file.with_extension(format!("tmp{}", std::process::id()));
    if std::fs::write(&temporary, bytes).is_ok() && std::fs::rename(&temporary, file).is_ok() {
        return;
    }
    let _ = std::fs::remove_file(&temporary);
}
