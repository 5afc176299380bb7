"""kdsl against Intel's OpenCL C compiler, on the OpenCL CPU device, in one run.

Both sides are the same algorithm (crates/kdsl-bench/reference/kernels.cl against
examples/*.krn and inputs/*.krn), the same inputs, the same launch shape and the same queue. A
kernel on 2-D arrays also runs its flat twin (the hand-written row-major index) as a third
side. The kdsl side is the SPIR-V image of the kdsl bundle, loaded with
dpctl.program.create_program_from_spirv; the reference side is OpenCL C compiled by the Intel
CPU runtime (create_program_from_source).
Kernel time comes from the queue's profiling events; the CPU time this process spends per
launch (all threads, the device's workers included) is reported beside it, being steadier on a
machine shared with other work. The sides alternate in rounds; each
round takes the median of its timed runs, and the best round of each side is reported.
A case whose launch leaves a result to compare (k-means: the labels) is checked for identical
results on every side in every round; the script stops with an error if they differ.

BUNDLE_DIR holds the examples' bundles (scripts/compile-examples.sh) and, for the index-form
and 2-D cases, inputs/index_forms.krn, inputs/index_forms_2d.krn and inputs/matmul_flat.krn
compiled to NAME.kbundle beside them. Use a folder of its own, not the device tests' (they find
example kernels by name, and the inputs reuse `matmul` and `stencil`).

With --baseline DIR, every kdsl side also runs from DIR's bundle of the same name (another
compiler's, say main's) in the same rounds, and its time over the baseline's is reported: a
compiler change measured in one run.

Usage: python bench_cpu.py BUNDLE_DIR [--baseline DIR] [--runs N] [--rounds N] [--cases NAME,...]
[--json OUT]
"""

import argparse
import ctypes
import functools
import json
import os
import pathlib
import platform
import resource
import statistics
import struct
import sys

import dpctl
import dpctl.memory
import dpctl.program
import numpy as np

HERE = pathlib.Path(__file__).resolve().parent


def spirv_image(bundle_path):
    return read_bundle(bundle_path)[1]


def read_bundle(bundle_path):
    """The bundle's metadata (JSON) and its SPIR-V image."""
    data = pathlib.Path(bundle_path).read_bytes()
    if data[:8] != b"KDSLBNDL":
        raise SystemExit(f"{bundle_path}: not a kdsl bundle")
    version, meta_len = struct.unpack_from("<IQ", data, 8)
    start = 28 if version >= 3 else 20  # version 3 adds the metadata's checksum
    meta = json.loads(data[start : start + meta_len])
    payload = data[start + meta_len :]
    for image in meta["images"]:
        if image["target"] == "spirv":
            return meta, payload[image["offset"] : image["offset"] + image["length"]]
    raise SystemExit(f"{bundle_path}: no SPIR-V image")


def entry_point(meta, kernel_name):
    """The entry point the kdsl runtime launches for C-contiguous arrays, which every case
    passes: the kernel's contiguous entry where the bundle names one (a kernel on
    multi-dimensional arrays compiled since it was added), else the kernel itself."""
    for kernel in meta["kernels"]:
        if kernel["name"] == kernel_name:
            return kernel.get("contiguous_entry", kernel_name)
    raise SystemExit(f"the bundle has no kernel `{kernel_name}`")


