//! Target descriptions: everything the one lowering needs to know about a target, as data.
//!
//! The lowering never asks "is this NVPTX?"; it asks the description how a work-item query,
//! a barrier, a sub-group operation or a math function lowers, which address space a buffer
//! lives in, and whether a feature exists. Each target module builds its description from
//! the processor name and its own options, and reports its own errors.

pub mod amdgpu;
pub mod nvptx;
pub mod spirv;

use crate::library::{LibraryNaming, MathLibrary};
use crate::{CodegenError, Options, TargetSpec};
use kdsl_bundle::TargetKind;
use kdsl_ir::{AddressSpace, MathFunction, ScalarType};

/// LLVM calling-convention numbers (`llvm/IR/CallingConv.h`).
pub(crate) mod calling_convention {
    pub const C: u32 = 0;
    pub const PTX_KERNEL: u32 = 71;
    pub const SPIR_FUNC: u32 = 75;
    pub const SPIR_KERNEL: u32 = 76;
    pub const AMDGPU_KERNEL: u32 = 91;
}

/// LLVM address-space numbers for each kind of kdsl memory.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AddressSpaces {
    pub global: u16,
    /// Where `constant` buffers live. Targets without a faster constant path use the global
    /// space and rely on `readonly noalias` instead.
    pub constant: u16,
    /// Work-group local memory (`local` arrays).
    pub local: u16,
    /// Per-work-item memory; must equal the data layout's alloca address space.
    pub private: u16,
}

impl AddressSpaces {
    pub fn of(&self, space: AddressSpace) -> u16 {
        match space {
            AddressSpace::Global => self.global,
            AddressSpace::Constant => self.constant,
            AddressSpace::Local => self.local,
            AddressSpace::Private => self.private,
        }
    }
}

/// How `get_global_id` and friends lower.
#[derive(Clone, Copy, Debug)]
pub(crate) enum WorkItemLowering {
    /// OpenCL builtins such as `_Z13get_global_idj` returning a 64-bit `size_t`, which the
    /// SPIR-V backend turns into `BuiltIn` variables; truncated to 32 bits under the index
    /// width rule.
    OpenClBuiltins,
    /// NVVM special registers (`tid`, `ntid`, `ctaid`, `nctaid`), all 32-bit.
    NvvmSpecialRegisters,
    /// AMDGPU work-item and work-group id intrinsics, with sizes read from the HSA
    /// dispatch packet (`llvm.amdgcn.dispatch.ptr`).
    AmdgpuDispatchPacket,
}

/// How `barrier()` lowers.
#[derive(Clone, Copy, Debug)]
pub(crate) enum BarrierLowering {
    /// `barrier(flags)` (`_Z7barrierj`) with `CLK_LOCAL_MEM_FENCE` / `CLK_GLOBAL_MEM_FENCE`.
    OpenClBuiltin,
    /// `llvm.nvvm.barrier.cta.sync.aligned.all(0)` (`bar.sync 0`), which also orders memory.
    NvvmBarrier,
    /// Work-group release fence, `llvm.amdgcn.s.barrier`, work-group acquire fence.
    AmdgpuFencedBarrier,
}

/// How `device_fence()` lowers.
#[derive(Clone, Copy, Debug)]
pub(crate) enum FenceLowering {
    /// OpenCL's `atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE,
    /// memory_order_seq_cst, memory_scope_device)`: the SPIR-V backend gives an LLVM `fence` no
    /// storage classes in its `OpMemoryBarrier`, and so orders nothing.
    OpenClBuiltin,
    /// An LLVM `fence seq_cst` at the target's device scope ([`SyncScopes::device`]).
    LlvmFence,
}

/// How the lane id of a sub-group is read on targets that expand sub-group operations.
#[derive(Clone, Copy, Debug)]
pub(crate) enum LaneIdSource {
    /// `llvm.nvvm.read.ptx.sreg.laneid`.
    NvvmLaneId,
    /// `llvm.amdgcn.mbcnt.lo` (and `.hi` for 64-lane waves).
    AmdgpuMbcnt,
}

/// The 32-bit lane-exchange primitive sub-group operations are built from.
#[derive(Clone, Copy, Debug)]
pub(crate) enum ShufflePrimitive {
    /// `llvm.nvvm.shfl.sync.idx.i32` / `.bfly.i32` with a full mask.
    NvvmShflSync,
    /// `llvm.amdgcn.ds.bpermute` (byte address = lane * 4).
    AmdgpuDsBpermute,
}

/// The vote primitive `sub_group_any`, `sub_group_all` and `sub_group_ballot` are built from.
#[derive(Clone, Copy, Debug)]
pub(crate) enum VotePrimitive {
    /// `llvm.nvvm.vote.{any,all,ballot}.sync` with a full mask.
    NvvmVoteSync,
    /// `llvm.amdgcn.ballot` of the sub-group's width.
    AmdgpuBallot,
}

/// How work-group collectives (`work_group_reduce_add`, ...) lower.
#[derive(Clone, Copy, Debug)]
pub(crate) enum WorkGroupLowering {
    /// OpenCL 2.0 work-group functions (`_Z21work_group_reduce_addf`), which the SPIR-V
    /// backend turns into `OpGroup*` instructions of work-group scope; `work_group_broadcast`
    /// goes through local memory as below.
    OpenClBuiltins,
    /// Sub-group operations combined through a small array of local memory that the
    /// compiler declares (one slot per sub-group), with two barriers.
    SubGroupsAndLocalMemory,
}

