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
        // tf32 tiles need sm_80 or later.
        .args(["--target", "spirv,ptx", "--arch"])
        .arg(if name.contains("tf32") {
            "sm_90"
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
        at!(I8, U8, I16, U16, I32, U32, I64, U64, F16, F32, F64)
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

// ---------------------------------------------------------------------------------------------
// The examples.

#[test]
fn saxpy() {
    let mut random = Random::new(21);
    let n = 1000usize;
    let case = Case::new(
        "saxpy",
        InterpLaunch::covering(n as u32, 64),
        vec![
            buffer(random.f32s(n + 24, -1.0, 1.0)),
            buffer(random.f32s(n, -1.0, 1.0)),
            scalar(1.5f32),
            scalar(n as u32),
        ],
    )
    // Devices may contract `a * x + y` into an fma.
    .compare(0, Compare::Close(1e-6));
    on_example("saxpy", vec![case]);
}

#[test]
fn reduce_sum() {
    let mut random = Random::new(22);
    let n = 1000usize;
    let case = Case::new(
        "reduce_sum",
        InterpLaunch::covering(n as u32, 256),
        vec![
            buffer(vec![0.0f32; 4]),
            buffer(random.f32s(n, -1.0, 1.0)),
            scalar(n as u32),
        ],
    )
    .compare(0, Compare::Close(1e-5));
    on_example("reduction", vec![case]);
}

#[test]
fn scan() {
    let mut random = Random::new(25);
    let n = 1000usize;
    let blocks = n.div_ceil(256);
    let input: Vec<u32> = (0..n).map(|_| (random.next_u64() % 1000) as u32).collect();
    let mut lanes_input = input[..256].to_vec();
    for zero in [3, 40, 41, 200] {
        lanes_input[zero] = 0;
    }
    let mut lanes = Case::new(
        "scan_lanes",
        InterpLaunch::new([256], [64]),
        vec![
            buffer(vec![0u32; 256]),
            buffer(vec![0u32; 256]),
            buffer(lanes_input),
        ],
    );
    lanes.sub_group_size = Some(scan_sub_group_size);
    let cases = vec![
        Case::new(
            "scan_blocks",
            InterpLaunch::covering(n as u32, 256),
            vec![
                buffer(vec![0u32; n]),
                buffer(vec![0u32; blocks]),
                buffer(input.clone()),
                scalar(n as u32),
            ],
        ),
        Case::new(
            "scan_totals",
            InterpLaunch::covering(256, 256),
            vec![buffer(input[..600].to_vec()), scalar(600u32)],
        ),
        Case::new(
            "add_block_offsets",
            InterpLaunch::covering(n as u32, 256),
            vec![
                buffer(input.clone()),
                buffer(input[..blocks].to_vec()),
                scalar(n as u32),
            ],
        ),
        lanes,
    ];
    on_example("scan", cases);
}

/// The sub-group size a device used for `scan_lanes`: the first lane past 0 whose exclusive
/// sum is 0 again starts the second sub-group (its inputs are never all zero before it).
fn scan_sub_group_size(outputs: &[InterpArgument]) -> Option<u32> {
    let sums = outputs[0].as_slice::<u32>()?;
    sums.iter()
        .skip(1)
        .position(|&sum| sum == 0)
        .map(|position| position as u32 + 1)
}

#[test]
fn transpose() {
    let mut random = Random::new(23);
    let (width, height) = (40usize, 24usize);
    let (w, h) = (width as u32, height as u32);
    let mut arguments = contiguous(vec![0.0f32; width * height], &[w, h]);
    arguments.extend(contiguous(random.f32s(width * height, -1.0, 1.0), &[h, w]));
    let case = Case::new(
        "transpose",
        InterpLaunch::new([48, 32], [16, 16]),
        arguments,
    );
    on_example("transpose", vec![case]);
}

#[test]
fn matmul() {
    let mut random = Random::new(24);
    let (m, n, k) = (20usize, 18usize, 37usize);
    let (m32, n32, k32) = (m as u32, n as u32, k as u32);
    let mut arguments = contiguous(vec![0.0f32; m * n], &[m32, n32]);
    arguments.extend(contiguous(random.f32s(m * k, -1.0, 1.0), &[m32, k32]));
    arguments.extend(contiguous(random.f32s(k * n, -1.0, 1.0), &[k32, n32]));
    let case = Case::new("matmul", InterpLaunch::new([32, 32], [16, 16]), arguments)
        .compare(0, Compare::Close(1e-5));
    on_example("matmul", vec![case]);
}

#[test]
fn histogram() {
    let mut random = Random::new(25);
    let n = 3000usize;
    let data: Vec<u8> = (0..n).map(|_| (random.next_u64() % 200) as u8).collect();
    let case = Case::new(
        "histogram",
        InterpLaunch::covering(n as u32, 128),
        vec![buffer(vec![3u32; 256]), buffer(data), scalar(n as u32)],
    );
    on_example("histogram", vec![case]);
}

#[test]
fn kmeans() {
    let (n_samples, n_features, n_clusters, copies) = (700usize, 13usize, 37usize, 8usize);
    let mut random = Random::new(42);
    let (x_t, centres) = kmeans_blobs(&mut random, n_samples, n_features, n_clusters);
    let centroids_t: Vec<f32> = (0..n_features * n_clusters)
        .map(|i| centres[(i % n_clusters) * n_features + i / n_clusters] + 0.25)
        .collect();
    let half_norms: Vec<f32> = (0..n_clusters)
        .map(|c| {
            0.5 * (0..n_features)
                .map(|f| centroids_t[f * n_clusters + c].powi(2))
                .sum::<f32>()
        })
        .collect();
    let (samples, features, clusters, copy_count) = (
        n_samples as u32,
        n_features as u32,
        n_clusters as u32,
        copies as u32,
    );
    let mut assign = vec![buffer(vec![0u32; n_samples])];
    assign.extend(contiguous(
        vec![0.0f32; copies * n_clusters * n_features],
        &[copy_count, clusters, features],
    ));
    assign.extend(contiguous(
        vec![0u32; copies * n_clusters],
        &[copy_count, clusters],
    ));
    assign.extend(contiguous(x_t, &[features, samples]));
    assign.extend(contiguous(centroids_t.clone(), &[features, clusters]));
    assign.push(buffer(half_norms.clone()));
    let assign = Case::new(
        "kmeans_assign",
        InterpLaunch::covering(samples, 256),
        assign,
    )
    // Atomic float sums add in the order work-items arrive.
    .compare(1, Compare::Close(1e-5));
    let sums: Vec<f32> = random.f32s(copies * n_clusters * n_features, -5.0, 5.0);
    let counts: Vec<u32> = (0..copies * n_clusters)
        .map(|_| (random.next_u64() % 4) as u32)
        .collect();
    let mut update = contiguous(centroids_t, &[features, clusters]);
    update.push(buffer(half_norms));
    update.extend(contiguous(sums, &[copy_count, clusters, features]));
    update.extend(contiguous(counts, &[copy_count, clusters]));
    let update = Case::new(
        "kmeans_update",
        InterpLaunch::covering(clusters, 64),
        update,
    )
    .compare(0, Compare::Close(1e-6))
    .compare(5, Compare::Close(1e-6));
    on_example("kmeans", vec![assign, update]);
}

#[test]
fn arrays_by_reference_and_tuples() {
    let mut random = Random::new(43);
    let n = 192usize;
    let input: Vec<i32> = (0..n)
        .map(|_| (random.next_u64() % 2001) as i32 - 1000)
        .collect();
    let case = Case::new(
        "arrays_and_tuples",
        InterpLaunch::new([n as u32], [64]),
        vec![buffer(vec![0i32; n * 12]), buffer(input)],
    );
    on_test_kernel("functions", vec![case]);
}

#[test]
fn backend_regressions() {
    let mut random = Random::new(45);
    let n = 256usize;
    // Small and large values, so that both outcomes of each comparison occur.
    let a: Vec<u16> = (0..=n)
        .map(|i| (random.next_u64() >> (if i % 2 == 0 { 48 } else { 60 })) as u16)
        .collect();
    let b: Vec<u32> = (0..=n)
        .map(|i| (random.next_u64() >> (if i % 2 == 0 { 32 } else { 48 })) as u32)
        .collect();
    let c: Vec<u8> = (0..=n)
        .map(|i| (random.next_u64() >> (if i % 2 == 0 { 56 } else { 60 })) as u8)
        .collect();
    let case = Case::new(
        "multiply_overflow",
        InterpLaunch::new([n as u32], [64]),
        vec![buffer(vec![0i32; n * 3]), buffer(a), buffer(b), buffer(c)],
    );
    let n = 64usize;
    let signed_bool_to_float = Case::new(
        "signed_bool_to_float",
        InterpLaunch::new([n as u32], [32]),
        vec![
            buffer((0..n).map(|_| random.next_u64() as i8).collect::<Vec<_>>()),
            buffer(vec![half::f16::from_f32(0.0); n]),
        ],
    );
    on_test_kernel("backend_regressions", vec![case, signed_bool_to_float]);
}

#[test]
fn stencil() {
    let mut random = Random::new(26);
    let (width, height) = (21usize, 13usize);
    let case = Case::new(
        "stencil",
        InterpLaunch::new([24, 16], [8, 8]),
        vec![
            buffer(vec![0.0f32; width * height]),
            buffer(random.f32s(width * height, -1.0, 1.0)),
            scalar(width as u32),
            scalar(height as u32),
        ],
    )
    .compare(0, Compare::Close(1e-6));
    on_example("stencil", vec![case]);
}

#[test]
fn softmax() {
    // The result does not depend on the sub-group size, so the interpreter uses its default.
    let mut random = Random::new(27);
    let (rows, columns) = (3usize, 100usize);
    let case = Case::new(
        "softmax",
        InterpLaunch::new([64 * rows as u32], [64]),
        vec![
            buffer(vec![0.0f32; rows * columns]),
            buffer(random.f32s(rows * columns, -4.0, 4.0)),
            scalar(columns as u32),
        ],
    )
    .compare(0, Compare::Close(1e-5));
    on_example("softmax", vec![case]);
}

#[test]
fn axpby() {
    let mut random = Random::new(28);
    let n = 300usize;
    let cases = vec![
        Case::new(
            "axpby_f32",
            InterpLaunch::covering(n as u32, 64),
            vec![
                buffer(random.f32s(n, -1.0, 1.0)),
                buffer(random.f32s(n, -1.0, 1.0)),
                scalar(0.75f32),
                scalar(-1.25f32),
                scalar(n as u32),
            ],
        )
        .compare(0, Compare::Close(1e-6)),
        Case::new(
            "axpby_f64",
            InterpLaunch::covering(n as u32, 64),
            vec![
                buffer(random.f64s(n, -1.0, 1.0)),
                buffer(random.f64s(n, -1.0, 1.0)),
                scalar(0.75f64),
                scalar(-1.25f64),
                scalar(n as u32),
            ],
        )
        .compare(0, Compare::Close(1e-14)),
    ];
    on_example("generic", cases);
}

// ---------------------------------------------------------------------------------------------
// The feature kernels of tests/kernels.

#[test]
fn math() {
    let mut random = Random::new(31);
    let items = 128usize;
    let launch = InterpLaunch::new([items as u32], [32]);
    // Positive inputs keep sqrt, log and pow real. `exp`, `pow`, `tan` and friends may differ by
    // a few ULP between libraries; the sum of 20 terms is compared relatively.
    let mut cases = vec![
        output_then_input("math_f32", launch, items, random.f32s(items + 1, 0.25, 3.0))
            .compare(0, Compare::Close(1e-5)),
        output_then_input("math_f64", launch, items, random.f64s(items + 1, 0.25, 3.0))
            .compare(0, Compare::Close(1e-12)),
    ];
    macro_rules! integer_case {
        ($name:literal, $ty:ty) => {{
            let input: Vec<$ty> = (0..=items).map(|_| random.next_u64() as $ty).collect();
            cases.push(output_then_input($name, launch, items, input));
        }};
    }
    integer_case!("math_i8", i8);
    integer_case!("math_u8", u8);
    integer_case!("math_i16", i16);
    integer_case!("math_u16", u16);
    integer_case!("math_i32", i32);
    integer_case!("math_u32", u32);
    integer_case!("math_i64", i64);
    integer_case!("math_u64", u64);
    // f16 arithmetic rounds each operation to f16 (docs/language.md); the library functions are
    // computed in f32 and rounded, so a few f16 ULP may differ over the sum.
    let halves = |values: Vec<f32>| -> Vec<half::f16> {
        values.into_iter().map(half::f16::from_f32).collect()
    };
    cases.push(
        output_then_input(
            "math_f16",
            launch,
            items,
            halves(random.f32s(items + 1, 0.25, 3.0)),
        )
        .compare(0, Compare::Close(2e-2)),
    );
    // The library functions of language v1; the flags (isnan, isinf, isfinite, T::NAN,
    // T::NEG_INFINITY, T::MAX) are exact.
    let flags = || buffer(vec![0u32; items]);
    cases.push(
        Case::new(
            "more_math_f32",
            launch,
            vec![
                buffer(vec![0.0f32; items]),
                flags(),
                buffer(random.f32s(items + 1, 0.25, 3.0)),
            ],
        )
        .compare(0, Compare::Close(1e-5)),
    );
    cases.push(
        Case::new(
            "more_math_f64",
            launch,
            vec![
                buffer(vec![0.0f64; items]),
                flags(),
                buffer(random.f64s(items + 1, 0.25, 3.0)),
            ],
        )
        .compare(0, Compare::Close(1e-12)),
    );
    // The native functions' accuracy is the target's (docs/language.md): a sum of 14 terms
    // within 1e-3 of the accurate one; on f64 they are the accurate functions.
    cases.push(
        output_then_input(
            "native_math_f32",
            launch,
            items,
            random.f32s(items + 1, 0.25, 3.0),
        )
        .compare(0, Compare::Close(1e-3)),
    );
    cases.push(
        output_then_input(
            "native_math_f64",
            launch,
            items,
            random.f64s(items + 1, 0.25, 3.0),
        )
        .compare(0, Compare::Close(1e-12)),
    );
    cases.push(
        Case::new(
            "more_math_f16",
            launch,
            vec![
                buffer(halves(vec![0.0; items])),
                flags(),
                buffer(halves(random.f32s(items + 1, 0.25, 3.0))),
            ],
        )
        .compare(0, Compare::Close(2e-2)),
    );
    on_test_kernel("math", cases);
}

#[test]
fn operators() {
    let mut random = Random::new(32);
    let n = 100usize;
    // Operands from 1 to 31 keep every division and shift defined.
    let input: Vec<i32> = (0..=n).map(|_| random.i64_in(1, 32) as i32).collect();
    let case = Case::new(
        "operators",
        InterpLaunch::covering(n as u32, 32),
        vec![
            buffer(vec![0i32; n]),
            buffer(vec![0u32; n]),
            buffer(random.f32s(n, -4.0, 4.0)),
            buffer(vec![0u32; 4]),
            buffer(input),
            scalar(n as u32),
            scalar(3u8),
        ],
    )
    // Private-array indexing in a loop: LLVM 22's SPIR-V code generation at -O1 and above got
    // this wrong, so the SPIR-V backend now runs at -O0 (see kdsl-codegen's target/spirv.rs).
    .compare(2, Compare::Close(1e-5))
    // `counts[index] += 1` from many work-items at once is a data race.
    .compare(3, Compare::Racy);
    // Conversions out of range or of NaN saturate (docs/language.md), so any inputs are defined.
    let n = 64usize;
    let casts = Case::new(
        "casts",
        InterpLaunch::covering(n as u32, 32),
        vec![
            buffer(
                random
                    .f32s(n, -300.0, 300.0)
                    .into_iter()
                    .map(half::f16::from_f32)
                    .collect::<Vec<_>>(),
            ),
            buffer(random.f32s(n, -70000.0, 70000.0)),
            buffer(random.f64s(n, -1e10, 1e10)),
            buffer((0..n).map(|_| random.next_u64() as i8).collect::<Vec<_>>()),
            buffer((0..n).map(|_| random.next_u64() as u8).collect::<Vec<_>>()),
            buffer((0..n).map(|_| random.next_u64() as i16).collect::<Vec<_>>()),
            buffer((0..n).map(|_| random.next_u64() as u16).collect::<Vec<_>>()),
            buffer((0..n).map(|_| random.next_u64() as i32).collect::<Vec<_>>()),
            buffer((0..n).map(|_| random.next_u64() as u32).collect::<Vec<_>>()),
            buffer((0..n).map(|_| random.next_u64() as i64).collect::<Vec<_>>()),
            buffer((0..n).map(|_| random.next_u64()).collect::<Vec<_>>()),
        ],
    )
    // The float sums may be contracted into multiply-adds on a device.
    .compare(0, Compare::Close(1e-3))
    .compare(1, Compare::Close(1e-6))
    .compare(2, Compare::Close(1e-12));
    // Integers beyond f16's range become infinities, also where only a few bits can be set
    // (LLVM used to fold `(x << 31) as f16 as f64` to -2147483648.0).
    let n = 64usize;
    let mut signed: Vec<i32> = vec![1, 2, -1, 4095, 4094, 0];
    signed.extend((signed.len()..n).map(|_| random.next_u64() as i32));
    let mut unsigned: Vec<u32> = vec![1, 0, 3, 65535];
    unsigned.extend((unsigned.len()..n).map(|_| random.next_u64() as u32));
    let mut longs: Vec<i64> = vec![1, -1, 0, 1 << 23];
    longs.extend((longs.len()..n).map(|_| random.next_u64() as i64));
    let integers_to_f16 = Case::new(
        "integers_to_f16",
        InterpLaunch::covering(n as u32, 32),
        vec![
            buffer(vec![0.0f64; n * 4]),
            buffer(vec![0.0f32; n]),
            buffer(signed),
            buffer(unsigned),
            buffer(longs),
        ],
    );
    // Values of both signs around the clamp of 7; the first and last work-items take the arms
    // that would read outside `values` if both arms were evaluated.
    let n = 50usize;
    let values: Vec<i32> = (0..n).map(|_| random.i64_in(-20, 20) as i32).collect();
    let if_expressions = Case::new(
        "if_expressions",
        InterpLaunch::covering(n as u32, 16),
        vec![buffer(vec![0i32; n * 4]), buffer(values), scalar(n as u32)],
    );
    // Work-item 0 runs no trip of `(0..0).rev()`; the others count down to 0 in `u32`.
    let n = 40usize;
    let descending_loops = Case::new(
        "descending_loops",
        InterpLaunch::covering(n as u32, 8),
        vec![buffer(vec![0i32; n * 4]), scalar(n as u32)],
    );
    // A 2-D launch over 24 x 5 elements of a 24-wide row-major grid.
    let signed_ids = Case::new(
        "signed_ids",
        InterpLaunch::new([24, 5], [8, 1]),
        vec![buffer(vec![0i32; 24 * 5]), scalar(24i32)],
    );
    on_test_kernel(
        "language",
        vec![
            case,
            casts,
            integers_to_f16,
            if_expressions,
            descending_loops,
            signed_ids,
        ],
    );
}

#[test]
fn semantics() {
    let mut random = Random::new(33);
    let n = 96usize;
    // Out-of-range, infinite and NaN inputs: conversions saturate, NaN gives 0.
    let mut input = vec![
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        3.0e9,
        -3.0e9,
        1e10,
        -9.0,
        300.5,
        -0.5,
        255.9,
        2147483520.0,
        -2147483904.0,
    ];
    input.extend(random.f32s(n - input.len(), -1e12, 1e12));
    let mut finite = vec![1e10f32, -9.0, 4.5, -4.5, 0.0];
    finite.extend(random.f32s(n - finite.len(), -1e9, 1e9));
    // Shift amounts below 0 and at or beyond the width.
    let amounts: Vec<i32> = (0..n).map(|_| random.i64_in(-70, 70) as i32).collect();
    let case = Case::new(
        "semantics",
        InterpLaunch::covering(n as u32, 32),
        vec![
            buffer(vec![0i32; n * 4]),
            buffer(vec![0u8; n]),
            buffer(vec![0i64; n]),
            buffer(vec![0.0f32; n * 2]),
            buffer(input),
            buffer(finite),
            buffer(amounts),
            scalar(n as u32),
        ],
    )
    // The input holds NaN, which never equals itself; it is read-only, so it is not compared.
    .compare(4, Compare::Racy);
    on_test_kernel("semantics", vec![case]);
}

/// `float_atomics`: `results[i] = old_global + old_local + shared[lid % 64]`; only the old
/// values of the contended `values[0]` depend on the order, and as a whole they must be
/// `values[0] + k * operand` for k = 0..n.
fn float_atomics_check(reference: &[InterpArgument], device: &[InterpArgument]) -> CaseResult {
    let old_globals = |arguments: &[InterpArgument], original: &[f64]| -> Vec<f64> {
        let results = as_f64s(&arguments[1]).unwrap_or_default();
        let operand = match arguments[2] {
            InterpArgument::Scalar(ScalarValue::F32(v)) => f64::from(v),
            InterpArgument::Scalar(ScalarValue::F64(v)) => v,
            _ => 0.0,
        };
        let mut olds: Vec<f64> = results
            .iter()
            .enumerate()
            .map(|(i, &r)| r - (2.0 * original[i] + operand))
            .collect();
        olds.sort_by(f64::total_cmp);
        olds
    };
    // Every `values[i]` but the first is unchanged, so the original is readable from the output.
    let mut original = as_f64s(&reference[0]).unwrap_or_default();
    let n = original.len() as f64;
    if let (Some(first), InterpArgument::Scalar(ScalarValue::F32(_) | ScalarValue::F64(_))) =
        (original.first_mut(), &reference[2])
    {
        *first -= n;
    }
    let want = old_globals(reference, &original);
    let got = old_globals(device, &original);
    if want != got {
        return Err(format!(
            "the old values of the contended atomic differ as a set: interpreter {want:?}, device {got:?}"
        ));
    }
    Ok(())
}

#[test]
fn atomics() {
    let mut random = Random::new(33);
    let items = 128usize;
    // One work-item per local slot (groups of 64): every result is order-independent.
    let launch = InterpLaunch::new([items as u32], [64]);
    let mut cases = Vec::new();
    macro_rules! integer_case {
        ($name:literal, $ty:ty) => {{
            let values: Vec<$ty> = (0..items).map(|_| random.next_u64() as $ty).collect();
            cases.push(Case::new(
                $name,
                launch,
                vec![
                    buffer(values),
                    buffer(vec![0 as $ty; items]),
                    scalar(random.next_u64() as $ty),
                ],
            ));
        }};
    }
    integer_case!("atomics_i32", i32);
    integer_case!("atomics_u32", u32);
    integer_case!("atomics_i64", i64);
    integer_case!("atomics_u64", u64);
    // Small integers in floats: every sum is exact whatever the order. The operand is 1, as
    // `float_atomics_check` assumes.
    let values: Vec<f32> = (0..items).map(|i| (i % 7) as f32).collect();
    let mut case = Case::new(
        "atomics_f32",
        launch,
        vec![buffer(values), buffer(vec![0.0f32; items]), scalar(1.0f32)],
    )
    .compare(1, Compare::Racy);
    case.check = Some(float_atomics_check);
    cases.push(case);
    let values: Vec<f64> = (0..items).map(|i| (i % 5) as f64).collect();
    let mut case = Case::new(
        "atomics_f64",
        launch,
        vec![buffer(values), buffer(vec![0.0f64; items]), scalar(1.0f64)],
    )
    .compare(1, Compare::Racy);
    case.check = Some(float_atomics_check);
    cases.push(case);
    // Float atomic min/max, with a NaN among the inputs (minNum/maxNum ignore it).
    let mut inputs: Vec<f32> = random.f32s(items, -100.0, 100.0);
    inputs[17] = f32::NAN;
    let start = vec![
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::INFINITY,
        f32::NEG_INFINITY,
    ];
    cases.push(
        Case::new(
            "extremes_f32",
            launch,
            vec![buffer(start.clone()), buffer(inputs.clone())],
        )
        // The unchanged input holds a NaN, which bit-for-bit equality of floats would not accept.
        .compare(1, Compare::Close(0.0)),
    );
    cases.push(
        Case::new(
            "extremes_f64",
            launch,
            vec![
                buffer(start.iter().map(|&x| f64::from(x)).collect::<Vec<_>>()),
                buffer(inputs.iter().map(|&x| f64::from(x)).collect::<Vec<_>>()),
            ],
        )
        .compare(1, Compare::Close(0.0)),
    );
    on_test_kernel("atomics", cases);
}

/// `lanes[i] = lane * 1000 + size`: work-item 0 is lane 0, so `lanes[0]` is the size.
fn device_sub_group_size(outputs: &[InterpArgument]) -> Option<u32> {
    outputs[2].as_slice::<u32>()?.first().copied()
}

#[test]
fn sub_groups() {
    let mut random = Random::new(34);
    let items = 128usize;
    let launch = InterpLaunch::new([items as u32], [64]);
    let mut cases = Vec::new();
    // Integer inputs of at most 57 bits (25 for 32-bit types): the six-term sums below do not
    // overflow, which is an error (docs/language.md, "Semantics").
    macro_rules! sub_group_case {
        ($name:literal, $ty:ty, $input:expr, $compare:expr) => {{
            let input: Vec<$ty> = $input;
            let mut case = Case::new(
                $name,
                launch,
                vec![
                    buffer(vec![0 as $ty; items]),
                    buffer(input),
                    buffer(vec![0u32; items]),
                ],
            )
            .compare(0, $compare);
            case.sub_group_size = Some(device_sub_group_size);
            cases.push(case);
        }};
    }
    sub_group_case!(
        "sub_groups_i32",
        i32,
        (0..items)
            .map(|_| (random.next_u64() as i32) >> 7)
            .collect(),
        Compare::Exact
    );
    sub_group_case!(
        "sub_groups_u32",
        u32,
        (0..items)
            .map(|_| (random.next_u64() as u32) >> 7)
            .collect(),
        Compare::Exact
    );
    sub_group_case!(
        "sub_groups_i64",
        i64,
        (0..items)
            .map(|_| (random.next_u64() as i64) >> 7)
            .collect(),
        Compare::Exact
    );
    sub_group_case!(
        "sub_groups_u64",
        u64,
        (0..items).map(|_| random.next_u64() >> 7).collect(),
        Compare::Exact
    );
    // Reductions may add lanes in another order.
    sub_group_case!(
        "sub_groups_f32",
        f32,
        random.f32s(items, -1.0, 1.0),
        Compare::Close(1e-5)
    );
    sub_group_case!(
        "sub_groups_f64",
        f64,
        random.f64s(items, -1.0, 1.0),
        Compare::Close(1e-12)
    );
    on_test_kernel("sub_groups", cases);
}

#[test]
fn collectives() {
    let mut random = Random::new(35);
    let items = 192usize;
    // 96 work-items a group: three sub-groups of 32, or one and a half of 64.
    let launch = InterpLaunch::new([items as u32], [96]);
    let mut cases = Vec::new();
    macro_rules! collective_cases {
        ($sub:literal, $work:literal, $ty:ty, $input:expr, $compare:expr) => {{
            let input: Vec<$ty> = $input;
            let mut case = Case::new(
                $sub,
                launch,
                vec![
                    buffer(vec![0 as $ty; items * 10]),
                    buffer(input.clone()),
                    buffer(vec![0u32; items]),
                    buffer(vec![0u64; items * 4]),
                ],
            )
            .compare(0, $compare);
            case.sub_group_size = Some(device_sub_group_size);
            cases.push(case);
            cases.push(
                Case::new(
                    $work,
                    launch,
                    vec![buffer(vec![0 as $ty; items * 10]), buffer(input.clone())],
                )
                .compare(0, $compare),
            );
            // Work-groups of 48: the last sub-group of 32 lanes is partial on NVIDIA.
            cases.push(
                Case::new(
                    $work,
                    InterpLaunch::new([items as u32], [48]),
                    vec![buffer(vec![0 as $ty; items * 10]), buffer(input)],
                )
                .compare(0, $compare),
            );
        }};
    }
    collective_cases!(
        "sub_group_collectives_i32",
        "work_group_collectives_i32",
        i32,
        (0..items).map(|_| random.next_u64() as i32).collect(),
        Compare::Exact
    );
    collective_cases!(
        "sub_group_collectives_u32",
        "work_group_collectives_u32",
        u32,
        (0..items).map(|_| random.next_u64() as u32).collect(),
        Compare::Exact
    );
    collective_cases!(
        "sub_group_collectives_i64",
        "work_group_collectives_i64",
        i64,
        (0..items).map(|_| random.next_u64() as i64).collect(),
        Compare::Exact
    );
    collective_cases!(
        "sub_group_collectives_u64",
        "work_group_collectives_u64",
        u64,
        (0..items).map(|_| random.next_u64()).collect(),
        Compare::Exact
    );
    // Sums may add in another order.
    collective_cases!(
        "sub_group_collectives_f32",
        "work_group_collectives_f32",
        f32,
        random.f32s(items, -1.0, 1.0),
        Compare::Close(1e-5)
    );
    collective_cases!(
        "sub_group_collectives_f64",
        "work_group_collectives_f64",
        f64,
        random.f64s(items, -1.0, 1.0),
        Compare::Close(1e-12)
    );
    on_test_kernel("collectives", cases);
}

#[test]
fn work_items() {
    let case = Case::new(
        "work_items",
        InterpLaunch::new([4, 6, 2], [2, 3, 1]),
        vec![buffer(vec![u32::MAX; 4 * 6 * 2 * 18])],
    );
    on_test_kernel("work_items", vec![case]);
}

#[test]
fn work_group_size() {
    let mut random = Random::new(41);
    let n = 256usize;
    let sums = Case::new(
        "block_sums",
        InterpLaunch::new([n as u32], [64]),
        vec![
            buffer(vec![0.0f32; n / 64]),
            buffer(random.f32s(n, -1.0, 1.0)),
        ],
    )
    // Devices may add in another order.
    .compare(0, Compare::Close(1e-5));
    let tiles = Case::new(
        "reverse_tiles",
        InterpLaunch::new([16, 8], [8, 4]),
        vec![
            buffer(vec![0u32; 16 * 8]),
            buffer((0..16 * 8).collect::<Vec<u32>>()),
            scalar(16u32),
        ],
    );
    let shape = Case::new(
        "group_shape",
        InterpLaunch::new([8, 4, 4], [4, 2, 2]),
        vec![buffer(vec![0u32; 8 * 4 * 4 * 2])],
    );
    on_test_kernel("work_group_size", vec![sums, tiles, shape]);
}

/// Unroll requests change how a loop is compiled, never what it computes.
#[test]
fn unroll() {
    let mut random = Random::new(42);
    let n = 128usize;
    let count = 7usize;
    let full = Case::new(
        "full",
        InterpLaunch::covering(n as u32, 64),
        vec![
            buffer(vec![0.0f32; n]),
            buffer(random.f32s(n + 16, -1.0, 1.0)),
            buffer(random.f32s(16, -1.0, 1.0)),
        ],
    )
    // Devices may contract into fused multiply-adds.
    .compare(0, Compare::Close(1e-5));
    let partial = Case::new(
        "partial",
        InterpLaunch::covering(n as u32, 64),
        vec![
            buffer(vec![0.0f32; n]),
            buffer(random.f32s(n * count, -1.0, 1.0)),
            scalar(count as u32),
        ],
    )
    .compare(0, Compare::Close(1e-5));
    let rolled = Case::new(
        "rolled",
        InterpLaunch::covering(n as u32, 64),
        vec![
            buffer(vec![0u32; n]),
            buffer((0..n as u32).map(|i| i.wrapping_mul(2654435761)).collect()),
        ],
    );
    on_test_kernel("unroll", vec![full, partial, rolled]);
}

#[test]
fn vectors() {
    let mut random = Random::new(53);
    let n = 128usize;
    let x = random.f32s(n * 4, -4.0, 4.0);
    let k: Vec<i32> = (0..n * 4)
        .map(|_| (random.next_u64() % 4001) as i32 - 2000)
        .collect();
    let operations = |kernel: &'static str| {
        Case::new(
            kernel,
            InterpLaunch::new([n as u32], [32]),
            vec![
                buffer(vec![0.0f32; n * 12]),
                buffer(vec![0i32; n * 8]),
                buffer(x.clone()),
                buffer(k.clone()),
            ],
        )
        // Devices may contract multiply-adds.
        .compare(0, Compare::Close(1e-5))
    };
    let saxpy4 = Case::new(
        "saxpy4",
        InterpLaunch::covering(n as u32, 64),
        vec![
            buffer(random.f32s(n * 4, -1.0, 1.0)),
            buffer(random.f32s(n * 4, -1.0, 1.0)),
            scalar(1.5f32),
            scalar(n as u32),
        ],
    )
    .compare(0, Compare::Close(1e-6));
    on_test_kernel(
        "vectors",
        vec![saxpy4, operations("vector_ops"), operations("scalar_twin")],
    );
}

#[test]
fn shaped_buffers() {
    let mut random = Random::new(61);
    let (rows, cols) = (24u32, 40u32);
    let count = (rows * cols) as usize;
    let scale = |input: Vec<InterpArgument>, shape: [u32; 2]| {
        let mut arguments = shaped(
            vec![0.0f32; (shape[0] * shape[1]) as usize],
            &shape,
            &[u64::from(shape[1]), 1],
        );
        arguments.extend(input);
        arguments.push(scalar(1.5f32));
        Case::new("scale2d", InterpLaunch::new([48, 32], [16, 16]), arguments)
    };
    // Contiguous; the transpose of a 40 x 24 matrix; every third column of a 24 x 64 matrix.
    let contiguous = scale(
        shaped(random.f32s(count, -1.0, 1.0), &[rows, cols], &[40, 1]),
        [rows, cols],
    );
    let transposed = scale(
        shaped(random.f32s(count, -1.0, 1.0), &[rows, cols], &[1, 24]),
        [rows, cols],
    );
    let sliced = scale(
        shaped(random.f32s(24 * 64, -1.0, 1.0), &[rows, 20], &[64, 3]),
        [rows, 20],
    );
    // Rows padded to 20 elements, 17 used.
    let mut row_sums = vec![buffer(vec![0.0f32; 30])];
    row_sums.extend(shaped(random.f32s(30 * 20, -1.0, 1.0), &[30, 17], &[20, 1]));
    let row_sums = Case::new("row_sums", InterpLaunch::new([32], [16]), row_sums)
        .compare(0, Compare::Close(1e-5));
    // `b` stored with its dimensions reversed.
    let ints = |random: &mut Random| -> Vec<i32> {
        (0..120)
            .map(|_| (random.next_u64() % 2001) as i32 - 1000)
            .collect()
    };
    let mut add3d = shaped(vec![0i32; 120], &[4, 5, 6], &[30, 6, 1]);
    add3d.extend(shaped(ints(&mut random), &[4, 5, 6], &[30, 6, 1]));
    add3d.extend(shaped(ints(&mut random), &[4, 5, 6], &[1, 4, 20]));
    let add3d = Case::new("add3d", InterpLaunch::new([8, 8, 4], [4, 4, 2]), add3d);
    let mut layout = vec![buffer(vec![0u64; 7])];
    let bytes: Vec<u8> = (0..121).map(|i| (i * 7 % 251) as u8).collect();
    layout.extend(shaped(bytes, &[3, 4, 5], &[40, 10, 2]));
    let layout = Case::new("layout", InterpLaunch::new([4], [4]), layout);
    // Device functions given a contiguous output and a transposed input.
    let mut traces = shaped(vec![0.0f32; 30], &[6, 5], &[5, 1]);
    traces.extend(shaped(random.f32s(24, -1.0, 1.0), &[4, 6], &[1, 4]));
    let traces =
        Case::new("traces", InterpLaunch::new([8], [8]), traces).compare(0, Compare::Close(1e-6));
    // The stencil on a contiguous input (the unit-stride copy of the body) and on a
    // transposed one (the strided copy).
    let stencil = |input: Vec<InterpArgument>| {
        let mut arguments = shaped(vec![0.0f32; count], &[rows, cols], &[u64::from(cols), 1]);
        arguments.extend(input);
        Case::new("stencil", InterpLaunch::new([48, 32], [16, 16]), arguments)
            .compare(0, Compare::Close(1e-6))
    };
    let stencil_contiguous = stencil(shaped(
        random.f32s(count, -1.0, 1.0),
        &[rows, cols],
        &[u64::from(cols), 1],
    ));
    let stencil_transposed = stencil(shaped(
        random.f32s(count, -1.0, 1.0),
        &[rows, cols],
        &[1, u64::from(rows)],
    ));
    on_test_kernel(
        "shaped_buffers",
        vec![
            contiguous,
            transposed,
            sliced,
            row_sums,
            add3d,
            layout,
            traces,
            stencil_contiguous,
            stencil_transposed,
        ],
    );
}

// ---------------------------------------------------------------------------------------------
// Matrix tiles. The interpreter and the plain lowering add each element's products in `k`
// order in `f32`; tensor cores add in their own order (and, for f32, with their own internal
// rounding), so results agree within 1e-4 relative to max(|d|, 1) for these sizes (inputs in
// [-1, 1], K at most 64: the bound K * 2^-23 * sum |a b| is below that). `matrix_interpreter_*`
// holds the interpreter to an f64 reference of the exact products of the rounded inputs.

fn f16s(random: &mut Random, count: usize) -> Vec<kdsl_interp::f16> {
    random
        .f32s(count, -1.0, 1.0)
        .into_iter()
        .map(kdsl_interp::f16::from_f32)
        .collect()
}

/// D = A x B + C in f64 from `f64` copies of the (already rounded) inputs.
fn reference_mma(a: &[f64], b: &[f64], c: &[f64], m: usize, n: usize, k: usize) -> Vec<f64> {
    let mut d = c.to_vec();
    for row in 0..m {
        for column in 0..n {
            for depth in 0..k {
                d[row * n + column] += a[row * k + depth] * b[depth * n + column];
            }
        }
    }
    d
}

/// Work-groups of 64 hold one whole sub-group on every device (32 wide on NVIDIA and RDNA, 64
/// on CDNA), which matrix units need; the kernels compute with sub-group 0.
fn matrix_global_case(seed: u64, m: usize, n: usize, k: usize) -> Case {
    let mut random = Random::new(seed);
    Case::new(
        "mma_global",
        InterpLaunch::new([64 * n as u32 / 16, m as u32 / 16], [64, 1]),
        vec![
            buffer(vec![0.0f32; m * n]),
            buffer(f16s(&mut random, m * k)),
            buffer(f16s(&mut random, k * n)),
            buffer(random.f32s(m * n, -1.0, 1.0)),
            scalar(n as u32),
            scalar(k as u32),
        ],
    )
    .compare(0, Compare::Close(1e-4))
}

#[test]
fn matrix_tiles() {
    let (m, n, k) = (64usize, 64usize, 32usize);
    let mut random = Random::new(91);
    let local = Case::new(
        "mma_local",
        InterpLaunch::new([64 * n as u32 / 32, m as u32 / 32], [64, 1]),
        vec![
            buffer(vec![0.0f32; m * n]),
            buffer(f16s(&mut random, m * k)),
            buffer(f16s(&mut random, k * n)),
            scalar(n as u32),
            scalar(k as u32),
            scalar(0.5f32),
        ],
    )
    .compare(0, Compare::Close(1e-4));
    differential(
        "tests/kernels/matrix.krn",
        || test_kernel_bundle("matrix"),
        examples_required(),
        vec![matrix_global_case(90, 32, 48, 64), local],
    );
}

#[test]
fn matrix_interpreter_is_exact_products_summed_in_f32() {
    let (m, n, k) = (32usize, 48usize, 64usize);
    let module = compile_file("tests/kernels/matrix.krn");
    let case = matrix_global_case(90, m, n, k);
    let mut arguments = case.arguments.clone();
    run_kernel(&module, "mma_global", &case.launch, &mut arguments).expect("interpreter");
    let floats = |index: usize| as_f64s(&case.arguments[index]).expect("a float buffer");
    let want = reference_mma(&floats(1), &floats(2), &floats(3), m, n, k);
    let got = as_f64s(&arguments[0]).unwrap();
    for (index, (want, got)) in want.iter().zip(&got).enumerate() {
        // f16 products are exact in f32; only the 64 f32 additions round.
        assert!(
            (want - got).abs() <= 64.0 * f64::from(f32::EPSILON) * want.abs().max(1.0) * 8.0,
            "element {index}: {want} against {got}"
        );
    }
}

fn tf32_case(seed: u64, m: usize, n: usize, k: usize) -> Case {
    let mut random = Random::new(seed);
    Case::new(
        "mma_tf32",
        InterpLaunch::new([64 * n as u32 / 16, m as u32 / 16], [64, 1]),
        vec![
            buffer(vec![0.0f32; m * n]),
            buffer(random.f32s(m * k, -1.0, 1.0)),
            buffer(random.f32s(k * n, -1.0, 1.0)),
            buffer(random.f32s(m * n, -1.0, 1.0)),
            scalar(n as u32),
            scalar(k as u32),
        ],
    )
    .compare(0, Compare::Close(1e-4))
}

#[test]
fn matrix_tf32() {
    // Ties (the dropped 13 bits exactly 0x1000) round away from zero, the largest values to
    // infinity; infinities stay (NaNs too, but an exact comparison cannot hold NaNs equal).
    let mut inputs: Vec<f32> = [
        0x3f80_1000u32,
        0xbf80_1000,
        0x3f80_0fff,
        0x3f80_3000,
        0x7f7f_f000,
        0x7f80_0000,
        0xff80_0000,
    ]
    .into_iter()
    .map(f32::from_bits)
    .collect();
    inputs.extend(Random::new(93).f32s(57, -1e3, 1e3));
    let rounding = Case::new(
        "round_to_tf32",
        InterpLaunch::covering(inputs.len() as u32, 64),
        vec![buffer(vec![0.0f32; inputs.len()]), buffer(inputs)],
    )
    .compare(0, Compare::Exact);
    differential(
        "tests/kernels/matrix_tf32.krn",
        || test_kernel_bundle("matrix_tf32"),
        examples_required(),
        vec![tf32_case(92, 32, 32, 24), rounding],
    );
}

#[test]
fn matrix_interpreter_rounds_tf32_inputs() {
    let (m, n, k) = (32usize, 32usize, 24usize);
    let module = compile_file("tests/kernels/matrix_tf32.krn");
    let case = tf32_case(92, m, n, k);
    let mut arguments = case.arguments.clone();
    run_kernel(&module, "mma_tf32", &case.launch, &mut arguments).expect("interpreter");
    let rounded = |index: usize| -> Vec<f64> {
        as_f64s(&case.arguments[index])
            .unwrap()
            .into_iter()
            .map(|x| {
                f64::from(f32::from_bits(kdsl_ir::scalar::round_tf32(
                    (x as f32).to_bits(),
                )))
            })
            .collect()
    };
    let c = as_f64s(&case.arguments[3]).unwrap();
    let want = reference_mma(&rounded(1), &rounded(2), &c, m, n, k);
    let got = as_f64s(&arguments[0]).unwrap();
    for (index, (want, got)) in want.iter().zip(&got).enumerate() {
        assert!(
            (want - got).abs() <= 24.0 * f64::from(f32::EPSILON) * want.abs().max(1.0) * 8.0,
            "element {index}: {want} against {got}"
        );
    }
    // Unrounded inputs would differ far more than that somewhere.
    let plain = reference_mma(
        &as_f64s(&case.arguments[1]).unwrap(),
        &as_f64s(&case.arguments[2]).unwrap(),
        &c,
        m,
        n,
        k,
    );
    assert!(plain.iter().zip(&got).any(|(p, g)| (p - g).abs() > 1e-4));
}

// Integer tiles are exact everywhere: the device must match the interpreter bit for bit, and
// the interpreter an exact `i64` reference of the products summed (wrapped to `i32`).

/// `count` values of every 8-bit pattern the generator gives, as `T` (`i8` or `u8`).
fn bytes<T>(random: &mut Random, count: usize, convert: fn(u8) -> T) -> Vec<T> {
    (0..count)
        .map(|_| convert(random.next_u64() as u8))
        .collect()
}

/// `mma_i8` or `mma_u8`: D = A x B + C, with C near the `i32` limits so some sums wrap.
fn integer_case<T: kdsl_interp::HostElement>(
    kernel: &'static str,
    convert: fn(u8) -> T,
    seed: u64,
    (m, n, k): (usize, usize, usize),
) -> Case {
    let mut random = Random::new(seed);
    let a = bytes(&mut random, m * k, convert);
    let b = bytes(&mut random, k * n, convert);
    let c: Vec<i32> = (0..m * n)
        .map(|index| match index % 4 {
            0 => i32::MAX - random.i64_in(0, 1000) as i32,
            1 => i32::MIN + random.i64_in(0, 1000) as i32,
            _ => random.i64_in(-100_000, 100_000) as i32,
        })
        .collect();
    Case::new(
        kernel,
        InterpLaunch::new([64 * n as u32 / 16, m as u32 / 16], [64, 1]),
        vec![
            buffer(vec![0i32; m * n]),
            buffer(a),
            buffer(b),
            buffer(c),
            scalar(n as u32),
            scalar(k as u32),
        ],
    )
    .compare(0, Compare::Exact)
}

fn i8_case(seed: u64) -> Case {
    integer_case("mma_i8", |byte| byte as i8, seed, (32, 48, 64))
}

fn u8_case(seed: u64) -> Case {
    integer_case("mma_u8", |byte| byte, seed, (32, 32, 48))
}

#[test]
fn matrix_i8() {
    let (m, n, k) = (32usize, 32usize, 48usize);
    let mut random = Random::new(96);
    let bias = Case::new(
        "mma_i8_bias",
        InterpLaunch::new([64 * n as u32 / 16, m as u32 / 16], [64, 1]),
        vec![
            buffer(vec![0i32; m * n]),
            buffer(bytes(&mut random, m * k, |byte| byte as i8)),
            buffer(bytes(&mut random, k * n, |byte| byte as i8)),
            scalar(n as u32),
            scalar(k as u32),
            scalar(-12_345i32),
        ],
    )
    .compare(0, Compare::Exact);
    differential(
        "tests/kernels/matrix_i8.krn",
        || test_kernel_bundle("matrix_i8"),
        examples_required(),
        vec![i8_case(95), bias],
    );
}

#[test]
fn matrix_u8() {
    differential(
        "tests/kernels/matrix_u8.krn",
        || test_kernel_bundle("matrix_u8"),
        examples_required(),
        vec![u8_case(97)],
    );
}

/// D = A x B + C exactly, in `i64`.
fn reference_integer_mma(
    a: &[i64],
    b: &[i64],
    c: &[i32],
    (m, n, k): (usize, usize, usize),
) -> Vec<i64> {
    let mut d: Vec<i64> = c.iter().map(|&x| x.into()).collect();
    for row in 0..m {
        for column in 0..n {
            for depth in 0..k {
                d[row * n + column] += a[row * k + depth] * b[depth * n + column];
            }
        }
    }
    d
}

#[test]
fn matrix_interpreter_is_exact_on_integer_tiles() {
    for (file, kernel, case, shape) in [
        ("matrix_i8", "mma_i8", i8_case(95), (32, 48, 64)),
        ("matrix_u8", "mma_u8", u8_case(97), (32, 32, 48)),
    ] {
        let module = compile_file(&format!("tests/kernels/{file}.krn"));
        let mut arguments = case.arguments.clone();
        run_kernel(&module, kernel, &case.launch, &mut arguments).expect("interpreter");
        let widen = |index: usize| -> Vec<i64> {
            match &case.arguments[index] {
                InterpArgument::Buffer(HostBuffer::I8(v)) => v.iter().map(|&x| x.into()).collect(),
                InterpArgument::Buffer(HostBuffer::U8(v)) => v.iter().map(|&x| x.into()).collect(),
                other => panic!("not a byte buffer: {other:?}"),
            }
        };
        let InterpArgument::Buffer(HostBuffer::I32(c)) = &case.arguments[3] else {
            panic!("C is an i32 buffer");
        };
        let exact = reference_integer_mma(&widen(1), &widen(2), c, shape);
        // The sums wrap to i32 (two's complement), as `wrapping_add` does.
        let want: Vec<i32> = exact.iter().map(|&x| x as i32).collect();
        let InterpArgument::Buffer(HostBuffer::I32(got)) = &arguments[0] else {
            panic!("D is an i32 buffer");
        };
        assert_eq!(&want, got, "{kernel}");
        // C near the limits makes some sums leave the i32 range, so wrapping is tested.
        let outside = |x: &&i64| i32::try_from(**x).is_err();
        assert!(exact.iter().filter(outside).count() > 10, "{kernel}");
    }
}

#[test]
fn gemm_on_matrix_units() {
    let (m, n, k) = (128usize, 256usize, 64usize);
    let mut random = Random::new(94);
    let half = Case::new(
        "hgemm",
        InterpLaunch::new([256 * n as u32 / 128, m as u32 / 128], [256, 1]),
        vec![
            buffer(vec![0.0f32; m * n]),
            buffer(f16s(&mut random, m * k)),
            buffer(f16s(&mut random, k * n)),
            scalar(m as u32),
            scalar(n as u32),
            scalar(k as u32),
        ],
    )
    .compare(0, Compare::Close(1e-4));
    on_example("hgemm", vec![half]);
    let tf32 = Case::new(
        "sgemm_tf32",
        InterpLaunch::new([256 * n as u32 / 128, m as u32 / 128], [256, 1]),
        vec![
            buffer(vec![0.0f32; m * n]),
            buffer(random.f32s(m * k, -1.0, 1.0)),
            buffer(random.f32s(k * n, -1.0, 1.0)),
            scalar(m as u32),
            scalar(n as u32),
            scalar(k as u32),
        ],
    )
    .compare(0, Compare::Close(1e-4));
    on_example("sgemm_tf32", vec![tf32]);
}

#[test]
fn matrix_ring_in_launch_sized_memory() {
    // Four steps of 32: the ring of three buffers wraps around.
    let (m, n, k) = (128usize, 128usize, 128usize);
    let mut random = Random::new(97);
    let mut case = Case::new(
        "hgemm_ring",
        InterpLaunch::new([128 * n as u32 / 128, m as u32 / 128], [128, 1]),
        vec![
            buffer(vec![0.0f32; m * n]),
            buffer(f16s(&mut random, m * k)),
            buffer(f16s(&mut random, k * n)),
            scalar(m as u32),
            scalar(n as u32),
            scalar(k as u32),
            // Three buffers of A (128 x 40) and B (32 x 136).
            InterpArgument::local(ScalarType::F16, 3 * (128 * 40 + 32 * 136)),
        ],
    )
    .compare(0, Compare::Close(1e-4));
    case.check = Some(ring_product_check);
    on_test_kernel("matrix_ring", vec![case]);
}

/// The interpreter's `hgemm_ring` against the product itself: a ring read out of turn would
/// agree with every device that copies at once.
fn ring_product_check(reference: &[InterpArgument], _: &[InterpArgument]) -> CaseResult {
    let size = |index: usize| match reference[index] {
        InterpArgument::Scalar(ScalarValue::U32(value)) => value as usize,
        _ => 0,
    };
    let (m, n, k) = (size(3), size(4), size(5));
    let floats = |index: usize| as_f64s(&reference[index]).unwrap_or_default();
    let want = reference_mma(&floats(1), &floats(2), &vec![0.0; m * n], m, n, k);
    let got = floats(0);
    if want.len() != got.len() || want.is_empty() {
        return Err(format!("{} results, {} expected", got.len(), want.len()));
    }
    match want
        .iter()
        .zip(&got)
        .position(|(want, got)| (want - got).abs() > 1e-5 * want.abs().max(1.0))
    {
        Some(index) => Err(format!(
            "element {index} of the interpreter's product: {} against {}",
            got[index], want[index]
        )),
        None => Ok(()),
    }
}

/// The launches of tests/kernels/async_copy.krn: `async_stream` over `groups` work-groups of
/// `blocks` blocks each, and `async_sizes` over `groups` work-groups.
fn async_copy_cases(seed: u64, groups: usize, blocks: usize) -> Vec<Case> {
    let mut random = Random::new(seed);
    let floats = groups * blocks * 256;
    let stream = Case::new(
        "async_stream",
        InterpLaunch::new([64 * groups as u32], [64]),
        vec![
            buffer(vec![0.0f32; floats]),
            buffer(random.f32s(floats, -100.0, 100.0)),
            scalar(blocks as u32),
        ],
    );
    let bytes: Vec<u8> = (0..groups * 1024)
        .map(|_| random.next_u64() as u8)
        .collect();
    let sizes = Case::new(
        "async_sizes",
        InterpLaunch::new([64 * groups as u32], [64]),
        vec![
            buffer(vec![0u8; groups * 1024]),
            buffer(vec![kdsl_interp::f16::from_f32(0.0); groups * 512]),
            buffer(vec![0.0f32; groups * 128]),
            buffer(vec![0i32; groups * 64]),
            buffer(bytes),
            buffer(f16s(&mut random, groups * 512)),
            buffer(random.f32s(groups * 128, -1e6, 1e6)),
            buffer(
                (0..groups * 64)
                    .map(|_| random.next_u64() as i32)
                    .collect::<Vec<i32>>(),
            ),
            InterpArgument::local(ScalarType::F16, 512),
        ],
    );
    vec![stream, sizes]
}

#[test]
fn async_copies() {
    on_test_kernel("async_copy", async_copy_cases(95, 3, 5));
}

#[test]
fn async_copies_on_the_interpreter_match_the_host() {
    let module = compile_file("tests/kernels/async_copy.krn");
    let (groups, blocks) = (2usize, 3usize);
    let cases = async_copy_cases(96, groups, blocks);
    let [stream, sizes] = <[Case; 2]>::try_from(cases).ok().expect("two cases");
    let mut arguments = stream.arguments.clone();
    run_kernel(&module, "async_stream", &stream.launch, &mut arguments).expect("interpreter");
    let input = as_f64s(&stream.arguments[1]).unwrap();
    let output = as_f64s(&arguments[0]).unwrap();
    for block in 0..groups * blocks {
        for e in 0..256 {
            let want = 2.0 * input[block * 256 + 255 - e];
            assert_eq!(output[block * 256 + e], want, "block {block}, element {e}");
        }
    }
    let mut arguments = sizes.arguments.clone();
    run_kernel(&module, "async_sizes", &sizes.launch, &mut arguments).expect("interpreter");
    let bytes = |argument: &InterpArgument| match argument {
        InterpArgument::Buffer(HostBuffer::U8(values)) => values.clone(),
        _ => panic!("a u8 buffer"),
    };
    let (input, output) = (bytes(&sizes.arguments[4]), bytes(&arguments[0]));
    for (i, o) in input.chunks(1024).zip(output.chunks(1024)) {
        assert!(i.iter().rev().eq(o.iter()));
    }
    let halves = |argument: &InterpArgument| match argument {
        InterpArgument::Buffer(HostBuffer::F16(values)) => values.clone(),
        _ => panic!("an f16 buffer"),
    };
    let (input, output) = (halves(&sizes.arguments[5]), halves(&arguments[1]));
    for (i, o) in input.chunks(512).zip(output.chunks(512)) {
        assert!(i.iter().rev().eq(o.iter()));
    }
    let pairs_in = as_f64s(&sizes.arguments[6]).unwrap();
    let pairs_out = as_f64s(&arguments[2]).unwrap();
    for group in 0..groups {
        for lid in 0..64 {
            let at = group * 128;
            assert_eq!(pairs_out[at + lid], pairs_in[at + 127 - lid]);
            assert_eq!(pairs_out[at + 64 + lid], pairs_in[at + 63 - lid]);
        }
    }
    let ints = |argument: &InterpArgument| match argument {
        InterpArgument::Buffer(HostBuffer::I32(values)) => values.clone(),
        _ => panic!("an i32 buffer"),
    };
    let (input, output) = (ints(&sizes.arguments[7]), ints(&arguments[3]));
    for (i, o) in input.chunks(64).zip(output.chunks(64)) {
        assert!(i.iter().rev().eq(o.iter()));
    }
}

/// The bytes of `Node { start: i32, edges: i32 }` records (C layout: 8 bytes).
fn node_bytes(nodes: &[(i32, i32)]) -> Vec<u8> {
    nodes
        .iter()
        .flat_map(|&(start, edges)| [start.to_le_bytes(), edges.to_le_bytes()].concat())
        .collect()
}

/// The bytes of `Particle { tag: u8, mass: f64, charge: i16, flag: bool, speed: f32 }` records
/// (C layout: offsets 0, 8, 16, 18, 20; 24 bytes), padding filled with a marker the kernels
/// must leave alone.
fn particle_bytes(random: &mut Random, count: usize) -> Vec<u8> {
    let mut bytes = vec![0xa5u8; count * 24];
    for record in bytes.chunks_exact_mut(24) {
        record[0] = (random.next_u64() % 200) as u8;
        let mass = f64::from(random.f32s(1, 0.0, 100.0)[0]);
        record[8..16].copy_from_slice(&mass.to_le_bytes());
        let charge = (random.next_u64() % 2001) as i16 - 1000;
        record[16..18].copy_from_slice(&charge.to_le_bytes());
        record[18] = (random.next_u64() % 2) as u8;
        let speed = random.f32s(1, -10.0, 10.0)[0];
        record[20..24].copy_from_slice(&speed.to_le_bytes());
    }
    bytes
}

#[test]
fn records() {
    let mut random = Random::new(71);
    let n = 100usize;
    let nodes: Vec<(i32, i32)> = (0..n)
        .map(|_| {
            let start = (random.next_u64() % 1000) as i32;
            (start, start + (random.next_u64() % 50) as i32)
        })
        .collect();
    let nodes = node_bytes(&nodes);
    let launch = InterpLaunch::covering(n as u32, 32);
    let node_case = |kernel: &'static str| {
        Case::new(
            kernel,
            launch,
            vec![
                buffer(nodes.clone()),
                buffer(vec![0x5au8; n * 8]),
                scalar(n as u32),
            ],
        )
    };
    let degrees = Case::new(
        "node_degrees",
        launch,
        vec![
            buffer(nodes.clone()),
            buffer(vec![0i32; n]),
            scalar(n as u32),
        ],
    );
    let particles = Case::new(
        "particles",
        launch,
        vec![
            buffer(particle_bytes(&mut random, n)),
            buffer(vec![0xa5u8; n * 24]),
            buffer(vec![0.0f64; n]),
            scalar(n as u32),
        ],
    );
    let count_edges = Case::new(
        "count_edges",
        launch,
        vec![
            buffer(nodes.clone()),
            buffer(vec![0u8; 4 * 8]),
            scalar(n as u32),
        ],
    );
    on_test_kernel(
        "records",
        vec![
            degrees,
            node_case("swap_fields"),
            node_case("copy_reversed"),
            particles,
            count_edges,
        ],
    );
}

