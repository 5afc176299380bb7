//! The feature kernels of `tests/kernels/`: math, operators, semantics, atomics, sub-groups,
//! collectives, work-items, vectors, multi-dimensional buffers, print.

use super::*;

#[test]
fn math() {
    let mut random = Random::new(31);
    let items = 128usize;
    let launch = InterpLaunch::new([items as u32], [32]);
    // Positive inputs keep sqrt, log and pow real. `exp`, `pow`, `tan` and friends may differ by
    // a few ULP between libraries; the sum of 20 terms is compared relatively.
    let mut cases = vec![
        output_then_input("math_f32", launch, items, random.f32s(items + 1, 0.25, 3.0))
            .compare(0, Compare::Close(1e-5)),
        output_then_input("math_f64", launch, items, random.f64s(items + 1, 0.25, 3.0))
            .compare(0, Compare::Close(1e-12)),
    ];
    macro_rules! integer_case {
        ($name:literal, $ty:ty) => {{
            let input: Vec<$ty> = (0..=items).map(|_| random.next_u64() as $ty).collect();
            cases.push(output_then_input($name, launch, items, input));
        }};
    }
    integer_case!("math_i8", i8);
    integer_case!("math_u8", u8);
    integer_case!("math_i16", i16);
    integer_case!("math_u16", u16);
    integer_case!("math_i32", i32);
    integer_case!("math_u32", u32);
    integer_case!("math_i64", i64);
    integer_case!("math_u64", u64);
    // Every fourth input 0, 1, -1 or the type's minimum (the counts' edges), the others random;
    // rotations by random amounts, also negative and past the width.
    macro_rules! bits_case {
        ($name:literal, $ty:ty) => {{
            let input: Vec<$ty> = (0..=items)
                .map(|j| match (j % 4, j / 4 % 4) {
                    (0, 0) => 0,
                    (0, 1) => 1,
                    (0, 2) => <$ty>::MAX,
                    (0, _) => <$ty>::MIN,
                    _ => random.next_u64() as $ty,
                })
                .collect();
            cases.push(output_then_input($name, launch, 4 * items, input));
        }};
    }
    bits_case!("bits_i8", i8);
    bits_case!("bits_u8", u8);
    bits_case!("bits_i16", i16);
    bits_case!("bits_u16", u16);
    bits_case!("bits_i32", i32);
    bits_case!("bits_u32", u32);
    bits_case!("bits_i64", i64);
    bits_case!("bits_u64", u64);
    // f16 arithmetic rounds each operation to f16 (docs/language.md); the library functions are
    // computed in f32 and rounded, so a few f16 ULP may differ over the sum.
    let halves = |values: Vec<f32>| -> Vec<half::f16> {
        values.into_iter().map(half::f16::from_f32).collect()
    };
    cases.push(
        output_then_input(
            "math_f16",
            launch,
            items,
            halves(random.f32s(items + 1, 0.25, 3.0)),
        )
        .compare(0, Compare::Close(2e-2)),
    );
    // The library functions of language v1; the flags (isnan, isinf, isfinite, T::NAN,
    // T::NEG_INFINITY, T::MAX) are exact.
    let flags = || buffer(vec![0u32; items]);
    cases.push(
        Case::new(
            "more_math_f32",
            launch,
            vec![
                buffer(vec![0.0f32; items]),
                flags(),
                buffer(random.f32s(items + 1, 0.25, 3.0)),
            ],
        )
        .compare(0, Compare::Close(1e-5)),
    );
    cases.push(
        Case::new(
            "more_math_f64",
            launch,
            vec![
                buffer(vec![0.0f64; items]),
                flags(),
                buffer(random.f64s(items + 1, 0.25, 3.0)),
            ],
        )
        .compare(0, Compare::Close(1e-12)),
    );
    // The native functions' accuracy is the target's (docs/language.md): a sum of 14 terms
    // within 1e-3 of the accurate one; on f64 they are the accurate functions.
    cases.push(
        output_then_input(
            "native_math_f32",
            launch,
            items,
            random.f32s(items + 1, 0.25, 3.0),
        )
        .compare(0, Compare::Close(1e-3)),
    );
    cases.push(
        output_then_input(
            "native_math_f64",
            launch,
            items,
            random.f64s(items + 1, 0.25, 3.0),
        )
        .compare(0, Compare::Close(1e-12)),
    );
    cases.push(
        Case::new(
            "more_math_f16",
            launch,
            vec![
                buffer(halves(vec![0.0; items])),
                flags(),
                buffer(halves(random.f32s(items + 1, 0.25, 3.0))),
            ],
        )
        .compare(0, Compare::Close(2e-2)),
    );
    on_test_kernel("math", cases);
}

