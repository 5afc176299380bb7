#!/usr/bin/env python3
"""The first launch in a new process with warm caches: ``kdsl.compile`` of a cached source,
then the program on the default device, each measured in fresh Python processes.

Bundles are cached in ``KDSL_CACHE_DIR`` when it is set (else in a scratch folder), native
programs in a scratch folder per source. Sources: ``examples/saxpy.krn`` (launched for real on NumPy arrays), ``examples/kmeans.krn``
(2 kernels) and a 9-kernel module (the seven examples of ``inputs/seven_kernels.krn`` plus
k-means' two). Every source gets its own cache folder, filled by one warm-up process; then
each round runs one process with the native program cache off (``KDSL_NATIVE_CACHE=off``,
what kdsl did before it: the driver builds the SPIR-V) and one with it on, alternating. On a
CUDA device (the default device where there is one) "off" also sets ``CUDA_CACHE_DISABLE=1``,
so the lines compare the driver's PTX JIT cache (on by default) with no cache.

Per process, in milliseconds: ``compile`` (a bundle-cache hit), ``device`` (opening the default
device, once per process whatever the kernels), ``program`` (the program built or loaded and
every kernel looked up: what a module's first launch waits for; for saxpy the launch itself
too), ``first`` = compile + program, and ``second`` (another ``kdsl.compile`` of the same source
and its program in the same process). Prints medians and ranges; ``--json FILE`` keeps every run.

    python crates/kdsl-bench/python/first_launch.py --rounds 7 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

CHILD = r"""
import json, sys, time
start = time.perf_counter()
import numpy as np
import kdsl
from kdsl._devices import resolve_device
imported = time.perf_counter()

def program(module, device):
    for kernel in module:
        kernel.loaded(device)
    if "saxpy" in module and len(module.kernels) == 1:
        y, x = np.ones(1000, np.float32), np.ones(1000, np.float32)
        module.saxpy[1024, 256](y, x, 2.0, 1000)
        assert (y == 3.0).all()

t0 = time.perf_counter()
module = kdsl.compile(path=sys.argv[1])
t1 = time.perf_counter()
device = resolve_device(None)
t2 = time.perf_counter()
program(module, device)
t3 = time.perf_counter()
again = kdsl.compile(path=sys.argv[1])
program(again, device)
t4 = time.perf_counter()
ms = lambda seconds: round(seconds * 1e3, 3)
print(json.dumps({
    "import": ms(imported - start), "compile": ms(t1 - t0), "device": ms(t2 - t1),
    "program": ms(t3 - t2), "first": ms((t1 - t0) + (t3 - t2)), "second": ms(t4 - t3),
    "from_cache": module.from_cache, "native": kdsl.cache_info()["native"],
    "device_name": device.name, "platform": device.info()["platform_backend"],
}))
"""


def sources(scratch: Path) -> dict[str, Path]:
    nine = scratch / "nine_kernels.krn"
    nine.write_text(
        (ROOT / "crates/kdsl-bench/inputs/seven_kernels.krn").read_text()
        + "\n"
        + (ROOT / "examples/kmeans.krn").read_text()
    )
    return {
        "saxpy (1 kernel)": ROOT / "examples/saxpy.krn",
        "kmeans.krn (2 kernels)": ROOT / "examples/kmeans.krn",
        "seven examples + kmeans (9 kernels)": nine,
    }


def child(path: Path, native_cache: Path, native: bool) -> dict:
    # Bundles: the caller's KDSL_CACHE_DIR when set (a machine without the compiler brings a
    # filled one), else the scratch folder's; native programs: a folder per source.
    environment = dict(os.environ, KDSL_NATIVE_CACHE_DIR=str(native_cache))
    environment.setdefault("KDSL_CACHE_DIR", str(native_cache.parent / "bundles"))
    if native:
        environment.pop("KDSL_NATIVE_CACHE", None)
        environment.pop("CUDA_CACHE_DISABLE", None)
    else:
        environment["KDSL_NATIVE_CACHE"] = "off"
        environment["CUDA_CACHE_DISABLE"] = "1"  # on CUDA devices: the driver's PTX JIT cache
    output = subprocess.run(
        [sys.executable, "-c", CHILD, str(path)],
        env=environment,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(output.strip().splitlines()[-1])


def summary(runs: list[dict], field: str) -> str:
    values = [run[field] for run in runs]
    return f"{statistics.median(values):8.1f} ({min(values):.1f}-{max(values):.1f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", type=Path)
    arguments = parser.parse_args()
    results: dict[str, dict[str, list[dict]]] = {}
    with tempfile.TemporaryDirectory(prefix="kdsl-first-launch-") as scratch:
        for label, path in sources(Path(scratch)).items():
            cache = Path(scratch) / f"native-{len(results)}"
            child(path, cache, native=True)  # fills the bundle and native caches
            runs: dict[str, list[dict]] = {"off": [], "on": []}
            for _ in range(arguments.rounds):
                runs["off"].append(child(path, cache, native=False))
                runs["on"].append(child(path, cache, native=True))
            assert all(run["from_cache"] for run in runs["off"] + runs["on"])
            if runs["on"][0]["platform"] == "opencl":
                assert all(run["native"]["hits"] >= 1 for run in runs["on"]), runs["on"]
            results[label] = runs
    device = next(iter(results.values()))["on"][0]["device_name"]
    print(f"device: {device}; {arguments.rounds} processes per line; ms, median (range)")
    print(f"{'source':38} {'native cache':12} {'compile':>20} {'program':>20} {'first':>20} {'second':>20} {'device':>20}")
    for label, runs in results.items():
        for mode in ("off", "on"):
            fields = " ".join(summary(runs[mode], f) for f in ("compile", "program", "first", "second", "device"))
            print(f"{label:38} {mode:12} {fields}")
    if arguments.json:
        arguments.json.write_text(
            json.dumps({"date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "results": results}, indent=1)
        )


if __name__ == "__main__":
    main()
