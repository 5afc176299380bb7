//! `print` on every device: `tests/kernels/print.krn`'s `print_values` runs in a child process
//! (this test binary again, running `print_child` only), because device output goes to the
//! process's standard output outside Rust's capture; the parent checks the child's stdout.

use super::{devices_under_test, example_kernel, fail};
use kdsl_runtime::{args, Device, Launch};
use std::process::Command;

/// Names the device the child process launches on.
const CHILD_DEVICE: &str = "KDSL_PRINT_CHILD_DEVICE";

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
    let device = Device::select(&filter).expect("the child's device");
    let kernel = example_kernel(&device, "print_values").expect("the print_values kernel");
    let mut output = device.alloc::<f32>(WORK_ITEMS).map_err(fail).unwrap();
    kernel
        .launch(
            &Launch::new([WORK_ITEMS], [WORK_ITEMS]),
            &args![&mut output, SCALE],
        )
        .map_err(fail)
        .unwrap()
        .wait()
        .map_err(fail)
        .unwrap();
    let values = output.read_to_vec().map_err(fail).unwrap();
    assert_eq!(values, [0.0, 0.5, 1.0, 1.5]);
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

fn run_child(device: &str) -> Result<(), String> {
    let executable = std::env::current_exe().map_err(|e| e.to_string())?;
    let child = Command::new(executable)
        .args(["print_child", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_DEVICE, device)
        .output()
        .map_err(|e| format!("the child process did not start: {e}"))?;
    let stdout = String::from_utf8_lossy(&child.stdout);
    let stderr = String::from_utf8_lossy(&child.stderr);
    if !child.status.success() {
        if stderr.contains("skipped:") {
            return Err("skipped: the print_values bundle is missing".into());
        }
        return Err(format!(
            "the child failed ({}):\n{stdout}\n{stderr}",
            child.status
        ));
    }
    // Devices print work-items in their own order: compare the lines as a multiset, and
    // require each work-item's lines in program order.
    let printed: Vec<&str> = stdout
        .lines()
        .filter(|line| {
            ["i = ", "v = ", "narrow: ", "  from a device"]
                .iter()
                .any(|prefix| line.starts_with(prefix))
        })
        .collect();
    let mut sorted_printed = printed.clone();
    sorted_printed.sort_unstable();
    let mut sorted_expected: Vec<&str> = EXPECTED.lines().collect();
    sorted_expected.sort_unstable();
    if sorted_printed != sorted_expected {
        return Err(format!(
            "the kernel printed:\n{}\nexpected (in any work-item order):\n{EXPECTED}\nwhole stdout:\n{stdout}",
            printed.join("\n")
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
