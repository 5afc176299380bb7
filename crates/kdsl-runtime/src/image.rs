//! Choosing the image of a bundle that a device can run.
//!
//! - SYCL devices take the plain SPIR-V image (no processor); an Intel GPU with matrix engines
//!   takes the image built for its family (`spirv:intel_gpu_pvc`, cooperative matrices) where
//!   the bundle has one, and the plain one otherwise. The CPU device never takes such an image
//!   (its compiler cannot build cooperative matrices without AMX).
//! - CUDA devices take the PTX image for the highest `sm_XY` not above the device's compute
//!   capability; the driver JIT-compiles it for the device. An arch-specific `sm_XYa` image is
//!   taken only by a device of exactly that capability, a family-specific `sm_XYf` one by
//!   devices of the same major capability and a minor of Y or more.
//! - HIP devices take the code object whose processor equals the device's (`gfx90a`), ignoring
//!   target features unless both sides state them and they differ (`xnack+` against `xnack-`),
//!   and otherwise a code object for the generic processor of the device's family
//!   (`gfx9-generic`, `gfx9-4-generic`, `gfx10-1-generic`, `gfx10-3-generic`, `gfx11-generic`,
//!   `gfx12-generic`), which needs code object version 6 support in the HIP runtime.

use crate::device::DeviceTarget;
use crate::error::{Result, RuntimeError};
use kdsl_bundle::{Bundle, Image, TargetKind};

pub use kdsl_bundle::processors::amdgpu_generic_for;
use kdsl_bundle::processors::NvidiaArch;

/// `sm_90` → (9, 0, false); `sm_90a` → (9, 0, true): the capability and whether the image is
/// for exactly that capability (`sm_XYf` family images are `false`; see [`NvidiaArch`]).
pub fn parse_sm(arch: &str) -> Option<(u32, u32, bool)> {
    let parsed = NvidiaArch::parse(arch)?;
    Some((
        parsed.major,
        parsed.minor,
        parsed.specificity == kdsl_bundle::processors::NvidiaSpecificity::Exact,
    ))
}

/// Splits `gfx90a:sramecc+:xnack-` into the processor and its stated features.
fn split_amdgpu_arch(arch: &str) -> (&str, Vec<&str>) {
    let mut parts = arch.split(':');
    let processor = parts.next().unwrap_or_default();
    (processor, parts.filter(|p| !p.is_empty()).collect())
}

/// True when no feature is stated with opposite signs on the two sides.
fn features_compatible(image: &[&str], device: &[&str]) -> bool {
    image.iter().all(|feature| {
        let name = feature.trim_end_matches(['+', '-']);
        device
            .iter()
            .all(|other| other.trim_end_matches(['+', '-']) != name || other == feature)
    })
}

/// The SPIR-V image built for no processor.
fn plain_spirv(bundle: &Bundle) -> Option<&Image> {
    bundle
        .images_for(TargetKind::Spirv)
        .find(|image| image.arch.is_empty())
}

