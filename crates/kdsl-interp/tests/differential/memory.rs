//! Records in buffers (with examples/bfs.krn), launch-sized local memory (also from SYCLBIN
//! files) and global memory shared through barriers.

use super::*;

/// The bytes of `Node { start: i32, edges: i32 }` records (C layout: 8 bytes).
fn node_bytes(nodes: &[(i32, i32)]) -> Vec<u8> {
    nodes
        .iter()
        .flat_map(|&(start, edges)| [start.to_le_bytes(), edges.to_le_bytes()].concat())
        .collect()
}

/// The bytes of `Particle { tag: u8, mass: f64, charge: i16, flag: bool, speed: f32 }` records
/// (C layout: offsets 0, 8, 16, 18, 20; 24 bytes), padding filled with a marker the kernels
/// must leave alone.
fn particle_bytes(random: &mut Random, count: usize) -> Vec<u8> {
    let mut bytes = vec![0xa5u8; count * 24];
    for record in bytes.chunks_exact_mut(24) {
        record[0] = (random.next_u64() % 200) as u8;
        let mass = f64::from(random.f32s(1, 0.0, 100.0)[0]);
        record[8..16].copy_from_slice(&mass.to_le_bytes());
        let charge = (random.next_u64() % 2001) as i16 - 1000;
        record[16..18].copy_from_slice(&charge.to_le_bytes());
        record[18] = (random.next_u64() % 2) as u8;
        let speed = random.f32s(1, -10.0, 10.0)[0];
        record[20..24].copy_from_slice(&speed.to_le_bytes());
    }
    bytes
}

#[test]
fn records() {
    let mut random = Random::new(71);
    let n = 100usize;
    let nodes: Vec<(i32, i32)> = (0..n)
        .map(|_| {
            let start = (random.next_u64() % 1000) as i32;
            (start, start + (random.next_u64() % 50) as i32)
        })
        .collect();
    let nodes = node_bytes(&nodes);
    let launch = InterpLaunch::covering(n as u32, 32);
    let node_case = |kernel: &'static str| {
        Case::new(
            kernel,
            launch,
            vec![
                buffer(nodes.clone()),
                buffer(vec![0x5au8; n * 8]),
                scalar(n as u32),
            ],
        )
    };
    let degrees = Case::new(
        "node_degrees",
        launch,
        vec![
            buffer(nodes.clone()),
            buffer(vec![0i32; n]),
            scalar(n as u32),
        ],
    );
    let particles = Case::new(
        "particles",
        launch,
        vec![
            buffer(particle_bytes(&mut random, n)),
            buffer(vec![0xa5u8; n * 24]),
            buffer(vec![0.0f64; n]),
            scalar(n as u32),
        ],
    );
    let count_edges = Case::new(
        "count_edges",
        launch,
        vec![
            buffer(nodes.clone()),
            buffer(vec![0u8; 4 * 8]),
            scalar(n as u32),
        ],
    );
    on_test_kernel(
        "records",
        vec![
            degrees,
            node_case("swap_fields"),
            node_case("copy_reversed"),
            particles,
            count_edges,
        ],
    );
}

/// One level of examples/bfs.krn from a frontier of a random graph: the visit (a buffer of
/// `Node` records) and the advance.
#[test]
fn bfs() {
    let mut random = Random::new(29);
    let n = 500usize;
    let mut nodes = Vec::with_capacity(n);
    let mut edges: Vec<i32> = Vec::new();
    for _ in 0..n {
        let count = (random.next_u64() % 5) as i32;
        nodes.push((edges.len() as i32, count));
        for _ in 0..count {
            edges.push((random.next_u64() % n as u64) as i32);
        }
    }
    let mask: Vec<u8> = (0..n).map(|i| u8::from(i % 7 == 0)).collect();
    let visited: Vec<u8> = (0..n).map(|i| u8::from(i % 7 == 0 || i % 5 == 0)).collect();
    let cost: Vec<i32> = (0..n).map(|i| if i % 7 == 0 { 3 } else { -1 }).collect();
    let launch = InterpLaunch::covering(n as u32, 64);
    let visit = Case::new(
        "visit_frontier",
        launch,
        vec![
            buffer(node_bytes(&nodes)),
            buffer(edges),
            buffer(mask.clone()),
            buffer(vec![0u8; n]),
            buffer(visited.clone()),
            buffer(cost),
            scalar(n as u32),
        ],
    );
    let next: Vec<u8> = (0..n).map(|i| u8::from(i % 3 == 0)).collect();
    let advance = Case::new(
        "advance_frontier",
        launch,
        vec![
            buffer(mask),
            buffer(next),
            buffer(visited),
            buffer(vec![0u32]),
            scalar(n as u32),
        ],
    );
    on_example("bfs", vec![visit, advance]);
}

