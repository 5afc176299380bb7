"""kdsl against Intel's OpenCL C compiler, on the OpenCL CPU device, in one run.

Both sides are the same algorithm (crates/kdsl-bench/reference/kernels.cl against
examples/*.krn), the same inputs, the same launch shape and the same queue. The kdsl side is
the SPIR-V image of the kdsl bundle, loaded with dpctl.program.create_program_from_spirv; the
reference side is OpenCL C compiled by the Intel CPU runtime (create_program_from_source).
Kernel time comes from the queue's profiling events. The two sides alternate in rounds; each
round takes the median of its timed runs, and the best round of each side is reported.
A case whose launch leaves a result to compare (k-means: the labels) is checked for identical
results on the two sides in every round; the script stops with an error if they differ.

Usage: python bench_cpu.py BUNDLE_DIR [--runs N] [--rounds N] [--cases NAME,...] [--json OUT]
"""

import argparse
import ctypes
import functools
import json
import os
import pathlib
import platform
import statistics
import struct
import sys

import dpctl
import dpctl.memory
import dpctl.program
import numpy as np

HERE = pathlib.Path(__file__).resolve().parent


def spirv_image(bundle_path):
    data = pathlib.Path(bundle_path).read_bytes()
    if data[:8] != b"KDSLBNDL":
        raise SystemExit(f"{bundle_path}: not a kdsl bundle")
    version, meta_len = struct.unpack_from("<IQ", data, 8)
    start = 28 if version >= 3 else 20  # version 3 adds the metadata's checksum
    meta = json.loads(data[start : start + meta_len])
    payload = data[start + meta_len :]
    for image in meta["images"]:
        if image["target"] == "spirv":
            return payload[image["offset"] : image["offset"] + image["length"]]
    raise SystemExit(f"{bundle_path}: no SPIR-V image")


class Device:
    def __init__(self):
        self.queue = dpctl.SyclQueue("opencl:cpu", property="enable_profiling")

    def upload(self, array):
        memory = dpctl.memory.MemoryUSMDevice(array.nbytes, queue=self.queue)
        memory.copy_from_host(array.view(np.uint8).reshape(-1))
        return memory

    def download(self, memory, like):
        host = np.empty_like(like)
        memory.copy_to_host(host.view(np.uint8).reshape(-1))
        return host

    def time_kernel(self, kernel, args, global_range, local_range, warmup, runs, reset=None):
        # reset, if given, runs before every launch (outside the timed kernel event).
        for _ in range(warmup):
            if reset:
                reset()
            self.queue.submit(kernel, args, global_range, local_range).wait()
        times = []
        for _ in range(runs):
            if reset:
                reset()
            event = self.queue.submit(kernel, args, global_range, local_range)
            event.wait()
            times.append(event.profiling_info_end - event.profiling_info_start)
        return statistics.median(times)


def case_saxpy(device, kernel, rng, warmup, runs):
    n = 1 << 24
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    a = np.float32(2.5)
    y_memory, x_memory = device.upload(y), device.upload(x)
    args = [y_memory, x_memory, ctypes.c_float(a), ctypes.c_uint32(n)]
    # Check one launch against the host before timing (the timed runs keep updating y).
    device.queue.submit(kernel, args, [n], [256]).wait()
    assert np.allclose(device.download(y_memory, y), a * x + y, rtol=1e-6)
    return device.time_kernel(kernel, args, [n], [256], warmup, runs), 2 * 4 * n + 4 * n, None


def case_reduce_sum(device, kernel, rng, warmup, runs):
    n = 1 << 24
    groups = n // 256
    values = rng.random(n, dtype=np.float32)
    partial = np.zeros(groups, dtype=np.float32)
    input_memory, partial_memory = device.upload(values), device.upload(partial)
    args = [partial_memory, input_memory, ctypes.c_uint32(n)]
    median = device.time_kernel(kernel, args, [n], [256], warmup, runs)
    result = device.download(partial_memory, partial)
    expected = values.reshape(groups, 256).astype(np.float64).sum(axis=1)
    assert np.allclose(result, expected, rtol=1e-4), "reduce_sum result differs from the host"
    return median, 4 * n, None


