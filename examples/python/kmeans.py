#!/usr/bin/env python3
"""k-means (Lloyd) with kdsl kernels (examples/kmeans.krn), driven from Python on NumPy and dpnp arrays
(CPU: the Intel OpenCL device through SYCL) and CuPy and PyTorch arrays (CUDA GPUs).

Each backend runs the same iterations from the same start, is checked against a NumPy
implementation of Lloyd's algorithm, and prints its time per iteration next to the same
computation written in NumPy (CPU arrays) or PyTorch (GPU arrays).

    python examples/python/kmeans.py                 # every backend available here
    python examples/python/kmeans.py --backend cupy --samples 2000000 --clusters 128
    python examples/python/kmeans.py --tiles         # also kmeans_assign_tiles (matrix units)

With --tiles each backend also runs the iterations with examples/kmeans_tf32.krn's
kmeans_assign_tiles (the dot products on matrix units, split 3xTF32) in place of
kmeans_assign; it takes the same arguments.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

import numpy as np

import kdsl

KERNELS = Path(__file__).resolve().parent.parent / "kmeans.krn"
TILE_KERNELS = Path(__file__).resolve().parent.parent / "kmeans_tf32.krn"
# tf32 matrix tiles need sm_80 or later on NVIDIA, not the default targets' sm_75.
TILE_TARGETS = ["spirv", "ptx:sm_90", "amdgpu"]
COPIES = 8  # privatised copies of the sums (kmeans_assign reads them from the shape)


def make_data(samples: int, features: int, clusters: int, seed: int = 0):
    """Well-separated Gaussian blobs (float32), and a start near their centers, so that no
    sample is near a tie and every implementation must give the same labels."""
    rng = np.random.default_rng(seed)
    centers = rng.uniform(-10, 10, (clusters, features)).astype(np.float32)
    which = rng.integers(0, clusters, samples)
    x = centers[which] + rng.standard_normal((samples, features)).astype(np.float32)
    start = centers + rng.uniform(-1, 1, centers.shape).astype(np.float32)
    return x.astype(np.float32), start


def lloyd_numpy(x: np.ndarray, centroids: np.ndarray, iterations: int):
    """The reference: Lloyd's algorithm in NumPy (float32 data, float64 sums)."""
    centroids = centroids.copy()
    half_norms = 0.5 * (centroids * centroids).sum(axis=1)
    labels = np.zeros(len(x), np.int64)
    for _ in range(iterations):
        labels = np.argmin(half_norms[None, :] - x @ centroids.T, axis=1)
        counts = np.bincount(labels, minlength=len(centroids))
        sums = np.stack(
            [np.bincount(labels, weights=x[:, f], minlength=len(centroids)) for f in range(x.shape[1])],
            axis=1,
        )
        filled = counts > 0
        centroids[filled] = (sums[filled] / counts[filled, None]).astype(np.float32)
        half_norms = 0.5 * (centroids * centroids).sum(axis=1)
    return centroids, labels


def lloyd_torch(x, centroids, iterations: int):
    """The same computation in PyTorch (the GPU comparison)."""
    import torch

    centroids = centroids.clone()
    half_norms = 0.5 * (centroids * centroids).sum(dim=1)
    labels = None
    for _ in range(iterations):
        labels = torch.argmin(half_norms[None, :] - x @ centroids.T, dim=1)
        counts = torch.bincount(labels, minlength=centroids.shape[0])
        sums = torch.zeros_like(centroids).index_add_(0, labels, x)
        filled = counts > 0
        centroids[filled] = sums[filled] / counts[filled, None].to(sums.dtype)
        half_norms = 0.5 * (centroids * centroids).sum(dim=1)
    return centroids, labels


class Backend:
    """How one array library makes arrays, reads them back and waits."""

    def __init__(self, name: str):
        self.name = name
        if name == "dpnp":
            import dpnp

            self.xp = dpnp
        elif name == "cupy":
            import cupy

            self.xp = cupy
        elif name == "torch":
            import torch

            self.xp = torch

    def array(self, values: np.ndarray):
        values = np.ascontiguousarray(values)
        if self.name == "numpy":
            return values
        if self.name == "torch":
            return self.xp.as_tensor(values, device="cuda")
        return self.xp.asarray(values)

    def to_numpy(self, array) -> np.ndarray:
        if self.name == "numpy":
            return array
        if self.name == "dpnp":
            return self.xp.asnumpy(array)
        if self.name == "cupy":
            return self.xp.asnumpy(array)
        return array.cpu().numpy()

    def synchronize(self, array) -> None:
        if self.name == "dpnp":
            array.sycl_queue.wait()
        elif self.name == "cupy":
            self.xp.cuda.Device().synchronize()
        elif self.name == "torch":
            self.xp.cuda.synchronize()


