//! Matrix tiles (f16, tf32, integer) and asynchronous copies.

use super::*;

// Matrix tiles. The interpreter and the plain lowering add each element's products in `k`
// order in `f32`; tensor cores add in their own order (and, for f32, with their own internal
// rounding), so results agree within 1e-4 relative to max(|d|, 1) for these sizes (inputs in
// [-1, 1], K at most 64: the bound K * 2^-23 * sum |a b| is below that). `matrix_interpreter_*`
// holds the interpreter to an f64 reference of the exact products of the rounded inputs.

fn f16s(random: &mut Random, count: usize) -> Vec<kdsl_interp::f16> {
    random
        .f32s(count, -1.0, 1.0)
        .into_iter()
        .map(kdsl_interp::f16::from_f32)
        .collect()
}

/// D = A x B + C in f64 from `f64` copies of the (already rounded) inputs.
fn reference_mma(a: &[f64], b: &[f64], c: &[f64], m: usize, n: usize, k: usize) -> Vec<f64> {
    let mut d = c.to_vec();
    for row in 0..m {
        for column in 0..n {
            for depth in 0..k {
                d[row * n + column] += a[row * k + depth] * b[depth * n + column];
            }
        }
    }
    d
}

/// Work-groups of 64 hold one whole sub-group on every device (32 wide on NVIDIA and RDNA, 64
/// on CDNA), which matrix units need; the kernels compute with sub-group 0.
fn matrix_global_case(seed: u64, m: usize, n: usize, k: usize) -> Case {
    let mut random = Random::new(seed);
    Case::new(
        "mma_global",
        InterpLaunch::new([64 * n as u32 / 16, m as u32 / 16], [64, 1]),
        vec![
            buffer(vec![0.0f32; m * n]),
            buffer(f16s(&mut random, m * k)),
            buffer(f16s(&mut random, k * n)),
            buffer(random.f32s(m * n, -1.0, 1.0)),
            scalar(n as u32),
            scalar(k as u32),
        ],
    )
    .compare(0, Compare::Close(1e-4))
}

/// `mma_local` of `tests/kernels/matrix.krn`: a 64 x 64 x 32 product in tiles staged in
/// local memory, 64 work-items per 32 x 32 block.
fn mma_local_case(random: &mut Random) -> Case {
    let (m, n, k) = (64usize, 64usize, 32usize);
    Case::new(
        "mma_local",
        InterpLaunch::new([64 * n as u32 / 32, m as u32 / 32], [64, 1]),
        vec![
            buffer(vec![0.0f32; m * n]),
            buffer(f16s(random, m * k)),
            buffer(f16s(random, k * n)),
            scalar(n as u32),
            scalar(k as u32),
            scalar(0.5f32),
        ],
    )
}

#[test]
fn matrix_tiles() {
    let local = mma_local_case(&mut Random::new(91)).compare(0, Compare::Close(1e-4));
    differential(
        "tests/kernels/matrix.krn",
        || test_kernel_bundle("matrix"),
        examples_required(),
        vec![matrix_global_case(90, 32, 48, 64), local],
    );
}

#[test]
fn matrix_interpreter_is_exact_products_summed_in_f32() {
    let (m, n, k) = (32usize, 48usize, 64usize);
    let module = compile_file("tests/kernels/matrix.krn");
    let case = matrix_global_case(90, m, n, k);
    let mut arguments = case.arguments.clone();
    run_kernel(&module, "mma_global", &case.launch, &mut arguments).expect("interpreter");
    let floats = |index: usize| as_f64s(&case.arguments[index]).expect("a float buffer");
    let want = reference_mma(&floats(1), &floats(2), &floats(3), m, n, k);
    let got = as_f64s(&arguments[0]).unwrap();
    for (index, (want, got)) in want.iter().zip(&got).enumerate() {
        // f16 products are exact in f32; only the 64 f32 additions round.
        assert!(
            (want - got).abs() <= 64.0 * f64::from(f32::EPSILON) * want.abs().max(1.0) * 8.0,
            "element {index}: {want} against {got}"
        );
    }
}

/// tests/kernels/matrix_bf16.krn: `f32` inputs that the kernel rounds to `bf16` (as the
/// interpreter does), whose products are exact in `f32`.
#[test]
fn matrix_tiles_bf16() {
    let case = f32_input_case("mma_bf16", 92, 32, 48, 64);
    differential(
        "tests/kernels/matrix_bf16.krn",
        || test_kernel_bundle("matrix_bf16"),
        examples_required(),
        vec![case],
    );
}

fn tf32_case(seed: u64, m: usize, n: usize, k: usize) -> Case {
    f32_input_case("mma_tf32", seed, m, n, k)
}

/// A case of `kernel` (`d`, `a`, `b`, `c`, `n`, `k`, one sub-group per 16 x 16 tile of D)
/// on `f32` inputs in [-1, 1], compared within 1e-4.
fn f32_input_case(kernel: &'static str, seed: u64, m: usize, n: usize, k: usize) -> Case {
    let mut random = Random::new(seed);
    Case::new(
        kernel,
        InterpLaunch::new([64 * n as u32 / 16, m as u32 / 16], [64, 1]),
        vec![
            buffer(vec![0.0f32; m * n]),
            buffer(random.f32s(m * k, -1.0, 1.0)),
            buffer(random.f32s(k * n, -1.0, 1.0)),
            buffer(random.f32s(m * n, -1.0, 1.0)),
            scalar(n as u32),
            scalar(k as u32),
        ],
    )
    .compare(0, Compare::Close(1e-4))
}

#[test]
fn matrix_tf32() {
    // Ties (the dropped 13 bits exactly 0x1000) round away from zero, the largest values to
    // infinity; infinities stay (NaNs too, but an exact comparison cannot hold NaNs equal).
    let mut inputs: Vec<f32> = [
        0x3f80_1000u32,
        0xbf80_1000,
        0x3f80_0fff,
        0x3f80_3000,
        0x7f7f_f000,
        0x7f80_0000,
        0xff80_0000,
    ]
    .into_iter()
    .map(f32::from_bits)
    .collect();
    inputs.extend(Random::new(93).f32s(57, -1e3, 1e3));
    let rounding = Case::new(
        "round_to_tf32",
        InterpLaunch::covering(inputs.len() as u32, 64),
        vec![buffer(vec![0.0f32; inputs.len()]), buffer(inputs)],
    )
    .compare(0, Compare::Exact);
    differential(
        "tests/kernels/matrix_tf32.krn",
        || test_kernel_bundle("matrix_tf32"),
        examples_required(),
        vec![tf32_case(92, 32, 32, 24), rounding],
    );
}