def case_matmul(device, kernel, rng, warmup, runs):
    m = n = k = 1024
    a = rng.random((m, k), dtype=np.float32)
    b = rng.random((k, n), dtype=np.float32)
    c = np.zeros((m, n), dtype=np.float32)
    c_memory, a_memory, b_memory = device.upload(c), device.upload(a), device.upload(b)
    args = [c_memory, a_memory, b_memory, ctypes.c_uint32(m), ctypes.c_uint32(n), ctypes.c_uint32(k)]
    median = device.time_kernel(kernel, args, [n, m], [16, 16], warmup, runs)
    result = device.download(c_memory, c)
    assert np.allclose(result, a.astype(np.float64) @ b, rtol=1e-4), "matmul result differs from the host"
    return median, 2 * m * n * k, None


def case_scale2d(device, kernel, rng, warmup, runs):
    n = 4096
    values = rng.random((n, n), dtype=np.float32)
    output = np.zeros_like(values)
    output_memory, input_memory = device.upload(output), device.upload(values)
    factor = np.float32(1.5)
    args = [output_memory, input_memory, ctypes.c_int32(n), ctypes.c_float(factor)]
    median = device.time_kernel(kernel, args, [n, n], [64, 4], warmup, runs)
    assert np.array_equal(device.download(output_memory, output), values * factor), "scale2d differs"
    return median, 2 * 4 * n * n, None


def case_stencil2d(device, kernel, rng, warmup, runs):
    n = 4096
    values = rng.random((n, n), dtype=np.float32)
    output = np.zeros_like(values)
    output_memory, input_memory = device.upload(output), device.upload(values)
    args = [output_memory, input_memory, ctypes.c_int32(n)]
    median = device.time_kernel(kernel, args, [n, n], [64, 4], warmup, runs)
    result = device.download(output_memory, output)
    inner = values[1:-1, 1:-1] + values[1:-1, :-2] + values[1:-1, 2:] + values[:-2, 1:-1] + values[2:, 1:-1]
    assert np.allclose(result[1:-1, 1:-1], np.float32(0.2) * inner, rtol=1e-5), "stencil2d differs"
    return median, 2 * 4 * n * n, None


KMEANS_COPIES = 8  # copies of the sums (KM_COPIES in reference/kernels.cl; kdsl reads the shape)
KMEANS_GROUP = 256  # the kernel's work_group_size


@functools.lru_cache(maxsize=None)
def kmeans_inputs(n_samples=100_000, n_features=14, n_clusters=127):
    """Well-separated blobs and centroids near their centres, the same for both sides."""
    rng = np.random.default_rng(127)
    centres = rng.uniform(-100.0, 100.0, (n_clusters, n_features))
    truth = rng.integers(0, n_clusters, n_samples)
    x = (centres[truth] + rng.normal(0.0, 1.0, (n_samples, n_features))).astype(np.float32)
    centroids = (centres + rng.normal(0.0, 0.5, centres.shape)).astype(np.float32)
    half_norms = (0.5 * (centroids.astype(np.float64) ** 2).sum(axis=1)).astype(np.float32)
    # Host reference in float64: argmin over |c|^2 / 2 - x.c, the kernel's criterion.
    distances = half_norms.astype(np.float64)[None, :] - x.astype(np.float64) @ centroids.astype(np.float64).T
    labels = distances.argmin(axis=1).astype(np.uint32)
    return x, centroids, half_norms, labels


def shaped(memory, shape):
    """A C-contiguous multi-dimensional buffer as a kdsl kernel takes it: the buffer, one
    ``uint`` per extent, one ``ulong`` per stride (in elements)."""
    strides = [int(np.prod(shape[k + 1 :])) for k in range(len(shape))]
    return [memory, *(ctypes.c_uint32(e) for e in shape), *(ctypes.c_uint64(s) for s in strides)]


