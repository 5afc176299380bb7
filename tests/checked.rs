//! Checked mode through the facade: `CompileOptions::checked` reaches the bundle's and the
//! SYCLBIN's kernel metadata with source lines, and a write past a buffer on the default device
//! is a `KernelFault` naming the kernel, the line, the buffer, the index and the work-item.

use kdsl::runtime::{args, Device, FaultKind, KernelFault, Launch, RuntimeError};
use kdsl::{CompileOptions, TargetSpec};

const SOURCE: &str = "// shifted copy
kernel shift(values: global mut [f32], input: global [f32], by: u32) {
    let i = get_global_id(0);
    values[i + by] = input[i] * 2.0;
}
";

fn checked() -> CompileOptions {
    CompileOptions {
        checked: true,
        ..CompileOptions::default()
    }
}

#[test]
fn checked_metadata_names_lines_and_buffers() {
    let targets = [TargetSpec::spirv(), TargetSpec::ptx(Some("sm_90"))];
    let plain = kdsl::compile("shift.krn", SOURCE, &targets, &CompileOptions::default()).unwrap();
    assert!(!plain.kernels[0].checked && plain.kernels[0].check_sites.is_empty());
    let bundle = kdsl::compile("shift.krn", SOURCE, &targets, &checked()).unwrap();
    let kernel = &bundle.kernels[0];
    assert!(kernel.checked);
    let sites: Vec<(String, u32, u32)> = kernel
        .check_sites
        .iter()
        .map(|s| (s.what.clone(), s.line, s.column))
        .collect();
    assert_eq!(
        sites,
        [
            ("buffer `input`".to_string(), 4, 22),
            ("`+` on `u32`".to_string(), 4, 12),
            ("buffer `values`".to_string(), 4, 5),
        ]
    );
    // The metadata survives the file, and the SYCLBIN carries it too.
    let path = std::env::temp_dir().join(format!("kdsl-checked-{}.kbundle", std::process::id()));
    bundle.write(&path).unwrap();
    let read = kdsl::Bundle::read(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    assert_eq!(read.kernels, bundle.kernels);
    let syclbin = kdsl::compile_syclbin("shift.krn", SOURCE, &targets, &checked()).unwrap();
    let from_syclbin = kdsl::Syclbin::from_bytes(&syclbin.to_bytes())
        .unwrap()
        .to_bundle()
        .unwrap();
    assert_eq!(from_syclbin.kernels, bundle.kernels);
}

#[test]
fn a_write_past_a_buffer_is_a_typed_fault_on_the_default_device() {
    let bundle = kdsl::compile("shift.krn", SOURCE, &kdsl::default_targets(), &checked()).unwrap();
    let device =
        Device::default().expect("a device (the OpenCL CPU device after scripts/setup.sh)");
    let kernel = device.load(&bundle).unwrap().kernel("shift").unwrap();
    let n = 256usize;
    let input: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let input_buffer = device.buffer_from(&input).unwrap();
    let mut values = device.buffer_from(&vec![-1.0f32; n]).unwrap();
    let error = kernel
        .launch(
            &Launch::new([n], [64]),
            &args![&mut values, &input_buffer, 3u32],
        )
        .unwrap()
        .wait()
        .expect_err("three work-items write past `values`");
    let message = error.to_string();
    let RuntimeError::KernelFault(fault) = error else {
        panic!("expected a KernelFault, got {message}");
    };
    let KernelFault {
        kernel: name,
        kind,
        location,
        what,
        index,
        length,
        work_item,
    } = *fault;
    assert_eq!(name, "shift");
    assert_eq!(kind, FaultKind::OutOfBounds);
    assert_eq!(location, "shift.krn:4:5");
    assert_eq!(what, "buffer `values`");
    assert_eq!(length, n as u64);
    assert!((253..256).contains(&work_item[0]), "{message}");
    assert_eq!(index, i128::from(work_item[0]) + 3);
    assert!(message.contains("shift.krn:4:5") && message.contains("buffer `values`"));
    let mut want = vec![-1.0f32; n];
    for i in 0..n - 3 {
        want[i + 3] = input[i] * 2.0;
    }
    assert_eq!(values.read_to_vec().unwrap(), want);
}

/// A failed check gives 0, which here keeps the kernel's loop condition true forever. The
/// work-items past the last non-zero value fault and leave the loop, so the launch ends and
/// reports the fault; the work-items before it, which did not fault, still find their answer.
#[test]
fn a_fault_in_a_loop_condition_ends_only_that_work_items_loop() {
    const SEARCH: &str = "// find the next non-zero value
kernel next_non_zero(positions: global mut [u32], values: global [u32]) {
    let i = get_global_id(0);
    let mut j = i;
    while values[j] == 0 {
        j += 1;
    }
    positions[i] = j;
}
";
    let bundle = kdsl::compile("search.krn", SEARCH, &kdsl::default_targets(), &checked()).unwrap();
    let device =
        Device::default().expect("a device (the OpenCL CPU device after scripts/setup.sh)");
    let kernel = device
        .load(&bundle)
        .unwrap()
        .kernel("next_non_zero")
        .unwrap();
    let n = 256usize;
    let last_non_zero = 200usize;
    let values: Vec<u32> = (0..n)
        .map(|i| u32::from(i % 50 == 0 && i <= last_non_zero))
        .collect();
    let value_buffer = device.buffer_from(&values).unwrap();
    let mut positions = device.buffer_from(&vec![u32::MAX; n]).unwrap();
    let result = kernel
        .launch(
            &Launch::new([n], [64]),
            &args![&mut positions, &value_buffer],
        )
        .unwrap()
        .wait();
    let Err(RuntimeError::KernelFault(fault)) = result else {
        panic!("expected a KernelFault, got {result:?}");
    };
    assert_eq!(fault.kind, FaultKind::OutOfBounds);
    assert_eq!(fault.location, "search.krn:5:11");
    assert_eq!((fault.index, fault.length), (n as i128, n as u64));
    assert!((last_non_zero as u64 + 1..n as u64).contains(&fault.work_item[0]));
    let found = positions.read_to_vec().unwrap();
    for (i, &position) in found.iter().enumerate().take(last_non_zero + 1) {
        let want = (i..n).find(|&j| values[j] != 0).unwrap() as u32;
        assert_eq!(position, want, "work-item {i} did not fault");
    }
}
