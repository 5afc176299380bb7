"""The plain definitions of matrix tiles on a device without matrix units (the Intel OpenCL CPU
device here), against the SIMT SGEMM example in the same run: python3 bench_plain_cpu.py [SIZE].
Each GEMM's result is checked against NumPy in f64 first; the ratio is SGEMM's time over the
kernel's (above 1: faster than SGEMM)."""
import json
import sys
import time
from pathlib import Path

import numpy as np

import kdsl

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
size = int(sys.argv[1]) if len(sys.argv) > 1 else 512
m = n = k = size
rng = np.random.default_rng(1)
a16 = rng.uniform(-1, 1, (m, k)).astype(np.float16)
b16 = rng.uniform(-1, 1, (k, n)).astype(np.float16)
a32, b32 = a16.astype(np.float32), b16.astype(np.float32)
exact = a32.astype(np.float64) @ b32.astype(np.float64)


def timed(launch, c, repeats=3):
    c[:] = 0
    launch()
    error = float(np.abs(c.reshape(m, n) - exact).max() / np.abs(exact).max())
    assert error < 1e-4, error
    start = time.perf_counter()
    for _ in range(repeats):
        launch()
    return (time.perf_counter() - start) / repeats, error


def module(name):
    return kdsl.compile(path=EXAMPLES / f"{name}.krn", targets="spirv")


c = np.zeros(m * n, np.float32)
sgemm = module("sgemm")["sgemm"][(n, m), (16, 16)]
# Persistent: one work-group per 128 x 256 block here, each walking its one block.
groups = module("hgemm_wgmma")["hgemm_wgmma"][(256 * (m // 128) * (n // 256), 1), (256, 1)]
tiles = module("hgemm")["hgemm"][(n, m // 128), (128, 1)]
group_ring, tile_ring = kdsl.local(4 * (128 + 256) * 64, "f16"), kdsl.local(53760, "f16")
cases = {
    "sgemm (SIMT, f32)": lambda: sgemm(c, a32.ravel(), b32.ravel(), m, n, k).wait(),
    "hgemm_wgmma (matrix groups, plain)": lambda: groups(c, a16.ravel(), b16.ravel(), m, n, k, group_ring).wait(),
    "hgemm (sub-group tiles, plain)": lambda: tiles(c, a16.ravel(), b16.ravel(), m, n, k, tile_ring).wait(),
}
device = kdsl.devices()[0]
results = {"size": size, "device": str(device), "runs": []}
reference = None
for name, launch in cases.items():
    seconds, error = timed(launch, c, repeats=1 if "sub-group" in name else 3)
    reference = reference or seconds
    run = {"kernel": name, "ms": seconds * 1e3, "gflops": 2 * m * n * k / seconds / 1e9,
           "ratio_to_sgemm": reference / seconds, "max_error_relative_to_max": error}
    print(json.dumps(run), flush=True)
    results["runs"].append(run)
print(json.dumps(results))
