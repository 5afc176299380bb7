//! Every example kernel run on the interpreter against a reference computed here.

mod common;

use common::{assert_close, compile_file, Random};
use kdsl_interp::{run_kernel, InterpArgument, InterpLaunch};

fn widen(values: &[f32]) -> Vec<f64> {
    values.iter().map(|&v| f64::from(v)).collect()
}

#[test]
fn saxpy() {
    let module = compile_file("examples/saxpy.krn");
    let mut random = Random::new(1);
    let n = 1000usize;
    let x = random.f32s(n, -1.0, 1.0);
    let y = random.f32s(n, -1.0, 1.0);
    let a = 1.5f32;
    let mut arguments = [
        InterpArgument::buffer(y.clone()),
        InterpArgument::buffer(x.clone()),
        InterpArgument::scalar(a),
        InterpArgument::scalar(n as u32),
    ];
    run_kernel(
        &module,
        "saxpy",
        &InterpLaunch::covering(n as u32, 64),
        &mut arguments,
    )
    .unwrap();
    let want: Vec<f32> = x.iter().zip(&y).map(|(x, y)| a * x + y).collect();
    assert_eq!(arguments[0].as_slice::<f32>().unwrap(), &want[..]);
}
