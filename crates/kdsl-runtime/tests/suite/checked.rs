//! Device cases for checked kernels (`tests/kernels/checked.krn`, compiled with `--checked` into
//! `checked.kbundle` by `scripts/compile-examples.sh`): a fault is a typed error naming the
//! kernel, the source location, the buffer or array, the index and the work-item; the faulting
//! access is skipped, so memory next to the buffer stays intact and the device stays usable.

use super::{check_equal, example_kernel, fail, CaseResult};
use kdsl_runtime::{
    args, Argument, Device, FaultKind, IntoArgument, KernelFault, Launch, RuntimeError,
};

const SENTINEL: u32 = 0xDEAD_BEEF;

/// The fault and its message, or why the result was not one.
fn expect_fault(result: Result<(), RuntimeError>, what: &str) -> Result<Fault, String> {
    match result {
        Err(RuntimeError::KernelFault(fault)) => Ok(Fault {
            message: fault.to_string(),
            fault: *fault,
        }),
        Err(other) => Err(format!("{what}: expected a KernelFault, got: {other}")),
        Ok(()) => Err(format!(
            "{what}: expected a KernelFault, the launch succeeded"
        )),
    }
}

struct Fault {
    fault: KernelFault,
    message: String,
}

impl std::ops::Deref for Fault {
    type Target = KernelFault;
    fn deref(&self) -> &KernelFault {
        &self.fault
    }
}

fn checked_kernel(device: &Device, name: &str) -> Result<kdsl_runtime::Kernel, String> {
    let kernel = example_kernel(device, name)?;
    if !kernel.info().checked {
        return Err(format!(
            "kernel `{name}` of the bundle folder is not a checked kernel: compile tests/kernels/checked.krn with --checked"
        ));
    }
    Ok(kernel)
}

/// A write one element past a view is reported with its line, buffer, index and work-item; the
/// element after the view keeps its value; the next launch runs normally.
pub fn checked_write_past_the_end(device: &Device) -> CaseResult {
    let kernel = checked_kernel(device, "write_past")?;
    let n = 64usize;
    let mut whole = device.buffer_from(&vec![SENTINEL; 2 * n]).map_err(fail)?;
    let event = {
        let mut view = whole.slice_mut(..n).map_err(fail)?;
        kernel
            .launch(&Launch::new([n], [16]), &args![&mut view, 1u32])
            .map_err(fail)?
    };
    let fault = expect_fault(event.wait(), "write_past with offset 1")?;
    let expected_location = "checked.krn:8:5";
    if fault.kernel != "write_past"
        || fault.kind != FaultKind::OutOfBounds
        || !fault.location.ends_with(expected_location)
        || fault.what != "buffer `output`"
        || fault.index != 64
        || fault.length != 64
        || fault.work_item != [63, 0, 0]
    {
        return Err(format!(
            "wrong fault: {} (expected kernel write_past, {expected_location}, buffer `output`, index 64, length 64, work-item 63)",
            fault.message
        ));
    }
    for part in [
        "write_past",
        expected_location,
        "buffer `output`",
        "index 64",
        "(63, 0, 0)",
    ] {
        if !fault.message.contains(part) {
            return Err(format!(
                "the message does not say {part:?}: {}",
                fault.message
            ));
        }
    }
    // Waiting again reports the same fault.
    let again = expect_fault(event.wait(), "a second wait")?;
    if again.message != fault.message {
        return Err(format!("a second wait reported {}", again.message));
    }
    let mut want = vec![SENTINEL; 2 * n];
    for i in 0..n - 1 {
        want[i + 1] = i as u32 + 1;
    }
    check_equal(
        "the buffer after the faulting launch (element 64 is past the view)",
        &whole.read_to_vec().map_err(fail)?,
        &want,
    )?;
    // The device is still usable, and an in-bounds launch of the same kernel reports nothing.
    {
        let mut view = whole.slice_mut(..n).map_err(fail)?;
        kernel
            .launch(&Launch::new([n], [16]), &args![&mut view, 0u32])
            .map_err(fail)?
            .wait()
            .map_err(fail)?;
    }
    for (i, value) in want.iter_mut().enumerate().take(n) {
        *value = i as u32 + 1;
    }
    check_equal(
        "the buffer after an in-bounds launch",
        &whole.read_to_vec().map_err(fail)?,
        &want,
    )
}