/// How sub-group operations lower.
#[derive(Clone, Copy, Debug)]
pub(crate) enum SubGroupLowering {
    /// OpenCL `cl_khr_subgroups` builtins (`_Z20sub_group_reduce_addf`, ...), which the
    /// SPIR-V backend turns into `OpGroup*` / `OpGroupNonUniform*` instructions. The size is
    /// chosen by the device driver.
    OpenClBuiltins,
    /// Lane id and 32-bit shuffles from the target; 64-bit values are exchanged as two
    /// halves, and reductions are butterflies of `log2(size)` exchanges.
    Shuffles {
        lane_id: LaneIdSource,
        shuffle: ShufflePrimitive,
        vote: VotePrimitive,
        size: u32,
    },
}

/// How a kernel receives a launch-sized local array (`tile: local mut [f32]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LocalParameterLowering {
    /// A pointer parameter in the local address space; the runtime sets a local argument of
    /// the array's size (OpenCL's `clSetKernelArg(index, size, NULL)`, SYCL's work-group memory).
    Pointer,
    /// A `u32` byte offset into the launch's dynamic shared memory (an external, zero-length
    /// local array `kdsl_dynamic_local`), whose size the launch gives (CUDA's and HIP's
    /// `sharedMemBytes`).
    DynamicOffset,
}

/// How `print` lowers: always a C `printf` format (`kdsl_ir::print_format::c_format`) with
/// the arguments after C's default promotions (`f32` to `double`, small integers to `int`).
#[derive(Clone, Copy, Debug)]
pub(crate) enum PrintfLowering {
    /// A call of the variadic OpenCL `printf(constant char *format, ...)` named `function`,
    /// its strings in address space `strings`. The SPIR-V backend writes `OpExtInst printf`
    /// of `OpenCL.std` for the mangled `_Z6printfPU3AS2Kcz` (for plain `printf` it passes the
    /// format as a pointer to an array, which `spirv-val` rejects); AMDGPU's printf runtime
    /// binding turns a plain `printf` into the buffered OpenCL printf, which the runtime
    /// drains through the kernel's hidden printf-buffer argument.
    OpenClPrintf {
        function: &'static str,
        strings: u16,
        /// LLVM IR the calls need, linked into a module that prints (AMDGPU: the buffer
        /// allocator `__printf_alloc` the printf binding calls, which ROCm's device library
        /// would define).
        support: Option<&'static str>,
        /// `%s` arguments must be constant strings (AMDGPU's binding copies their text into
        /// the record at compile time, and would store a chosen pointer's bits): a `bool`
        /// value then branches to one call per combination of `true` and `false`, at most
        /// [`MAX_BRANCHED_BOOLS`] of them per `print`.
        constant_strings_only: bool,
    },
    /// CUDA's `vprintf(format, buffer)`: generic pointers to the format (a global in address
    /// space `strings`) and to a private buffer holding the arguments, each at an offset
    /// aligned to its size.
    Vprintf { strings: u16 },
}

/// The most `bool` values one `print` may have where `%s` arguments must be constant strings
/// (2^4 = 16 `printf` calls).
pub(crate) const MAX_BRANCHED_BOOLS: usize = 4;

/// How a math function lowers for one argument type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum MathStrategy {
    /// An LLVM intrinsic every backend lowers natively, such as `llvm.sqrt`.
    Intrinsic(&'static str),
    /// A call to the target's math library under this name; `promote_half` computes `f16`
    /// in `f32`.
    Library { name: String, promote_half: bool },
    /// Expanded by the lowering from other operations (`clamp`, integer `abs`, ...).
    Expanded,
}

/// How the value of a work-group size attribute is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SizeFormat {
    /// `x,y,z`.
    Dimensions,
    /// `n,n` with `n = x * y * z`: a range of flat sizes that holds only the required one.
    FlatRange,
}

/// How a kernel's required work-group size (`#[work_group_size(x, y, z)]`) reaches the
/// backend, so that it can check launches and optimize for the known size.
#[derive(Clone, Debug)]
pub(crate) struct RequiredWorkGroupSize {
    /// Attach OpenCL's `!reqd_work_group_size !{i32 x, i32 y, i32 z}` to the kernel (the SPIR-V
    /// backend writes `OpExecutionMode LocalSize`, AMDGPU `.reqd_workgroup_size`).
    pub metadata: bool,
    /// String attributes that carry the size, with how their value is written.
    pub attributes: Vec<(&'static str, SizeFormat)>,
}

/// How matrix tiles (`matrix_mma`, ...) lower: to the target's matrix units, or through the
/// plain lowering (`kdsl_ir::matrix::expand_plain`), which every target can run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MatrixUnits {
    /// No matrix units used: every shape through the plain lowering.
    Plain,
    /// NVIDIA tensor cores through `llvm.nvvm.wmma.*`: `f16` from sm_70, `i8`/`u8` from
    /// sm_72, tf32 from sm_80 (through `mma.sync` m16n8k8 and `ldmatrix`, which sm_80 has).
    NvvmWmma { capability: u32 },
    /// AMD matrix cores (MFMA on CDNA, WMMA on RDNA3): the instruction for each shape, where
    /// the processor has one. A module using a shape without one takes the plain lowering
    /// whole (tiles may pass between functions, so one module has one layout).
    Amdgpu {
        f16: Option<AmdgpuMatrixInstruction>,
        tf32: Option<AmdgpuMatrixInstruction>,
        i8: Option<AmdgpuMatrixInstruction>,
        u8: Option<AmdgpuMatrixInstruction>,
        bf16: Option<AmdgpuMatrixInstruction>,
    },
    /// Intel GPUs' matrix engines through `SPV_KHR_cooperative_matrix` (`lower::matrix_spirv`):
    /// each tile is a few cooperative matrices of the engine's shape. A module using a shape
    /// without a unit takes the plain lowering whole, as on AMDGPU.
    CooperativeMatrix(CooperativeMatrices),
}

