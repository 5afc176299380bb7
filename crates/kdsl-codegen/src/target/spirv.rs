//! SPIR-V for OpenCL, SYCL and Level Zero: `spirv64-unknown-unknown`, Kernel capability,
//! Physical64 addressing, OpenCL memory model.
//!
//! Kernels are `spir_kernel`, device functions `spir_func`. Work-item queries, barriers and
//! sub-group operations are OpenCL builtin calls the LLVM SPIR-V backend recognizes (each
//! work-item query is read once per function, in its entry block, for Intel's CPU device
//! compiler: `read_work_items_once_at_entry`); math functions become `OpenCL.std` extended
//! instructions. Float atomic add needs `SPV_EXT_shader_atomic_float_add`, which is enabled
//! for every module.
//!
//! LLVM 22's SPIR-V backend keeps state between modules in a static; [`backend_state`] says
//! how every module still starts from fresh state, in process where the build allows it and
//! in an `llc-22` child process otherwise. The backend's extensions are process-wide options,
//! set once when LLVM is initialized ([`crate::llvm::initialize`]). The module the backend
//! gets is already optimized.

use super::{
    calling_convention, AddressSpaces, BarrierLowering, CooperativeMatrices, CooperativeMatrixUnit,
    FeatureSupport, FenceLowering, Legalization, LocalParameterLowering, MatrixUnits, OutputFormat,
    PrintfLowering, RequiredWorkGroupSize, SubGroupLowering, SyncScopes, TargetDescription,
    WorkGroupLowering, WorkItemLowering,
};
use crate::library::{LibraryNaming, MathLibrary};
use kdsl_bundle::TargetKind;
use std::path::{Path, PathBuf};

pub(crate) mod backend_state;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// LLVM 22's `llc`, for where the backend runs in a child process; when `None`, `llc-22`
    /// in `PATH`, or `llc` in LLVM 22's `bin`.
    pub llc: Option<PathBuf>,
    /// Where the SPIR-V backend runs.
    pub backend: Backend,
}

/// Where the SPIR-V backend runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Backend {
    /// In process, one module at a time, wherever it can start from fresh state (see
    /// [`backend_state`]); in an `llc` child process otherwise.
    #[default]
    InProcessWhereSafe,
    /// Always in an `llc` child process.
    Llc,
}

/// Who checks the images against SPIRV-Tools' rules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Validator {
    /// The SPIRV-Tools linked into kdsl ([`validate`]).
    InProcess,
    /// A newer `spirv-val` program ([`find_newer_validator`]), `None` where it is not
    /// installed: the images then go unvalidated. Debian's SPIRV-Tools (2023.1), linked into
    /// kdsl, predates `SPV_KHR_cooperative_matrix` and rejects every module that uses it.
    Program(Option<PathBuf>),
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "SPIR-V takes no processor name but an Intel GPU with matrix engines ({known}), and `{given}` was given (the device driver finalizes SPIR-V)",
        given = .0,
        known = kdsl_bundle::processors::INTEL_GPU_PROCESSORS.join(", ")
    )]
    ArchGiven(String),
    #[error("llc from LLVM 22 was not found (`llc-22` in PATH or /usr/lib/llvm-22/bin/llc); it runs the SPIR-V backend where that cannot run in process (install llvm-22, see scripts/setup.sh)")]
    LlcNotFound,
    #[error("the SPIR-V backend (`{llc}`) failed: {message}")]
    BackendFailed { llc: String, message: String },
    #[error("the SPIR-V backend produced a module rspirv cannot parse: {0}")]
    Unparsable(String),
    #[error("the SPIR-V module lacks entry point(s) for kernel(s) {0}")]
    MissingEntryPoints(String),
}

/// The SPIR-V extensions the lowering may need. The backend uses one only where the module
/// needs it, and [`crate::support`] rejects what none of them covers.
pub(crate) const EXTENSIONS: &[&str] = &[
    "SPV_EXT_shader_atomic_float_add",
    "SPV_EXT_shader_atomic_float_min_max",
    // NoSignedWrap/NoUnsignedWrap on integer arithmetic, whose overflow is undefined: the
    // device compiler then widens 32-bit indices and vectorizes their accesses.
    "SPV_KHR_no_integer_wrap_decoration",
    // Matrix tiles on Intel GPUs' matrix engines (`MatrixUnits::CooperativeMatrix`); only
    // modules lowered for those use them.
    "SPV_KHR_cooperative_matrix",
];