/// A load past a buffer inside a device function gives 0 and names the function; a negative
/// index into a private array and a division by zero are reported too.
pub fn checked_loads_arrays_and_divisions(device: &Device) -> CaseResult {
    let n = 64usize;
    let input: Vec<f32> = (0..n).map(|i| i as f32 + 0.5).collect();
    let input_buffer = device.buffer_from(&input).map_err(fail)?;

    let gather = checked_kernel(device, "gather")?;
    let mut output = device.buffer_from(&vec![-1.0f32; n]).map_err(fail)?;
    let result = gather
        .launch(
            &Launch::new([n], [16]),
            &args![&mut output, &input_buffer, 8u32],
        )
        .map_err(fail)?
        .wait();
    let fault = expect_fault(result, "gather with offset 8")?;
    let item = fault.work_item[0];
    if fault.kind != FaultKind::OutOfBounds
        || fault.what != "buffer `values` in function `scaled`"
        || !fault.location.ends_with("checked.krn:12:12")
        || !(56..64).contains(&item)
        || fault.index != i128::from(item) + 8
        || fault.length != 64
    {
        return Err(format!(
            "wrong fault: {} (expected buffer `values` in function `scaled` at checked.krn:12:12, a work-item in 56..64, its id + 8, length 64)",
            fault.message
        ));
    }
    let want: Vec<f32> = (0..n)
        .map(|i| if i + 8 < n { input[i + 8] * 2.0 } else { 0.0 })
        .collect();
    check_equal(
        "gather's output (0 where the load faulted)",
        &output.read_to_vec().map_err(fail)?,
        &want,
    )?;

    let window = checked_kernel(device, "window")?;
    let mut output = device.buffer_from(&[-1.0f32; 4]).map_err(fail)?;
    let result = window
        .launch(
            &Launch::new([4], [4]),
            &args![&mut output, &input_buffer, 1i32],
        )
        .map_err(fail)?
        .wait();
    let fault = expect_fault(result, "window with reach 1")?;
    if fault.kind != FaultKind::OutOfBounds
        || fault.what != "array `history` (dimension 2 of 2)"
        || fault.index != -1
        || fault.length != 4
        || fault.work_item != [0, 0, 0]
    {
        return Err(format!(
            "wrong fault: {} (expected array `history` dimension 2, index -1, length 4, work-item 0)",
            fault.message
        ));
    }
    let want: Vec<f32> = (0..4)
        .map(|i| {
            if i == 0 {
                0.0
            } else {
                input[i] + (i - 1) as f32
            }
        })
        .collect();
    check_equal(
        "window's output",
        &output.read_to_vec().map_err(fail)?,
        &want,
    )?;

    let divide = checked_kernel(device, "divide")?;
    let numerators: Vec<i32> = (0..16).map(|i| i * 7 - 50).collect();
    let numerator_buffer = device.buffer_from(&numerators).map_err(fail)?;
    let mut quotients = device.alloc::<i32>(16).map_err(fail)?;
    let result = divide
        .launch(
            &Launch::new([16], [16]),
            &args![&mut quotients, &numerator_buffer, 0i32],
        )
        .map_err(fail)?
        .wait();
    let fault = expect_fault(result, "divide by 0")?;
    if fault.kind != FaultKind::DivisionByZero
        || fault.what != "division"
        || !fault.location.ends_with("checked.krn:23:17")
        || fault.work_item[0] >= 16
    {
        return Err(format!(
            "wrong fault: {} (expected a division by zero at checked.krn:23:17)",
            fault.message
        ));
    }
    check_equal(
        "quotients after dividing by 0",
        &quotients.read_to_vec().map_err(fail)?,
        &[0; 16],
    )?;
    let mut minimum = numerators.clone();
    minimum[5] = i32::MIN;
    let numerator_buffer = device.buffer_from(&minimum).map_err(fail)?;
    let result = divide
        .launch(
            &Launch::new([16], [16]),
            &args![&mut quotients, &numerator_buffer, -1i32],
        )
        .map_err(fail)?
        .wait();
    let fault = expect_fault(result, "divide i32::MIN by -1")?;
    if fault.kind != FaultKind::DivisionOverflow || fault.work_item != [5, 0, 0] {
        return Err(format!(
            "wrong fault: {} (expected an overflow in work-item 5)",
            fault.message
        ));
    }
    let want: Vec<i32> = minimum
        .iter()
        .map(|&v| if v == i32::MIN { 0 } else { -v })
        .collect();
    check_equal(
        "quotients after dividing by -1",
        &quotients.read_to_vec().map_err(fail)?,
        &want,
    )?;
    let result = divide
        .launch(
            &Launch::new([16], [16]),
            &args![&mut quotients, &numerator_buffer, 3i32],
        )
        .map_err(fail)?
        .wait();
    result.map_err(fail)?;
    let want: Vec<i32> = minimum.iter().map(|&v| v / 3).collect();
    check_equal(
        "quotients after dividing by 3",
        &quotients.read_to_vec().map_err(fail)?,
        &want,
    )
}

