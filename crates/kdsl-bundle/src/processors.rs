//! The processors images are built for, and which devices run them. This is the one definition
//! that the compiler (the names it accepts), the runtime (the image a device takes), the CLI and
//! the Python package share, so a name one of them accepts is one the others understand.

use crate::TargetKind;

/// The NVIDIA processors LLVM 22's NVPTX backend knows, from `sm_50` on. `sm_XYa` images use
/// features of exactly that processor; `sm_XYf` ones features of its family (same major).
pub const NVIDIA_PROCESSORS: &[&str] = &[
    "sm_50", "sm_52", "sm_53", "sm_60", "sm_61", "sm_62", "sm_70", "sm_72", "sm_75", "sm_80",
    "sm_86", "sm_87", "sm_88", "sm_89", "sm_90", "sm_90a", "sm_100", "sm_100a", "sm_100f",
    "sm_101", "sm_101a", "sm_101f", "sm_103", "sm_103a", "sm_103f", "sm_110", "sm_110a", "sm_110f",
    "sm_120", "sm_120a", "sm_120f", "sm_121", "sm_121a", "sm_121f",
];

/// The Intel GPUs a SPIR-V image may be built for, in SYCL's `-fsycl-targets` names: ones
/// with matrix engines (XMX), whose images use `SPV_KHR_cooperative_matrix`. A SPIR-V image
/// names no processor otherwise (the device driver finalizes it for any device).
pub const INTEL_GPU_PROCESSORS: &[&str] = &[
    "intel_gpu_pvc",
    "intel_gpu_dg2_g10",
    "intel_gpu_dg2_g11",
    "intel_gpu_dg2_g12",
];

/// The family of kdsl's Intel GPU processors a SYCL device is, from the name its driver
/// reports (SYCL's own `architecture` query is not in kdsl's shim): `intel_gpu_pvc` for Data
/// Center GPU Max, `intel_gpu_dg2` for Arc A-series and Data Center GPU Flex (both Alchemist,
/// DG2); `None` for every other device, which then runs plain SPIR-V only.
pub fn intel_gpu_family(device_name: &str) -> Option<&'static str> {
    if !device_name.starts_with("Intel(R)") {
        None
    } else if device_name.contains("Data Center GPU Max") {
        Some("intel_gpu_pvc")
    } else if ["Arc(TM) A", "Arc(TM) Pro A", "Data Center GPU Flex"]
        .iter()
        .any(|family| device_name.contains(family))
    {
        Some("intel_gpu_dg2")
    } else {
        None
    }
}

/// Whether a SPIR-V image built for Intel GPU `processor` runs on a device of `family`
/// ([`intel_gpu_family`]): `intel_gpu_dg2_g10`, `_g11` and `_g12` all run on DG2 (their
/// matrix engines are the same).
pub fn intel_gpu_runs(processor: &str, family: &str) -> bool {
    INTEL_GPU_PROCESSORS.contains(&processor)
        && (processor == family
            || processor
                .strip_prefix(family)
                .is_some_and(|rest| rest.starts_with('_')))
}

/// `sm_75` (Turing) is the oldest processor current CUDA (13) still compiles for.
pub const DEFAULT_NVIDIA_PROCESSOR: &str = "sm_75";

/// The HSA-capable AMD processors LLVM 22's AMDGPU backend knows, from GCN 3 (gfx8) on.
pub const AMDGPU_PROCESSORS: &[&str] = &[
    "gfx801",
    "gfx802",
    "gfx803",
    "gfx805",
    "gfx810",
    "gfx9-generic",
    "gfx9-4-generic",
    "gfx900",
    "gfx902",
    "gfx904",
    "gfx906",
    "gfx908",
    "gfx909",
    "gfx90a",
    "gfx90c",
    "gfx942",
    "gfx950",
    "gfx10-1-generic",
    "gfx1010",
    "gfx1011",
    "gfx1012",
    "gfx1013",
    "gfx10-3-generic",
    "gfx1030",
    "gfx1031",
    "gfx1032",
    "gfx1033",
    "gfx1034",
    "gfx1035",
    "gfx1036",
    "gfx11-generic",
    "gfx1100",
    "gfx1101",
    "gfx1102",
    "gfx1103",
    "gfx1150",
    "gfx1151",
    "gfx1152",
    "gfx1153",
    "gfx12-generic",
    "gfx1200",
    "gfx1201",
];