/// The matrix engines (XMX) of the Intel GPUs a SPIR-V image may be built for, from Intel's
/// documented `joint_matrix` combinations (sycl_ext_oneapi_matrix, "Intel XMX"): the
/// cooperative matrix `f16` inputs multiply in, M x N x K. Data Center GPU Max (PVC, sub-group
/// 16) multiplies them at M <= 8, N 16, K 16; Arc (DG2, sub-group 8) at M <= 8, N 8, K 16.
/// The other shapes take the plain lowering: the engines' `i8`/`u8` units have K 32 (no k16
/// tile); tf32 inputs would need each element rounded inside the cooperative matrix (the
/// engines do not round to nearest); `bf16` components need `SPV_INTEL_joint_matrix`'s
/// `CooperativeMatrixBFloat16ComponentTypeINTEL`, which no released SPIRV-Tools validates.
fn intel_gpu_matrix_units(arch: &str) -> Option<MatrixUnits> {
    let (sub_group_size, n) = match arch {
        "intel_gpu_pvc" => (16, 16),
        "intel_gpu_dg2_g10" | "intel_gpu_dg2_g11" | "intel_gpu_dg2_g12" => (8, 8),
        _ => return None,
    };
    Some(MatrixUnits::CooperativeMatrix(CooperativeMatrices {
        sub_group_size,
        f16: Some(CooperativeMatrixUnit { m: 8, n, k: 16 }),
    }))
}

pub(crate) fn describe(arch: Option<&str>, options: &Options) -> Result<TargetDescription, Error> {
    let arch = arch.unwrap_or_default();
    let matrix_units = if arch.is_empty() {
        // The Intel CPU device cannot compile cooperative matrices (its AMX path needs
        // Sapphire Rapids): plain SPIR-V takes the plain lowering.
        MatrixUnits::Plain
    } else {
        intel_gpu_matrix_units(arch).ok_or_else(|| Error::ArchGiven(arch.to_string()))?
    };
    // Looked up now, needed only where the backend cannot run in process.
    let llc = options.llc.clone().or_else(find_llc);
    Ok(TargetDescription {
        kind: TargetKind::Spirv,
        arch: arch.to_string(),
        triple: "spirv64-unknown-unknown",
        cpu: String::new(),
        cpu_features: String::new(),
        address_spaces: AddressSpaces {
            global: 1,
            constant: 2,
            local: 3,
            private: 0,
        },
        kernel_calling_convention: calling_convention::SPIR_KERNEL,
        device_calling_convention: calling_convention::SPIR_FUNC,
        work_items: WorkItemLowering::OpenClBuiltins,
        barrier: BarrierLowering::OpenClBuiltin,
        device_fence: FenceLowering::OpenClBuiltin,
        sub_groups: SubGroupLowering::OpenClBuiltins,
        work_groups: WorkGroupLowering::OpenClBuiltins,
        local_parameters: LocalParameterLowering::Pointer,
        printf: PrintfLowering::OpenClPrintf {
            function: "_Z6printfPU3AS2Kcz",
            strings: 2,
            support: None,
            constant_strings_only: false,
        },
        math_library: MathLibrary {
            naming: LibraryNaming::OpenCl,
            bitcode: None,
        },
        sync_scopes: SyncScopes {
            device: "device",
            work_group: "workgroup",
        },
        features: FeatureSupport {
            half: true,
            double: true,
            float_atomic_add: true,
            double_atomic_add: true,
            int64_atomics: true,
            sub_groups: true,
            max_local_memory_bytes: None,
            max_private_memory_bytes: None,
            max_work_group_size: None,
            // OpenCL's guaranteed minimum of CL_DEVICE_MAX_PARAMETER_SIZE for full-profile
            // devices; a kernel within it runs on every OpenCL and Level Zero device.
            max_parameter_bytes: Some(1024),
        },
        module_flags: Vec::new(),
        atomic_metadata: Vec::new(),
        kernel_attributes: Vec::new(),
        required_work_group_size: RequiredWorkGroupSize {
            metadata: true,
            attributes: Vec::new(),
        },
        legalization: Legalization {
            truncate_through_32_bits: true,
            extend_narrow_through_32_bits: true,
            compare_exchange_through_spirv_builtin: true,
            expand_multiply_with_overflow: true,
            expand_bit_reverse: true,
            expand_signed_bool_to_float: true,
            // OpenCL's vector sizes (8 and 16 need the `Vector16` capability).
            vector_lengths: Some(&[2, 3, 4, 8, 16]),
            integer_widths: Some(&[8, 16, 32, 64]),
            read_work_items_once_at_entry: true,
            widen_index_arithmetic: true,
            expand_runtime_memory_fills: true,
            legalize_cooperative_matrices: true,
            minimum_opt_level: 3,
            ..Legalization::default()
        },
        output: OutputFormat::SpirvBinary {
            llc,
            backend: options.backend,
            validator: match matrix_units {
                MatrixUnits::Plain => Validator::InProcess,
                _ => Validator::Program(find_newer_validator()),
            },
        },
        matrix_units,
        // Every SPIR-V device kdsl loads (the Intel CPU device: 4 to 64; Intel GPUs: 8, 16 and
        // 32, Data Center GPU Max 16 and 32) has sub-groups of 16: with that size known, the
        // plain tiles' private indices are uniform and the CPU device vectorizes them.
        plain_tile_lanes: Some(16),
        matrix_groups: crate::target::MatrixGroups::Plain,
        async_copies: crate::target::AsyncCopies::Plain,
        tile_copies: crate::target::TileCopies::Plain,
        bf16_rounding: crate::target::Bf16Rounding::Integer,
    })
}

