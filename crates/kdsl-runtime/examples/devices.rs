//! Lists the devices every backend finds and, given a bundle with a `saxpy` kernel, runs it on
//! each: `cargo run -p kdsl-runtime --example devices -- target/kdsl-bundles/saxpy.kbundle`.

use kdsl_runtime::{args, device_report, Bundle, Device, Launch};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let report = device_report();
    for note in &report.notes {
        println!("note: {note}");
    }
    for info in &report.devices {
        println!("{info}");
    }
    let Some(path) = std::env::args().nth(1) else {
        return Ok(());
    };
    let bundle = Bundle::read(&path)?;
    for info in &report.devices {
        let device = Device::open(info)?;
        let program = device.load(&bundle)?;
        let saxpy = program.kernel("saxpy")?;
        let n = 1 << 20;
        let x = device.buffer_from(&vec![1.0f32; n])?;
        let mut y = device.buffer_from(&vec![2.0f32; n])?;
        let event = saxpy.launch(
            &Launch::covering(n, 256),
            &args![&mut y, &x, 3.0f32, n as u32],
        )?;
        let nanoseconds = event.elapsed_ns()?;
        let correct = y.read_to_vec()?.iter().all(|&v| v == 5.0);
        println!(
            "{}: saxpy of {n} elements with the {} image took {nanoseconds} ns, result {}",
            info.id(),
            program.image(),
            if correct { "correct" } else { "WRONG" }
        );
    }
    Ok(())
}
