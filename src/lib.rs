//! kdsl: portable GPU kernels.
//!
//! One `.krn` source compiles to SPIR-V (SYCL, OpenCL, Level Zero), PTX (CUDA) and AMDGPU code
//! objects (HIP); [`runtime`] loads the result on whichever device is present.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let source = std::fs::read_to_string("examples/saxpy.krn")?;
//! let bundle = kdsl::compile("saxpy.krn", &source, &kdsl::default_targets(), &Default::default())?;
//! let device = kdsl::runtime::Device::default()?;
//! let saxpy = device.load(&bundle)?.kernel("saxpy")?;
//! # let _ = saxpy;
//! # Ok(()) }
//! ```

pub use kdsl_bundle as bundle;
pub use kdsl_bundle::syclbin::Syclbin;
pub use kdsl_bundle::{Bundle, ConstantInfo, ConstantValue, Image, KernelInfo, TargetKind};
/// The environment variables the compiler reads (see [`kdsl_codegen::ENVIRONMENT_VARIABLES`]).
pub use kdsl_codegen::ENVIRONMENT_VARIABLES as COMPILER_ENVIRONMENT_VARIABLES;
pub use kdsl_codegen::{Artifact, TargetSpec, TargetTimings};
pub use kdsl_frontend::Define;
pub use kdsl_frontend::{FrontEndReport, FrontEndTimings};
pub use kdsl_ir as ir;
pub use kdsl_ir::{Diagnostic, Module};
pub use kdsl_runtime as runtime;

mod session;
pub use session::{Checked, Compiler};

/// How to compile.
#[derive(Clone, Debug)]
pub struct CompileOptions {
    /// LLVM optimization level, 0 to 3.
    pub opt_level: u8,
    /// Module constants set at compile time, as `kdsl compile -D NAME=VALUE` does: each
    /// replaces the declared value of the constant it names (see docs/language.md).
    pub defines: Vec<Define>,
    /// Checked mode (`kdsl compile --checked`): bounds checks on every buffer and array access
    /// and checks of integer division and remainder; the runtime reports the first violation of
    /// a launch as `RuntimeError::KernelFault` when its event is waited for (docs/language.md).
    pub checked: bool,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            opt_level: 3,
            defines: Vec::new(),
            checked: false,
        }
    }
}

impl CompileOptions {
    /// Sets module constant `name` to `value` (a literal of its type, written as in source;
    /// numbers and `bool`s are converted with `to_string`):
    /// `CompileOptions::default().define("WINDOW", 8).define("SCALE", 0.5)`.
    pub fn define(mut self, name: impl Into<String>, value: impl ToString) -> Self {
        self.defines.push(Define::new(name, value));
        self
    }
}

/// Why a source did not compile: diagnostics to show the user.
#[derive(Debug, thiserror::Error)]
#[error("{}", summary(.diagnostics))]
pub struct CompileError {
    pub diagnostics: Vec<Diagnostic>,
}

fn summary(diagnostics: &[Diagnostic]) -> String {
    match diagnostics {
        [] => "compilation failed".to_string(),
        [only] => format!("error[{}]: {}", only.code, only.message),
        [first, rest @ ..] => format!(
            "error[{}]: {} (and {} more)",
            first.code,
            first.message,
            rest.len()
        ),
    }
}

impl CompileError {
    /// The diagnostics rendered with `file:line:col`, snippets, labels and hints.
    pub fn render(&self, file_name: &str, source: &str, color: bool) -> String {
        kdsl_frontend::render_diagnostics(file_name, source, &self.diagnostics, color)
    }
}

impl From<kdsl_codegen::CodegenError> for CompileError {
    fn from(error: kdsl_codegen::CodegenError) -> Self {
        CompileError {
            diagnostics: error.into_diagnostics(),
        }
    }
}

impl From<Vec<Diagnostic>> for CompileError {
    fn from(diagnostics: Vec<Diagnostic>) -> Self {
        CompileError { diagnostics }
    }
}

// The functions below take source text and run one [`Compiler`] session each; a caller that
// does more than one thing with a source (choose targets, then compile) should hold the
// session's [`Checked`] module instead of checking the source again.

/// Parses and type-checks a source, giving its IR.
pub fn check(source: &str) -> Result<Module, CompileError> {
    check_with(source, &CompileOptions::default())
}

/// Parses and type-checks a source with the module constants `options` defines.
pub fn check_with(source: &str, options: &CompileOptions) -> Result<Module, CompileError> {
    check_with_warnings(source, options).map(|(module, _)| module)
}

/// [`check_with`], also giving the warnings (such as an `unroll` that cannot be honoured).
pub fn check_with_warnings(
    source: &str,
    options: &CompileOptions,
) -> Result<(Module, Vec<Diagnostic>), CompileError> {
    let checked = Compiler::new(options.clone()).check("", source)?;
    Ok((checked.module, checked.warnings))
}

