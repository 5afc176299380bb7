//! Computes the compiler version string that keys the Python package's on-disk bundle cache.
//!
//! The runtime module must name the compiler's version without linking the compiler (it runs on
//! machines without LLVM), so the version is the crate version plus a hash of every source file
//! the compiler is built from. Any change to the front end, IR, code generator, bundle format or
//! facade gives a new version, and cached bundles of the old one are no longer used.

use std::path::{Path, PathBuf};

const COMPILER_SOURCES: &[&str] = &[
    "grammar",
    "src",
    "build.rs",
    "Cargo.toml",
    "crates/kdsl-frontend/src",
    "crates/kdsl-frontend/build.rs",
    "crates/kdsl-frontend/Cargo.toml",
    "crates/kdsl-ir/src",
    "crates/kdsl-ir/Cargo.toml",
    "crates/kdsl-codegen/src",
    "crates/kdsl-codegen/Cargo.toml",
    "crates/kdsl-bundle/src",
    "crates/kdsl-bundle/Cargo.toml",
];

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let root = manifest.join("../..");
    let mut files = Vec::new();
    for entry in COMPILER_SOURCES {
        let path = root.join(entry);
        println!("cargo:rerun-if-changed={}", path.display());
        collect_files(&path, &mut files);
    }
    files.sort();
    // FNV-1a over each file's path (relative to the repository) and contents.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for &byte in bytes {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    };
    for file in &files {
        let relative = file.strip_prefix(&root).unwrap_or(file);
        feed(relative.to_string_lossy().as_bytes());
        feed(&[0]);
        feed(&std::fs::read(file).unwrap_or_default());
        feed(&[0]);
    }
    println!("cargo:rustc-env=KDSL_COMPILER_SOURCE_HASH={hash:016x}");
}

fn collect_files(path: &Path, files: &mut Vec<PathBuf>) {
    if path.is_dir() {
        if let Ok(entries) = std::fs::read_dir(path) {
            for entry in entries.flatten() {
                collect_files(&entry.path(), files);
            }
        }
    } else if path.is_file() {
        files.push(path.to_path_buf());
    }
}