#[test]
fn matrix_interpreter_rounds_tf32_inputs() {
    let (m, n, k) = (32usize, 32usize, 24usize);
    let module = compile_file("tests/kernels/matrix_tf32.krn");
    let case = tf32_case(92, m, n, k);
    let mut arguments = case.arguments.clone();
    run_kernel(&module, "mma_tf32", &case.launch, &mut arguments).expect("interpreter");
    let rounded = |index: usize| -> Vec<f64> {
        as_f64s(&case.arguments[index])
            .unwrap()
            .into_iter()
            .map(|x| {
                f64::from(f32::from_bits(kdsl_ir::scalar::round_tf32(
                    (x as f32).to_bits(),
                )))
            })
            .collect()
    };
    let c = as_f64s(&case.arguments[3]).unwrap();
    let want = reference_mma(&rounded(1), &rounded(2), &c, m, n, k);
    let got = as_f64s(&arguments[0]).unwrap();
    for (index, (want, got)) in want.iter().zip(&got).enumerate() {
        assert!(
            (want - got).abs() <= 24.0 * f64::from(f32::EPSILON) * want.abs().max(1.0) * 8.0,
            "element {index}: {want} against {got}"
        );
    }
    // Unrounded inputs would differ far more than that somewhere.
    let plain = reference_mma(
        &as_f64s(&case.arguments[1]).unwrap(),
        &as_f64s(&case.arguments[2]).unwrap(),
        &c,
        m,
        n,
        k,
    );
    assert!(plain.iter().zip(&got).any(|(p, g)| (p - g).abs() > 1e-4));
}

// Integer tiles are exact everywhere: the device must match the interpreter bit for bit, and
// the interpreter an exact `i64` reference of the products summed (wrapped to `i32`).

/// `count` values of every 8-bit pattern the generator gives, as `T` (`i8` or `u8`).
fn bytes<T>(random: &mut Random, count: usize, convert: fn(u8) -> T) -> Vec<T> {
    (0..count)
        .map(|_| convert(random.next_u64() as u8))
        .collect()
}

/// `mma_i8` or `mma_u8`: D = A x B + C, with C near the `i32` limits so some sums wrap.
fn integer_case<T: kdsl_interp::HostElement>(
    kernel: &'static str,
    convert: fn(u8) -> T,
    seed: u64,
    (m, n, k): (usize, usize, usize),
) -> Case {
    let mut random = Random::new(seed);
    let a = bytes(&mut random, m * k, convert);
    let b = bytes(&mut random, k * n, convert);
    let c: Vec<i32> = (0..m * n)
        .map(|index| match index % 4 {
            0 => i32::MAX - random.i64_in(0, 1000) as i32,
            1 => i32::MIN + random.i64_in(0, 1000) as i32,
            _ => random.i64_in(-100_000, 100_000) as i32,
        })
        .collect();
    Case::new(
        kernel,
        InterpLaunch::new([64 * n as u32 / 16, m as u32 / 16], [64, 1]),
        vec![
            buffer(vec![0i32; m * n]),
            buffer(a),
            buffer(b),
            buffer(c),
            scalar(n as u32),
            scalar(k as u32),
        ],
    )
    .compare(0, Compare::Exact)
}

fn i8_case(seed: u64) -> Case {
    integer_case("mma_i8", |byte| byte as i8, seed, (32, 48, 64))
}

fn u8_case(seed: u64) -> Case {
    integer_case("mma_u8", |byte| byte, seed, (32, 32, 48))
}

#[test]
fn matrix_i8() {
    let (m, n, k) = (32usize, 32usize, 48usize);
    let mut random = Random::new(96);
    let bias = Case::new(
        "mma_i8_bias",
        InterpLaunch::new([64 * n as u32 / 16, m as u32 / 16], [64, 1]),
        vec![
            buffer(vec![0i32; m * n]),
            buffer(bytes(&mut random, m * k, |byte| byte as i8)),
            buffer(bytes(&mut random, k * n, |byte| byte as i8)),
            scalar(n as u32),
            scalar(k as u32),
            scalar(-12_345i32),
        ],
    )
    .compare(0, Compare::Exact);
    differential(
        "tests/kernels/matrix_i8.krn",
        || test_kernel_bundle("matrix_i8"),
        examples_required(),
        vec![i8_case(95), bias],
    );
}

#[test]
fn matrix_u8() {
    differential(
        "tests/kernels/matrix_u8.krn",
        || test_kernel_bundle("matrix_u8"),
        examples_required(),
        vec![u8_case(97)],
    );
}

/// D = A x B + C exactly, in `i64`.
fn reference_integer_mma(
    a: &[i64],
    b: &[i64],
    c: &[i32],
    (m, n, k): (usize, usize, usize),
) -> Vec<i64> {
    let mut d: Vec<i64> = c.iter().map(|&x| x.into()).collect();
    for row in 0..m {
        for column in 0..n {
            for depth in 0..k {
                d[row * n + column] += a[row * k + depth] * b[depth * n + column];
            }
        }
    }
    d
}

#[test]
fn matrix_interpreter_is_exact_on_integer_tiles() {
    for (file, kernel, case, shape) in [
        ("matrix_i8", "mma_i8", i8_case(95), (32, 48, 64)),
        ("matrix_u8", "mma_u8", u8_case(97), (32, 32, 48)),
    ] {
        let module = compile_file(&format!("tests/kernels/{file}.krn"));
        let mut arguments = case.arguments.clone();
        run_kernel(&module, kernel, &case.launch, &mut arguments).expect("interpreter");
        let widen = |index: usize| -> Vec<i64> {
            match &case.arguments[index] {
                InterpArgument::Buffer(HostBuffer::I8(v)) => v.iter().map(|&x| x.into()).collect(),
                InterpArgument::Buffer(HostBuffer::U8(v)) => v.iter().map(|&x| x.into()).collect(),
                other => panic!("not a byte buffer: {other:?}"),
            }
        };
        let InterpArgument::Buffer(HostBuffer::I32(c)) = &case.arguments[3] else {
            panic!("C is an i32 buffer");
        };
        let exact = reference_integer_mma(&widen(1), &widen(2), c, shape);
        // The sums wrap to i32 (two's complement), as `wrapping_add` does.
        let want: Vec<i32> = exact.iter().map(|&x| x as i32).collect();
        let InterpArgument::Buffer(HostBuffer::I32(got)) = &arguments[0] else {
            panic!("D is an i32 buffer");
        };
        assert_eq!(&want, got, "{kernel}");
        // C near the limits makes some sums leave the i32 range, so wrapping is tested.
        let outside = |x: &&i64| i32::try_from(**x).is_err();
        assert!(exact.iter().filter(outside).count() > 10, "{kernel}");
    }
}

#[test]
fn gemm_on_matrix_units() {
    // k = 256: four stages of hgemm's 64 and eight of sgemm_tf32's 32, so both rings of three
    // stages wrap around.
    let (m, n, k) = (128usize, 256usize, 256usize);
    let mut random = Random::new(94);
    let (a, b) = (f16s(&mut random, m * k), f16s(&mut random, k * n));
    // Three stages of A (128 x 72) and B (64 x 136).
    let ring = InterpArgument::local(ScalarType::F16, 3 * (128 * 72 + 64 * 136));
    on_example("hgemm", vec![gemm_case("hgemm", (m, n, k), a, b, ring)]);
    let (a, b) = (random.f32s(m * k, -1.0, 1.0), random.f32s(k * n, -1.0, 1.0));
    // Three stages of A (128 x 36) and B (32 x 136).
    let ring = InterpArgument::local(ScalarType::F32, 3 * (128 * 36 + 32 * 136));
    on_example(
        "sgemm_tf32",
        vec![gemm_case("sgemm_tf32", (m, n, k), a, b, ring)],
    );
}