/// The SPIRV-Tools that knows `SPV_KHR_cooperative_matrix`, if installed
/// ([`kdsl_bundle::spirv_check::NEWER_VALIDATOR`]).
pub fn find_newer_validator() -> Option<PathBuf> {
    kdsl_bundle::spirv_check::find_newer_validator()
}

/// Checks `binary` with `validator`.
pub(crate) fn validate_with(validator: &Validator, binary: &[u8]) -> Result<(), String> {
    match validator {
        Validator::InProcess => validate(binary),
        Validator::Program(None) => Ok(()),
        Validator::Program(Some(program)) => {
            kdsl_bundle::spirv_check::validate_with_program(program, binary)
        }
    }
}

/// LLVM 22's `llc`: never an unversioned `llc` from `PATH`, which may be another LLVM.
fn find_llc() -> Option<PathBuf> {
    let mut candidates = Vec::new();
    if let Some(prefix) = std::env::var_os("LLVM_SYS_221_PREFIX") {
        candidates.push(PathBuf::from(prefix).join("bin/llc"));
    }
    candidates.push(PathBuf::from("/usr/lib/llvm-22/bin/llc"));
    super::find_tool(&["llc-22"]).or_else(|| candidates.into_iter().find(|c| c.is_file()))
}

/// Runs the SPIR-V backend on optimized bitcode and returns the SPIR-V binary.
///
/// The backend itself always runs at `-O0`: the module is already optimized at the requested
/// level, the device driver's compiler optimizes the SPIR-V again, and LLVM 22's SPIR-V code
/// generation at `-O1` and above miscompiles indexing into private arrays inside loops (the
/// `operators` kernel of `tests/kernels/language.krn`, caught by the differential test against
/// the reference interpreter, read the wrong elements).
pub(crate) fn run_backend(llc: &Path, bitcode: &[u8]) -> Result<Vec<u8>, Error> {
    let mut arguments = vec!["-O0".to_string()];
    arguments.extend(backend_options());
    arguments.extend(["-filetype=obj", "-o", "-", "-"].map(String::from));
    crate::tool::run(llc, &arguments, bitcode).map_err(|message| Error::BackendFailed {
        llc: llc.display().to_string(),
        message,
    })
}

/// Runs the SPIR-V backend in this process at `-O0` (see [`run_backend`] for why `-O0`), on
/// the fresh state `fresh` vouches for.
pub(crate) fn run_backend_in_process(
    target: &TargetDescription,
    module: &inkwell::module::Module<'_>,
    fresh: backend_state::FreshState,
) -> Result<Vec<u8>, String> {
    let machine = crate::llvm::target_machine(target, 0)?;
    match crate::contain::emit(&machine, module, inkwell::targets::FileType::Object) {
        Ok(binary) => Ok(binary),
        Err(failure) => {
            if let crate::contain::Failure::Aborted(_) = failure {
                fresh.abandon();
            }
            Err(failure.describe("the SPIR-V backend"))
        }
    }
}

/// The command-line options that configure the SPIR-V backend as `run_backend` configures
/// `llc`: the extensions the lowering may need.
pub(crate) fn backend_options() -> Vec<String> {
    let extensions: Vec<String> = EXTENSIONS.iter().map(|e| format!("+{e}")).collect();
    vec![format!("--spirv-ext={}", extensions.join(","))]
}

/// What a SPIR-V module declares and needs.
#[derive(Debug, Default)]
pub(crate) struct ModuleSummary {
    pub entry_points: Vec<String>,
    pub capabilities: Vec<String>,
    pub extensions: Vec<String>,
}