/// The cooperative matrices of an Intel GPU's matrix engines (`target::spirv`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CooperativeMatrices {
    /// The sub-group size the engines need; kernels with tiles require it
    /// (`intel_reqd_sub_group_size`).
    pub sub_group_size: u32,
    /// The multiply-add of `f16` inputs (into `f32`), where the GPU has one.
    pub f16: Option<CooperativeMatrixUnit>,
}

/// One cooperative multiply-add: an M x K `A` times a K x N `B` plus an M x N accumulator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CooperativeMatrixUnit {
    pub m: u32,
    pub n: u32,
    pub k: u32,
}

/// How matrix-group tiles (`matrix_group_mma`) lower.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MatrixGroups {
    /// Their plain definition (`kdsl_ir::matrix::expand_plain_groups`).
    Plain,
    /// sm_90a's `wgmma.mma_async` (`lower::matrix_group`).
    Wgmma,
    /// `mma.sync` per warp of the group (`lower::matrix_group_warps`): sm_80 and later.
    MmaSync,
}

/// How asynchronous copies (`async_copy`, `async_commit`, `async_wait`) lower.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AsyncCopies {
    /// Each copy a plain load and store where it stands; commits and waits are nothing
    /// (`kdsl_ir::async_copy::expand_plain`).
    Plain,
    /// NVIDIA's `cp.async` (sm_80 on): `llvm.nvvm.cp.async.{ca,cg}.shared.global.*`,
    /// `commit.group` and `wait.group`.
    NvvmCpAsync,
}

/// How tile copies (`async_tile_copy`, `async_tile_wait`) lower.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TileCopies {
    /// The work-items share each copy out as plain loads and stores; a wait is a barrier
    /// (`kdsl_ir::tile_copy::expand_plain`).
    Plain,
    /// Hopper's tensor memory accelerator in kernels' entries for contiguous rows, from tensor
    /// maps the host makes, completed through an `mbarrier` per slot (`lower::tile_copy`); the
    /// plain form everywhere else.
    TensorMaps,
}

/// How an `f32` result is rounded to `bf16` (`lower::bf16`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bf16Rounding {
    /// Integer instructions on the bits: `(bits + 0x7fff + lsb) >> 16`, a NaN made quiet.
    Integer,
    /// LLVM's `fptrunc float to bfloat`: NVIDIA's `cvt.rn.bf16.f32` (sm_80 on), to nearest
    /// even like the integer form (a NaN becomes the canonical NaN).
    NativeFptrunc,
}

/// The AMDGPU matrix instructions tiles lower to (layouts: `lower::matrix_amdgpu`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AmdgpuMatrixInstruction {
    /// `v_mfma_f32_16x16x16_f16` (gfx908, gfx90a, gfx94x, gfx950; wave64).
    Mfma16x16x16F16,
    /// `v_mfma_f32_16x16x4_f32` twice per k8 tile, on inputs rounded to tf32 first.
    Mfma16x16x4F32,
    /// `v_mfma_f32_16x16x8_xf32` (gfx942 only; gfx950 dropped xf32), inputs rounded first.
    Mfma16x16x8Xf32,
    /// `v_wmma_f32_16x16x16_f16` in wave32 (gfx11).
    Wmma16x16x16F16Wave32,
    /// `v_mfma_i32_16x16x16_i8` (gfx908, gfx90a; signed only).
    Mfma16x16x16I8,
    /// `v_mfma_i32_16x16x32_i8` with the upper half of each lane's k zero (gfx94x, gfx950,
    /// which dropped the k16 instruction; signed only).
    Mfma16x16x32I8,
    /// `v_wmma_i32_16x16x16_iu8` in wave32 (gfx11), signed or unsigned inputs.
    Wmma16x16x16Iu8Wave32,
    /// `v_mfma_f32_16x16x16_bf16` (`bf16_1k`: gfx90a, gfx94x, gfx950; gfx908's has k8).
    Mfma16x16x16Bf16,
    /// `v_wmma_f32_16x16x16_bf16` in wave32 (gfx11).
    Wmma16x16x16Bf16Wave32,
}

impl MatrixUnits {
    /// Whether the target has matrix units for some shape (modules may reach them).
    pub fn native(self) -> bool {
        match self {
            MatrixUnits::Plain => false,
            MatrixUnits::NvvmWmma { .. } => true,
            MatrixUnits::Amdgpu {
                f16,
                tf32,
                i8,
                u8,
                bf16,
            } => [f16, tf32, i8, u8, bf16].iter().any(Option::is_some),
            MatrixUnits::CooperativeMatrix(units) => units.f16.is_some(),
        }
    }

