//! The device test suite, written once and run on every available device (or those matching the
//! filter in `KDSL_TEST_DEVICE`). Each test below runs its case on every such device.
//!
//! It needs no LLVM: the hand-made kernels in `tests/data/` are compiled into the binary, and the
//! example kernels come from precompiled bundles in `KDSL_TEST_BUNDLES` (default
//! `<workspace>/target/kdsl-bundles`, made by `scripts/compile-examples.sh`). When that folder
//! is absent the example cases say so and are skipped; when `KDSL_TEST_BUNDLES` is set, a
//! missing kernel is a failure. With no device at all every test fails, unless
//! `KDSL_ALLOW_NO_DEVICE=1`.

use kdsl_runtime::{
    args, Argument, Bundle, Device, DeviceInfo, IntoArgument, Launch, MemoryKind, RuntimeError,
    ShapedArgument,
};
#[path = "suite/checked.rs"]
mod checked;
mod common;
#[path = "suite/local_memory.rs"]
mod local_memory;
#[path = "suite/print.rs"]
mod print;
#[path = "suite/queues.rs"]
mod queues;

use common::handmade_bundle;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::OnceLock;

type CaseResult = Result<(), String>;

fn devices_under_test() -> Vec<DeviceInfo> {
    kdsl_testkit::devices::devices_under_test("the device suite")
}

/// Runs `case` on every device under test; fails listing every device where it failed.
fn on_every_device(name: &str, case: fn(&Device) -> CaseResult) {
    let mut failures = Vec::new();
    for info in devices_under_test() {
        let outcome = Device::open(&info)
            .map_err(|error| format!("opening the device failed: {error}"))
            .and_then(|device| case(&device));
        match outcome {
            Ok(()) => eprintln!("{name}: passed on {info}"),
            Err(why) if why.starts_with("skipped:") => eprintln!("{name}: {why} on {info}"),
            Err(why) => failures.push(format!("{}: {why}", info.id())),
        }
    }
    assert!(
        failures.is_empty(),
        "{name} failed:\n{}",
        failures.join("\n")
    );
}

macro_rules! device_tests {
    ($($case:ident),* $(,)?) => {$(
        #[test]
        fn $case() {
            on_every_device(stringify!($case), cases::$case);
        }
    )*};
}

device_tests! {
    handmade_saxpy,
    dimension_order,
    buffers_and_memory_kinds,
    misuse_is_reported_and_the_queue_stays_usable,
    out_of_memory_is_a_typed_error,
    a_corrupt_image_is_a_backend_error,
    saxpy,
    reduce_sum,
    transpose,
    matmul,
    histogram,
    stencil,
    softmax,
    prefix_sum,
    kmeans,
    vector_saxpy_and_alignment,
    buffers_past_4g_elements,
    axpby_f32,
    axpby_f64,
}

/// `print` output from every device reaches the process's standard output.
#[test]
fn print_reaches_stdout() {
    print::print_reaches_stdout();
}

/// A million printing work-items end, where the device bounds what it prints.
#[test]
fn print_from_many_work_items_arrives_whole() {
    print::print_from_many_work_items_arrives_whole();
}

/// The child process of the `print` tests; does nothing when run by itself.
#[test]
fn print_child() {
    print::child();
}

macro_rules! queue_tests {
    ($($case:ident),* $(,)?) => {$(
        #[test]
        fn $case() {
            on_every_device(stringify!($case), queues::$case);
        }
    )*};
}

queue_tests! {
    asynchronous_transfers,
    buffer_views_as_arguments,
    queues_order_conflicting_work,
    dropping_buffers_with_pending_work,
    borrowed_memory_is_checked,
    foreign_cuda_stream_and_memory,
    flipped_spirv_bits_are_survived,
    absurd_launches_are_refused,
    matrix_group_launches_need_whole_groups,
    syclbin_bundles_run,
    queues_without_profiling,
    adopted_cpp_sycl_queue,
}

macro_rules! checked_tests {
    ($($case:ident),* $(,)?) => {$(
        #[test]
        fn $case() {
            on_every_device(stringify!($case), checked::$case);
        }
    )*};
}

macro_rules! local_memory_tests {
    ($($case:ident),* $(,)?) => {$(
        #[test]
        fn $case() {
            on_every_device(stringify!($case), local_memory::$case);
        }
    )*};
}

local_memory_tests! {
    reduce_sum_sized,
    reduce_sum_sized_from_syclbin,
    local_memory_above_the_limit,
}

checked_tests! {
    checked_write_past_the_end,
    checked_loads_arrays_and_divisions,
    checked_atomics,
    checked_fault_in_a_loop_condition,
    checked_integer_overflow,
    checked_launch_sized_local_array,
}

/// A small deterministic generator (xorshift64*), so that failures reproduce.
struct Random(u64);