/// An atomic on an element past a view is reported and skipped; the other updates land.
pub fn checked_atomics(device: &Device) -> CaseResult {
    let count = checked_kernel(device, "count")?;
    let values: Vec<u32> = (0..16).map(|i| if i == 9 { 5 } else { i % 4 }).collect();
    let value_buffer = device.buffer_from(&values).map_err(fail)?;
    let mut bins = device.buffer_from(&[0u32; 8]).map_err(fail)?;
    let event = {
        let mut view = bins.slice_mut(..4).map_err(fail)?;
        count
            .launch(&Launch::new([16], [16]), &args![&mut view, &value_buffer])
            .map_err(fail)?
    };
    let fault = expect_fault(event.wait(), "count with a value of 5")?;
    if fault.kind != FaultKind::OutOfBounds
        || fault.what != "buffer `bins`"
        || !fault.location.ends_with("checked.krn:39:5")
        || fault.index != 5
        || fault.length != 4
        || fault.work_item != [9, 0, 0]
    {
        return Err(format!(
            "wrong fault: {} (expected buffer `bins` at checked.krn:39:5, index 5, length 4, work-item 9)",
            fault.message
        ));
    }
    // Bins 0..4 count the 15 in-range values; 4..8 (past the view) are untouched.
    check_equal(
        "bins after the faulting launch",
        &bins.read_to_vec().map_err(fail)?,
        &[4, 3, 4, 4, 0, 0, 0, 0],
    )
}

/// A loop whose condition reads past the end: the failed load gives 0, which keeps the
/// condition true. The faulting work-items leave the loop (the launch ends and reports the
/// fault); the work-items that did not fault still compute their results.
pub fn checked_fault_in_a_loop_condition(device: &Device) -> CaseResult {
    let kernel = checked_kernel(device, "find_non_zero")?;
    let n = 64usize;
    let last_non_zero = 40usize;
    let values: Vec<u32> = (0..n)
        .map(|i| u32::from(i == 5 || i == 20 || i == last_non_zero))
        .collect();
    let value_buffer = device.buffer_from(&values).map_err(fail)?;
    let mut positions = device.buffer_from(&vec![u32::MAX; n]).map_err(fail)?;
    let result = kernel
        .launch(
            &Launch::new([n], [16]),
            &args![&mut positions, &value_buffer],
        )
        .map_err(fail)?
        .wait();
    let fault = expect_fault(result, "find_non_zero past the last non-zero value")?;
    if fault.kind != FaultKind::OutOfBounds
        || fault.what != "buffer `values` in function `next_non_zero`"
        || fault.index != n as i128
        || fault.length != n as u64
        || !(last_non_zero as u64 + 1..n as u64).contains(&fault.work_item[0])
    {
        return Err(format!(
            "wrong fault: {} (expected buffer `values` in function `next_non_zero`, index 64, length 64, a work-item in 41..64)",
            fault.message
        ));
    }
    let found = positions.read_to_vec().map_err(fail)?;
    let want: Vec<u32> = (0..=last_non_zero)
        .map(|i| (i..n).find(|&j| values[j] != 0).unwrap_or(n) as u32)
        .collect();
    check_equal(
        "the positions of work-items that did not fault",
        &found[..=last_non_zero],
        &want,
    )
}