    /// Whether a module's tiles (`features`, its [`kdsl_ir::analysis::ModuleFeatures`]) reach
    /// the matrix units: the target has a unit for every shape the module uses (else the
    /// whole module takes the plain lowering).
    pub fn native_for(self, features: &kdsl_ir::analysis::ModuleFeatures) -> bool {
        match self {
            MatrixUnits::Plain => false,
            // The checker refuses shapes the processor cannot do.
            MatrixUnits::NvvmWmma { .. } => true,
            MatrixUnits::Amdgpu { .. } => features
                .matrix_shapes()
                .into_iter()
                .all(|shape| self.amdgpu_instruction(shape).is_some()),
            MatrixUnits::CooperativeMatrix(_) => features
                .matrix_shapes()
                .into_iter()
                .all(|shape| self.cooperative_unit(shape).is_some()),
        }
    }

    /// The cooperative matrix unit for `shape`, where the target has one.
    pub fn cooperative_unit(self, shape: kdsl_ir::MatrixShape) -> Option<CooperativeMatrixUnit> {
        match (self, shape) {
            (MatrixUnits::CooperativeMatrix(units), kdsl_ir::MatrixShape::F16M16N16K16) => {
                units.f16
            }
            _ => None,
        }
    }

    /// The AMDGPU instruction for `shape`, if the target has one.
    pub fn amdgpu_instruction(
        self,
        shape: kdsl_ir::MatrixShape,
    ) -> Option<AmdgpuMatrixInstruction> {
        match (self, shape) {
            (MatrixUnits::Amdgpu { f16, .. }, kdsl_ir::MatrixShape::F16M16N16K16) => f16,
            (MatrixUnits::Amdgpu { tf32, .. }, kdsl_ir::MatrixShape::Tf32M16N16K8) => tf32,
            (MatrixUnits::Amdgpu { i8, .. }, kdsl_ir::MatrixShape::I8M16N16K16) => i8,
            (MatrixUnits::Amdgpu { u8, .. }, kdsl_ir::MatrixShape::U8M16N16K16) => u8,
            (MatrixUnits::Amdgpu { bf16, .. }, kdsl_ir::MatrixShape::Bf16M16N16K16) => bf16,
            _ => None,
        }
    }

    /// `None` when the target can compile `shape`, else the processor it needs.
    pub fn missing(self, shape: kdsl_ir::MatrixShape) -> Option<&'static str> {
        match (self, shape) {
            // AMDGPU processors and Intel GPUs without a unit for a shape take the plain
            // lowering.
            (
                MatrixUnits::Plain | MatrixUnits::Amdgpu { .. } | MatrixUnits::CooperativeMatrix(_),
                _,
            ) => None,
            (MatrixUnits::NvvmWmma { capability }, kdsl_ir::MatrixShape::F16M16N16K16) => {
                (capability < 70).then_some("sm_70")
            }
            (
                MatrixUnits::NvvmWmma { capability },
                kdsl_ir::MatrixShape::Tf32M16N16K8 | kdsl_ir::MatrixShape::Bf16M16N16K16,
            ) => (capability < 80).then_some("sm_80"),
            (
                MatrixUnits::NvvmWmma { capability },
                kdsl_ir::MatrixShape::I8M16N16K16 | kdsl_ir::MatrixShape::U8M16N16K16,
            ) => (capability < 72).then_some("sm_72"),
        }
    }
}

/// What the target can do, for "unsupported on this target" diagnostics.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FeatureSupport {
    /// `f16` arithmetic.
    pub half: bool,
    /// `f64` arithmetic.
    pub double: bool,
    /// `atomic_add` on `f32`.
    pub float_atomic_add: bool,
    /// `atomic_add` on `f64`.
    pub double_atomic_add: bool,
    /// 64-bit integer atomics.
    pub int64_atomics: bool,
    /// Sub-group operations.
    pub sub_groups: bool,
    /// The most work-group local memory a kernel may declare statically, if known.
    pub max_local_memory_bytes: Option<u64>,
    /// The most private memory (arrays and spills) one work-item may use, if known.
    pub max_private_memory_bytes: Option<u64>,
    /// The most work-items a work-group can have on any processor of the target, if known.
    pub max_work_group_size: Option<u64>,
    /// The most bytes of arguments a kernel can take, if known.
    pub max_parameter_bytes: Option<u64>,
}