/// The targets a bundle gets unless told otherwise ([`kdsl_bundle::processors::DEFAULT_TARGETS`]):
/// SPIR-V, PTX for the default processor and for sm_90 (H100, H200), and AMDGPU for the default
/// processor and for gfx1100.
pub fn default_targets() -> Vec<TargetSpec> {
    kdsl_bundle::processors::DEFAULT_TARGETS
        .iter()
        .map(|(kind, processor)| TargetSpec::new(*kind, processor.map(str::to_string)))
        .collect()
}

/// The targets of a list that a source fits, and those it does not with the reasons (local
/// memory, a missing feature, too many parameter bytes), found without generating code.
#[derive(Debug, Default)]
pub struct TargetSelection {
    pub supported: Vec<TargetSpec>,
    pub unsupported: Vec<(TargetSpec, CompileError)>,
}

/// Sorts `targets` into those `source` fits and those it does not, so a caller that did not
/// choose the targets itself (the defaults) can drop the ones a kernel cannot run on.
pub fn select_targets(
    source: &str,
    targets: &[TargetSpec],
    options: &CompileOptions,
) -> Result<TargetSelection, CompileError> {
    let compiler = Compiler::new(options.clone());
    let checked = compiler.check("", source)?;
    Ok(compiler.supported_targets(&checked, targets))
}

/// Compiles a source for one target, giving the image and its optimized LLVM IR.
pub fn compile_for_target(
    source: &str,
    target: &TargetSpec,
    options: &CompileOptions,
) -> Result<Artifact, CompileError> {
    let compiler = Compiler::new(options.clone());
    compiler.compile_for_target(&compiler.check("", source)?, target)
}

/// Compiles a source for several targets into one bundle with the kernels' metadata.
/// Every target is tried, so the diagnostics of all of them are reported together.
/// The targets are compiled concurrently.
pub fn compile(
    source_name: &str,
    source: &str,
    targets: &[TargetSpec],
    options: &CompileOptions,
) -> Result<Bundle, CompileError> {
    compile_reporting(source_name, source, targets, options).map(|(bundle, _)| bundle)
}

/// What a compilation found besides its output: the front end's warnings, and where the
/// time went (the front end's phases, then each target's).
#[derive(Clone, Debug, Default)]
pub struct CompileReport {
    pub warnings: Vec<Diagnostic>,
    pub front_end: FrontEndTimings,
    /// One per target, in the order the targets were given; they ran concurrently.
    pub targets: Vec<TargetTimings>,
    /// From the start of parsing to the last target's image.
    pub total: std::time::Duration,
}

impl CompileReport {
    /// The breakdown as `kdsl compile --timings` prints it: one line per phase, in
    /// milliseconds.
    pub fn timings_text(&self) -> String {
        let milliseconds = |duration: std::time::Duration| duration.as_secs_f64() * 1e3;
        let mut out = String::from("timings (ms; targets ran concurrently)\n");
        out += &format!(
            "  {:<28}{:>9.3}\n",
            "parse",
            milliseconds(self.front_end.parse)
        );
        out += &format!(
            "  {:<28}{:>9.3}\n",
            "check",
            milliseconds(self.front_end.check)
        );
        for target in &self.targets {
            out += &format!(
                "  {:<28}{:>9.3}  (backend {})\n",
                target.target,
                milliseconds(target.total()),
                target.backend_runs
            );
            for (phase, duration) in target.phases() {
                out += &format!("    {:<26}{:>9.3}\n", phase, milliseconds(duration));
            }
        }
        out += &format!("  {:<28}{:>9.3}\n", "total", milliseconds(self.total));
        out
    }
}

/// [`compile`], also giving where the time went (see `kdsl compile --timings`).
pub fn compile_reporting(
    source_name: &str,
    source: &str,
    targets: &[TargetSpec],
    options: &CompileOptions,
) -> Result<(Bundle, CompileReport), CompileError> {
    let compiler = Compiler::new(options.clone());
    compiler.compile(&compiler.check(source_name, source)?, targets)
}

/// Compiles a source for several targets into a SYCLBIN file (the format of the
/// `sycl_ext_oneapi_syclbin` extension; `.to_bytes()` gives the file): the SPIR-V image as an IR
/// module, PTX and AMDGPU images as native device code images, state executable, and kdsl's
/// kernel metadata. Every image's entry points are named `__sycl_kernel_<name>`, so a stock SYCL
/// program gets the kernels with `get_kernel_bundle<bundle_state::executable>(context, devices,
/// bytes)` and `ext_oneapi_get_kernel("<name>")`. See docs/syclbin.md.
pub fn compile_syclbin(
    source_name: &str,
    source: &str,
    targets: &[TargetSpec],
    options: &CompileOptions,
) -> Result<Syclbin, CompileError> {
    compile_syclbin_reporting(source_name, source, targets, options).map(|(syclbin, _)| syclbin)
}

/// [`compile_syclbin`], also giving where the time went.
pub fn compile_syclbin_reporting(
    source_name: &str,
    source: &str,
    targets: &[TargetSpec],
    options: &CompileOptions,
) -> Result<(Syclbin, CompileReport), CompileError> {
    let compiler = Compiler::new(options.clone());
    compiler.syclbin(&compiler.check(source_name, source)?, targets)
}
