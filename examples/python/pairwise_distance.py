#!/usr/bin/env python3
"""Pairwise Euclidean distances with a kdsl kernel (pairwise_distance.krn), the example
numba-dpex users know, on NumPy, dpnp, CuPy and PyTorch arrays (whichever are available),
checked against NumPy and timed next to the same computation in the array library itself.

    python examples/python/pairwise_distance.py                  # every backend available here
    python examples/python/pairwise_distance.py --backend dpnp --points 4096 --dimensions 16
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

KERNELS = Path(__file__).resolve().parent / "pairwise_distance.krn"
GROUP = (16, 16)  # work-group: 16 columns (dimension 0, fastest) by 16 rows


def pairwise_distance(module: kdsl.Module, backend: Backend, x: np.ndarray) -> tuple[np.ndarray, float]:
    """The n x n distance matrix of the rows of `x` computed by the kernel on `backend`'s
    arrays, and the seconds one launch took (after a warm-up launch)."""
    n = x.shape[0]
    points = backend.array(x.astype(np.float32))
    distances = backend.empty((n, n))
    # Dimension 0 is the column j of the result (the fastest), dimension 1 the row i; the
    # global size is rounded up to whole work-groups and the kernel skips what is past n.
    global_size = tuple(-(-n // group) * group for group in GROUP)
    launch = module.pairwise_distance[global_size, GROUP]
    launch(distances, points)
    backend.synchronize(distances)
    start = time.perf_counter()
    launch(distances, points)
    backend.synchronize(distances)
    seconds = time.perf_counter() - start
    return backend.to_numpy(distances), seconds


def reference(x: np.ndarray) -> np.ndarray:
    """NumPy, in float64."""
    x = x.astype(np.float64)
    return np.sqrt(((x[:, None, :] - x[None, :, :]) ** 2).sum(axis=2))


def library_time(backend: Backend, x: np.ndarray) -> float:
    """The same computation written in the array library (NumPy for NumPy arrays)."""
    xp = np if backend.name == "numpy" else backend.xp
    points = backend.array(x.astype(np.float32))

    def compute():
        if backend.name == "torch":
            return xp.cdist(points, points)
        return xp.sqrt(((points[:, None, :] - points[None, :, :]) ** 2).sum(axis=2))

    backend.synchronize(compute())
    start = time.perf_counter()
    backend.synchronize(compute())
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description="pairwise distances with a kdsl kernel, checked against NumPy")
    parser.add_argument("--backend", default="all", help="numpy, dpnp, cupy, torch or all (default)")
    parser.add_argument("--points", type=int, default=1000)
    parser.add_argument("--dimensions", type=int, default=8)
    arguments = parser.parse_args()
    backends = available_backends() if arguments.backend == "all" else arguments.backend.split(",")
    module = kdsl.compile(path=KERNELS)
    x = np.random.default_rng(0).standard_normal((arguments.points, arguments.dimensions)).astype(np.float32)
    expected = reference(x)
    print(f"pairwise distances: {arguments.points} points in {arguments.dimensions} dimensions")
    failures = 0
    for name in backends:
        backend = Backend(name)
        distances, seconds = pairwise_distance(module, backend, x)
        ok = np.allclose(distances, expected, rtol=1e-4, atol=1e-4)
        failures += not ok
        other = library_time(backend, x)
        print(
            f"  {name:6} kdsl {seconds * 1e3:8.3f} ms   {name} {other * 1e3:8.3f} ms   "
            f"{'OK' if ok else 'MISMATCH'}"
        )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
