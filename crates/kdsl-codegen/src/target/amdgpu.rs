//! AMDGPU HSA code objects for HIP: `amdgcn-amd-amdhsa`, one `gfxNNN` (or generic
//! `gfxN-generic`) processor per image, linked by lld (`-shared`).
//!
//! Kernels use `amdgpu_kernel`; `constant` buffers live in address space 4 and private
//! memory in 5. Work-group and grid sizes come from the HSA dispatch packet. Sub-groups are
//! wavefronts (64 lanes before gfx10, 32 from gfx10 on). Math functions come from libclc.
//! Generic processors need code object version 6; specific ones get version 5.
//! Atomics carry `amdgpu.no.fine.grained.memory` and `amdgpu.no.remote.memory`: kdsl
//! buffers are device allocations, so native float atomics are correct (as in HIP).

use super::{
    calling_convention, AddressSpaces, AmdgpuLinker, AmdgpuMatrixInstruction, BarrierLowering,
    FeatureSupport, FenceLowering, LaneIdSource, Legalization, LocalParameterLowering, MatrixUnits,
    OutputFormat, PrintfLowering, RequiredWorkGroupSize, ShufflePrimitive, SizeFormat,
    SubGroupLowering, SyncScopes, TargetDescription, VotePrimitive, WorkGroupLowering,
    WorkItemLowering,
};
use crate::library::{libclc_file, LibraryNaming, MathLibrary};
use kdsl_bundle::TargetKind;
use std::path::PathBuf;

pub use kdsl_bundle::processors::{
    AMDGPU_PROCESSORS as KNOWN_ARCHES, DEFAULT_AMDGPU_PROCESSOR as DEFAULT_ARCH,
};

/// LDS one work-group may use on every processor listed.
const MAX_LDS_BYTES: u64 = 64 * 1024;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// The linker program; when `None`, lld in process where this build has it (see the
    /// build script), else `ld.lld-22` or `ld.lld` in `PATH` or LLVM 22's `bin`.
    pub linker: Option<PathBuf>,
    /// libclc's `amdgcn-amd-amdhsa.bc`; when `None`, the one in `$KDSL_LIBCLC_DIR`, else
    /// `/usr/lib/clc/amdgcn-amd-amdhsa.bc`.
    pub libclc: Option<PathBuf>,
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("unknown AMD GPU processor `{0}`; expected one of {known}", known = KNOWN_ARCHES.join(", "))]
    UnknownArch(String),
    #[error("ld.lld (LLVM 22's linker) was not found in PATH or /usr/lib/llvm-22/bin; it links AMDGPU code objects (install lld-22, see scripts/setup.sh)")]
    LinkerNotFound,
    #[error("linking the AMDGPU code object with `{linker}` failed: {message}")]
    LinkFailed { linker: String, message: String },
    #[error("libclc for AMDGPU (`{0}`) was not found; it provides math functions (install libclc-22, see scripts/setup.sh)")]
    LibclcNotFound(String),
}

/// Whether the processor runs 32-lane wavefronts by default (RDNA, gfx10 and later).
/// A work-item's share of the most scratch memory a wavefront may have: the size field of
/// `COMPUTE_TMPRING_SIZE` (13 bits of 1 KiB before gfx11, 15 bits of 256 bytes on gfx11, 18 on
/// gfx12) over the lanes. LLVM's backend fails on a kernel that needs more.
fn max_scratch_bytes(arch: &str) -> u64 {
    let wave = if arch.starts_with("gfx12") {
        256 * ((1 << 18) - 1)
    } else if arch.starts_with("gfx11") {
        256 * ((1 << 15) - 1)
    } else {
        1024 * ((1 << 13) - 1)
    };
    let lanes = if is_wave32(arch) { 32 } else { 64 };
    wave / lanes
}

fn is_wave32(arch: &str) -> bool {
    arch.starts_with("gfx1") && !arch.starts_with("gfx1-")
}

/// LLVM `-mattr` for `arch`. From gfx11 on, LLVM 22 defaults to true 16-bit registers, and its
/// post-RA pseudo expansion then crashes (SIGSEGV) on some `f16` code (`(x as f16) % (x as
/// f16)`); kdsl keeps 16-bit values in 32-bit registers there ("fake16"), LLVM's default up to
/// LLVM 20, which computes the same values.
fn cpu_features(arch: &str) -> &'static str {
    if arch.starts_with("gfx11") || arch.starts_with("gfx12") {
        "-real-true16"
    } else {
        ""
    }
}