impl Random {
    fn new(seed: u64) -> Random {
        Random(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in [-1, 1).
    fn next_f32(&mut self) -> f32 {
        ((self.next_u64() >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }

    fn next_f64(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }

    fn f32s(&mut self, count: usize) -> Vec<f32> {
        (0..count).map(|_| self.next_f32()).collect()
    }
}

/// Compares within a relative tolerance, measured against `scale` (at least 1) where given.
fn check_close<T: Into<f64> + Copy>(
    what: &str,
    got: &[T],
    want: &[f64],
    tolerance: f64,
    scale: Option<&[f64]>,
) -> CaseResult {
    if got.len() != want.len() {
        return Err(format!(
            "{what}: {} values, expected {}",
            got.len(),
            want.len()
        ));
    }
    for (index, (&got, &want)) in got.iter().zip(want).enumerate() {
        let got: f64 = got.into();
        let magnitude = scale.map_or(want.abs(), |s| s[index]).max(1.0);
        let close = (got - want).abs() <= tolerance * magnitude;
        if !close {
            return Err(format!(
                "{what}[{index}] = {got}, expected {want} (relative tolerance {tolerance})"
            ));
        }
    }
    Ok(())
}

fn check_equal<T: PartialEq + std::fmt::Debug>(what: &str, got: &[T], want: &[T]) -> CaseResult {
    if got.len() != want.len() {
        return Err(format!(
            "{what}: {} values, expected {}",
            got.len(),
            want.len()
        ));
    }
    match got.iter().zip(want).position(|(a, b)| a != b) {
        None => Ok(()),
        Some(index) => Err(format!(
            "{what}[{index}] = {:?}, expected {:?}",
            got[index], want[index]
        )),
    }
}

fn fail(error: RuntimeError) -> String {
    error.to_string()
}

// ---------------------------------------------------------------------------------------------
// Bundles.

fn handmade_program(device: &Device) -> Result<kdsl_runtime::Program, String> {
    match device.load(&handmade_bundle()) {
        Err(RuntimeError::NoMatchingImage { .. }) => Err(format!(
            "skipped: the hand-made bundle has only spirv and ptx:sm_90, the device takes {}",
            device.info().target
        )),
        other => other.map_err(fail),
    }
}

fn bundle_folder() -> (PathBuf, bool) {
    kdsl_testkit::devices::bundle_folder()
}

/// Every kernel name in the bundle folder, with its bundle.
fn example_bundles() -> &'static Result<HashMap<String, Bundle>, String> {
    static BUNDLES: OnceLock<Result<HashMap<String, Bundle>, String>> = OnceLock::new();
    BUNDLES.get_or_init(|| {
        let (folder, _) = bundle_folder();
        let entries = std::fs::read_dir(&folder).map_err(|error| {
            format!(
                "cannot read the bundle folder {}: {error}",
                folder.display()
            )
        })?;
        let mut kernels = HashMap::new();
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().and_then(|e| e.to_str()) != Some("kbundle") {
                continue;
            }
            let bundle = Bundle::read(&path).map_err(|error| error.to_string())?;
            for kernel in &bundle.kernels {
                kernels.insert(kernel.name.clone(), bundle.clone());
            }
        }
        Ok(kernels)
    })
}

/// Loads the example bundle holding `kernel` on the device, and returns that kernel.
fn example_kernel(device: &Device, kernel: &str) -> Result<kdsl_runtime::Kernel, String> {
    let (folder, required) = bundle_folder();
    let bundle = match example_bundles() {
        Ok(bundles) => bundles.get(kernel),
        Err(why) if !required => return Err(format!("skipped: {why}")),
        Err(why) => return Err(why.clone()),
    };
    let Some(bundle) = bundle else {
        let why = format!("no bundle in {} has a kernel `{kernel}`", folder.display());
        return Err(if required {
            why
        } else {
            format!("skipped: {why}")
        });
    };
    let program = match device.load(bundle) {
        Err(RuntimeError::NoMatchingImage { bundle_has, .. }) if !required => {
            return Err(format!("skipped: its bundle has only {bundle_has}"))
        }
        other => other.map_err(fail)?,
    };
    program.kernel(kernel).map_err(fail)
}

/// Kernel `name` of `<bundles>/<file>.syclbin` (`kdsl compile --format syclbin`): on SYCL
/// devices it goes through `get_kernel_bundle`, on CUDA its PTX is loaded directly; both find
/// it by its `__sycl_kernel_` entry point. Skipped where the SYCLBIN has no image for the device.
fn syclbin_kernel(device: &Device, file: &str, name: &str) -> Result<kdsl_runtime::Kernel, String> {
    let (folder, required) = bundle_folder();
    let path = folder.join(format!("{file}.syclbin"));
    let bundle = match Bundle::read(&path) {
        Err(error) if !required => return Err(format!("skipped: {}: {error}", path.display())),
        other => other.map_err(|error| format!("{}: {error}", path.display()))?,
    };
    if bundle.entry_point_prefix != "__sycl_kernel_" {
        return Err(format!(
            "{} has entry point prefix {:?}",
            path.display(),
            bundle.entry_point_prefix
        ));
    }
    let program = match device.load(&bundle) {
        Err(RuntimeError::NoMatchingImage { bundle_has, .. }) => {
            return Err(format!("skipped: the SYCLBIN has only {bundle_has}"))
        }
        other => other.map_err(fail)?,
    };
    program.kernel(name).map_err(fail)
}

fn saxpy_reference(a: f32, x: &[f32], y: &[f32]) -> Vec<f64> {
    x.iter()
        .zip(y)
        .map(|(&x, &y)| f64::from(a) * f64::from(x) + f64::from(y))
        .collect()
}

mod cases {
    use super::*;

    fn run_saxpy(
        kernel: &kdsl_runtime::Kernel,
        device: &Device,
        n: usize,
        seed: u64,
    ) -> CaseResult {
        let mut random = Random::new(seed);
        let x = random.f32s(n);
        let y = random.f32s(n);
        let a = 1.5f32;
        let x_buffer = device.buffer_from(&x).map_err(fail)?;
        let mut y_buffer = device.buffer_from(&y).map_err(fail)?;
        let event = kernel
            .launch(
                &Launch::covering(n, 256),
                &args![&mut y_buffer, &x_buffer, a, n as u32],
            )
            .map_err(fail)?;
        event.wait().map_err(fail)?;
        let got = y_buffer.read_to_vec().map_err(fail)?;
        check_close("y", &got, &saxpy_reference(a, &x, &y), 1e-6, None)
    }

    pub fn handmade_saxpy(device: &Device) -> CaseResult {
        let program = handmade_program(device)?;
        let kernel = program.kernel("saxpy").map_err(fail)?;
        run_saxpy(&kernel, device, 10_000, 1)?;
        // Profiling is on: the launch has a duration.
        let x = device.buffer_from(&[1.0f32; 256]).map_err(fail)?;
        let mut y = device.buffer_from(&[1.0f32; 256]).map_err(fail)?;
        let event = kernel
            .launch(
                &Launch::new([256], [64]),
                &args![&mut y, &x, 2.0f32, 256u32],
            )
            .map_err(fail)?;
        let nanoseconds = event.elapsed_ns().map_err(fail)?;
        if nanoseconds == 0 {
            return Err("the launch reports an elapsed time of 0 ns".into());
        }
        check_equal("y", &y.read_to_vec().map_err(fail)?, &[3.0f32; 256])
    }

    /// kdsl's dimension 0 must be `get_global_id(0)` on every backend.
    pub fn dimension_order(device: &Device) -> CaseResult {
        let program = handmade_program(device)?;
        let kernel = program.kernel("global_ids").map_err(fail)?;
        let (width, height) = (24usize, 10usize);
        let mut output = device.alloc::<u32>(width * height).map_err(fail)?;
        output.fill(u32::MAX).map_err(fail)?;
        kernel
            .launch(
                &Launch::new([width, height], [8, 2]),
                &args![&mut output, width as u32],
            )
            .map_err(fail)?
            .wait()
            .map_err(fail)?;
        let want: Vec<u32> = (0..height)
            .flat_map(|y| (0..width).map(move |x| (x + 1000 * y) as u32))
            .collect();
        check_equal(
            "global_ids output",
            &output.read_to_vec().map_err(fail)?,
            &want,
        )
    }

    pub fn buffers_and_memory_kinds(device: &Device) -> CaseResult {
        let mut buffer = device.alloc::<f64>(1000).map_err(fail)?;
        buffer.fill(2.5).map_err(fail)?;
        check_equal(
            "filled f64",
            &buffer.read_to_vec().map_err(fail)?,
            &vec![2.5f64; 1000],
        )?;
        let values: Vec<i16> = (0..777).map(|i| (i * 37 % 65535 - 30000) as i16).collect();
        let mut shorts = device.alloc::<i16>(values.len()).map_err(fail)?;
        shorts.write_from(&values).map_err(fail)?;
        check_equal(
            "i16 round trip",
            &shorts.read_to_vec().map_err(fail)?,
            &values,
        )?;
        let mut bytes = device.alloc::<u8>(13).map_err(fail)?;
        bytes.fill(0xAB).map_err(fail)?;
        check_equal(
            "filled u8",
            &bytes.read_to_vec().map_err(fail)?,
            &[0xABu8; 13],
        )?;
        match shorts.write_from(&values[..5]) {
            Err(RuntimeError::LengthMismatch {
                expected: 777,
                found: 5,
            }) => {}
            other => return Err(format!("a short write gave {other:?}")),
        }
        let empty = device.alloc::<f32>(0).map_err(fail)?;
        check_equal("empty", &empty.read_to_vec().map_err(fail)?, &[])?;
        // Kernels accept shared and host memory as well.
        let program = match handmade_program(device) {
            Ok(program) => program,
            Err(why) if why.starts_with("skipped:") => return Ok(()),
            Err(why) => return Err(why),
        };
        let kernel = program.kernel("saxpy").map_err(fail)?;
        for kind in [MemoryKind::Shared, MemoryKind::Host] {
            let mut x = device.alloc_in::<f32>(512, kind).map_err(fail)?;
            let mut y = device.alloc_in::<f32>(512, kind).map_err(fail)?;
            x.fill(2.0).map_err(fail)?;
            y.fill(1.0).map_err(fail)?;
            kernel
                .launch(
                    &Launch::new([512], [128]),
                    &args![&mut y, &x, 3.0f32, 512u32],
                )
                .map_err(fail)?
                .wait()
                .map_err(fail)?;
            check_equal(
                &format!("saxpy in {kind:?} memory"),
                &y.read_to_vec().map_err(fail)?,
                &[7.0f32; 512],
            )?;
        }
        Ok(())
    }

    /// A damaged image is a typed error and the device stays usable: SPIR-V is refused by the
    /// runtime's own check before the driver sees it (`InvalidImage`); an image the driver
    /// rejects (a CUDA or HIP error code) comes back as `Backend` with the driver's message.
    pub fn a_corrupt_image_is_a_backend_error(device: &Device) -> CaseResult {
        let mut bundle = handmade_bundle();
        for image in &mut bundle.images {
            let keep = image.bytes.len() / 3;
            image.bytes.truncate(keep);
            image
                .bytes
                .extend_from_slice(b"\x07\x23\x02\x03 not a module");
        }
        match device
            .load(&bundle)
            .and_then(|program| program.kernel("saxpy"))
        {
            Err(RuntimeError::Backend { message, .. }) if !message.trim().is_empty() => {}
            // SPIR-V fails validation; a PTX image cut short (on a SYCL CUDA device) lacks the
            // `.entry` its kernels need.
            Err(RuntimeError::InvalidImage { why, .. }) if !why.trim().is_empty() => {}
            Err(other) => return Err(format!("wrong error for a corrupt image: {other}")),
            Ok(_) => return Err("a corrupt image was accepted".into()),
        }
        handmade_saxpy(device)
    }

    /// Asking for more memory than any device has is `OutOfMemory`, and the device still works.
    pub fn out_of_memory_is_a_typed_error(device: &Device) -> CaseResult {
        let too_many = (device.info().global_memory_bytes as usize / 4)
            .saturating_mul(64)
            .max(1 << 40);
        match device.alloc::<f32>(too_many) {
            Err(RuntimeError::OutOfMemory { bytes, message }) => {
                if bytes < (too_many as u64) * 4 && bytes != u64::MAX {
                    return Err(format!("OutOfMemory names {bytes} bytes: {message}"));
                }
            }
            Err(other) => return Err(format!("wrong error: {other}")),
            Ok(_) => return Err(format!("{too_many} floats were allocated")),
        }
        match device.alloc::<f64>(usize::MAX / 4) {
            Err(RuntimeError::OutOfMemory { .. }) => {}
            other => return Err(format!("an overflowing size gave {other:?}")),
        }
        let mut buffer = device.alloc::<u32>(1000).map_err(fail)?;
        buffer.fill(7).map_err(fail)?;
        check_equal(
            "fill after OutOfMemory",
            &buffer.read_to_vec().map_err(fail)?,
            &vec![7u32; 1000],
        )
    }

    pub fn misuse_is_reported_and_the_queue_stays_usable(device: &Device) -> CaseResult {
        let program = handmade_program(device)?;
        let kernel = program.kernel("saxpy").map_err(fail)?;
        let n = 1024usize;
        let x = device.buffer_from(&vec![1.0f32; n]).map_err(fail)?;
        let mut y = device.buffer_from(&vec![0.0f32; n]).map_err(fail)?;
        let integers = device.buffer_from(&vec![1i32; n]).map_err(fail)?;
        let other_instance = Device::open(device.info()).map_err(fail)?;
        let foreign = other_instance.buffer_from(&vec![1.0f32; n]).map_err(fail)?;
        let launch = Launch::new([n], [256]);
        let mut expected_y = 0.0f32;

        let mut check = |what: &str,
                         result: kdsl_runtime::Result<kdsl_runtime::Event>,
                         matches: fn(&RuntimeError) -> bool,
                         y: &mut kdsl_runtime::Buffer<f32>|
         -> CaseResult {
            match result {
                Err(error) if matches(&error) => {
                    if error.to_string().is_empty() {
                        return Err(format!("{what}: empty message"));
                    }
                }
                Err(error) => return Err(format!("{what}: wrong error: {error}")),
                Ok(_) => return Err(format!("{what}: the launch was accepted")),
            }
            // A correct launch still works afterwards.
            kernel
                .launch(&launch, &args![&mut *y, &x, 1.0f32, n as u32])
                .and_then(|event| event.wait())
                .map_err(|error| format!("after {what}: {error}"))?;
            expected_y += 1.0;
            check_equal(
                &format!("y after {what}"),
                &y.read_to_vec().map_err(fail)?,
                &vec![expected_y; n],
            )
        };

        check(
            "too few arguments",
            kernel.launch(&launch, &args![&mut y, &x, 1.0f32]),
            |e| {
                matches!(
                    e,
                    RuntimeError::ArgumentCount {
                        expected: 4,
                        found: 3,
                        ..
                    }
                )
            },
            &mut y,
        )?;
        check(
            "an f64 scalar for f32",
            kernel.launch(&launch, &args![&mut y, &x, 1.0f64, n as u32]),
            |e| matches!(e, RuntimeError::ArgumentType { index: 2, .. }),
            &mut y,
        )?;
        check(
            "an i32 buffer for f32",
            kernel.launch(&launch, &args![&mut y, &integers, 1.0f32, n as u32]),
            |e| matches!(e, RuntimeError::ArgumentType { index: 1, .. }),
            &mut y,
        )?;
        let read_only = kernel.launch(&launch, &args![&y, &x, 1.0f32, n as u32]);
        check(
            "a read-only buffer for a writable parameter",
            read_only,
            |e| matches!(e, RuntimeError::ReadOnlyBufferAsWritable { index: 0, .. }),
            &mut y,
        )?;
        check(
            "a buffer of another device instance",
            kernel.launch(&launch, &args![&mut y, &foreign, 1.0f32, n as u32]),
            |e| matches!(e, RuntimeError::ForeignBuffer { index: 1, .. }),
            &mut y,
        )?;
        let aliased = kernel.launch(
            &launch,
            &[
                Argument::writable(&y),
                Argument::read_only(&y),
                Argument::scalar(1.0f32),
                Argument::scalar(n as u32),
            ],
        );
        check(
            "the same buffer as y and x",
            aliased,
            |e| {
                matches!(
                    e,
                    RuntimeError::AliasedBuffers {
                        first: 0,
                        second: 1,
                        ..
                    }
                )
            },
            &mut y,
        )?;
        check(
            "a global size not divisible by the local size",
            kernel.launch(
                &Launch::new([1000], [256]),
                &args![&mut y, &x, 1.0f32, n as u32],
            ),
            |e| matches!(e, RuntimeError::BadLaunch { .. }),
            &mut y,
        )?;
        let too_big = device.info().max_work_group_size as usize * 2;
        check(
            "a work-group above the device limit",
            kernel.launch(
                &Launch::new([too_big], [too_big]),
                &args![&mut y, &x, 1.0f32, n as u32],
            ),
            |e| matches!(e, RuntimeError::BadLaunch { .. }),
            &mut y,
        )?;

        match program.kernel("saxpy2") {
            Err(RuntimeError::KernelNotFound { name, available }) => {
                if name != "saxpy2" || available != ["saxpy", "global_ids"] {
                    return Err(format!("KernelNotFound lists {available:?}"));
                }
            }
            other => return Err(format!("a missing kernel gave {other:?}")),
        }
        let mut wrong_target = handmade_bundle();
        let needed = if device.info().target.takes_spirv() {
            kdsl_bundle::TargetKind::Spirv
        } else {
            kdsl_bundle::TargetKind::Ptx
        };
        wrong_target.images.retain(|image| image.target != needed);
        match device.load(&wrong_target) {
            Err(RuntimeError::NoMatchingImage {
                bundle_has,
                device_needs,
            }) => {
                if bundle_has.is_empty() || device_needs.is_empty() {
                    return Err("NoMatchingImage without details".into());
                }
            }
            other => {
                return Err(format!(
                    "a bundle without the device's target gave {:?}",
                    other.map(|_| ())
                ))
            }
        }
        // After all of that, the kernel still runs correctly.
        run_saxpy(&kernel, device, 5000, 7)
    }

    pub fn saxpy(device: &Device) -> CaseResult {
        let kernel = example_kernel(device, "saxpy")?;
        run_saxpy(&kernel, device, 100_000, 11)?;
        run_saxpy(&kernel, device, 1, 12)
    }

    /// tests/kernels/vectors.krn's `saxpy4` (one `vload4`/`vstore4` per work-item), then the
    /// same launch on views that start 4 bytes into their buffers: `MisalignedBuffer`, and the
    /// device stays usable.
    pub fn vector_saxpy_and_alignment(device: &Device) -> CaseResult {
        let kernel = example_kernel(device, "saxpy4")?;
        let n = 1 << 16;
        let mut random = Random::new(61);
        let (x, y) = (random.f32s(n), random.f32s(n));
        let x_buffer = device.buffer_from(&x).map_err(fail)?;
        let mut y_buffer = device.buffer_from(&y).map_err(fail)?;
        let vectors = (n / 4) as u32;
        kernel
            .launch(
                &Launch::covering(n / 4, 256),
                &args![&mut y_buffer, &x_buffer, 2.0f32, vectors],
            )
            .map_err(fail)?
            .wait()
            .map_err(fail)?;
        check_close(
            "y after saxpy4",
            &y_buffer.read_to_vec().map_err(fail)?,
            &saxpy_reference(2.0, &x, &y),
            1e-6,
            None,
        )?;
        let x_view = x_buffer.slice(1..n - 3).map_err(fail)?;
        let misaligned = kernel.launch(
            &Launch::covering(n / 4 - 1, 256),
            &[
                Argument::writable(&y_buffer),
                x_view.into(),
                Argument::scalar(2.0f32),
                Argument::scalar(vectors - 1),
            ],
        );
        match misaligned {
            Err(RuntimeError::MisalignedBuffer {
                index: 1,
                alignment: 16,
                ..
            }) => {}
            other => return Err(format!("a view 4 bytes in gave {other:?}")),
        }
        let aligned_view = x_buffer.slice(4..).map_err(fail)?;
        kernel
            .launch(
                &Launch::covering(n / 4 - 1, 256),
                &[
                    Argument::writable(&y_buffer),
                    aligned_view.into(),
                    Argument::scalar(0.0f32),
                    Argument::scalar(vectors - 1),
                ],
            )
            .map_err(fail)?
            .wait()
            .map_err(fail)
            .map(|_| ())
    }

    pub fn reduce_sum(device: &Device) -> CaseResult {
        let kernel = example_kernel(device, "reduce_sum")?;
        let n = 100_003usize;
        let input = Random::new(21).f32s(n);
        let groups = n.div_ceil(256);
        let input_buffer = device.buffer_from(&input).map_err(fail)?;
        let mut partials = device.alloc::<f32>(groups).map_err(fail)?;
        kernel
            .launch(
                &Launch::covering(n, 256),
                &args![&mut partials, &input_buffer, n as u32],
            )
            .map_err(fail)?
            .wait()
            .map_err(fail)?;
        let got = partials.read_to_vec().map_err(fail)?;
        let want: Vec<f64> = input
            .chunks(256)
            .map(|chunk| chunk.iter().map(|&v| f64::from(v)).sum())
            .collect();
        let scale: Vec<f64> = input
            .chunks(256)
            .map(|chunk| chunk.iter().map(|&v| f64::from(v).abs()).sum())
            .collect();
        check_close("partial sums", &got, &want, 1e-5, Some(&scale))
    }

    /// examples/scan.krn's three launches: a prefix sum over more blocks than one work-group
    /// scans at once, so `scan_totals` carries across chunks.
    pub fn prefix_sum(device: &Device) -> CaseResult {
        let scan_blocks = example_kernel(device, "scan_blocks")?;
        let scan_totals = example_kernel(device, "scan_totals")?;
        let add_offsets = example_kernel(device, "add_block_offsets")?;
        let n = 300_001usize;
        let mut random = Random::new(24);
        let input: Vec<u32> = (0..n).map(|_| (random.next_u64() % 1000) as u32).collect();
        let blocks = n.div_ceil(256);
        let input_buffer = device.buffer_from(&input).map_err(fail)?;
        let mut output = device.alloc::<u32>(n).map_err(fail)?;
        let mut totals = device.alloc::<u32>(blocks).map_err(fail)?;
        scan_blocks
            .launch(
                &Launch::covering(n, 256),
                &args![&mut output, &mut totals, &input_buffer, n as u32],
            )
            .map_err(fail)?
            .wait()
            .map_err(fail)?;
        scan_totals
            .launch(
                &Launch::covering(256, 256),
                &args![&mut totals, blocks as u32],
            )
            .map_err(fail)?
            .wait()
            .map_err(fail)?;
        add_offsets
            .launch(
                &Launch::covering(n, 256),
                &args![&mut output, &totals, n as u32],
            )
            .map_err(fail)?
            .wait()
            .map_err(fail)?;
        let got = output.read_to_vec().map_err(fail)?;
        let want: Vec<u32> = input
            .iter()
            .scan(0u32, |sum, &x| {
                *sum = sum.wrapping_add(x);
                Some(*sum)
            })
            .collect();
        check_equal("prefix sums", &got, &want)
    }

    /// examples/kmeans.krn: three Lloyd iterations (assignment, then update over the
    /// privatised copies) on samples around well separated centres, against the same
    /// iterations computed here in `f64`: identical labels, centroids within 1e-4.
    pub fn kmeans(device: &Device) -> CaseResult {
        let assign = example_kernel(device, "kmeans_assign")?;
        let update = example_kernel(device, "kmeans_update")?;
        let (n_samples, n_features, n_clusters, copies) = (20_000usize, 14, 127, 8);
        let mut random = Random::new(44);
        let centres: Vec<f32> = random
            .f32s(n_clusters * n_features)
            .iter()
            .map(|v| v * 20.0)
            .collect();
        let mut x_t = vec![0.0f32; n_features * n_samples];
        for sample in 0..n_samples {
            let cluster = (random.next_u64() % n_clusters as u64) as usize;
            for feature in 0..n_features {
                x_t[feature * n_samples + sample] =
                    centres[cluster * n_features + feature] + 0.5 * random.next_f32();
            }
        }
        let mut centroids_t: Vec<f32> = (0..n_features * n_clusters)
            .map(|i| centres[(i % n_clusters) * n_features + i / n_clusters] + 0.25)
            .collect();
        let half_norms_of = |centroids_t: &[f32]| -> Vec<f32> {
            (0..n_clusters)
                .map(|c| {
                    0.5 * (0..n_features)
                        .map(|f| centroids_t[f * n_clusters + c].powi(2))
                        .sum::<f32>()
                })
                .collect()
        };
        let x_buffer = device.buffer_from(&x_t).map_err(fail)?;
        let mut centroids = device.buffer_from(&centroids_t).map_err(fail)?;
        let mut half_norms = device
            .buffer_from(&half_norms_of(&centroids_t))
            .map_err(fail)?;
        let mut labels = device.alloc::<u32>(n_samples).map_err(fail)?;
        let mut sums = device
            .buffer_from(&vec![0.0f32; copies * n_clusters * n_features])
            .map_err(fail)?;
        let mut counts = device
            .buffer_from(&vec![0u32; copies * n_clusters])
            .map_err(fail)?;
        let (samples, features, clusters, copy_count) = (
            n_samples as u32,
            n_features as u32,
            n_clusters as u32,
            copies as u32,
        );
        for iteration in 0..3 {
            // The kernels read the sizes from the shapes of the 2-D and 3-D arrays.
            let arguments = [
                vec![(&mut labels).into_argument()],
                ShapedArgument::contiguous(&mut sums, &[copy_count, clusters, features])
                    .arguments(),
                ShapedArgument::contiguous(&mut counts, &[copy_count, clusters]).arguments(),
                ShapedArgument::contiguous(&x_buffer, &[features, samples]).arguments(),
                ShapedArgument::contiguous(&centroids, &[features, clusters]).arguments(),
                vec![(&half_norms).into_argument()],
            ]
            .concat();
            assign
                .launch(&Launch::covering(n_samples, 256), &arguments)
                .map_err(fail)?
                .wait()
                .map_err(fail)?;
            let arguments = [
                ShapedArgument::contiguous(&mut centroids, &[features, clusters]).arguments(),
                vec![(&mut half_norms).into_argument()],
                ShapedArgument::contiguous(&mut sums, &[copy_count, clusters, features])
                    .arguments(),
                ShapedArgument::contiguous(&mut counts, &[copy_count, clusters]).arguments(),
            ]
            .concat();
            update
                .launch(&Launch::covering(n_clusters, 64), &arguments)
                .map_err(fail)?
                .wait()
                .map_err(fail)?;
            let want_labels: Vec<u32> = (0..n_samples)
                .map(|s| {
                    let distance = |c: usize| -> f64 {
                        (0..n_features)
                            .map(|f| {
                                (f64::from(x_t[f * n_samples + s])
                                    - f64::from(centroids_t[f * n_clusters + c]))
                                .powi(2)
                            })
                            .sum()
                    };
                    (0..n_clusters)
                        .min_by(|&a, &b| distance(a).total_cmp(&distance(b)))
                        .map_or(0, |c| c as u32)
                })
                .collect();
            let got_labels = labels.read_to_vec().map_err(fail)?;
            check_equal(
                &format!("labels of iteration {iteration}"),
                &got_labels,
                &want_labels,
            )?;
            let mut want: Vec<f64> = centroids_t.iter().map(|&v| f64::from(v)).collect();
            for cluster in 0..n_clusters {
                let members: Vec<usize> = (0..n_samples)
                    .filter(|&s| want_labels[s] as usize == cluster)
                    .collect();
                for feature in 0..n_features {
                    if !members.is_empty() {
                        let sum: f64 = members
                            .iter()
                            .map(|&s| f64::from(x_t[feature * n_samples + s]))
                            .sum();
                        want[feature * n_clusters + cluster] = sum / members.len() as f64;
                    }
                }
            }
            let got = centroids.read_to_vec().map_err(fail)?;
            check_close(
                &format!("centroids after iteration {iteration}"),
                &got,
                &want,
                1e-4,
                None,
            )?;
            centroids_t = got;
        }
        let leftover = counts.read_to_vec().map_err(fail)?;
        check_equal(
            "counts zeroed for the next iteration",
            &leftover,
            &vec![0u32; copies * n_clusters],
        )
    }

    /// A `u8` buffer of 2^32 + 4096 elements, written across the 2^32 boundary through `u64`
    /// indices (tests/kernels/wide_indices.krn), read back as a slice.
    pub fn buffers_past_4g_elements(device: &Device) -> CaseResult {
        let kernel = example_kernel(device, "write_past_4g")?;
        if !kernel.info().wide_buffer_indices {
            return Err("the bundle does not record the kernel's 64-bit buffer indices".into());
        }
        let length = (1usize << 32) + 4096;
        if device.info().global_memory_bytes < 2 * length as u64 {
            eprintln!(
                "buffers_past_4g_elements: skipped on {}: too little memory",
                device.info().name
            );
            return Ok(());
        }
        let mut output = device.alloc::<u8>(length).map_err(fail)?;
        let base = (1usize << 32) - 2048;
        let count = 4096u32;
        kernel
            .launch(
                &Launch::covering(count as usize, 256),
                &args![&mut output, base as u64, count],
            )
            .map_err(fail)?
            .wait()
            .map_err(fail)?;
        let got = output
            .slice(base..base + count as usize)
            .map_err(fail)?
            .read_to_vec()
            .map_err(fail)?;
        let want: Vec<u8> = (0..count).map(|i| (i % 251) as u8).collect();
        check_equal("bytes around 2^32", &got, &want)
    }

    pub fn transpose(device: &Device) -> CaseResult {
        let kernel = example_kernel(device, "transpose")?;
        let (width, height) = (96usize, 48usize);
        let input = Random::new(31).f32s(width * height);
        let input_buffer = device.buffer_from(&input).map_err(fail)?;
        let mut output = device.alloc::<f32>(width * height).map_err(fail)?;
        kernel
            .launch(
                &Launch::new([width, height], [16, 16]),
                &[
                    ShapedArgument::contiguous(&mut output, &[width as u32, height as u32])
                        .arguments(),
                    ShapedArgument::contiguous(&input_buffer, &[height as u32, width as u32])
                        .arguments(),
                ]
                .concat(),
            )
            .map_err(fail)?
            .wait()
            .map_err(fail)?;
        let mut want = vec![0.0f32; width * height];
        for y in 0..height {
            for x in 0..width {
                want[x * height + y] = input[y * width + x];
            }
        }
        check_equal("transposed", &output.read_to_vec().map_err(fail)?, &want)
    }

    pub fn matmul(device: &Device) -> CaseResult {
        let kernel = example_kernel(device, "matmul")?;
        let (m, n, k) = (64usize, 48usize, 80usize);
        let mut random = Random::new(41);
        let a = random.f32s(m * k);
        let b = random.f32s(k * n);
        let a_buffer = device.buffer_from(&a).map_err(fail)?;
        let b_buffer = device.buffer_from(&b).map_err(fail)?;
        let mut c = device.alloc::<f32>(m * n).map_err(fail)?;
        kernel
            .launch(
                &Launch::new([n, m], [16, 16]),
                &[
                    ShapedArgument::contiguous(&mut c, &[m as u32, n as u32]).arguments(),
                    ShapedArgument::contiguous(&a_buffer, &[m as u32, k as u32]).arguments(),
                    ShapedArgument::contiguous(&b_buffer, &[k as u32, n as u32]).arguments(),
                ]
                .concat(),
            )
            .map_err(fail)?
            .wait()
            .map_err(fail)?;
        let mut want = vec![0.0f64; m * n];
        let mut scale = vec![0.0f64; m * n];
        for row in 0..m {
            for column in 0..n {
                for inner in 0..k {
                    let product = f64::from(a[row * k + inner]) * f64::from(b[inner * n + column]);
                    want[row * n + column] += product;
                    scale[row * n + column] += product.abs();
                }
            }
        }
        check_close(
            "C",
            &c.read_to_vec().map_err(fail)?,
            &want,
            1e-5,
            Some(&scale),
        )
    }

    pub fn histogram(device: &Device) -> CaseResult {
        let kernel = example_kernel(device, "histogram")?;
        let n = 100_001usize;
        let mut random = Random::new(51);
        // Skewed data, so that some bins see heavy contention.
        let data: Vec<u8> = (0..n)
            .map(|_| {
                let value = random.next_u64();
                if value & 3 == 0 {
                    7
                } else {
                    (value >> 32) as u8
                }
            })
            .collect();
        let data_buffer = device.buffer_from(&data).map_err(fail)?;
        let mut bins = device.alloc::<u32>(256).map_err(fail)?;
        bins.fill(0).map_err(fail)?;
        kernel
            .launch(
                &Launch::covering(n, 256),
                &args![&mut bins, &data_buffer, n as u32],
            )
            .map_err(fail)?
            .wait()
            .map_err(fail)?;
        let mut want = vec![0u32; 256];
        for &byte in &data {
            want[usize::from(byte)] += 1;
        }
        check_equal("bins", &bins.read_to_vec().map_err(fail)?, &want)
    }

    pub fn stencil(device: &Device) -> CaseResult {
        let kernel = example_kernel(device, "stencil")?;
        let (width, height) = (64usize, 48usize);
        let input = Random::new(61).f32s(width * height);
        let input_buffer = device.buffer_from(&input).map_err(fail)?;
        let mut output = device.alloc::<f32>(width * height).map_err(fail)?;
        kernel
            .launch(
                &Launch::new([width, height], [16, 16]),
                &args![&mut output, &input_buffer, width as u32, height as u32],
            )
            .map_err(fail)?
            .wait()
            .map_err(fail)?;
        let at = |x: usize, y: usize| f64::from(input[y * width + x]);
        let mut want = vec![0.0f64; width * height];
        for y in 0..height {
            for x in 0..width {
                want[y * width + x] = if x == 0 || y == 0 || x == width - 1 || y == height - 1 {
                    at(x, y)
                } else {
                    0.2 * (at(x, y) + at(x - 1, y) + at(x + 1, y) + at(x, y - 1) + at(x, y + 1))
                };
            }
        }
        check_close(
            "stencil output",
            &output.read_to_vec().map_err(fail)?,
            &want,
            1e-6,
            None,
        )
    }

    pub fn softmax(device: &Device) -> CaseResult {
        let kernel = example_kernel(device, "softmax")?;
        // More columns than work-items, so each work-item strides over several.
        let (rows, columns) = (32usize, 1000usize);
        let input: Vec<f32> = Random::new(71)
            .f32s(rows * columns)
            .iter()
            .map(|v| v * 8.0)
            .collect();
        let input_buffer = device.buffer_from(&input).map_err(fail)?;
        let mut output = device.alloc::<f32>(rows * columns).map_err(fail)?;
        kernel
            .launch(
                &Launch::new([rows * 256], [256]),
                &args![&mut output, &input_buffer, columns as u32],
            )
            .map_err(fail)?
            .wait()
            .map_err(fail)?;
        let mut want = Vec::with_capacity(rows * columns);
        for row in input.chunks(columns) {
            let max = row
                .iter()
                .fold(f64::NEG_INFINITY, |m, &v| m.max(f64::from(v)));
            let exps: Vec<f64> = row.iter().map(|&v| (f64::from(v) - max).exp()).collect();
            let sum: f64 = exps.iter().sum();
            want.extend(exps.iter().map(|e| e / sum));
        }
        // Probabilities are at most 1; measure the error against 1e-3 so tiny ones compare sensibly.
        let got = output.read_to_vec().map_err(fail)?;
        let scale = vec![1e-3f64; want.len()];
        for (index, (&got, &want)) in got.iter().zip(&want).enumerate() {
            let tolerance = 1e-5 * want.max(scale[index]);
            let close = (f64::from(got) - want).abs() <= tolerance.max(1e-9);
            if !close {
                return Err(format!("softmax[{index}] = {got}, expected {want}"));
            }
        }
        Ok(())
    }

    pub fn axpby_f32(device: &Device) -> CaseResult {
        let kernel = example_kernel(device, "axpby_f32")?;
        let n = 70_001usize;
        let mut random = Random::new(81);
        let (x, y) = (random.f32s(n), random.f32s(n));
        let (a, b) = (0.75f32, -1.25f32);
        let x_buffer = device.buffer_from(&x).map_err(fail)?;
        let mut y_buffer = device.buffer_from(&y).map_err(fail)?;
        kernel
            .launch(
                &Launch::covering(n, 256),
                &args![&mut y_buffer, &x_buffer, a, b, n as u32],
            )
            .map_err(fail)?
            .wait()
            .map_err(fail)?;
        let want: Vec<f64> = x
            .iter()
            .zip(&y)
            .map(|(&x, &y)| f64::from(a) * f64::from(x) + f64::from(b) * f64::from(y))
            .collect();
        check_close(
            "y",
            &y_buffer.read_to_vec().map_err(fail)?,
            &want,
            1e-6,
            None,
        )
    }

    pub fn axpby_f64(device: &Device) -> CaseResult {
        let kernel = example_kernel(device, "axpby_f64")?;
        let n = 70_001usize;
        let mut random = Random::new(91);
        let x: Vec<f64> = (0..n).map(|_| random.next_f64()).collect();
        let y: Vec<f64> = (0..n).map(|_| random.next_f64()).collect();
        let (a, b) = (0.75f64, -1.25f64);
        let x_buffer = device.buffer_from(&x).map_err(fail)?;
        let mut y_buffer = device.buffer_from(&y).map_err(fail)?;
        kernel
            .launch(
                &Launch::covering(n, 256),
                &args![&mut y_buffer, &x_buffer, a, b, n as u32],
            )
            .map_err(fail)?
            .wait()
            .map_err(fail)?;
        let want: Vec<f64> = x.iter().zip(&y).map(|(&x, &y)| a * x + b * y).collect();
        check_close(
            "y",
            &y_buffer.read_to_vec().map_err(fail)?,
            &want,
            1e-14,
            None,
        )
    }
}