/// Operations kdsl rewrites before LLVM sees them, because the target's backend fails on the
/// plain form (each field names the failure). The rewrites compute the same values.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Legalization {
    /// 8- and 16-bit integer division and remainder computed on 32-bit extensions: AMDGPU's
    /// instruction selection aborts the process on `sdivrem`/`udivrem` of `i8`/`i16` at -O0
    /// ("Cannot select"). Exact (where the narrow operation is defined).
    pub widen_narrow_division: bool,
    /// 64-bit integers truncated to 8 or 16 bits in two steps, through 32 bits: at -O0 the
    /// SPIR-V backend masks the 64-bit value with a 32-bit constant (`(x as u8) as u16` of an
    /// `i64` gave an `OpBitwiseAnd` that `spirv-val` rejects).
    pub truncate_through_32_bits: bool,
    /// 8-bit integers extended to 16 bits through 32 bits (extend, then truncate): at -O0 the
    /// SPIR-V backend folds `zext(trunc x)` into a 16-bit `OpBitwiseAnd` of the 32-bit `x`
    /// (`((x as u8) as u16) & y` with `x: u32`), which `spirv-val` rejects (found by the long
    /// kdsl-fuzzgen run).
    pub extend_narrow_through_32_bits: bool,
    /// `atomic_compare_exchange` as a call of `__spirv_AtomicCompareExchange` (one
    /// `OpAtomicCompareExchange` giving the old value) instead of LLVM's `cmpxchg`, whose
    /// `{T, i1}` result the SPIR-V backend mistranslates: a garbage `OpCompositeExtract` index
    /// at -O0, a compared struct after LLVM freezes the result at -O3.
    pub compare_exchange_through_spirv_builtin: bool,
    /// 8- and 16-bit `abs` computed on a 32-bit extension that first passes through this
    /// inline-assembly copy (operands `=r,r`), so that LLVM cannot narrow the `abs` back: ptxas computes PTX `abs.s16` in 32 bits, and `abs(-32768i16)` came out as
    /// +32768 instead of wrapping to -32768 as on every other target.
    pub narrow_abs_behind_copy: Option<&'static str>,
    /// After the optimizer: `llvm.umul.with.overflow` (and `smul` up to 32 bits) as plain
    /// multiplies, because the optimizer creates them (from `(MAX / x) >= y`) and the SPIR-V
    /// backend's `OpUMulExtended` fails to build on the Intel CPU device.
    pub expand_multiply_with_overflow: bool,
    /// After the optimizer: `llvm.bitreverse` as shifts and ors, because the optimizer creates
    /// it (from `rotate` of a 0-or-1 value, fuzzgen seed 8001540) and LLVM's SPIR-V backend
    /// has no instruction for it in OpenCL SPIR-V ("Unable to meet SPIR-V requirements").
    pub expand_bit_reverse: bool,
    /// After the optimizer: `sitofp i1` (which gives -1.0 for true) as a select of -1.0 and
    /// 0.0, because the optimizer creates it (from `-1 % d` with `d` odd, then a conversion)
    /// and the SPIR-V path converts true to +1.0 (fuzzgen seed 109).
    pub expand_signed_bool_to_float: bool,
    /// After the optimizer: the vector lengths the target has (`None`: any). A load of
    /// another length, which the optimizer creates (a `load <3 x i32>` used only as `i16`
    /// becomes `load <6 x i16>`, fuzzgen seed 5485), becomes scalar loads of the lanes it
    /// uses; any other value of such a type is an internal error, not an invalid module.
    pub vector_lengths: Option<&'static [u32]>,
    /// After the optimizer: the integer widths the target's memory accesses have (`None`:
    /// any). A load or store of another width, which the optimizer creates (a `vload3` of
    /// `u16` met by a scalar load of the same address became `load i48`, fuzzgen seed 3001565,
    /// which the SPIR-V backend widens to 64 bits), becomes accesses of supported pieces; any
    /// other is an internal error.
    pub integer_widths: Option<&'static [u32]>,
    /// The lowest optimization level of the module's IR, whatever `-O` asks for. SPIR-V: at 16
    /// work-items a group, the Intel OpenCL CPU device (2026.22) leaves a private array holding
    /// garbage where a loop stores a repeated byte into it (the front end's zeroing of `let mut
    /// a: [T; N];`), and where two fills of the array follow each other (the zeroing, then a
    /// loop filling it with -1, fuzzgen seed 6000003). From -O1 LLVM makes those loops memsets,
    /// and from -O2 it drops a fill the next one overwrites; one memset the device gets right.
    /// The floor is -O3, the level every default compile uses and fuzzgen checks most (at -O2
    /// the SPIR-V backend refused a bitcast of seed 7001140 that -O3 never makes). AMDGPU's
    /// floor is -O1: its code generation (at -O3, below) runs LLVM 22's load-store vectorizer,
    /// which loops forever on unoptimized IR where a load's value indexes another load of the
    /// same buffer (`out[a[i, 1] % 2]`-like; LLVM issues 37865 and 147041; fuzzgen seed
    /// 8700381), a pattern the optimizer folds away.
    pub minimum_opt_level: u8,
    /// The lowest optimization level of the backend's code generation, whatever `-O` the
    /// module is optimized at. LLVM 22's AMDGPU backend fails on unoptimized IR below -O3: at
    /// -O0 it emits `V_SUB_U32_e32` with an SGPR operand (a loop step `abs((x as i32) % 3) + 1`
    /// of an `i16` loaded at a uniform index, fuzzgen seed 4001069); at -O1 and -O2 it folds a
    /// literal into `V_FMAC_F64_e64` on gfx90a and gfx942, whose VOP3 takes none (an `fma` of
    /// a constant kept in a variable, beside an `frem`, seed 5000290).
    pub minimum_backend_opt_level: u8,
    /// After the optimizer: 8- and 16-bit negations (`sub 0, x`) as the truncation of this
    /// 32-bit inline-assembly negation (operands `=r,r`; instruction selection narrows a plain
    /// 32-bit one back) of the sign extension, because ptxas 13.0 (the H200's driver JIT)
    /// takes `neg.s16` of a sign-extended value to be sign-extended: `-(-32768)` reached a
    /// following `div.s16` as +32768 (fuzzgen seed 9709).
    pub negate_narrow_in_assembly: Option<&'static str>,
    /// After the optimizer: `min(x, C) == C` (`!=`, `max`, signed or not) on 8 and 16 bits as
    /// the comparison of `x` with `C`, because ptxas 13.0 folds the comparison into a 16x2
    /// `VIMNMX`'s predicate output and got `min(13, 3) == 3` false (fuzzgen seed 9708).
    pub compare_narrow_min_max_operand_directly: bool,
    /// After the optimizer: each work-item query of a function (`get_global_id(0)`, ...) read
    /// once, in its entry block, and that value used for every read, inlined callees' included,
    /// because Intel's OpenCL CPU device compiler gets `get_global_id(0) - gid` wrong where the
    /// second read sits in a later block than the first (16 per 16-wide chunk of the group,
    /// fuzzgen seed 9454). Applies to the builtin calls of [`WorkItemLowering::OpenClBuiltins`];
    /// a function above the inlining budget reads at its own entry.
    pub read_work_items_once_at_entry: bool,
    /// After the optimizer (`legalize/cooperative_matrices.rs`): constant cooperative matrices (`zeroinitializer`, `poison`), which
    /// SROA makes of a tile's zeroed array where a path reaches its use unloaded, as
    /// `__spirv_CompositeConstruct` of zero, because LLVM 22's SPIR-V backend cannot translate
    /// them ("unable to translate constant"); and the
    /// address of a cooperative load or store that the optimizer made a local array's global
    /// as an element pointer, which the backend otherwise types as a pointer to the array.
    pub legalize_cooperative_matrices: bool,
    /// After the optimizer (`legalize/address_arithmetic.rs`): an address's 32-bit no-wrap
    /// arithmetic, extended to 64 bits, as 64-bit arithmetic (`zext(3 * gid + 1)` as
    /// `3 * zext(gid) + 1`), because the Intel OpenCL CPU device (2026.22) loses the stores of
    /// work-items 16 and up in groups of 32 or more where two stores at `3 * gid + k` in 32 bits
    /// meet a 64-bit shift by an amount that varies per work-item (clang's SPIR-V of the same
    /// OpenCL C fails alike; with a 64-bit index it is right; fuzzgen seeds 8911324, 9000137).
    /// The device's vectorizer also sees such addresses as consecutive. Byte accesses keep
    /// their 32-bit index: with it in 64 bits the same compiler aborts on interleaved `i8`
    /// accesses (seed 9000457).
    pub widen_index_arithmetic: bool,
    /// After the optimizer (`legalize/memory_fills.rs`): `llvm.memset` of a runtime byte over
    /// a constant length as stores, because the SPIR-V backend emits it as a call of a byte
    /// loop it adds, whose stores to a private array the Intel OpenCL CPU device (2026.22)
    /// loses where the kernel also uses an OpenCL.std integer built-in (fuzzgen seed 9011949).
    pub expand_runtime_memory_fills: bool,
}

