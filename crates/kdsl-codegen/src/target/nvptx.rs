//! PTX for the CUDA driver: `nvptx64-nvidia-cuda`, one `sm_XX` processor per image.
//!
//! Kernels use the `ptx_kernel` calling convention (LLVM 22 no longer needs
//! `nvvm.annotations`). Both `global` and `constant` buffers are global-space pointers;
//! read-only ones are `readonly noalias`, so loads become `ld.global.nc`. Math functions
//! come from libdevice (`__nv_sinf`), or from libclc when libdevice is not installed.

use super::{
    calling_convention, AddressSpaces, BarrierLowering, FeatureSupport, FenceLowering,
    LaneIdSource, Legalization, LocalParameterLowering, OutputFormat, PrintfLowering,
    RequiredWorkGroupSize, ShufflePrimitive, SizeFormat, SubGroupLowering, SyncScopes,
    TargetDescription, VotePrimitive, WorkGroupLowering, WorkItemLowering,
};
use crate::library::{
    first_existing, in_python_site_packages, kdsl_prefix, libclc_file, LibraryNaming, MathLibrary,
};
use kdsl_bundle::TargetKind;
use std::path::PathBuf;

pub use kdsl_bundle::processors::{
    DEFAULT_NVIDIA_PROCESSOR as DEFAULT_ARCH, NVIDIA_PROCESSORS as KNOWN_ARCHES,
};

/// The one processor with `wgmma`, which matrix-group statements reach (Blackwell has other
/// instructions); every other PTX processor runs their plain definition.
pub const WGMMA_PROCESSOR: &str = "sm_90a";

/// The static shared memory one kernel may declare (48 KiB on every processor).
const MAX_STATIC_SHARED_BYTES: u64 = 48 * 1024;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// libdevice.10.bc; when `None`, `$KDSL_LIBDEVICE`, the kdsl prefix, CUDA's usual
    /// places, and finally libclc's `nvptx64--nvidiacl.bc` (`$KDSL_LIBCLC_DIR`, `/usr/lib/clc`)
    /// are searched.
    pub libdevice: Option<PathBuf>,
    /// Copy tiles without tensor maps on sm_90a too (`async_tile_copy` shared out as plain
    /// loads and stores): for images whose host does not make tensor maps, the PTX of SYCLBIN
    /// files that SYCL programs launch. Default false.
    pub plain_tile_copies: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("unknown NVIDIA processor `{0}`; expected one of {known}", known = KNOWN_ARCHES.join(", "))]
    UnknownArch(String),
    #[error("the libdevice file `{0}` given in the options does not exist")]
    LibdeviceNotFound(String),
    #[error("no math library for PTX: libdevice.10.bc was not found (set KDSL_LIBDEVICE or run scripts/setup.sh) and libclc's nvptx64--nvidiacl.bc is missing")]
    NoMathLibrary,
}

/// NVPTX's process-wide options, read when a target machine is created: local (shared)
/// memory addressed in 32 bits, as nvcc does, so a local index costs 32-bit arithmetic and
/// constant offsets fold into the instruction (`[%r1+4096]`), where 64-bit addresses of
/// a zero-extended index cost a widening and 64-bit adds per access.
pub(crate) fn backend_options() -> Vec<String> {
    vec!["--nvptx-short-ptr".to_string()]
}

/// The compute capability of `sm_XY[a|f]` as `XY`.
fn compute_capability(arch: &str) -> Option<u32> {
    kdsl_bundle::processors::NvidiaArch::parse(arch).map(|arch| arch.capability())
}

/// PTX features beyond the processor's default PTX version: LLVM gives sm_72 PTX 6.1, whose
/// `wmma` lacks the integer shapes sm_72 introduced (PTX 6.3 has them; sm_75 defaults to it).
fn ptx_features(capability: u32) -> &'static str {
    if capability == 72 {
        "+ptx63"
    } else {
        ""
    }
}