extern "C" {
    /// `runtime-shim/src/kdsl_spirv_validate.cpp`, linked with SPIRV-Tools by the build script.
    fn kdsl_spirv_validate(
        spirv: *const u8,
        size: usize,
        message: *mut std::ffi::c_char,
        capacity: usize,
    ) -> std::ffi::c_int;
}

/// Validates a SPIR-V module with SPIRV-Tools (the rules `spirv-val` applies), in process;
/// the validator's message when it is invalid.
pub(crate) fn validate(binary: &[u8]) -> Result<(), String> {
    let mut message = vec![0u8; 2048];
    // SAFETY: both buffers are valid for the sizes given; the wrapper never throws and writes
    // a NUL-terminated message of at most `capacity` bytes.
    let status = unsafe {
        kdsl_spirv_validate(
            binary.as_ptr(),
            binary.len(),
            message.as_mut_ptr().cast(),
            message.len(),
        )
    };
    if status == 0 {
        return Ok(());
    }
    let end = message
        .iter()
        .position(|&byte| byte == 0)
        .unwrap_or(message.len());
    Err(String::from_utf8_lossy(&message[..end]).into_owned())
}

/// Reads the module's capabilities, extensions and entry points, and checks that every kernel
/// is an entry point. A scan of the instruction words rather than rspirv's parser: rspirv 0.12's
/// grammar predates opcodes the backend emits (`OpTypeCooperativeMatrixKHR`), and these three
/// instructions are all this needs. Capabilities are named as rspirv names them.
pub(crate) fn inspect(binary: &[u8], kernels: &[String]) -> Result<ModuleSummary, Error> {
    const HEADER_WORDS: usize = 5;
    const OP_EXTENSION: u32 = 10;
    const OP_ENTRY_POINT: u32 = 15;
    const OP_CAPABILITY: u32 = 17;
    if !binary.len().is_multiple_of(4) || binary.len() < HEADER_WORDS * 4 {
        return Err(Error::Unparsable(format!(
            "{} bytes is not a whole module",
            binary.len()
        )));
    }
    let words: Vec<u32> = binary
        .chunks_exact(4)
        .map(|bytes| u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
        .collect();
    if words[0] != rspirv::spirv::MAGIC_NUMBER {
        return Err(Error::Unparsable("no SPIR-V magic number".into()));
    }
    let mut summary = ModuleSummary::default();
    let mut at = HEADER_WORDS;
    while at < words.len() {
        let (count, opcode) = ((words[at] >> 16) as usize, words[at] & 0xffff);
        let Some(operands) = words.get(at + 1..at + count).filter(|_| count > 0) else {
            return Err(Error::Unparsable(format!(
                "an instruction at word {at} runs past the end"
            )));
        };
        match opcode {
            OP_CAPABILITY => {
                let number = operands.first().copied().unwrap_or_default();
                summary
                    .capabilities
                    .push(match rspirv::spirv::Capability::from_u32(number) {
                        Some(capability) => format!("{capability:?}"),
                        None => format!("Capability{number}"),
                    });
            }
            OP_EXTENSION => summary.extensions.push(literal_string(operands)),
            // Execution model, function id, then the name.
            OP_ENTRY_POINT => summary
                .entry_points
                .push(literal_string(operands.get(2..).unwrap_or_default())),
            _ => {}
        }
        at += count;
    }
    let missing: Vec<String> = kernels
        .iter()
        .filter(|kernel| !summary.entry_points.contains(kernel))
        .map(|kernel| format!("`{kernel}`"))
        .collect();
    if !missing.is_empty() {
        return Err(Error::MissingEntryPoints(missing.join(", ")));
    }
    Ok(summary)
}

/// A SPIR-V literal string: UTF-8 bytes, little-endian in words, up to the first NUL.
fn literal_string(words: &[u32]) -> String {
    let bytes: Vec<u8> = words
        .iter()
        .flat_map(|word| word.to_le_bytes())
        .take_while(|&byte| byte != 0)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::validate;

    #[test]
    fn the_validator_rejects_what_is_not_a_valid_module() {
        assert!(validate(&[0u8; 7])
            .unwrap_err()
            .contains("not a whole SPIR-V module"));
        // A header (magic, version 1.4, generator, bound 1, schema) and nothing else: no
        // memory model, which every module needs.
        let header: Vec<u8> = [0x0723_0203u32, 0x0001_0400, 0, 1, 0]
            .iter()
            .flat_map(|word| word.to_le_bytes())
            .collect();
        let message = validate(&header).unwrap_err();
        assert!(!message.is_empty(), "the validator gave no reason");
    }
}
