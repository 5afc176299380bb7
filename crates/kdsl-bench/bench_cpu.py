"""kdsl against Intel's OpenCL C compiler, on the OpenCL CPU device, in one run.

Both sides are the same algorithm (crates/kdsl-bench/reference/kernels.cl against
examples/*.krn), the same inputs, the same launch shape and the same queue. The kdsl side is
the SPIR-V image of the kdsl bundle, loaded with dpctl.program.create_program_from_spirv; the
reference side is OpenCL C compiled by the Intel CPU runtime (create_program_from_source).
Kernel time comes from the queue's profiling events. The two sides alternate in rounds; each
round takes the median of its timed runs, and the best round of each side is reported.

Usage: python bench_cpu.py BUNDLE_DIR [--runs N] [--json OUT]
"""

import argparse
import ctypes
import json
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
    (meta_len,) = struct.unpack_from("<Q", data, 12)
    meta = json.loads(data[20 : 20 + meta_len])
    payload = data[20 + meta_len :]
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

    def time_kernel(self, kernel, args, global_range, local_range, warmup, runs):
        for _ in range(warmup):
            self.queue.submit(kernel, args, global_range, local_range).wait()
        times = []
        for _ in range(runs):
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
    return device.time_kernel(kernel, args, [n], [256], warmup, runs), 2 * 4 * n + 4 * n


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
    return median, 4 * n


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
    return median, 2 * m * n * k


CASES = [("saxpy", "saxpy", case_saxpy), ("reduction", "reduce_sum", case_reduce_sum), ("matmul", "matmul", case_matmul)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bundle_dir")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds; the best round's median counts")
    parser.add_argument("--json")
    options = parser.parse_args()

    device = Device()
    reference_program = dpctl.program.create_program_from_source(device.queue, (HERE / "reference/kernels.cl").read_text())
    rng = np.random.default_rng(2026)
    rows = []
    for example, kernel_name, case in CASES:
        kdsl_program = dpctl.program.create_program_from_spirv(
            device.queue, spirv_image(pathlib.Path(options.bundle_dir) / f"{example}.kbundle")
        )
        # Alternate the two sides in rounds so that drift in machine load touches both alike.
        kdsl_medians, reference_medians = [], []
        for _ in range(options.rounds):
            kdsl_ns, _ = case(device, kdsl_program.get_sycl_kernel(kernel_name), rng, options.warmup, options.runs)
            reference_ns, _ = case(device, reference_program.get_sycl_kernel(kernel_name), rng, options.warmup, options.runs)
            kdsl_medians.append(kdsl_ns)
            reference_medians.append(reference_ns)
        kdsl_ns, reference_ns = min(kdsl_medians), min(reference_medians)
        rows.append(
            {
                "kernel": kernel_name,
                "kdsl_ms": kdsl_ns / 1e6,
                "reference_ms": reference_ns / 1e6,
                "kdsl_over_reference": kdsl_ns / reference_ns,
            }
        )
    info = {
        "device": device.queue.sycl_device.name,
        "driver": device.queue.sycl_device.driver_version,
        "dpctl": dpctl.__version__,
        "machine": platform.machine(),
        "runs": options.runs,
        "rounds": options.rounds,
        "reference": "Intel OpenCL CPU runtime compiling OpenCL C (crates/kdsl-bench/reference/kernels.cl)",
        "results": rows,
    }
    print(f"device: {info['device']} (driver {info['driver']}), best of {options.rounds} rounds of median of {options.runs} runs")
    print(f"{'kernel':<12} {'kdsl ms':>10} {'OpenCL C ms':>12} {'kdsl/ref':>9}")
    for row in rows:
        print(f"{row['kernel']:<12} {row['kdsl_ms']:>10.3f} {row['reference_ms']:>12.3f} {row['kdsl_over_reference']:>9.3f}")
    if options.json:
        pathlib.Path(options.json).write_text(json.dumps(info, indent=2))


if __name__ == "__main__":
    sys.exit(main())