/// The synchronization-scope names of the target's LLVM backend.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SyncScopes {
    /// For atomics on global memory.
    pub device: &'static str,
    /// For atomics on local memory and barrier fences.
    pub work_group: &'static str,
}

/// How the backend's output becomes the image.
#[derive(Clone, Debug)]
pub(crate) enum OutputFormat {
    /// A SPIR-V binary from LLVM's SPIR-V backend, in process or from `llc` (see [`spirv`]),
    /// validated by its `validator`, its entry points read by [`spirv::inspect`].
    SpirvBinary {
        /// `llc`, if found: only needed where the backend runs in a child process.
        llc: Option<std::path::PathBuf>,
        backend: spirv::Backend,
        validator: spirv::Validator,
    },
    /// Assembly text (PTX).
    PtxAssembly,
    /// An ELF object linked into a shared HSA code object by lld.
    AmdgpuCodeObject { linker: AmdgpuLinker },
}

/// Which lld links AMDGPU code objects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum AmdgpuLinker {
    /// lld's ELF driver in this process (builds with liblld-22-dev).
    InProcess,
    /// An `ld.lld` program, run as a child process.
    Program(std::path::PathBuf),
}

/// Everything the lowering and the emitter know about one target.
#[derive(Clone, Debug)]
pub(crate) struct TargetDescription {
    pub kind: TargetKind,
    /// The processor (`sm_90`, `gfx90a`, `intel_gpu_pvc`), empty for plain SPIR-V.
    pub arch: String,
    pub triple: &'static str,
    /// LLVM `-mcpu`.
    pub cpu: String,
    /// LLVM `-mattr`.
    pub cpu_features: String,
    pub address_spaces: AddressSpaces,
    pub kernel_calling_convention: u32,
    pub device_calling_convention: u32,
    pub work_items: WorkItemLowering,
    pub barrier: BarrierLowering,
    pub device_fence: FenceLowering,
    pub sub_groups: SubGroupLowering,
    pub work_groups: WorkGroupLowering,
    pub local_parameters: LocalParameterLowering,
    pub printf: PrintfLowering,
    /// The math library and its naming scheme; `None` when math functions are builtins the
    /// driver provides (SPIR-V).
    pub math_library: MathLibrary,
    pub sync_scopes: SyncScopes,
    pub features: FeatureSupport,
    /// Integer module flags (`nvvm-reflect-ftz`, `amdhsa_code_object_version`).
    pub module_flags: Vec<(&'static str, u32)>,
    /// Empty metadata kinds every `atomicrmw` gets, such as AMDGPU's promise that buffers
    /// are not fine-grained host memory (which lets it use native float atomics).
    pub atomic_metadata: Vec<&'static str>,
    /// String attributes every kernel gets.
    pub kernel_attributes: Vec<(&'static str, &'static str)>,
    /// How a kernel's `#[work_group_size]` is passed on.
    pub required_work_group_size: RequiredWorkGroupSize,
    pub legalization: Legalization,
    pub output: OutputFormat,
    pub matrix_units: MatrixUnits,
    /// The sub-group size the plain lowering of tiles is laid out for
    /// (`kdsl_ir::matrix::PlainLayout::Lanes`), which kernels running them then require;
    /// `None`: laid out for any size (`PlainLayout::AnySize`).
    pub plain_tile_lanes: Option<u32>,
    pub matrix_groups: MatrixGroups,
    pub async_copies: AsyncCopies,
    pub tile_copies: TileCopies,
    pub bf16_rounding: Bf16Rounding,
}

impl TargetDescription {
    /// Whether `function` of `module` keeps its tile copies as tensor copies, taking tensor
    /// maps: a kernel's entry for contiguous rows (its sources' innermost stride is 1, as a
    /// tensor map's is) on a target with them, in a module whose device functions copy no
    /// tiles (their plain waits would not wait for a kernel's tensor copies). Checked mode
    /// never gets here with tile copies.
    pub fn takes_tensor_maps(
        &self,
        module: &kdsl_ir::Module,
        function: &kdsl_ir::Function,
    ) -> bool {
        let in_functions = || {
            module.functions.iter().any(|f| {
                f.kind == kdsl_ir::FunctionKind::Device && kdsl_ir::tile_copy::uses(&f.body)
            })
        };
        self.tile_copies == TileCopies::TensorMaps
            && function.kind == kdsl_ir::FunctionKind::Kernel
            && function.contiguous_copy_of.is_some()
            && kdsl_ir::tile_copy::uses(&function.body)
            && !in_functions()
    }