#[test]
fn operators() {
    let mut random = Random::new(32);
    let n = 100usize;
    // Operands from 1 to 31 keep every division and shift defined.
    let input: Vec<i32> = (0..=n).map(|_| random.i64_in(1, 32) as i32).collect();
    let case = Case::new(
        "operators",
        InterpLaunch::covering(n as u32, 32),
        vec![
            buffer(vec![0i32; n]),
            buffer(vec![0u32; n]),
            buffer(random.f32s(n, -4.0, 4.0)),
            buffer(vec![0u32; 4]),
            buffer(input),
            scalar(n as u32),
            scalar(3u8),
        ],
    )
    // Private-array indexing in a loop: LLVM 22's SPIR-V code generation at -O1 and above got
    // this wrong, so the SPIR-V backend now runs at -O0 (see kdsl-codegen's target/spirv.rs).
    .compare(2, Compare::Close(1e-5))
    // `counts[index] += 1` from many work-items at once is a data race.
    .compare(3, Compare::Racy);
    // Conversions out of range or of NaN saturate (docs/language.md), so any inputs are defined.
    let n = 64usize;
    let casts = Case::new(
        "casts",
        InterpLaunch::covering(n as u32, 32),
        vec![
            buffer(
                random
                    .f32s(n, -300.0, 300.0)
                    .into_iter()
                    .map(half::f16::from_f32)
                    .collect::<Vec<_>>(),
            ),
            buffer(random.f32s(n, -70000.0, 70000.0)),
            buffer(random.f64s(n, -1e10, 1e10)),
            buffer((0..n).map(|_| random.next_u64() as i8).collect::<Vec<_>>()),
            buffer((0..n).map(|_| random.next_u64() as u8).collect::<Vec<_>>()),
            buffer((0..n).map(|_| random.next_u64() as i16).collect::<Vec<_>>()),
            buffer((0..n).map(|_| random.next_u64() as u16).collect::<Vec<_>>()),
            buffer((0..n).map(|_| random.next_u64() as i32).collect::<Vec<_>>()),
            buffer((0..n).map(|_| random.next_u64() as u32).collect::<Vec<_>>()),
            buffer((0..n).map(|_| random.next_u64() as i64).collect::<Vec<_>>()),
            buffer((0..n).map(|_| random.next_u64()).collect::<Vec<_>>()),
        ],
    )
    // The float sums may be contracted into multiply-adds on a device.
    .compare(0, Compare::Close(1e-3))
    .compare(1, Compare::Close(1e-6))
    .compare(2, Compare::Close(1e-12));
    // Integers beyond f16's range become infinities, also where only a few bits can be set
    // (LLVM used to fold `(x << 31) as f16 as f64` to -2147483648.0).
    let n = 64usize;
    let mut signed: Vec<i32> = vec![1, 2, -1, 4095, 4094, 0];
    signed.extend((signed.len()..n).map(|_| random.next_u64() as i32));
    let mut unsigned: Vec<u32> = vec![1, 0, 3, 65535];
    unsigned.extend((unsigned.len()..n).map(|_| random.next_u64() as u32));
    let mut longs: Vec<i64> = vec![1, -1, 0, 1 << 23];
    longs.extend((longs.len()..n).map(|_| random.next_u64() as i64));
    let integers_to_f16 = Case::new(
        "integers_to_f16",
        InterpLaunch::covering(n as u32, 32),
        vec![
            buffer(vec![0.0f64; n * 4]),
            buffer(vec![0.0f32; n]),
            buffer(signed),
            buffer(unsigned),
            buffer(longs),
        ],
    );
    // Values of both signs around the clamp of 7; the first and last work-items take the arms
    // that would read outside `values` if both arms were evaluated.
    let n = 50usize;
    let values: Vec<i32> = (0..n).map(|_| random.i64_in(-20, 20) as i32).collect();
    let if_expressions = Case::new(
        "if_expressions",
        InterpLaunch::covering(n as u32, 16),
        vec![buffer(vec![0i32; n * 4]), buffer(values), scalar(n as u32)],
    );
    // Work-item 0 runs no trip of `(0..0).rev()`; the others count down to 0 in `u32`.
    let n = 40usize;
    let descending_loops = Case::new(
        "descending_loops",
        InterpLaunch::covering(n as u32, 8),
        vec![buffer(vec![0i32; n * 4]), scalar(n as u32)],
    );
    // A 2-D launch over 24 x 5 elements of a 24-wide row-major grid.
    let signed_ids = Case::new(
        "signed_ids",
        InterpLaunch::new([24, 5], [8, 1]),
        vec![buffer(vec![0i32; 24 * 5]), scalar(24i32)],
    );
    on_test_kernel(
        "language",
        vec![
            case,
            casts,
            integers_to_f16,
            if_expressions,
            descending_loops,
            signed_ids,
        ],
    );
}