#[test]
fn gemm_on_matrix_groups() {
    // Five stages: the rings of four wrap around; one work-group of two matrix groups.
    let (m, n) = (128usize, 256usize);
    let mut random = Random::new(131);
    let k = 5 * 64;
    // hgemm_wgmma is persistent: its one work-group walks both blocks of a 256 x 256 C, the
    // second block's first copies landing in the ring while the first block's C is stored.
    let rows = 2 * m;
    let (a, b) = (f16s(&mut random, rows * k), f16s(&mut random, k * n));
    let ring = InterpArgument::local(ScalarType::F16, 4 * (128 * 64 + 64 * 256));
    let mut walk = wgmma_gemm_case("hgemm_wgmma", (rows, n, k), a, b, ring);
    walk.launch = InterpLaunch::new([256, 1], [256, 1]);
    on_example("hgemm_wgmma", vec![walk]);
    let k = 5 * 32;
    // Inputs that are tf32 values already: wgmma reads f32 from local memory and truncates it
    // to tf32 where the plain definition rounds (docs/language.md allows either), which moves
    // results by about 1e-3 here (measured on the H200); on tf32 values both agree, so the
    // comparison within 1e-4 checks the layouts and descriptors.
    let tf32s = |random: &mut Random, count| -> Vec<f32> {
        let values = random.f32s(count, -1.0, 1.0);
        values
            .into_iter()
            .map(|x| f32::from_bits(kdsl_ir::scalar::round_tf32(x.to_bits())))
            .collect()
    };
    let (a, b) = (tf32s(&mut random, m * k), tf32s(&mut random, k * n));
    let ring = InterpArgument::local(ScalarType::F32, 4 * (128 * 32 + 32 * 256));
    on_example(
        "sgemm_tf32_wgmma",
        vec![wgmma_gemm_case("sgemm_tf32_wgmma", (m, n, k), a, b, ring)],
    );
    let k = 5 * 64;
    let bf16s = |random: &mut Random, count| -> Vec<kdsl_interp::bf16> {
        let values = random.f32s(count, -1.0, 1.0);
        values
            .into_iter()
            .map(kdsl_interp::bf16::from_f32)
            .collect()
    };
    let (a, b) = (bf16s(&mut random, m * k), bf16s(&mut random, k * n));
    let ring = InterpArgument::local(ScalarType::Bf16, 4 * (128 * 64 + 64 * 256));
    on_example(
        "gemm_bf16_wgmma",
        vec![wgmma_gemm_case("gemm_bf16_wgmma", (m, n, k), a, b, ring)],
    );
}

/// A GEMM of wgmma_variants.py's form (`c`, `a`, `b`, `m`, `n`, `k`, then its ring): 256
/// work-items per 128 x 256 block of C, compared within 1e-4.
fn wgmma_gemm_case<T: kdsl_interp::HostElement>(
    kernel: &'static str,
    (m, n, k): (usize, usize, usize),
    a: Vec<T>,
    b: Vec<T>,
    ring: InterpArgument,
) -> Case {
    let mut case = gemm_case(kernel, (m, n, k), a, b, ring);
    case.launch = InterpLaunch::new([n as u32, m as u32 / 128], [256, 1]);
    case
}

#[test]
fn matrix_ring_in_launch_sized_memory() {
    // Four steps of 32: the ring of three buffers wraps around.
    let (m, n, k) = (128usize, 128usize, 128usize);
    let mut random = Random::new(97);
    let (a, b) = (f16s(&mut random, m * k), f16s(&mut random, k * n));
    // Three buffers of A (128 x 40) and B (32 x 136).
    let ring = InterpArgument::local(ScalarType::F16, 3 * (128 * 40 + 32 * 136));
    let mut case = gemm_case("hgemm_ring", (m, n, k), a, b, ring);
    case.check = Some(ring_product_check);
    on_test_kernel("matrix_ring", vec![case]);
}

/// A GEMM of the generator's form (`c`, `a`, `b`, `m`, `n`, `k`, then its ring), one
/// 128-work-item group per 128 x 128 block of C, compared within 1e-4.
fn gemm_case<T: kdsl_interp::HostElement>(
    kernel: &'static str,
    (m, n, k): (usize, usize, usize),
    a: Vec<T>,
    b: Vec<T>,
    ring: InterpArgument,
) -> Case {
    Case::new(
        kernel,
        InterpLaunch::new([128 * n as u32 / 128, m as u32 / 128], [128, 1]),
        vec![
            buffer(vec![0.0f32; m * n]),
            buffer(a),
            buffer(b),
            scalar(m as u32),
            scalar(n as u32),
            scalar(k as u32),
            ring,
        ],
    )
    .compare(0, Compare::Close(1e-4))
}

/// The interpreter's `hgemm_ring` against the product itself: a ring read out of turn would
/// agree with every device that copies at once.
fn ring_product_check(reference: &[InterpArgument], _: &[InterpArgument]) -> CaseResult {
    let size = |index: usize| match reference[index] {
        InterpArgument::Scalar(ScalarValue::U32(value)) => value as usize,
        _ => 0,
    };
    let (m, n, k) = (size(3), size(4), size(5));
    let floats = |index: usize| as_f64s(&reference[index]).unwrap_or_default();
    let want = reference_mma(&floats(1), &floats(2), &vec![0.0; m * n], m, n, k);
    let got = floats(0);
    if want.len() != got.len() || want.is_empty() {
        return Err(format!("{} results, {} expected", got.len(), want.len()));
    }
    match want
        .iter()
        .zip(&got)
        .position(|(want, got)| (want - got).abs() > 1e-5 * want.abs().max(1.0))
    {
        Some(index) => Err(format!(
            "element {index} of the interpreter's product: {} against {}",
            got[index], want[index]
        )),
        None => Ok(()),
    }
}

// Matrix-group tiles (tests/kernels/matrix_group.krn). The inputs are small integers, so every
// product and sum is exact in f32 and every target, in any order of summation, gives the same
// bits; the host reference reads the layouts from `kdsl_ir::matrix_group`, their one
// definition.

/// Where a kernel of tests/kernels/matrix_group.krn keeps its operands (element counts).
struct GroupKernel {
    name: &'static str,
    /// N and K.
    columns: u32,
    depth: u32,
    /// `A`: where group 0's starts, the chunk stride, how far apart two groups' are, the length.
    a_start: u32,
    a_chunk: u32,
    a_group: u32,
    a_length: u32,
    /// `B`: its start, chunk stride and length; whether it is in launch-sized local memory.
    b_start: u32,
    b_chunk: u32,
    b_length: u32,
    local_b: bool,
}

const GROUP_WIDE: GroupKernel = GroupKernel {
    name: "group_mma_wide",
    columns: 128,
    depth: 64,
    a_start: 8,
    a_chunk: 64 * 64 + 8,
    a_group: 64 * 64 + 8,
    a_length: 8 + 2 * (64 * 64 + 8),
    b_start: 8,
    b_chunk: 64 * 64 + 8,
    b_length: 8 + 2 * (64 * 64 + 8),
    local_b: false,
};

const GROUP_NARROW: GroupKernel = GroupKernel {
    name: "group_mma_narrow",
    columns: 16,
    depth: 48,
    a_start: 16,
    a_chunk: 64 * 64 + 16,
    a_group: 64 * 64 + 16,
    a_length: 16 + 2 * (64 * 64 + 16),
    b_start: 16,
    b_chunk: 48 * 64 + 8,
    b_length: 16 + 48 * 64 + 8,
    local_b: true,
};

