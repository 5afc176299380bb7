//! The `kdsl` command: compile `.krn` files into bundles, check them, list devices.

use clap::{Parser, Subcommand, ValueEnum};
use kdsl::{CompileError, CompileOptions, Define, TargetKind, TargetSpec};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "kdsl",
    version,
    about = "Portable GPU kernels: compile .krn files for SYCL, CUDA and HIP devices"
)]
struct Command {
    #[command(subcommand)]
    action: Action,
}

#[derive(Subcommand)]
enum Action {
    /// Compile a .krn file into a bundle (or, with --emit, into one artifact for inspection).
    Compile {
        /// The .krn source file.
        file: PathBuf,
        /// Targets, comma separated: spirv, ptx, amdgpu (default: all three; then a target the
        /// kernels do not fit, such as a GPU's local-memory limit, is skipped with a warning).
        #[arg(long, value_delimiter = ',')]
        target: Option<Vec<String>>,
        /// Processors for PTX and AMDGPU, comma separated: sm_XX and gfxNNN (several allowed).
        #[arg(long, value_delimiter = ',')]
        arch: Vec<String>,
        /// The output file (default: the source's name with .kbundle or .syclbin, or the artifact's extension).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// The file format: a kdsl bundle, or a SYCLBIN file that stock SYCL programs load with
        /// `get_kernel_bundle` (entry points named `__sycl_kernel_<name>`).
        #[arg(long, value_enum, default_value = "kbundle", conflicts_with = "emit")]
        format: Format,
        /// Write a single artifact instead of a bundle: the image, LLVM IR, or kdsl IR.
        #[arg(long, value_enum)]
        emit: Option<Emit>,
        /// LLVM optimization level, 0 to 3.
        #[arg(short = 'O', long = "opt-level", default_value_t = 3, value_parser = clap::value_parser!(u8).range(0..=3))]
        opt_level: u8,
        /// Set a module constant: -D NAME=VALUE replaces the declared value (repeatable).
        #[arg(short = 'D', long = "define", value_name = "NAME=VALUE", value_parser = parse_define)]
        define: Vec<Define>,
        /// Print where the time went (parse, check, and per target: lowering, library
        /// loading, optimization, backend, linking) to standard error.
        #[arg(long, conflicts_with = "emit")]
        timings: bool,
        /// Checked mode: bounds checks on every buffer and array access and checks of integer
        /// division; the runtime reports the first violation as an error naming the kernel, the
        /// source line, the buffer or array, the index and the work-item.
        #[arg(long)]
        checked: bool,
    },
    /// Only parse and type-check a .krn file.
    Check {
        /// The .krn source file.
        file: PathBuf,
        /// Set a module constant: -D NAME=VALUE replaces the declared value (repeatable).
        #[arg(short = 'D', long = "define", value_name = "NAME=VALUE", value_parser = parse_define)]
        define: Vec<Define>,
    },
    /// List the devices kdsl can launch kernels on, and the bundle target each takes.
    Devices,
    /// Show what a bundle or SYCLBIN file holds: its kernels, their parameters, and its images.
    Inspect {
        /// The .kbundle or .syclbin file.
        bundle: PathBuf,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// The kdsl bundle (.kbundle), which the kdsl runtime loads.
    Kbundle,
    /// A SYCLBIN file (.syclbin) for `sycl::ext::oneapi::experimental::get_kernel_bundle`.
    Syclbin,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Emit {
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

fn main() -> ExitCode {
    let command = Command::parse();
    let result = match command.action {
        Action::Compile {
            file,
            target,
            arch,
            output,
            format,
            emit,
            opt_level,
            define,
            timings,
            checked,
        } => {
            let options = CompileOptions {
                opt_level,
                defines: define,
                checked,
            };
            let wanted = Output {
                path: output,
                format,
                emit,
                timings,
            };
            compile(&file, target.as_deref(), &arch, wanted, &options)
        }
        Action::Check { file, define } => check(&file, &define),
        Action::Devices => devices(),
        Action::Inspect { bundle } => inspect(&bundle),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprint!("{message}");
            if !message.ends_with('\n') {
                eprintln!();
            }
            ExitCode::FAILURE
        }
    }
}

/// `NAME=VALUE` after `-D`; the value is checked against the constant's type later.
fn parse_define(text: &str) -> Result<Define, String> {
    Define::parse(text)
        .filter(|define| !define.name.is_empty())
        .ok_or_else(|| format!("expected NAME=VALUE, such as `-D BLOCK=256`, found `{text}`"))
}

/// Reads a source file; bytes that are not UTF-8 are replaced and then reported by the lexer.
fn read_source(file: &Path) -> Result<String, String> {
    let bytes =
        std::fs::read(file).map_err(|e| format!("error: cannot read `{}`: {e}", file.display()))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn render(error: &CompileError, file: &Path, source: &str) -> String {
    error.render(
        &file.display().to_string(),
        source,
        std::io::stderr().is_terminal(),
    )
}

fn target_specs(targets: &[String], arches: &[String]) -> Result<Vec<TargetSpec>, String> {
    if let Some(stray) = arches.iter().find(|a| arch_kind(a).is_none()) {
        return Err(format!(
            "error: unknown processor `{stray}`\n  = hint: name NVIDIA processors sm_XX (sm_90) and AMD ones gfxNNN (gfx90a, gfx9-generic)"
        ));
    }
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
        if matching.is_empty() {
            specs.push(TargetSpec::new(kind, None));
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
            eprintln!("warning: --arch {arch} is ignored: no {kind} target was requested (add `--target {kind}`)");
        }
    }
    Ok(specs)
}

/// The target a processor name belongs to: `sm_XX` to PTX, `gfxNNN` to AMDGPU.
fn arch_kind(arch: &str) -> Option<TargetKind> {
    if arch.starts_with("sm_") {
        Some(TargetKind::Ptx)
    } else if arch.starts_with("gfx") {
        Some(TargetKind::Amdgpu)
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

/// The targets `kdsl compile` uses when `--target` is not given.
const DEFAULT_TARGETS: [&str; 3] = ["spirv", "ptx", "amdgpu"];

fn compile(
    file: &Path,
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
    let source = read_source(file)?;
    let name = file.display().to_string();
    if emit == Some(Emit::Ir) {
        let module = kdsl::check_with(&source, options).map_err(|e| render(&e, file, &source))?;
        return write_output(
            &output.unwrap_or_else(|| file.with_extension("kir")),
            module.to_string().as_bytes(),
        );
    }
    let defaulted = requested.is_none();
    let targets: Vec<String> = match requested {
        Some(targets) => targets.to_vec(),
        None => DEFAULT_TARGETS.iter().map(|t| t.to_string()).collect(),
    };
    let mut specs = target_specs(&targets, arches)?;
    if defaulted && emit.is_none() {
        specs = drop_unfitting_default_targets(specs, file, &source, options)?;
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
        let spec = specs
            .into_iter()
            .next()
            .ok_or("error: no target to emit for")?;
        let artifact = kdsl::compile_for_target(&source, &spec, options)
            .map_err(|e| render(&e, file, &source))?;
        let (bytes, extension) = match emit {
            Emit::Llvm => (artifact.llvm_ir.into_bytes(), "ll"),
            Emit::Spirv => (artifact.image.bytes, "spv"),
            Emit::Ptx => (artifact.image.bytes, "ptx"),
            Emit::Hsaco => (artifact.image.bytes, "hsaco"),
            Emit::Ir => unreachable!("handled above"),
        };
        return write_output(
            &output.unwrap_or_else(|| file.with_extension(extension)),
            &bytes,
        );
    }
    if format == Format::Syclbin {
        let (syclbin, measured) = kdsl::compile_syclbin_reporting(&name, &source, &specs, options)
            .map_err(|e| render(&e, file, &source))?;
        print_warnings(&measured, file, &source);
        let output = output.unwrap_or_else(|| file.with_extension("syclbin"));
        write_output(&output, &syclbin.to_bytes())?;
        if timings {
            eprint!("{}", measured.timings_text());
        }
        warn_about_arch_choice(&syclbin);
        let kernels = syclbin
            .modules
            .iter()
            .map(|m| m.kernel_names.len())
            .sum::<usize>();
        eprintln!(
            "wrote {} (SYCLBIN, state {}; {} kernel{}; {})",
            output.display(),
            syclbin.state.name(),
            kernels,
            if kernels == 1 { "" } else { "s" },
            syclbin.describe_images()
        );
        return Ok(());
    }
    let (bundle, measured) = kdsl::compile_reporting(&name, &source, &specs, options)
        .map_err(|e| render(&e, file, &source))?;
    print_warnings(&measured, file, &source);
    let output = output.unwrap_or_else(|| file.with_extension("kbundle"));
    bundle.write(&output).map_err(|e| format!("error: {e}"))?;
    if timings {
        eprint!("{}", measured.timings_text());
    }
    eprintln!(
        "wrote {} ({} kernel{}; {})",
        output.display(),
        bundle.kernels.len(),
        if bundle.kernels.len() == 1 { "" } else { "s" },
        bundle.describe_images()
    );
    Ok(())
}

/// With the default targets, a target the kernels do not fit (a GPU's local-memory limit for
/// a module meant for the CPU device) is dropped with a warning instead of failing the whole
/// compilation; only when no target is left is it an error.
fn drop_unfitting_default_targets(
    specs: Vec<TargetSpec>,
    file: &Path,
    source: &str,
    options: &CompileOptions,
) -> Result<Vec<TargetSpec>, String> {
    let selection =
        kdsl::select_targets(source, &specs, options).map_err(|e| render(&e, file, source))?;
    let defaults = DEFAULT_TARGETS.join(",");
    if selection.supported.is_empty() {
        let mut report = String::new();
        for (_, error) in &selection.unsupported {
            report += &render(error, file, source);
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
        eprintln!(
            "warning: skipping target {} (one of the default targets {defaults}): {reason}\n  = hint: name the targets with --target to make this an error, e.g. --target {}",
            match spec.kind {
                TargetKind::Spirv => "spirv".to_string(),
                kind => format!("{}:{}", kind.name(), spec.resolved_arch()),
            },
            selection
                .supported
                .iter()
                .map(|s| s.kind.name())
                .collect::<Vec<_>>()
                .join(",")
        );
    }
    Ok(selection.supported)
}

fn print_warnings(report: &kdsl::CompileReport, file: &Path, source: &str) {
    if !report.warnings.is_empty() {
        let warnings = kdsl::CompileError::from(report.warnings.clone());
        eprint!("{}", render(&warnings, file, source));
    }
}

/// SYCL runtimes take the first native image whose target fits the device and do not read its
/// arch (docs/syclbin.md), so a second image for the same target is never chosen.
fn warn_about_arch_choice(syclbin: &kdsl::Syclbin) {
    for module in &syclbin.modules {
        for (index, image) in module.native_images.iter().enumerate() {
            let earlier = &module.native_images[..index];
            if let Some(first) = earlier.iter().find(|other| other.target == image.target) {
                eprintln!(
                    "warning: the {} {} image will not be used by SYCL runtimes: they take the first {} image (here {}) without looking at its arch\n  = hint: for a SYCLBIN, pass one --arch per target",
                    image.target, image.arch, image.target, first.arch
                );
            }
        }
    }
}

fn write_output(path: &Path, bytes: &[u8]) -> Result<(), String> {
    std::fs::write(path, bytes)
        .map_err(|e| format!("error: cannot write `{}`: {e}", path.display()))
}

fn check(file: &Path, defines: &[Define]) -> Result<(), String> {
    let source = read_source(file)?;
    let options = CompileOptions {
        defines: defines.to_vec(),
        ..CompileOptions::default()
    };
    let (module, warnings) =
        kdsl::check_with_warnings(&source, &options).map_err(|e| render(&e, file, &source))?;
    if !warnings.is_empty() {
        eprint!(
            "{}",
            render(&kdsl::CompileError::from(warnings), file, &source)
        );
    }
    let kernels: Vec<&str> = module.kernels().map(|k| k.name.as_str()).collect();
    eprintln!(
        "{}: ok ({} kernel{}: {})",
        file.display(),
        kernels.len(),
        if kernels.len() == 1 { "" } else { "s" },
        kernels.join(", ")
    );
    Ok(())
}

fn devices() -> Result<(), String> {
    let devices = kdsl::runtime::devices();
    if devices.is_empty() {
        return Err(format!(
            "no devices found: {}",
            kdsl::runtime::device_report().why_none()
        ));
    }
    for device in devices {
        println!("{device}");
    }
    Ok(())
}

fn inspect(path: &Path) -> Result<(), String> {
    let bytes =
        std::fs::read(path).map_err(|e| format!("error: cannot read `{}`: {e}", path.display()))?;
    if kdsl::bundle::syclbin::is_syclbin(&bytes) {
        return inspect_syclbin(path, &bytes);
    }
    let bundle = kdsl::Bundle::from_bytes(&bytes).map_err(|e| format!("error: {e}"))?;
    println!("{} (from {})", path.display(), bundle.source_name);
    println!("images: {}", bundle.describe_images());
    for kernel in &bundle.kernels {
        print_kernel(kernel);
    }
    for constant in &bundle.constants {
        println!(
            "const {}: {} = {}{}",
            constant.name,
            constant.ty,
            constant.value,
            if constant.defined { " (set by -D)" } else { "" }
        );
    }
    Ok(())
}

fn inspect_syclbin(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let syclbin = kdsl::Syclbin::from_bytes(bytes).map_err(|e| format!("error: {e}"))?;
    println!(
        "{}: SYCLBIN, state {}, {} abstract module{}",
        path.display(),
        syclbin.state.name(),
        syclbin.modules.len(),
        if syclbin.modules.len() == 1 { "" } else { "s" }
    );
    for (index, module) in syclbin.modules.iter().enumerate() {
        println!("module {index}:");
        if let Some(kdsl) = &module.kdsl {
            println!("  kdsl metadata (from {})", kdsl.source_name);
        }
        println!("  entry points: {}", module.kernel_names.join(", "));
        for ir in &module.ir_modules {
            let kind = match ir.ir_type {
                kdsl::bundle::syclbin::IrType::Spirv => "SPIR-V".to_string(),
                other => format!("type {}", other.value()),
            };
            println!("  IR module: {kind}, {} bytes", ir.bytes.len());
        }
        for native in &module.native_images {
            println!(
                "  native image: {} {}, {} bytes",
                native.target,
                native.arch,
                native.bytes.len()
            );
        }
        for kernel in module.kdsl.iter().flat_map(|kdsl| &kdsl.kernels) {
            print_kernel(kernel);
        }
    }
    Ok(())
}

fn print_kernel(kernel: &kdsl::KernelInfo) {
    let parameters: Vec<String> = kernel
        .parameters
        .iter()
        .map(|p| match p {
            kdsl::bundle::ParameterInfo::Scalar { name, ty } => format!("{name}: {ty}"),
            kdsl::bundle::ParameterInfo::Buffer {
                name,
                element,
                space,
                writable,
                alignment,
            } => {
                let aligned = if *alignment > 0 {
                    format!(" (aligned to {alignment} bytes)")
                } else {
                    String::new()
                };
                format!(
                    "{name}: {space}{} [{element}]{aligned}",
                    if *writable { " mut" } else { "" }
                )
            }
        })
        .collect();
    let work_group = match kernel.work_group_size {
        Some([x, y, z]) => format!(", work-group size {x} x {y} x {z}"),
        None => String::new(),
    };
    let indices = if kernel.wide_buffer_indices {
        ", 64-bit buffer indices"
    } else {
        ""
    };
    println!(
        "kernel {}({}) local memory {} bytes{work_group}{indices}",
        kernel.name,
        parameters.join(", "),
        kernel.local_memory_bytes
    );
}
