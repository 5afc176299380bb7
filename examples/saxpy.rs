//! Compiles `examples/saxpy.krn` for every target, runs it on the default device (a GPU before
//! a CPU; `KDSL_DEVICE` picks another) and checks the result against the host.
//!
//! `cargo run --release --example saxpy`

use kdsl::runtime::{args, Device, Launch};
use kdsl::CompileOptions;
use std::process::ExitCode;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("{message}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/saxpy.krn");
    let source = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let started = std::time::Instant::now();
    let bundle = kdsl::compile(
        "saxpy.krn",
        &source,
        &kdsl::default_targets(),
        &CompileOptions::default(),
    )
    .map_err(|error| error.render("examples/saxpy.krn", &source, false))?;
    println!(
        "compiled saxpy.krn in {:.1} ms: {}",
        started.elapsed().as_secs_f64() * 1e3,
        bundle.describe_images()
    );

    let device = Device::default().map_err(|e| e.to_string())?;
    println!("device: {}", device.info());
    let saxpy = device
        .load(&bundle)
        .and_then(|program| program.kernel("saxpy"))
        .map_err(|e| e.to_string())?;

    let n = 1_000_000usize;
    let x: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.5).collect();
    let y: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let a = 3.0f32;
    let run_on_device = || -> Result<(Vec<f32>, u64), kdsl::runtime::RuntimeError> {
        let x_buffer = device.buffer_from(&x)?;
        let mut y_buffer = device.buffer_from(&y)?;
        let event = saxpy.launch(
            &Launch::covering(n, 256),
            &args![&mut y_buffer, &x_buffer, a, n as u32],
        )?;
        let nanoseconds = event.elapsed_ns()?;
        Ok((y_buffer.read_to_vec()?, nanoseconds))
    };
    let (result, nanoseconds) = run_on_device().map_err(|e| e.to_string())?;
    let wrong = (0..n).filter(|&i| result[i] != a * x[i] + y[i]).count();
    if wrong > 0 {
        return Err(format!("saxpy gave {wrong} wrong elements of {n}"));
    }
    println!(
        "saxpy on {n} elements: correct, kernel time {:.3} ms",
        nanoseconds as f64 / 1e6
    );
    Ok(())
}