pub(crate) fn describe(arch: &str, options: &Options) -> Result<TargetDescription, Error> {
    if !KNOWN_ARCHES.contains(&arch) {
        return Err(Error::UnknownArch(arch.to_string()));
    }
    let capability = compute_capability(arch).ok_or_else(|| Error::UnknownArch(arch.into()))?;
    Ok(TargetDescription {
        kind: TargetKind::Ptx,
        arch: arch.to_string(),
        triple: "nvptx64-nvidia-cuda",
        cpu: arch.to_string(),
        cpu_features: ptx_features(capability).to_string(),
        address_spaces: AddressSpaces {
            global: 1,
            constant: 1,
            local: 3,
            private: 0,
        },
        kernel_calling_convention: calling_convention::PTX_KERNEL,
        device_calling_convention: calling_convention::C,
        work_items: WorkItemLowering::NvvmSpecialRegisters,
        barrier: BarrierLowering::NvvmBarrier,
        device_fence: FenceLowering::LlvmFence,
        sub_groups: SubGroupLowering::Shuffles {
            lane_id: LaneIdSource::NvvmLaneId,
            shuffle: ShufflePrimitive::NvvmShflSync,
            vote: VotePrimitive::NvvmVoteSync,
            size: 32,
        },
        work_groups: WorkGroupLowering::SubGroupsAndLocalMemory,
        local_parameters: LocalParameterLowering::DynamicOffset,
        printf: PrintfLowering::Vprintf { strings: 1 },
        math_library: math_library(options)?,
        sync_scopes: SyncScopes {
            device: "device",
            work_group: "block",
        },
        features: FeatureSupport {
            half: capability >= 53,
            double: true,
            float_atomic_add: true,
            double_atomic_add: capability >= 60,
            int64_atomics: true,
            sub_groups: true,
            max_local_memory_bytes: Some(MAX_STATIC_SHARED_BYTES),
            max_private_memory_bytes: None,
            max_work_group_size: Some(1024),
            // The `.param` space every CUDA driver and processor accepts (Volta and CUDA 12.1
            // on allow 32764 bytes, older ones not).
            max_parameter_bytes: Some(4096),
        },
        // libdevice asks `__nvvm_reflect("__CUDA_FTZ")`: keep denormals, as nvcc does by default.
        module_flags: vec![("nvvm-reflect-ftz", 0)],
        atomic_metadata: Vec::new(),
        kernel_attributes: Vec::new(),
        // LLVM 22 writes `.reqntid x, y, z` for this attribute (it replaced the `reqntidx`
        // entries of `nvvm.annotations`).
        required_work_group_size: RequiredWorkGroupSize {
            metadata: false,
            attributes: vec![("nvvm.reqntid", SizeFormat::Dimensions)],
        },
        legalization: Legalization {
            narrow_abs_behind_copy: Some("mov.b32 $0, $1;"),
            negate_narrow_in_assembly: Some("neg.s32 $0, $1;"),
            compare_narrow_min_max_operand_directly: true,
            ..Legalization::default()
        },
        output: OutputFormat::PtxAssembly,
        matrix_units: crate::target::MatrixUnits::NvvmWmma { capability },
        plain_tile_lanes: None,
        matrix_groups: if arch == WGMMA_PROCESSOR {
            crate::target::MatrixGroups::Wgmma
        } else if capability >= 80 {
            crate::target::MatrixGroups::MmaSync
        } else {
            crate::target::MatrixGroups::Plain
        },
        async_copies: if capability >= 80 {
            crate::target::AsyncCopies::NvvmCpAsync
        } else {
            crate::target::AsyncCopies::Plain
        },
        tile_copies: if arch == WGMMA_PROCESSOR && !options.plain_tile_copies {
            crate::target::TileCopies::TensorMaps
        } else {
            crate::target::TileCopies::Plain
        },
        bf16_rounding: if capability >= 80 {
            crate::target::Bf16Rounding::NativeFptrunc
        } else {
            crate::target::Bf16Rounding::Integer
        },
    })
}

fn math_library(options: &Options) -> Result<MathLibrary, Error> {
    let libdevice = "nvidia/cu13/nvvm/libdevice/libdevice.10.bc";
    if let Some(path) = &options.libdevice {
        if !path.is_file() {
            return Err(Error::LibdeviceNotFound(path.display().to_string()));
        }
        return Ok(MathLibrary {
            naming: LibraryNaming::Libdevice,
            bitcode: Some(path.clone()),
        });
    }
    let mut candidates: Vec<PathBuf> = Vec::new();
    candidates.extend(std::env::var_os(kdsl_bundle::environment::LIBDEVICE).map(PathBuf::from));
    if let Some(prefix) = kdsl_prefix() {
        candidates.extend(in_python_site_packages(&prefix, libdevice));
    }
    if let Some(cuda) = std::env::var_os("CUDA_PATH").or_else(|| std::env::var_os("CUDA_HOME")) {
        candidates.push(PathBuf::from(cuda).join("nvvm/libdevice/libdevice.10.bc"));
    }
    candidates.push("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc".into());
    candidates.push("/usr/lib/nvidia-cuda-toolkit/libdevice/libdevice.10.bc".into());
    if let Some(path) = first_existing(candidates) {
        return Ok(MathLibrary {
            naming: LibraryNaming::Libdevice,
            bitcode: Some(path),
        });
    }
    let libclc = libclc_file("nvptx64--nvidiacl.bc");
    if libclc.is_file() {
        return Ok(MathLibrary {
            naming: LibraryNaming::OpenCl,
            bitcode: Some(libclc),
        });
    }
    Err(Error::NoMathLibrary)
}
