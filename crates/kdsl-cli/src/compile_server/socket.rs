//! Where the compile server listens. The socket's name hashes the `kdsl` executable's identity
//! (path, size, modification time, inode) and the compiler environment (the variables code
//! generation reads), so a rebuilt `kdsl` or another environment never reaches an old server.
//! It lives in a folder only this user may use: `$XDG_RUNTIME_DIR/kdsl`, else `kdsl-<uid>` in
//! the temporary folder; when that name is taken by something else (another user made it
//! first, or it is open to others), in `kdsl-<uid>-<random>` there.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Whether finding the socket may create its folder (a command looking for a server does not:
/// without the folder there is none).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Folder {
    Create,
    Existing,
}

/// The socket of the server for this executable and compiler environment.
pub(super) fn socket_path(folder: Folder) -> Result<PathBuf, String> {
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

/// The socket folder: the usual one if it is this user's alone, else the first private
/// `kdsl-<uid>-*` folder in the temporary folder, else (when `folder` allows) a new one there.
fn socket_directory(folder: Folder) -> Result<PathBuf, String> {
    let uid = std::fs::metadata("/proc/self")
        .map_err(|e| format!("error: cannot read /proc/self: {e}"))?
        .uid();
    let usual = match std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        Some(runtime) => PathBuf::from(runtime).join("kdsl"),
        None => std::env::temp_dir().join(format!("kdsl-{uid}")),
    };
    if folder == Folder::Create {
        let _ = std::fs::DirBuilder::new().mode(0o700).create(&usual);
    }
    // Without the usual folder no server runs (nor is there a reason to look further).
    let taken = std::fs::symlink_metadata(&usual)
        .map_err(|e| format!("error: cannot use `{}`: {e}", usual.display()))?;
    if is_private(&taken, uid) {
        return Ok(usual);
    }
    let temporary = std::env::temp_dir();
    let prefix = format!("kdsl-{uid}-");
    let mut private: Vec<PathBuf> = std::fs::read_dir(&temporary)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|entry| entry.file_name().as_bytes().starts_with(prefix.as_bytes()))
        .filter(|entry| {
            std::fs::symlink_metadata(entry.path()).is_ok_and(|found| is_private(&found, uid))
        })
        .map(|entry| entry.path())
        .collect();
    private.sort();
    if let Some(first) = private.into_iter().next() {
        return Ok(first);
    }
    let refusal = format!(
        "error: `{}` is not a folder only this user may use, and no other folder for the compile server was found",
        usual.display()
    );
    if folder == Folder::Existing {
        return Err(refusal);
    }
    for _ in 0..16 {
        let candidate = temporary.join(format!("{prefix}{:016x}", random_number()));
        if std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&candidate)
            .is_ok()
            && std::fs::symlink_metadata(&candidate).is_ok_and(|made| is_private(&made, uid))
        {
            return Ok(candidate);
        }
    }
    Err(refusal)
}

/// A folder (not a link to one) that `uid` owns and nobody else may enter.
fn is_private(metadata: &std::fs::Metadata, uid: u32) -> bool {
    metadata.is_dir() && metadata.uid() == uid && metadata.permissions().mode() & 0o077 == 0
}

/// A number nobody can guess beforehand (std's hash keys are random per process).
fn random_number() -> u64 {
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| since.as_nanos()),
    );
    hasher.finish()
}

/// The socket's device and inode, to tell it from a later server's socket of the same name.
pub(super) fn socket_identity(socket: &Path) -> Option<(u64, u64)> {
    std::fs::symlink_metadata(socket)
        .ok()
        .map(|metadata| (metadata.dev(), metadata.ino()))
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
