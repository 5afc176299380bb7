"""The three matrix-group GEMM examples on the CPU device (their plain definitions) from two
bundles in one process, alternating: python3 ab_groups.py BEFORE_DIR AFTER_DIR, each holding
hgemm_wgmma, gemm_bf16_wgmma and sgemm_tf32_wgmma .kbundle files (SPIR-V). 512³, three
timed launches per bundle and round, three rounds; outputs compared bit for bit."""
import json
import sys
import time

import ml_dtypes
import numpy as np

import kdsl

size = 512
m = n = k = size
rng = np.random.default_rng(1)
EXAMPLES = {
    # name: (input type, ring elements, ring type)
    "hgemm_wgmma": (np.float16, 4 * (128 * 64 + 64 * 256), "f16"),
    "gemm_bf16_wgmma": (ml_dtypes.bfloat16, 4 * (128 * 64 + 64 * 256), "bf16"),
    "sgemm_tf32_wgmma": (np.float32, 4 * (128 * 32 + 32 * 256), "f32"),
}
folders = sys.argv[1:3]
for name, (dtype, ring, ring_type) in EXAMPLES.items():
    a = rng.uniform(-1, 1, (m, k)).astype(dtype)
    b = rng.uniform(-1, 1, (k, n)).astype(dtype)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    kernels = {folder: kdsl.load(f"{folder}/{name}.kbundle")[name][(256 * n // 256, m // 128), (256, 1)]
               for folder in folders}
    outputs, times = {}, {folder: [] for folder in folders}
    for lap in range(4):
        for folder, kernel in kernels.items():
            c = np.zeros(m * n, np.float32)
            launch = lambda: kernel(c, a.ravel(), b.ravel(), m, n, k, kdsl.local(ring, ring_type)).wait()
            if lap == 0:
                launch()  # the device's first build
                outputs[folder] = c.copy()
                continue
            for _ in range(3):
                start = time.perf_counter()
                launch()
                times[folder].append((time.perf_counter() - start) * 1e3)
    errors = {folder: float(np.abs(c.reshape(m, n) - exact).max() / np.abs(exact).max()) for folder, c in outputs.items()}
    medians = {folder: float(np.median(t)) for folder, t in times.items()}
    same = np.array_equal(*[c.view(np.uint32) for c in outputs.values()])
    print(json.dumps({"kernel": name, "median_ms": medians, "all_ms": {f: [round(x, 1) for x in t] for f, t in times.items()},
                      "before_over_after": medians[folders[0]] / medians[folders[1]],
                      "max_error_relative_to_max": errors, "identical_bits": bool(same)}), flush=True)