def run_kdsl(module: kdsl.Module, backend: Backend, x: np.ndarray, start: np.ndarray, iterations: int, assign_kernel=None):
    """Lloyd iterations with `assign_kernel` (default module.kmeans_assign) and module.kmeans_update."""
    samples, features = x.shape
    clusters = len(start)
    x_t = backend.array(x.T)
    centroids_t = backend.array(start.T)
    half_norms = backend.array(0.5 * (start * start).sum(axis=1).astype(np.float32))
    sums = backend.array(np.zeros((COPIES, clusters, features), np.float32))
    counts = backend.array(np.zeros((COPIES, clusters), np.uint32))
    labels = backend.array(np.zeros(samples, np.uint32))
    # The assignment kernels fix their work-group size (#[work_group_size]), which a launch
    # without a local size gets.
    assign_kernel = assign_kernel or module.kmeans_assign
    group = assign_kernel.work_group_size[0]
    # The kernels read the sizes from the arrays' shapes.
    assign = assign_kernel[-(-samples // group) * group]
    update = module.kmeans_update[-(-clusters // 32) * 32, 32]

    def iteration():
        assign(labels, sums, counts, x_t, centroids_t, half_norms)
        update(centroids_t, half_norms, sums, counts)

    iteration()  # loads the program on the device (once per queue or stream)
    backend.synchronize(labels)
    # Start again from the initial centroids, timing the iterations only.
    centroids_t = backend.array(start.T)
    half_norms = backend.array(0.5 * (start * start).sum(axis=1).astype(np.float32))
    sums = backend.array(np.zeros((COPIES, clusters, features), np.float32))
    counts = backend.array(np.zeros((COPIES, clusters), np.uint32))
    backend.synchronize(labels)
    began = time.perf_counter()
    for _ in range(iterations):
        iteration()
    backend.synchronize(labels)
    seconds = (time.perf_counter() - began) / iterations
    return backend.to_numpy(centroids_t).T.copy(), backend.to_numpy(labels).astype(np.int64), seconds


def reference_time(backend: Backend, x: np.ndarray, start: np.ndarray, iterations: int):
    """Seconds per iteration of the same computation in NumPy (CPU arrays) or PyTorch (GPU)."""
    if backend.name in ("cupy", "torch"):
        import torch

        tx, tc = torch.as_tensor(x, device="cuda"), torch.as_tensor(start, device="cuda")
        lloyd_torch(tx, tc, 1)
        torch.cuda.synchronize()
        began = time.perf_counter()
        lloyd_torch(tx, tc, iterations)
        torch.cuda.synchronize()
        return "PyTorch", (time.perf_counter() - began) / iterations
    began = time.perf_counter()
    lloyd_numpy(x, start, iterations)
    return "NumPy", (time.perf_counter() - began) / iterations


def available_backends() -> list[str]:
    names = ["numpy"]
    has_sycl = any(info.backend == "sycl" for info in kdsl.devices())
    has_cuda = any(info.backend == "cuda" for info in kdsl.devices())
    if has_sycl and importlib.util.find_spec("dpnp"):
        names.append("dpnp")
    if has_cuda and importlib.util.find_spec("cupy"):
        names.append("cupy")
    if has_cuda and importlib.util.find_spec("torch"):
        names.append("torch")
    return names


def main() -> int:
    parser = argparse.ArgumentParser(description="k-means with kdsl kernels, checked against NumPy")
    parser.add_argument("--backend", default="all", help="numpy, dpnp, cupy, torch or all (default)")
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--features", type=int, default=32)
    parser.add_argument("--clusters", type=int, default=64)
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="a small problem (20,000 x 16, 16 clusters, 5 iterations; for smoke tests)")
    parser.add_argument("--tiles", action="store_true", help="also run kmeans_assign_tiles (matrix units)")
    arguments = parser.parse_args()
    if arguments.quick:
        arguments.samples, arguments.features, arguments.clusters, arguments.iterations = 20_000, 16, 16, 5
    backends = available_backends() if arguments.backend == "all" else arguments.backend.split(",")
    module = kdsl.compile(path=KERNELS)
    variants = [("kdsl", None)]
    if arguments.tiles:
        tiles = kdsl.compile(path=TILE_KERNELS, targets=TILE_TARGETS)
        variants.append(("tiles", tiles.kmeans_assign_tiles))
    x, start = make_data(arguments.samples, arguments.features, arguments.clusters)
    expected_centroids, expected_labels = lloyd_numpy(x, start, arguments.iterations)
    print(
        f"k-means: {arguments.samples} samples, {arguments.features} features, {arguments.clusters} "
        f"clusters, {arguments.iterations} iterations"
    )
    failures = 0
    for name in backends:
        backend = Backend(name)
        reference_name, reference_seconds = reference_time(backend, x, start, arguments.iterations)
        for variant, assign_kernel in variants:
            centroids, labels, seconds = run_kdsl(module, backend, x, start, arguments.iterations, assign_kernel)
            agreement = float((labels == expected_labels).mean())
            close = np.allclose(centroids, expected_centroids, rtol=1e-3, atol=1e-3)
            ok = close and agreement == 1.0
            failures += not ok
            print(
                f"  {name:6} {variant:5} {seconds * 1e3:9.3f} ms/iteration   {reference_name} "
                f"{reference_seconds * 1e3:9.3f} ms/iteration   ratio {variant}/{reference_name} "
                f"{seconds / reference_seconds:6.3f}   labels agree {agreement:.4%}   "
                f"{'OK' if ok else 'MISMATCH'}"
            )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