/// `input[i - 1]` at i == 0 with a `u32` id: the subtraction's overflow is the fault reported
/// (not the out-of-bounds read it would lead to), with its line and work-item 0; the other
/// work-items read their neighbour.
pub fn checked_integer_overflow(device: &Device) -> CaseResult {
    let step_back = checked_kernel(device, "step_back")?;
    let input: Vec<u32> = (0..16).map(|i| 100 + i).collect();
    let input_buffer = device.buffer_from(&input).map_err(fail)?;
    let mut output = device.buffer_from(&[SENTINEL; 16]).map_err(fail)?;
    let result = step_back
        .launch(&Launch::new([16], [16]), &args![&mut output, &input_buffer])
        .map_err(fail)?
        .wait();
    let fault = expect_fault(result, "step_back at work-item 0")?;
    if fault.kind != FaultKind::IntegerOverflow
        || fault.what != "`-` on `u32`"
        || !fault.location.ends_with("checked.krn:62:23")
        || fault.work_item != [0, 0, 0]
    {
        return Err(format!(
            "wrong fault: {} (expected an overflow of `-` on `u32` at checked.krn:62:23 in work-item 0)",
            fault.message
        ));
    }
    let want: Vec<u32> = (0..16).map(|i| if i == 0 { 0 } else { 99 + i }).collect();
    check_equal(
        "outputs after the overflow",
        &output.read_to_vec().map_err(fail)?,
        &want,
    )
}

/// An index past a launch-sized local array (`local mut [u32]`) is reported with the length the
/// launch gave; with room for the reach, the same kernel runs without a fault.
pub fn checked_launch_sized_local_array(device: &Device) -> CaseResult {
    let kernel = checked_kernel(device, "local_past")?;
    let n = 64usize;
    let mut output = device.buffer_from(&vec![SENTINEL; n]).map_err(fail)?;
    let result = kernel
        .launch(
            &Launch::new([n], [16]),
            &[
                (&mut output).into_argument(),
                Argument::local_of::<u32>(16),
                2u32.into_argument(),
            ],
        )
        .map_err(fail)?
        .wait();
    let fault = expect_fault(result, "local_past with reach 2")?;
    if fault.kind != FaultKind::OutOfBounds
        || fault.what != "local array `scratch`"
        || fault.length != 16
        || !(16..18).contains(&fault.index)
        || fault.work_item[0] % 16 < 14
    {
        return Err(format!("wrong fault: {}", fault.message));
    }
    kernel
        .launch(
            &Launch::new([n], [16]),
            &[
                (&mut output).into_argument(),
                Argument::local_of::<u32>(18),
                2u32.into_argument(),
            ],
        )
        .map_err(fail)?
        .wait()
        .map_err(fail)?;
    let want: Vec<u32> = (0..n)
        .map(|i| {
            if i % 16 < 2 {
                SENTINEL_LOCAL
            } else {
                (i % 16 - 2) as u32
            }
        })
        .collect();
    let got = output.read_to_vec().map_err(fail)?;
    // Elements 0 and 1 of each group's scratch were never written: only the rest is compared.
    let got: Vec<u32> = got
        .iter()
        .enumerate()
        .map(|(i, &v)| if i % 16 < 2 { SENTINEL_LOCAL } else { v })
        .collect();
    check_equal("scratch read back after an in-bounds launch", &got, &want)
}

/// Stands for the unwritten (undefined) elements of a local array.
const SENTINEL_LOCAL: u32 = u32::MAX;
