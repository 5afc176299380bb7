//! The whole pipeline through the facade crate, as a program embedding kdsl uses it: source
//! text to bundle to a launched kernel on the default device, and compile errors as values.

use kdsl::runtime::{args, Device, Launch};
use kdsl::{CompileOptions, TargetKind};

const SOURCE: &str = r#"
const SCALE: f32 = 0.5;

fn clamp_to_unit(x: f32) -> f32 {
    return clamp(x, 0.0, 1.0);
}

kernel blend<T>(output: global mut [T], left: global [T], right: global [T], weight: T, n: u32) {
    let i = get_global_id(0);
    if i < n {
        output[i] = fma(weight, left[i] - right[i], right[i]);
    }
}
instance blend_f32 = blend<f32>;
instance blend_f64 = blend<f64>;

kernel squash(values: global mut [f32], n: u32) {
    for i in get_global_id(0)..n step get_global_size(0) {
        values[i] = clamp_to_unit(values[i] * SCALE);
    }
}
"#;

#[test]
fn compiles_for_every_target_and_runs_on_the_default_device() {
    let bundle = kdsl::compile(
        "pipeline.krn",
        SOURCE,
        &kdsl::default_targets(),
        &CompileOptions::default(),
    )
    .unwrap_or_else(|error| panic!("{}", error.render("pipeline.krn", SOURCE, false)));
    let names: Vec<&str> = bundle.kernels.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["blend_f32", "blend_f64", "squash"]);
    for kind in TargetKind::ALL {
        assert!(bundle.images_for(kind).next().is_some(), "no {kind} image");
    }

    let device =
        Device::default().expect("a device (the OpenCL CPU device after scripts/setup.sh)");
    let program = device.load(&bundle).unwrap();

    let n = 10_000usize;
    let left: Vec<f64> = (0..n).map(|i| i as f64 * 0.25).collect();
    let right: Vec<f64> = (0..n).map(|i| 100.0 - i as f64).collect();
    let weight = 0.75f64;
    let left_buffer = device.buffer_from(&left).unwrap();
    let right_buffer = device.buffer_from(&right).unwrap();
    let mut output = device.alloc::<f64>(n).unwrap();
    program
        .kernel("blend_f64")
        .unwrap()
        .launch(
            &Launch::covering(n, 64),
            &args![&mut output, &left_buffer, &right_buffer, weight, n as u32],
        )
        .unwrap()
        .wait()
        .unwrap();
    let result = output.read_to_vec().unwrap();
    for i in 0..n {
        let expected = weight.mul_add(left[i] - right[i], right[i]);
        assert!(
            (result[i] - expected).abs() <= 1e-12 * expected.abs().max(1.0),
            "blend_f64[{i}] = {}, expected {expected}",
            result[i]
        );
    }

    // Fewer work-items than elements: the strided loop covers the rest.
    let values: Vec<f32> = (0..n).map(|i| i as f32 / 2500.0 - 1.0).collect();
    let mut buffer = device.buffer_from(&values).unwrap();
    program
        .kernel("squash")
        .unwrap()
        .launch(&Launch::covering(1024, 64), &args![&mut buffer, n as u32])
        .unwrap()
        .wait()
        .unwrap();
    let squashed = buffer.read_to_vec().unwrap();
    for i in 0..n {
        assert_eq!(
            squashed[i],
            (values[i] * 0.5).clamp(0.0, 1.0),
            "squash[{i}]"
        );
    }
}

#[test]
fn compile_errors_are_values_with_rendered_diagnostics() {
    let source =
        "kernel broken(out: global [f32]) {\n    out[0] = 1.0;\n    let y = undefined_name;\n}\n";
    let error = kdsl::compile(
        "broken.krn",
        source,
        &[kdsl::TargetSpec::spirv()],
        &CompileOptions::default(),
    )
    .expect_err("the source has errors");
    assert_eq!(error.diagnostics.len(), 2, "{:?}", error.diagnostics);
    let rendered = error.render("broken.krn", source, false);
    assert!(rendered.contains("broken.krn:2:5"), "{rendered}");
    assert!(rendered.contains("broken.krn:3:13"), "{rendered}");
    assert!(rendered.contains("hint"), "{rendered}");
}