/// One level of examples/bfs.krn from a frontier of a random graph: the visit (a buffer of
/// `Node` records) and the advance.
#[test]
fn bfs() {
    let mut random = Random::new(29);
    let n = 500usize;
    let mut nodes = Vec::with_capacity(n);
    let mut edges: Vec<i32> = Vec::new();
    for _ in 0..n {
        let count = (random.next_u64() % 5) as i32;
        nodes.push((edges.len() as i32, count));
        for _ in 0..count {
            edges.push((random.next_u64() % n as u64) as i32);
        }
    }
    let mask: Vec<u8> = (0..n).map(|i| u8::from(i % 7 == 0)).collect();
    let visited: Vec<u8> = (0..n).map(|i| u8::from(i % 7 == 0 || i % 5 == 0)).collect();
    let cost: Vec<i32> = (0..n).map(|i| if i % 7 == 0 { 3 } else { -1 }).collect();
    let launch = InterpLaunch::covering(n as u32, 64);
    let visit = Case::new(
        "visit_frontier",
        launch,
        vec![
            buffer(node_bytes(&nodes)),
            buffer(edges),
            buffer(mask.clone()),
            buffer(vec![0u8; n]),
            buffer(visited.clone()),
            buffer(cost),
            scalar(n as u32),
        ],
    );
    let next: Vec<u8> = (0..n).map(|i| u8::from(i % 3 == 0)).collect();
    let advance = Case::new(
        "advance_frontier",
        launch,
        vec![
            buffer(mask),
            buffer(next),
            buffer(visited),
            buffer(vec![0u32]),
            scalar(n as u32),
        ],
    );
    on_example("bfs", vec![visit, advance]);
}

