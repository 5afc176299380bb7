//! `bf16` (tests/kernels/bf16.krn): every operation is an `f32` operation rounded to `bf16`,
//! so the exactly defined ones must agree bit for bit (`Close(0.0)`: equal values, or NaN on
//! both sides, whose payloads differ between hosts; inputs holding NaNs are compared so too).

use super::*;
use half::bf16;

fn to_bf16(value: f32) -> bf16 {
    bf16::from_bits(kdsl_ir::bf16::bf16_from_f32(value))
}

/// Random `bf16` values in [low, high), with the special values at the start: zeros,
/// infinities, a NaN, the largest and smallest values, subnormals.
fn bf16s(random: &mut Random, count: usize, low: f32, high: f32) -> Vec<bf16> {
    let specials = [
        0x0000u16, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0x7f7f, 0xff7f, 0x0080, 0x0001, 0x8003,
    ];
    let mut values: Vec<bf16> = specials.iter().map(|&b| bf16::from_bits(b)).collect();
    values.extend((values.len()..count).map(|_| to_bf16(random.f32_in(low, high))));
    values.truncate(count);
    values
}

/// An `f64` within a hair of a random `bf16` tie (halfway between two neighbours), either side,
/// or on it: where rounding through `f32` first would go wrong.
fn near_tie(random: &mut Random) -> f64 {
    let bits = (random.next_u64() % 0x7f00) as u16 | ((random.next_u64() as u16) & 0x8000);
    let (low, high) = (
        kdsl_ir::bf16::bf16_to_f64(bits),
        kdsl_ir::bf16::bf16_to_f64(bits + 1),
    );
    let tie = (low + high) / 2.0;
    match random.next_u64() % 3 {
        0 => tie,
        1 => tie + (high - low) * 2f64.powi(-30),
        _ => tie - (high - low) * 2f64.powi(-30),
    }
}

#[test]
fn bf16_kernels() {
    let mut random = Random::new(251);
    let items = 128usize;
    let launch = InterpLaunch::new([items as u32], [32]);
    let arithmetic = Case::new(
        "bf16_arithmetic",
        launch,
        vec![
            buffer(vec![bf16::ZERO; items * 12]),
            buffer(vec![0u32; items]),
            buffer(bf16s(&mut random, items, -40.0, 40.0)),
            buffer(bf16s(&mut random, items, -3.0, 3.0)),
            scalar(to_bf16(0.3)),
        ],
    )
    .compare(0, Compare::Close(0.0))
    .compare(2, Compare::Close(0.0))
    .compare(3, Compare::Close(0.0));

    let n = 64usize;
    let mut doubles: Vec<f64> = vec![1e300, -1e-300, f64::NAN, f64::NEG_INFINITY, 3.4e38];
    doubles.extend((doubles.len()..n / 2).map(|_| near_tie(&mut random)));
    doubles.extend(random.f64s(n - doubles.len(), -1e10, 1e10));
    let mut singles: Vec<f32> = vec![f32::MAX, f32::MIN_POSITIVE / 3.0, -0.0, f32::NAN];
    singles.extend((singles.len()..n / 2).map(|_| near_tie(&mut random) as f32));
    singles.extend(random.f32s(n - singles.len(), -300.0, 300.0));
    let mut ints: Vec<i32> = vec![i32::MIN, i32::MAX, (1 << 24) + (1 << 16) + 1, -257, 0];
    ints.extend((ints.len()..n).map(|_| random.next_u64() as i32));
    let mut longs: Vec<u64> = vec![
        u64::MAX,
        (1 << 62) + (1 << 54) + 1,
        (1 << 62) + (1 << 54),
        0,
    ];
    longs.extend((longs.len()..n).map(|_| random.next_u64() >> (random.next_u64() % 64)));
    let shorts: Vec<i16> = (0..n).map(|_| random.next_u64() as i16).collect();
    let halves: Vec<half::f16> = (0..n)
        .map(|_| half::f16::from_bits(random.next_u64() as u16))
        .collect();
    let conversions = Case::new(
        "bf16_conversions",
        InterpLaunch::new([n as u32], [32]),
        vec![
            buffer(vec![bf16::ZERO; n * 7]),
            buffer(vec![0i64; n * 4]),
            buffer(vec![0f64; n]),
            buffer(vec![half::f16::ZERO; n]),
            buffer(doubles),
            buffer(singles),
            buffer(ints),
            buffer(longs),
            buffer(shorts),
            buffer(halves),
        ],
    )
    .compare(0, Compare::Close(0.0))
    .compare(2, Compare::Close(0.0))
    .compare(3, Compare::Close(0.0))
    .compare(4, Compare::Close(0.0))
    .compare(5, Compare::Close(0.0))
    .compare(9, Compare::Close(0.0));

    // Library functions differ by a few f32 ULP between targets, so at times by one bf16
    // ULP (2^-8) in a term of the sum, which rounds on every addition.
    let library = output_then_input(
        "bf16_library",
        launch,
        items,
        (0..=items)
            .map(|_| to_bf16(random.f32_in(0.25, 3.0)))
            .collect(),
    )
    .compare(0, Compare::Close(3e-2));

    let memory = output_then_input(
        "bf16_memory",
        InterpLaunch::new([items as u32], [64]),
        items * 4,
        bf16s(&mut random, items * 4, -100.0, 100.0),
    )
    .compare(0, Compare::Close(0.0))
    .compare(1, Compare::Close(0.0));
    on_test_kernel("bf16", vec![arithmetic, conversions, library, memory]);
}