/// A launch of one work-group of `items` (128: one matrix group, 256: two): `A` of both groups
/// and `B` with integers from -4 to 4 at the places `a_index` and `b_index` give, 99 in the
/// padding (which would change any result that read it), and `C` with integers from -1000 to
/// 1000 in each work-item's accumulator array. With `fractions`, `A` and `B` hold `f16`
/// values from -1 to 1 and `C` fractions too, so the sums round and only adding in k order
/// gives the reference's bits.
fn group_case(kernel: &GroupKernel, items: u32, seed: u64, fractions: bool) -> Case {
    use kdsl_ir::matrix_group::ROWS;
    let shape = f16_shape(kernel);
    let mut random = Random::new(seed);
    let mut small = || {
        if fractions {
            kdsl_interp::f16::from_f32(random.f32s(1, -1.0, 1.0)[0]).to_f32()
        } else {
            random.i64_in(-4, 5) as f32
        }
    };
    let mut a = vec![99.0f32; kernel.a_length as usize];
    for group in 0..2 {
        for row in 0..ROWS {
            for column in 0..kernel.depth {
                let start = kernel.a_start + group * kernel.a_group;
                let at = shape.a_index(start, row, column, kernel.a_chunk);
                a[at as usize] = small();
            }
        }
    }
    let mut b = vec![99.0f32; kernel.b_length as usize];
    for row in 0..kernel.depth {
        for column in 0..kernel.columns {
            b[shape.b_index(kernel.b_start, row, column, kernel.b_chunk) as usize] = small();
        }
    }
    let length = (items * kernel.columns / 2) as usize;
    let c: Vec<f32> = if fractions {
        random.f32s(length, -1000.0, 1000.0)
    } else {
        (0..length)
            .map(|_| random.i64_in(-1000, 1001) as f32)
            .collect()
    };
    let halves = |values: Vec<f32>| -> Vec<kdsl_interp::f16> {
        values.into_iter().map(kdsl_interp::f16::from_f32).collect()
    };
    let mut arguments = vec![
        buffer(vec![0.0f32; length]),
        buffer(halves(a)),
        buffer(halves(b)),
        buffer(c),
    ];
    if kernel.local_b {
        arguments.push(InterpArgument::local(
            ScalarType::F16,
            kernel.b_length.into(),
        ));
    }
    let mut case = Case::new(kernel.name, InterpLaunch::new([items], [items]), arguments);
    case.check = Some(group_reference_check);
    case
}

/// Each work-item's accumulator after `acc += A x B`, from the launch's inputs: work-item t of
/// group g holds element (row, column) = `accumulator_position(t, i)` at index i, the sum of
/// its products (exact in `f32` for `f16` inputs) added in k order onto it in `f32`, as
/// docs/language.md defines it.
fn group_reference(arguments: &[InterpArgument]) -> Vec<f64> {
    use kdsl_ir::matrix_group::{accumulator_position, GROUP_SIZE};
    let kernel = if arguments.len() == 5 {
        &GROUP_NARROW
    } else {
        &GROUP_WIDE
    };
    let shape = f16_shape(kernel);
    let floats = |index: usize| as_f64s(&arguments[index]).expect("a float buffer");
    let (a, b, c) = (floats(1), floats(2), floats(3));
    let length = kernel.columns / 2;
    let items = c.len() as u32 / length;
    let mut want = c.clone();
    for item in 0..items {
        let (group, position) = (item / GROUP_SIZE, item % GROUP_SIZE);
        for index in 0..length {
            let (row, column) = accumulator_position(position, index);
            let a_start = kernel.a_start + group * kernel.a_group;
            let at = (item * length + index) as usize;
            let sum = (0..kernel.depth).fold(want[at] as f32, |sum, k| {
                let a = a[shape.a_index(a_start, row, k, kernel.a_chunk) as usize] as f32;
                let b = b[shape.b_index(kernel.b_start, k, column, kernel.b_chunk) as usize];
                sum + a * b as f32
            });
            want[at] = f64::from(sum);
        }
    }
    want
}

/// The `f16` shape of a kernel's statements (the layouts do not depend on the depth).
fn f16_shape(kernel: &GroupKernel) -> kdsl_ir::GroupShape {
    kdsl_ir::GroupShape::of_accumulator(u64::from(kernel.columns / 2), 16).expect("a valid N")
}

/// The outputs (here the device's) against [`group_reference`], exactly.
fn group_reference_check(_: &[InterpArgument], outputs: &[InterpArgument]) -> CaseResult {
    let want = group_reference(outputs);
    let got = as_f64s(&outputs[0]).ok_or("D is not a float buffer")?;
    match want.iter().zip(&got).position(|(want, got)| want != got) {
        Some(index) => Err(format!(
            "accumulator element {index}: {} against the layouts' {}",
            got[index], want[index]
        )),
        None if want.len() == got.len() => Ok(()),
        None => Err(format!("{} results, {} expected", got.len(), want.len())),
    }
}

/// `group_gemm`, the example of docs/language.md: C = A x B for m = 64, n = 256, k = 128 (two
/// work-groups, two steps of depth), small integers again.
fn group_gemm_case() -> Case {
    group_gemm_case_of("group_gemm", 124, kdsl_interp::f16::from_f32)
}

/// `group_gemm_bf16`: `group_gemm`'s product from `f32` small integers, which its kernel
/// converts to `bf16` (exactly) in local memory.
fn group_gemm_bf16_case() -> Case {
    group_gemm_case_of("group_gemm_bf16", 125, |value| value)
}

/// A `group_gemm`-shaped case of `kernel` (`c`, `a`, `b`, `n`, `k`) on small integers given
/// to it as `element` makes them.
fn group_gemm_case_of<T: kdsl_interp::HostElement>(
    kernel: &'static str,
    seed: u64,
    element: fn(f32) -> T,
) -> Case {
    let (m, n, k) = (64usize, 256usize, 128usize);
    let mut random = Random::new(seed);
    let mut small = |count: usize| -> Vec<T> {
        (0..count)
            .map(|_| element(random.i64_in(-4, 5) as f32))
            .collect()
    };
    let (a, b) = (small(m * k), small(k * n));
    let mut case = Case::new(
        kernel,
        InterpLaunch::new([n as u32, m as u32 / 64], [128, 1]),
        vec![
            buffer(vec![0.0f32; m * n]),
            buffer(a),
            buffer(b),
            scalar(n as u32),
            scalar(k as u32),
        ],
    );
    case.check = Some(group_gemm_check);
    case
}

/// The outputs' C against the row-major product, exactly.
fn group_gemm_check(_: &[InterpArgument], outputs: &[InterpArgument]) -> CaseResult {
    let size = |index: usize| match outputs[index] {
        InterpArgument::Scalar(ScalarValue::U32(value)) => value as usize,
        _ => 0,
    };
    let floats = |index: usize| as_f64s(&outputs[index]).unwrap_or_default();
    let (c, a, b) = (floats(0), floats(1), floats(2));
    let (n, k) = (size(3), size(4));
    let m = c.len() / n.max(1);
    let want = reference_mma(&a, &b, &vec![0.0; m * n], m, n, k);
    match want.iter().zip(&c).position(|(want, got)| want != got) {
        Some(index) => Err(format!(
            "C element {index}: {} against {}",
            c[index], want[index]
        )),
        None if !want.is_empty() => Ok(()),
        None => Err("no results".into()),
    }
}

