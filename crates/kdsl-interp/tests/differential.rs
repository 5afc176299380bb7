//! Differential tests: each kernel runs on the interpreter (the reference) and, compiled, on
//! every available device through `kdsl-runtime`; the outputs must agree (integers exactly,
//! floats within the tolerances stated per case).
//!
//! Example bundles come from `KDSL_TEST_BUNDLES` (default `<workspace>/target/kdsl-bundles`, made
//! by `scripts/compile-examples.sh`). Bundles of the feature kernels in `tests/kernels/` come
//! from `<bundles>/tests/` when present; otherwise this test compiles them with an already
//! built `target/debug/kdsl` into `target/kdsl-interp-bundles/`, or skips them saying why.
//! A missing bundle folder skips the example cases with a message, and fails them when
//! `KDSL_TEST_BUNDLES` is set. With no device, every test fails unless `KDSL_ALLOW_NO_DEVICE=1`.

mod common;

use common::{compile_file, contiguous, kmeans_blobs, shaped, workspace, Random};
use kdsl_interp::{run_kernel, HostBuffer, InterpArgument, InterpLaunch, ScalarValue};
use kdsl_ir::{Module, ParameterType, ScalarType};
use kdsl_runtime::{Argument, Buffer, Bundle, Device, Launch, RuntimeError};

type CaseResult = Result<(), String>;
/// Reads a launch's sub-group size from the device's outputs.
type SubGroupSizeReader = fn(&[InterpArgument]) -> Option<u32>;
/// Checks the interpreter's and the device's outputs together.
type OutputCheck = fn(&[InterpArgument], &[InterpArgument]) -> CaseResult;

/// How one output buffer of the interpreter and of the device must agree.
#[derive(Clone, Copy)]
enum Compare {
    /// Bit for bit (integers; floats that are computed exactly).
    Exact,
    /// Floats within this tolerance relative to the reference's magnitude or 1, whichever is larger.
    Close(f64),
    /// Not compared: the kernel's result there depends on the order of racing work-items.
    Racy,
}

/// One kernel launch to run on both sides.
struct Case {
    kernel: &'static str,
    launch: InterpLaunch,
    arguments: Vec<InterpArgument>,
    /// One entry per argument; scalars and read-only buffers are `Exact` (they must not change).
    compare: Vec<Compare>,
    /// Reads the sub-group size the device used from the device's outputs, for kernels whose
    /// results depend on it.
    sub_group_size: Option<SubGroupSizeReader>,
    /// An extra check of both outputs, for results that are order-independent only as a whole.
    check: Option<OutputCheck>,
}

impl Case {
    fn new(kernel: &'static str, launch: InterpLaunch, arguments: Vec<InterpArgument>) -> Case {
        let compare = vec![Compare::Exact; arguments.len()];
        Case {
            kernel,
            launch,
            arguments,
            compare,
            sub_group_size: None,
            check: None,
        }
    }

    fn compare(mut self, index: usize, how: Compare) -> Case {
        self.compare[index] = how;
        self
    }
}

// ---------------------------------------------------------------------------------------------
// Devices and bundles.

fn devices_under_test() -> Vec<kdsl_runtime::DeviceInfo> {
    kdsl_testkit::devices::devices_under_test("the differential tests")
}

/// The bundle of `tests/kernels/<name>.krn`: from `<bundles>/tests/`, else compiled with the
/// built CLI. `Err` says why there is none.
fn test_kernel_bundle(name: &str) -> Result<Bundle, String> {
    compiled_test_kernel(name, "kbundle")
}

/// `tests/kernels/<name>.krn` as a SYCLBIN (`--format syclbin`), whose kernels SYCL devices load
/// through `get_kernel_bundle` and pass arguments to as kernels SYCL did not build from source.
fn test_kernel_syclbin(name: &str) -> Result<Bundle, String> {
    compiled_test_kernel(name, "syclbin")
}

