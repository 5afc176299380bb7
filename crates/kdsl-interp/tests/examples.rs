//! Every example kernel run on the interpreter against a reference computed here.

mod common;

use common::{assert_close, compile_file, contiguous, kmeans_blobs, Random};
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

#[test]
fn reduce_sum() {
    let module = compile_file("examples/reduction.krn");
    let mut random = Random::new(2);
    let n = 1000usize;
    let input = random.f32s(n, -1.0, 1.0);
    let groups = n.div_ceil(256);
    let mut arguments = [
        InterpArgument::buffer(vec![0.0f32; groups]),
        InterpArgument::buffer(input.clone()),
        InterpArgument::scalar(n as u32),
    ];
    let launch = InterpLaunch::covering(n as u32, 256);
    run_kernel(&module, "reduce_sum", &launch, &mut arguments).unwrap();
    let want: Vec<f64> = input
        .chunks(256)
        .map(|chunk| chunk.iter().map(|&v| f64::from(v)).sum())
        .collect();
    let got = widen(arguments[0].as_slice::<f32>().unwrap());
    assert_close("partial sums", &got, &want, 1e-5);
}

#[test]
fn transpose() {
    let module = compile_file("examples/transpose.krn");
    let (width, height) = (40usize, 24usize);
    let input: Vec<f32> = (0..width * height).map(|v| v as f32).collect();
    let (w, h) = (width as u32, height as u32);
    let mut arguments = contiguous(vec![-1.0f32; width * height], &[w, h]);
    arguments.extend(contiguous(input, &[h, w]));
    let launch = InterpLaunch::new([48, 32], [16, 16]);
    run_kernel(&module, "transpose", &launch, &mut arguments).unwrap();
    let got = arguments[0].as_slice::<f32>().unwrap();
    for x in 0..width {
        for y in 0..height {
            assert_eq!(
                got[x * height + y],
                (y * width + x) as f32,
                "at x {x}, y {y}"
            );
        }
    }
}

#[test]
fn matmul() {
    let module = compile_file("examples/matmul.krn");
    let mut random = Random::new(3);
    let (m, n, k) = (20usize, 18usize, 37usize);
    let a = random.f32s(m * k, -1.0, 1.0);
    let b = random.f32s(k * n, -1.0, 1.0);
    let (m32, n32, k32) = (m as u32, n as u32, k as u32);
    let mut arguments = contiguous(vec![0.0f32; m * n], &[m32, n32]);
    arguments.extend(contiguous(a.clone(), &[m32, k32]));
    arguments.extend(contiguous(b.clone(), &[k32, n32]));
    let launch = InterpLaunch::new([32, 32], [16, 16]);
    run_kernel(&module, "matmul", &launch, &mut arguments).unwrap();
    let mut want = vec![0.0f64; m * n];
    for row in 0..m {
        for column in 0..n {
            want[row * n + column] = (0..k)
                .map(|i| f64::from(a[row * k + i]) * f64::from(b[i * n + column]))
                .sum();
        }
    }
    let got = widen(arguments[0].as_slice::<f32>().unwrap());
    assert_close("c", &got, &want, 1e-5);
}

#[test]
fn histogram() {
    let module = compile_file("examples/histogram.krn");
    let mut random = Random::new(4);
    let n = 3000usize;
    let data: Vec<u8> = (0..n).map(|_| (random.next_u64() % 37) as u8).collect();
    let mut arguments = [
        InterpArgument::buffer(vec![0u32; 256]),
        InterpArgument::buffer(data.clone()),
        InterpArgument::scalar(n as u32),
    ];
    let launch = InterpLaunch::covering(n as u32, 128);
    run_kernel(&module, "histogram", &launch, &mut arguments).unwrap();
    let mut want = vec![0u32; 256];
    for &byte in &data {
        want[usize::from(byte)] += 1;
    }
    assert_eq!(arguments[0].as_slice::<u32>().unwrap(), &want[..]);
}

