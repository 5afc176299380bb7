//! The on-disk cache of device-native programs: the binary a driver made from a bundle's image,
//! kept so that a later process loads it instead of compiling the image again (on the Intel
//! OpenCL CPU device, building saxpy's SPIR-V takes about 200 ms; loading its binary a few).
//!
//! Where: `KDSL_NATIVE_CACHE_DIR`, else the `native` folder of kdsl's cache (`KDSL_CACHE_DIR`,
//! else `$XDG_CACHE_HOME/kdsl`, else `~/.cache/kdsl`, as the Python package's bundle cache and
//! the compiler's library cache); `KDSL_NATIVE_CACHE=off` (or `0`) turns it off. Used by SYCL
//! devices on OpenCL; other backends build as before (CUDA's driver keeps its own JIT cache).
//!
//! An entry is keyed by the device and its driver (backend, name, vendor, driver and device
//! versions) and by the image's bytes, all written into the file and compared on reading, with
//! a checksum of the binary: a damaged, truncated or foreign file is counted as rejected and
//! ignored (the image is built as without a cache, and the entry written again). Entries are
//! written to a temporary file and renamed into place, so readers never see half a file.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The first bytes of every entry; a new layout gets a new magic.
const MAGIC: &[u8; 12] = b"kdsl-native1";

/// What the native program cache did in this process, for tests and tools.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NativeCacheStats {
    /// Programs made from a cached binary.
    pub hits: u64,
    /// Loads that found no entry.
    pub misses: u64,
    /// Entries found but not used: damaged, of another device or image, or refused by the driver.
    pub rejected: u64,
    /// Entries written.
    pub stores: u64,
}

static HITS: AtomicU64 = AtomicU64::new(0);
static MISSES: AtomicU64 = AtomicU64::new(0);
static REJECTED: AtomicU64 = AtomicU64::new(0);
static STORES: AtomicU64 = AtomicU64::new(0);

/// The counts since the process started.
pub fn stats() -> NativeCacheStats {
    NativeCacheStats {
        hits: HITS.load(Ordering::Relaxed),
        misses: MISSES.load(Ordering::Relaxed),
        rejected: REJECTED.load(Ordering::Relaxed),
        stores: STORES.load(Ordering::Relaxed),
    }
}

/// The folder holding native programs, or None when the cache is off or no folder is known.
pub fn directory() -> Option<PathBuf> {
    let from = |variable: &str| std::env::var_os(variable).filter(|value| !value.is_empty());
    if let Some(setting) = from("KDSL_NATIVE_CACHE") {
        if setting == "off" || setting == "0" {
            return None;
        }
    }
    from("KDSL_NATIVE_CACHE_DIR")
        .map(PathBuf::from)
        .or_else(|| {
            from("KDSL_CACHE_DIR")
                .map(PathBuf::from)
                .or_else(|| from("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("kdsl")))
                .or_else(|| from("HOME").map(|d| PathBuf::from(d).join(".cache/kdsl")))
                .map(|cache| cache.join("native"))
        })
}

/// One entry's identity: the device and driver, and the image the binary was made from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EntryKey {
    text: String,
}

impl EntryKey {
    /// `device` names the device and driver (the SYCL shim's identity lines); `image` is the
    /// image's bytes as given to the driver.
    pub(crate) fn new(device: &str, image: &[u8]) -> EntryKey {
        EntryKey {
            text: format!(
                "{device}\nimage {} bytes {:016x} {:016x}",
                image.len(),
                fnv1a64(image, FNV_OFFSET),
                fnv1a64(image, FNV_OFFSET_ALTERNATE)
            ),
        }
    }

    fn file_name(&self) -> String {
        format!(
            "{:016x}{:016x}.bin",
            fnv1a64(self.text.as_bytes(), FNV_OFFSET),
            fnv1a64(self.text.as_bytes(), FNV_OFFSET_ALTERNATE)
        )
    }
}

/// The cached binary for `key`, if a valid entry exists (counted as a hit only once the caller
/// reports that the driver took it, with [`note_used`] or [`note_refused`]).
pub(crate) fn read(key: &EntryKey) -> Option<Vec<u8>> {
    let path = directory()?.join(key.file_name());
    let Ok(contents) = fs::read(&path) else {
        MISSES.fetch_add(1, Ordering::Relaxed);
        return None;
    };
    let binary = parse(&contents, key);
    if binary.is_none() {
        REJECTED.fetch_add(1, Ordering::Relaxed);
    }
    binary
}

/// The driver made a program from the cached binary.
pub(crate) fn note_used() {
    HITS.fetch_add(1, Ordering::Relaxed);
}

/// The driver refused a cached binary that was intact (another driver build, say).
pub(crate) fn note_refused() {
    REJECTED.fetch_add(1, Ordering::Relaxed);
}

/// Writes (or replaces) the entry for `key`. Failures are ignored: the cache only saves time.
pub(crate) fn write(key: &EntryKey, binary: &[u8]) {
    let Some(folder) = directory() else { return };
    if write_atomically(&folder, &key.file_name(), &entry(key, binary)).is_ok() {
        STORES.fetch_add(1, Ordering::Relaxed);
    }
}

/// Whether an entry for `key` could be used at all (the cache is on).
pub(crate) fn enabled() -> bool {
    directory().is_some()
}

fn entry(key: &EntryKey, binary: &[u8]) -> Vec<u8> {
    let mut contents = Vec::with_capacity(MAGIC.len() + 24 + key.text.len() + binary.len());
    contents.extend_from_slice(MAGIC);
    contents.extend_from_slice(&(key.text.len() as u64).to_le_bytes());
    contents.extend_from_slice(key.text.as_bytes());
    contents.extend_from_slice(&(binary.len() as u64).to_le_bytes());
    contents.extend_from_slice(&fnv1a64(binary, FNV_OFFSET).to_le_bytes());
    contents.extend_from_slice(binary);
    contents
}

/// The binary inside an entry, if the entry is whole and made for `key`.
fn parse<'a>(contents: &'a [u8], key: &EntryKey) -> Option<Vec<u8>> {
    let rest = contents.strip_prefix(MAGIC.as_slice())?;
    let (key_length, rest) = take_u64(rest)?;
    let key_length = usize::try_from(key_length).ok()?;
    if rest.len() < key_length || &rest[..key_length] != key.text.as_bytes() {
        return None;
    }
    let rest: &'a [u8] = &rest[key_length..];
    let (binary_length, rest) = take_u64(rest)?;
    let (checksum, binary) = take_u64(rest)?;
    if binary.len() as u64 != binary_length || binary.is_empty() {
        return None;
    }
    (fnv1a64(binary, FNV_OFFSET) == checksum).then(|| binary.to_vec())
}