#[test]
fn semantics() {
    let mut random = Random::new(33);
    let n = 96usize;
    // Out-of-range, infinite and NaN inputs: conversions saturate, NaN gives 0.
    let mut input = vec![
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        3.0e9,
        -3.0e9,
        1e10,
        -9.0,
        300.5,
        -0.5,
        255.9,
        2147483520.0,
        -2147483904.0,
    ];
    input.extend(random.f32s(n - input.len(), -1e12, 1e12));
    let mut finite = vec![1e10f32, -9.0, 4.5, -4.5, 0.0];
    finite.extend(random.f32s(n - finite.len(), -1e9, 1e9));
    // Shift amounts below 0 and at or beyond the width.
    let amounts: Vec<i32> = (0..n).map(|_| random.i64_in(-70, 70) as i32).collect();
    let case = Case::new(
        "semantics",
        InterpLaunch::covering(n as u32, 32),
        vec![
            buffer(vec![0i32; n * 4]),
            buffer(vec![0u8; n]),
            buffer(vec![0i64; n]),
            buffer(vec![0.0f32; n * 2]),
            buffer(input),
            buffer(finite),
            buffer(amounts),
            scalar(n as u32),
        ],
    )
    // The input holds NaN, which never equals itself; it is read-only, so it is not compared.
    .compare(4, Compare::Racy);
    on_test_kernel("semantics", vec![case]);
}

/// `float_atomics`: `results[i] = old_global + old_local + shared[lid % 64]`; only the old
/// values of the contended `values[0]` depend on the order, and as a whole they must be
/// `values[0] + k * operand` for k = 0..n.
fn float_atomics_check(reference: &[InterpArgument], device: &[InterpArgument]) -> CaseResult {
    let old_globals = |arguments: &[InterpArgument], original: &[f64]| -> Vec<f64> {
        let results = as_f64s(&arguments[1]).unwrap_or_default();
        let operand = match arguments[2] {
            InterpArgument::Scalar(ScalarValue::F32(v)) => f64::from(v),
            InterpArgument::Scalar(ScalarValue::F64(v)) => v,
            _ => 0.0,
        };
        let mut olds: Vec<f64> = results
            .iter()
            .enumerate()
            .map(|(i, &r)| r - (2.0 * original[i] + operand))
            .collect();
        olds.sort_by(f64::total_cmp);
        olds
    };
    // Every `values[i]` but the first is unchanged, so the original is readable from the output.
    let mut original = as_f64s(&reference[0]).unwrap_or_default();
    let n = original.len() as f64;
    if let (Some(first), InterpArgument::Scalar(ScalarValue::F32(_) | ScalarValue::F64(_))) =
        (original.first_mut(), &reference[2])
    {
        *first -= n;
    }
    let want = old_globals(reference, &original);
    let got = old_globals(device, &original);
    if want != got {
        return Err(format!(
            "the old values of the contended atomic differ as a set: interpreter {want:?}, device {got:?}"
        ));
    }
    Ok(())
}

