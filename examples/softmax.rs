//! Loads a precompiled bundle (`kdsl compile examples/softmax.krn -o softmax.kbundle`, or the
//! one `scripts/compile-examples.sh` writes), runs the row softmax on a chosen device, and
//! checks it against the host. This is how a program that only launches kernels uses kdsl: it
//! needs the runtime alone, not the compiler.
//!
//! `cargo run --release --example softmax -- [BUNDLE] [DEVICE_FILTER]`

use kdsl::runtime::{args, Bundle, Device, Launch};
use std::process::ExitCode;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let mut arguments = std::env::args().skip(1);
    let path = arguments.next().unwrap_or_else(|| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/target/kdsl-bundles/softmax.kbundle"
        )
        .to_string()
    });
    let bundle = Bundle::read(&path)
        .map_err(|e| format!("{path}: {e} (run scripts/compile-examples.sh first)"))?;
    let device = match arguments.next() {
        Some(filter) => Device::select(&filter),
        None => Device::default(),
    }
    .map_err(|e| e.to_string())?;
    println!("device: {}", device.info());
    let softmax = device
        .load(&bundle)
        .and_then(|p| p.kernel("softmax"))
        .map_err(|e| e.to_string())?;

    let (rows, columns) = (512usize, 3000usize);
    let input: Vec<f32> = (0..rows * columns)
        .map(|i| ((i * 7919) % 1000) as f32 / 100.0 - 5.0)
        .collect();
    let input_buffer = device.buffer_from(&input).map_err(|e| e.to_string())?;
    let mut output = device
        .alloc::<f32>(rows * columns)
        .map_err(|e| e.to_string())?;
    // One work-group of 256 work-items per row.
    let event = softmax
        .launch(
            &Launch::new([rows * 256], [256]),
            &args![&mut output, &input_buffer, columns as u32],
        )
        .map_err(|e| e.to_string())?;
    let nanoseconds = event.elapsed_ns().map_err(|e| e.to_string())?;
    let result = output.read_to_vec().map_err(|e| e.to_string())?;

    let mut worst = 0.0f64;
    for (row_in, row_out) in input.chunks(columns).zip(result.chunks(columns)) {
        let max = row_in
            .iter()
            .fold(f64::NEG_INFINITY, |m, &v| m.max(f64::from(v)));
        let sum: f64 = row_in.iter().map(|&v| (f64::from(v) - max).exp()).sum();
        for (&x, &y) in row_in.iter().zip(row_out) {
            let expected = (f64::from(x) - max).exp() / sum;
            worst = worst.max((f64::from(y) - expected).abs() / expected.max(1e-6));
        }
    }
    if worst > 1e-4 {
        return Err(format!("softmax is off by a relative {worst:e}"));
    }
    println!(
        "softmax of {rows} x {columns}: correct (worst relative error {worst:.1e}), kernel time {:.3} ms",
        nanoseconds as f64 / 1e6
    );
    Ok(())
}