#[test]
fn local_parameters() {
    on_test_kernel("local_parameters", local_parameter_cases());
}

/// The same kernels from a SYCLBIN: on SYCL devices each launch-sized array must stay one
/// argument (SPIR-V) or one offset (PTX), so the scalars after it keep their places.
#[test]
fn local_parameters_from_syclbin() {
    differential(
        "tests/kernels/local_parameters.krn",
        || test_kernel_syclbin("local_parameters"),
        false,
        local_parameter_cases(),
    );
}

fn local_parameter_cases() -> Vec<Case> {
    let mut random = Random::new(61);
    let group = 64u32;
    let n = 1000u32;
    let groups = n.div_ceil(group);
    let local_sum = Case::new(
        "local_sum",
        InterpLaunch::covering(n, group),
        vec![
            buffer(vec![0.0f32; groups as usize]),
            buffer(random.f32s(n as usize, -1.0, 1.0)),
            InterpArgument::local(ScalarType::F32, u64::from(group)),
            scalar(n),
        ],
    )
    // Devices may add in another order.
    .compare(0, Compare::Close(1e-5));
    let count = 256u32;
    let local_mixed = Case::new(
        "local_mixed",
        InterpLaunch::new([count], [32]),
        vec![
            buffer(vec![0.0f64; count as usize]),
            buffer((0..count as i32).map(|i| i * 7 - 300).collect::<Vec<i32>>()),
            InterpArgument::local(ScalarType::I32, 32),
            InterpArgument::local(ScalarType::F64, 32),
        ],
    );
    let bin_count = 100u32;
    let items = 4096u32;
    let data: Vec<u32> = (0..items).map(|_| random.next_u64() as u32).collect();
    let local_histogram = Case::new(
        "local_histogram",
        InterpLaunch::new([items], [128]),
        vec![
            buffer(vec![0u32; bin_count as usize]),
            buffer(data),
            InterpArgument::local(ScalarType::U32, u64::from(bin_count)),
            scalar(bin_count),
            scalar(items),
        ],
    );
    let neighbours = 256u32;
    let mut local_neighbours = Case::new(
        "local_neighbours",
        InterpLaunch::new([neighbours], [group]),
        vec![
            buffer(vec![0i32; neighbours as usize]),
            InterpArgument::local(ScalarType::I32, u64::from(group) + 1),
        ],
    );
    local_neighbours.check = Some(neighbours_check);
    vec![local_sum, local_mixed, local_histogram, local_neighbours]
}

/// `local_neighbours` and the kernels of `tests/kernels/barriers.krn` (groups of 64): each
/// work-item sees its right neighbour's first value, then its negation; the last of a group
/// sees the extra element, -1, both times.
fn neighbours_check(reference: &[InterpArgument], _device: &[InterpArgument]) -> CaseResult {
    let InterpArgument::Buffer(HostBuffer::I32(got)) = &reference[0] else {
        return Err("the neighbours' output is not an i32 buffer".into());
    };
    for (gid, &value) in got.iter().enumerate() {
        let gid = gid as i32;
        let want = if gid % 64 == 63 {
            -10001
        } else {
            (gid + 2) * 10000 - (gid + 2)
        };
        if value != want {
            return Err(format!(
                "the neighbours' output[{gid}]: interpreter {value}, expected {want}"
            ));
        }
    }
    Ok(())
}

/// Global memory shared through barriers, in the kernel and in a device function.
#[test]
fn barriers() {
    let (items, group) = (256u32, 64u32);
    let tile = vec![-1i32; (items / group * (group + 1)) as usize];
    let mut cases = ["global_neighbours", "global_neighbours_in_function"]
        .into_iter()
        .map(|kernel| {
            let mut case = Case::new(
                kernel,
                InterpLaunch::new([items], [group]),
                vec![buffer(vec![0i32; items as usize]), buffer(tile.clone())],
            );
            case.check = Some(neighbours_check);
            case
        })
        .collect::<Vec<Case>>();
    let values: Vec<f32> = (0..3 * 128).map(|i| i as f32 - 100.5).collect();
    cases.push(Case::new(
        "own_element_after_barrier",
        InterpLaunch::new([128], [128]),
        vec![buffer(values)],
    ));
    // 37 groups, the last one partly past n: the last group to count in adds every group's sum.
    let n = 37 * 64 - 5;
    let data: Vec<f32> = (0..n).map(|i| ((i * 7) % 23) as f32 * 0.25 - 2.0).collect();
    cases.push(Case::new(
        "last_group_total",
        InterpLaunch::new([37 * 64], [64]),
        vec![
            buffer(vec![0f32; 1]),
            buffer(vec![0f32; 37]),
            buffer(vec![0u32; 1]),
            buffer(data),
            scalar(n as u32),
        ],
    ));
    on_test_kernel("barriers", cases);
}
