//! Targeted tests of the semantics the interpreter defines.

mod common;

use common::{compile, compile_file, shaped, Random};
use kdsl_interp::{
    f16, run_kernel, run_kernel_with_output, InterpArgument, InterpError, InterpLaunch,
};
use kdsl_ir::ScalarType;

/// Runs `kernel` from `source` and returns the arguments after the launch.
fn run(
    source: &str,
    kernel: &str,
    launch: InterpLaunch,
    mut arguments: Vec<InterpArgument>,
) -> Result<Vec<InterpArgument>, InterpError> {
    let module = compile(source);
    run_kernel(&module, kernel, &launch, &mut arguments).map(|()| arguments)
}

/// The source text an error points at.
fn pointed_at<'a>(source: &'a str, error: &InterpError) -> &'a str {
    let span = error.span().expect("the error has a span");
    &source[span.range()]
}

fn one_item() -> InterpLaunch {
    InterpLaunch::new([1], [1])
}

#[test]
fn wrapping_operations_wrap_and_division_is_like_c() {
    let source = "
kernel k(out: global mut [i32], bytes: global mut [u8], big: i32, small: u8) {
    out[0] = wrapping_add(big, 1);
    out[1] = wrapping_sub(-big, 2);
    out[2] = -7 / 2;
    out[3] = -7 % 2;
    out[4] = 7 % -2;
    out[5] = wrapping_mul(big, 2);
    out[6] = -8 >> 1;
    out[7] = (wrapping_sub(0, 1) as u32 >> 28) as i32;
    out[8] = abs(-big - 1);
    bytes[0] = wrapping_add(small, 10);
    bytes[1] = wrapping_mul(small, 3);
}";
    let arguments = run(
        source,
        "k",
        one_item(),
        vec![
            InterpArgument::buffer(vec![0i32; 9]),
            InterpArgument::buffer(vec![0u8; 2]),
            InterpArgument::scalar(i32::MAX),
            InterpArgument::scalar(250u8),
        ],
    )
    .unwrap();
    assert_eq!(
        arguments[0].as_slice::<i32>().unwrap(),
        &[i32::MIN, i32::MAX, -3, -1, 1, -2, -4, 15, i32::MIN]
    );
    assert_eq!(arguments[1].as_slice::<u8>().unwrap(), &[4, 238]);
}

#[test]
fn division_by_zero_and_overflow_are_undefined_behaviour() {
    let source = "
kernel k(out: global mut [i32], d: i32, n: i32) {
    out[0] = n / d;
}";
    for (n, d) in [(5, 0), (i32::MIN, -1)] {
        let error = run(
            source,
            "k",
            one_item(),
            vec![
                InterpArgument::buffer(vec![0i32; 1]),
                InterpArgument::scalar(d),
                InterpArgument::scalar(n),
            ],
        )
        .unwrap_err();
        assert!(
            matches!(error, InterpError::UndefinedBehaviour { .. }),
            "{error}"
        );
        assert_eq!(pointed_at(source, &error), "n / d");
    }
}

#[test]
fn integer_overflow_is_undefined_behaviour() {
    // `+ - *` and unary `-` whose exact result leaves the type, also below zero in an
    // unsigned type: the error points at the operation.
    let cases: [(&str, &str); 6] = [
        ("out[0] = big + 1;", "big + 1"),
        ("out[0] = -big - 2;", "-big - 2"),
        ("out[0] = big * 2;", "big * 2"),
        ("out[0] = -(-big - 1);", "-(-big - 1)"),
        ("out[0] = (small - 4u8) as i32;", "small - 4u8"),
        ("out[0] = (small * 100u8) as i32;", "small * 100u8"),
    ];
    for (statement, operation) in cases {
        let source =
            format!("kernel k(out: global mut [i32], big: i32, small: u8) {{ {statement} }}");
        let error = run(
            &source,
            "k",
            one_item(),
            vec![
                InterpArgument::buffer(vec![0i32; 1]),
                InterpArgument::scalar(i32::MAX),
                InterpArgument::scalar(3u8),
            ],
        )
        .unwrap_err();
        assert!(
            error.to_string().contains("integer overflow"),
            "{statement}: {error}"
        );
        assert_eq!(pointed_at(&source, &error), operation, "{statement}");
    }
}

#[test]
fn shifts_take_the_amount_modulo_the_width() {
    let source = "
kernel k(out: global mut [u32], amount: i32) {
    out[0] = 1u32 << amount;
    out[1] = 2147483648u32 >> amount;
    out[2] = ((-128 as i8) >> amount) as u32;
}";
    for (amount, expected) in [
        (31, [1u32 << 31, 1, u32::MAX]),
        (32, [1, 1 << 31, (-128i32) as u32]),
        (33, [2, 1 << 30, (-64i32) as u32]),
        (-1, [1 << 31, 1, u32::MAX]),
    ] {
        let arguments = run(
            source,
            "k",
            one_item(),
            vec![
                InterpArgument::buffer(vec![0u32; 3]),
                InterpArgument::scalar(amount),
            ],
        )
        .unwrap();
        assert_eq!(
            arguments[0].as_slice::<u32>().unwrap(),
            &expected,
            "{amount}"
        );
    }
}

