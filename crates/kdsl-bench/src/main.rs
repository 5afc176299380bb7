//! kdsl against nvcc on a CUDA device, in one run.
//!
//! For each benchmark kernel the kdsl bundle's PTX and the PTX that `nvcc -O3 -arch=sm_90 -ptx`
//! made from `reference/kernels.cu` (the same algorithm) are loaded through the same kdsl
//! runtime, launched with the same inputs and shape, checked against a host reference, and
//! timed with device events: the median of the timed runs after warm-up is reported, with the
//! ratio kdsl / nvcc.
//!
//! With `--versus FILTER` the same kdsl bundle is run on two devices in one process instead (the
//! SYCL CUDA device against the direct CUDA backend on the same GPU: `--device sycl_cuda:gpu
//! --versus cuda:0`), and the ratio is the first device's time over the second's.
//!
//! Usage: kdsl-bench-cuda BUNDLE_DIR REFERENCE_PTX [--device FILTER] [--versus FILTER] [--runs N] [--json OUT]

use kdsl_bundle::{Bundle, Image, KernelInfo, TargetKind};
use kdsl_runtime::{args, Device, Kernel, Launch, RuntimeError, ShapedArgument};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

struct Options {
    bundle_dir: PathBuf,
    reference_ptx: PathBuf,
    device: String,
    versus: Option<String>,
    runs: usize,
    warmup: usize,
    json: Option<PathBuf>,
}

fn parse_options() -> Result<Options, String> {
    let mut positional = Vec::new();
    let mut options = Options {
        bundle_dir: PathBuf::new(),
        reference_ptx: PathBuf::new(),
        device: "cuda".to_string(),
        versus: None,
        runs: 30,
        warmup: 5,
        json: None,
    };
    let mut arguments = std::env::args().skip(1);
    while let Some(argument) = arguments.next() {
        let mut value = |flag: &str| arguments.next().ok_or(format!("{flag} needs a value"));
        match argument.as_str() {
            "--device" => options.device = value("--device")?,
            "--versus" => options.versus = Some(value("--versus")?),
            "--runs" => {
                options.runs = value("--runs")?
                    .parse()
                    .map_err(|e| format!("--runs: {e}"))?
            }
            "--warmup" => {
                options.warmup = value("--warmup")?
                    .parse()
                    .map_err(|e| format!("--warmup: {e}"))?
            }
            "--json" => options.json = Some(PathBuf::from(value("--json")?)),
            _ => positional.push(argument),
        }
    }
    let [bundle_dir, reference_ptx] = <[String; 2]>::try_from(positional).map_err(|_| {
        "usage: kdsl-bench-cuda BUNDLE_DIR REFERENCE_PTX [--device FILTER] [--versus FILTER] [--runs N] [--json OUT]"
    })?;
    options.bundle_dir = bundle_dir.into();
    options.reference_ptx = reference_ptx.into();
    Ok(options)
}

/// A small deterministic generator, so both sides and every run see the same inputs.
struct Random(u64);

impl Random {
    fn next_f32(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }

    fn vector(&mut self, len: usize) -> Vec<f32> {
        (0..len).map(|_| self.next_f32()).collect()
    }
}

struct Timing {
    median_ns: u64,
}