#[test]
fn stencil() {
    let module = compile_file("examples/stencil.krn");
    let mut random = Random::new(5);
    let (width, height) = (21usize, 13usize);
    let input = random.f32s(width * height, -1.0, 1.0);
    let mut arguments = [
        InterpArgument::buffer(vec![0.0f32; width * height]),
        InterpArgument::buffer(input.clone()),
        InterpArgument::scalar(width as u32),
        InterpArgument::scalar(height as u32),
    ];
    let launch = InterpLaunch::new([24, 16], [8, 8]);
    run_kernel(&module, "stencil", &launch, &mut arguments).unwrap();
    let at = |x: usize, y: usize| f64::from(input[y * width + x]);
    let mut want = vec![0.0f64; width * height];
    for y in 0..height {
        for x in 0..width {
            want[y * width + x] = if x == 0 || y == 0 || x == width - 1 || y == height - 1 {
                at(x, y)
            } else {
                0.2 * (at(x, y) + at(x - 1, y) + at(x + 1, y) + at(x, y - 1) + at(x, y + 1))
            };
        }
    }
    let got = widen(arguments[0].as_slice::<f32>().unwrap());
    assert_close("output", &got, &want, 1e-6);
}

#[test]
fn softmax_with_several_sub_group_sizes() {
    let module = compile_file("examples/softmax.krn");
    let mut random = Random::new(6);
    let (rows, columns) = (3usize, 100usize);
    let input = random.f32s(rows * columns, -4.0, 4.0);
    let mut want = vec![0.0f64; rows * columns];
    for row in 0..rows {
        let values = &input[row * columns..(row + 1) * columns];
        let largest = values.iter().fold(f64::MIN, |m, &v| m.max(f64::from(v)));
        let sum: f64 = values.iter().map(|&v| (f64::from(v) - largest).exp()).sum();
        for (column, &v) in values.iter().enumerate() {
            want[row * columns + column] = (f64::from(v) - largest).exp() / sum;
        }
    }
    for sub_group_size in [8, 16, 32] {
        let mut arguments = [
            InterpArgument::buffer(vec![0.0f32; rows * columns]),
            InterpArgument::buffer(input.clone()),
            InterpArgument::scalar(columns as u32),
        ];
        let launch =
            InterpLaunch::new([64 * rows as u32], [64]).with_sub_group_size(sub_group_size);
        run_kernel(&module, "softmax", &launch, &mut arguments).unwrap();
        let got = widen(arguments[0].as_slice::<f32>().unwrap());
        assert_close("softmax", &got, &want, 1e-5);
    }
}

#[test]
fn axpby_f32_and_f64() {
    let module = compile_file("examples/generic.krn");
    let mut random = Random::new(7);
    let n = 200usize;
    let x = random.f64s(n, -1.0, 1.0);
    let y = random.f64s(n, -1.0, 1.0);
    let (a, b) = (0.75, -1.25);
    let mut arguments = [
        InterpArgument::buffer(y.clone()),
        InterpArgument::buffer(x.clone()),
        InterpArgument::scalar(a),
        InterpArgument::scalar(b),
        InterpArgument::scalar(n as u32),
    ];
    run_kernel(
        &module,
        "axpby_f64",
        &InterpLaunch::covering(n as u32, 32),
        &mut arguments,
    )
    .unwrap();
    let want: Vec<f64> = x.iter().zip(&y).map(|(x, y)| a * x + b * y).collect();
    assert_eq!(arguments[0].as_slice::<f64>().unwrap(), &want[..]);

    let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
    let y32: Vec<f32> = y.iter().map(|&v| v as f32).collect();
    let mut arguments = [
        InterpArgument::buffer(y32.clone()),
        InterpArgument::buffer(x32.clone()),
        InterpArgument::scalar(a as f32),
        InterpArgument::scalar(b as f32),
        InterpArgument::scalar(n as u32),
    ];
    run_kernel(
        &module,
        "axpby_f32",
        &InterpLaunch::covering(n as u32, 32),
        &mut arguments,
    )
    .unwrap();
    let want: Vec<f32> = x32
        .iter()
        .zip(&y32)
        .map(|(x, y)| a as f32 * x + b as f32 * y)
        .collect();
    assert_eq!(arguments[0].as_slice::<f32>().unwrap(), &want[..]);
}