#[test]
fn casts_truncate_extend_and_round() {
    let source = "
kernel k(ints: global mut [i32], bytes: global mut [u8], halves: global mut [f16],
         floats: global mut [f32], x: f32, nan: f32) {
    ints[0] = x as i32;
    ints[1] = (-x) as i32;
    ints[2] = (300 as u8) as i32;
    ints[3] = (-1 as i8) as i32;
    ints[4] = ((-1 as i8) as u8) as i32;
    ints[5] = (nan as bool) as i32;
    ints[6] = (0.0 as bool) as i32;
    ints[7] = (4294967295u32 as i64) as i32;
    bytes[0] = 255.9 as u8;
    bytes[1] = -0.5 as u8;
    bytes[2] = (2 as bool) as u8;
    halves[0] = 1.00048828125 as f16;
    halves[1] = 70000.0 as f16;
    halves[2] = (2049 as u32) as f16;
    floats[0] = 16777217 as f32;
    floats[1] = (1.5f64 as f16) as f32;
}";
    let arguments = run(
        source,
        "k",
        one_item(),
        vec![
            InterpArgument::buffer(vec![0i32; 8]),
            InterpArgument::buffer(vec![0u8; 3]),
            InterpArgument::buffer(vec![f16::ZERO; 3]),
            InterpArgument::buffer(vec![0.0f32; 2]),
            InterpArgument::scalar(2.7f32),
            InterpArgument::scalar(f32::NAN),
        ],
    )
    .unwrap();
    assert_eq!(
        arguments[0].as_slice::<i32>().unwrap(),
        &[2, -2, 44, -1, 255, 1, 0, -1]
    );
    assert_eq!(arguments[1].as_slice::<u8>().unwrap(), &[255, 0, 1]);
    // 1 + 2^-11 is halfway between two f16 values and rounds to even; 70000 overflows to
    // infinity; 2049 rounds to 2048.
    assert_eq!(
        arguments[2].as_slice::<f16>().unwrap(),
        &[f16::ONE, f16::INFINITY, f16::from_f32(2048.0)]
    );
    assert_eq!(arguments[3].as_slice::<f32>().unwrap(), &[16777216.0, 1.5]);
}

#[test]
fn float_to_integer_casts_saturate_and_nan_gives_zero() {
    let source = "
kernel k(out: global mut [i32], bytes: global mut [u8], x: f32) {
    out[0] = x as i32;
    bytes[0] = (x - 2147483000.0 + 256.0) as u8;
}";
    for (x, int, byte) in [
        (3.0e9f32, i32::MAX, 255u8),
        (f32::NAN, 0, 0),
        (-2.2e9, i32::MIN, 0),
        (-7.9, -7, 0),
    ] {
        let arguments = run(
            source,
            "k",
            one_item(),
            vec![
                InterpArgument::buffer(vec![0i32]),
                InterpArgument::buffer(vec![0u8]),
                InterpArgument::scalar(x),
            ],
        )
        .unwrap();
        assert_eq!(arguments[0].as_slice::<i32>().unwrap(), &[int], "{x}");
        assert_eq!(arguments[1].as_slice::<u8>().unwrap(), &[byte], "{x}");
    }
}

#[test]
fn logic_short_circuits_and_select_evaluates_both_arms() {
    let source = "
kernel guarded(out: global mut [f32], input: global [f32], n: u32) {
    let i = get_global_id(0);
    if i < n && input[i] > 0.0 { out[i] = 1.0; }
    if i >= n || input[i] < 0.0 { out[0] += 0.0; }
}
kernel selected(out: global mut [f32], input: global [f32], n: u32) {
    let i = get_global_id(0);
    let value = select(i < n, input[i], 0.0);
    if i < n { out[i] = value; }
}";
    let arguments = || {
        vec![
            InterpArgument::buffer(vec![0.0f32; 4]),
            InterpArgument::buffer(vec![1.0f32, -1.0, 2.0, 3.0]),
            InterpArgument::scalar(4u32),
        ]
    };
    let launch = InterpLaunch::new([8], [8]);
    let done = run(source, "guarded", launch, arguments()).unwrap();
    assert_eq!(done[0].as_slice::<f32>().unwrap(), &[1.0, 0.0, 1.0, 1.0]);
    let error = run(source, "selected", launch, arguments()).unwrap_err();
    let InterpError::OutOfBounds {
        work_item, message, ..
    } = &error
    else {
        panic!("expected an out-of-bounds error, got {error}");
    };
    assert!(work_item.global[0] >= 4, "{error}");
    assert!(
        message.contains("buffer `input` of 4 elements"),
        "{message}"
    );
    assert_eq!(pointed_at(source, &error), "input[i]");
}

#[test]
fn out_of_bounds_array_indices_are_reported_per_dimension() {
    let source = "
kernel k(out: global mut [f32], row: i32, column: u32) {
    let mut grid: [[f32; 4]; 3];
    grid[row][column] = 1.0;
    out[0] = grid[2][3];
}";
    let case = |row: i32, column: u32| {
        run(
            source,
            "k",
            one_item(),
            vec![
                InterpArgument::buffer(vec![5.0f32]),
                InterpArgument::scalar(row),
                InterpArgument::scalar(column),
            ],
        )
    };
    assert_eq!(case(2, 3).unwrap()[0].as_slice::<f32>().unwrap(), &[1.0]);
    // Private arrays start zeroed.
    assert_eq!(case(0, 0).unwrap()[0].as_slice::<f32>().unwrap(), &[0.0]);
    for (row, column) in [(3, 0), (-1, 0), (0, 4)] {
        let error = case(row, column).unwrap_err();
        assert!(matches!(error, InterpError::OutOfBounds { .. }), "{error}");
        assert_eq!(pointed_at(source, &error), "grid[row][column] = 1.0;");
    }
}

