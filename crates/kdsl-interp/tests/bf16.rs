//! `bf16` in the interpreter: computed in `f32`, rounded to nearest even, in kernels with
//! run-time values (not folded), and equal to what the constant folder gives.

mod common;

use common::compile;
use kdsl_interp::{bf16, run_kernel, run_kernel_with_output, InterpArgument, InterpLaunch};

fn one_item() -> InterpLaunch {
    InterpLaunch::new([1], [1])
}

fn bits(values: &[bf16]) -> Vec<u16> {
    values.iter().map(|v| v.to_bits()).collect()
}

#[test]
fn arithmetic_rounds_every_result_to_nearest_even() {
    // `one`, `tiny` (2^-8), `up` (1 + 2^-7), `max` and `min_positive` come in as arguments,
    // so nothing is folded.
    let source = "
kernel k(out: global mut [bf16], tests: global mut [u32], one: bf16, tiny: bf16,
         up: bf16, max: bf16, min_positive: bf16) {
    out[0] = one + tiny;                  // a tie: to the even 1
    out[1] = up + tiny;                 // a tie: to the even 1 + 2^-6
    out[2] = one / (one + one + one);     // 1/3
    out[3] = max + max;                   // overflows to infinity
    out[4] = -(max * max);                // -infinity
    out[5] = min_positive * (tiny * 128bf16);   // 2^-126 / 2: a subnormal
    out[6] = fma(up, up, -(up + up - one + tiny * 4bf16));
    out[7] = sqrt(one + one);
    out[8] = abs(-up);
    out[9] = max(out[3] - out[3], one);   // NaN and 1: minNum/maxNum give 1
    let nan = out[3] - out[3];
    tests[0] = select(isnan(nan), 1u32, 0u32);
    tests[1] = select(nan != nan, 1u32, 0u32);
    tests[2] = select(nan == nan, 1u32, 0u32);
    tests[3] = select(-one < tiny, 1u32, 0u32);
    tests[4] = select(isinf(out[3]), 1u32, 0u32);
}";
    let module = compile(source);
    let mut arguments = vec![
        InterpArgument::buffer(vec![bf16::ZERO; 10]),
        InterpArgument::buffer(vec![0u32; 5]),
        InterpArgument::scalar(bf16::ONE),
        InterpArgument::scalar(bf16::from_bits(0x3b80)),
        InterpArgument::scalar(bf16::from_bits(0x3f81)),
        InterpArgument::scalar(bf16::MAX),
        InterpArgument::scalar(bf16::MIN_POSITIVE),
    ];
    run_kernel(&module, "k", &one_item(), &mut arguments).unwrap();
    let out = bits(arguments[0].as_slice::<bf16>().unwrap());
    // fma: (1 + 2^-7)^2 - (1 + 2^-5) = 2^-14 - 2^-6 = -2^-7 (1 + 127/128), exact in f32 and
    // in bf16 (0xbc7f); a rounded product would give -2^-6 (0xbc80).
    assert_eq!(
        out,
        [0x3f80, 0x3f82, 0x3eab, 0x7f80, 0xff80, 0x0040, 0xbc7f, 0x3fb5, 0x3f81, 0x3f80]
    );
    assert_eq!(arguments[1].as_slice::<u32>().unwrap(), &[1, 1, 0, 1, 1]);
}

#[test]
fn conversions_round_once_from_every_type() {
    let source = "
kernel k(out: global mut [bf16], back: global mut [i64], wide: global mut [f64],
         x: f64, n: i32, big: u64, h: f16, f: f32) {
    out[0] = x as bf16;                   // 1 + 2^-8 + 2^-40: rounds up, not via f32's tie
    out[1] = n as bf16;                   // 2^24 + 2^16 + 1: rounds up, not via f32's tie
    out[2] = big as bf16;                 // u64::MAX: 2^64
    out[3] = h as bf16;                   // f16::MAX 65504: 65536
    out[4] = f as bf16;
    out[5] = (-n) as bf16;
    back[0] = out[5] as i64;
    back[1] = out[3] as i64;
    back[2] = (out[2] * out[2]) as i64;   // infinity saturates
    back[3] = ((out[2] - out[2]) * out[2]) as i64;
    back[4] = (out[3] as f16) as i64;     // 65536 is an infinite f16: saturates
    back[5] = (1.5bf16 as u8) as i64;
    wide[0] = out[0] as f64;
    wide[1] = 0.1bf16 as f64;             // the literal, rounded once to bf16
    wide[2] = bf16::EPSILON as f64;
}";
    let module = compile(source);
    let mut arguments = vec![
        InterpArgument::buffer(vec![bf16::ZERO; 6]),
        InterpArgument::buffer(vec![0i64; 6]),
        InterpArgument::buffer(vec![0f64; 3]),
        InterpArgument::scalar(1.0 + 2f64.powi(-8) + 2f64.powi(-40)),
        InterpArgument::scalar((1i32 << 24) + (1 << 16) + 1),
        InterpArgument::scalar(u64::MAX),
        InterpArgument::scalar(kdsl_interp::f16::MAX),
        InterpArgument::scalar(-2.5f32),
    ];
    run_kernel(&module, "k", &one_item(), &mut arguments).unwrap();
    let out = bits(arguments[0].as_slice::<bf16>().unwrap());
    assert_eq!(out, [0x3f81, 0x4b81, 0x5f80, 0x4780, 0xc020, 0xcb81]);
    assert_eq!(
        arguments[1].as_slice::<i64>().unwrap(),
        &[-16908288, 65536, i64::MAX, 0, i64::MAX, 1]
    );
    assert_eq!(
        arguments[2].as_slice::<f64>().unwrap(),
        &[1.0078125, 0.10009765625, 0.0078125]
    );
}