fn group_cases() -> Vec<Case> {
    vec![
        group_case(&GROUP_WIDE, 128, 120, false),
        group_case(&GROUP_WIDE, 256, 121, false),
        group_case(&GROUP_NARROW, 128, 122, false),
        group_case(&GROUP_NARROW, 256, 123, false),
        group_gemm_case(),
        group_gemm_bf16_case(),
    ]
}

#[test]
fn matrix_group_example_is_the_documented_one() {
    let read = |path: &str| std::fs::read_to_string(workspace().join(path)).unwrap();
    let kernels = read("tests/kernels/matrix_group.krn");
    let example = &kernels[kernels.find("// One matrix group per 64 x 128").unwrap()..];
    assert!(read("docs/language.md").contains(example));
}

#[test]
fn matrix_group_tiles() {
    differential(
        "tests/kernels/matrix_group.krn",
        || test_kernel_bundle("matrix_group"),
        examples_required(),
        group_cases(),
    );
}

#[test]
fn matrix_group_interpreter_follows_the_layouts() {
    let module = compile_file("tests/kernels/matrix_group.krn");
    // Fractions too, whose sums round: the plain definition's k order gives the reference's
    // bits (only here: matrix units add in another order).
    let rounding = [
        group_case(&GROUP_WIDE, 256, 126, true),
        group_case(&GROUP_NARROW, 128, 127, true),
    ];
    for case in group_cases().into_iter().chain(rounding) {
        // Sub-groups of 8 to 64 lanes: the matrix groups do not depend on them.
        for lanes in [8, 32, 64] {
            let mut arguments = case.arguments.clone();
            let launch = case.launch.with_sub_group_size(lanes);
            run_kernel(&module, case.kernel, &launch, &mut arguments).expect("interpreter");
            let items = launch.work_group_size();
            let check = case.check.expect("a check");
            check(&case.arguments, &arguments)
                .unwrap_or_else(|why| panic!("{} on {items} work-items: {why}", case.kernel));
        }
    }
}

/// The launches of tests/kernels/async_copy.krn: `async_stream` over `groups` work-groups of
/// `blocks` blocks each, and `async_sizes` over `groups` work-groups.
fn async_copy_cases(seed: u64, groups: usize, blocks: usize) -> Vec<Case> {
    let mut random = Random::new(seed);
    let floats = groups * blocks * 256;
    let stream = Case::new(
        "async_stream",
        InterpLaunch::new([64 * groups as u32], [64]),
        vec![
            buffer(vec![0.0f32; floats]),
            buffer(random.f32s(floats, -100.0, 100.0)),
            scalar(blocks as u32),
        ],
    );
    let bytes: Vec<u8> = (0..groups * 1024)
        .map(|_| random.next_u64() as u8)
        .collect();
    let sizes = Case::new(
        "async_sizes",
        InterpLaunch::new([64 * groups as u32], [64]),
        vec![
            buffer(vec![0u8; groups * 1024]),
            buffer(vec![kdsl_interp::f16::from_f32(0.0); groups * 512]),
            buffer(vec![0.0f32; groups * 128]),
            buffer(vec![0i32; groups * 64]),
            buffer(bytes),
            buffer(f16s(&mut random, groups * 512)),
            buffer(random.f32s(groups * 128, -1e6, 1e6)),
            buffer(
                (0..groups * 64)
                    .map(|_| random.next_u64() as i32)
                    .collect::<Vec<i32>>(),
            ),
            InterpArgument::local(ScalarType::F16, 512),
        ],
    );
    vec![stream, sizes]
}

#[test]
fn async_copies() {
    on_test_kernel("async_copy", async_copy_cases(95, 3, 5));
}

#[test]
fn async_copies_on_the_interpreter_match_the_host() {
    let module = compile_file("tests/kernels/async_copy.krn");
    let (groups, blocks) = (2usize, 3usize);
    let cases = async_copy_cases(96, groups, blocks);
    let [stream, sizes] = <[Case; 2]>::try_from(cases).ok().expect("two cases");
    let mut arguments = stream.arguments.clone();
    run_kernel(&module, "async_stream", &stream.launch, &mut arguments).expect("interpreter");
    let input = as_f64s(&stream.arguments[1]).unwrap();
    let output = as_f64s(&arguments[0]).unwrap();
    for block in 0..groups * blocks {
        for e in 0..256 {
            let want = 2.0 * input[block * 256 + 255 - e];
            assert_eq!(output[block * 256 + e], want, "block {block}, element {e}");
        }
    }
    let mut arguments = sizes.arguments.clone();
    run_kernel(&module, "async_sizes", &sizes.launch, &mut arguments).expect("interpreter");
    let bytes = |argument: &InterpArgument| match argument {
        InterpArgument::Buffer(HostBuffer::U8(values)) => values.clone(),
        _ => panic!("a u8 buffer"),
    };
    let (input, output) = (bytes(&sizes.arguments[4]), bytes(&arguments[0]));
    for (i, o) in input.chunks(1024).zip(output.chunks(1024)) {
        assert!(i.iter().rev().eq(o.iter()));
    }
    let halves = |argument: &InterpArgument| match argument {
        InterpArgument::Buffer(HostBuffer::F16(values)) => values.clone(),
        _ => panic!("an f16 buffer"),
    };
    let (input, output) = (halves(&sizes.arguments[5]), halves(&arguments[1]));
    for (i, o) in input.chunks(512).zip(output.chunks(512)) {
        assert!(i.iter().rev().eq(o.iter()));
    }
    let pairs_in = as_f64s(&sizes.arguments[6]).unwrap();
    let pairs_out = as_f64s(&arguments[2]).unwrap();
    for group in 0..groups {
        for lid in 0..64 {
            let at = group * 128;
            assert_eq!(pairs_out[at + lid], pairs_in[at + 127 - lid]);
            assert_eq!(pairs_out[at + 64 + lid], pairs_in[at + 63 - lid]);
        }
    }
    let ints = |argument: &InterpArgument| match argument {
        InterpArgument::Buffer(HostBuffer::I32(values)) => values.clone(),
        _ => panic!("an i32 buffer"),
    };
    let (input, output) = (ints(&sizes.arguments[7]), ints(&arguments[3]));
    for (i, o) in input.chunks(64).zip(output.chunks(64)) {
        assert!(i.iter().rev().eq(o.iter()));
    }
}

// k-means' assignment on matrix units (examples/kmeans_tf32.krn): `kmeans_assign_tiles` must
// give `kmeans_assign`'s labels wherever the nearest centroid is clear, and, with its 3xTF32
// split, the exact labels of near ties whose distances differ by more than its stated error.

/// `kmeans_assign`'s (and `kmeans_assign_tiles`') arguments: zero labels, sums and counts,
/// then `x_t` (feature-major), `centroids_t` and the half squared norms (in f32).
fn kmeans_arguments(
    x_t: Vec<f32>,
    centroids_t: Vec<f32>,
    (n_samples, n_features, n_clusters): (usize, usize, usize),
    copies: usize,
) -> Vec<InterpArgument> {
    let half_norms: Vec<f32> = (0..n_clusters)
        .map(|c| {
            0.5 * (0..n_features)
                .map(|f| centroids_t[f * n_clusters + c].powi(2))
                .sum::<f32>()
        })
        .collect();
    let (samples, features, clusters) = (n_samples as u32, n_features as u32, n_clusters as u32);
    let mut arguments = vec![buffer(vec![0u32; n_samples])];
    arguments.extend(contiguous(
        vec![0.0f32; copies * n_clusters * n_features],
        &[copies as u32, clusters, features],
    ));
    arguments.extend(contiguous(
        vec![0u32; copies * n_clusters],
        &[copies as u32, clusters],
    ));
    arguments.extend(contiguous(x_t, &[features, samples]));
    arguments.extend(contiguous(centroids_t, &[features, clusters]));
    arguments.push(buffer(half_norms));
    arguments
}

