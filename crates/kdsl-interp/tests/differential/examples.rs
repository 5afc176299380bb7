//! The examples of `examples/`, from the bundles the examples stage writes.

use super::*;

#[test]
fn saxpy() {
    let mut random = Random::new(21);
    let n = 1000usize;
    let case = Case::new(
        "saxpy",
        InterpLaunch::covering(n as u32, 64),
        vec![
            buffer(random.f32s(n + 24, -1.0, 1.0)),
            buffer(random.f32s(n, -1.0, 1.0)),
            scalar(1.5f32),
            scalar(n as u32),
        ],
    )
    // Devices may contract `a * x + y` into an fma.
    .compare(0, Compare::Close(1e-6));
    on_example("saxpy", vec![case]);
}

#[test]
fn reduce_sum() {
    let mut random = Random::new(22);
    let n = 1000usize;
    let case = Case::new(
        "reduce_sum",
        InterpLaunch::covering(n as u32, 256),
        vec![
            buffer(vec![0.0f32; 4]),
            buffer(random.f32s(n, -1.0, 1.0)),
            scalar(n as u32),
        ],
    )
    .compare(0, Compare::Close(1e-5));
    // The one-launch total (`device_fence()` and an arrival count): 4 groups, the last partial;
    // `arrived` back at zero after the launch.
    let total = Case::new(
        "reduce_total",
        InterpLaunch::covering(n as u32, 256),
        vec![
            buffer(vec![0.0f32; 1]),
            buffer(vec![0.0f32; 4]),
            buffer(vec![0u32; 1]),
            buffer(random.f32s(n, -1.0, 1.0)),
            scalar(n as u32),
        ],
    )
    .compare(0, Compare::Close(1e-5))
    .compare(1, Compare::Close(1e-5));
    on_example("reduction", vec![case, total]);
}

#[test]
fn scan() {
    let mut random = Random::new(25);
    let n = 1000usize;
    let blocks = n.div_ceil(256);
    let input: Vec<u32> = (0..n).map(|_| (random.next_u64() % 1000) as u32).collect();
    let mut lanes_input = input[..256].to_vec();
    for zero in [3, 40, 41, 200] {
        lanes_input[zero] = 0;
    }
    let mut lanes = Case::new(
        "scan_lanes",
        InterpLaunch::new([256], [64]),
        vec![
            buffer(vec![0u32; 256]),
            buffer(vec![0u32; 256]),
            buffer(lanes_input),
        ],
    );
    lanes.sub_group_size = Some(scan_sub_group_size);
    let cases = vec![
        Case::new(
            "scan_blocks",
            InterpLaunch::covering(n as u32, 256),
            vec![
                buffer(vec![0u32; n]),
                buffer(vec![0u32; blocks]),
                buffer(input.clone()),
                scalar(n as u32),
            ],
        ),
        Case::new(
            "scan_totals",
            InterpLaunch::covering(256, 256),
            vec![buffer(input[..600].to_vec()), scalar(600u32)],
        ),
        Case::new(
            "add_block_offsets",
            InterpLaunch::covering(n as u32, 256),
            vec![
                buffer(input.clone()),
                buffer(input[..blocks].to_vec()),
                scalar(n as u32),
            ],
        ),
        lanes,
    ];
    on_example("scan", cases);
}

/// The sub-group size a device used for `scan_lanes`: the first lane past 0 whose exclusive
/// sum is 0 again starts the second sub-group (its inputs are never all zero before it).
fn scan_sub_group_size(outputs: &[InterpArgument]) -> Option<u32> {
    let sums = outputs[0].as_slice::<u32>()?;
    sums.iter()
        .skip(1)
        .position(|&sum| sum == 0)
        .map(|position| position as u32 + 1)
}

#[test]
fn transpose() {
    let mut random = Random::new(23);
    let (width, height) = (40usize, 24usize);
    let (w, h) = (width as u32, height as u32);
    let mut arguments = contiguous(vec![0.0f32; width * height], &[w, h]);
    arguments.extend(contiguous(random.f32s(width * height, -1.0, 1.0), &[h, w]));
    let case = Case::new(
        "transpose",
        InterpLaunch::new([48, 32], [16, 16]),
        arguments,
    );
    on_example("transpose", vec![case]);
}