#[test]
fn atomics() {
    let mut random = Random::new(33);
    let items = 128usize;
    // One work-item per local slot (groups of 64): every result is order-independent.
    let launch = InterpLaunch::new([items as u32], [64]);
    let mut cases = Vec::new();
    macro_rules! integer_case {
        ($name:literal, $ty:ty) => {{
            let values: Vec<$ty> = (0..items).map(|_| random.next_u64() as $ty).collect();
            cases.push(Case::new(
                $name,
                launch,
                vec![
                    buffer(values),
                    buffer(vec![0 as $ty; items]),
                    scalar(random.next_u64() as $ty),
                ],
            ));
        }};
    }
    integer_case!("atomics_i32", i32);
    integer_case!("atomics_u32", u32);
    integer_case!("atomics_i64", i64);
    integer_case!("atomics_u64", u64);
    // Small integers in floats: every sum is exact whatever the order. The operand is 1, as
    // `float_atomics_check` assumes.
    let values: Vec<f32> = (0..items).map(|i| (i % 7) as f32).collect();
    let mut case = Case::new(
        "atomics_f32",
        launch,
        vec![buffer(values), buffer(vec![0.0f32; items]), scalar(1.0f32)],
    )
    .compare(1, Compare::Racy);
    case.check = Some(float_atomics_check);
    cases.push(case);
    let values: Vec<f64> = (0..items).map(|i| (i % 5) as f64).collect();
    let mut case = Case::new(
        "atomics_f64",
        launch,
        vec![buffer(values), buffer(vec![0.0f64; items]), scalar(1.0f64)],
    )
    .compare(1, Compare::Racy);
    case.check = Some(float_atomics_check);
    cases.push(case);
    // Float atomic min/max, with a NaN among the inputs (minNum/maxNum ignore it).
    let mut inputs: Vec<f32> = random.f32s(items, -100.0, 100.0);
    inputs[17] = f32::NAN;
    let start = vec![
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::INFINITY,
        f32::NEG_INFINITY,
    ];
    cases.push(
        Case::new(
            "extremes_f32",
            launch,
            vec![buffer(start.clone()), buffer(inputs.clone())],
        )
        // The unchanged input holds a NaN, which bit-for-bit equality of floats would not accept.
        .compare(1, Compare::Close(0.0)),
    );
    cases.push(
        Case::new(
            "extremes_f64",
            launch,
            vec![
                buffer(start.iter().map(|&x| f64::from(x)).collect::<Vec<_>>()),
                buffer(inputs.iter().map(|&x| f64::from(x)).collect::<Vec<_>>()),
            ],
        )
        .compare(1, Compare::Close(0.0)),
    );
    on_test_kernel("atomics", cases);
}

/// `lanes[i] = lane * 1000 + size`: work-item 0 is lane 0, so `lanes[0]` is the size.
fn device_sub_group_size(outputs: &[InterpArgument]) -> Option<u32> {
    outputs[2].as_slice::<u32>()?.first().copied()
}

#[test]
fn sub_groups() {
    let mut random = Random::new(34);
    let items = 128usize;
    let launch = InterpLaunch::new([items as u32], [64]);
    let mut cases = Vec::new();
    // Integer inputs of at most 57 bits (25 for 32-bit types): the six-term sums below do not
    // overflow, which is an error (docs/language.md, "Semantics").
    macro_rules! sub_group_case {
        ($name:literal, $ty:ty, $input:expr, $compare:expr) => {{
            let input: Vec<$ty> = $input;
            let mut case = Case::new(
                $name,
                launch,
                vec![
                    buffer(vec![0 as $ty; items]),
                    buffer(input),
                    buffer(vec![0u32; items]),
                ],
            )
            .compare(0, $compare);
            case.sub_group_size = Some(device_sub_group_size);
            cases.push(case);
        }};
    }
    sub_group_case!(
        "sub_groups_i32",
        i32,
        (0..items)
            .map(|_| (random.next_u64() as i32) >> 7)
            .collect(),
        Compare::Exact
    );
    sub_group_case!(
        "sub_groups_u32",
        u32,
        (0..items)
            .map(|_| (random.next_u64() as u32) >> 7)
            .collect(),
        Compare::Exact
    );
    sub_group_case!(
        "sub_groups_i64",
        i64,
        (0..items)
            .map(|_| (random.next_u64() as i64) >> 7)
            .collect(),
        Compare::Exact
    );
    sub_group_case!(
        "sub_groups_u64",
        u64,
        (0..items).map(|_| random.next_u64() >> 7).collect(),
        Compare::Exact
    );
    // Reductions may add lanes in another order.
    sub_group_case!(
        "sub_groups_f32",
        f32,
        random.f32s(items, -1.0, 1.0),
        Compare::Close(1e-5)
    );
    sub_group_case!(
        "sub_groups_f64",
        f64,
        random.f64s(items, -1.0, 1.0),
        Compare::Close(1e-12)
    );
    on_test_kernel("sub_groups", cases);
}