#[test]
fn local_memory_starts_with_the_poison_pattern() {
    let source = "
kernel k(out: global mut [u32], floats: global mut [f32]) {
    local words: [u32; 4];
    local reals: [f32; 4];
    out[0] = words[get_local_id(0)];
    floats[0] = reals[get_local_id(0)];
}";
    let done = run(
        source,
        "k",
        one_item(),
        vec![
            InterpArgument::buffer(vec![0u32]),
            InterpArgument::buffer(vec![0.0f32]),
        ],
    )
    .unwrap();
    assert_eq!(done[0].as_slice::<u32>().unwrap(), &[u32::MAX]);
    assert!(done[1].as_slice::<f32>().unwrap()[0].is_nan());
}

#[test]
fn atomics_are_indivisible_under_contention() {
    let source = "
kernel k(counters: global mut [u32], floats: global mut [f32], tickets: global mut [u32]) {
    local shared: [u32; 1];
    let lid = get_local_id(0);
    if lid == 0 { shared[0] = 0; }
    barrier();
    atomic_add(counters[0], 1);
    atomic_max(counters[1], get_global_id(0));
    atomic_min(counters[2], get_global_id(0));
    atomic_add(floats[0], 1.0);
    atomic_add(shared[0], 2);
    let mut claimed = false;
    while !claimed {
        let seen = counters[3];
        claimed = atomic_compare_exchange(counters[3], seen, seen + 1) == seen;
    }
    tickets[get_global_id(0)] = atomic_add(counters[4], 1);
    barrier();
    if lid == 0 { atomic_add(counters[5], shared[0]); }
}";
    let items = 512usize;
    let done = run(
        source,
        "k",
        InterpLaunch::new([items as u32], [128]),
        vec![
            InterpArgument::buffer(vec![0u32, 0, u32::MAX, 0, 0, 0]),
            InterpArgument::buffer(vec![0.0f32]),
            InterpArgument::buffer(vec![0u32; items]),
        ],
    )
    .unwrap();
    let n = items as u32;
    assert_eq!(
        done[0].as_slice::<u32>().unwrap(),
        &[n, n - 1, 0, n, n, 2 * n]
    );
    assert_eq!(done[1].as_slice::<f32>().unwrap(), &[n as f32]);
    // Every ticket was handed out exactly once.
    let mut tickets = done[2].as_slice::<u32>().unwrap().to_vec();
    tickets.sort_unstable();
    assert_eq!(tickets, (0..n).collect::<Vec<_>>());
}

#[test]
fn sub_group_operations_follow_consecutive_local_ids() {
    let module = compile_file("tests/kernels/sub_groups.krn");
    let mut random = Random::new(11);
    let items = 128usize;
    let input: Vec<i64> = (0..items).map(|_| random.i64_in(-1000, 1000)).collect();
    for lanes in [8usize, 16, 32] {
        let mut arguments = [
            InterpArgument::buffer(vec![0i64; items]),
            InterpArgument::buffer(input.clone()),
            InterpArgument::buffer(vec![0u32; items]),
        ];
        let launch = InterpLaunch::new([items as u32], [64]).with_sub_group_size(lanes as u32);
        run_kernel(&module, "sub_groups_i64", &launch, &mut arguments).unwrap();
        let mut want = vec![0i64; items];
        let mut want_lanes = vec![0u32; items];
        for (chunk_index, chunk) in input.chunks(lanes).enumerate() {
            let total: i64 = chunk.iter().sum();
            let smallest = *chunk.iter().min().unwrap();
            let largest = *chunk.iter().max().unwrap();
            for lane in 0..lanes {
                let i = chunk_index * lanes + lane;
                want[i] = total
                    + smallest
                    + largest
                    + chunk[lane ^ 1]
                    + chunk[0]
                    + chunk[lanes - 1 - lane];
                want_lanes[i] = (lane * 1000 + lanes) as u32;
            }
        }
        assert_eq!(
            arguments[0].as_slice::<i64>().unwrap(),
            &want[..],
            "{lanes} lanes"
        );
        assert_eq!(arguments[2].as_slice::<u32>().unwrap(), &want_lanes[..]);
    }
}

#[test]
fn a_shuffle_from_outside_the_sub_group_is_undefined_behaviour() {
    let source = "
kernel k(out: global mut [u32]) {
    out[get_global_id(0)] = sub_group_shuffle(get_global_id(0), sub_group_size());
}";
    let error = run(
        source,
        "k",
        InterpLaunch::new([16], [16]).with_sub_group_size(8),
        vec![InterpArgument::buffer(vec![0u32; 16])],
    )
    .unwrap_err();
    assert!(
        matches!(error, InterpError::UndefinedBehaviour { .. }),
        "{error}"
    );
}

#[test]
fn divergent_barriers_and_sub_group_operations_are_reported() {
    // The front end rejects these kernels with `get_local_id(0)` (E0518, E0519), so they are
    // written with the uniform `get_group_id(0)` and given the local id in the IR: the
    // interpreter checks divergence on its own, for modules that come from elsewhere.
    let source = "
kernel early_return(out: global mut [u32]) {
    let lid = get_group_id(0);
    if lid < 5 { return; }
    barrier();
    out[lid] = 1;
}
kernel split(out: global mut [u32]) {
    let lid = get_group_id(0);
    if lid % 2 == 0 { barrier(); } else { barrier(); }
    out[lid] = 1;
}
kernel partial_reduce(out: global mut [u32]) {
    let lid = get_group_id(0);
    if lid % 16 < 3 { out[lid] = sub_group_reduce_add(lid); }
}";
    let mut module = compile(source);
    for function in &mut module.functions {
        let first = &mut function.body[0].kind;
        let kdsl_ir::StatementKind::Assign { value, .. } = first else {
            panic!("`let lid` comes first: {first:?}");
        };
        value.kind = kdsl_ir::ExpressionKind::WorkItem {
            query: kdsl_ir::WorkItemQuery::LocalId,
            dimension: 0,
        };
    }
    assert!(!kdsl_ir::check_uniformity(&module).is_empty());
    for kernel in ["early_return", "split", "partial_reduce"] {
        let mut arguments = vec![InterpArgument::buffer(vec![0u32; 64])];
        let launch = InterpLaunch::new([64], [32]).with_sub_group_size(16);
        let error = run_kernel(&module, kernel, &launch, &mut arguments).unwrap_err();
        assert!(
            matches!(error, InterpError::DivergentSynchronization { .. }),
            "{kernel}: {error}"
        );
    }
}