#[test]
fn matmul() {
    let mut random = Random::new(24);
    let (m, n, k) = (20usize, 18usize, 37usize);
    let (m32, n32, k32) = (m as u32, n as u32, k as u32);
    let mut arguments = contiguous(vec![0.0f32; m * n], &[m32, n32]);
    arguments.extend(contiguous(random.f32s(m * k, -1.0, 1.0), &[m32, k32]));
    arguments.extend(contiguous(random.f32s(k * n, -1.0, 1.0), &[k32, n32]));
    let case = Case::new("matmul", InterpLaunch::new([32, 32], [16, 16]), arguments)
        .compare(0, Compare::Close(1e-5));
    on_example("matmul", vec![case]);
}

#[test]
fn histogram() {
    let mut random = Random::new(25);
    let n = 3000usize;
    let data: Vec<u8> = (0..n).map(|_| (random.next_u64() % 200) as u8).collect();
    let case = Case::new(
        "histogram",
        InterpLaunch::covering(n as u32, 128),
        vec![buffer(vec![3u32; 256]), buffer(data), scalar(n as u32)],
    );
    on_example("histogram", vec![case]);
}

#[test]
fn kmeans() {
    let (n_samples, n_features, n_clusters, copies) = (700usize, 13usize, 37usize, 8usize);
    let mut random = Random::new(42);
    let (x_t, centres) = kmeans_blobs(&mut random, n_samples, n_features, n_clusters);
    let centroids_t: Vec<f32> = (0..n_features * n_clusters)
        .map(|i| centres[(i % n_clusters) * n_features + i / n_clusters] + 0.25)
        .collect();
    let half_norms: Vec<f32> = (0..n_clusters)
        .map(|c| {
            0.5 * (0..n_features)
                .map(|f| centroids_t[f * n_clusters + c].powi(2))
                .sum::<f32>()
        })
        .collect();
    let (samples, features, clusters, copy_count) = (
        n_samples as u32,
        n_features as u32,
        n_clusters as u32,
        copies as u32,
    );
    let mut assign = vec![buffer(vec![0u32; n_samples])];
    assign.extend(contiguous(
        vec![0.0f32; copies * n_clusters * n_features],
        &[copy_count, clusters, features],
    ));
    assign.extend(contiguous(
        vec![0u32; copies * n_clusters],
        &[copy_count, clusters],
    ));
    assign.extend(contiguous(x_t, &[features, samples]));
    assign.extend(contiguous(centroids_t.clone(), &[features, clusters]));
    assign.push(buffer(half_norms.clone()));
    let assign = Case::new(
        "kmeans_assign",
        InterpLaunch::covering(samples, 256),
        assign,
    )
    // Atomic float sums add in the order work-items arrive.
    .compare(1, Compare::Close(1e-5));
    let sums: Vec<f32> = random.f32s(copies * n_clusters * n_features, -5.0, 5.0);
    let counts: Vec<u32> = (0..copies * n_clusters)
        .map(|_| (random.next_u64() % 4) as u32)
        .collect();
    let mut update = contiguous(centroids_t, &[features, clusters]);
    update.push(buffer(half_norms));
    update.extend(contiguous(sums, &[copy_count, clusters, features]));
    update.extend(contiguous(counts, &[copy_count, clusters]));
    let update = Case::new(
        "kmeans_update",
        InterpLaunch::covering(clusters, 64),
        update,
    )
    .compare(0, Compare::Close(1e-6))
    .compare(5, Compare::Close(1e-6));
    on_example("kmeans", vec![assign, update]);
}

#[test]
fn arrays_by_reference_and_tuples() {
    let mut random = Random::new(43);
    let n = 192usize;
    let input: Vec<i32> = (0..n)
        .map(|_| (random.next_u64() % 2001) as i32 - 1000)
        .collect();
    let case = Case::new(
        "arrays_and_tuples",
        InterpLaunch::new([n as u32], [64]),
        vec![buffer(vec![0i32; n * 12]), buffer(input)],
    );
    on_test_kernel("functions", vec![case]);
}

