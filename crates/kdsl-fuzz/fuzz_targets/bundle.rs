//! Arbitrary bytes through bundle loading: `Bundle::from_bytes`, the SYCLBIN reader and
//! `Bundle::read`'s choice between them, every accessor, checksums, write/read round trips and
//! the SYCLBIN the SYCL backend writes (`kdsl_bundle::fuzzing::run_bundle_input`, which
//! `crates/kdsl-bundle/tests/fuzz_corpus.rs` replays on the committed corpus); then the
//! runtime's device-independent step, choosing the image each kind of device would load.
#![no_main]

use kdsl_runtime::image::select_image;
use kdsl_runtime::{DeviceTarget, TargetKind};
use libfuzzer_sys::fuzz_target;

/// Devices of every backend: SPIR-V (plain, and Intel GPUs with matrix engines), several CUDA compute capabilities, AMD processors with and
/// without target features, one with an unknown processor.
fn devices(bundle: &kdsl_runtime::Bundle) -> Vec<DeviceTarget> {
    let mut devices = vec![DeviceTarget::Spirv];
    for family in ["intel_gpu_pvc", "intel_gpu_dg2"] {
        devices.push(DeviceTarget::IntelGpu {
            family: family.into(),
        });
    }
    for (major, minor) in [(0, 0), (5, 0), (7, 5), (8, 0), (9, 0), (10, 0), (12, 1)] {
        devices.push(DeviceTarget::Ptx { major, minor });
    }
    for arch in [
        "gfx90a",
        "gfx90a:sramecc+:xnack-",
        "gfx942:xnack+",
        "gfx1100",
        "gfx1201",
        "",
        ":",
        "gfx9-generic",
    ] {
        devices.push(DeviceTarget::Amdgpu { arch: arch.into() });
    }
    // The bundle's own architectures, as a device of that kind would report them.
    for image in &bundle.images {
        match image.target {
            TargetKind::Amdgpu => devices.push(DeviceTarget::Amdgpu {
                arch: image.arch.clone(),
            }),
            TargetKind::Ptx => {
                if let Some((major, minor, _)) = kdsl_runtime::image::parse_sm(&image.arch) {
                    devices.push(DeviceTarget::Ptx { major, minor });
                }
            }
            TargetKind::Spirv => {}
        }
    }
    devices
}

fn expected_kind(device: &DeviceTarget) -> TargetKind {
    match device {
        DeviceTarget::Spirv | DeviceTarget::IntelGpu { .. } => TargetKind::Spirv,
        DeviceTarget::Ptx { .. } => TargetKind::Ptx,
        DeviceTarget::Amdgpu { .. } => TargetKind::Amdgpu,
    }
}

fuzz_target!(|data: &[u8]| {
    let outcome = kdsl_bundle::fuzzing::run_bundle_input(data);
    for bundle in [&outcome.kbundle, &outcome.loaded].into_iter().flatten() {
        for device in devices(bundle) {
            let _ = device.requirement();
            let _ = device.to_string();
            match select_image(bundle, &device) {
                Ok(image) => {
                    assert_eq!(image.target, expected_kind(&device));
                    assert!(bundle.images.iter().any(|i| std::ptr::eq(i, image)));
                }
                Err(error) => {
                    let _ = error.to_string();
                    if device == DeviceTarget::Spirv {
                        assert!(bundle
                            .images_for(TargetKind::Spirv)
                            .all(|image| !image.arch.is_empty()));
                    }
                }
            }
        }
    }
});
