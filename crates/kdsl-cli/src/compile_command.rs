//! `kdsl compile`, run for an invocation: the source the command read, whether its standard
//! error is a terminal, what it says and the file it writes. The `kdsl` process runs it for
//! itself, and the compile server (`compile_server/`) for the `kdsl` commands that connect to
//! it; either way the command itself reads the source and writes the output
//! (`outcome.rs`), so standard streams, FIFOs, umask and working directory are its own.

use crate::outcome::{Outcome, OutputFile};
use clap::{Args, ValueEnum};
use kdsl::{Checked, CompileError, CompileOptions, Compiler, Define, TargetKind, TargetSpec};
use std::path::{Path, PathBuf};

/// What a `kdsl compile` command says on standard error and the file it writes.
pub(crate) struct Invocation {
    /// Whether diagnostics are rendered in colour (standard error is a terminal).
    pub color: bool,
    /// What the command prints to standard error, in order.
    pub messages: String,
    /// The file to write; compiling is done once it is known (writing it is the last step).
    pub output: Option<OutputFile>,
}

impl Invocation {
    pub(crate) fn new(color: bool) -> Self {
        Invocation {
            color,
            messages: String::new(),
            output: None,
        }
    }

    fn say(&mut self, text: impl AsRef<str>) {
        self.messages += text.as_ref();
    }

    fn say_line(&mut self, text: impl AsRef<str>) {
        self.messages += text.as_ref();
        self.messages.push('\n');
    }

    fn render(&self, error: &CompileError, file: &Path, source: &str) -> String {
        error.render(&file.display().to_string(), source, self.color)
    }

    fn write_output(&mut self, path: &Path, bytes: Vec<u8>) {
        self.output = Some(OutputFile {
            path: path.to_path_buf(),
            bytes,
            said_before: self.messages.len(),
        });
    }
}

/// Compiles `source` (the file `arguments` name, already read) in this process.
pub(crate) fn compile_here(arguments: &CompileArguments, source: &str, color: bool) -> Outcome {
    let mut invocation = Invocation::new(color);
    let result = run(arguments, source, &mut invocation);
    Outcome::new(result, invocation)
}

