#!/usr/bin/env python3
"""Matrix multiply with work-group local memory: the tiled kernel of examples/matmul.krn (each
16 x 16 work-group stages a tile of A and one of B in `local` arrays, then every work-item
reads them TILE times), on NumPy, dpnp, CuPy and PyTorch arrays (whichever are available),
checked against NumPy and timed next to the array library's own matmul.

    python examples/python/matmul.py                            # every backend available here
    python examples/python/matmul.py --backend cupy --size 4096
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

import kdsl

sys.path.insert(0, str(Path(__file__).resolve().parent))
from backends import Backend, available_backends  # noqa: E402

KERNELS = Path(__file__).resolve().parent.parent / "matmul.krn"
TILE = 16  # the kernel's TILE constant: its work-group is TILE x TILE


def matmul(module: kdsl.Module, backend: Backend, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, float]:
    """C = A @ B (float32, row-major) by the kernel on `backend`'s arrays, and the seconds one
    launch took (after a warm-up launch)."""
    m, n = a.shape[0], b.shape[1]
    da, db = backend.array(a), backend.array(b)
    c = backend.empty((m, n))
    # Dimension 0 (fastest) is the column of C, dimension 1 its row; both rounded up to whole
    # tiles, and the kernel pads the tiles with zeros past the matrices' edges.
    global_size = (-(-n // TILE) * TILE, -(-m // TILE) * TILE)
    launch = module.matmul[global_size, (TILE, TILE)]
    launch(c, da, db)  # the sizes come from the arrays' shapes
    backend.synchronize(c)
    start = time.perf_counter()
    launch(c, da, db)
    backend.synchronize(c)
    return backend.to_numpy(c), time.perf_counter() - start


def library_time(backend: Backend, a: np.ndarray, b: np.ndarray) -> float:
    """The array library's own matmul (NumPy's for NumPy arrays)."""
    xp = np if backend.name == "numpy" else backend.xp
    da, db = backend.array(a), backend.array(b)
    backend.synchronize(xp.matmul(da, db))
    start = time.perf_counter()
    backend.synchronize(xp.matmul(da, db))
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description="tiled matmul with local memory, checked against NumPy")
    parser.add_argument("--backend", default="all", help="numpy, dpnp, cupy, torch or all (default)")
    parser.add_argument("--size", type=int, default=512, help="m = n = k")
    arguments = parser.parse_args()
    backends = available_backends() if arguments.backend == "all" else arguments.backend.split(",")
    module = kdsl.compile(path=KERNELS)
    print(f"{module.matmul.signature}: {module.matmul.local_memory_bytes} bytes of local memory per work-group")
    rng = np.random.default_rng(0)
    size = arguments.size
    a = rng.standard_normal((size, size)).astype(np.float32)
    b = rng.standard_normal((size, size)).astype(np.float32)
    expected = a.astype(np.float64) @ b.astype(np.float64)
    failures = 0
    for name in backends:
        backend = Backend(name)
        c, seconds = matmul(module, backend, a, b)
        ok = np.allclose(c, expected, rtol=1e-3, atol=1e-3 * np.sqrt(size))
        failures += not ok
        other = library_time(backend, a, b)
        flops = 2.0 * size**3
        print(
            f"  {name:6} kdsl {flops / seconds / 1e9:8.2f} GFLOP/s   {name} matmul "
            f"{flops / other / 1e9:8.2f} GFLOP/s   {'OK' if ok else 'MISMATCH'}"
        )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