fn time_launches(
    kernel: &Kernel,
    launch: &Launch,
    arguments: &[kdsl_runtime::Argument<'_>],
    options: &Options,
) -> Result<Timing, RuntimeError> {
    for _ in 0..options.warmup {
        kernel.launch(launch, arguments)?.wait()?;
    }
    let mut times = Vec::with_capacity(options.runs);
    for _ in 0..options.runs {
        times.push(kernel.launch(launch, arguments)?.elapsed_ns()?);
    }
    times.sort_unstable();
    Ok(Timing {
        median_ns: times[times.len() / 2],
    })
}

fn close(found: &[f32], expected: &[f64], relative: f64) -> Result<(), String> {
    for (index, (&f, &e)) in found.iter().zip(expected).enumerate() {
        if (f64::from(f) - e).abs() > relative * e.abs().max(1.0) {
            return Err(format!("element {index}: found {f}, expected {e}"));
        }
    }
    Ok(())
}

type CaseResult = Result<Timing, String>;

fn saxpy(device: &Device, kernel: &Kernel, options: &Options) -> CaseResult {
    let n = 1usize << 26;
    let mut random = Random(0x5eed_0001);
    let x = random.vector(n);
    let y = random.vector(n);
    let a = 2.5f32;
    let x_buffer = device.buffer_from(&x).map_err(|e| e.to_string())?;
    let mut y_buffer = device.buffer_from(&y).map_err(|e| e.to_string())?;
    let launch = Launch::covering(n, 256);
    kernel
        .launch(&launch, &args![&mut y_buffer, &x_buffer, a, n as u32])
        .and_then(|event| event.wait())
        .map_err(|e| e.to_string())?;
    let expected: Vec<f64> = x
        .iter()
        .zip(&y)
        .map(|(&x, &y)| f64::from(a * x + y))
        .collect();
    close(
        &y_buffer.read_to_vec().map_err(|e| e.to_string())?,
        &expected,
        1e-6,
    )?;
    time_launches(
        kernel,
        &launch,
        &args![&mut y_buffer, &x_buffer, a, n as u32],
        options,
    )
    .map_err(|e| e.to_string())
}

fn reduction(device: &Device, kernel: &Kernel, options: &Options) -> CaseResult {
    let n = 1usize << 26;
    let groups = n / 256;
    let input = Random(0x5eed_0002).vector(n);
    let input_buffer = device.buffer_from(&input).map_err(|e| e.to_string())?;
    let mut partial_buffer = device.alloc::<f32>(groups).map_err(|e| e.to_string())?;
    let launch = Launch::covering(n, 256);
    let timing = time_launches(
        kernel,
        &launch,
        &args![&mut partial_buffer, &input_buffer, n as u32],
        options,
    )
    .map_err(|e| e.to_string())?;
    let expected: Vec<f64> = input
        .chunks(256)
        .map(|chunk| chunk.iter().map(|&v| f64::from(v)).sum())
        .collect();
    close(
        &partial_buffer.read_to_vec().map_err(|e| e.to_string())?,
        &expected,
        1e-4,
    )?;
    Ok(timing)
}

/// The tiled matmul of `examples/matmul.krn`, on 2-D arrays.
fn matmul(device: &Device, kernel: &Kernel, options: &Options) -> CaseResult {
    square_product(device, kernel, options, [16, 16], 1, true)
}

/// The register-blocked SGEMM: each 16 x 16 work-group computes a 64 x 64 block of C; flat
/// buffers and the sizes.
fn sgemm(device: &Device, kernel: &Kernel, options: &Options) -> CaseResult {
    square_product(device, kernel, options, [16, 16], 4, false)
}

/// C = A B for 4096 x 4096 matrices, with work-groups of `local` work-items each computing
/// `per_item` x `per_item` elements; the matrices passed as 2-D arrays when `shaped`, else as
/// flat buffers followed by m, n and k.
fn square_product(
    device: &Device,
    kernel: &Kernel,
    options: &Options,
    local: [usize; 2],
    per_item: usize,
    shaped: bool,
) -> CaseResult {
    let size = 4096usize;
    let mut random = Random(0x5eed_0003);
    let a = random.vector(size * size);
    let b = random.vector(size * size);
    let a_buffer = device.buffer_from(&a).map_err(|e| e.to_string())?;
    let b_buffer = device.buffer_from(&b).map_err(|e| e.to_string())?;
    let mut c_buffer = device
        .alloc::<f32>(size * size)
        .map_err(|e| e.to_string())?;
    let launch = Launch::new([size / per_item, size / per_item], local);
    let s = size as u32;
    let timing = if shaped {
        let arguments = [
            ShapedArgument::contiguous(&mut c_buffer, &[s, s]).arguments(),
            ShapedArgument::contiguous(&a_buffer, &[s, s]).arguments(),
            ShapedArgument::contiguous(&b_buffer, &[s, s]).arguments(),
        ]
        .concat();
        time_launches(kernel, &launch, &arguments, options)
    } else {
        let arguments = args![&mut c_buffer, &a_buffer, &b_buffer, s, s, s];
        time_launches(kernel, &launch, &arguments, options)
    }
    .map_err(|e| e.to_string())?;
    // Check a sample of rows: the full product on the host would take minutes.
    let c = c_buffer.read_to_vec().map_err(|e| e.to_string())?;
    for row in (0..size).step_by(509) {
        let expected: Vec<f64> = (0..size)
            .map(|column| {
                (0..size)
                    .map(|i| f64::from(a[row * size + i]) * f64::from(b[i * size + column]))
                    .sum()
            })
            .collect();
        close(&c[row * size..(row + 1) * size], &expected, 1e-4)
            .map_err(|e| format!("row {row}: {e}"))?;
    }
    Ok(timing)
}

fn transpose(device: &Device, kernel: &Kernel, options: &Options) -> CaseResult {
    let (width, height) = (8192usize, 8192usize);
    let input = Random(0x5eed_0004).vector(width * height);
    let input_buffer = device.buffer_from(&input).map_err(|e| e.to_string())?;
    let mut output_buffer = device
        .alloc::<f32>(width * height)
        .map_err(|e| e.to_string())?;
    let launch = Launch::new([width, height], [16, 16]);
    let arguments = [
        ShapedArgument::contiguous(&mut output_buffer, &[width as u32, height as u32]).arguments(),
        ShapedArgument::contiguous(&input_buffer, &[height as u32, width as u32]).arguments(),
    ]
    .concat();
    let timing = time_launches(kernel, &launch, &arguments, options).map_err(|e| e.to_string())?;
    let output = output_buffer.read_to_vec().map_err(|e| e.to_string())?;
    for (index, &value) in output.iter().enumerate() {
        let (x, y) = (index / height, index % height);
        if value != input[y * width + x] {
            return Err(format!(
                "output[{index}] = {value}, expected {}",
                input[y * width + x]
            ));
        }
    }
    Ok(timing)
}

fn histogram(device: &Device, kernel: &Kernel, options: &Options) -> CaseResult {
    let n = 1usize << 26;
    let mut random = Random(0x5eed_0005);
    let data: Vec<u8> = (0..n).map(|_| (random.next_f32() * 256.0) as u8).collect();
    let data_buffer = device.buffer_from(&data).map_err(|e| e.to_string())?;
    let mut bins_buffer = device
        .buffer_from(&[0u32; 256])
        .map_err(|e| e.to_string())?;
    let launch = Launch::covering(n, 256);
    kernel
        .launch(&launch, &args![&mut bins_buffer, &data_buffer, n as u32])
        .and_then(|event| event.wait())
        .map_err(|e| e.to_string())?;
    let mut expected = [0u32; 256];
    for &byte in &data {
        expected[usize::from(byte)] += 1;
    }
    if bins_buffer.read_to_vec().map_err(|e| e.to_string())? != expected {
        return Err("the bins differ from the host's count".to_string());
    }
    time_launches(
        kernel,
        &launch,
        &args![&mut bins_buffer, &data_buffer, n as u32],
        options,
    )
    .map_err(|e| e.to_string())
}

fn stencil(device: &Device, kernel: &Kernel, options: &Options) -> CaseResult {
    let (width, height) = (8192usize, 8192usize);
    let input = Random(0x5eed_0006).vector(width * height);
    let input_buffer = device.buffer_from(&input).map_err(|e| e.to_string())?;
    let mut output_buffer = device
        .alloc::<f32>(width * height)
        .map_err(|e| e.to_string())?;
    let launch = Launch::new([width, height], [32, 8]);
    let arguments = args![
        &mut output_buffer,
        &input_buffer,
        width as u32,
        height as u32
    ];
    let timing = time_launches(kernel, &launch, &arguments, options).map_err(|e| e.to_string())?;
    let output = output_buffer.read_to_vec().map_err(|e| e.to_string())?;
    for y in (1..height - 1).step_by(97) {
        for x in 1..width - 1 {
            let index = y * width + x;
            let sum = f64::from(input[index])
                + f64::from(input[index - 1])
                + f64::from(input[index + 1])
                + f64::from(input[index - width])
                + f64::from(input[index + width]);
            close(&output[index..=index], &[0.2 * sum], 1e-5)
                .map_err(|e| format!("({x}, {y}): {e}"))?;
        }
    }
    Ok(timing)
}

fn softmax(device: &Device, kernel: &Kernel, options: &Options) -> CaseResult {
    let (rows, columns) = (65536usize, 1024usize);
    let input: Vec<f32> = Random(0x5eed_0007)
        .vector(rows * columns)
        .iter()
        .map(|v| v * 8.0 - 4.0)
        .collect();
    let input_buffer = device.buffer_from(&input).map_err(|e| e.to_string())?;
    let mut output_buffer = device
        .alloc::<f32>(rows * columns)
        .map_err(|e| e.to_string())?;
    let launch = Launch::new([rows * 256], [256]);
    let arguments = args![&mut output_buffer, &input_buffer, columns as u32];
    let timing = time_launches(kernel, &launch, &arguments, options).map_err(|e| e.to_string())?;
    let output = output_buffer.read_to_vec().map_err(|e| e.to_string())?;
    for row in (0..rows).step_by(4099) {
        let values = &input[row * columns..(row + 1) * columns];
        let max = values
            .iter()
            .fold(f64::NEG_INFINITY, |m, &v| m.max(f64::from(v)));
        let sum: f64 = values.iter().map(|&v| (f64::from(v) - max).exp()).sum();
        let expected: Vec<f64> = values
            .iter()
            .map(|&v| (f64::from(v) - max).exp() / sum)
            .collect();
        close(&output[row * columns..(row + 1) * columns], &expected, 1e-5)
            .map_err(|e| format!("row {row}: {e}"))?;
    }
    Ok(timing)
}

type Case = fn(&Device, &Kernel, &Options) -> CaseResult;

const CASES: [(&str, &str, Case); 8] = [
    ("saxpy", "saxpy", saxpy),
    ("reduction", "reduce_sum", reduction),
    ("matmul", "matmul", matmul),
    ("transpose", "transpose", transpose),
    ("histogram", "histogram", histogram),
    ("stencil", "stencil", stencil),
    ("softmax", "softmax", softmax),
    ("sgemm", "sgemm", sgemm),
];

/// The nvcc PTX with kdsl's kernel metadata, whose parameters it takes; nvcc's twins have one
/// entry point each, so no contiguous entry is named.
fn reference_bundle(kdsl: &Bundle, ptx: &[u8]) -> Bundle {
    Bundle {
        source_name: "reference/kernels.cu (nvcc)".to_string(),
        kernels: kdsl
            .kernels
            .iter()
            .map(|kernel| KernelInfo {
                contiguous_entry: None,
                ..kernel.clone()
            })
            .collect(),
        images: vec![Image {
            target: TargetKind::Ptx,
            arch: "sm_90".to_string(),
            bytes: ptx.to_vec(),
            matrix_units: false,
            matrix_groups: false,
            tile_sub_group_size: None,
            tensor_maps: Vec::new(),
        }],
        constants: kdsl.constants.clone(),
        entry_point_prefix: String::new(),
    }
}

/// One side of the comparison: a label, the device it runs on, and the bundle it loads.
struct Side<'a> {
    label: String,
    device: &'a Device,
    bundle: Bundle,
}