#[test]
fn an_unknown_processor_is_an_error_not_a_crash() {
    let error = kdsl::compile(
        "saxpy.krn",
        "kernel k(n: u32) {}",
        &[kdsl::TargetSpec::amdgpu(Some("gfx_not_a_gpu"))],
        &CompileOptions::default(),
    )
    .expect_err("gfx_not_a_gpu is no processor");
    let rendered = error.render("saxpy.krn", "kernel k(n: u32) {}", false);
    assert!(rendered.contains("gfx_not_a_gpu"), "{rendered}");
}

#[test]
fn defined_constants_reach_the_bundle_and_the_device() {
    let options = CompileOptions::default().define("SCALE", 0.25);
    let bundle = kdsl::compile(
        "pipeline.krn",
        SOURCE,
        &[kdsl::TargetSpec::spirv(), kdsl::TargetSpec::ptx(None)],
        &options,
    )
    .unwrap_or_else(|error| panic!("{}", error.render("pipeline.krn", SOURCE, false)));
    let scale = bundle.constant("SCALE").expect("SCALE is recorded");
    assert_eq!((scale.value.as_f64(), scale.defined), (Some(0.25), true));
    // The host takes the value from the bundle, not from a copy of the source.
    let scale = scale.value.as_f64().unwrap() as f32;

    let device =
        Device::default().expect("a device (the OpenCL CPU device after scripts/setup.sh)");
    let squash = device.load(&bundle).unwrap().kernel("squash").unwrap();
    let n = 4096usize;
    let values: Vec<f32> = (0..n).map(|i| i as f32 / 1000.0).collect();
    let mut buffer = device.buffer_from(&values).unwrap();
    squash
        .launch(&Launch::covering(n, 64), &args![&mut buffer, n as u32])
        .unwrap()
        .wait()
        .unwrap();
    let squashed = buffer.read_to_vec().unwrap();
    for i in 0..n {
        assert_eq!(
            squashed[i],
            (values[i] * scale).clamp(0.0, 1.0),
            "squash[{i}]"
        );
    }

    let wrong = CompileOptions::default().define("SCALE", true);
    let error = kdsl::compile("pipeline.krn", SOURCE, &[kdsl::TargetSpec::spirv()], &wrong)
        .expect_err("a bool for an f32 constant");
    assert_eq!(error.diagnostics[0].code, "E0702");
    let rendered = error.render("pipeline.krn", SOURCE, false);
    assert!(rendered.contains("`-D SCALE=true`"), "{rendered}");
    assert!(rendered.contains("pipeline.krn:2:7"), "{rendered}");
}

/// Processor names are one definition (`kdsl_bundle::processors`): a bundle the compiler builds
/// for `sm_100f` (Blackwell's family-specific PTX) alone is the image the runtime chooses for a
/// device of compute capability 10.0 or 10.3, and no image fits 9.0 or 12.0.
#[test]
fn a_bundle_for_sm_100f_alone_is_chosen_for_compute_capability_10() {
    use kdsl::runtime::image::select_image;
    use kdsl::runtime::DeviceTarget;
    let bundle = kdsl::compile(
        "blend.krn",
        SOURCE,
        &[kdsl::TargetSpec::ptx(Some("sm_100f"))],
        &CompileOptions::default(),
    )
    .expect("compiles for sm_100f");
    let chosen = |major, minor| {
        select_image(&bundle, &DeviceTarget::Ptx { major, minor })
            .ok()
            .map(|image| image.describe())
    };
    assert_eq!(chosen(10, 0).as_deref(), Some("ptx:sm_100f"));
    assert_eq!(chosen(10, 3).as_deref(), Some("ptx:sm_100f"));
    assert_eq!(chosen(9, 0), None);
    assert_eq!(chosen(12, 0), None);
}