/// `tests/kernels/<name>.krn` compiled to `<name>.<extension>` (a `kbundle` or a `syclbin`).
fn compiled_test_kernel(name: &str, extension: &str) -> Result<Bundle, String> {
    let (folder, _) = kdsl_testkit::devices::bundle_folder();
    let prepared = folder.join("tests").join(format!("{name}.{extension}"));
    if prepared.exists() {
        return Bundle::read(&prepared).map_err(|e| e.to_string());
    }
    let cli = workspace().join("target/debug/kdsl");
    if !cli.exists() {
        return Err(format!(
            "no {} and no built {} to compile tests/kernels/{name}.krn with",
            prepared.display(),
            cli.display()
        ));
    }
    let output_folder = workspace().join("target/kdsl-interp-bundles");
    std::fs::create_dir_all(&output_folder).map_err(|e| e.to_string())?;
    let output = output_folder.join(format!("{name}.{extension}"));
    let status = std::process::Command::new(&cli)
        .arg("compile")
        .arg(workspace().join(format!("tests/kernels/{name}.krn")))
        .args([
            "--format",
            if extension == "syclbin" {
                "syclbin"
            } else {
                "kbundle"
            },
        ])
        // As scripts/compile-examples.sh: tf32 tiles need sm_80 or later, and matrix groups
        // reach wgmma only in an sm_90a image.
        .args(["--target", "spirv,ptx", "--arch"])
        .arg(if name.contains("tf32") {
            "sm_90"
        } else if name == "matrix_group" {
            "sm_75,sm_90,sm_90a"
        } else {
            "sm_75,sm_90"
        })
        .arg("-o")
        .arg(&output)
        .output()
        .map_err(|e| format!("running {}: {e}", cli.display()))?;
    if !status.status.success() {
        return Err(format!(
            "{} failed on tests/kernels/{name}.krn: {}",
            cli.display(),
            String::from_utf8_lossy(&status.stderr)
        ));
    }
    Bundle::read(&output).map_err(|e| e.to_string())
}

fn example_bundle(name: &str) -> Result<Bundle, String> {
    let (folder, _) = kdsl_testkit::devices::bundle_folder();
    Bundle::read(folder.join(format!("{name}.kbundle"))).map_err(|e| e.to_string())
}

// ---------------------------------------------------------------------------------------------
// Running a case on a device.

enum DeviceBuffer {
    I8(Buffer<i8>),
    U8(Buffer<u8>),
    I16(Buffer<i16>),
    U16(Buffer<u16>),
    I32(Buffer<i32>),
    U32(Buffer<u32>),
    I64(Buffer<i64>),
    U64(Buffer<u64>),
    F32(Buffer<f32>),
    F64(Buffer<f64>),
    F16(Buffer<kdsl_runtime::F16>),
    Bf16(Buffer<kdsl_runtime::Bf16>),
}

macro_rules! each_device_buffer {
    ($buffer:expr, $inner:ident => $body:expr) => {
        match $buffer {
            DeviceBuffer::I8($inner) => $body,
            DeviceBuffer::U8($inner) => $body,
            DeviceBuffer::I16($inner) => $body,
            DeviceBuffer::U16($inner) => $body,
            DeviceBuffer::I32($inner) => $body,
            DeviceBuffer::U32($inner) => $body,
            DeviceBuffer::I64($inner) => $body,
            DeviceBuffer::U64($inner) => $body,
            DeviceBuffer::F32($inner) => $body,
            DeviceBuffer::F64($inner) => $body,
            DeviceBuffer::F16($inner) => $body,
            DeviceBuffer::Bf16($inner) => $body,
        }
    };
}

fn upload(device: &Device, buffer: &HostBuffer) -> Result<DeviceBuffer, String> {
    let fail = |e: RuntimeError| e.to_string();
    Ok(match buffer {
        HostBuffer::I8(v) => DeviceBuffer::I8(device.buffer_from(v).map_err(fail)?),
        HostBuffer::U8(v) => DeviceBuffer::U8(device.buffer_from(v).map_err(fail)?),
        HostBuffer::I16(v) => DeviceBuffer::I16(device.buffer_from(v).map_err(fail)?),
        HostBuffer::U16(v) => DeviceBuffer::U16(device.buffer_from(v).map_err(fail)?),
        HostBuffer::I32(v) => DeviceBuffer::I32(device.buffer_from(v).map_err(fail)?),
        HostBuffer::U32(v) => DeviceBuffer::U32(device.buffer_from(v).map_err(fail)?),
        HostBuffer::I64(v) => DeviceBuffer::I64(device.buffer_from(v).map_err(fail)?),
        HostBuffer::U64(v) => DeviceBuffer::U64(device.buffer_from(v).map_err(fail)?),
        HostBuffer::F32(v) => DeviceBuffer::F32(device.buffer_from(v).map_err(fail)?),
        HostBuffer::F64(v) => DeviceBuffer::F64(device.buffer_from(v).map_err(fail)?),
        HostBuffer::F16(v) => {
            let bits: Vec<kdsl_runtime::F16> =
                v.iter().map(|h| kdsl_runtime::F16(h.to_bits())).collect();
            DeviceBuffer::F16(device.buffer_from(&bits).map_err(fail)?)
        }
        HostBuffer::Bf16(v) => {
            let bits: Vec<kdsl_runtime::Bf16> =
                v.iter().map(|h| kdsl_runtime::Bf16(h.to_bits())).collect();
            DeviceBuffer::Bf16(device.buffer_from(&bits).map_err(fail)?)
        }
    })
}