    /// Whether a module's matrix statements (`features`) reach matrix units: sub-group tiles
    /// where the target has a unit for every shape the module uses, matrix-group tiles on
    /// `wgmma` or `mma.sync`. The rest take their plain definitions.
    pub fn uses_matrix_units(&self, features: &kdsl_ir::analysis::ModuleFeatures) -> bool {
        let tiles = !features.matrix_shapes().is_empty() && self.matrix_units.native_for(features);
        tiles || self.runs_matrix_groups_on_units(features)
    }

    /// Whether a module's matrix-group statements reach matrix units (`wgmma` or `mma.sync`),
    /// which run whole groups of 128 work-items only.
    pub fn runs_matrix_groups_on_units(
        &self,
        features: &kdsl_ir::analysis::ModuleFeatures,
    ) -> bool {
        features.uses_group_matrix() && self.matrix_groups != MatrixGroups::Plain
    }

    /// The sub-group size `function` (a kernel) must run with because its tiles reach
    /// matrix units that need one (Intel's cooperative matrices) or a plain lowering laid out
    /// for one ([`TargetDescription::plain_tile_layout`]); `None` elsewhere.
    pub fn required_sub_group_size(
        &self,
        features: &kdsl_ir::analysis::ModuleFeatures,
        function: kdsl_ir::FunctionId,
    ) -> Option<u32> {
        if !features.runs_matrix_tiles(function) {
            return None;
        }
        match self.matrix_units {
            MatrixUnits::CooperativeMatrix(units) if self.matrix_units.native_for(features) => {
                Some(units.sub_group_size)
            }
            _ => match self.plain_tile_layout(features) {
                kdsl_ir::matrix::PlainLayout::Lanes(lanes) => Some(lanes),
                kdsl_ir::matrix::PlainLayout::AnySize => None,
            },
        }
    }

    /// The sub-group size whose whole sub-groups a module's sub-group tiles need here
    /// (`kdsl_bundle::Image::tile_sub_group_size`): the cooperative matrices' size, the matrix
    /// units' own sub-group (a warp, a wavefront), or the size the plain lowering is laid out
    /// for; `None` without tiles or where they are laid out for any size.
    pub fn tile_sub_group_size(&self, features: &kdsl_ir::analysis::ModuleFeatures) -> Option<u32> {
        if features.matrix_shapes().is_empty() {
            return None;
        }
        if self.matrix_units.native_for(features) {
            return match (self.matrix_units, self.sub_groups) {
                (MatrixUnits::CooperativeMatrix(units), _) => Some(units.sub_group_size),
                (_, SubGroupLowering::Shuffles { size, .. }) => Some(size),
                (_, SubGroupLowering::OpenClBuiltins) => None,
            };
        }
        match self.plain_tile_layout(features) {
            kdsl_ir::matrix::PlainLayout::Lanes(lanes) => Some(lanes),
            kdsl_ir::matrix::PlainLayout::AnySize => None,
        }
    }