#[test]
fn an_error_in_one_work_item_stops_a_waiting_group() {
    let source = "
kernel k(out: global mut [u32]) {
    let lid = get_local_id(0);
    out[lid * 100] = 1;
    barrier();
}";
    let error = run(
        source,
        "k",
        InterpLaunch::new([64], [64]),
        vec![InterpArgument::buffer(vec![0u32; 64])],
    )
    .unwrap_err();
    assert!(matches!(error, InterpError::OutOfBounds { .. }), "{error}");
}

#[test]
fn device_functions_control_flow_and_work_items() {
    let module = compile_file("tests/kernels/work_items.krn");
    let launch = InterpLaunch::new([4, 6, 2], [2, 3, 1]);
    let count = 4 * 6 * 2;
    let mut arguments = [InterpArgument::buffer(vec![0u32; count * 18])];
    run_kernel(&module, "work_items", &launch, &mut arguments).unwrap();
    let got = arguments[0].as_slice::<u32>().unwrap();
    for z in 0..2u32 {
        for y in 0..6u32 {
            for x in 0..4u32 {
                let base = (((z * 6 + y) * 4 + x) * 18) as usize;
                let want = [
                    x,
                    y,
                    z,
                    x % 2,
                    y % 3,
                    0,
                    x / 2,
                    y / 3,
                    z,
                    2,
                    3,
                    1,
                    4,
                    6,
                    2,
                    2,
                    2,
                    2,
                ];
                assert_eq!(&got[base..base + 18], &want, "work-item ({x}, {y}, {z})");
            }
        }
    }

    let source = "
fn first_positive(values: global [i32], count: u32) -> i32 {
    for k in 0..count {
        if values[k] > 0 { return values[k]; }
    }
    return -1;
}
fn bump(counts: global mut [u32], index: u32) {
    counts[index] += 1;
}
kernel k(out: global mut [i32], counts: global mut [u32], values: global [i32], n: u32) {
    let mut steps = 0;
    let mut k = 0u32;
    while true {
        k += 1;
        if k > 10 { break; }
        if k % 3 == 0 { continue; }
        steps += 1;
    }
    out[0] = first_positive(values, n) * 100 + steps;
    bump(counts, 1);
}";
    let done = run(
        source,
        "k",
        one_item(),
        vec![
            InterpArgument::buffer(vec![0i32]),
            InterpArgument::buffer(vec![0u32; 2]),
            InterpArgument::buffer(vec![-3i32, 0, 7, 9]),
            InterpArgument::scalar(4u32),
        ],
    )
    .unwrap();
    assert_eq!(done[0].as_slice::<i32>().unwrap(), &[707]);
    assert_eq!(done[1].as_slice::<u32>().unwrap(), &[0, 1]);
}

#[test]
fn math_functions_match_the_standard_library() {
    let module = compile_file("tests/kernels/math.krn");
    let mut random = Random::new(12);
    let items = 64usize;
    let input = random.f64s(items + 1, 0.25, 3.0);
    let mut arguments = [
        InterpArgument::buffer(vec![0.0f64; items]),
        InterpArgument::buffer(input.clone()),
    ];
    run_kernel(
        &module,
        "math_f64",
        &InterpLaunch::new([items as u32], [16]),
        &mut arguments,
    )
    .unwrap();
    let got = arguments[0].as_slice::<f64>().unwrap();
    for i in 0..items {
        let (x, y) = (input[i], input[i + 1]);
        let mut r = x.sqrt() + 1.0 / x.sqrt() + x.exp() + x.exp2() + x.ln() + x.log2();
        r += x.sin() + x.cos() + x.tan() + x.tanh() + x.powf(y) + x.mul_add(y, r);
        r += x.abs() + x.floor() + x.ceil() + x.round() + x.min(y) + x.max(y) + r.max(x).min(y);
        let want = if x > y { r } else { -r };
        assert_eq!(got[i], want, "at {i}");
    }
}

#[test]
fn misuse_is_a_typed_error() {
    let module = compile_file("examples/saxpy.krn");
    let mut arguments = vec![
        InterpArgument::buffer(vec![0.0f32; 4]),
        InterpArgument::buffer(vec![0.0f64; 4]),
        InterpArgument::scalar(1.0f32),
        InterpArgument::scalar(4u32),
    ];
    let launch = InterpLaunch::new([4], [4]);
    let error = run_kernel(&module, "saxpy", &launch, &mut arguments).unwrap_err();
    assert!(
        matches!(error, InterpError::ArgumentMismatch { index: 1, .. }),
        "{error}"
    );
    let error = run_kernel(&module, "nothing", &launch, &mut arguments).unwrap_err();
    assert!(
        matches!(error, InterpError::KernelNotFound { .. }),
        "{error}"
    );
    arguments[1] = InterpArgument::buffer(vec![0.0f32; 4]);
    for bad in [
        InterpLaunch::new([6], [4]),
        InterpLaunch::new([2048], [2048]),
        InterpLaunch::new([4], [4]).with_sub_group_size(0),
    ] {
        let error = run_kernel(&module, "saxpy", &bad, &mut arguments).unwrap_err();
        assert!(matches!(error, InterpError::InvalidLaunch(_)), "{error}");
    }
    arguments.pop();
    let error = run_kernel(&module, "saxpy", &launch, &mut arguments).unwrap_err();
    assert!(
        matches!(error, InterpError::ArgumentMismatch { .. }),
        "{error}"
    );
}

