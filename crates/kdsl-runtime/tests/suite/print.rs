//! `print` on every device: `tests/kernels/print.krn`'s `print_values` runs in a child process
//! (this test binary again, running `print_child` only), because device output goes to the
//! process's standard output outside Rust's capture; the parent checks the child's stdout.

use super::{devices_under_test, example_kernel, fail};
use kdsl_runtime::{args, Device, Launch};
use std::process::Command;

/// Names the device the child process launches on.
const CHILD_DEVICE: &str = "KDSL_PRINT_CHILD_DEVICE";
/// How many work-items the child launches, when not [`WORK_ITEMS`].
const CHILD_WORK_ITEMS: &str = "KDSL_PRINT_CHILD_WORK_ITEMS";
/// Work-items of the many-lines case: three lines each (and one more), 196609 lines. CUDA's
/// default 1 MiB printf buffer held about 34k of these lines on the H200; with the buffer kdsl
/// asks for (64 MiB), 263981 lines of 262144 work-items arrived there.
const MANY_WORK_ITEMS: usize = 1 << 16;

/// Work-items of the launch, and the scale the kernel multiplies `i` by.
const WORK_ITEMS: usize = 4;
const SCALE: f32 = 0.5;

/// What `print_values` prints for 4 work-items and scale 0.5, by work-item in program order:
/// the interpreter's order (`crates/kdsl-interp/tests/semantics.rs` expects the same text).
pub const EXPECTED: &str = include_str!("../../../../tests/kernels/print.stdout");

/// The child's part: launch on the device named in [`CHILD_DEVICE`] and wait; the runtime
/// (OpenCL) or the driver (CUDA, at the wait) writes the lines. Does nothing in a normal run.
pub fn child() {
    let Ok(filter) = std::env::var(CHILD_DEVICE) else {
        return;
    };
    let items = std::env::var(CHILD_WORK_ITEMS)
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(WORK_ITEMS);
    // The harness wrote `test print_child ... ` without a newline: end that line first, so the
    // device's first line starts a line of its own.
    println!();
    let device = Device::select(&filter).expect("the child's device");
    let kernel = example_kernel(&device, "print_values").expect("the print_values kernel");
    let mut output = device.alloc::<f32>(items).map_err(fail).unwrap();
    kernel
        .launch(
            &Launch::covering(items, WORK_ITEMS),
            &args![&mut output, SCALE],
        )
        .map_err(fail)
        .unwrap()
        .wait()
        .map_err(fail)
        .unwrap();
    let values = output.read_to_vec().map_err(fail).unwrap();
    let expected: Vec<f32> = (0..items).map(|i| i as f32 * SCALE).collect();
    assert!(values == expected, "the kernel's buffer is wrong");
}

/// The parent's part, on every device under test.
pub fn print_reaches_stdout() {
    let mut failures = Vec::new();
    for info in devices_under_test() {
        match run_child(&info.id()) {
            Ok(()) => eprintln!("print_reaches_stdout: passed on {info}"),
            Err(why) if why.starts_with("skipped:") => {
                eprintln!("print_reaches_stdout: {why} on {info}")
            }
            Err(why) => failures.push(format!("{}: {why}", info.id())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Printing from 65536 work-items on the CUDA backend: every line arrives (kdsl raises CUDA's
/// 1 MiB printf buffer when a printing kernel is loaded). Other devices are left
/// out: the CPU device prints every line anyway, only slowly (786433 lines took 4 s on the
/// 2-core development machine), and SYCL's CUDA devices keep the driver's 1 MiB buffer.
pub fn print_from_many_work_items_arrives_whole() {
    let mut failures = Vec::new();
    for info in devices_under_test() {
        if info.backend != kdsl_runtime::BackendKind::Cuda {
            eprintln!("print_from_many_work_items_arrives_whole: skipped on {info}");
            continue;
        }
        let started = std::time::Instant::now();
        match child_output(&info.id(), MANY_WORK_ITEMS) {
            Ok((stdout, _)) => {
                let lines = printed_lines(&stdout).len();
                // Three lines per work-item, and work-item 1's line from a device function.
                let total = 3 * MANY_WORK_ITEMS + 1;
                eprintln!(
                    "print_from_many_work_items_arrives_whole: {lines} of {total} lines \
                     arrived, in {:.2} s with the launch, on {info}",
                    started.elapsed().as_secs_f64()
                );
                if lines != total {
                    failures.push(format!("{}: {lines} lines of {total}", info.id()));
                }
            }
            Err(why) => failures.push(format!("{}: {why}", info.id())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Runs the child on `device` over `items` work-items; its stdout and stderr.
fn child_output(device: &str, items: usize) -> Result<(String, String), String> {
    let executable = std::env::current_exe().map_err(|e| e.to_string())?;
    let child = Command::new(executable)
        .args(["print_child", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_DEVICE, device)
        .env(CHILD_WORK_ITEMS, items.to_string())
        .output()
        .map_err(|e| format!("the child process did not start: {e}"))?;
    let stdout = String::from_utf8_lossy(&child.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&child.stderr).into_owned();
    if child.status.success() {
        Ok((stdout, stderr))
    } else if stderr.contains("skipped:") {
        Err("skipped: the print_values bundle is missing".into())
    } else {
        Err(format!(
            "the child failed ({}); the end of its stdout:\n{}\nits stderr:\n{}",
            child.status,
            tail(&stdout, 2000),
            tail(&stderr, 4000)
        ))
    }
}

/// The last `bytes` bytes of `text` (or a little more, to a character boundary).
fn tail(text: &str, bytes: usize) -> &str {
    let mut start = text.len().saturating_sub(bytes);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    &text[start..]
}

/// The lines the kernel printed: those starting like `print_values`'s, after any text of the
/// test harness on the same line.
fn printed_lines(stdout: &str) -> Vec<&str> {
    const PREFIXES: [&str; 4] = ["i = ", "v = ", "narrow: ", "  from a device"];
    stdout
        .lines()
        .map(|line| line.strip_prefix("test print_child ... ").unwrap_or(line))
        .filter(|line| PREFIXES.iter().any(|prefix| line.starts_with(prefix)))
        .collect()
}

fn run_child(device: &str) -> Result<(), String> {
    let (stdout, _) = child_output(device, WORK_ITEMS)?;
    // Devices print work-items in their own order: compare the lines as a multiset, and
    // require each work-item's lines in program order.
    let printed = printed_lines(&stdout);
    let mut sorted_printed = printed.clone();
    sorted_printed.sort_unstable();
    let mut sorted_expected: Vec<&str> = EXPECTED.lines().collect();
    sorted_expected.sort_unstable();
    if sorted_printed != sorted_expected {
        return Err(format!(
            "the kernel printed:\n{}\nexpected (in any work-item order):\n{EXPECTED}\nthe end of stdout:\n{}",
            printed.join("\n"),
            tail(&stdout, 3000)
        ));
    }
    let position = |text: &str| printed.iter().position(|line| line.starts_with(text));
    for (first, then) in [
        ("i = 0,", "v = (0,"),
        ("i = 1,", "v = (0.5,"),
        ("v = (0.5,", "narrow: -1"),
        ("narrow: -1", "  from a device"),
        ("i = 3,", "v = (1.5,"),
    ] {
        if position(first) > position(then) {
            return Err(format!(
                "`{then}` came before `{first}` of the same work-item:\n{stdout}"
            ));
        }
    }
    Ok(())
}