/// A device element type as the interpreter's host buffer.
trait IntoHostBuffer: Sized {
    fn into_host_buffer(values: Vec<Self>) -> HostBuffer;
}

macro_rules! into_host_buffer {
    ($($ty:ty),*) => {$(
        impl IntoHostBuffer for $ty {
            fn into_host_buffer(values: Vec<Self>) -> HostBuffer {
                HostBuffer::from(values)
            }
        }
    )*};
}

into_host_buffer!(i8, u8, i16, u16, i32, u32, i64, u64, f32, f64);

impl IntoHostBuffer for kdsl_runtime::F16 {
    fn into_host_buffer(values: Vec<Self>) -> HostBuffer {
        HostBuffer::F16(values.iter().map(|h| half::f16::from_bits(h.0)).collect())
    }
}

impl IntoHostBuffer for kdsl_runtime::Bf16 {
    fn into_host_buffer(values: Vec<Self>) -> HostBuffer {
        HostBuffer::Bf16(values.iter().map(|h| half::bf16::from_bits(h.0)).collect())
    }
}

fn download(buffer: &DeviceBuffer) -> Result<HostBuffer, String> {
    each_device_buffer!(buffer, inner => inner
        .read_to_vec()
        .map(IntoHostBuffer::into_host_buffer)
        .map_err(|e| e.to_string()))
}

fn runtime_scalar(value: ScalarValue) -> Result<kdsl_runtime::ScalarValue, String> {
    use kdsl_runtime::ScalarValue as Runtime;
    Ok(match value {
        ScalarValue::Bool(v) => Runtime::Bool(v),
        ScalarValue::I8(v) => Runtime::I8(v),
        ScalarValue::U8(v) => Runtime::U8(v),
        ScalarValue::I16(v) => Runtime::I16(v),
        ScalarValue::U16(v) => Runtime::U16(v),
        ScalarValue::I32(v) => Runtime::I32(v),
        ScalarValue::U32(v) => Runtime::U32(v),
        ScalarValue::I64(v) => Runtime::I64(v),
        ScalarValue::U64(v) => Runtime::U64(v),
        ScalarValue::F32(v) => Runtime::F32(v),
        ScalarValue::F64(v) => Runtime::F64(v),
        ScalarValue::F16(v) => Runtime::F16(v.to_bits()),
        ScalarValue::Bf16(v) => Runtime::Bf16(v.to_bits()),
    })
}