/// A 16 x 16 x 32 product of `f16` tiles staged in local memory (one work-group of 64).
const MATRIX_SOURCE: &str = r#"
kernel mma16(d: global mut [f32], a: global [f32], b: global [f32]) {
    local a_block: [f16; 256];
    local b_block: [f16; 256];
    let item = get_local_id(0);
    let mut acc: [f32; 256];
    let mut a_tile: [f16; 256];
    let mut b_tile: [f16; 256];
    matrix_fill(acc, 0.0);
    for depth in 0u32..32 step 16 {
        for e in item..256 step 64 {
            a_block[e] = a[e / 16 * 32 + depth + e % 16] as f16;
            b_block[e] = b[(depth + e / 16) * 16 + e % 16] as f16;
        }
        barrier();
        if get_sub_group_id() == 0 {
            matrix_load_a(a_tile, a_block, 0, 16);
            matrix_load_b(b_tile, b_block, 0, 16);
            matrix_mma(acc, a_tile, b_tile, acc);
        }
        barrier();
    }
    if get_sub_group_id() == 0 {
        matrix_store(acc, d, 0, 16);
    }
}
"#;

/// A bundle with both SPIR-V images, the Intel GPU's (cooperative matrices) first: the CPU
/// device takes the plain one and computes the product exactly (small integers in `f16`).
#[test]
fn the_cpu_device_takes_the_plain_image_beside_an_intel_gpus() {
    let targets = [
        kdsl::TargetSpec::new(TargetKind::Spirv, Some("intel_gpu_pvc".into())),
        kdsl::TargetSpec::new(TargetKind::Spirv, None),
    ];
    let bundle = kdsl::compile(
        "mma16.krn",
        MATRIX_SOURCE,
        &targets,
        &CompileOptions::default(),
    )
    .unwrap_or_else(|error| panic!("{}", error.render("mma16.krn", MATRIX_SOURCE, false)));
    let images: Vec<(String, bool)> = bundle
        .images
        .iter()
        .map(|image| (image.describe(), image.matrix_units))
        .collect();
    assert_eq!(
        images,
        [
            ("spirv:intel_gpu_pvc".to_string(), true),
            ("spirv".to_string(), false)
        ]
    );
    // Through the file format, as a program loads a compiled bundle.
    let bundle = kdsl::Bundle::from_bytes(&bundle.to_bytes()).unwrap();
    let device =
        Device::default().expect("a device (the OpenCL CPU device after scripts/setup.sh)");
    if device.info().target != kdsl::runtime::DeviceTarget::Spirv {
        eprintln!("skipped: {} is no plain SPIR-V device", device.info().name);
        return;
    }
    let chosen = kdsl::runtime::image::select_image(&bundle, &device.info().target).unwrap();
    assert_eq!(chosen.describe(), "spirv");
    let program = device.load(&bundle).unwrap();
    let a: Vec<f32> = (0..16 * 32).map(|i| ((i * 7) % 9) as f32 - 4.0).collect();
    let b: Vec<f32> = (0..32 * 16).map(|i| ((i * 5) % 7) as f32 - 3.0).collect();
    let a_buffer = device.buffer_from(&a).unwrap();
    let b_buffer = device.buffer_from(&b).unwrap();
    let mut d = device.alloc::<f32>(256).unwrap();
    program
        .kernel("mma16")
        .unwrap()
        .launch(
            &Launch::new([64, 1, 1], [64, 1, 1]),
            &args![&mut d, &a_buffer, &b_buffer],
        )
        .unwrap()
        .wait()
        .unwrap();
    let d = d.read_to_vec().unwrap();
    for row in 0..16 {
        for column in 0..16 {
            let expected: f32 = (0..32).map(|k| a[row * 32 + k] * b[k * 16 + column]).sum();
            assert_eq!(d[row * 16 + column], expected, "d[{row}][{column}]");
        }
    }
}