#[test]
fn collectives() {
    let mut random = Random::new(35);
    let items = 192usize;
    // 96 work-items a group: three sub-groups of 32, or one and a half of 64.
    let launch = InterpLaunch::new([items as u32], [96]);
    let mut cases = Vec::new();
    macro_rules! collective_cases {
        ($sub:literal, $work:literal, $ty:ty, $input:expr, $compare:expr) => {{
            let input: Vec<$ty> = $input;
            let mut case = Case::new(
                $sub,
                launch,
                vec![
                    buffer(vec![0 as $ty; items * 10]),
                    buffer(input.clone()),
                    buffer(vec![0u32; items]),
                    buffer(vec![0u64; items * 4]),
                ],
            )
            .compare(0, $compare);
            case.sub_group_size = Some(device_sub_group_size);
            cases.push(case);
            cases.push(
                Case::new(
                    $work,
                    launch,
                    vec![buffer(vec![0 as $ty; items * 10]), buffer(input.clone())],
                )
                .compare(0, $compare),
            );
            // Work-groups of 48: the last sub-group of 32 lanes is partial on NVIDIA.
            cases.push(
                Case::new(
                    $work,
                    InterpLaunch::new([items as u32], [48]),
                    vec![buffer(vec![0 as $ty; items * 10]), buffer(input)],
                )
                .compare(0, $compare),
            );
        }};
    }
    collective_cases!(
        "sub_group_collectives_i32",
        "work_group_collectives_i32",
        i32,
        (0..items).map(|_| random.next_u64() as i32).collect(),
        Compare::Exact
    );
    collective_cases!(
        "sub_group_collectives_u32",
        "work_group_collectives_u32",
        u32,
        (0..items).map(|_| random.next_u64() as u32).collect(),
        Compare::Exact
    );
    collective_cases!(
        "sub_group_collectives_i64",
        "work_group_collectives_i64",
        i64,
        (0..items).map(|_| random.next_u64() as i64).collect(),
        Compare::Exact
    );
    collective_cases!(
        "sub_group_collectives_u64",
        "work_group_collectives_u64",
        u64,
        (0..items).map(|_| random.next_u64()).collect(),
        Compare::Exact
    );
    // Sums may add in another order.
    collective_cases!(
        "sub_group_collectives_f32",
        "work_group_collectives_f32",
        f32,
        random.f32s(items, -1.0, 1.0),
        Compare::Close(1e-5)
    );
    collective_cases!(
        "sub_group_collectives_f64",
        "work_group_collectives_f64",
        f64,
        random.f64s(items, -1.0, 1.0),
        Compare::Close(1e-12)
    );
    on_test_kernel("collectives", cases);
}

#[test]
fn work_items() {
    let case = Case::new(
        "work_items",
        InterpLaunch::new([4, 6, 2], [2, 3, 1]),
        vec![buffer(vec![u32::MAX; 4 * 6 * 2 * 18])],
    );
    on_test_kernel("work_items", vec![case]);
}

/// Ids read again after a branch (fuzzgen seed 9454); the -O0 images run in the root's
/// `tests/work_item_reads.rs`.
#[test]
fn work_item_reads() {
    let kernels = [
        "read_again_in_branch",
        "read_again_in_loop",
        "local_id_read_again",
        "read_again_in_inlined_helper",
        "read_again_in_kept_helper",
    ];
    let cases = kernels
        .into_iter()
        .map(|kernel| {
            Case::new(
                kernel,
                InterpLaunch::new([64], [32]),
                vec![scalar(1i32), buffer(vec![77u32; 64])],
            )
        })
        .collect();
    on_test_kernel("work_item_reads", cases);
}