/// examples/kmeans.krn: one Lloyd iteration (assignment with windows of 32 centroids and 8
/// features, both partial here, then the update over the privatised copies), against the
/// same iteration computed here.
#[test]
fn kmeans_lloyd_iteration() {
    let module = compile_file("examples/kmeans.krn");
    let (n_samples, n_features, n_clusters, copies) = (600usize, 13usize, 37usize, 8usize);
    let mut random = Random::new(40);
    let (x_t, centres) = kmeans_blobs(&mut random, n_samples, n_features, n_clusters);
    // Start from the centres, moved a little, feature-major.
    let mut centroids_t = vec![0.0f32; n_features * n_clusters];
    for cluster in 0..n_clusters {
        for feature in 0..n_features {
            centroids_t[feature * n_clusters + cluster] =
                centres[cluster * n_features + feature] + 0.25;
        }
    }
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
    // Labels; sums, counts, samples and centroids as 3-D and 2-D arrays; half norms.
    let mut arguments = vec![InterpArgument::buffer(vec![0u32; n_samples])];
    let sums = vec![0.0f32; copies * n_clusters * n_features];
    arguments.extend(contiguous(sums, &[copy_count, clusters, features]));
    let counts = vec![0u32; copies * n_clusters];
    arguments.extend(contiguous(counts, &[copy_count, clusters]));
    arguments.extend(contiguous(x_t.clone(), &[features, samples]));
    arguments.extend(contiguous(centroids_t.clone(), &[features, clusters]));
    arguments.push(InterpArgument::buffer(half_norms.clone()));
    let launch = InterpLaunch::covering(n_samples as u32, 256);
    run_kernel(&module, "kmeans_assign", &launch, &mut arguments).unwrap();
    let labels = arguments[0].as_slice::<u32>().unwrap().to_vec();
    let want_labels: Vec<u32> = (0..n_samples)
        .map(|s| {
            let distance = |c: usize| -> f64 {
                (0..n_features)
                    .map(|f| {
                        f64::from(x_t[f * n_samples + s] - centroids_t[f * n_clusters + c]).powi(2)
                    })
                    .sum()
            };
            (0..n_clusters)
                .min_by(|&a, &b| distance(a).total_cmp(&distance(b)))
                .unwrap() as u32
        })
        .collect();
    assert_eq!(labels, want_labels);
    let sums = arguments[1].as_slice::<f32>().unwrap().to_vec();
    let counts = arguments[8].as_slice::<u32>().unwrap().to_vec();
    let mut update = contiguous(centroids_t.clone(), &[features, clusters]);
    update.push(InterpArgument::buffer(half_norms.clone()));
    update.extend(contiguous(sums, &[copy_count, clusters, features]));
    update.extend(contiguous(counts, &[copy_count, clusters]));
    let launch = InterpLaunch::covering(n_clusters as u32, 64);
    run_kernel(&module, "kmeans_update", &launch, &mut update).unwrap();
    let mut want_centroids = centroids_t.clone();
    for cluster in 0..n_clusters {
        let members: Vec<usize> = (0..n_samples)
            .filter(|&s| want_labels[s] as usize == cluster)
            .collect();
        if members.is_empty() {
            continue;
        }
        for feature in 0..n_features {
            let sum: f64 = members
                .iter()
                .map(|&s| f64::from(x_t[feature * n_samples + s]))
                .sum();
            want_centroids[feature * n_clusters + cluster] = (sum / members.len() as f64) as f32;
        }
    }
    let got = widen(update[0].as_slice::<f32>().unwrap());
    assert_close("centroids", &got, &widen(&want_centroids), 1e-4);
    assert!(update[6]
        .as_slice::<f32>()
        .unwrap()
        .iter()
        .all(|&v| v == 0.0));
    assert!(update[13]
        .as_slice::<u32>()
        .unwrap()
        .iter()
        .all(|&v| v == 0));
}

