#!/usr/bin/env python3
"""k-means' assignment step on one CUDA device, on PyTorch tensors: examples/kmeans.krn's
``kmeans_assign`` (one work-item per sample, f32 fmas) against examples/kmeans_tf32.krn's
``kmeans_assign_tiles`` (tensor cores: 3xTF32 as compiled by default, and plain TF32 with
``SPLIT=false``), with PyTorch's ``argmin(|c|^2 / 2 - x @ c.T)`` (cuBLAS in f32, TF32 off) for
reference. The kdsl kernels also add each sample to its cluster's sums and counts (atomics);
PyTorch's line is the distances and the argmin only.

For each shape N:F:K (samples, features, clusters; --shapes): well separated Gaussian blobs as
in examples/python/kmeans.py, centroids near the centres. Every kernel's labels are compared
with PyTorch's; a differing label must be a near tie: its distance, in f64, within the
kernel's stated error of the nearest one's (kmeans_tf32.krn's header; 2^-10 of the scale for
plain TF32), else the run fails. Times are the median over rounds of CUDA-event-timed launches
(sums and counts left to accumulate; only the checked launch starts from zeros); GFLOP/s
counts 2 N F K.

    python crates/kdsl-bench/python/kmeans_tiles.py --json out.json
    python crates/kdsl-bench/python/kmeans_tiles.py --compile-only   # fills the bundle cache
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import kdsl

ROOT = Path(__file__).resolve().parents[3]
SIMT = ROOT / "examples" / "kmeans.krn"
TILES = ROOT / "examples" / "kmeans_tf32.krn"
# tf32 tiles need sm_80 or later: not the default targets' sm_75 (as scripts/python-gpu-package.sh
# compiles them, so the carried cache holds them).
TILE_TARGETS = ["spirv", "ptx:sm_90", "amdgpu"]
COPIES = 8  # privatised copies of the sums
EPSILON = 2.0**-24


def compile_all() -> dict:
    """The three kernels: name -> (kernel object, error bound per unit of scale for F features)."""
    simt = kdsl.compile(path=SIMT)
    split = kdsl.compile(path=TILES, targets=TILE_TARGETS)
    tf32 = kdsl.compile(path=TILES, targets=TILE_TARGETS, defines={"SPLIT": False})
    return {
        "kmeans_assign": (simt.kmeans_assign, lambda f: (f + 16) * EPSILON),
        "kmeans_assign_tiles (3xTF32)": (split.kmeans_assign_tiles, lambda f: (3 * f + 16) * EPSILON),
        "kmeans_assign_tiles (TF32)": (tf32.kmeans_assign_tiles, lambda f: 2.0**-10 + (f + 16) * EPSILON),
    }


def median_ms(run, runs: int, rounds: int) -> float:
    import torch

    run()
    torch.cuda.synchronize()
    samples = []
    for _ in range(rounds):
        began, ended = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        began.record()
        for _ in range(runs):
            run()
        ended.record()
        ended.synchronize()
        samples.append(began.elapsed_time(ended) / runs)
    return statistics.median(samples)


def blobs(samples: int, features: int, clusters: int, seed: int = 0):
    import torch

    generator = torch.Generator(device="cuda").manual_seed(seed)
    centres = torch.rand(clusters, features, device="cuda", generator=generator) * 20 - 10
    which = torch.randint(0, clusters, (samples,), device="cuda", generator=generator)
    x = centres[which] + torch.randn(samples, features, device="cuda", generator=generator)
    centroids = centres + torch.rand(clusters, features, device="cuda", generator=generator) * 2 - 1
    return x, centroids


def unexplained(x, centroids, half_norms, got, want, unit: float) -> int:
    """Differing labels that are no near tie: the kernel's centroid is further, in f64, from the
    sample than the nearest one by more than the two distances' stated errors, each `unit` times
    its scale (sum_f |x_f c_f| + |c|^2 / 2), here the larger scale of the two twice."""
    import torch

    differ = torch.nonzero(got != want).flatten()
    if differ.numel() == 0:
        return 0
    xs = x[differ].double()
    c = centroids.double()
    exact = half_norms.double()[None, :] - xs @ c.T
    scales = xs.abs() @ c.abs().T + half_norms.double().abs()[None, :]
    best = exact.argmin(dim=1, keepdim=True)
    chosen = got[differ].long()[:, None]
    gap = (exact.gather(1, chosen) - exact.gather(1, best)).flatten()
    scale = torch.maximum(scales.gather(1, chosen), scales.gather(1, best)).flatten()
    return int((gap > 2 * unit * scale).sum())


def shape_lines(kernels: dict, samples: int, features: int, clusters: int, runs: int, rounds: int) -> list[dict]:
    import torch

    x, centroids = blobs(samples, features, clusters)
    x_t = x.T.contiguous()
    centroids_t = centroids.T.contiguous()
    half_norms = 0.5 * (centroids * centroids).sum(dim=1)
    # u32 buffers; their int32 views (the same bits, values below 2^31) for PyTorch's arithmetic.
    labels = torch.zeros(samples, dtype=torch.uint32, device="cuda")
    sums = torch.zeros(COPIES, clusters, features, device="cuda")
    counts = torch.zeros(COPIES, clusters, dtype=torch.uint32, device="cuda")
    torch.backends.cuda.matmul.allow_tf32 = False
    reference = {}

    def run_torch():
        reference["labels"] = torch.argmin(half_norms[None, :] - x @ centroids.T, dim=1)

    flops = 2.0 * samples * features * clusters
    lines = []
    torch_ms = median_ms(run_torch, runs, rounds)
    want = reference["labels"].to(torch.int32)
    lines.append({"kernel": "PyTorch argmin(|c|^2/2 - x @ c.T)", "ms": torch_ms, "gflops": flops / torch_ms / 1e6})
    for name, (kernel, unit) in kernels.items():
        group = kernel.work_group_size[0]
        launch = kernel[-(-samples // group) * group]

        def run():
            launch(labels, sums, counts, x_t, centroids_t, half_norms)

        labels.view(torch.int32).zero_()
        sums.zero_()
        counts.view(torch.int32).zero_()
        run()
        torch.cuda.synchronize()
        got = labels.view(torch.int32).clone()
        total = int(counts.view(torch.int32).sum())
        ms = median_ms(run, runs, rounds)
        agree = float((got == want).float().mean())
        bad = unexplained(x, centroids, half_norms, got, want, unit(features))
        lines.append({
            "kernel": name, "ms": ms, "gflops": flops / ms / 1e6, "labels_agree": agree,
            "differing": int((got != want).sum()), "unexplained": bad, "counted": total,
            "ok": bad == 0 and total == samples,
        })
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shapes", default="1000000:64:256,1000000:64:1024,1000000:256:256,1000000:256:1024")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--compile-only", action="store_true")
    arguments = parser.parse_args()
    kernels = compile_all()
    if arguments.compile_only:
        print(f"compiled {len(kernels)} kernels")
        return 0
    import torch

    results = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "shapes": []}
    failures = 0
    for shape in arguments.shapes.split(","):
        samples, features, clusters = (int(v) for v in shape.split(":"))
        lines = shape_lines(kernels, samples, features, clusters, arguments.runs, arguments.rounds)
        print(f"k-means assignment, {samples} samples x {features} features, {clusters} clusters:")
        simt_ms = next(line["ms"] for line in lines if line["kernel"] == "kmeans_assign")
        for line in lines:
            extra = ""
            if "ok" in line:
                failures += not line["ok"]
                extra = (f"   kmeans_assign / this {simt_ms / line['ms']:5.2f}   labels = PyTorch's "
                         f"{line['labels_agree']:.6%} ({line['differing']} differ, {line['unexplained']} "
                         f"beyond the stated error)   {'OK' if line['ok'] else 'MISMATCH'}")
            print(f"  {line['kernel']:34} {line['ms']:9.3f} ms {line['gflops']:9.1f} GFLOP/s{extra}")
        results["shapes"].append({"samples": samples, "features": features, "clusters": clusters, "lines": lines})
    if arguments.json:
        Path(arguments.json).write_text(json.dumps(results, indent=1))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