/// One tf32 tile product per sub-group, every sub-group the same: D = A x B + C, stored to
/// the sub-group's own 256 elements of `d`.
const TILE_PER_SUB_GROUP: &str = r#"
kernel tile_per_sub_group(d: global mut [f32], a: global [f32], b: global [f32], c: global [f32]) {
    let mut acc: [f32; 256];
    let mut a_tile: [f32; 128];
    let mut b_tile: [f32; 128];
    matrix_load_c(acc, c, 0, 16);
    matrix_load_a(a_tile, a, 0, 8);
    matrix_load_b(b_tile, b, 0, 16);
    matrix_mma(acc, a_tile, b_tile, acc);
    let sub_group = get_group_id(0) * get_num_sub_groups() + get_sub_group_id();
    matrix_store(acc, d, sub_group * 256, 16);
}
"#;

/// Plain SPIR-V lays tiles out for sub-groups of 16 (`kdsl_ir::matrix::PlainLayout::Lanes`):
/// the image records it, a launch whose work-groups are not whole sub-groups is a launch
/// error that leaves the queue usable, and an open launch gets whole sub-groups.
#[test]
fn tiles_in_lanes_of_16_refuse_partial_sub_groups() {
    let bundle = kdsl::compile(
        "tiles.krn",
        TILE_PER_SUB_GROUP,
        &[kdsl::TargetSpec::spirv()],
        &CompileOptions::default(),
    )
    .unwrap_or_else(|error| panic!("{}", error.render("tiles.krn", TILE_PER_SUB_GROUP, false)));
    let bundle = kdsl::Bundle::from_bytes(&bundle.to_bytes()).unwrap();
    assert_eq!(bundle.images[0].tile_sub_group_size, Some(16));
    assert!(bundle.kernels[0].tiles);
    let device =
        Device::default().expect("a device (the OpenCL CPU device after scripts/setup.sh)");
    if device.info().target != kdsl::runtime::DeviceTarget::Spirv {
        eprintln!("skipped: {} is no plain SPIR-V device", device.info().name);
        return;
    }
    let a: Vec<f32> = (0..128).map(|i| ((i * 7) % 9) as f32 - 4.0).collect();
    let b: Vec<f32> = (0..128).map(|i| ((i * 5) % 7) as f32 - 3.0).collect();
    let c: Vec<f32> = (0..256).map(|i| (i % 5) as f32).collect();
    let expected: Vec<f32> = (0..256)
        .map(|i| {
            let (row, column) = (i / 16, i % 16);
            c[i] + (0..8)
                .map(|k| a[row * 8 + k] * b[k * 16 + column])
                .sum::<f32>()
        })
        .collect();
    let program = device.load(&bundle).unwrap();
    let kernel = program.kernel("tile_per_sub_group").unwrap();
    let (a, b, c) = (
        device.buffer_from(&a).unwrap(),
        device.buffer_from(&b).unwrap(),
        device.buffer_from(&c).unwrap(),
    );
    let mut d = device.alloc::<f32>(8 * 256).unwrap();
    let error = kernel
        .launch(&Launch::new([48], [24]), &args![&mut d, &a, &b, &c])
        .expect_err("24 work-items are no whole sub-groups of 16");
    assert!(
        matches!(error, kdsl::runtime::RuntimeError::BadLaunch { .. })
            && error.to_string().contains("need whole sub-groups of 16"),
        "{error}"
    );
    for launch in [Launch::new([64], [32]), Launch::global_only([128])] {
        let mut d = device.alloc::<f32>(8 * 256).unwrap();
        kernel
            .launch(&launch, &args![&mut d, &a, &b, &c])
            .unwrap()
            .wait()
            .unwrap();
        let got = d.read_to_vec().unwrap();
        let sub_groups = launch.global()[0] as usize / 16;
        for sub_group in 0..sub_groups {
            assert_eq!(
                &got[sub_group * 256..(sub_group + 1) * 256],
                &expected[..],
                "sub-group {sub_group} of {launch:?}"
            );
        }
    }
}