// Positions of the arguments above.
const KMEANS_LABELS: usize = 0;
const KMEANS_SUMS: usize = 1;
const KMEANS_COUNTS: usize = 8;
const KMEANS_X_T: usize = 13;
const KMEANS_CENTROIDS_T: usize = 18;
const KMEANS_HALF_NORMS: usize = 23;

/// Sizes of the arguments above: (n_samples, n_features, n_clusters).
fn kmeans_sizes(arguments: &[InterpArgument]) -> (usize, usize, usize) {
    let extent = |index: usize| match arguments[index] {
        InterpArgument::Scalar(ScalarValue::U32(value)) => value as usize,
        _ => 0,
    };
    (
        extent(KMEANS_X_T + 2),
        extent(KMEANS_X_T + 1),
        extent(KMEANS_CENTROIDS_T + 2),
    )
}

/// Per sample, from the f32 inputs in f64: the nearest centroid (lowest index on ties), the
/// distance to the second nearest minus the nearest's (both as |c|^2 / 2 - x.c with the f32
/// half norms) and the bound above which the kernels' labels must be the nearest: the sum of
/// the two distances' stated errors, each at most (3 n_features + 16) 2^-24 (sum_f |x_f c_f| +
/// |c|^2 / 2) (examples/kmeans_tf32.krn), taken at the larger scale of the two.
struct Nearest {
    label: u32,
    gap: f64,
    bound: f64,
    /// sum_f |x_f c_f| + |c|^2 / 2 of the larger centroid.
    scale: f64,
}

fn nearest_in_f64(arguments: &[InterpArgument]) -> Vec<Nearest> {
    let (n_samples, n_features, n_clusters) = kmeans_sizes(arguments);
    let x_t = as_f64s(&arguments[KMEANS_X_T]).unwrap();
    let centroids_t = as_f64s(&arguments[KMEANS_CENTROIDS_T]).unwrap();
    let half_norms = as_f64s(&arguments[KMEANS_HALF_NORMS]).unwrap();
    let unit = (3 * n_features + 16) as f64 * f64::from(f32::EPSILON) / 2.0;
    (0..n_samples)
        .map(|sample| {
            let scored: Vec<(f64, f64)> = (0..n_clusters)
                .map(|c| {
                    let (mut dot, mut scale) = (0.0, half_norms[c].abs());
                    for f in 0..n_features {
                        let term = x_t[f * n_samples + sample] * centroids_t[f * n_clusters + c];
                        dot += term;
                        scale += term.abs();
                    }
                    (half_norms[c] - dot, scale)
                })
                .collect();
            let best = (0..n_clusters)
                .min_by(|&i, &j| scored[i].0.total_cmp(&scored[j].0))
                .unwrap();
            let second = (0..n_clusters)
                .filter(|&c| c != best)
                .min_by(|&i, &j| scored[i].0.total_cmp(&scored[j].0));
            let (gap, scale) = match second {
                Some(s) => (
                    scored[s].0 - scored[best].0,
                    scored[s].1.max(scored[best].1),
                ),
                None => (f64::INFINITY, 0.0),
            };
            Nearest {
                label: best as u32,
                gap,
                bound: 2.0 * unit * scale,
                scale,
            }
        })
        .collect()
}

/// The labels a kernel wrote.
fn kmeans_labels(arguments: &[InterpArgument]) -> Vec<u32> {
    arguments[KMEANS_LABELS].as_slice::<u32>().unwrap().to_vec()
}

/// The sums and counts added over the privatised copies: (sums, counts) per cluster.
fn kmeans_totals(arguments: &[InterpArgument]) -> (Vec<f64>, Vec<u32>) {
    let (_, n_features, n_clusters) = kmeans_sizes(arguments);
    let sums = as_f64s(&arguments[KMEANS_SUMS]).unwrap();
    let counts = arguments[KMEANS_COUNTS].as_slice::<u32>().unwrap();
    let mut total_sums = vec![0.0; n_clusters * n_features];
    for (index, value) in sums.iter().enumerate() {
        total_sums[index % (n_clusters * n_features)] += value;
    }
    let mut total_counts = vec![0u32; n_clusters];
    for (index, value) in counts.iter().enumerate() {
        total_counts[index % n_clusters] += value;
    }
    (total_sums, total_counts)
}

/// Fails unless every label whose gap is above its bound is the exact one; returns how many
/// labels were held to it.
fn labels_above_the_bound(labels: &[u32], nearest: &[Nearest]) -> Result<usize, String> {
    let mut held = 0;
    for (sample, (label, want)) in labels.iter().zip(nearest).enumerate() {
        if want.gap > want.bound {
            held += 1;
            if *label != want.label {
                return Err(format!(
                    "sample {sample}: label {label}, nearest {} (gap {:e} above the bound {:e})",
                    want.label, want.gap, want.bound
                ));
            }
        }
    }
    Ok(held)
}

/// Well separated blobs: 300 samples (the last work-group partly empty), 13 features (two
/// stages, the second partial), 70 clusters (two windows, the second partial).
fn kmeans_blob_arguments(seed: u64) -> Vec<InterpArgument> {
    let (n_samples, n_features, n_clusters) = (300usize, 13usize, 70usize);
    let mut random = Random::new(seed);
    let (x_t, centres) = kmeans_blobs(&mut random, n_samples, n_features, n_clusters);
    let centroids_t: Vec<f32> = (0..n_features * n_clusters)
        .map(|i| centres[(i % n_clusters) * n_features + i / n_clusters] + 0.25)
        .collect();
    kmeans_arguments(x_t, centroids_t, (n_samples, n_features, n_clusters), 4)
}

/// Near ties: each sample lies between a centroid and its nearest neighbour, off the middle by
/// a distance gap of 2e-5 to 5e-4 of its scale (sum_f |x_f c_f|): above the 3xTF32 bound
/// (about 4e-6 of it for 16 features), below what rounding to tf32 alone may move a distance
/// (up to 2^-10 of it).
fn kmeans_near_tie_arguments(seed: u64) -> Vec<InterpArgument> {
    let (n_samples, n_features, n_clusters) = (256usize, 16usize, 40usize);
    let mut random = Random::new(seed);
    let centres: Vec<Vec<f64>> = (0..n_clusters)
        .map(|_| random.f64s(n_features, -20.0, 20.0))
        .collect();
    let distance = |a: &[f64], b: &[f64]| -> f64 {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).powi(2))
            .sum::<f64>()
            .sqrt()
    };
    let mut x_t = vec![0.0f32; n_features * n_samples];
    for sample in 0..n_samples {
        let a = (random.next_u64() % n_clusters as u64) as usize;
        let b = (0..n_clusters)
            .filter(|&c| c != a)
            .min_by(|&i, &j| {
                distance(&centres[a], &centres[i]).total_cmp(&distance(&centres[a], &centres[j]))
            })
            .unwrap();
        let length = distance(&centres[a], &centres[b]);
        let middle: Vec<f64> = (0..n_features)
            .map(|f| 0.5 * (centres[a][f] + centres[b][f]))
            .collect();
        let scale: f64 = (0..n_features)
            .map(|f| (middle[f] * centres[a][f].abs().max(centres[b][f].abs())).abs())
            .sum();
        // x = middle + t (b - a) makes d(a) - d(b) = t |b - a|^2.
        let gap = scale * 10f64.powf(random.f64_in(-4.7, -3.3));
        let side = if random.next_u64().is_multiple_of(2) {
            1.0
        } else {
            -1.0
        };
        let t = side * gap / length / length;
        for f in 0..n_features {
            x_t[f * n_samples + sample] = (middle[f] + t * (centres[b][f] - centres[a][f])) as f32;
        }
    }
    let centroids_t: Vec<f32> = (0..n_features * n_clusters)
        .map(|i| centres[i % n_clusters][i / n_clusters] as f32)
        .collect();
    kmeans_arguments(x_t, centroids_t, (n_samples, n_features, n_clusters), 2)
}