fn run(options: &Options) -> Result<String, String> {
    let device = Device::select(&options.device).map_err(|e| e.to_string())?;
    let versus = match &options.versus {
        Some(filter) => Some(Device::select(filter).map_err(|e| e.to_string())?),
        None => None,
    };
    let reference_ptx = std::fs::read(&options.reference_ptx)
        .map_err(|e| format!("{}: {e}", options.reference_ptx.display()))?;
    let (first_label, second_label) = match &versus {
        Some(other) => (device.info().id(), other.info().id()),
        None => ("kdsl".to_string(), "nvcc".to_string()),
    };
    let mut rows = Vec::new();
    let mut report = format!(
        "device: {}\n{}median of {} runs after {} warm-up runs, device-event timing\n{:<12} {:>12} {:>12} {:>10}\n",
        device.info(),
        versus
            .as_ref()
            .map_or(String::new(), |other| format!("versus: {}\n", other.info())),
        options.runs,
        options.warmup,
        "kernel",
        format!("{first_label} ms"),
        format!("{second_label} ms"),
        "ratio"
    );
    for (example, kernel_name, case) in CASES {
        let kdsl_bundle =
            Bundle::read(Path::new(&options.bundle_dir).join(format!("{example}.kbundle")))
                .map_err(|e| e.to_string())?;
        // The kdsl bundle on the device, against the same bundle on the other device or the
        // nvcc PTX on the same device.
        let (second_device, second_bundle) = match &versus {
            Some(other) => (other, kdsl_bundle.clone()),
            None => (&device, reference_bundle(&kdsl_bundle, &reference_ptx)),
        };
        let sides = [
            Side {
                label: first_label.clone(),
                device: &device,
                bundle: kdsl_bundle,
            },
            Side {
                label: second_label.clone(),
                device: second_device,
                bundle: second_bundle,
            },
        ];
        let mut medians = Vec::new();
        for side in &sides {
            let program = side.device.load(&side.bundle).map_err(|e| e.to_string())?;
            let kernel = program.kernel(kernel_name).map_err(|e| e.to_string())?;
            let timing = case(side.device, &kernel, options)
                .map_err(|e| format!("{kernel_name} ({}): {e}", side.label))?;
            medians.push(timing.median_ns);
        }
        let ratio = medians[0] as f64 / medians[1] as f64;
        report += &format!(
            "{:<12} {:>12.4} {:>12.4} {:>10.3}\n",
            kernel_name,
            medians[0] as f64 / 1e6,
            medians[1] as f64 / 1e6,
            ratio
        );
        rows.push(if versus.is_some() {
            format!(
                "{{\"kernel\": \"{kernel_name}\", \"first\": \"{first_label}\", \"second\": \"{second_label}\", \"first_ns\": {}, \"second_ns\": {}, \"ratio\": {ratio:.4}}}",
                medians[0], medians[1]
            )
        } else {
            format!(
                "{{\"kernel\": \"{kernel_name}\", \"kdsl_ns\": {}, \"nvcc_ns\": {}, \"kdsl_over_nvcc\": {ratio:.4}}}",
                medians[0], medians[1]
            )
        });
    }
    if let Some(path) = &options.json {
        let json = format!(
            "{{\"device\": \"{}\", \"runs\": {}, \"results\": [{}]}}\n",
            device.info().to_string().replace('"', "'"),
            options.runs,
            rows.join(", ")
        );
        std::fs::write(path, json).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(report)
}

fn main() -> ExitCode {
    match parse_options().and_then(|options| run(&options)) {
        Ok(report) => {
            print!("{report}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}
