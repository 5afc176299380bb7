//! The on-disk native program cache on SYCL OpenCL devices: a fresh device instance (its own
//! SYCL context, as in a new process) loads the binary the first one stored; a damaged entry
//! is refused, the image built from SPIR-V again, and the entry written anew.

mod common;

use kdsl_runtime::{args, native_cache, BackendKind, Device, Launch, NativeCacheStats};
use std::path::{Path, PathBuf};

/// The only test of this binary: it sets the cache folder before any device exists.
#[test]
fn a_native_program_is_stored_reused_and_rewritten_when_damaged() {
    let folder =
        std::env::temp_dir().join(format!("kdsl-native-cache-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&folder);
    std::env::set_var("KDSL_NATIVE_CACHE_DIR", &folder);
    std::env::remove_var("KDSL_NATIVE_CACHE");
    assert_eq!(native_cache::directory(), Some(folder.clone()));
    let opencl = kdsl_runtime::devices()
        .into_iter()
        .find(|info| info.backend == BackendKind::Sycl && info.platform_backend == "opencl");
    let Some(opencl) = opencl else {
        eprintln!("skipped: no SYCL device on OpenCL here");
        return;
    };
    let filter = opencl.id();
    let bundle = common::handmade_bundle();

    // First load: nothing cached, built from SPIR-V, stored.
    let device = Device::select(&filter).expect("the OpenCL device opens");
    run_saxpy(&device.load(&bundle).expect("the bundle loads"), &device);
    assert_eq!(native_cache::stats(), stats(0, 1, 0, 1));
    let entry = only_entry(&folder);
    let stored = std::fs::read(&entry).unwrap();

    // A new device instance takes the stored binary, and its kernels run.
    let device = Device::select(&filter).unwrap();
    let program = device.load(&bundle).unwrap();
    assert_eq!(native_cache::stats(), stats(1, 1, 0, 1));
    run_saxpy(&program, &device);
    assert!(program.kernel("no_such_kernel").is_err());

    // A damaged entry (one byte of the binary flipped) is refused and written again.
    let mut damaged = stored.clone();
    let middle = damaged.len() - 10;
    damaged[middle] ^= 0x55;
    std::fs::write(&entry, &damaged).unwrap();
    let device = Device::select(&filter).unwrap();
    run_saxpy(&device.load(&bundle).unwrap(), &device);
    assert_eq!(native_cache::stats(), stats(1, 1, 1, 2));
    assert_eq!(std::fs::read(&entry).unwrap().len(), stored.len());

    // A truncated one and a file of garbage too; each time the next instance hits again.
    for contents in [
        stored[..stored.len() / 2].to_vec(),
        b"not a cache entry".to_vec(),
    ] {
        std::fs::write(&entry, &contents).unwrap();
        let before = native_cache::stats();
        let device = Device::select(&filter).unwrap();
        run_saxpy(&device.load(&bundle).unwrap(), &device);
        let after = native_cache::stats();
        assert_eq!(
            (after.rejected, after.stores),
            (before.rejected + 1, before.stores + 1)
        );
        let device = Device::select(&filter).unwrap();
        run_saxpy(&device.load(&bundle).unwrap(), &device);
        assert_eq!(native_cache::stats().hits, after.hits + 1);
    }
    assert_eq!(
        only_entry(&folder),
        entry,
        "no temporary files are left behind"
    );
    let _ = std::fs::remove_dir_all(&folder);
}

fn stats(hits: u64, misses: u64, rejected: u64, stores: u64) -> NativeCacheStats {
    NativeCacheStats {
        hits,
        misses,
        rejected,
        stores,
    }
}

fn only_entry(folder: &Path) -> PathBuf {
    let entries: Vec<PathBuf> = std::fs::read_dir(folder)
        .expect("the cache folder exists")
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(entries.len(), 1, "one entry expected: {entries:?}");
    entries.into_iter().next().unwrap()
}

fn run_saxpy(program: &kdsl_runtime::Program, device: &Device) {
    let kernel = program.kernel("saxpy").expect("saxpy is in the program");
    let n = 1000u32;
    let x = device.buffer_from(&vec![2.0f32; n as usize]).unwrap();
    let mut y = device.buffer_from(&vec![1.0f32; n as usize]).unwrap();
    kernel
        .launch(
            &Launch::covering(n as usize, 64),
            &args![&mut y, &x, 3.0f32, n],
        )
        .unwrap()
        .wait()
        .unwrap();
    assert_eq!(y.read_to_vec().unwrap(), vec![7.0f32; n as usize]);
}