/// tests/kernels/functions.krn: arrays by reference and tuples, against the same values
/// computed here.
#[test]
fn arrays_by_reference_and_tuples() {
    let module = compile_file("tests/kernels/functions.krn");
    let n = 128usize;
    let mut random = Random::new(41);
    let input: Vec<i32> = (0..n)
        .map(|_| (random.next_u64() % 2001) as i32 - 1000)
        .collect();
    let mut arguments = [
        InterpArgument::buffer(vec![0i32; n * 12]),
        InterpArgument::buffer(input.clone()),
    ];
    run_kernel(
        &module,
        "arrays_and_tuples",
        &InterpLaunch::new([n as u32], [64]),
        &mut arguments,
    )
    .unwrap();
    let got = arguments[0].as_slice::<i32>().unwrap();
    for i in 0..n {
        let row: Vec<i32> = (0..8).map(|k| input[(i + k * 7) % n]).collect();
        let mut index = 0usize;
        for k in 1..8 {
            if row[k] < row[index] {
                index = k;
            }
        }
        let reversed: Vec<i32> = row.iter().rev().copied().collect();
        let group = i / 64 * 64;
        let lid = i % 64;
        let row_sum = |r: usize| -> i32 { (0..16).map(|k| input[group + r * 16 + k]).sum() };
        let want = [
            index as i32,
            row[index],
            row[index],
            index as i32,
            reversed[0],
            reversed[7],
            reversed[7] + 1000,
            reversed[0],
            row_sum(lid / 16),
            row_sum((lid + 1) % 4),
            64,
            reversed[3],
        ];
        assert_eq!(&got[i * 12..i * 12 + 12], &want, "work-item {i}");
    }
}

#[test]
fn vector_saxpy() {
    let module = compile_file("tests/kernels/vectors.krn");
    let mut random = Random::new(51);
    let n = 1024usize;
    let x = random.f32s(n, -1.0, 1.0);
    let y = random.f32s(n, -1.0, 1.0);
    let a = 1.5f32;
    let mut arguments = [
        InterpArgument::buffer(y.clone()),
        InterpArgument::buffer(x.clone()),
        InterpArgument::scalar(a),
        InterpArgument::scalar((n / 4) as u32),
    ];
    run_kernel(
        &module,
        "saxpy4",
        &InterpLaunch::covering((n / 4) as u32, 64),
        &mut arguments,
    )
    .unwrap();
    let got = arguments[0].as_slice::<f32>().unwrap();
    for i in 0..n {
        assert_eq!(got[i], a * x[i] + y[i], "element {i}");
    }
}

/// Every vector operation against the same computation written with scalars: the two
/// kernels of tests/kernels/vectors.krn must agree bit for bit.
#[test]
fn vectors_agree_with_their_scalar_twin() {
    let module = compile_file("tests/kernels/vectors.krn");
    let mut random = Random::new(52);
    let n = 128usize;
    let x = random.f32s(n * 4, -4.0, 4.0);
    let k: Vec<i32> = (0..n * 4)
        .map(|_| (random.next_u64() % 4001) as i32 - 2000)
        .collect();
    let run = |kernel: &str| {
        let mut arguments = [
            InterpArgument::buffer(vec![0f32; n * 12]),
            InterpArgument::buffer(vec![0i32; n * 8]),
            InterpArgument::buffer(x.clone()),
            InterpArgument::buffer(k.clone()),
        ];
        run_kernel(
            &module,
            kernel,
            &InterpLaunch::new([n as u32], [32]),
            &mut arguments,
        )
        .unwrap();
        (
            arguments[0].as_slice::<f32>().unwrap().to_vec(),
            arguments[1].as_slice::<i32>().unwrap().to_vec(),
        )
    };
    let (vector_floats, vector_ints) = run("vector_ops");
    let (scalar_floats, scalar_ints) = run("scalar_twin");
    for (index, (v, s)) in vector_floats.iter().zip(&scalar_floats).enumerate() {
        assert_eq!(v.to_bits(), s.to_bits(), "float {index}: {v} vs {s}");
    }
    assert_eq!(vector_ints, scalar_ints);
    assert!(vector_floats.iter().any(|&v| v != 0.0));
    assert!(vector_ints.iter().any(|&v| v != 0));
}