    /// The layout of a module's tiles where they take the plain lowering (outside checked
    /// mode, which lays them out for any size).
    pub fn plain_tile_layout(
        &self,
        features: &kdsl_ir::analysis::ModuleFeatures,
    ) -> kdsl_ir::matrix::PlainLayout {
        match self.plain_tile_lanes {
            Some(lanes) if !self.uses_matrix_units(features) => {
                kdsl_ir::matrix::PlainLayout::Lanes(lanes)
            }
            _ => kdsl_ir::matrix::PlainLayout::AnySize,
        }
    }

    /// The target as users name it in messages: `spirv`, `ptx:sm_90`, `amdgpu:gfx90a`.
    pub fn display_name(&self) -> String {
        if self.arch.is_empty() {
            self.kind.name().to_string()
        } else {
            format!("{}:{}", self.kind, self.arch)
        }
    }

    /// The library function that computes float `%` exactly (C's `fmod`) on `ty`, where the
    /// backend's own `frem` is inexact: NVPTX expands `frem` as `a - b * trunc(a / b)`,
    /// which is wrong once `a / b` rounds (`1e10 % 3.0` gave 256). Elsewhere, `None`.
    pub fn remainder_function(&self, ty: ScalarType) -> Option<(String, bool)> {
        let inexact_frem = self.kind == TargetKind::Ptx;
        inexact_frem.then(|| {
            let name = self.math_library.remainder_name(ty);
            (name, ty == ScalarType::F16)
        })
    }

    /// How `function` lowers for arguments of type `ty`.
    pub fn math_strategy(&self, function: MathFunction, ty: ScalarType) -> MathStrategy {
        use MathFunction::*;
        if ty.is_integer() {
            return MathStrategy::Expanded;
        }
        match function {
            Sqrt => MathStrategy::Intrinsic("llvm.sqrt"),
            Fma => MathStrategy::Intrinsic("llvm.fma"),
            Abs => MathStrategy::Intrinsic("llvm.fabs"),
            Floor => MathStrategy::Intrinsic("llvm.floor"),
            Ceil => MathStrategy::Intrinsic("llvm.ceil"),
            Round => MathStrategy::Intrinsic("llvm.round"),
            Min => MathStrategy::Intrinsic("llvm.minnum"),
            Max => MathStrategy::Intrinsic("llvm.maxnum"),
            // `fmod` is float `%`, lowered by the same code.
            Clamp | Fmod | IsNan | IsInf | IsFinite | WrappingAdd | WrappingSub | WrappingMul
            | Popcount | Clz | Ctz | Rotate | RoundTf32 => MathStrategy::Expanded,
            Copysign => MathStrategy::Intrinsic("llvm.copysign"),
            // Operators with fast-math flags (`arcp`, `afn`): `div.approx` on NVIDIA.
            NativeRecip | NativeDivide => MathStrategy::Expanded,
            NativeExp | NativeExp2 | NativeExp10 | NativeLog | NativeLog2 | NativeLog10
            | NativeSin | NativeCos | NativeTan | NativePowr | NativeSqrt | NativeRsqrt => {
                match function.accurate() {
                    Some(accurate)
                        if !self.math_library.has_native(ty)
                            || self.math_library.naming == LibraryNaming::Libdevice
                                && matches!(function, NativeSqrt) =>
                    {
                        self.math_strategy(accurate, ty)
                    }
                    _ => {
                        let (name, promote_half) = self.math_library.function_name(function, ty);
                        MathStrategy::Library { name, promote_half }
                    }
                }
            }
            Rsqrt | Exp | Exp2 | Log | Log2 | Sin | Cos | Tan | Tanh | Pow | Atan2 | Asin
            | Acos | Atan | Sinh | Cosh | Asinh | Acosh | Atanh | Log1p | Expm1 | Log10 | Exp10
            | Cbrt | Hypot | Erf | Erfc | Lgamma => {
                let (name, promote_half) = self.math_library.function_name(function, ty);
                MathStrategy::Library { name, promote_half }
            }
        }
    }
}

/// Builds the description of `spec`'s target.
pub(crate) fn describe(
    spec: &TargetSpec,
    options: &Options,
) -> Result<TargetDescription, CodegenError> {
    match spec.kind {
        TargetKind::Spirv => Ok(spirv::describe(spec.arch.as_deref(), &options.spirv)?),
        TargetKind::Ptx => Ok(nvptx::describe(&spec.resolved_arch(), &options.nvptx)?),
        TargetKind::Amdgpu => Ok(amdgpu::describe(&spec.resolved_arch(), &options.amdgpu)?),
    }
}

/// Finds an executable in `PATH` or in LLVM 22's `bin` directory.
pub(crate) fn find_tool(names: &[&str]) -> Option<std::path::PathBuf> {
    let mut directories: Vec<std::path::PathBuf> = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect())
        .unwrap_or_default();
    if let Some(prefix) = std::env::var_os("LLVM_SYS_221_PREFIX") {
        directories.push(std::path::PathBuf::from(prefix).join("bin"));
    }
    directories.push("/usr/lib/llvm-22/bin".into());
    names.iter().find_map(|name| {
        directories
            .iter()
            .map(|directory| directory.join(name))
            .find(|candidate| candidate.is_file())
    })
}