#[test]
fn backend_regressions() {
    let mut random = Random::new(45);
    let n = 256usize;
    // Small and large values, so that both outcomes of each comparison occur.
    let a: Vec<u16> = (0..=n)
        .map(|i| (random.next_u64() >> (if i % 2 == 0 { 48 } else { 60 })) as u16)
        .collect();
    let b: Vec<u32> = (0..=n)
        .map(|i| (random.next_u64() >> (if i % 2 == 0 { 32 } else { 48 })) as u32)
        .collect();
    let c: Vec<u8> = (0..=n)
        .map(|i| (random.next_u64() >> (if i % 2 == 0 { 56 } else { 60 })) as u8)
        .collect();
    let case = Case::new(
        "multiply_overflow",
        InterpLaunch::new([n as u32], [64]),
        vec![buffer(vec![0i32; n * 3]), buffer(a), buffer(b), buffer(c)],
    );
    let n = 64usize;
    let signed_bool_to_float = Case::new(
        "signed_bool_to_float",
        InterpLaunch::new([n as u32], [32]),
        vec![
            buffer((0..n).map(|_| random.next_u64() as i8).collect::<Vec<_>>()),
            buffer(vec![half::f16::from_f32(0.0); n]),
        ],
    );
    // Every work item reads the same lanes, the fourth `vload3` of the input.
    let n = 64usize;
    let narrowed_vload = Case::new(
        "narrowed_vload",
        InterpLaunch::new([n as u32], [32]),
        vec![
            buffer(
                (0..15)
                    .map(|_| random.next_u64() as u32)
                    .collect::<Vec<_>>(),
            ),
            buffer(vec![0u16; n * 3]),
            scalar(3u64),
        ],
    );
    let narrowed_vload_bytes = Case::new(
        "narrowed_vload_bytes",
        InterpLaunch::new([n as u32], [32]),
        vec![
            buffer(
                (0..15)
                    .map(|_| random.next_u64() as i32)
                    .collect::<Vec<_>>(),
            ),
            buffer(vec![0i8; n * 2]),
            scalar(3u64),
        ],
    );
    let narrowed_vector_view = Case::new(
        "narrowed_vector_view",
        InterpLaunch::new([n as u32], [32]),
        vec![
            buffer(
                (0..15)
                    .map(|_| random.next_u64() as i64)
                    .collect::<Vec<_>>(),
            ),
            buffer(vec![0i64; n * 2]),
            scalar(3u64),
        ],
    );
    // Two groups of 64 items: the device lost the stores of items 16 to 63 of each.
    let strided_stores_beside_shift = Case::new(
        "strided_stores_beside_shift",
        InterpLaunch::new([128], [64]),
        vec![
            buffer(vec![0f64; 128 * 3]),
            buffer(vec![0i64; 128]),
            scalar(-31.0f64),
        ],
    );
    // Random bytes: the program must build, and the wrapping byte arithmetic agree.
    let interleaved_bytes = Case::new(
        "interleaved_bytes",
        InterpLaunch::new([64], [32]),
        vec![
            buffer((0..64).map(|_| random.next_u64() as i8).collect::<Vec<_>>()),
            buffer(
                (0..192)
                    .map(|_| random.next_u64() as i8)
                    .collect::<Vec<_>>(),
            ),
        ],
    );
    // Bytes filled with `n` and `3 * n` (the device read 0 back), beside an `s_max`.
    let filled_private_bytes = Case::new(
        "filled_private_bytes",
        InterpLaunch::new([64], [32]),
        vec![
            buffer(vec![0f64; 128]),
            buffer((0..8).map(|_| random.next_u64() as i16).collect::<Vec<_>>()),
            buffer(vec![0f32; 64]),
            scalar(27u32),
        ],
    );
    // The first three elements of a three-element input, as `vload3` reads them.
    let wide_integer_load = Case::new(
        "wide_integer_load",
        InterpLaunch::new([64], [32]),
        vec![
            buffer(vec![0u16; 64]),
            buffer((0..3).map(|_| random.next_u64() as u16).collect::<Vec<_>>()),
        ],
    );
    // Each item's own element compared and exchanged, then shifted by whether the element its
    // old value picks equals `data[8]`, which the optimizer forwarded from a `vload4`.
    let forwarded_vector_load = Case::new(
        "forwarded_vector_load",
        InterpLaunch::new([64], [32]),
        vec![
            buffer((0..64).map(|i| i64::from(i % 12)).collect::<Vec<_>>()),
            buffer(
                (0..120)
                    .map(|_| (random.next_u64() % 4) as i32)
                    .collect::<Vec<_>>(),
            ),
        ],
    );
    // Whole numbers 0 to 63, each compared by its trailing zeros.
    let trailing_zeros_branch = Case::new(
        "trailing_zeros_branch",
        InterpLaunch::new([64], [32]),
        vec![
            buffer(vec![0u32; 64]),
            buffer((0..64).map(f64::from).collect::<Vec<_>>()),
        ],
    );
    // Flags 0 and 1 rotated by 5 and used as indices: `table[0]` or `table[32]`.
    let rotated_flag = Case::new(
        "rotated_flag",
        InterpLaunch::new([64], [32]),
        vec![
            buffer((0..64u32).map(|i| i * 7 % 5).collect::<Vec<_>>()),
            buffer((0..123).map(|i| i as f32 + 0.5).collect::<Vec<_>>()),
            buffer(vec![0f32; 64]),
        ],
    );
    // Every 16-bit value negated, then divided (ptxas 13.0 divided -(-32768) as +32768), and
    // every byte negated.
    let n = 1usize << 16;
    let narrow_negation = Case::new(
        "narrow_negation",
        InterpLaunch::new([n as u32], [256]),
        vec![
            buffer((0..n).map(|v| v as u16 as i16).collect::<Vec<_>>()),
            buffer((0..n).map(|_| random.next_u64() as i16).collect::<Vec<_>>()),
            buffer((0..n).map(|v| v as u8 as i8).collect::<Vec<_>>()),
        ],
    );
    // Every byte through `min(x & 13, 3) == 3` (ptxas 13.0 gave the opposite outcome), in the
    // unit-stride and the strided copy of the kernel's body.
    let narrow_min_compare = |grid: Vec<InterpArgument>| {
        let n = 256usize;
        let mut arguments = vec![
            buffer(vec![0i64; n]),
            buffer((0..n).map(|v| v as u8).collect::<Vec<_>>()),
        ];
        arguments.extend(grid);
        Case::new(
            "narrow_min_compare",
            InterpLaunch::new([n as u32], [64]),
            arguments,
        )
    };
    let grid: Vec<u32> = (0..12).map(|_| random.next_u64() as u32 % 1000).collect();
    let min_compare_contiguous = narrow_min_compare(contiguous(grid.clone(), &[3, 4]));
    let min_compare_strided = narrow_min_compare(shaped(grid, &[3, 4], &[1, 3]));
    on_test_kernel(
        "backend_regressions",
        vec![
            case,
            signed_bool_to_float,
            narrowed_vload,
            narrowed_vload_bytes,
            narrowed_vector_view,
            strided_stores_beside_shift,
            interleaved_bytes,
            filled_private_bytes,
            wide_integer_load,
            forwarded_vector_load,
            trailing_zeros_branch,
            rotated_flag,
            narrow_negation,
            min_compare_contiguous,
            min_compare_strided,
        ],
    );
}

