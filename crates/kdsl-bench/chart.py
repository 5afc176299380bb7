#!/usr/bin/env python3
"""Draws docs/gpu-ratios.png: kdsl's speed relative to its peer on each GPU benchmark (above 1
is faster than the peer), from the JSON that scripts/gpu-run.sh (`bench.json`, kdsl against
nvcc -O3), collectives_vs_triton.py and vectors_vs_triton.py write. Needs matplotlib (not part
of the test set-up):

    python3 crates/kdsl-bench/chart.py --bench RESULTS/bench.json \
        --collectives RESULTS/collectives_vs_triton.json RESULTS/vectors_vs_triton.json \
        --out docs/gpu-ratios.png
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def bars(bench: Path, peers: list[Path]) -> list[tuple[str, float]]:
    rows = []
    for result in json.loads(bench.read_text())["results"]:
        rows.append((f"{result['kernel']} vs nvcc -O3", result["nvcc_ns"] / result["kdsl_ns"]))
    for path in peers:
        best: dict = {}
        for line in json.loads(path.read_text())["lines"]:
            # The speed against the fastest peer of each case; lines against kdsl's own scalar
            # twin (vectors_vs_triton.py) are not a peer.
            if line["versus"].startswith("kdsl"):
                continue
            key = line["what"]
            best[key] = min(best.get(key, float("inf")), line["speed_ratio"])
        for what, ratio in best.items():
            rows.append((f"{what} vs fastest of Triton/PyTorch", ratio))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bench", type=Path, required=True)
    parser.add_argument("--collectives", type=Path, nargs="*", default=[])
    parser.add_argument("--title", default="kdsl on an NVIDIA H200: speed relative to the peer")
    parser.add_argument("--out", type=Path, required=True)
    arguments = parser.parse_args()
    rows = bars(arguments.bench, arguments.collectives)
    figure, axes = plt.subplots(figsize=(12, 0.42 * len(rows) + 1.2))
    names = [name for name, _ in rows][::-1]
    ratios = [ratio for _, ratio in rows][::-1]
    colors = ["#3a7d44" if ratio >= 0.995 else "#c0504d" for ratio in ratios]
    axes.barh(names, ratios, color=colors)
    axes.axvline(1.0, color="black", linewidth=1)
    for index, ratio in enumerate(ratios):
        axes.text(ratio + 0.01, index, f"{ratio:.3f}", va="center", fontsize=8)
    axes.set_xlim(0, max(ratios) * 1.15)
    axes.set_xlabel("kdsl speed / peer speed (above 1: kdsl faster)")
    axes.set_title(arguments.title, fontsize=10)
    figure.tight_layout()
    figure.savefig(arguments.out, dpi=110)


if __name__ == "__main__":
    main()