/// A launch of `kmeans_assign_tiles` (work-groups of 128) over the arguments' samples.
fn kmeans_tiles_case(arguments: Vec<InterpArgument>) -> Case {
    let (n_samples, _, _) = kmeans_sizes(&arguments);
    Case::new(
        "kmeans_assign_tiles",
        InterpLaunch::covering(n_samples as u32, 128),
        arguments,
    )
    // Atomic float sums add in the order work-items arrive.
    .compare(KMEANS_SUMS, Compare::Close(1e-5))
}

/// The device's labels must be the exact ones wherever the gap is above the bound.
fn kmeans_labels_check(_: &[InterpArgument], device: &[InterpArgument]) -> CaseResult {
    labels_above_the_bound(&kmeans_labels(device), &nearest_in_f64(device)).map(|_| ())
}

#[test]
fn kmeans_on_matrix_units() {
    let mut blobs = kmeans_tiles_case(kmeans_blob_arguments(61));
    blobs.check = Some(kmeans_labels_check);
    let mut ties = kmeans_tiles_case(kmeans_near_tie_arguments(62));
    ties.check = Some(kmeans_labels_check);
    on_example("kmeans_tf32", vec![blobs, ties]);
}

#[test]
fn kmeans_tiles_give_kmeans_assign_labels() {
    let tiles = compile_file("examples/kmeans_tf32.krn");
    let plain = compile_file("examples/kmeans.krn");
    let arguments = kmeans_blob_arguments(61);
    let n_samples = kmeans_sizes(&arguments).0 as u32;
    let mut want = arguments.clone();
    run_kernel(
        &plain,
        "kmeans_assign",
        &InterpLaunch::covering(n_samples, 256),
        &mut want,
    )
    .expect("kmeans_assign");
    let (want_sums, want_counts) = kmeans_totals(&want);
    assert_eq!(
        kmeans_labels(&want),
        nearest_in_f64(&want)
            .iter()
            .map(|n| n.label)
            .collect::<Vec<_>>(),
        "kmeans_assign on well separated blobs"
    );
    // One round of units (sub-groups of 16 and 32: the units past the fourth only stage) and
    // two (64: each sub-group computes two units).
    for lanes in [16, 32, 64] {
        let mut got = arguments.clone();
        let launch = InterpLaunch::covering(n_samples, 128).with_sub_group_size(lanes);
        run_kernel(&tiles, "kmeans_assign_tiles", &launch, &mut got).expect("tiles");
        assert_eq!(kmeans_labels(&got), kmeans_labels(&want), "{lanes} lanes");
        let (sums, counts) = kmeans_totals(&got);
        assert_eq!(counts, want_counts, "{lanes} lanes");
        common::assert_close("sums", &sums, &want_sums, 1e-5);
    }
}

#[test]
fn kmeans_near_ties_need_the_split() {
    let split = compile_file("examples/kmeans_tf32.krn");
    let path = workspace().join("examples/kmeans_tf32.krn");
    let source = std::fs::read_to_string(path).unwrap();
    let tf32_only = kdsl_frontend::compile_to_ir_with_defines(
        &source,
        &[kdsl_frontend::Define::new("SPLIT", false)],
    )
    .expect("SPLIT=false compiles");
    let plain = compile_file("examples/kmeans.krn");
    let arguments = kmeans_near_tie_arguments(62);
    let nearest = nearest_in_f64(&arguments);
    let near = nearest.iter().filter(|n| n.gap < n.scale / 1024.0).count();
    let n_samples = nearest.len() as u32;
    let launch = InterpLaunch::covering(n_samples, 128);
    let labels = |module: &Module, kernel: &str, launch: &InterpLaunch| {
        let mut outputs = arguments.clone();
        run_kernel(module, kernel, launch, &mut outputs).expect(kernel);
        kmeans_labels(&outputs)
    };
    // kmeans_assign (f32 fmas) and the 3xTF32 tiles both give the exact label of every sample
    // whose gap is above the bound (here at least nine in ten).
    let plain_labels = labels(
        &plain,
        "kmeans_assign",
        &InterpLaunch::covering(n_samples, 256),
    );
    let held = labels_above_the_bound(&plain_labels, &nearest).expect("kmeans_assign");
    let split_labels = labels(&split, "kmeans_assign_tiles", &launch);
    labels_above_the_bound(&split_labels, &nearest).expect("3xTF32");
    assert!(
        held * 10 >= nearest.len() * 9 && near * 2 >= nearest.len(),
        "{held} of {} samples above the bound, {near} near ties",
        nearest.len()
    );
    // Rounding to tf32 alone moves distances by more than these gaps: labels change (56 of
    // the 256 with these inputs).
    let tf32_labels = labels(&tf32_only, "kmeans_assign_tiles", &launch);
    let flipped = tf32_labels
        .iter()
        .zip(&nearest)
        .filter(|(label, want)| **label != want.label)
        .count();
    assert!(
        flipped * 20 >= nearest.len(),
        "plain TF32 changed only {flipped} near-tie labels"
    );
    eprintln!(
        "near ties: {} samples, {held} above the 3xTF32 bound, {near} within 2^-10 of their scale; plain TF32 changed {flipped} labels",
        nearest.len()
    );
}

