//! LLVM code generation for kdsl: one lowering from [`kdsl_ir::Module`] to LLVM IR, driven
//! by a small per-target description, then LLVM 22's `default<O3>` pipeline (with one more
//! EarlyCSE and common-code sinking after it) and the target's backend.
//!
//! | target  | output                       | arch (default)                          |
//! |---------|------------------------------|-----------------------------------------|
//! | SPIR-V  | SPIR-V binary (Kernel)       | none (any device), or `intel_gpu_pvc`, `intel_gpu_dg2_g10` (`_g11`, `_g12`): matrix tiles on XMX |
//! | PTX     | PTX text                     | `sm_XX` (`sm_75`)                       |
//! | AMDGPU  | HSA code object (ELF, lld)   | `gfxNNN` or `gfxN-generic` (`gfx90a`)   |
//!
//! ```no_run
//! # fn demo(module: &kdsl_ir::Module) -> Result<(), kdsl_codegen::CodegenError> {
//! use kdsl_codegen::{compile, Options, TargetSpec};
//! let artifact = compile(module, &TargetSpec::ptx(Some("sm_90")), &Options::default())?;
//! println!("{}", String::from_utf8_lossy(&artifact.image.bytes));
//! # Ok(()) }
//! ```
//!
//! Language-level problems are the front end's job; this crate reports only what a target
//! cannot do (as [`kdsl_ir::Diagnostic`]s naming the target), bad target names, missing
//! tools, and internal failures. It never panics on valid IR and never hands LLVM something
//! its backend would abort on.

mod contain;
mod emit;
mod legalize;
mod library;
mod library_subset;
mod linker;
mod llvm;
mod lower;
mod support;
pub mod target;
mod timings;
mod tool;

pub use target::{amdgpu, nvptx, spirv};
pub use timings::TargetTimings;

/// The environment variables code generation reads (tools and libraries are looked up with
/// them, and the math-library cache placed): a compile server serves only the commands whose
/// values match its own.
pub const ENVIRONMENT_VARIABLES: &[&str] = &[
    "PATH",
    "LLVM_SYS_221_PREFIX",
    environment::PREFIX,
    environment::LIBDEVICE,
    environment::LIBCLC_DIR,
    "CUDA_PATH",
    "CUDA_HOME",
    environment::CACHE_DIR,
    "XDG_CACHE_HOME",
    "HOME",
];

use kdsl_bundle::environment;
use kdsl_bundle::{Bundle, ConstantInfo, Image, KernelInfo, TargetKind};
use kdsl_ir::{Diagnostic, ErrorCode, Module};

/// Which target to compile for, and for which processor.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TargetSpec {
    pub kind: TargetKind,
    /// `sm_90` for PTX, `gfx90a` or `gfx9-generic` for AMDGPU, an Intel GPU with matrix
    /// engines (`intel_gpu_pvc`) or `None` (any device) for SPIR-V. `None` picks the target's
    /// default processor.
    pub arch: Option<String>,
}

impl TargetSpec {
    pub fn new(kind: TargetKind, arch: Option<String>) -> TargetSpec {
        TargetSpec { kind, arch }
    }

    pub fn spirv() -> TargetSpec {
        TargetSpec::new(TargetKind::Spirv, None)
    }

    pub fn ptx(arch: Option<&str>) -> TargetSpec {
        TargetSpec::new(TargetKind::Ptx, arch.map(str::to_string))
    }

    pub fn amdgpu(arch: Option<&str>) -> TargetSpec {
        TargetSpec::new(TargetKind::Amdgpu, arch.map(str::to_string))
    }

    /// The processor the spec resolves to: the given one or the target's default
    /// (empty for SPIR-V).
    pub fn resolved_arch(&self) -> String {
        match self.kind {
            TargetKind::Spirv => self.arch.clone().unwrap_or_default(),
            TargetKind::Ptx => self
                .arch
                .clone()
                .unwrap_or_else(|| nvptx::DEFAULT_ARCH.to_string()),
            TargetKind::Amdgpu => self
                .arch
                .clone()
                .unwrap_or_else(|| amdgpu::DEFAULT_ARCH.to_string()),
        }
    }
}

impl std::fmt::Display for TargetSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let arch = self.resolved_arch();
        if arch.is_empty() {
            write!(f, "{}", self.kind)
        } else {
            write!(f, "{}:{arch}", self.kind)
        }
    }
}