#[test]
fn stencil() {
    let mut random = Random::new(26);
    let (width, height) = (21usize, 13usize);
    let case = Case::new(
        "stencil",
        InterpLaunch::new([24, 16], [8, 8]),
        vec![
            buffer(vec![0.0f32; width * height]),
            buffer(random.f32s(width * height, -1.0, 1.0)),
            scalar(width as u32),
            scalar(height as u32),
        ],
    )
    .compare(0, Compare::Close(1e-6));
    on_example("stencil", vec![case]);
}

#[test]
fn softmax() {
    // The result does not depend on the sub-group size, so the interpreter uses its default.
    let mut random = Random::new(27);
    let (rows, columns) = (3usize, 100usize);
    let case = Case::new(
        "softmax",
        InterpLaunch::new([64 * rows as u32], [64]),
        vec![
            buffer(vec![0.0f32; rows * columns]),
            buffer(random.f32s(rows * columns, -4.0, 4.0)),
            scalar(columns as u32),
        ],
    )
    .compare(0, Compare::Close(1e-5));
    on_example("softmax", vec![case]);
}

#[test]
fn axpby() {
    let mut random = Random::new(28);
    let n = 300usize;
    let cases = vec![
        Case::new(
            "axpby_f32",
            InterpLaunch::covering(n as u32, 64),
            vec![
                buffer(random.f32s(n, -1.0, 1.0)),
                buffer(random.f32s(n, -1.0, 1.0)),
                scalar(0.75f32),
                scalar(-1.25f32),
                scalar(n as u32),
            ],
        )
        .compare(0, Compare::Close(1e-6)),
        Case::new(
            "axpby_f64",
            InterpLaunch::covering(n as u32, 64),
            vec![
                buffer(random.f64s(n, -1.0, 1.0)),
                buffer(random.f64s(n, -1.0, 1.0)),
                scalar(0.75f64),
                scalar(-1.25f64),
                scalar(n as u32),
            ],
        )
        .compare(0, Compare::Close(1e-14)),
    ];
    on_example("generic", cases);
}
