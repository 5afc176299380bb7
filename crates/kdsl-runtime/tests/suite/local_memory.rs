//! Local memory sized at launch (`local mut [T]` parameters): examples/reduction_sized.krn
//! `reduce_sum_sized`, from its bundle and from a SYCLBIN (whose kernels SYCL passes arguments
//! to as kernels it did not build from source), at several work-group sizes, and the
//! local-memory limit as a typed error after which the device keeps working.

use super::*;

fn run_sized_reduction(
    device: &Device,
    kernel: &kdsl_runtime::Kernel,
    input: &[f32],
    group: usize,
    scratch: usize,
) -> Result<Vec<f32>, RuntimeError> {
    let n = input.len();
    let input_buffer = device.buffer_from(input)?;
    let mut partials = device.alloc::<f32>(n.div_ceil(group))?;
    kernel
        .launch(
            &Launch::covering(n, group),
            &[
                (&mut partials).into_argument(),
                (&input_buffer).into_argument(),
                Argument::local_of::<f32>(scratch),
                (n as u32).into_argument(),
            ],
        )?
        .wait()?;
    partials.read_to_vec()
}

/// The partial sums of `input` in groups of `group`, and the sums of their magnitudes.
fn group_sums(input: &[f32], group: usize) -> (Vec<f64>, Vec<f64>) {
    let sums = input
        .chunks(group)
        .map(|chunk| chunk.iter().map(|&v| f64::from(v)).sum())
        .collect();
    let scale = input
        .chunks(group)
        .map(|chunk| chunk.iter().map(|&v| f64::from(v).abs()).sum())
        .collect();
    (sums, scale)
}

/// `reduce_sum_sized` at several work-group sizes, and with 64 KiB of scratch where the device
/// has that much.
fn check_sized_reduction(device: &Device, kernel: &kdsl_runtime::Kernel) -> CaseResult {
    let n = 50_001usize;
    let input = Random::new(23).f32s(n);
    for group in [32usize, 64, 256] {
        let got = run_sized_reduction(device, kernel, &input, group, group).map_err(fail)?;
        let (want, scale) = group_sums(&input, group);
        check_close(
            &format!("partial sums of groups of {group}"),
            &got,
            &want,
            1e-5,
            Some(&scale),
        )?;
    }
    // 64 KiB of scratch, more than CUDA gives without the kernel's opt-in attribute.
    let large = 16 * 1024;
    if device.info().launch_sized_local_memory_bytes() >= 4 * large as u64 + 1024 {
        let got = run_sized_reduction(device, kernel, &input, 64, large).map_err(fail)?;
        let (want, _) = group_sums(&input, 64);
        check_close(
            "partial sums with 64 KiB of scratch",
            &got,
            &want,
            1e-5,
            None,
        )?;
    }
    Ok(())
}

pub fn reduce_sum_sized(device: &Device) -> CaseResult {
    check_sized_reduction(device, &example_kernel(device, "reduce_sum_sized")?)
}

pub fn reduce_sum_sized_from_syclbin(device: &Device) -> CaseResult {
    let kernel = syclbin_kernel(device, "reduction_sized", "reduce_sum_sized")?;
    check_sized_reduction(device, &kernel)
}

/// Too much local memory is a typed error, from the bundle's kernel and the SYCLBIN's.
pub fn local_memory_above_the_limit(device: &Device) -> CaseResult {
    check_limit(device, &example_kernel(device, "reduce_sum_sized")?)?;
    match syclbin_kernel(device, "reduction_sized", "reduce_sum_sized") {
        Ok(kernel) => check_limit(device, &kernel),
        Err(why) if why.starts_with("skipped:") => Ok(()),
        Err(why) => Err(why),
    }
}

fn check_limit(device: &Device, kernel: &kdsl_runtime::Kernel) -> CaseResult {
    let limit = device.info().launch_sized_local_memory_bytes();
    let input = Random::new(24).f32s(1024);
    let too_many = (limit / 4 + 1) as usize;
    match run_sized_reduction(device, kernel, &input, 64, too_many) {
        Err(RuntimeError::LocalMemoryExceeded {
            kernel: name,
            total_bytes,
            limit_bytes,
            launch_sized,
            ..
        }) => {
            if name != "reduce_sum_sized"
                || total_bytes < too_many as u64 * 4
                || limit_bytes != limit
                || !launch_sized.contains("`scratch`")
            {
                return Err(format!(
                    "the error names the wrong sizes: {name}, {total_bytes} of {limit_bytes}, {launch_sized}"
                ));
            }
        }
        Err(other) => return Err(format!("expected LocalMemoryExceeded, got {other}")),
        Ok(_) => return Err(format!("{too_many} f32 of local memory were accepted")),
    }
    // A length overflowing the byte count is refused the same way.
    match run_sized_reduction(device, kernel, &input, 64, usize::MAX / 2) {
        Err(RuntimeError::LocalMemoryExceeded { .. }) => {}
        other => return Err(format!("an absurd length gave {:?}", other.map(|_| ()))),
    }
    // The same kernel still runs with a fitting size.
    let got = run_sized_reduction(device, kernel, &input, 64, 64).map_err(fail)?;
    let (want, _) = group_sums(&input, 64);
    check_close("partial sums after the refusal", &got, &want, 1e-5, None)
}