#[test]
fn constants_fold_as_the_interpreter_computes() {
    // The same expressions folded (module constants) and computed at run time.
    let source = "
const ONE: bf16 = 1.0bf16;
const TIE: bf16 = ONE + 0.00390625bf16;
const THIRD: bf16 = ONE / 3.0bf16;
const ROUNDED: bf16 = round(2.5bf16);
const WIDE: f32 = (16777217 as bf16) as f32;
kernel k(folded: global mut [bf16], computed: global mut [bf16], one: bf16, wide: f32) {
    folded[0] = TIE;
    folded[1] = THIRD;
    folded[2] = ROUNDED;
    folded[3] = WIDE as bf16;
    computed[0] = one + 0.00390625bf16;
    computed[1] = one / 3.0bf16;
    computed[2] = round(one + one + 0.5bf16);
    computed[3] = wide as bf16;
}";
    let module = compile(source);
    let mut arguments = vec![
        InterpArgument::buffer(vec![bf16::ZERO; 4]),
        InterpArgument::buffer(vec![bf16::ZERO; 4]),
        InterpArgument::scalar(bf16::ONE),
        InterpArgument::scalar(16777216f32),
    ];
    run_kernel(&module, "k", &one_item(), &mut arguments).unwrap();
    let folded = bits(arguments[0].as_slice::<bf16>().unwrap());
    assert_eq!(folded, [0x3f80, 0x3eab, 0x4040, 0x4b80]);
    assert_eq!(bits(arguments[1].as_slice::<bf16>().unwrap()), folded);
}

#[test]
fn local_private_arrays_vectors_and_print_hold_bf16() {
    let source = "
kernel k(out: global mut [bf16], input: global [bf16]) {
    local shared: [bf16; 4];
    let mut mine: [bf16; 2];
    let i = get_local_id(0);
    shared[i] = input[i] * 2bf16;
    barrier();
    mine[0] = shared[3 - i];
    mine[1] = mine[0] + 0.5bf16;
    let v = vload2(input, 0) + bf16x2(0.25bf16, 0.75bf16);
    out[i] = mine[1] + v.x - v.y;
    if i == 0 {
        print(\"{} {} {}\", mine[1], v.x, bf16::MAX);
    }
}";
    let module = compile(source);
    let input: Vec<bf16> = [1.0f32, 2.0, 3.0, 100.0]
        .iter()
        .map(|&v| bf16::from_f32(v))
        .collect();
    let mut arguments = vec![
        InterpArgument::buffer(vec![bf16::ZERO; 4]),
        InterpArgument::buffer(input),
    ];
    let launch = InterpLaunch::new([4], [4]);
    let (result, output) = run_kernel_with_output(&module, "k", &launch, &mut arguments);
    result.unwrap();
    // shared = [2, 4, 6, 200]; v = (1.25, 2.75); out[i] = shared[3 - i] + 0.5 + 1.25 - 2.75,
    // each step rounded: 200.5 is a tie (to 200), 201.25 gives 201, 198.25 gives 198.
    let out: Vec<f32> = arguments[0]
        .as_slice::<bf16>()
        .unwrap()
        .iter()
        .map(|v| v.to_f32())
        .collect();
    assert_eq!(out, [198.0, 5.0, 3.0, 1.0]);
    assert_eq!(output, "200 1.25 3.38953e+38\n");
}