#[test]
fn f16_fma_and_remainder_round_once() {
    // In f64 then via f32 to f16, the fma gave 1264; rounded once it is 1263, as on devices.
    let source = "
kernel k(halves: global mut [f16], floats: global mut [f32], a: f16, b: f16, c: f16) {
    halves[0] = fma(a, b, c);
    halves[1] = (c + a + b) - a;
    floats[0] = 1e10 % 3.0;
    floats[1] = -9.0 % 1.5;
}";
    let arguments = run(
        source,
        "k",
        one_item(),
        vec![
            InterpArgument::buffer(vec![f16::ZERO; 2]),
            InterpArgument::buffer(vec![0.0f32; 2]),
            InterpArgument::scalar(f16::from_f64(1.310546875)),
            InterpArgument::scalar(f16::from_f64(1.14453125)),
            InterpArgument::scalar(f16::from_f32(1262.0)),
        ],
    )
    .unwrap();
    let halves: Vec<f32> = arguments[0]
        .as_slice::<f16>()
        .unwrap()
        .iter()
        .map(|h| h.to_f32())
        .collect();
    // 1262 + 1.31 rounds to 1263 (f16 steps by 1 here), + 1.14 to 1264, - 1.31 to 1263.
    assert_eq!(halves, [1263.0, 1263.0]);
    let floats = arguments[1].as_slice::<f32>().unwrap();
    assert_eq!(floats[0], 1.0);
    assert!(floats[1] == 0.0 && floats[1].is_sign_negative());
}

#[test]
fn a_long_flat_operator_chain_runs() {
    // The parser accepts chains of up to 1024 operands; the interpreter's recursion over that
    // tree must fit the 2 MiB stack of a test thread.
    let terms = 1000;
    let chain = vec!["x"; terms].join(" + ");
    let products = vec!["(x - 2)"; 400].join(" * ");
    let source = format!(
        "kernel k(out: global mut [i32], x: i32) {{ out[0] = {chain}; out[1] = {products}; }}"
    );
    let arguments = run(
        &source,
        "k",
        one_item(),
        vec![
            InterpArgument::buffer(vec![0i32; 2]),
            InterpArgument::scalar(3i32),
        ],
    )
    .unwrap();
    assert_eq!(
        arguments[0].as_slice::<i32>().unwrap(),
        &[3 * terms as i32, 1]
    );
}

#[test]
fn a_private_array_may_be_passed_twice_when_neither_is_written() {
    let source = "
        fn dot(a: private [f32; 3], b: private [f32; 3]) -> f32 {
            return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
        }
        fn scale(v: private mut [f32; 3], by: f32) {
            for k in 0..3 {
                v[k] *= by;
            }
        }
        kernel norms(output: global mut [f32]) {
            let mut v: [f32; 3];
            v[0] = 1.0;
            v[1] = 2.0;
            v[2] = 2.0;
            output[0] = dot(v, v);
            scale(v, 2.0);
            output[1] = dot(v, v);
            output[2] = v[2];
        }
    ";
    let arguments = run(
        source,
        "norms",
        one_item(),
        vec![InterpArgument::buffer(vec![0.0f32; 3])],
    )
    .unwrap();
    assert_eq!(arguments[0].as_slice::<f32>().unwrap(), &[9.0, 36.0, 4.0]);
}

#[test]
fn descending_ranges_visit_the_ascending_values_in_reverse() {
    let source = "
kernel k(seen: global mut [u32], signed: global mut [i32], n: u32) {
    let mut count = 0u32;
    for k in (0..n).rev() {
        seen[count] = k;
        count += 1;
    }
    for k in (2..n).rev() step 3 {
        seen[count] = k;
        count += 1;
    }
    for k in (n..n).rev() {
        seen[count] = 99;
        count += 1;
    }
    let mut at = 0u32;
    for k in (-3..3i32).rev() step 2 {
        signed[at] = k;
        at += 1;
    }
}";
    let arguments = run(
        source,
        "k",
        one_item(),
        vec![
            InterpArgument::buffer(vec![0u32; 12]),
            InterpArgument::buffer(vec![0i32; 4]),
            InterpArgument::scalar(5u32),
        ],
    )
    .unwrap();
    // 4, 3, 2, 1, 0; then 4, 1 (down by 3, not below 2); nothing for the empty range.
    assert_eq!(
        arguments[0].as_slice::<u32>().unwrap(),
        &[4, 3, 2, 1, 0, 4, 0, 0, 0, 0, 0, 0]
    );
    assert_eq!(arguments[1].as_slice::<i32>().unwrap(), &[2, 0, -2, 0]);
}

#[test]
fn if_expressions_evaluate_only_the_chosen_arm() {
    // Division by zero in the arm not taken is never evaluated.
    let source = "
kernel k(out: global mut [i32], zero: i32) {
    out[0] = if zero == 0 { 7 } else { 1 / zero };
    out[1] = if zero != 0 { 1 / zero } else if zero > 0 { 2 } else { 3 };
}";
    let arguments = run(
        source,
        "k",
        one_item(),
        vec![
            InterpArgument::buffer(vec![0i32; 2]),
            InterpArgument::scalar(0i32),
        ],
    )
    .unwrap();
    assert_eq!(arguments[0].as_slice::<i32>().unwrap(), &[7, 3]);
}

