//! The part of a math library that kdsl can call: every math function for `f32` and `f64`
//! and what those call. Libraries are big (libclc's AMDGPU build is 8 MB of bitcode with
//! thousands of functions, libdevice 0.5 MB), and opening one costs far more than the few
//! functions a kernel uses; the subset is a few hundred kilobytes. It is extracted once per
//! library file and kept in memory for the process and on disk for later processes (in
//! `$KDSL_CACHE_DIR`, else `$XDG_CACHE_HOME/kdsl`, else `~/.cache/kdsl`; where no directory is
//! writable, only in memory). A cached file is keyed by the library's path, size and
//! modification time, and ends with a hash of its bitcode: one that does not match is rebuilt.

use crate::library::{load_lazily_from_file, MathLibrary};
use inkwell::context::Context;
use kdsl_ir::{Builtin, ScalarType, BUILTINS};
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
    let math = BUILTINS.iter().filter_map(|row| match row.builtin {
        Builtin::Math(function) => Some(function),
        _ => None,
    });
    let types = [ScalarType::F32, ScalarType::F64];
    let functions = math.flat_map(|function| types.map(|ty| library.function_name(function, ty).0));
    // Float `%` calls `fmod` where the backend's `frem` is inexact.
    let remainders = types.map(|ty| library.remainder_name(ty));
    functions.chain(remainders).collect()
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
    let cache_file = cache_file(path, &roots);
    let cached = cache_file
        .as_ref()
        .and_then(|file| std::fs::read(file).ok())
        .and_then(cached_bitcode);
    let bitcode = match cached {
        Some(bytes) => bytes,
        None => {
            let bytes = extract(path, &roots)?;
            if let Some(file) = &cache_file {
                store(file, &cache_contents(&bytes));
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

/// The end of a cache file: the bitcode's FNV-1a hash (8 bytes, little-endian), then this.
const CACHE_FOOTER_MAGIC: &[u8; 8] = b"KDSLSUB1";

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &byte in bytes {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// The bitcode of a cache file, if the file is whole: it ends with the footer and the hash of
/// the bitcode before it matches (a truncated or damaged file misses and is rebuilt). Checking
/// a hash costs microseconds where parsing the subset to validate it took tens of milliseconds
/// in every process.
fn cached_bitcode(mut file: Vec<u8>) -> Option<Vec<u8>> {
    let footer = 8 + CACHE_FOOTER_MAGIC.len();
    if file.len() < footer || !file.ends_with(CACHE_FOOTER_MAGIC) {
        return None;
    }
    let bitcode_length = file.len() - footer;
    let stored = u64::from_le_bytes(file[bitcode_length..bitcode_length + 8].try_into().ok()?);
    file.truncate(bitcode_length);
    (file.starts_with(b"BC\xC0\xDE") && fnv1a(&file) == stored).then_some(file)
}

/// The cache file's contents for `bitcode`: the bitcode, its hash and the footer magic.
fn cache_contents(bitcode: &[u8]) -> Vec<u8> {
    let mut contents = Vec::with_capacity(bitcode.len() + 16);
    contents.extend_from_slice(bitcode);
    contents.extend_from_slice(&fnv1a(bitcode).to_le_bytes());
    contents.extend_from_slice(CACHE_FOOTER_MAGIC);
    contents
}

fn cache_directory() -> Option<PathBuf> {
    let from = |variable: &str| std::env::var_os(variable).filter(|v| !v.is_empty());
    from(kdsl_bundle::environment::CACHE_DIR)
        .map(PathBuf::from)
        .or_else(|| from("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("kdsl")))
        .or_else(|| from("HOME").map(|d| PathBuf::from(d).join(".cache/kdsl")))
}

/// The cache file of the library at `path`: its name hashes the path, size and modification
/// time, kdsl's version, the LLVM major version and the functions kept, so a changed library,
/// kdsl or set of callable functions (a new built-in) misses.
fn cache_file(path: &Path, roots: &HashSet<String>) -> Option<PathBuf> {
    let metadata = std::fs::metadata(path).ok()?;
    let modified = metadata
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    let mut names: Vec<&str> = roots.iter().map(String::as_str).collect();
    names.sort_unstable();
    let key = format!(
        "{}\n{}\n{}\n{}\nllvm22\nfooter {}\n{}\n",
        std::fs::canonicalize(path).ok()?.display(),
        metadata.len(),
        modified.as_nanos(),
        env!("CARGO_PKG_VERSION"),
        String::from_utf8_lossy(CACHE_FOOTER_MAGIC),
        names.join(" "),
    );
    let hash = fnv1a(key.as_bytes());
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
