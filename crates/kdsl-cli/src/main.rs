//! The `kdsl` command: compile `.krn` files into bundles (in process or on a compile server),
//! check them, list devices, show bundles.

#[macro_use]
mod output;
mod compile_command;
mod compile_server;
mod outcome;

use clap::{Parser, Subcommand};
use compile_command::{parse_define, CompileArguments};
use compile_server::ServerAction;
use kdsl::{CompileError, CompileOptions, Define};
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
    Compile(CompileArguments),
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
    /// Run a compile server, which keeps LLVM warm for the `kdsl compile` commands that
    /// follow (they use it when it runs, and compile in their own process otherwise).
    Server {
        #[command(subcommand)]
        action: ServerAction,
    },
}

fn main() -> ExitCode {
    let command = Command::parse();
    let result = match command.action {
        Action::Compile(arguments) => {
            // The command reads its source itself, also when a server compiles it, so that
            // standard input, FIFOs and `<(...)` work alike.
            let source = match read_source(&arguments.file) {
                Ok(source) => source,
                Err(message) => {
                    say_line!("{message}");
                    return ExitCode::FAILURE;
                }
            };
            let color = std::io::stderr().is_terminal();
            let outcome = compile_server::compile(color, &source)
                .unwrap_or_else(|| compile_command::compile_here(&arguments, &source, color));
            return outcome.deliver();
        }
        Action::Server { action } => compile_server::command(action),
        Action::Check { file, define } => check(&file, &define),
        Action::Devices => devices(),
        Action::Inspect { bundle } => inspect(&bundle),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            say!("{message}");
            if !message.ends_with('\n') {
                say_line!();
            }
            ExitCode::FAILURE
        }
    }
}

fn render(error: &CompileError, file: &Path, source: &str) -> String {
    error.render(
        &file.display().to_string(),
        source,
        std::io::stderr().is_terminal(),
    )
}

/// Reads a source file; bytes that are not UTF-8 are replaced and then reported by the lexer.
fn read_source(file: &Path) -> Result<String, String> {
    let bytes =
        std::fs::read(file).map_err(|e| format!("error: cannot read `{}`: {e}", file.display()))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
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
        say!(
            "{}",
            render(&kdsl::CompileError::from(warnings), file, &source)
        );
    }
    let kernels: Vec<&str> = module.kernels().map(|k| k.name.as_str()).collect();
    say_line!(
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
        out!("{device}");
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
    out!("{} (from {})", path.display(), bundle.source_name);
    out!("images: {}", bundle.describe_images());
    let images_where = |test: fn(&kdsl::Image) -> bool| -> Vec<String> {
        bundle
            .images
            .iter()
            .filter(|image| test(image))
            .map(|image| image.describe())
            .collect()
    };
    let on_matrix_units = images_where(|image| image.matrix_units);
    if !on_matrix_units.is_empty() {
        out!("matrix units: {}", on_matrix_units.join(", "));
    }
    let groups_on_units = images_where(|image| image.matrix_groups);
    if !groups_on_units.is_empty() {
        out!(
            "matrix groups on matrix units (whole groups of 128 work-items): {}",
            groups_on_units.join(", ")
        );
    }
    let tile_sub_groups: Vec<String> = bundle
        .images
        .iter()
        .filter_map(|image| {
            let size = image.tile_sub_group_size?;
            Some(format!("{} ({size})", image.describe()))
        })
        .collect();
    if !tile_sub_groups.is_empty() {
        out!(
            "tiles in whole sub-groups (work-groups of a multiple of): {}",
            tile_sub_groups.join(", ")
        );
    }
    for kernel in &bundle.kernels {
        print_kernel(kernel);
    }
    for constant in &bundle.constants {
        out!(
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
    out!(
        "{}: SYCLBIN, state {}, {} abstract module{}",
        path.display(),
        syclbin.state.name(),
        syclbin.modules.len(),
        if syclbin.modules.len() == 1 { "" } else { "s" }
    );
    for (index, module) in syclbin.modules.iter().enumerate() {
        out!("module {index}:");
        if let Some(kdsl) = &module.kdsl {
            out!("  kdsl metadata (from {})", kdsl.source_name);
        }
        out!("  entry points: {}", module.kernel_names.join(", "));
        for ir in &module.ir_modules {
            let kind = match ir.ir_type {
                kdsl::bundle::syclbin::IrType::Spirv => "SPIR-V".to_string(),
                other => format!("type {}", other.value()),
            };
            out!("  IR module: {kind}, {} bytes", ir.bytes.len());
        }
        for native in &module.native_images {
            out!(
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
                record,
            } => {
                let aligned = if *alignment > 0 {
                    format!(" (aligned to {alignment} bytes)")
                } else {
                    String::new()
                };
                let element = match record {
                    Some(record) => format!(
                        "{} ({} bytes: {})",
                        record.name,
                        record.size,
                        record
                            .fields
                            .iter()
                            .map(|f| format!("{} {} at {}", f.name, f.ty, f.offset))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    None => element.to_string(),
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
    let contiguous = match &kernel.contiguous_entry {
        Some(entry) => format!(", entry `{entry}` for contiguous arrays"),
        None => String::new(),
    };
    let groups = if kernel.matrix_groups {
        ", matrix groups (work-groups of a multiple of 128 on matrix units)"
    } else {
        ""
    };
    let tiles = if kernel.tiles {
        ", sub-group tiles"
    } else {
        ""
    };
    out!(
        "kernel {}({}) local memory {} bytes{work_group}{indices}{contiguous}{groups}{tiles}",
        kernel.name,
        parameters.join(", "),
        kernel.local_memory_bytes
    );
}