def case_kmeans_assign(device, kernel, rng, warmup, runs):
    x, centroids, half_norms, host_labels = kmeans_inputs()
    n_samples, n_features = x.shape
    n_clusters = centroids.shape[0]
    x_t = np.ascontiguousarray(x.T)
    centroids_t = np.ascontiguousarray(centroids.T)
    labels = np.full(n_samples, 0xFFFFFFFF, dtype=np.uint32)
    sums = np.zeros(KMEANS_COPIES * n_clusters * n_features, dtype=np.float32)
    counts = np.zeros(KMEANS_COPIES * n_clusters, dtype=np.uint32)
    labels_memory, sums_memory, counts_memory = device.upload(labels), device.upload(sums), device.upload(counts)
    x_memory, centroids_memory, norms_memory = device.upload(x_t), device.upload(centroids_t), device.upload(half_norms)
    if kernel.num_args == 9:
        # OpenCL C: flat buffers and the sizes.
        args = [
            labels_memory, sums_memory, counts_memory, x_memory, centroids_memory, norms_memory,
            ctypes.c_uint32(n_samples), ctypes.c_uint32(n_features), ctypes.c_uint32(n_clusters),
        ]
    else:
        # kdsl: multi-dimensional buffers, each followed by its extents and strides (in elements).
        args = [
            labels_memory,
            *shaped(sums_memory, (KMEANS_COPIES, n_clusters, n_features)),
            *shaped(counts_memory, (KMEANS_COPIES, n_clusters)),
            *shaped(x_memory, (n_features, n_samples)),
            *shaped(centroids_memory, (n_features, n_clusters)),
            norms_memory,
        ]
    global_range = [-(-n_samples // KMEANS_GROUP) * KMEANS_GROUP]

    def reset():
        # The kernel expects zero sums and counts on entry.
        sums_memory.memset(0)
        counts_memory.memset(0)

    # Check one launch against the host before timing.
    reset()
    device.queue.submit(kernel, args, global_range, [KMEANS_GROUP]).wait()
    result = device.download(labels_memory, labels)
    if not np.array_equal(result, host_labels):
        bad = np.flatnonzero(result != host_labels)
        raise SystemExit(f"kmeans_assign: {bad.size} labels differ from the host (first at sample {bad[0]})")
    got_counts = device.download(counts_memory, counts).reshape(KMEANS_COPIES, n_clusters).astype(np.int64).sum(axis=0)
    if not np.array_equal(got_counts, np.bincount(host_labels, minlength=n_clusters)):
        raise SystemExit("kmeans_assign: counts differ from the host")
    got_sums = device.download(sums_memory, sums).reshape(KMEANS_COPIES, n_clusters, n_features).astype(np.float64).sum(axis=0)
    expected_sums = np.zeros((n_clusters, n_features))
    np.add.at(expected_sums, host_labels, x.astype(np.float64))
    if not np.allclose(got_sums, expected_sums, rtol=1e-4, atol=1e-2):
        raise SystemExit("kmeans_assign: sums differ from the host")
    median = device.time_kernel(kernel, args, global_range, [KMEANS_GROUP], warmup, runs, reset=reset)
    return median, 2 * n_samples * n_clusters * n_features, result


# (bundle name, kernel name, case, build options of reference/kernels.cl for it)
CASES = [
    ("saxpy", "saxpy", case_saxpy, ""),
    ("reduction", "reduce_sum", case_reduce_sum, ""),
    ("matmul", "matmul", case_matmul, ""),
    # OpenCL C 3.0 for cl_ext_float_atomics' atomic_fetch_add_explicit on floats (see kernels.cl).
    ("kmeans", "kmeans_assign", case_kmeans_assign, "-cl-std=CL3.0"),
    # crates/kdsl-bench/inputs/index_forms.krn: 32-bit index arithmetic (language v2's rule).
    ("index_forms", "scale2d", case_scale2d, ""),
    ("index_forms", "stencil2d", case_stencil2d, ""),
]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bundle_dir")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds; the best round's median counts")
    parser.add_argument(
        "--cases", help="comma-separated kernel names to run (default: all of " + ",".join(c[1] for c in CASES) + ")"
    )
    parser.add_argument("--json")
    options = parser.parse_args()
    selected = CASES
    if options.cases:
        wanted = options.cases.split(",")
        unknown = set(wanted) - {c[1] for c in CASES}
        if unknown:
            raise SystemExit(f"unknown cases: {', '.join(sorted(unknown))}")
        selected = [c for c in CASES if c[1] in wanted]

    device = Device()
    reference_source = (HERE / "reference/kernels.cl").read_text()
    reference_programs = {}
    rng = np.random.default_rng(2026)
    rows = []
    for example, kernel_name, case, build_options in selected:
        kdsl_program = dpctl.program.create_program_from_spirv(
            device.queue, spirv_image(pathlib.Path(options.bundle_dir) / f"{example}.kbundle")
        )
        if build_options not in reference_programs:
            reference_programs[build_options] = dpctl.program.create_program_from_source(
                device.queue, reference_source, build_options
            )
        reference_program = reference_programs[build_options]
        # Alternate the two sides in rounds so that drift in machine load touches both alike.
        kdsl_medians, reference_medians = [], []
        for _ in range(options.rounds):
            kdsl_ns, _, kdsl_result = case(device, kdsl_program.get_sycl_kernel(kernel_name), rng, options.warmup, options.runs)
            reference_ns, _, reference_result = case(
                device, reference_program.get_sycl_kernel(kernel_name), rng, options.warmup, options.runs
            )
            if kdsl_result is not None and not np.array_equal(kdsl_result, reference_result):
                bad = np.flatnonzero(kdsl_result != reference_result)
                raise SystemExit(
                    f"{kernel_name}: kdsl and OpenCL C results differ at {bad.size} of {kdsl_result.size} elements "
                    f"(first at {bad[0]}: kdsl {kdsl_result[bad[0]]}, OpenCL C {reference_result[bad[0]]})"
                )
            kdsl_medians.append(kdsl_ns)
            reference_medians.append(reference_ns)
        kdsl_ns, reference_ns = min(kdsl_medians), min(reference_medians)
        rows.append(
            {
                "kernel": kernel_name,
                "kdsl_ms": kdsl_ns / 1e6,
                "reference_ms": reference_ns / 1e6,
                "kdsl_over_reference": kdsl_ns / reference_ns,
                "kdsl_round_medians_ms": [t / 1e6 for t in kdsl_medians],
                "reference_round_medians_ms": [t / 1e6 for t in reference_medians],
                "reference_build_options": build_options,
                "results_identical": True if kdsl_result is not None else None,
            }
        )
    info = {
        "device": device.queue.sycl_device.name,
        "driver": device.queue.sycl_device.driver_version,
        "dpctl": dpctl.__version__,
        "machine": platform.machine(),
        "host_cpus": os.cpu_count(),
        "runs": options.runs,
        "rounds": options.rounds,
        "reference": "Intel OpenCL CPU runtime compiling OpenCL C (crates/kdsl-bench/reference/kernels.cl)",
        "results": rows,
    }
    print(
        f"device: {info['device']} (driver {info['driver']}), dpctl {info['dpctl']}, {info['machine']}, "
        f"{info['host_cpus']} host CPUs; best of {options.rounds} rounds of median of {options.runs} runs"
    )
    print(f"{'kernel':<14} {'kdsl ms':>10} {'OpenCL C ms':>12} {'kdsl/ref':>9}")
    for row in rows:
        print(f"{row['kernel']:<14} {row['kdsl_ms']:>10.3f} {row['reference_ms']:>12.3f} {row['kdsl_over_reference']:>9.3f}")
        print(
            f"{'':<14} rounds: kdsl {', '.join(f'{t:.3f}' for t in row['kdsl_round_medians_ms'])}; "
            f"OpenCL C {', '.join(f'{t:.3f}' for t in row['reference_round_medians_ms'])}"
        )
        if row["results_identical"]:
            print(f"{'':<14} results identical on both sides (checked every round)")
    if options.json:
        pathlib.Path(options.json).write_text(json.dumps(info, indent=2))


if __name__ == "__main__":
    sys.exit(main())
