//! Multi-dimensional buffers through the facade: the bundle records each one's rank and hidden
//! parameters, `ShapedArgument` passes a buffer with its shape and strides, the runtime refuses
//! a shape that reaches past its buffer, and checked mode checks every dimension.

use kdsl::runtime::{Argument, Device, FaultKind, Launch, RuntimeError, ShapedArgument};
use kdsl::{CompileOptions, TargetSpec};

const SOURCE: &str = "// scaled copy of a 2-D array
kernel scale(output: global mut [[f32]], input: global [[f32]], factor: f32) {
    let col = get_global_id(0);
    let row = get_global_id(1);
    if row < output.shape(0) && col < output.shape(1) {
        output[row, col] = input[row, col] * factor;
    }
}

// reads row 0 at column `i + shift`
kernel first_row(output: global mut [f32], matrix: global [[f32]], shift: u32) {
    let i = get_global_id(0);
    output[i] = matrix[0, i + shift];
}

fn at(m: global [[f32]], row: u32, col: u32) -> f32 {
    return m[row, col];
}

// the same through a device function
kernel first_row_through_call(output: global mut [f32], matrix: global [[f32]], shift: u32) {
    let i = get_global_id(0);
    output[i] = at(matrix, 0, i + shift);
}
";

fn compile(checked: bool) -> kdsl::Bundle {
    let options = CompileOptions {
        checked,
        ..CompileOptions::default()
    };
    kdsl::compile("shaped.krn", SOURCE, &[TargetSpec::spirv()], &options).unwrap()
}

fn device() -> Device {
    Device::default().expect("a device (the OpenCL CPU device after scripts/setup.sh)")
}

#[test]
fn the_bundle_records_rank_and_hidden_parameters() {
    let bundle = compile(false);
    let scale = &bundle.kernels[0];
    let names: Vec<&str> = scale.parameters.iter().map(|p| p.name()).collect();
    assert_eq!(
        names,
        [
            "output",
            "output.shape0",
            "output.shape1",
            "output.stride0",
            "output.stride1",
            "input",
            "input.shape0",
            "input.shape1",
            "input.stride0",
            "input.stride1",
            "factor"
        ]
    );
    let shaped = &scale.shaped_buffers;
    assert_eq!(shaped.len(), 2);
    assert_eq!(
        (
            shaped[1].buffer,
            shaped[1].rank,
            &shaped[1].shape,
            &shaped[1].strides
        ),
        (5, 2, &vec![6, 7], &vec![8, 9])
    );
    assert!(scale.is_layout_parameter(3) && !scale.is_layout_parameter(10));
}

#[test]
fn shaped_arguments_pass_contiguous_and_transposed_arrays() {
    let device = device();
    let kernel = device
        .load(&compile(false))
        .unwrap()
        .kernel("scale")
        .unwrap();
    let (rows, cols) = (5u32, 7u32);
    // `stored` holds a cols x rows matrix; its transpose is the rows x cols input.
    let stored: Vec<f32> = (0..rows * cols).map(|i| i as f32).collect();
    let input = device.buffer_from(&stored).unwrap();
    let mut output = device
        .buffer_from(&vec![0.0f32; (rows * cols) as usize])
        .unwrap();
    let mut arguments = ShapedArgument::contiguous(&mut output, &[rows, cols]).arguments();
    arguments
        .extend(ShapedArgument::strided(&input, &[rows, cols], &[1, u64::from(rows)]).arguments());
    arguments.push(Argument::scalar(2.0f32));
    kernel
        .launch(&Launch::new([8, 8], [8, 8]), &arguments)
        .unwrap()
        .wait()
        .unwrap();
    let got = output.read_to_vec().unwrap();
    for row in 0..rows {
        for col in 0..cols {
            let want = stored[(col * rows + row) as usize] * 2.0;
            assert_eq!(got[(row * cols + col) as usize], want, "[{row}, {col}]");
        }
    }
}

#[test]
fn each_kernel_names_its_contiguous_entry() {
    let bundle = compile(false);
    let entries: Vec<Option<&str>> = bundle
        .kernels
        .iter()
        .map(|kernel| kernel.contiguous_entry.as_deref())
        .collect();
    assert_eq!(
        entries,
        [
            Some("scale$contiguous"),
            Some("first_row$contiguous"),
            Some("first_row_through_call$contiguous")
        ]
    );
}