/// The buffer a printing kernel writes; the printed text itself is compared by the device
/// suite (`print_reaches_stdout`, in a child process) and the interpreter's semantics tests.
#[test]
fn print() {
    let case = Case::new(
        "print_values",
        InterpLaunch::new([4], [4]),
        vec![buffer(vec![0.0f32; 4]), scalar(0.5f32)],
    );
    on_test_kernel("print", vec![case]);
}

#[test]
fn local_parameters() {
    on_test_kernel("local_parameters", local_parameter_cases());
}

/// The same kernels from a SYCLBIN: on SYCL devices each launch-sized array must stay one
/// argument (SPIR-V) or one offset (PTX), so the scalars after it keep their places.
#[test]
fn local_parameters_from_syclbin() {
    differential(
        "tests/kernels/local_parameters.krn",
        || test_kernel_syclbin("local_parameters"),
        false,
        local_parameter_cases(),
    );
}

fn local_parameter_cases() -> Vec<Case> {
    let mut random = Random::new(61);
    let group = 64u32;
    let n = 1000u32;
    let groups = n.div_ceil(group);
    let local_sum = Case::new(
        "local_sum",
        InterpLaunch::covering(n, group),
        vec![
            buffer(vec![0.0f32; groups as usize]),
            buffer(random.f32s(n as usize, -1.0, 1.0)),
            InterpArgument::local(ScalarType::F32, u64::from(group)),
            scalar(n),
        ],
    )
    // Devices may add in another order.
    .compare(0, Compare::Close(1e-5));
    let count = 256u32;
    let local_mixed = Case::new(
        "local_mixed",
        InterpLaunch::new([count], [32]),
        vec![
            buffer(vec![0.0f64; count as usize]),
            buffer((0..count as i32).map(|i| i * 7 - 300).collect::<Vec<i32>>()),
            InterpArgument::local(ScalarType::I32, 32),
            InterpArgument::local(ScalarType::F64, 32),
        ],
    );
    let bin_count = 100u32;
    let items = 4096u32;
    let data: Vec<u32> = (0..items).map(|_| random.next_u64() as u32).collect();
    let local_histogram = Case::new(
        "local_histogram",
        InterpLaunch::new([items], [128]),
        vec![
            buffer(vec![0u32; bin_count as usize]),
            buffer(data),
            InterpArgument::local(ScalarType::U32, u64::from(bin_count)),
            scalar(bin_count),
            scalar(items),
        ],
    );
    vec![local_sum, local_mixed, local_histogram]
}