/// CDNA2 (MI200), a common HPC part; `gfx9-generic` etc. give wider coverage.
pub const DEFAULT_AMDGPU_PROCESSOR: &str = "gfx90a";

/// The images a bundle gets unless the caller names targets: SPIR-V; PTX for the default
/// processor and for sm_90 (H100, H200); AMDGPU for the default processor and for gfx1100
/// (RDNA3). A processor of `None` is the target's default. `kdsl::default_targets`, `kdsl
/// compile` without `--target`, and Python's `kdsl.DEFAULT_TARGETS` (held equal by a test) all
/// read this list.
pub const DEFAULT_TARGETS: &[(TargetKind, Option<&str>)] = &[
    (TargetKind::Spirv, None),
    (TargetKind::Ptx, None),
    (TargetKind::Ptx, Some("sm_90")),
    (TargetKind::Amdgpu, None),
    (TargetKind::Amdgpu, Some("gfx1100")),
];

/// The processors each AMDGPU generic target covers (LLVM's AMDGPUUsage table).
pub const AMDGPU_GENERIC_FAMILIES: &[(&str, &[&str])] = &[
    (
        "gfx9-generic",
        &["gfx900", "gfx902", "gfx904", "gfx906", "gfx909", "gfx90c"],
    ),
    ("gfx9-4-generic", &["gfx940", "gfx941", "gfx942", "gfx950"]),
    (
        "gfx10-1-generic",
        &["gfx1010", "gfx1011", "gfx1012", "gfx1013"],
    ),
    (
        "gfx10-3-generic",
        &[
            "gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036",
        ],
    ),
    (
        "gfx11-generic",
        &[
            "gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153",
        ],
    ),
    ("gfx12-generic", &["gfx1200", "gfx1201"]),
];

/// The generic AMDGPU processor that covers `processor`, if any.
pub fn amdgpu_generic_for(processor: &str) -> Option<&'static str> {
    AMDGPU_GENERIC_FAMILIES
        .iter()
        .find(|(_, members)| members.contains(&processor))
        .map(|(generic, _)| *generic)
}

/// Which devices an NVIDIA image runs on, by the suffix of its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NvidiaSpecificity {
    /// `sm_XY`: every device of capability X.Y or later.
    Portable,
    /// `sm_XYf`: devices of the same family (major X) of minor Y or later.
    Family,
    /// `sm_XYa`: devices of capability X.Y exactly.
    Exact,
}

/// An NVIDIA processor name taken apart: `sm_100f` is 10.0, family-specific.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NvidiaArch {
    pub major: u32,
    pub minor: u32,
    pub specificity: NvidiaSpecificity,
}

impl NvidiaArch {
    /// `sm_90` → 9.0 portable; `sm_90a` → 9.0 exact; `sm_120f` → 12.0 family; None for
    /// anything else.
    pub fn parse(arch: &str) -> Option<NvidiaArch> {
        let digits = arch.strip_prefix("sm_")?;
        let (digits, specificity) = if let Some(rest) = digits.strip_suffix('a') {
            (rest, NvidiaSpecificity::Exact)
        } else if let Some(rest) = digits.strip_suffix('f') {
            (rest, NvidiaSpecificity::Family)
        } else {
            (digits, NvidiaSpecificity::Portable)
        };
        if digits.len() < 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let (major, minor) = digits.split_at(digits.len() - 1);
        Some(NvidiaArch {
            major: major.parse().ok()?,
            minor: minor.parse().ok()?,
            specificity,
        })
    }

    /// The compute capability as one number: 9.0 → 90, 12.1 → 121.
    pub fn capability(&self) -> u32 {
        self.major * 10 + self.minor
    }