#[test]
fn multi_dimensional_buffers_are_bounds_checked_per_dimension() {
    let source = "
kernel k(out: global mut [f32], grid: global [[f32]], row: i32, column: u32) {
    out[0] = grid[row, column];
}";
    // A 3 x 4 grid stored with rows of 5 elements: element [i, j] is grid[i * 5 + j].
    let case = |row: i32, column: u32| {
        run(
            source,
            "k",
            one_item(),
            vec![
                InterpArgument::buffer(vec![0.0f32]),
                InterpArgument::buffer((0..15).map(|i| i as f32).collect::<Vec<_>>()),
                InterpArgument::scalar(3u32),
                InterpArgument::scalar(4u32),
                InterpArgument::scalar(5u64),
                InterpArgument::scalar(1u64),
                InterpArgument::scalar(row),
                InterpArgument::scalar(column),
            ],
        )
    };
    assert_eq!(case(2, 3).unwrap()[0].as_slice::<f32>().unwrap(), &[13.0]);
    // Column 4 of row 0 is element 4 of the buffer, but outside the row.
    for (row, column, dimension, index, extent) in
        [(0, 4, 1, 4, 4), (3, 0, 0, 3, 3), (-1, 0, 0, -1, 3)]
    {
        let error = case(row, column).unwrap_err();
        let InterpError::OutOfBounds { message, .. } = &error else {
            panic!("expected an out-of-bounds error, got {error}");
        };
        assert_eq!(
            message,
            &format!("index {index} in dimension {dimension} of buffer `grid` of extent {extent}")
        );
        let pointed = pointed_at(source, &error);
        assert_eq!(pointed, if dimension == 0 { "row" } else { "column" });
    }
}

/// A kernel with multi-dimensional buffers runs its contiguous copy when every innermost
/// stride is 1, as devices do, and itself otherwise; the copy is marked here (it writes 2
/// where the kernel writes 1) so the output shows which ran.
#[test]
fn unit_innermost_strides_run_the_contiguous_copy() {
    let mut module = compile(
        "
kernel k(out: global mut [[u32]], grid: global [[u32]]) {
    out[0, 0] = grid[0, 0] + 1;
}",
    );
    let copy = module.functions[0]
        .contiguous_entry
        .expect("a contiguous copy");
    let copy = &mut module.functions[copy.0 as usize];
    assert_eq!(copy.name, "k$contiguous");
    kdsl_ir::visit_mut::rewrite_block(&mut copy.body, &mut |expression| {
        if let kdsl_ir::ExpressionKind::Literal(kdsl_ir::Literal::Integer(value)) =
            &mut expression.kind
        {
            if expression.ty == ScalarType::U32 {
                *value *= 2;
            }
        }
    });
    let written = |out_strides: [u64; 2], grid_strides: [u64; 2]| {
        let mut arguments = shaped(vec![0u32; 4], &[2, 2], &out_strides);
        arguments.extend(shaped(vec![10u32; 4], &[2, 2], &grid_strides));
        kdsl_interp::run_kernel(&module, "k", &one_item(), &mut arguments).unwrap();
        arguments[0].as_slice::<u32>().unwrap()[0]
    };
    assert_eq!(written([2, 1], [2, 1]), 12, "row-major: the copy");
    assert_eq!(
        written([1, 2], [2, 1]),
        11,
        "a transposed output: the kernel"
    );
    assert_eq!(
        written([2, 1], [1, 2]),
        11,
        "a transposed input: the kernel"
    );
    let error = kdsl_interp::run_kernel(&module, "k$contiguous", &one_item(), &mut []);
    assert!(
        matches!(&error, Err(InterpError::KernelNotFound { available, .. }) if available == &["k"]),
        "a copy is no kernel of its own: {error:?}"
    );
}

#[test]
fn records_are_read_and_written_at_their_c_offsets() {
    let source = "
struct Pair { flag: bool, value: i64, small: u16 }

kernel k(pairs: global mut [Pair], sums: global mut [i64], at: u32) {
    let i = get_global_id(0);
    let p = pairs[i];
    if p.flag {
        sums[i] = p.value + (p.small as i64);
    }
    if i == 0u32 {
        pairs[at].small = 7u16;
    }
}";
    // Pair: flag at 0, value at 8, small at 16; 24 bytes. Padding holds 0xEE and must stay.
    let mut bytes = vec![0xEEu8; 2 * 24];
    for (index, record) in bytes.chunks_exact_mut(24).enumerate() {
        record[0] = index as u8;
        record[8..16].copy_from_slice(&(-100i64 * (index as i64 + 1)).to_le_bytes());
        record[16..18].copy_from_slice(&(3u16 + index as u16).to_le_bytes());
    }
    let arguments = |at: u32| {
        vec![
            InterpArgument::buffer(bytes.clone()),
            InterpArgument::buffer(vec![0i64; 2]),
            InterpArgument::scalar(at),
        ]
    };
    let launch = InterpLaunch::new([2], [2]);
    let done = run(source, "k", launch, arguments(0)).unwrap();
    assert_eq!(done[1].as_slice::<i64>().unwrap(), &[0, -200 + 4]);
    let mut want = bytes.clone();
    want[16..18].copy_from_slice(&7u16.to_le_bytes());
    assert_eq!(done[0].as_slice::<u8>().unwrap(), want.as_slice());

    // The record index is bounded by the number of records, not of bytes.
    let error = run(source, "k", launch, arguments(2)).unwrap_err();
    let InterpError::OutOfBounds { message, .. } = &error else {
        panic!("expected an out-of-bounds error, got {error}");
    };
    assert!(
        message.contains("index 2 into buffer `pairs` of 2 elements"),
        "{message}"
    );
    assert_eq!(pointed_at(source, &error), "pairs[at].small = 7u16;");

    // A buffer that is not whole records, or not bytes, is refused.
    for wrong in [
        InterpArgument::buffer(vec![0u8; 30]),
        InterpArgument::buffer(vec![0i64; 6]),
    ] {
        let mut arguments = arguments(0);
        arguments[0] = wrong;
        let error = run(source, "k", launch, arguments).unwrap_err();
        assert!(
            matches!(&error, InterpError::ArgumentMismatch { index: 0, message } if message.contains("`Pair` records (24 bytes each)")),
            "{error}"
        );
    }
}

