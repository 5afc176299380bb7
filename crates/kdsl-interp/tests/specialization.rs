//! Compile-time definitions and required work-group sizes, as the interpreter runs them.

mod common;

use common::workspace;
use kdsl_frontend::{compile_to_ir_with_defines, Define};
use kdsl_interp::{run_kernel, InterpArgument, InterpError, InterpLaunch};

fn work_group_size_kernels(defines: &[Define]) -> kdsl_ir::Module {
    let path = workspace().join("tests/kernels/work_group_size.krn");
    let source = std::fs::read_to_string(path).unwrap();
    compile_to_ir_with_defines(&source, defines)
        .unwrap_or_else(|diagnostics| panic!("{diagnostics:#?}"))
}

/// `block_sums` over 256 values with groups of `block`: one sum per group.
fn block_sums(module: &kdsl_ir::Module, block: u32) -> Result<Vec<f32>, InterpError> {
    let input: Vec<f32> = (0..256).map(|i| i as f32).collect();
    let mut arguments = vec![
        InterpArgument::buffer(vec![0.0f32; (256 / block) as usize]),
        InterpArgument::buffer(input),
    ];
    run_kernel(
        module,
        "block_sums",
        &InterpLaunch::new([256], [block]),
        &mut arguments,
    )?;
    Ok(arguments[0].as_slice::<f32>().unwrap().to_vec())
}

/// The sum of `block` consecutive integers starting at each multiple of `block`.
fn expected_sums(block: u32) -> Vec<f32> {
    (0..256 / block)
        .map(|group| (group * block..(group + 1) * block).sum::<u32>() as f32)
        .collect()
}

#[test]
fn a_defined_constant_changes_what_the_kernel_computes() {
    let declared = work_group_size_kernels(&[]);
    assert_eq!(block_sums(&declared, 64).unwrap(), expected_sums(64));
    let defined = work_group_size_kernels(&[Define::new("BLOCK", 16)]);
    let sums = block_sums(&defined, 16).unwrap();
    assert_eq!(sums.len(), 16);
    assert_eq!(sums, expected_sums(16));
    // The defined value is what the module records for the bundle.
    let block = defined
        .constants
        .iter()
        .find(|c| c.name == "BLOCK")
        .unwrap();
    assert_eq!(block.value, kdsl_ir::Literal::Integer(16));
    assert!(block.defined);
}

#[test]
fn another_work_group_size_is_an_invalid_launch() {
    let module = work_group_size_kernels(&[]);
    match block_sums(&module, 32) {
        Err(InterpError::InvalidLaunch(message)) => {
            assert!(
                message.contains("`block_sums` requires work-groups of [64, 1, 1]"),
                "{message}"
            );
            assert!(message.contains("[32, 1, 1]"), "{message}");
        }
        other => panic!("expected an invalid launch, got {other:?}"),
    }
}

#[test]
fn work_group_size_constants_shape_the_local_arrays() {
    let module = work_group_size_kernels(&[]);
    // reverse_tiles: an image of 16 x 8 in tiles of 8 x 4, each reversed in both directions.
    let (width, height) = (16u32, 8u32);
    let input: Vec<u32> = (0..width * height).collect();
    let mut arguments = vec![
        InterpArgument::buffer(vec![0u32; input.len()]),
        InterpArgument::buffer(input.clone()),
        InterpArgument::scalar(width),
    ];
    run_kernel(
        &module,
        "reverse_tiles",
        &InterpLaunch::new([width, height], [8, 4]),
        &mut arguments,
    )
    .unwrap();
    let output = arguments[0].as_slice::<u32>().unwrap();
    for y in 0..height {
        for x in 0..width {
            let (tile_x, tile_y) = (x / 8 * 8, y / 4 * 4);
            let source = (tile_y + 3 - (y - tile_y)) * width + tile_x + 7 - (x - tile_x);
            assert_eq!(
                output[(y * width + x) as usize],
                input[source as usize],
                "({x}, {y})"
            );
        }
    }
    // group_shape: the constants equal the launched sizes in all three dimensions.
    let mut arguments = vec![InterpArgument::buffer(vec![0u32; 8 * 4 * 4 * 2])];
    run_kernel(
        &module,
        "group_shape",
        &InterpLaunch::new([8, 4, 4], [4, 2, 2]),
        &mut arguments,
    )
    .unwrap();
    let output = arguments[0].as_slice::<u32>().unwrap();
    assert!(
        output.chunks(2).all(|pair| pair == [422, 422]),
        "{output:?}"
    );
}