/// The matrix instructions of `arch`: MFMA on CDNA (gfx908, gfx90a, gfx94x, gfx950 and their
/// generic `gfx9-4-generic`), WMMA on RDNA3 (gfx11, wave32). Other processors (gfx8 to gfx10,
/// `gfx9-generic`, gfx12) and missing shapes take the plain lowering. tf32 tiles use xf32 MFMA
/// where it exists (gfx942 only), else f32 MFMA on inputs rounded to tf32 (exact: the rounded
/// products fit `f32`); RDNA3 has no tf32 or f32 unit. `i8` tiles use the k16 integer MFMA
/// where it exists (gfx908, gfx90a), else the k32 one half filled; MFMA has no `u8`, RDNA3's
/// WMMA does both. `bf16` tiles use the k16 MFMA (`bf16_1k`), which gfx908 lacks, and RDNA3's
/// WMMA.
fn matrix_units(arch: &str) -> MatrixUnits {
    use AmdgpuMatrixInstruction::*;
    let cdna = ["gfx908", "gfx90a", "gfx942", "gfx950", "gfx9-4-generic"].contains(&arch);
    if cdna {
        let tf32 = if arch == "gfx942" {
            Mfma16x16x8Xf32
        } else {
            Mfma16x16x4F32
        };
        let i8 = if ["gfx908", "gfx90a"].contains(&arch) {
            Mfma16x16x16I8
        } else {
            Mfma16x16x32I8
        };
        MatrixUnits::Amdgpu {
            f16: Some(Mfma16x16x16F16),
            tf32: Some(tf32),
            i8: Some(i8),
            u8: None,
            bf16: (arch != "gfx908").then_some(Mfma16x16x16Bf16),
        }
    } else if arch.starts_with("gfx11") {
        MatrixUnits::Amdgpu {
            f16: Some(Wmma16x16x16F16Wave32),
            tf32: None,
            i8: Some(Wmma16x16x16Iu8Wave32),
            u8: Some(Wmma16x16x16Iu8Wave32),
            bf16: Some(Wmma16x16x16Bf16Wave32),
        }
    } else {
        MatrixUnits::Plain
    }
}

pub(crate) fn describe(arch: &str, options: &Options) -> Result<TargetDescription, Error> {
    if !KNOWN_ARCHES.contains(&arch) {
        return Err(Error::UnknownArch(arch.to_string()));
    }
    let linker = match &options.linker {
        Some(linker) => AmdgpuLinker::Program(linker.clone()),
        None if crate::linker::in_process_available() => AmdgpuLinker::InProcess,
        None => AmdgpuLinker::Program(
            super::find_tool(&["ld.lld-22", "ld.lld"]).ok_or(Error::LinkerNotFound)?,
        ),
    };
    let libclc = options
        .libclc
        .clone()
        .unwrap_or_else(|| libclc_file("amdgcn-amd-amdhsa.bc"));
    if !libclc.is_file() {
        return Err(Error::LibclcNotFound(libclc.display().to_string()));
    }
    let code_object_version = if arch.ends_with("-generic") { 600 } else { 500 };
    Ok(TargetDescription {
        kind: TargetKind::Amdgpu,
        arch: arch.to_string(),
        triple: "amdgcn-amd-amdhsa",
        cpu: arch.to_string(),
        cpu_features: cpu_features(arch).to_string(),
        address_spaces: AddressSpaces {
            global: 1,
            constant: 4,
            local: 3,
            private: 5,
        },
        kernel_calling_convention: calling_convention::AMDGPU_KERNEL,
        device_calling_convention: calling_convention::C,
        work_items: WorkItemLowering::AmdgpuDispatchPacket,
        barrier: BarrierLowering::AmdgpuFencedBarrier,
        device_fence: FenceLowering::LlvmFence,
        sub_groups: SubGroupLowering::Shuffles {
            lane_id: LaneIdSource::AmdgpuMbcnt,
            shuffle: ShufflePrimitive::AmdgpuDsBpermute,
            vote: VotePrimitive::AmdgpuBallot,
            size: if is_wave32(arch) { 32 } else { 64 },
        },
        work_groups: WorkGroupLowering::SubGroupsAndLocalMemory,
        local_parameters: LocalParameterLowering::DynamicOffset,
        printf: PrintfLowering::OpenClPrintf {
            function: "printf",
            strings: 4,
            support: Some(PRINTF_ALLOC),
            constant_strings_only: true,
        },
        math_library: MathLibrary {
            naming: LibraryNaming::OpenCl,
            bitcode: Some(libclc),
        },
        sync_scopes: SyncScopes {
            device: "agent",
            work_group: "workgroup",
        },
        features: FeatureSupport {
            half: true,
            double: true,
            float_atomic_add: true,
            double_atomic_add: true,
            int64_atomics: true,
            sub_groups: true,
            max_local_memory_bytes: Some(MAX_LDS_BYTES),
            max_private_memory_bytes: Some(max_scratch_bytes(arch)),
            max_work_group_size: Some(1024),
            // HIP's limit on a kernel's argument block.
            max_parameter_bytes: Some(4096),
        },
        module_flags: vec![("amdhsa_code_object_version", code_object_version)],
        // Launches are whole work-groups (HIP grids, SYCL nd-ranges).
        atomic_metadata: vec!["amdgpu.no.fine.grained.memory", "amdgpu.no.remote.memory"],
        kernel_attributes: vec![("uniform-work-group-size", "true")],
        // The code object's metadata gets `.reqd_workgroup_size` and a maximum flat size.
        required_work_group_size: RequiredWorkGroupSize {
            metadata: true,
            attributes: vec![("amdgpu-flat-work-group-size", SizeFormat::FlatRange)],
        },
        legalization: Legalization {
            widen_narrow_division: true,
            minimum_opt_level: 1,
            minimum_backend_opt_level: 3,
            ..Legalization::default()
        },
        output: OutputFormat::AmdgpuCodeObject { linker },
        matrix_units: matrix_units(arch),
        plain_tile_lanes: None,
        matrix_groups: crate::target::MatrixGroups::Plain,
        async_copies: crate::target::AsyncCopies::Plain,
        tile_copies: crate::target::TileCopies::Plain,
        bf16_rounding: crate::target::Bf16Rounding::Integer,
    })
}