/// A whole-record assignment to a record binding reads every field before writing any, as
/// tuple and vector assignments do, so fields can be swapped in one assignment.
#[test]
fn a_record_assignment_reads_every_field_before_writing() {
    let source = "
struct Pair { a: u32, b: u32 }

kernel swap(pairs: global mut [Pair]) {
    let i = get_global_id(0);
    let mut r = pairs[i];
    r = Pair { a: r.b, b: r.a };
    let mut s = r;
    s = Pair { b: s.a + 10u32, a: s.b };
    pairs[i] = s;
}";
    let mut bytes = Vec::new();
    for (a, b) in [(1u32, 2u32), (3, 4)] {
        bytes.extend(a.to_le_bytes());
        bytes.extend(b.to_le_bytes());
    }
    let done = run(
        source,
        "swap",
        InterpLaunch::new([2], [2]),
        vec![InterpArgument::buffer(bytes)],
    )
    .unwrap();
    let words: Vec<u32> = done[0]
        .as_slice::<u8>()
        .unwrap()
        .chunks_exact(4)
        .map(|word| u32::from_le_bytes(word.try_into().unwrap()))
        .collect();
    // r = (b, a), then s = (r.b, r.a + 10) = (a, b + 10).
    assert_eq!(words, [1, 12, 3, 14]);
}

#[test]
fn print_writes_each_work_item_in_program_order() {
    let module = compile_file("tests/kernels/print.krn");
    let mut arguments = vec![
        InterpArgument::buffer(vec![0.0f32; 4]),
        InterpArgument::scalar(0.5f32),
    ];
    let launch = InterpLaunch::new([4], [2]);
    let (result, output) = run_kernel_with_output(&module, "print_values", &launch, &mut arguments);
    result.unwrap();
    // The text the device suite expects from every device, in work-item order.
    assert_eq!(output, include_str!("../../../tests/kernels/print.stdout"));
}