/// A launch whose innermost strides are all 1 runs the kernel's contiguous entry point, any
/// other the kernel's own: here the copy is marked (it reads `factor` as 0) so that the output
/// shows which ran.
#[test]
fn unit_innermost_strides_launch_the_contiguous_entry() {
    let mut module = kdsl::check(SOURCE).unwrap();
    let scale = module
        .functions
        .iter()
        .position(|f| f.name == "scale")
        .unwrap();
    let copy = module.functions[scale].contiguous_entry.unwrap();
    let copy = &mut module.functions[copy.0 as usize];
    let factor = kdsl::ir::ParameterId(copy.parameters.len() as u32 - 1);
    kdsl::ir::visit_mut::rewrite_block(&mut copy.body, &mut |expression| {
        if matches!(expression.kind, kdsl::ir::ExpressionKind::Parameter(id) if id == factor) {
            expression.kind = kdsl::ir::ExpressionKind::Literal(kdsl::ir::Literal::Float(0.0));
        }
    });
    let options = kdsl_codegen::Options::default();
    let bundle =
        kdsl_codegen::compile_bundle("shaped.krn", &module, &[TargetSpec::spirv()], &options)
            .unwrap();
    let device = device();
    let kernel = device.load(&bundle).unwrap().kernel("scale").unwrap();
    let (rows, cols) = (4u32, 6u32);
    let stored: Vec<f32> = (1..=rows * cols).map(|i| i as f32).collect();
    let input = device.buffer_from(&stored).unwrap();
    // Row-major input and output; a transposed input; rows of every other element.
    for (input_strides, want_copy) in [([6, 1], true), ([1, 4], false), ([3, 2], false)] {
        let shape = match input_strides {
            [3, 2] => [rows, 3],
            _ => [rows, cols],
        };
        let mut output = device.buffer_from(&vec![-1.0f32; stored.len()]).unwrap();
        let mut arguments = ShapedArgument::contiguous(&mut output, &shape).arguments();
        let strided = ShapedArgument::strided(&input, &shape, &input_strides);
        arguments.extend(strided.arguments());
        arguments.push(Argument::scalar(2.0f32));
        kernel
            .launch(&Launch::new([8, 8], [4, 4]), &arguments)
            .unwrap()
            .wait()
            .unwrap();
        let got = output.read_to_vec().unwrap();
        for row in 0..rows as u64 {
            for col in 0..u64::from(shape[1]) {
                let element = stored[(row * input_strides[0] + col * input_strides[1]) as usize];
                let want = if want_copy { 0.0 } else { element * 2.0 };
                assert_eq!(
                    got[(row * u64::from(shape[1]) + col) as usize],
                    want,
                    "strides {input_strides:?}, [{row}, {col}]"
                );
            }
        }
    }
}

#[test]
fn a_shape_past_the_buffer_is_refused_at_launch() {
    let device = device();
    let kernel = device
        .load(&compile(false))
        .unwrap()
        .kernel("scale")
        .unwrap();
    let input = device.buffer_from(&[1.0f32; 12]).unwrap();
    let mut output = device.buffer_from(&[0.0f32; 16]).unwrap();
    let mut arguments = ShapedArgument::contiguous(&mut output, &[4, 4]).arguments();
    // 4 x 4 over 12 elements.
    arguments.extend(ShapedArgument::contiguous(&input, &[4, 4]).arguments());
    arguments.push(Argument::scalar(2.0f32));
    let error = kernel
        .launch(&Launch::new([4, 4], [4, 4]), &arguments)
        .expect_err("the input's shape reaches past its 12 elements");
    assert!(
        matches!(
            error,
            RuntimeError::ShapeOutsideBuffer {
                index: 5,
                length: 12,
                ..
            }
        ),
        "{error}"
    );
    assert!(error.to_string().contains("`input`"), "{error}");
}

#[test]
fn checked_mode_checks_each_dimension() {
    checked_first_row(
        "first_row",
        "buffer `matrix` (dimension 2 of 2)",
        "shaped.krn:13:27",
    );
    checked_first_row(
        "first_row_through_call",
        "buffer `m` (dimension 2 of 2) in function `at`",
        "shaped.krn:17:19",
    );
}

/// Both entry points report their faults as the kernel's: the contiguous one (row-major
/// strides) and the kernel's own (a transposed matrix).
fn checked_first_row(name: &str, what: &str, location: &str) {
    for strides in [[4, 1], [1, 4]] {
        checked_first_row_with(name, what, location, strides);
    }
}

fn checked_first_row_with(name: &str, what: &str, location: &str, strides: [u64; 2]) {
    let device = device();
    let kernel = device.load(&compile(true)).unwrap().kernel(name).unwrap();
    let matrix = device.buffer_from(&[3.0f32; 16]).unwrap();
    let output = device.buffer_from(&[-1.0f32; 4]).unwrap();
    let mut arguments = vec![Argument::writable(&output)];
    arguments.extend(ShapedArgument::strided(&matrix, &[4, 4], &strides).arguments());
    arguments.push(Argument::scalar(1u32));
    // Work-item 3 reads column 4 of row 0: element 4 of the buffer, outside the row.
    let error = kernel
        .launch(&Launch::new([4], [4]), &arguments)
        .unwrap()
        .wait()
        .expect_err("column 4 of a 4 x 4 matrix");
    let message = error.to_string();
    let RuntimeError::KernelFault(fault) = error else {
        panic!("expected a KernelFault, got {message}");
    };
    assert_eq!(fault.kind, FaultKind::OutOfBounds);
    assert_eq!(fault.what, what);
    assert_eq!((fault.index, fault.length), (4, 4));
    assert_eq!(fault.work_item, [3, 0, 0]);
    assert_eq!(fault.location, location);
    let got = output.read_to_vec().unwrap();
    assert_eq!(got[..3], [3.0, 3.0, 3.0]);
}
