//! The compiler side: compiling a generated module for every target at `-O0` and `-O3`
//! through the facade, validating every image with the target's own tool (`spirv-val`,
//! `ptxas`, `llvm-readobj`, as `kdsl-codegen`'s target tests do), and the differential
//! comparison of the interpreter with every device.

use crate::compare::compare_outputs;
use crate::device::{probed_sub_group_size, run_on_device};
use crate::reference::{front_end, interpret, ReferenceFailure};
use crate::GeneratedKernel;
use kdsl::{Bundle, CompileOptions, TargetKind, TargetSpec};
use kdsl_runtime::Device;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Every target and processor the compile run covers.
pub fn every_target() -> Vec<TargetSpec> {
    vec![
        TargetSpec::spirv(),
        TargetSpec::ptx(None),
        TargetSpec::ptx(Some("sm_90")),
        TargetSpec::amdgpu(Some("gfx90a")),
        TargetSpec::amdgpu(Some("gfx9-generic")),
        TargetSpec::amdgpu(Some("gfx1100")),
    ]
}

/// The optimization levels every module is compiled at.
pub const OPT_LEVELS: [u8; 2] = [0, 3];

/// A validator from `PATH` or LLVM 22's directory.
fn tool(names: &[&str]) -> Result<PathBuf, String> {
    let mut directories: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    directories.push("/usr/lib/llvm-22/bin".into());
    for name in names {
        for directory in &directories {
            let candidate = directory.join(name);
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
    }
    Err(format!(
        "validator {names:?} not found in PATH or /usr/lib/llvm-22/bin; run scripts/setup.sh"
    ))
}

/// `ptxas` from the prefix's `nvidia-cuda-nvcc` wheel (`kdsl_testkit::tools`).
fn ptxas() -> Result<PathBuf, String> {
    kdsl_testkit::tools::find_ptxas()
}

/// The validators, found once.
pub struct Validators {
    spirv_val: PathBuf,
    ptxas: PathBuf,
    readobj: PathBuf,
}

impl Validators {
    pub fn find() -> Result<Validators, String> {
        Ok(Validators {
            spirv_val: tool(&["spirv-val"])?,
            ptxas: ptxas()?,
            readobj: tool(&["llvm-readobj-22", "llvm-readobj"])?,
        })
    }

    /// Checks every image of `bundle` with its target's tool (the tools run concurrently).
    pub fn validate(&self, bundle: &Bundle) -> Result<(), String> {
        let mut checks = Vec::new();
        for image in &bundle.images {
            let what = image.describe();
            let file = ScratchFile::new(&what.replace(':', "-"), &image.bytes)?;
            let mut command = match image.target {
                TargetKind::Spirv => {
                    let mut command = Command::new(&self.spirv_val);
                    command.arg(&file.path);
                    command
                }
                TargetKind::Ptx => {
                    let mut command = Command::new(&self.ptxas);
                    command
                        .arg(format!("-arch={}", image.arch))
                        .arg(&file.path)
                        .arg("-o")
                        .arg("/dev/null");
                    command
                }
                TargetKind::Amdgpu => {
                    let mut command = Command::new(&self.readobj);
                    command.arg("--notes").arg(&file.path);
                    command
                }
            };
            let child = command
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .map_err(|e| format!("cannot run {command:?}: {e}"))?;
            checks.push((image.target, what, file, child));
        }
        let mut problems = Vec::new();
        for (target, what, _file, child) in checks {
            let output = child
                .wait_with_output()
                .map_err(|e| format!("waiting for the validator of {what}: {e}"))?;
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
            let tool = match target {
                TargetKind::Spirv => "spirv-val",
                TargetKind::Ptx => "ptxas",
                TargetKind::Amdgpu => "llvm-readobj --notes",
            };
            if !output.status.success() {
                problems.push(format!("{tool} on {what} failed:\n{text}"));
                continue;
            }
            if target == TargetKind::Amdgpu {
                if !text.contains("amdhsa.kernels") {
                    problems.push(format!("{what}: no amdhsa.kernels in the notes"));
                }
                for kernel in &bundle.kernels {
                    if !text.contains(&format!(".name:           {}\n", kernel.name)) {
                        problems.push(format!(
                            "{what}: kernel {} not in amdhsa.kernels",
                            kernel.name
                        ));
                    }
                }
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("\n"))
        }
    }
}

/// A temporary file, removed on drop.
struct ScratchFile {
    path: PathBuf,
}

impl ScratchFile {
    fn new(name: &str, bytes: &[u8]) -> Result<ScratchFile, String> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let path = std::env::temp_dir().join(format!(
            "kdsl-fuzzgen-{}-{}-{name}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::write(&path, bytes).map_err(|e| format!("writing {}: {e}", path.display()))?;
        Ok(ScratchFile { path })
    }
}

impl Drop for ScratchFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Compiles `source` for `targets` at `opt_level`, rendering diagnostics on failure.
pub fn compile(source: &str, targets: &[TargetSpec], opt_level: u8) -> Result<Bundle, String> {
    let options = CompileOptions {
        opt_level,
        ..CompileOptions::default()
    };
    kdsl::compile("generated.krn", source, targets, &options)
        .map_err(|error| error.render("generated.krn", source, false))
}

/// `targets` without the PTX processors below the one `generated` needs
/// ([`GeneratedKernel::needs_sm`]), which refuse its matrix tiles by design, and with sm_90a
/// (wgmma) where it has matrix-group statements.
pub fn targets_for(generated: &GeneratedKernel, targets: &[TargetSpec]) -> Vec<TargetSpec> {
    targets
        .iter()
        .filter(|target| {
            target.kind != TargetKind::Ptx || {
                let arch = target.resolved_arch();
                let number = arch
                    .trim_start_matches("sm_")
                    .trim_end_matches('a')
                    .parse::<u32>()
                    .unwrap_or(u32::MAX);
                number >= generated.needs_sm
            }
        })
        .cloned()
        .chain(
            generated
                .matrix_groups
                .then(|| TargetSpec::ptx(Some("sm_90a"))),
        )
        .collect()
}

/// Where a generated kernel failed.
#[derive(Clone, Debug, PartialEq)]
pub enum Stage {
    FrontEnd,
    Compile {
        opt_level: u8,
    },
    Validate {
        opt_level: u8,
    },
    /// The interpreter failed other than by undefined behaviour.
    Interpreter,
    /// Loading or launching on a device failed.
    Device {
        device: String,
        opt_level: u8,
    },
    /// A device's outputs differ from the interpreter's.
    Mismatch {
        device: String,
        opt_level: u8,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    pub stage: Stage,
    pub kernel: String,
    pub message: String,
}

/// What checking one generated module found.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    pub compile_time: Duration,
    pub validate_time: Duration,
    pub differential_time: Duration,
    /// Runs compared with a device (per device and optimization level).
    pub compared: u64,
    /// Runs the interpreter reported undefined behaviour for.
    pub undefined: u64,
    pub failures: Vec<Failure>,
}

/// A device opened for the differential comparison.
pub struct OpenDevice {
    pub name: String,
    pub device: Device,
}

/// Compiles `generated` for `targets` at each of `opt_levels`, validates the images, and, for
/// every device in `devices`, runs each kernel of the bundles of `device_opt_levels` there and
/// on the interpreter and compares.
pub fn check_generated(
    generated: &GeneratedKernel,
    targets: &[TargetSpec],
    opt_levels: &[u8],
    device_opt_levels: &[u8],
    validators: &Validators,
    devices: &[OpenDevice],
) -> Outcome {
    let mut outcome = Outcome::default();
    let fail = |outcome: &mut Outcome, stage: Stage, kernel: &str, message: String| {
        outcome.failures.push(Failure {
            stage,
            kernel: kernel.to_string(),
            message,
        });
    };
    let module = match front_end(&generated.source) {
        Ok(module) => module,
        Err(message) => {
            fail(&mut outcome, Stage::FrontEnd, "", message);
            return outcome;
        }
    };
    let targets = targets_for(generated, targets);
    let mut bundles = Vec::new();
    for &opt_level in opt_levels {
        let started = Instant::now();
        let compiled = compile(&generated.source, &targets, opt_level);
        outcome.compile_time += started.elapsed();
        match compiled {
            Ok(bundle) => {
                let started = Instant::now();
                if let Err(message) = validators.validate(&bundle) {
                    fail(&mut outcome, Stage::Validate { opt_level }, "", message);
                }
                outcome.validate_time += started.elapsed();
                bundles.push((opt_level, bundle));
            }
            Err(message) => fail(&mut outcome, Stage::Compile { opt_level }, "", message),
        }
    }
    if !outcome.failures.is_empty() || devices.is_empty() {
        return outcome;
    }
    let started = Instant::now();
    let mut references = Vec::new();
    for run in &generated.runs {
        references.push(
            match interpret(
                &module,
                run,
                kdsl_interp::InterpLaunch::DEFAULT_SUB_GROUP_SIZE,
            ) {
                Ok(outputs) => Some(outputs),
                Err(ReferenceFailure::Undefined(why)) => {
                    if std::env::var_os("KDSL_FUZZGEN_SHOW_UNDEFINED").is_some() {
                        eprintln!(
                            "seed {}: skipped, undefined behaviour: {why}",
                            generated.seed
                        );
                    }
                    outcome.undefined += 1;
                    None
                }
                Err(ReferenceFailure::Error(message)) => {
                    fail(&mut outcome, Stage::Interpreter, &run.kernel, message);
                    None
                }
            },
        );
    }
    if references.iter().all(Option::is_none) {
        outcome.differential_time = started.elapsed();
        return outcome;
    }
    for open in devices {
        for (opt_level, bundle) in bundles
            .iter()
            .filter(|(level, _)| device_opt_levels.contains(level))
        {
            let device_stage = Stage::Device {
                device: open.name.clone(),
                opt_level: *opt_level,
            };
            let program = match open.device.load(bundle) {
                Ok(program) => program,
                Err(error) => {
                    fail(&mut outcome, device_stage, "", format!("loading: {error}"));
                    continue;
                }
            };
            for (run, reference) in generated.runs.iter().zip(&references) {
                let Some(reference) = reference else { continue };
                let got = match run_on_device(&open.device, &program, run) {
                    Ok(got) => got,
                    Err(message) => {
                        fail(&mut outcome, device_stage.clone(), &run.kernel, message);
                        continue;
                    }
                };
                // Sub-group results depend on the size the device picked: rerun the
                // reference with it.
                let size = probed_sub_group_size(run, &got);
                let expected = match size {
                    Some(size) if size != kdsl_interp::InterpLaunch::DEFAULT_SUB_GROUP_SIZE => {
                        match interpret(&module, run, size) {
                            Ok(outputs) => outputs,
                            Err(ReferenceFailure::Undefined(_)) => {
                                outcome.undefined += 1;
                                continue;
                            }
                            Err(ReferenceFailure::Error(message)) => {
                                fail(&mut outcome, Stage::Interpreter, &run.kernel, message);
                                continue;
                            }
                        }
                    }
                    _ => reference.clone(),
                };
                outcome.compared += 1;
                if let Err(message) = compare_outputs(run, &expected, &got) {
                    let size = size
                        .map(|s| format!(" (sub-group size {s})"))
                        .unwrap_or_default();
                    fail(
                        &mut outcome,
                        Stage::Mismatch {
                            device: open.name.clone(),
                            opt_level: *opt_level,
                        },
                        &run.kernel,
                        format!("{message}{size}"),
                    );
                }
            }
        }
    }
    outcome.differential_time = started.elapsed();
    outcome
}
