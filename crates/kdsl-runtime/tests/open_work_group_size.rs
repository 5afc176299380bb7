//! Launches that leave the work-group size open (`Launch::global_only`), on every device here:
//! SYCL devices choose it themselves (any global size works, a prime one too); CUDA devices get
//! a divisor of the global size within the driver's occupancy block size. Run on the GPU with
//! `KDSL_TEST_DEVICE=cuda`.

mod common;

use kdsl_runtime::{args, Device, Launch};

fn devices() -> Vec<Device> {
    let wanted = std::env::var("KDSL_TEST_DEVICE").unwrap_or_default();
    kdsl_runtime::devices()
        .into_iter()
        .filter(|info| wanted.is_empty() || info.id().starts_with(&wanted))
        .map(|info| Device::select(&info.id()).expect("a listed device opens"))
        .collect()
}

#[test]
fn open_work_group_sizes_cover_exactly_the_global_size() {
    let bundle = common::handmade_bundle();
    for device in devices() {
        let program = match device.load(&bundle) {
            Ok(program) => program,
            Err(error) => {
                eprintln!("skipped {}: {error}", device.info().id());
                continue;
            }
        };
        let saxpy = program.kernel("saxpy").unwrap();
        for n in [1usize, 997, 1000, 4096] {
            let x = device.buffer_from(&vec![2.0f32; n]).unwrap();
            let mut y = device.buffer_from(&vec![1.0f32; n]).unwrap();
            saxpy
                .launch(
                    &Launch::global_only([n]),
                    &args![&mut y, &x, 3.0f32, n as u32],
                )
                .unwrap()
                .wait()
                .unwrap();
            assert_eq!(
                y.read_to_vec().unwrap(),
                vec![7.0f32; n],
                "n = {n} on {}",
                device.info().id()
            );
        }
        // 2-D, dimension 0 fastest: id0 + 1000 * id1 at id1 * width + id0.
        let global_ids = program.kernel("global_ids").unwrap();
        let (width, height) = (37usize, 23usize);
        let mut output = device.alloc::<u32>(width * height).unwrap();
        output.fill(u32::MAX).unwrap();
        global_ids
            .launch(
                &Launch::global_only([width, height]),
                &args![&mut output, width as u32],
            )
            .unwrap()
            .wait()
            .unwrap();
        let want: Vec<u32> = (0..height)
            .flat_map(|y| (0..width).map(move |x| (x + 1000 * y) as u32))
            .collect();
        assert_eq!(
            output.read_to_vec().unwrap(),
            want,
            "on {}",
            device.info().id()
        );
        assert!(saxpy
            .launch(
                &Launch::global_only([0]),
                &args![&mut output_f32(&device), &output_f32(&device), 1.0f32, 0u32]
            )
            .is_err());
    }
}

fn output_f32(device: &Device) -> kdsl_runtime::Buffer<f32> {
    device.buffer_from(&[0.0f32; 4]).unwrap()
}