    /// Whether a device of compute capability `major.minor` runs this image.
    pub fn runs_on(&self, major: u32, minor: u32) -> bool {
        match self.specificity {
            NvidiaSpecificity::Portable => (self.major, self.minor) <= (major, minor),
            NvidiaSpecificity::Family => self.major == major && self.minor <= minor,
            NvidiaSpecificity::Exact => (self.major, self.minor) == (major, minor),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_known_nvidia_name_parses() {
        for name in NVIDIA_PROCESSORS {
            assert!(NvidiaArch::parse(name).is_some(), "{name}");
        }
        assert!(NvidiaArch::parse("sm_9").is_none());
        assert!(NvidiaArch::parse("compute_90").is_none());
        assert!(NvidiaArch::parse("sm_x0").is_none());
    }

    #[test]
    fn suffixes_decide_which_devices_run_an_image() {
        let arch = |name| NvidiaArch::parse(name).unwrap();
        assert!(arch("sm_90").runs_on(9, 0) && arch("sm_90").runs_on(12, 0));
        assert!(!arch("sm_90").runs_on(8, 9));
        assert!(arch("sm_90a").runs_on(9, 0) && !arch("sm_90a").runs_on(10, 0));
        assert!(arch("sm_100f").runs_on(10, 0) && arch("sm_100f").runs_on(10, 3));
        assert!(!arch("sm_100f").runs_on(12, 0) && !arch("sm_103f").runs_on(10, 0));
        assert_eq!(arch("sm_121f").capability(), 121);
    }

    #[test]
    fn intel_gpus_are_told_by_name() {
        let family = |name| intel_gpu_family(name);
        assert_eq!(
            family("Intel(R) Data Center GPU Max 1550"),
            Some("intel_gpu_pvc")
        );
        assert_eq!(
            family("Intel(R) Arc(TM) A770 Graphics"),
            Some("intel_gpu_dg2")
        );
        assert_eq!(
            family("Intel(R) Data Center GPU Flex 170"),
            Some("intel_gpu_dg2")
        );
        // Battlemage, Lunar Lake and the CPU device have no images of their own.
        assert_eq!(family("Intel(R) Arc(TM) B580 Graphics"), None);
        assert_eq!(family("Intel(R) Arc(TM) 140V GPU (16GB)"), None);
        assert_eq!(family("Intel(R) Xeon(R) Platinum 8480+"), None);
        assert!(intel_gpu_runs("intel_gpu_pvc", "intel_gpu_pvc"));
        assert!(intel_gpu_runs("intel_gpu_dg2_g11", "intel_gpu_dg2"));
        assert!(!intel_gpu_runs("intel_gpu_pvc", "intel_gpu_dg2"));
        assert!(!intel_gpu_runs("intel_gpu_dg2_g10", "intel_gpu_pvc"));
        assert!(!intel_gpu_runs("", "intel_gpu_pvc"));
    }

    #[test]
    fn default_targets_name_known_processors_once() {
        for (index, (kind, processor)) in DEFAULT_TARGETS.iter().enumerate() {
            match (kind, processor) {
                (TargetKind::Spirv, processor) => assert_eq!(*processor, None),
                (TargetKind::Ptx, Some(name)) => assert!(NVIDIA_PROCESSORS.contains(name)),
                (TargetKind::Amdgpu, Some(name)) => assert!(AMDGPU_PROCESSORS.contains(name)),
                (_, None) => {}
            }
            assert!(!DEFAULT_TARGETS[..index].contains(&(*kind, *processor)));
        }
        assert!(TargetKind::ALL
            .iter()
            .all(|kind| DEFAULT_TARGETS.iter().any(|(target, _)| target == kind)));
    }

    #[test]
    fn generic_families_name_known_processors() {
        for (generic, members) in AMDGPU_GENERIC_FAMILIES {
            assert!(AMDGPU_PROCESSORS.contains(generic), "{generic}");
            for member in *members {
                // gfx940 and gfx941 left LLVM 22's list; the runtime still maps them.
                if !["gfx940", "gfx941"].contains(member) {
                    assert!(AMDGPU_PROCESSORS.contains(member), "{member}");
                }
            }
        }
        assert_eq!(amdgpu_generic_for("gfx1101"), Some("gfx11-generic"));
        assert_eq!(amdgpu_generic_for("gfx90a"), None);
    }
}