#[test]
fn work_group_size() {
    let mut random = Random::new(41);
    let n = 256usize;
    let sums = Case::new(
        "block_sums",
        InterpLaunch::new([n as u32], [64]),
        vec![
            buffer(vec![0.0f32; n / 64]),
            buffer(random.f32s(n, -1.0, 1.0)),
        ],
    )
    // Devices may add in another order.
    .compare(0, Compare::Close(1e-5));
    let tiles = Case::new(
        "reverse_tiles",
        InterpLaunch::new([16, 8], [8, 4]),
        vec![
            buffer(vec![0u32; 16 * 8]),
            buffer((0..16 * 8).collect::<Vec<u32>>()),
            scalar(16u32),
        ],
    );
    let shape = Case::new(
        "group_shape",
        InterpLaunch::new([8, 4, 4], [4, 2, 2]),
        vec![buffer(vec![0u32; 8 * 4 * 4 * 2])],
    );
    on_test_kernel("work_group_size", vec![sums, tiles, shape]);
}

/// Unroll requests change how a loop is compiled, never what it computes.
#[test]
fn unroll() {
    let mut random = Random::new(42);
    let n = 128usize;
    let count = 7usize;
    let full = Case::new(
        "full",
        InterpLaunch::covering(n as u32, 64),
        vec![
            buffer(vec![0.0f32; n]),
            buffer(random.f32s(n + 16, -1.0, 1.0)),
            buffer(random.f32s(16, -1.0, 1.0)),
        ],
    )
    // Devices may contract into fused multiply-adds.
    .compare(0, Compare::Close(1e-5));
    let partial = Case::new(
        "partial",
        InterpLaunch::covering(n as u32, 64),
        vec![
            buffer(vec![0.0f32; n]),
            buffer(random.f32s(n * count, -1.0, 1.0)),
            scalar(count as u32),
        ],
    )
    .compare(0, Compare::Close(1e-5));
    let rolled = Case::new(
        "rolled",
        InterpLaunch::covering(n as u32, 64),
        vec![
            buffer(vec![0u32; n]),
            buffer((0..n as u32).map(|i| i.wrapping_mul(2654435761)).collect()),
        ],
    );
    on_test_kernel("unroll", vec![full, partial, rolled]);
}

#[test]
fn vectors() {
    let mut random = Random::new(53);
    let n = 128usize;
    let x = random.f32s(n * 4, -4.0, 4.0);
    let k: Vec<i32> = (0..n * 4)
        .map(|_| (random.next_u64() % 4001) as i32 - 2000)
        .collect();
    let operations = |kernel: &'static str| {
        Case::new(
            kernel,
            InterpLaunch::new([n as u32], [32]),
            vec![
                buffer(vec![0.0f32; n * 12]),
                buffer(vec![0i32; n * 8]),
                buffer(x.clone()),
                buffer(k.clone()),
            ],
        )
        // Devices may contract multiply-adds.
        .compare(0, Compare::Close(1e-5))
    };
    let saxpy4 = Case::new(
        "saxpy4",
        InterpLaunch::covering(n as u32, 64),
        vec![
            buffer(random.f32s(n * 4, -1.0, 1.0)),
            buffer(random.f32s(n * 4, -1.0, 1.0)),
            scalar(1.5f32),
            scalar(n as u32),
        ],
    )
    .compare(0, Compare::Close(1e-6));
    on_test_kernel(
        "vectors",
        vec![saxpy4, operations("vector_ops"), operations("scalar_twin")],
    );
}