#[test]
fn print_orders_by_work_item_across_barriers_and_keeps_output_before_an_error() {
    let source = "
kernel k(out: global mut [u32], bad: u32) {
    let i = get_global_id(0);
    print(\"{} before\", i);
    barrier();
    print(\"{} after\", i);
    out[i + bad] = i;
}";
    let module = compile(source);
    let launch = InterpLaunch::new([4, 2], [2, 2]);
    let mut arguments = vec![
        InterpArgument::buffer(vec![0u32; 4]),
        InterpArgument::scalar(0u32),
    ];
    let (result, output) = run_kernel_with_output(&module, "k", &launch, &mut arguments);
    result.unwrap();
    let expected: String = (0..8)
        .map(|linear| format!("{} before\n{} after\n", linear % 4, linear % 4))
        .collect();
    assert_eq!(output, expected);

    // Work-item 3 writes out of bounds; what was printed before the error stays.
    let mut arguments = vec![
        InterpArgument::buffer(vec![0u32; 4]),
        InterpArgument::scalar(1u32),
    ];
    let launch = InterpLaunch::new([4], [4]);
    let (result, output) = run_kernel_with_output(&module, "k", &launch, &mut arguments);
    assert!(
        matches!(result, Err(InterpError::OutOfBounds { .. })),
        "{result:?}"
    );
    assert!(output.starts_with("0 before\n0 after\n"), "{output}");
}

#[test]
fn launch_sized_local_arrays_are_per_group_poisoned_and_bounds_checked() {
    let source = "
kernel k(out: global mut [u32], scratch: local mut [u32], reach: u32) {
    let lid = get_local_id(0);
    if lid == 0 { out[get_group_id(0) * 3] = scratch[1]; }
    barrier();
    scratch[lid + reach] = get_group_id(0) * 100 + lid;
    barrier();
    if lid == 0 {
        out[get_group_id(0) * 3 + 1] = scratch[reach];
        out[get_group_id(0) * 3 + 2] = scratch[reach + 1];
    }
}";
    let local = |length| InterpArgument::local(ScalarType::U32, length);
    let arguments = run(
        source,
        "k",
        InterpLaunch::new([8], [4]),
        vec![
            InterpArgument::buffer(vec![0u32; 6]),
            local(5),
            InterpArgument::scalar(1u32),
        ],
    )
    .unwrap();
    // Each group reads its own array: poisoned before its writes, its own values after.
    assert_eq!(
        arguments[0].as_slice::<u32>().unwrap(),
        &[u32::MAX, 0, 1, u32::MAX, 100, 101]
    );
    let error = run(
        source,
        "k",
        InterpLaunch::new([8], [4]),
        vec![
            InterpArgument::buffer(vec![0u32; 6]),
            local(4),
            InterpArgument::scalar(1u32),
        ],
    )
    .unwrap_err();
    assert!(matches!(error, InterpError::OutOfBounds { .. }), "{error}");
    assert!(
        error
            .to_string()
            .contains("index 4 into local array `scratch` of 4 elements"),
        "{error}"
    );
    assert_eq!(
        pointed_at(source, &error),
        "scratch[lid + reach] = get_group_id(0) * 100 + lid;"
    );
    // The argument must be local memory of the parameter's type.
    for wrong in [
        InterpArgument::buffer(vec![0u32; 4]),
        InterpArgument::local(ScalarType::I32, 4),
        InterpArgument::scalar(4u32),
    ] {
        let error = run(
            source,
            "k",
            InterpLaunch::new([8], [4]),
            vec![
                InterpArgument::buffer(vec![0u32; 6]),
                wrong,
                InterpArgument::scalar(1u32),
            ],
        )
        .unwrap_err();
        assert!(
            matches!(error, InterpError::ArgumentMismatch { index: 1, .. }),
            "{error}"
        );
    }
}

#[test]
fn asynchronous_copies_land_at_the_wait_that_completes_their_group() {
    // Reads before each wait see what was there (local memory starts poisoned); each wait
    // lands the groups older than its count, in order; uncommitted copies stay in flight.
    let source = "
kernel k(out: global mut [f32], input: global [f32]) {
    local tile: [f32; 12];
    tile[8] = 7.0;
    async_copy(tile[0], input[0], 4);
    async_commit();
    async_copy(tile[4], input[4], 4);
    async_commit();
    async_copy(tile[8], input[8], 4);
    out[0] = tile[0];
    async_wait(1);
    out[1] = tile[0];
    out[2] = tile[4];
    async_wait(0);
    out[3] = tile[4];
    out[4] = tile[8];
    async_commit();
    async_wait(0);
    out[5] = tile[11];
}";
    let input: Vec<f32> = (1..=12).map(|i| i as f32).collect();
    let arguments = run(
        source,
        "k",
        one_item(),
        vec![
            InterpArgument::buffer(vec![0.0f32; 6]),
            InterpArgument::buffer(input),
        ],
    )
    .unwrap();
    let InterpArgument::Buffer(kdsl_interp::HostBuffer::F32(out)) = &arguments[0] else {
        panic!("an f32 buffer");
    };
    assert!(out[0].is_nan(), "before the wait: poison, got {}", out[0]);
    assert_eq!(out[1], 1.0);
    assert!(out[2].is_nan(), "the second group is still in flight");
    assert_eq!(out[3], 5.0);
    assert_eq!(out[4], 7.0, "the third copy was not committed yet");
    assert_eq!(out[5], 12.0);
}

#[test]
fn a_misaligned_asynchronous_copy_is_undefined() {
    let source = "
kernel k(input: global [f32], at: u32) {
    local tile: [f32; 16];
    async_copy(tile[0], input[at], 4);
}";
    let error = run(
        source,
        "k",
        one_item(),
        vec![
            InterpArgument::buffer(vec![0.0f32; 16]),
            InterpArgument::scalar(2u32),
        ],
    )
    .unwrap_err();
    assert!(
        matches!(error, InterpError::UndefinedBehaviour { .. }),
        "{error:?}"
    );
    assert_eq!(
        pointed_at(source, &error),
        "async_copy(tile[0], input[at], 4);"
    );
}

/// A tile store reads its local memory until its wait: writing that memory before the wait
/// is undefined behaviour, reported at the wait; after the wait it is not. A misaligned
/// tile is undefined too.
#[test]
fn writing_a_stored_tile_before_its_wait_is_undefined() {
    let kernel = |between: &str| {
        format!(
            "
kernel k(out: global mut [[f32]]) {{
    local tile: [f32; 32 * 8];
    let t = get_local_id(0);
    tile[t] = t as f32;
    async_tile_store(out[0, 0], tile[0], 8);
    {between}
    tile[t] = 0.0;
    async_tile_store_wait();
}}"
        )
    };
    let arguments = || shaped(vec![-1.0f32; 8 * 32], &[8, 32], &[32, 1]);
    let launch = || InterpLaunch::new([256], [256]);
    let early = kernel("");
    let error = run(&early, "k", launch(), arguments()).unwrap_err();
    assert!(
        matches!(error, InterpError::UndefinedBehaviour { .. }),
        "{error:?}"
    );
    assert_eq!(pointed_at(&early, &error), "async_tile_store_wait();");
    let waited = kernel("async_tile_store_wait();");
    let out = run(&waited, "k", launch(), arguments()).unwrap();
    let InterpArgument::Buffer(kdsl_interp::HostBuffer::F32(out)) = &out[0] else {
        panic!("not an f32 buffer");
    };
    // A tile that does not start at a multiple of 1024 bytes is undefined.
    let misaligned = waited.replace("tile[0], 8", "tile[8], 8");
    let error = run(&misaligned, "k", launch(), arguments()).unwrap_err();
    assert!(
        matches!(error, InterpError::UndefinedBehaviour { .. }),
        "{error:?}"
    );
    assert_eq!(
        pointed_at(&misaligned, &error),
        "async_tile_store(out[0, 0], tile[8], 8);"
    );
    // Element (r, c) came from tile[landing(r, c)], which held its own index.
    for (at, &value) in out.iter().enumerate() {
        let (r, c) = (at as u32 / 32, at as u32 % 32);
        assert_eq!(value, (r * 32 + (c ^ (r % 8 * 4))) as f32, "({r}, {c})");
    }
}