def process_cpu_ns():
    """User and system CPU time of this process, all threads, in ns. On a machine shared with
    other work it is steadier than the kernel's wall time, which waits while others run."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return int((usage.ru_utime + usage.ru_stime) * 1e9)


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
        """The median kernel time in ns; the median CPU time this process spent per launch
        (the device's worker threads included) is left in ``last_cpu_ns``."""
        # reset, if given, runs before every launch (outside the timed kernel event).
        for _ in range(warmup):
            if reset:
                reset()
            self.queue.submit(kernel, args, global_range, local_range).wait()
        times, cpu_times = [], []
        for _ in range(runs):
            if reset:
                reset()
            cpu_start = process_cpu_ns()
            event = self.queue.submit(kernel, args, global_range, local_range)
            event.wait()
            cpu_times.append(process_cpu_ns() - cpu_start)
            times.append(event.profiling_info_end - event.profiling_info_start)
        self.last_cpu_ns = statistics.median(cpu_times)
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
    if kernel.num_args == 6:  # flat buffers and the sizes
        args = [c_memory, a_memory, b_memory, ctypes.c_uint32(m), ctypes.c_uint32(n), ctypes.c_uint32(k)]
    else:  # kdsl: 2-D arrays
        args = [*shaped(c_memory, (m, n)), *shaped(a_memory, (m, k)), *shaped(b_memory, (k, n))]
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
    if kernel.num_args == 4:  # flat buffers and the size
        args = [output_memory, input_memory, ctypes.c_int32(n), ctypes.c_float(factor)]
    else:  # kdsl: 2-D arrays
        args = [*shaped(output_memory, (n, n)), *shaped(input_memory, (n, n)), ctypes.c_float(factor)]
    median = device.time_kernel(kernel, args, [n, n], [64, 4], warmup, runs)
    assert np.array_equal(device.download(output_memory, output), values * factor), "scale2d differs"
    return median, 2 * 4 * n * n, None


def case_stencil2d(device, kernel, rng, warmup, runs):
    n = 4096
    values = rng.random((n, n), dtype=np.float32)
    output = np.zeros_like(values)
    output_memory, input_memory = device.upload(output), device.upload(values)
    if kernel.num_args == 3:  # flat buffers and the size
        args = [output_memory, input_memory, ctypes.c_int32(n)]
    else:  # kdsl: 2-D arrays
        args = [*shaped(output_memory, (n, n)), *shaped(input_memory, (n, n))]
    median = device.time_kernel(kernel, args, [n, n], [64, 4], warmup, runs)
    result = device.download(output_memory, output)
    inner = values[1:-1, 1:-1] + values[1:-1, :-2] + values[1:-1, 2:] + values[:-2, 1:-1] + values[2:, 1:-1]
    assert np.allclose(result[1:-1, 1:-1], np.float32(0.2) * inner, rtol=1e-5), "stencil2d differs"
    return median, 2 * 4 * n * n, None


def case_stencil(device, kernel, rng, warmup, runs):
    """examples/stencil.krn: interior points averaged with their four neighbours, border copied."""
    height, width = 4096, 4096
    values = rng.random((height, width), dtype=np.float32)
    output = np.zeros_like(values)
    output_memory, input_memory = device.upload(output), device.upload(values)
    if kernel.num_args == 4:  # flat buffers and the sizes
        args = [output_memory, input_memory, ctypes.c_uint32(width), ctypes.c_uint32(height)]
    else:  # kdsl: 2-D arrays
        args = [*shaped(output_memory, (height, width)), *shaped(input_memory, (height, width))]
    median = device.time_kernel(kernel, args, [width, height], [64, 4], warmup, runs)
    result = device.download(output_memory, output)
    expected = values.copy()
    inner = values[1:-1, 1:-1] + values[1:-1, :-2] + values[1:-1, 2:] + values[:-2, 1:-1] + values[2:, 1:-1]
    expected[1:-1, 1:-1] = np.float32(0.2) * inner
    assert np.allclose(result, expected, rtol=1e-5), "stencil differs"
    return median, 2 * 4 * width * height, None


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


# (kernel name, case, build options of reference/kernels.cl for it, the kdsl sides: (label,
# bundle name) each). The first kdsl side is the one the ratio to OpenCL C is reported for; a
# case with a second side (a flat twin of a kernel on 2-D arrays) also reports first / second.
CASES = [
    ("saxpy", case_saxpy, "", [("kdsl", "saxpy")]),
    ("reduce_sum", case_reduce_sum, "", [("kdsl", "reduction")]),
    # examples/matmul.krn takes 2-D arrays; inputs/matmul_flat.krn is its flat twin.
    ("matmul", case_matmul, "", [("kdsl 2-D", "matmul"), ("kdsl flat", "matmul_flat")]),
    # OpenCL C 3.0 for cl_ext_float_atomics' atomic_fetch_add_explicit on floats (see kernels.cl).
    ("kmeans_assign", case_kmeans_assign, "-cl-std=CL3.0", [("kdsl", "kmeans")]),
    # inputs/index_forms.krn: 32-bit index arithmetic (language v2's rule), and
    # inputs/index_forms_2d.krn: the same kernels and examples/stencil.krn on 2-D arrays.
    ("scale2d", case_scale2d, "", [("kdsl 2-D", "index_forms_2d"), ("kdsl flat", "index_forms")]),
    ("stencil2d", case_stencil2d, "", [("kdsl 2-D", "index_forms_2d"), ("kdsl flat", "index_forms")]),
    ("stencil", case_stencil, "", [("kdsl 2-D", "index_forms_2d"), ("kdsl flat", "stencil")]),
]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bundle_dir")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds; the best round's median counts")
    parser.add_argument(
        "--cases", help="comma-separated kernel names to run (default: all of " + ",".join(c[0] for c in CASES) + ")"
    )
    parser.add_argument("--json")
    parser.add_argument("--baseline", help="a second bundle folder whose kdsl sides run beside BUNDLE_DIR's")
    options = parser.parse_args()
    selected = CASES
    if options.cases:
        wanted = options.cases.split(",")
        unknown = set(wanted) - {c[0] for c in CASES}
        if unknown:
            raise SystemExit(f"unknown cases: {', '.join(sorted(unknown))}")
        selected = [c for c in CASES if c[0] in wanted]

    device = Device()
    reference_source = (HERE / "reference/kernels.cl").read_text()
    reference_programs = {}
    rng = np.random.default_rng(2026)
    rows = []
    for kernel_name, case, build_options, kdsl_sides in selected:
        sides = []
        folders = [(options.bundle_dir, "")]
        if options.baseline:
            folders.append((options.baseline, " (baseline)"))
        for folder, suffix in folders:
            for label, bundle in kdsl_sides:
                meta, image = read_bundle(pathlib.Path(folder) / f"{bundle}.kbundle")
                program = dpctl.program.create_program_from_spirv(device.queue, image)
                sides.append((label + suffix, bundle, program.get_sycl_kernel(entry_point(meta, kernel_name))))
        if build_options not in reference_programs:
            reference_programs[build_options] = dpctl.program.create_program_from_source(
                device.queue, reference_source, build_options
            )
        sides.append(("OpenCL C", None, reference_programs[build_options].get_sycl_kernel(kernel_name)))
        # Alternate the sides in rounds so that drift in machine load touches all alike.
        medians = [[] for _ in sides]
        cpu_medians = [[] for _ in sides]
        for _ in range(options.rounds):
            results = []
            for side, (_, _, kernel) in enumerate(sides):
                ns, _, result = case(device, kernel, rng, options.warmup, options.runs)
                medians[side].append(ns)
                cpu_medians[side].append(device.last_cpu_ns)
                results.append(result)
            for (label, _, _), result in zip(sides[1:], results[1:]):
                if results[0] is not None and not np.array_equal(results[0], result):
                    bad = np.flatnonzero(results[0] != result)
                    raise SystemExit(
                        f"{kernel_name}: {sides[0][0]} and {label} results differ at {bad.size} of {result.size} "
                        f"elements (first at {bad[0]}: {results[0][bad[0]]} against {result[bad[0]]})"
                    )
        best = [min(m) for m in medians]
        best_cpu = [min(m) for m in cpu_medians]
        row = {
            "kernel": kernel_name,
            "kdsl_ms": best[0] / 1e6,
            "reference_ms": best[-1] / 1e6,
            "kdsl_over_reference": best[0] / best[-1],
            "kdsl_round_medians_ms": [t / 1e6 for t in medians[0]],
            "reference_round_medians_ms": [t / 1e6 for t in medians[-1]],
            "reference_build_options": build_options,
            "results_identical": True if results[0] is not None else None,
            "sides": [
                {
                    "label": label,
                    "bundle": bundle,
                    "ms": b / 1e6,
                    "round_medians_ms": [t / 1e6 for t in m],
                    "cpu_ms": c / 1e6,
                    "round_median_cpu_ms": [t / 1e6 for t in cm],
                }
                for (label, bundle, _), b, m, c, cm in zip(sides, best, medians, best_cpu, cpu_medians)
            ],
            "kdsl_over_reference_cpu": best_cpu[0] / best_cpu[-1],
        }
        if options.baseline:
            count = len(kdsl_sides)
            row["over_baseline"] = {sides[i][0]: best[i] / best[i + count] for i in range(count)}
            row["over_baseline_cpu"] = {sides[i][0]: best_cpu[i] / best_cpu[i + count] for i in range(count)}
        if len(kdsl_sides) == 2:
            row["first_over_second"] = best[0] / best[1]
            row["second_over_reference"] = best[1] / best[-1]
            row["first_over_second_cpu"] = best_cpu[0] / best_cpu[1]
            row["second_over_reference_cpu"] = best_cpu[1] / best_cpu[-1]
        rows.append(row)
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
    for row in rows:
        sides = row["sides"]
        times = ", ".join(f"{side['label']} {side['ms']:.3f} ms" for side in sides)
        ratios = f"{sides[0]['label']} / OpenCL C {row['kdsl_over_reference']:.3f}"
        if "first_over_second" in row:
            ratios = (
                f"{sides[0]['label']} / {sides[1]['label']} {row['first_over_second']:.3f}, "
                f"{sides[1]['label']} / OpenCL C {row['second_over_reference']:.3f}, " + ratios
            )
        cpu_ratios = f"{sides[0]['label']} / OpenCL C {row['kdsl_over_reference_cpu']:.3f}"
        if "first_over_second" in row:
            cpu_ratios = (
                f"{sides[0]['label']} / {sides[1]['label']} {row['first_over_second_cpu']:.3f}, "
                f"{sides[1]['label']} / OpenCL C {row['second_over_reference_cpu']:.3f}, " + cpu_ratios
            )
        print(f"{row['kernel']:<14} {times}")
        print(f"{'':<14} kernel time: {ratios}")
        cpu_times = ", ".join(f"{side['label']} {side['cpu_ms']:.3f} ms" for side in sides)
        print(f"{'':<14} CPU time per launch: {cpu_times}")
        for key, what in [("over_baseline", "kernel time"), ("over_baseline_cpu", "CPU time")]:
            if key in row:
                ratios = ", ".join(f"{label} {ratio:.3f}" for label, ratio in row[key].items())
                print(f"{'':<14} {what} over the baseline: {ratios}")
        print(f"{'':<14} CPU time: {cpu_ratios}")
        for side in sides:
            print(f"{'':<14} rounds {side['label']}: {', '.join(f'{t:.3f}' for t in side['round_medians_ms'])}")
        if row["results_identical"]:
            print(f"{'':<14} results identical on every side (checked every round)")
    if options.json:
        pathlib.Path(options.json).write_text(json.dumps(info, indent=2))


if __name__ == "__main__":
    sys.exit(main())