#[test]
fn shaped_buffers() {
    let mut random = Random::new(61);
    let (rows, cols) = (24u32, 40u32);
    let count = (rows * cols) as usize;
    let scale = |input: Vec<InterpArgument>, shape: [u32; 2]| {
        let mut arguments = shaped(
            vec![0.0f32; (shape[0] * shape[1]) as usize],
            &shape,
            &[u64::from(shape[1]), 1],
        );
        arguments.extend(input);
        arguments.push(scalar(1.5f32));
        Case::new("scale2d", InterpLaunch::new([48, 32], [16, 16]), arguments)
    };
    // Contiguous; the transpose of a 40 x 24 matrix; every third column of a 24 x 64 matrix.
    let contiguous = scale(
        shaped(random.f32s(count, -1.0, 1.0), &[rows, cols], &[40, 1]),
        [rows, cols],
    );
    let transposed = scale(
        shaped(random.f32s(count, -1.0, 1.0), &[rows, cols], &[1, 24]),
        [rows, cols],
    );
    let sliced = scale(
        shaped(random.f32s(24 * 64, -1.0, 1.0), &[rows, 20], &[64, 3]),
        [rows, 20],
    );
    // Rows padded to 20 elements, 17 used.
    let mut row_sums = vec![buffer(vec![0.0f32; 30])];
    row_sums.extend(shaped(random.f32s(30 * 20, -1.0, 1.0), &[30, 17], &[20, 1]));
    let row_sums = Case::new("row_sums", InterpLaunch::new([32], [16]), row_sums)
        .compare(0, Compare::Close(1e-5));
    // `b` stored with its dimensions reversed.
    let ints = |random: &mut Random| -> Vec<i32> {
        (0..120)
            .map(|_| (random.next_u64() % 2001) as i32 - 1000)
            .collect()
    };
    let mut add3d = shaped(vec![0i32; 120], &[4, 5, 6], &[30, 6, 1]);
    add3d.extend(shaped(ints(&mut random), &[4, 5, 6], &[30, 6, 1]));
    add3d.extend(shaped(ints(&mut random), &[4, 5, 6], &[1, 4, 20]));
    let add3d = Case::new("add3d", InterpLaunch::new([8, 8, 4], [4, 4, 2]), add3d);
    let mut layout = vec![buffer(vec![0u64; 7])];
    let bytes: Vec<u8> = (0..121).map(|i| (i * 7 % 251) as u8).collect();
    layout.extend(shaped(bytes, &[3, 4, 5], &[40, 10, 2]));
    let layout = Case::new("layout", InterpLaunch::new([4], [4]), layout);
    // Device functions given a contiguous output and a transposed input.
    let mut traces = shaped(vec![0.0f32; 30], &[6, 5], &[5, 1]);
    traces.extend(shaped(random.f32s(24, -1.0, 1.0), &[4, 6], &[1, 4]));
    let traces =
        Case::new("traces", InterpLaunch::new([8], [8]), traces).compare(0, Compare::Close(1e-6));
    // The stencil on a contiguous input (the kernel's contiguous entry point, on the
    // interpreter and on devices) and on a transposed one (the kernel's own entry).
    let stencil = |input: Vec<InterpArgument>| {
        let mut arguments = shaped(vec![0.0f32; count], &[rows, cols], &[u64::from(cols), 1]);
        arguments.extend(input);
        Case::new("stencil", InterpLaunch::new([48, 32], [16, 16]), arguments)
            .compare(0, Compare::Close(1e-6))
    };
    let stencil_contiguous = stencil(shaped(
        random.f32s(count, -1.0, 1.0),
        &[rows, cols],
        &[u64::from(cols), 1],
    ));
    let stencil_transposed = stencil(shaped(
        random.f32s(count, -1.0, 1.0),
        &[rows, cols],
        &[1, u64::from(rows)],
    ));
    on_test_kernel(
        "shaped_buffers",
        vec![
            contiguous,
            transposed,
            sliced,
            row_sums,
            add3d,
            layout,
            traces,
            stencil_contiguous,
            stencil_transposed,
        ],
    );
}

/// The buffer a printing kernel writes; the printed text itself is compared by the device
/// suite (`print_reaches_stdout`, in a child process) and the interpreter's semantics tests.
#[test]
fn print() {
    let case = Case::new(
        "print_values",
        InterpLaunch::new([4], [4]),
        vec![buffer(vec![0.0f32; 4]), scalar(0.5f32)],
    );
    on_test_kernel("print", vec![case]);
}