/// Launches the compiled kernel and returns the arguments as they are afterwards.
fn run_on_device(
    kernel: &kdsl_runtime::Kernel,
    device: &Device,
    module: &Module,
    case: &Case,
) -> Result<Vec<InterpArgument>, String> {
    let function = module
        .kernels()
        .find(|f| f.name == case.kernel)
        .ok_or_else(|| format!("no kernel `{}` in the IR", case.kernel))?;
    let mut buffers = Vec::new();
    for argument in &case.arguments {
        buffers.push(match argument {
            InterpArgument::Buffer(buffer) => Some(upload(device, buffer)?),
            InterpArgument::Scalar(_) | InterpArgument::Local { .. } => None,
        });
    }
    let mut arguments = Vec::new();
    for ((argument, buffer), parameter) in case
        .arguments
        .iter()
        .zip(&buffers)
        .zip(&function.parameters)
    {
        let writable = matches!(parameter.ty, ParameterType::Buffer { writable: true, .. });
        arguments.push(match (argument, buffer) {
            (InterpArgument::Scalar(value), _) => Argument::scalar(runtime_scalar(*value)?),
            (InterpArgument::Local { element, length }, _) => Argument::local(*element, *length),
            (_, Some(buffer)) if writable => {
                each_device_buffer!(buffer, inner => Argument::writable(inner))
            }
            (_, Some(buffer)) => each_device_buffer!(buffer, inner => Argument::read_only(inner)),
            (_, None) => return Err("a buffer argument without a buffer".into()),
        });
    }
    let dimensions = if case.launch.global[2] > 1 || case.launch.local[2] > 1 {
        3
    } else if case.launch.global[1] > 1 || case.launch.local[1] > 1 {
        2
    } else {
        1
    };
    let global = case.launch.global.map(|d| d as usize);
    let local = case.launch.local.map(|d| d as usize);
    let launch = match dimensions {
        1 => Launch::new([global[0]], [local[0]]),
        2 => Launch::new([global[0], global[1]], [local[0], local[1]]),
        _ => Launch::new(global, local),
    };
    kernel
        .launch(&launch, &arguments)
        .and_then(|event| event.wait())
        .map_err(|e| format!("launching `{}`: {e}", case.kernel))?;
    case.arguments
        .iter()
        .zip(&buffers)
        .map(|(argument, buffer)| match buffer {
            Some(buffer) => download(buffer).map(InterpArgument::Buffer),
            None => Ok(argument.clone()),
        })
        .collect()
}

fn as_f64s(buffer: &InterpArgument) -> Option<Vec<f64>> {
    match buffer {
        InterpArgument::Buffer(HostBuffer::F32(v)) => {
            Some(v.iter().map(|&x| f64::from(x)).collect())
        }
        InterpArgument::Buffer(HostBuffer::F64(v)) => Some(v.clone()),
        InterpArgument::Buffer(HostBuffer::F16(v)) => Some(v.iter().map(|x| x.to_f64()).collect()),
        InterpArgument::Buffer(HostBuffer::Bf16(v)) => Some(v.iter().map(|x| x.to_f64()).collect()),
        _ => None,
    }
}

fn compare_outputs(
    case: &Case,
    reference: &[InterpArgument],
    device: &[InterpArgument],
) -> CaseResult {
    for (index, how) in case.compare.iter().enumerate() {
        let (want, got) = (&reference[index], &device[index]);
        match how {
            Compare::Racy => {}
            Compare::Exact => {
                if want != got {
                    return Err(format!(
                        "`{}` argument {index} differs: interpreter {}, device {}",
                        case.kernel,
                        first_difference(want, got).0,
                        first_difference(want, got).1
                    ));
                }
            }
            Compare::Close(tolerance) => {
                let (Some(want), Some(got)) = (as_f64s(want), as_f64s(got)) else {
                    return Err(format!(
                        "`{}` argument {index} is not a float buffer",
                        case.kernel
                    ));
                };
                let far = |(&want, &got): (&f64, &f64)| {
                    let bound = tolerance * want.abs().max(1.0);
                    // Equal values (infinities too) and two NaNs agree.
                    !(got == want || (got - want).abs() <= bound || (got.is_nan() && want.is_nan()))
                };
                let differing = want.iter().zip(&got).filter(|pair| far(*pair)).count();
                if let Some(element) = want.iter().zip(&got).position(far) {
                    return Err(format!(
                        "`{}` argument {index}[{element}]: device {}, interpreter {} (relative tolerance {tolerance}; {differing} of {} elements differ)",
                        case.kernel,
                        got[element],
                        want[element],
                        want.len()
                    ));
                }
            }
        }
    }
    match case.check {
        Some(check) => check(reference, device),
        None => Ok(()),
    }
}

/// Describes the first differing element of two arguments.
fn first_difference(want: &InterpArgument, got: &InterpArgument) -> (String, String) {
    let (InterpArgument::Buffer(want), InterpArgument::Buffer(got)) = (want, got) else {
        return (format!("{want:?}"), format!("{got:?}"));
    };
    let describe = |buffer: &HostBuffer, index: usize| -> String {
        macro_rules! at {
            ($($variant:ident),*) => {
                match buffer {
                    $(HostBuffer::$variant(v) => format!("[{index}] = {:?}", v.get(index)),)*
                }
            };
        }
        at!(I8, U8, I16, U16, I32, U32, I64, U64, F16, Bf16, F32, F64)
    };
    let index = (0..want.len().max(got.len()))
        .find(|&i| describe(want, i) != describe(got, i))
        .unwrap_or(0);
    (describe(want, index), describe(got, index))
}