/// `__printf_alloc(bytes)`, which LLVM's AMDGPU printf runtime binding calls for each `printf`
/// to reserve its record in the printf buffer, as ROCm's device library (ockl) defines it: the
/// buffer's address is the hidden `hidden_printf_buffer` kernel argument (offset 72 of the
/// implicit arguments in code object version 5); the buffer starts with the bytes used (`u32`,
/// advanced atomically) and its size (`u32`), records follow from byte 8. A record that does
/// not fit gets null, and the binding then skips that `printf`.
const PRINTF_ALLOC: &str = r#"
declare ptr addrspace(4) @llvm.amdgcn.implicitarg.ptr()

define ptr addrspace(1) @__printf_alloc(i32 %bytes) alwaysinline nounwind {
entry:
  %implicit = call ptr addrspace(4) @llvm.amdgcn.implicitarg.ptr()
  %slot = getelementptr inbounds i8, ptr addrspace(4) %implicit, i64 72
  %buffer = load ptr addrspace(1), ptr addrspace(4) %slot, align 8
  %size_slot = getelementptr inbounds i8, ptr addrspace(1) %buffer, i64 4
  %size = load i32, ptr addrspace(1) %size_slot, align 4
  %size64 = zext i32 %size to i64
  %bytes64 = zext i32 %bytes to i64
  %start = load atomic i32, ptr addrspace(1) %buffer syncscope("agent") monotonic, align 4
  br label %reserve

reserve:
  %offset = phi i32 [ %start, %entry ], [ %seen, %taken ]
  %offset64 = zext i32 %offset to i64
  %end64 = add i64 %offset64, %bytes64
  %needed = add i64 %end64, 8
  %fits = icmp ule i64 %needed, %size64
  br i1 %fits, label %claim, label %full

claim:
  %end = trunc i64 %end64 to i32
  %pair = cmpxchg ptr addrspace(1) %buffer, i32 %offset, i32 %end syncscope("agent") monotonic monotonic, align 4
  %seen = extractvalue { i32, i1 } %pair, 0
  %claimed = extractvalue { i32, i1 } %pair, 1
  br i1 %claimed, label %done, label %taken

taken:
  br label %reserve

done:
  %records = getelementptr inbounds i8, ptr addrspace(1) %buffer, i64 8
  %record = getelementptr inbounds i8, ptr addrspace(1) %records, i64 %offset64
  ret ptr addrspace(1) %record

full:
  ret ptr addrspace(1) null
}
"#;