/// The arguments of `kdsl compile`.
#[derive(Args)]
pub(crate) struct CompileArguments {
    /// The .krn source file.
    pub file: PathBuf,
    /// Targets, comma separated: spirv, ptx, amdgpu (default: SPIR-V, PTX for sm_75 and sm_90,
    /// AMDGPU for gfx90a and gfx1100, as `kdsl::default_targets`; then a target the kernels do
    /// not fit, such as a GPU's local-memory limit, is skipped with a warning).
    #[arg(long, value_delimiter = ',')]
    pub target: Option<Vec<String>>,
    /// Processors, comma separated: sm_XX (PTX), gfxNNN (AMDGPU) and, for SPIR-V, an Intel GPU
    /// with matrix engines (intel_gpu_pvc, intel_gpu_dg2_g10/_g11/_g12), whose image (tiles on
    /// cooperative matrices) comes beside the plain SPIR-V one (several allowed).
    #[arg(long, value_delimiter = ',')]
    pub arch: Vec<String>,
    /// The output file (default: the source's name with .kbundle or .syclbin, or the artifact's extension).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// The file format: a kdsl bundle, or a SYCLBIN file that stock SYCL programs load with
    /// `get_kernel_bundle` (entry points named `__sycl_kernel_<name>`).
    #[arg(long, value_enum, default_value = "kbundle", conflicts_with = "emit")]
    pub format: Format,
    /// Write a single artifact instead of a bundle: the image, LLVM IR, or kdsl IR.
    #[arg(long, value_enum)]
    pub emit: Option<Emit>,
    /// LLVM optimization level, 0 to 3.
    #[arg(short = 'O', long = "opt-level", default_value_t = 3, value_parser = clap::value_parser!(u8).range(0..=3))]
    pub opt_level: u8,
    /// Set a module constant: -D NAME=VALUE replaces the declared value (repeatable).
    #[arg(short = 'D', long = "define", value_name = "NAME=VALUE", value_parser = parse_define)]
    pub define: Vec<Define>,
    /// Print where the time went (parse, check, and per target: lowering, library
    /// loading, optimization, backend, linking) to standard error.
    #[arg(long, conflicts_with = "emit")]
    pub timings: bool,
    /// Checked mode: bounds checks on every buffer and array access and checks of integer
    /// division; the runtime reports the first violation as an error naming the kernel, the
    /// source line, the buffer or array, the index and the work-item.
    #[arg(long)]
    pub checked: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// The kdsl bundle (.kbundle), which the kdsl runtime loads.
    Kbundle,
    /// A SYCLBIN file (.syclbin) for `sycl::ext::oneapi::experimental::get_kernel_bundle`.
    Syclbin,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Emit {
    /// The SPIR-V binary.
    Spirv,
    /// PTX text.
    Ptx,
    /// The AMDGPU HSA code object.
    Hsaco,
    /// Optimized LLVM IR for the first target.
    Llvm,
    /// The kdsl IR after type checking.
    Ir,
}

/// Runs `kdsl compile` with `arguments` on `source` for `invocation`.
pub(crate) fn run(
    arguments: &CompileArguments,
    source: &str,
    invocation: &mut Invocation,
) -> Result<(), String> {
    let options = CompileOptions {
        opt_level: arguments.opt_level,
        defines: arguments.define.clone(),
        checked: arguments.checked,
    };
    let wanted = Output {
        path: arguments.output.clone(),
        format: arguments.format,
        emit: arguments.emit,
        timings: arguments.timings,
    };
    compile(
        invocation,
        &arguments.file,
        source,
        arguments.target.as_deref(),
        &arguments.arch,
        wanted,
        &options,
    )
}

/// `NAME=VALUE` after `-D`; the value is checked against the constant's type later.
pub(crate) fn parse_define(text: &str) -> Result<Define, String> {
    Define::parse(text)
        .filter(|define| !define.name.is_empty())
        .ok_or_else(|| format!("expected NAME=VALUE, such as `-D BLOCK=256`, found `{text}`"))
}

/// An error for a processor name that is neither `sm_XX` nor `gfxNNN`.
fn check_processor_names(arches: &[String]) -> Result<(), String> {
    match arches.iter().find(|a| arch_kind(a).is_none()) {
        Some(stray) => Err(format!(
            "error: unknown processor `{stray}`\n  = hint: name NVIDIA processors sm_XX (sm_90), AMD ones gfxNNN (gfx90a, gfx9-generic) and Intel GPUs intel_gpu_pvc or intel_gpu_dg2_g10"
        )),
        None => Ok(()),
    }
}

/// The targets without `--target`: [`kdsl::default_targets`], where the processors `--arch`
/// names replace the default processors of their target.
fn default_target_specs(arches: &[String]) -> Result<Vec<TargetSpec>, String> {
    check_processor_names(arches)?;
    let mut specs: Vec<TargetSpec> = Vec::new();
    for spec in kdsl::default_targets() {
        let named: Vec<&String> = arches
            .iter()
            .filter(|arch| arch_kind(arch) == Some(spec.kind))
            .collect();
        if named.is_empty() || spec.kind == TargetKind::Spirv {
            // Intel GPUs' images come beside the plain SPIR-V one, which every other device takes.
            let kind = spec.kind;
            specs.push(spec);
            if kind == TargetKind::Spirv {
                specs.extend(
                    named
                        .into_iter()
                        .map(|arch| TargetSpec::new(kind, Some(arch.clone()))),
                );
            }
        } else if !specs.iter().any(|earlier| earlier.kind == spec.kind) {
            specs.extend(
                named
                    .into_iter()
                    .map(|arch| TargetSpec::new(spec.kind, Some(arch.clone()))),
            );
        }
    }
    Ok(specs)
}

/// `spirv`, `ptx:sm_75`, `spirv:intel_gpu_pvc`: a target as messages name it.
fn target_name(spec: &TargetSpec) -> String {
    spec.to_string()
}

fn target_specs(
    invocation: &mut Invocation,
    targets: &[String],
    arches: &[String],
) -> Result<Vec<TargetSpec>, String> {
    check_processor_names(arches)?;
    let mut specs = Vec::new();
    let mut kinds = Vec::new();
    for name in targets {
        let kind = TargetKind::from_name(name.trim()).ok_or_else(|| {
            format!(
                "error: unknown target `{name}`\n  = hint: the targets are spirv, ptx and amdgpu"
            )
        })?;
        kinds.push(kind);
        let matching: Vec<&String> = arches
            .iter()
            .filter(|arch| arch_kind(arch) == Some(kind))
            .collect();
        if matching.is_empty() || kind == TargetKind::Spirv {
            // Intel GPUs' images come beside the plain SPIR-V one.
            specs.push(TargetSpec::new(kind, None));
            specs.extend(
                matching
                    .into_iter()
                    .map(|arch| TargetSpec::new(kind, Some(arch.clone()))),
            );
        } else {
            specs.extend(
                matching
                    .into_iter()
                    .map(|arch| TargetSpec::new(kind, Some(arch.clone()))),
            );
        }
    }
    for arch in arches {
        if let Some(kind) = arch_kind(arch).filter(|kind| !kinds.contains(kind)) {
            invocation.say(format!("warning: --arch {arch} is ignored: no {kind} target was requested (add `--target {kind}`)\n"));
        }
    }
    Ok(specs)
}

/// The target a processor name belongs to: `sm_XX` to PTX, `gfxNNN` to AMDGPU, kdsl's Intel
/// GPUs (`intel_gpu_pvc`) to SPIR-V.
fn arch_kind(arch: &str) -> Option<TargetKind> {
    if arch.starts_with("sm_") {
        Some(TargetKind::Ptx)
    } else if arch.starts_with("gfx") {
        Some(TargetKind::Amdgpu)
    } else if kdsl::bundle::processors::INTEL_GPU_PROCESSORS.contains(&arch) {
        Some(TargetKind::Spirv)
    } else {
        None
    }
}

/// What `kdsl compile` writes.
struct Output {
    path: Option<PathBuf>,
    format: Format,
    emit: Option<Emit>,
    /// Also print where the time went.
    timings: bool,
}

fn compile(
    invocation: &mut Invocation,
    file: &Path,
    source: &str,
    requested: Option<&[String]>,
    arches: &[String],
    wanted: Output,
    options: &CompileOptions,
) -> Result<(), String> {
    let Output {
        path: output,
        format,
        emit,
        timings,
    } = wanted;
    let name = file.display().to_string();
    // One session: the source is checked once, whatever is made of it afterwards.
    let compiler = Compiler::new(options.clone());
    let checked = compiler
        .check(&name, source)
        .map_err(|e| invocation.render(&e, file, source))?;
    if emit == Some(Emit::Ir) {
        invocation.write_output(
            &output.unwrap_or_else(|| file.with_extension("kir")),
            checked.module.to_string().into_bytes(),
        );
        return Ok(());
    }
    let defaulted = requested.is_none();
    let mut specs = match requested {
        Some(targets) => target_specs(invocation, targets, arches)?,
        None => default_target_specs(arches)?,
    };
    // Default PTX processors (none named with --arch) gain those where matrix units need them.
    if defaulted && !arches.iter().any(|a| arch_kind(a) == Some(TargetKind::Ptx)) {
        specs = compiler.with_matrix_unit_targets(&checked, specs);
    }
    if defaulted && emit.is_none() {
        specs =
            drop_unfitting_default_targets(invocation, &compiler, &checked, specs, file, source)?;
    }
    if let Some(emit) = emit {
        let wanted = match emit {
            Emit::Spirv => Some(TargetKind::Spirv),
            Emit::Ptx => Some(TargetKind::Ptx),
            Emit::Hsaco => Some(TargetKind::Amdgpu),
            Emit::Llvm | Emit::Ir => None,
        };
        if let Some(kind) = wanted {
            specs.retain(|s| s.kind == kind);
            if specs.is_empty() {
                specs.push(TargetSpec::new(
                    kind,
                    arches.iter().find(|a| arch_kind(a) == Some(kind)).cloned(),
                ));
            }
        }
        // An Intel GPU's SPIR-V (named with --arch) rather than the plain SPIR-V beside it.
        let chosen = specs
            .iter()
            .position(|s| s.kind == TargetKind::Spirv && s.arch.is_some())
            .unwrap_or(0);
        let spec = (chosen < specs.len())
            .then(|| specs.swap_remove(chosen))
            .ok_or("error: no target to emit for")?;
        let render = |e: CompileError| invocation.render(&e, file, source);
        let (bytes, extension) = match emit {
            // The IR the back end receives, without running it: readable when it fails.
            Emit::Llvm => (
                compiler
                    .llvm_ir(&checked, &spec)
                    .map_err(render)?
                    .into_bytes(),
                "ll",
            ),
            Emit::Spirv | Emit::Ptx | Emit::Hsaco => {
                let artifact = compiler
                    .compile_for_target(&checked, &spec)
                    .map_err(render)?;
                let extension = match emit {
                    Emit::Spirv => "spv",
                    Emit::Ptx => "ptx",
                    _ => "hsaco",
                };
                (artifact.image.bytes, extension)
            }
            Emit::Ir => unreachable!("handled above"),
        };
        invocation.write_output(
            &output.unwrap_or_else(|| file.with_extension(extension)),
            bytes,
        );
        return Ok(());
    }
    if format == Format::Syclbin {
        let (syclbin, measured) = compiler
            .syclbin(&checked, &specs)
            .map_err(|e| invocation.render(&e, file, source))?;
        print_warnings(invocation, &measured, file, source);
        let output = output.unwrap_or_else(|| file.with_extension("syclbin"));
        invocation.write_output(&output, syclbin.to_bytes());
        if timings {
            invocation.say(measured.timings_text());
        }
        warn_about_arch_choice(invocation, &syclbin);
        let kernels = syclbin
            .modules
            .iter()
            .map(|m| m.kernel_names.len())
            .sum::<usize>();
        invocation.say_line(format!(
            "wrote {} (SYCLBIN, state {}; {} kernel{}; {})",
            output.display(),
            syclbin.state.name(),
            kernels,
            if kernels == 1 { "" } else { "s" },
            syclbin.describe_images()
        ));
        return Ok(());
    }
    let (bundle, measured) = compiler
        .compile(&checked, &specs)
        .map_err(|e| invocation.render(&e, file, source))?;
    print_warnings(invocation, &measured, file, source);
    let output = output.unwrap_or_else(|| file.with_extension("kbundle"));
    invocation.write_output(&output, bundle.to_bytes());
    if timings {
        invocation.say(measured.timings_text());
    }
    invocation.say_line(format!(
        "wrote {} ({} kernel{}; {})",
        output.display(),
        bundle.kernels.len(),
        if bundle.kernels.len() == 1 { "" } else { "s" },
        bundle.describe_images()
    ));
    Ok(())
}

/// With the default targets, a target the kernels do not fit (a GPU's local-memory limit for
/// a module meant for the CPU device) is dropped with a warning instead of failing the whole
/// compilation; only when no target is left is it an error.
fn drop_unfitting_default_targets(
    invocation: &mut Invocation,
    compiler: &Compiler,
    checked: &Checked,
    specs: Vec<TargetSpec>,
    file: &Path,
    source: &str,
) -> Result<Vec<TargetSpec>, String> {
    let selection = compiler.supported_targets(checked, &specs);
    let defaults = specs.iter().map(target_name).collect::<Vec<_>>().join(",");
    if selection.supported.is_empty() {
        let mut report = String::new();
        for (_, error) in &selection.unsupported {
            report += &invocation.render(error, file, source);
        }
        return Err(format!(
            "{report}error: the module fits none of the default targets ({defaults})\n  = hint: choose targets with --target, e.g. --target spirv"
        ));
    }
    for (spec, error) in &selection.unsupported {
        let reason = error.diagnostics.first().map_or_else(
            || error.to_string(),
            |d| format!("{}: {}", d.code, d.message),
        );
        invocation.say_line(format!(
            "warning: skipping target {} (one of the default targets {defaults}): {reason}\n  = hint: name the targets with --target to make this an error, e.g. --target {}",
            target_name(spec),
            selection
                .supported
                .iter()
                .map(|s| s.kind.name())
                .fold(Vec::new(), |mut kinds, kind| {
                    if !kinds.contains(&kind) {
                        kinds.push(kind);
                    }
                    kinds
                })
                .join(",")
        ));
    }
    Ok(selection.supported)
}

fn print_warnings(
    invocation: &mut Invocation,
    report: &kdsl::CompileReport,
    file: &Path,
    source: &str,
) {
    if !report.warnings.is_empty() {
        let warnings = kdsl::CompileError::from(report.warnings.clone());
        let text = invocation.render(&warnings, file, source);
        invocation.say(text);
    }
}

/// SYCL runtimes take the first native image whose target fits the device and do not read its
/// arch (docs/syclbin.md), so a second image for the same target is never chosen.
fn warn_about_arch_choice(invocation: &mut Invocation, syclbin: &kdsl::Syclbin) {
    for module in &syclbin.modules {
        for (index, image) in module.native_images.iter().enumerate() {
            let earlier = &module.native_images[..index];
            if let Some(first) = earlier.iter().find(|other| other.target == image.target) {
                invocation.say_line(format!(
                    "warning: the {} {} image will not be used by SYCL runtimes: they take the first {} image (here {}) without looking at its arch\n  = hint: for a SYCLBIN, pass one --arch per target",
                    image.target, image.arch, image.target, first.arch
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(specs: &[TargetSpec]) -> Vec<String> {
        specs.iter().map(target_name).collect()
    }

    #[test]
    fn without_target_the_library_defaults_are_used_and_arch_replaces_a_targets_processors() {
        let defaults = default_target_specs(&[]).unwrap();
        assert_eq!(defaults, kdsl::default_targets());
        let arches = ["sm_90a".to_string(), "sm_100f".to_string()];
        assert_eq!(
            names(&default_target_specs(&arches).unwrap()),
            [
                "spirv",
                "ptx:sm_90a",
                "ptx:sm_100f",
                "amdgpu:gfx90a",
                "amdgpu:gfx1100"
            ]
        );
        assert!(default_target_specs(&["gfx9-generic".into()])
            .unwrap()
            .iter()
            .any(|spec| target_name(spec) == "amdgpu:gfx9-generic"));
        assert!(default_target_specs(&["x86".into()])
            .unwrap_err()
            .contains("unknown processor `x86`"));
    }
}