fn take_u64(bytes: &[u8]) -> Option<(u64, &[u8])> {
    let (head, rest) = bytes.split_first_chunk::<8>()?;
    Some((u64::from_le_bytes(*head), rest))
}

fn write_atomically(folder: &Path, name: &str, contents: &[u8]) -> std::io::Result<()> {
    fs::create_dir_all(folder)?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.subsec_nanos());
    let temporary = folder.join(format!(".{name}.{}.{nanos}.tmp", std::process::id()));
    let written = fs::File::create(&temporary).and_then(|mut file| {
        file.write_all(contents)?;
        file.sync_all()
    });
    let renamed = written.and_then(|()| fs::rename(&temporary, folder.join(name)));
    if renamed.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    renamed
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
/// A second offset basis, so a key holds two independent 64-bit hashes of the image.
const FNV_OFFSET_ALTERNATE: u64 = 0x6c62_272e_07bb_0142;

fn fnv1a64(bytes: &[u8], offset: u64) -> u64 {
    let mut hash = offset;
    for &byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_reads_back_only_for_its_own_key() {
        let key = EntryKey::new("opencl\ncpu\nIntel\n2026.1\n3.0", b"image bytes");
        let contents = entry(&key, b"binary");
        assert_eq!(parse(&contents, &key), Some(b"binary".to_vec()));
        let other_device = EntryKey::new("opencl\ncpu\nIntel\n2026.2\n3.0", b"image bytes");
        assert_eq!(parse(&contents, &other_device), None);
        let other_image = EntryKey::new("opencl\ncpu\nIntel\n2026.1\n3.0", b"image byteZ");
        assert_eq!(parse(&contents, &other_image), None);
        assert_ne!(key.file_name(), other_image.file_name());
    }

    #[test]
    fn damaged_entries_are_refused() {
        let key = EntryKey::new("device", b"image");
        let contents = entry(&key, b"some binary");
        for cut in 0..contents.len() {
            assert_eq!(parse(&contents[..cut], &key), None, "truncated at {cut}");
        }
        for index in 0..contents.len() {
            let mut flipped = contents.clone();
            flipped[index] ^= 0x40;
            assert_eq!(parse(&flipped, &key), None, "byte {index} flipped");
        }
        let mut longer = contents.clone();
        longer.push(0);
        assert_eq!(parse(&longer, &key), None);
    }
}