/// The plain layout SPIR-V compiles (`PlainLayout::Lanes(16)`: lane `l` holds tile elements
/// `j * 16 + l`, `A` read by broadcasts, sub-groups of 16 required) computes the same bits as
/// the one the interpreter runs, on any sub-group size, for every shape.
#[test]
fn plain_layouts_agree_bit_for_bit() {
    let mut random = Random::new(98);
    let local = mma_local_case(&mut random);
    let (a, b) = (f16s(&mut random, 128 * 128), f16s(&mut random, 128 * 128));
    let ring = InterpArgument::local(ScalarType::F16, 3 * (128 * 40 + 32 * 136));
    let cases = [
        ("matrix", matrix_global_case(90, 32, 48, 64)),
        ("matrix", local),
        ("matrix_tf32", tf32_case(92, 32, 32, 24)),
        ("matrix_bf16", f32_input_case("mma_bf16", 92, 32, 48, 64)),
        ("matrix_i8", i8_case(95)),
        ("matrix_u8", u8_case(97)),
        (
            "matrix_ring",
            gemm_case("hgemm_ring", (128, 128, 128), a, b, ring),
        ),
    ];
    let bits = |argument: &InterpArgument| -> Vec<u32> {
        match argument {
            InterpArgument::Buffer(HostBuffer::F32(v)) => v.iter().map(|x| x.to_bits()).collect(),
            InterpArgument::Buffer(HostBuffer::I32(v)) => v.iter().map(|&x| x as u32).collect(),
            other => panic!("not an f32 or i32 buffer: {other:?}"),
        }
    };
    for (file, case) in cases {
        let module = compile_file(&format!("tests/kernels/{file}.krn"));
        let lanes =
            kdsl_ir::matrix::expand_plain_in(&module, kdsl_ir::matrix::PlainLayout::Lanes(16));
        let mut want = case.arguments.clone();
        run_kernel(&module, case.kernel, &case.launch, &mut want).expect("any size");
        let mut got = case.arguments.clone();
        let launch = case.launch.with_sub_group_size(16);
        run_kernel(&lanes, case.kernel, &launch, &mut got).expect("lanes of 16");
        assert_eq!(
            bits(&want[0]),
            bits(&got[0]),
            "{}: lanes of 16",
            case.kernel
        );
        // Another sub-group size of the same layout-free definition agrees too.
        let mut other = case.arguments.clone();
        let launch = case.launch.with_sub_group_size(8);
        run_kernel(&module, case.kernel, &launch, &mut other).expect("any size, 8");
        assert_eq!(
            bits(&want[0]),
            bits(&other[0]),
            "{}: sub-groups of 8",
            case.kernel
        );
        assert!(bits(&want[0]).iter().any(|&x| x != 0), "{}", case.kernel);
    }
}

/// `input` (40 x 70 in rows of `row`) through tiles of 16 x 32: the interpreter's output is
/// the input padded with zeros to 48 x 96.
fn tile_roundtrip_rows(reference: &[InterpArgument], row: usize) -> CaseResult {
    let (
        InterpArgument::Buffer(HostBuffer::F32(got)),
        InterpArgument::Buffer(HostBuffer::F32(input)),
    ) = (&reference[0], &reference[1])
    else {
        return Err("tile_roundtrip's buffers are not f32".into());
    };
    for (at, &value) in got.iter().enumerate() {
        let (r, column) = (at / 96, at % 96);
        let want = if r < 40 && column < 70 {
            input[r * row + column]
        } else {
            0.0
        };
        if value.to_bits() != want.to_bits() {
            return Err(format!(
                "tile_roundtrip: output ({r}, {column}) is {value}, expected {want}"
            ));
        }
    }
    Ok(())
}

/// Rows 16-byte aligned: a tensor map describes them (on sm_90a: tensor copies).
fn tile_roundtrip_check(reference: &[InterpArgument], _device: &[InterpArgument]) -> CaseResult {
    tile_roundtrip_rows(reference, 72)
}

/// Rows of 71 floats: no tensor map describes them (on sm_90a: the kernel's own entry).
fn tile_roundtrip_check_71(reference: &[InterpArgument], _: &[InterpArgument]) -> CaseResult {
    tile_roundtrip_rows(reference, 71)
}

/// `output` (40 x `columns` in rows of `row`, -7 everywhere before) after tile_store_blocks
/// with factor 2: input (rows 96 apart) times 2 plus the row inside the shape, -7 past it.
fn tile_store_rows(reference: &[InterpArgument], row: usize, columns: usize) -> CaseResult {
    let (
        InterpArgument::Buffer(HostBuffer::F32(got)),
        InterpArgument::Buffer(HostBuffer::F32(input)),
    ) = (&reference[0], &reference[5])
    else {
        return Err("tile_store_blocks's buffers are not f32".into());
    };
    for (at, &value) in got.iter().enumerate() {
        let (r, column) = (at / row, at % row);
        let want = if r < 40 && column < columns {
            input[r * 96 + column] * 2.0 + r as f32
        } else {
            -7.0
        };
        if value.to_bits() != want.to_bits() {
            return Err(format!(
                "tile_store_blocks: output ({r}, {column}) is {value}, expected {want}"
            ));
        }
    }
    Ok(())
}

/// Rows 72 floats apart, 64 of them in the shape: a tensor map describes them (on sm_90a:
/// tensor stores, clipped at the shape's edge).
fn tile_store_check(reference: &[InterpArgument], _: &[InterpArgument]) -> CaseResult {
    tile_store_rows(reference, 72, 64)
}

/// Rows 72 floats apart, 70 in the shape: rows end inside a 16-byte chunk (on sm_90a: the
/// kernel's own entry, as a tensor store writes whole chunks).
fn tile_store_check_70(reference: &[InterpArgument], _: &[InterpArgument]) -> CaseResult {
    tile_store_rows(reference, 72, 70)
}

/// Rows 71 floats apart: no tensor map describes them.
fn tile_store_check_71(reference: &[InterpArgument], _: &[InterpArgument]) -> CaseResult {
    tile_store_rows(reference, 71, 70)
}

/// tests/kernels/tile_copies.krn: a tile's layout and zero fill (checked against the host on
/// the interpreter), a ring of two slots over a matrix whose width is not a whole tile, and
/// tile stores clipped at a ragged edge.
#[test]
fn tile_copies() {
    let mut random = Random::new(83);
    // Rows 72 floats apart (a tensor map describes them) and 71 apart (none does).
    let checks: [(u64, OutputCheck); 2] =
        [(72, tile_roundtrip_check), (71, tile_roundtrip_check_71)];
    let mut cases: Vec<Case> = checks
        .into_iter()
        .map(|(pitch, check)| {
            let mut arguments = vec![buffer(vec![-7.0f32; 48 * 96])];
            let values = random.f32s(40 * pitch as usize, -1.0, 1.0);
            arguments.extend(shaped(values, &[40, 70], &[pitch, 1]));
            let mut case = Case::new(
                "tile_roundtrip",
                InterpLaunch::new([3 * 64, 3], [64, 1]),
                arguments,
            );
            case.check = Some(check);
            case
        })
        .collect();
    // 50 rows of 200 columns (the last step 8 columns wide), rows 208 apart.
    let mut sums = vec![buffer(vec![0.0f32; 50])];
    sums.extend(shaped(f16s(&mut random, 50 * 208), &[50, 200], &[208, 1]));
    let sums = Case::new("ring_row_sums", InterpLaunch::new([32, 4], [32, 2]), sums)
        .compare(0, Compare::Close(1e-5));
    cases.push(sums);
    // Blocks of 16 x 32 over 40 x 64 and 40 x 70, rows 72 apart, and over 40 x 70 in rows 71
    // apart.
    let input = random.f32s(48 * 96, -1.0, 1.0);
    let stores: [(u64, u32, OutputCheck); 3] = [
        (72, 64, tile_store_check),
        (72, 70, tile_store_check_70),
        (71, 70, tile_store_check_71),
    ];
    for (pitch, columns, check) in stores {
        let mut arguments = shaped(
            vec![-7.0f32; 40 * pitch as usize],
            &[40, columns],
            &[pitch, 1],
        );
        arguments.extend([
            buffer(input.clone()),
            InterpArgument::scalar(96u32),
            InterpArgument::scalar(2.0f32),
        ]);
        let mut case = Case::new(
            "tile_store_blocks",
            InterpLaunch::new([3 * 64, 3], [64, 1]),
            arguments,
        );
        case.check = Some(check);
        cases.push(case);
    }
    on_test_kernel("tile_copies", cases);
}