/// The image of `bundle` that a device with `target` runs.
pub fn select_image<'b>(bundle: &'b Bundle, target: &DeviceTarget) -> Result<&'b Image> {
    let chosen = match target {
        DeviceTarget::Spirv => plain_spirv(bundle),
        DeviceTarget::IntelGpu { family } => bundle
            .images_for(TargetKind::Spirv)
            .find(|image| kdsl_bundle::processors::intel_gpu_runs(&image.arch, family))
            .or_else(|| plain_spirv(bundle)),
        DeviceTarget::Ptx { major, minor } => bundle
            .images_for(TargetKind::Ptx)
            .filter_map(|image| {
                let arch = NvidiaArch::parse(&image.arch)?;
                // Among equal versions prefer the most specific image: it may use more features.
                arch.runs_on(*major, *minor)
                    .then_some(((arch.major, arch.minor, arch.specificity), image))
            })
            .max_by_key(|(key, _)| *key)
            .map(|(_, image)| image),
        DeviceTarget::Amdgpu { arch } => {
            let (processor, device_features) = split_amdgpu_arch(arch);
            let candidates = || {
                bundle.images_for(TargetKind::Amdgpu).filter(|image| {
                    let (_, image_features) = split_amdgpu_arch(&image.arch);
                    features_compatible(&image_features, &device_features)
                })
            };
            let exact = candidates().find(|image| split_amdgpu_arch(&image.arch).0 == processor);
            exact.or_else(|| {
                let generic = amdgpu_generic_for(processor)?;
                candidates().find(|image| split_amdgpu_arch(&image.arch).0 == generic)
            })
        }
    };
    chosen.ok_or_else(|| RuntimeError::NoMatchingImage {
        bundle_has: bundle.describe_images(),
        device_needs: target.requirement(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundle(images: &[(TargetKind, &str)]) -> Bundle {
        Bundle {
            source_name: "test.krn".into(),
            kernels: Vec::new(),
            constants: Vec::new(),
            images: images
                .iter()
                .map(|(target, arch)| Image {
                    target: *target,
                    arch: arch.to_string(),
                    bytes: arch.as_bytes().to_vec(),
                    matrix_units: false,
                    matrix_groups: false,
                    tile_sub_group_size: None,
                    tensor_maps: Vec::new(),
                })
                .collect(),
            entry_point_prefix: String::new(),
        }
    }

    fn chosen(bundle: &Bundle, target: DeviceTarget) -> Option<String> {
        select_image(bundle, &target).ok().map(Image::describe)
    }

    fn amd(arch: &str) -> DeviceTarget {
        DeviceTarget::Amdgpu { arch: arch.into() }
    }

    #[test]
    fn parses_sm_names() {
        assert_eq!(parse_sm("sm_90"), Some((9, 0, false)));
        assert_eq!(parse_sm("sm_90a"), Some((9, 0, true)));
        assert_eq!(parse_sm("sm_75"), Some((7, 5, false)));
        assert_eq!(parse_sm("sm_120"), Some((12, 0, false)));
        assert_eq!(parse_sm("sm_9"), None);
        assert_eq!(parse_sm("compute_90"), None);
        assert_eq!(parse_sm("sm_x0"), None);
    }

    #[test]
    fn ptx_takes_the_highest_capability_not_above_the_device() {
        let b = bundle(&[
            (TargetKind::Spirv, ""),
            (TargetKind::Ptx, "sm_75"),
            (TargetKind::Ptx, "sm_90"),
            (TargetKind::Ptx, "sm_90a"),
            (TargetKind::Ptx, "sm_100"),
        ]);
        let ptx = |major, minor| DeviceTarget::Ptx { major, minor };
        assert_eq!(chosen(&b, ptx(9, 0)).as_deref(), Some("ptx:sm_90a"));
        assert_eq!(chosen(&b, ptx(8, 9)).as_deref(), Some("ptx:sm_75"));
        assert_eq!(chosen(&b, ptx(12, 0)).as_deref(), Some("ptx:sm_100"));
        assert_eq!(chosen(&b, ptx(7, 0)), None);
        let only_specific = bundle(&[(TargetKind::Ptx, "sm_90a")]);
        assert_eq!(chosen(&only_specific, ptx(10, 0)), None);
        // Blackwell family images: sm_100f runs on 10.0 and 10.3, not on 12.0.
        let family = bundle(&[(TargetKind::Ptx, "sm_90"), (TargetKind::Ptx, "sm_100f")]);
        assert_eq!(chosen(&family, ptx(10, 3)).as_deref(), Some("ptx:sm_100f"));
        assert_eq!(chosen(&family, ptx(10, 0)).as_deref(), Some("ptx:sm_100f"));
        assert_eq!(chosen(&family, ptx(12, 0)).as_deref(), Some("ptx:sm_90"));
        let only_family = bundle(&[(TargetKind::Ptx, "sm_100f")]);
        assert_eq!(
            chosen(&only_family, ptx(10, 3)).as_deref(),
            Some("ptx:sm_100f")
        );
        assert_eq!(chosen(&only_family, ptx(9, 0)), None);
    }

    #[test]
    fn spirv_devices_take_the_spirv_image() {
        let b = bundle(&[(TargetKind::Ptx, "sm_90"), (TargetKind::Spirv, "")]);
        assert_eq!(chosen(&b, DeviceTarget::Spirv).as_deref(), Some("spirv"));
        let only_ptx = bundle(&[(TargetKind::Ptx, "sm_90")]);
        match select_image(&only_ptx, &DeviceTarget::Spirv) {
            Err(RuntimeError::NoMatchingImage {
                bundle_has,
                device_needs,
            }) => {
                assert_eq!(bundle_has, "ptx:sm_90");
                assert_eq!(device_needs, "spirv");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn only_intel_gpus_take_their_cooperative_matrix_images() {
        let both = bundle(&[
            (TargetKind::Spirv, "intel_gpu_pvc"),
            (TargetKind::Spirv, ""),
            (TargetKind::Spirv, "intel_gpu_dg2_g10"),
        ]);
        let intel = |family: &str| DeviceTarget::IntelGpu {
            family: family.into(),
        };
        assert_eq!(chosen(&both, DeviceTarget::Spirv).as_deref(), Some("spirv"));
        assert_eq!(
            chosen(&both, intel("intel_gpu_pvc")).as_deref(),
            Some("spirv:intel_gpu_pvc")
        );
        assert_eq!(
            chosen(&both, intel("intel_gpu_dg2")).as_deref(),
            Some("spirv:intel_gpu_dg2_g10")
        );
        let plain = bundle(&[(TargetKind::Spirv, "")]);
        assert_eq!(
            chosen(&plain, intel("intel_gpu_pvc")).as_deref(),
            Some("spirv")
        );
        // A bundle with only an Intel GPU's image has nothing for the CPU device.
        let only_pvc = bundle(&[(TargetKind::Spirv, "intel_gpu_pvc")]);
        match select_image(&only_pvc, &DeviceTarget::Spirv) {
            Err(RuntimeError::NoMatchingImage { bundle_has, .. }) => {
                assert_eq!(bundle_has, "spirv:intel_gpu_pvc")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn amdgpu_prefers_the_exact_processor_then_its_generic_family() {
        let b = bundle(&[
            (TargetKind::Amdgpu, "gfx9-generic"),
            (TargetKind::Amdgpu, "gfx90a"),
            (TargetKind::Amdgpu, "gfx11-generic"),
            (TargetKind::Amdgpu, "gfx1030"),
        ]);
        assert_eq!(
            chosen(&b, amd("gfx90a:sramecc+:xnack-")).as_deref(),
            Some("amdgpu:gfx90a")
        );
        assert_eq!(
            chosen(&b, amd("gfx906")).as_deref(),
            Some("amdgpu:gfx9-generic")
        );
        assert_eq!(
            chosen(&b, amd("gfx1101")).as_deref(),
            Some("amdgpu:gfx11-generic")
        );
        assert_eq!(
            chosen(&b, amd("gfx1030")).as_deref(),
            Some("amdgpu:gfx1030")
        );
        // gfx1031 is in gfx10-3-generic, which the bundle lacks; gfx1030 code is not taken for it.
        assert_eq!(chosen(&b, amd("gfx1031")), None);
        // gfx908 and gfx942 are not members of gfx9-generic.
        assert_eq!(chosen(&b, amd("gfx908")), None);
        assert_eq!(chosen(&b, amd("gfx942")), None);
        let gfx94 = bundle(&[(TargetKind::Amdgpu, "gfx9-4-generic")]);
        assert_eq!(
            chosen(&gfx94, amd("gfx942:sramecc+:xnack-")).as_deref(),
            Some("amdgpu:gfx9-4-generic")
        );
        let twelve = bundle(&[
            (TargetKind::Amdgpu, "gfx12-generic"),
            (TargetKind::Amdgpu, "gfx10-1-generic"),
        ]);
        assert_eq!(
            chosen(&twelve, amd("gfx1201")).as_deref(),
            Some("amdgpu:gfx12-generic")
        );
        assert_eq!(
            chosen(&twelve, amd("gfx1012")).as_deref(),
            Some("amdgpu:gfx10-1-generic")
        );
    }

    #[test]
    fn amdgpu_rejects_conflicting_target_features() {
        let b = bundle(&[(TargetKind::Amdgpu, "gfx90a:xnack+")]);
        assert_eq!(chosen(&b, amd("gfx90a:sramecc+:xnack-")), None);
        assert_eq!(
            chosen(&b, amd("gfx90a:xnack+")).as_deref(),
            Some("amdgpu:gfx90a:xnack+")
        );
        assert_eq!(
            chosen(&b, amd("gfx90a")).as_deref(),
            Some("amdgpu:gfx90a:xnack+")
        );
    }
}