/// Code generation options. Each target module has its own options as well.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// LLVM optimization level, 0 to 3 (higher values count as 3). Default 3.
    pub opt_level: u8,
    /// Put before every kernel's name to give its entry point symbol in every image (SPIR-V
    /// `OpEntryPoint`, PTX `.entry`, AMDGPU symbol and `.kd` descriptor). Empty by default;
    /// SYCLBIN files need `__sycl_kernel_` ([`kdsl_bundle::syclbin::KERNEL_NAME_PREFIX`]).
    /// The bundle's kernel metadata keeps the plain names.
    pub entry_point_prefix: String,
    /// Checked mode (`kdsl compile --checked`): bounds checks on every buffer and array access
    /// and checks of integer division, reported at run time as a fault naming the kernel, the
    /// source location, the buffer or array, the index and the work-item. Kernels take hidden
    /// arguments (see [`kdsl_bundle::KernelInfo::checked`]). Default false.
    pub checked: bool,
    pub spirv: spirv::Options,
    pub nvptx: nvptx::Options,
    pub amdgpu: amdgpu::Options,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            opt_level: 3,
            entry_point_prefix: String::new(),
            checked: false,
            spirv: spirv::Options::default(),
            nvptx: nvptx::Options::default(),
            amdgpu: amdgpu::Options::default(),
        }
    }
}

impl Options {
    pub fn with_opt_level(opt_level: u8) -> Options {
        Options {
            opt_level,
            ..Options::default()
        }
    }

    /// The entry point symbol of a kernel: [`Options::entry_point_prefix`] then its name.
    pub fn entry_point_name(&self, kernel: &str) -> String {
        format!("{}{kernel}", self.entry_point_prefix)
    }
}

/// The result of compiling a module for one target.
#[derive(Clone, Debug)]
pub struct Artifact {
    pub image: Image,
    /// The optimized LLVM IR the image was generated from (for `--emit llvm`); empty where
    /// nobody reads it (the artifacts of [`compile_bundle`]).
    pub llvm_ir: String,
    /// What the image needs from the device: SPIR-V capabilities and extensions, or the
    /// target processor's features. Informational.
    pub requirements: Vec<String>,
    /// How long each phase took.
    pub timings: TargetTimings,
}