#[test]
fn a_vector_access_past_the_end_is_out_of_bounds() {
    let module = compile_file("tests/kernels/vectors.krn");
    // 10 elements hold 2 whole vectors of 4; the third work-item's vector is outside.
    let mut arguments = [
        InterpArgument::buffer(vec![0f32; 10]),
        InterpArgument::buffer(vec![1f32; 10]),
        InterpArgument::scalar(1.0f32),
        InterpArgument::scalar(3u32),
    ];
    let error = run_kernel(
        &module,
        "saxpy4",
        &InterpLaunch::new([4], [4]),
        &mut arguments,
    )
    .unwrap_err()
    .to_string();
    assert!(error.contains("vector index 2"), "{error}");
}

/// A random graph in Rodinia's form: per node, where its edges start and how many it has.
fn random_graph(random: &mut Random, nodes: usize) -> (Vec<(i32, i32)>, Vec<i32>) {
    let mut starts = Vec::with_capacity(nodes);
    let mut edges = Vec::new();
    for _ in 0..nodes {
        let count = (random.next_u64() % 4) as i32;
        starts.push((edges.len() as i32, count));
        for _ in 0..count {
            edges.push((random.next_u64() % nodes as u64) as i32);
        }
    }
    (starts, edges)
}

fn node_bytes(nodes: &[(i32, i32)]) -> Vec<u8> {
    nodes
        .iter()
        .flat_map(|&(start, count)| [start.to_le_bytes(), count.to_le_bytes()].concat())
        .collect()
}

/// The level of every node from node 0 (-1 where unreachable).
fn bfs_levels(nodes: &[(i32, i32)], edges: &[i32]) -> Vec<i32> {
    let mut cost = vec![-1; nodes.len()];
    cost[0] = 0;
    let mut frontier = vec![0usize];
    while !frontier.is_empty() {
        let mut next = Vec::new();
        for node in frontier {
            let (start, count) = nodes[node];
            for &neighbour in &edges[start as usize..(start + count) as usize] {
                if cost[neighbour as usize] < 0 {
                    cost[neighbour as usize] = cost[node] + 1;
                    next.push(neighbour as usize);
                }
            }
        }
        frontier = next;
    }
    cost
}

#[test]
fn bfs() {
    let module = compile_file("examples/bfs.krn");
    let mut random = Random::new(23);
    let n = 300usize;
    let (nodes, edges) = random_graph(&mut random, n);
    let mut mask = vec![0u8; n];
    let mut visited = vec![0u8; n];
    let mut cost = vec![-1i32; n];
    mask[0] = 1;
    visited[0] = 1;
    cost[0] = 0;
    let mut arguments = vec![
        InterpArgument::buffer(node_bytes(&nodes)),
        InterpArgument::buffer(edges.clone()),
        InterpArgument::buffer(mask),
        InterpArgument::buffer(vec![0u8; n]),
        InterpArgument::buffer(visited),
        InterpArgument::buffer(cost),
        InterpArgument::scalar(n as u32),
    ];
    let launch = InterpLaunch::covering(n as u32, 64);
    loop {
        run_kernel(&module, "visit_frontier", &launch, &mut arguments).unwrap();
        let mut advance = vec![
            arguments[2].clone(),
            arguments[3].clone(),
            arguments[4].clone(),
            InterpArgument::buffer(vec![0u32]),
            InterpArgument::scalar(n as u32),
        ];
        run_kernel(&module, "advance_frontier", &launch, &mut advance).unwrap();
        let changed = advance[3].as_slice::<u32>().unwrap()[0];
        arguments[2] = advance[0].clone();
        arguments[3] = advance[1].clone();
        arguments[4] = advance[2].clone();
        if changed == 0 {
            break;
        }
    }
    assert_eq!(
        arguments[5].as_slice::<i32>().unwrap(),
        bfs_levels(&nodes, &edges).as_slice()
    );
}