/// Runs every case of one source file on every device.
fn differential(
    source: &str,
    bundle: impl FnOnce() -> Result<Bundle, String>,
    required: bool,
    cases: Vec<Case>,
) {
    let module = compile_file(source);
    let mut failures = Vec::new();
    let bundle = match bundle() {
        Ok(bundle) => Some(bundle),
        Err(why) if required => panic!("{source}: {why}"),
        Err(why) => {
            eprintln!("{source}: skipped: {why}");
            None
        }
    };
    for info in devices_under_test() {
        let Some(bundle) = &bundle else { break };
        let device = match Device::open(&info) {
            Ok(device) => device,
            Err(error) => {
                failures.push(format!("{}: opening the device failed: {error}", info.id()));
                continue;
            }
        };
        let program = match device.load(bundle) {
            Ok(program) => program,
            Err(RuntimeError::NoMatchingImage { bundle_has, .. }) if !required => {
                eprintln!("{source}: skipped on {info}: its bundle has only {bundle_has}");
                continue;
            }
            Err(error) => {
                failures.push(format!("{}: loading {source}: {error}", info.id()));
                continue;
            }
        };
        for case in &cases {
            let outcome = program
                .kernel(case.kernel)
                .map_err(|e| e.to_string())
                .and_then(|kernel| run_on_device(&kernel, &device, &module, case))
                .and_then(|on_device| {
                    let sub_group_size = case
                        .sub_group_size
                        .map(|read| {
                            read(&on_device).ok_or("the device's sub-group size is not readable")
                        })
                        .transpose()?;
                    let mut launch = case.launch;
                    if let Some(size) = sub_group_size {
                        launch.sub_group_size = size;
                    }
                    let mut reference = case.arguments.clone();
                    run_kernel(&module, case.kernel, &launch, &mut reference)
                        .map_err(|e| format!("the interpreter failed: {e}"))?;
                    compare_outputs(case, &reference, &on_device)?;
                    Ok(sub_group_size)
                });
            match outcome {
                Ok(Some(size)) => {
                    eprintln!("{}: agrees on {info} (sub-group size {size})", case.kernel)
                }
                Ok(None) => eprintln!("{}: agrees on {info}", case.kernel),
                Err(why) if why.starts_with("skipped:") => eprintln!("{}: {why}", case.kernel),
                Err(why) => failures.push(format!("{} on {}: {why}", case.kernel, info.id())),
            }
        }
    }
    assert!(failures.is_empty(), "{source}:\n{}", failures.join("\n"));
}

fn examples_required() -> bool {
    kdsl_testkit::devices::bundle_folder().1
}

/// Runs `cases` of `examples/<name>.krn` on every device; its bundle must be in the bundle
/// folder when `KDSL_TEST_BUNDLES` is set.
fn on_example(name: &str, cases: Vec<Case>) {
    differential(
        &format!("examples/{name}.krn"),
        || example_bundle(name),
        examples_required(),
        cases,
    );
}

/// Runs `cases` of `tests/kernels/<name>.krn` on every device; skipped, saying why, without
/// its bundle.
fn on_test_kernel(name: &str, cases: Vec<Case>) {
    differential(
        &format!("tests/kernels/{name}.krn"),
        || test_kernel_bundle(name),
        false,
        cases,
    );
}

fn buffer<T: kdsl_interp::HostElement>(values: Vec<T>) -> InterpArgument {
    InterpArgument::buffer(values)
}

fn scalar(value: impl Into<ScalarValue>) -> InterpArgument {
    InterpArgument::scalar(value)
}

/// A case of a kernel `(out: global mut [T], input: global [T])`: `outputs` zeros, then `input`.
fn output_then_input<T: kdsl_interp::HostElement + Default>(
    kernel: &'static str,
    launch: InterpLaunch,
    outputs: usize,
    input: Vec<T>,
) -> Case {
    Case::new(
        kernel,
        launch,
        vec![buffer(vec![T::default(); outputs]), buffer(input)],
    )
}

// The cases, by subject; each module's `use super::*` brings in the harness above.
#[path = "differential/bf16.rs"]
mod bf16;
#[path = "differential/examples.rs"]
mod examples;
#[path = "differential/kernels.rs"]
mod kernels;
#[path = "differential/matrix.rs"]
mod matrix;
#[path = "differential/memory.rs"]
mod memory;