#[derive(Debug, thiserror::Error)]
pub enum CodegenError {
    /// The module uses something the target cannot do; each diagnostic has a span and names the target.
    #[error("{}", summarize(.0))]
    Unsupported(Vec<Diagnostic>),
    #[error(transparent)]
    Spirv(#[from] spirv::Error),
    #[error(transparent)]
    Nvptx(#[from] nvptx::Error),
    #[error(transparent)]
    Amdgpu(#[from] amdgpu::Error),
    /// A bug in kdsl or LLVM, such as IR that fails LLVM's verifier; carries LLVM's message.
    #[error("internal code generation error for {target}: {message}")]
    Internal { target: String, message: String },
}

fn summarize(diagnostics: &[Diagnostic]) -> String {
    diagnostics
        .iter()
        .map(|d| d.message.as_str())
        .collect::<Vec<_>>()
        .join("; ")
}

impl CodegenError {
    /// Every error as diagnostics, for uniform rendering next to front-end errors. Errors
    /// without a source location get an empty span.
    pub fn into_diagnostics(self) -> Vec<Diagnostic> {
        match self {
            CodegenError::Unsupported(diagnostics) => diagnostics,
            CodegenError::Internal { .. } => vec![Diagnostic::internal(
                ErrorCode::E0902,
                self.to_string(),
                kdsl_ir::Span::default(),
                "internal compiler error",
            )],
            other => vec![Diagnostic::error(
                ErrorCode::E0801,
                other.to_string(),
                kdsl_ir::Span::default(),
                "while generating code",
            )],
        }
    }
}

/// Compiles every kernel of `module` for one target.
pub fn compile(
    module: &Module,
    target: &TargetSpec,
    options: &Options,
) -> Result<Artifact, CodegenError> {
    let info = kdsl_ir::ModuleInfo::new(module, options.checked);
    compile_for(module, &info, target, options, emit::LlvmIrText::Kept)
}

fn compile_for(
    module: &Module,
    info: &kdsl_ir::ModuleInfo,
    target: &TargetSpec,
    options: &Options,
    llvm_ir_text: emit::LlvmIrText,
) -> Result<Artifact, CodegenError> {
    let description = target::describe(target, options)?;
    support::check(module, &info.features, &description, options.checked)?;
    emit::compile(module, info, &description, options, llvm_ir_text)
}

/// Whether `module` fits `target` (features, local memory, parameter bytes, work-group size),
/// without generating code: the diagnostics `compile` would stop at before lowering.
pub fn check_support(
    module: &Module,
    target: &TargetSpec,
    options: &Options,
) -> Result<(), CodegenError> {
    let description = target::describe(target, options)?;
    let features = kdsl_ir::analysis::ModuleFeatures::new(module);
    support::check(module, &features, &description, options.checked)
}

/// The targets that a bundle of `module` gets besides the default ones so that its matrix
/// statements reach matrix units where a device has them: `ptx:sm_90a` for matrix-group
/// statements, whose `wgmma` no other processor has (the runtime prefers that image on such a
/// device). Empty for most modules.
pub fn matrix_unit_targets(module: &Module) -> Vec<TargetSpec> {
    let features = kdsl_ir::analysis::ModuleFeatures::new(module);
    let mut targets = Vec::new();
    if features.uses_group_matrix() {
        targets.push(TargetSpec::ptx(Some(nvptx::WGMMA_PROCESSOR)));
    }
    targets
}

/// The optimized LLVM IR for one target, without running the backend.
pub fn emit_llvm_ir(
    module: &Module,
    target: &TargetSpec,
    options: &Options,
) -> Result<String, CodegenError> {
    let description = target::describe(target, options)?;
    let info = kdsl_ir::ModuleInfo::new(module, options.checked);
    support::check(module, &info.features, &description, options.checked)?;
    emit::llvm_ir(module, &info, &description, options)
}

/// The bundle metadata of the module's kernels; checked kernels list their check sites (with
/// byte spans only: [`Bundle::locate_check_sites`] adds lines and columns from the source).
pub fn kernel_infos(module: &Module, checked: bool) -> Vec<KernelInfo> {
    // Checked mode runs matrix tiles as plain loops on every target (`lower_module`), whose
    // accesses are check sites too: `ModuleInfo` numbers the sites on that form.
    kernel_infos_from(module, &kdsl_ir::ModuleInfo::new(module, checked))
}

/// [`kernel_infos`] from the module's analyses.
fn kernel_infos_from(module: &Module, info: &kdsl_ir::ModuleInfo) -> Vec<KernelInfo> {
    module
        .functions
        .iter()
        .enumerate()
        .filter(|(_, function)| {
            function.kind == kdsl_ir::FunctionKind::Kernel && function.contiguous_copy_of.is_none()
        })
        .map(|(index, _)| {
            KernelInfo::from_function(module, kdsl_ir::FunctionId(index as u32), info)
        })
        .collect()
}

/// Compiles `module` for every target in `targets` into one bundle with the kernels' metadata.
/// Diagnostics from several targets are collected before failing.
pub fn compile_bundle(
    source_name: &str,
    module: &Module,
    targets: &[TargetSpec],
    options: &Options,
) -> Result<Bundle, CodegenError> {
    compile_bundle_timed(source_name, module, targets, options).map(|(bundle, _)| bundle)
}

/// The stack of each target's code generation thread: the lowering recurses over expression
/// trees (up to the front end's depth cap) and LLVM's passes recurse too.
const CODEGEN_STACK_BYTES: usize = 16 * 1024 * 1024;

/// [`compile_bundle`], also giving how long each target's phases took (in `targets`' order).
/// The targets are compiled concurrently, one thread (with its own LLVM context) each.
pub fn compile_bundle_timed(
    source_name: &str,
    module: &Module,
    targets: &[TargetSpec],
    options: &Options,
) -> Result<(Bundle, Vec<TargetTimings>), CodegenError> {
    llvm::initialize();
    // Analysed once, read by every target's lowering and by the kernels' metadata.
    let info = &kdsl_ir::ModuleInfo::new(module, options.checked);
    let results: Vec<Result<Artifact, CodegenError>> = std::thread::scope(|scope| {
        let workers: Vec<_> = targets
            .iter()
            .map(|target| {
                std::thread::Builder::new()
                    .name(format!("kdsl-codegen-{target}"))
                    .stack_size(CODEGEN_STACK_BYTES)
                    .spawn_scoped(scope, move || {
                        compile_for(module, info, target, options, emit::LlvmIrText::Dropped)
                    })
            })
            .collect();
        workers
            .into_iter()
            .zip(targets)
            .map(|(worker, target)| match worker {
                Ok(worker) => worker.join().unwrap_or_else(|_| {
                    Err(CodegenError::Internal {
                        target: target.to_string(),
                        message: "the code generation thread panicked".to_string(),
                    })
                }),
                // No thread could start: compile here instead.
                Err(_) => compile_for(module, info, target, options, emit::LlvmIrText::Dropped),
            })
            .collect()
    });
    let mut images = Vec::with_capacity(targets.len());
    let mut timings = Vec::with_capacity(targets.len());
    let mut diagnostics = Vec::new();
    for result in results {
        match result {
            Ok(artifact) => {
                images.push(artifact.image);
                timings.push(artifact.timings);
            }
            Err(CodegenError::Unsupported(found)) => diagnostics.extend(found),
            Err(other) => return Err(other),
        }
    }
    if !diagnostics.is_empty() {
        return Err(CodegenError::Unsupported(diagnostics));
    }
    let bundle = Bundle {
        source_name: source_name.to_string(),
        kernels: kernel_infos_from(module, info),
        images,
        constants: module.constants.iter().map(ConstantInfo::from_ir).collect(),
        entry_point_prefix: options.entry_point_prefix.clone(),
    };
    Ok((bundle, timings))
}
