#!/usr/bin/env python3
"""Launch overhead from Python: a trivial kernel (trivial.krn) launched many times, time per
launch, kdsl against the usual way of launching the same compiled kernel in each ecosystem,
in the same run:

- SYCL (the Intel OpenCL CPU device here): dpctl ``SyclQueue.submit_async`` of the kernel
  built from kdsl's SPIR-V (``module.to_dpctl``), on the same in-order queue and USM memory;
  and on dpnp's default (out-of-order) queue, both ordered the way dpnp orders its own work
  (the events of dpctl's ``SequentialOrderManager``).
- CUDA: CuPy ``RawKernel`` (``RawModule`` of kdsl's PTX) on the same CuPy array and stream.
- SYCL's CUDA device (docs/sycl-cuda.md): dpctl ``submit_async`` of the same kernel
  (``module.to_dpctl``, kdsl's PTX handed to dpctl) on the same in-order ``cuda:gpu`` queue and
  dpctl USM memory.

Each line gives microseconds per launch (submission until all launches finished, divided by the
count) and the ratio kdsl / other. Writes JSON with ``--json``.
"""

from __future__ import annotations

import argparse
import ctypes
import importlib.util
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import kdsl

KERNEL = Path(__file__).resolve().parent / "trivial.krn"
N = 1024


def per_launch(cases: dict, count: int, repeats: int) -> dict:
    """For each case `(launch, finish)`: the median over `repeats` rounds of (time for `count`
    launches and the final wait) / count, in us. The rounds of the cases are interleaved, so a
    slow spell of the machine (clocks, other processes) falls on every case alike."""
    for launch, finish in cases.values():
        launch()
        finish()
    samples: dict = {name: [] for name in cases}
    for _ in range(repeats):
        for name, (launch, finish) in cases.items():
            began = time.perf_counter()
            for _ in range(count):
                launch()
            finish()
            samples[name].append((time.perf_counter() - began) / count * 1e6)
    return {name: statistics.median(values) for name, values in samples.items()}


def sycl_lines(module: kdsl.Module, count: int, repeats: int) -> list[dict]:
    import dpctl
    import dpnp

    queue = dpctl.SyclQueue(property="in_order")
    data = dpnp.zeros(N, dtype=dpnp.float32, sycl_queue=queue)
    touch = module.touch[N, 256]
    dpctl_kernel = module.to_dpctl(queue)["touch"]
    memory = data.get_array().usm_data if hasattr(data, "get_array") else data.usm_data
    arguments = [memory, ctypes.c_uint32(N)]
    default = dpnp.zeros(N, dtype=dpnp.float32)
    # dpnp's default queue is out of order; dpnp (and numba-dpex) order a kernel there by the
    # events of the queue's SequentialOrderManager and record its event there: the comparison.
    from dpctl.utils import SequentialOrderManager

    manager = SequentialOrderManager[default.sycl_queue]
    default_kernel = module.to_dpctl(default.sycl_queue)["touch"]
    default_arguments = [default.get_array().usm_data, ctypes.c_uint32(N)]

    def ordered_dpctl() -> None:
        event = default.sycl_queue.submit_async(
            default_kernel, default_arguments, [N], [256], manager.submitted_events
        )
        manager.add_event_pair(event, event)

    timed = per_launch(
        {
            "kdsl": (lambda: touch(data, N), queue.wait),
            "dpctl": (lambda: queue.submit_async(dpctl_kernel, arguments, [N], [256]), queue.wait),
            "kdsl out of order": (lambda: touch(default, N), default.sycl_queue.wait),
            "dpctl out of order": (ordered_dpctl, default.sycl_queue.wait),
        },
        count,
        repeats,
    )
    kdsl_us, dpctl_us = timed["kdsl"], timed["dpctl"]
    out_of_order_us, dpctl_out_of_order_us = timed["kdsl out of order"], timed["dpctl out of order"]
    expected = 2 * (repeats * count + 1)  # every launch of both in-order runs added 1
    check = float(dpnp.asnumpy(data)[0])
    return [
        {"device": queue.sycl_device.name, "what": "kdsl (in-order queue)", "us_per_launch": kdsl_us,
         "versus": "dpctl submit_async", "other_us_per_launch": dpctl_us, "ratio": kdsl_us / dpctl_us,
         "result_ok": check == expected},
        {"device": queue.sycl_device.name, "what": "kdsl (dpnp's out-of-order queue)", "us_per_launch": out_of_order_us,
         "versus": "dpctl submit_async ordered as dpnp does (same queue)", "other_us_per_launch": dpctl_out_of_order_us,
         "ratio": out_of_order_us / dpctl_out_of_order_us,
         "result_ok": float(dpnp.asnumpy(default)[0]) == 2 * (repeats * count + 1)},
    ]


def sycl_cuda_lines(module: kdsl.Module, count: int, repeats: int) -> list[dict]:
    import dpctl
    import dpctl.memory

    queue = dpctl.SyclQueue("cuda:gpu", property="in_order")
    memory = dpctl.memory.MemoryUSMDevice(N * 4, queue=queue)
    memory.memset(0)
    touch = module.touch[N, 256]
    dpctl_kernel = module.to_dpctl(queue)["touch"]
    arguments = [memory, ctypes.c_uint32(N)]
    timed = per_launch(
        {
            "kdsl": (lambda: touch(memory, N), queue.wait),
            "dpctl": (lambda: queue.submit_async(dpctl_kernel, arguments, [N], [256]), queue.wait),
        },
        count,
        repeats,
    )
    kdsl_us, dpctl_us = timed["kdsl"], timed["dpctl"]
    check = float(np.frombuffer(memory.copy_to_host().tobytes(), np.float32)[0])
    return [
        {"device": f"{queue.sycl_device.name} (SYCL CUDA)", "what": "kdsl (dpctl in-order cuda:gpu queue, USM memory)",
         "us_per_launch": kdsl_us, "versus": "dpctl submit_async (kdsl's PTX through to_dpctl)",
         "other_us_per_launch": dpctl_us, "ratio": kdsl_us / dpctl_us,
         "result_ok": check == 2 * (repeats * count + 1)},
    ]


def sycl_cuda_present() -> bool:
    if not importlib.util.find_spec("dpctl"):
        return False
    import dpctl

    try:
        return bool(dpctl.get_devices(backend="cuda"))
    except Exception:  # dpctl raises when no platform of that backend exists
        return False


def cuda_lines(module: kdsl.Module, count: int, repeats: int) -> list[dict]:
    import cupy

    data = cupy.zeros(N, dtype=cupy.float32)
    touch = module.touch[N, 256]

    major, minor = cupy.cuda.Device().compute_capability[:1], cupy.cuda.Device().compute_capability[1:]
    arch = f"sm_{major}{minor}"
    ptx_images = [name for name in module.image_names if name.startswith("ptx:")]
    image = f"ptx:{arch}" if f"ptx:{arch}" in ptx_images else ptx_images[0]
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "touch.ptx"
        path.write_bytes(module.bundle.image(image))
        raw = cupy.RawModule(path=str(path)).get_function("touch")
    size = np.uint32(N)
    synchronize = cupy.cuda.Device().synchronize
    timed = per_launch(
        {
            "kdsl": (lambda: touch(data, N), synchronize),
            "cupy": (lambda: raw((N // 256,), (256,), (data, size)), synchronize),
        },
        count,
        repeats,
    )
    kdsl_us, cupy_us = timed["kdsl"], timed["cupy"]
    expected = 2 * (repeats * count + 1)
    return [
        {"device": cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(), "what": "kdsl (CuPy array, its stream)",
         "us_per_launch": kdsl_us, "versus": f"CuPy RawKernel ({image})", "other_us_per_launch": cupy_us,
         "ratio": kdsl_us / cupy_us, "result_ok": float(data[0]) == expected},
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--launches", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path)
    arguments = parser.parse_args()
    module = kdsl.compile(path=KERNEL)
    found = {info.backend for info in kdsl.devices()}
    lines = []
    if "sycl" in found and importlib.util.find_spec("dpnp"):
        lines += sycl_lines(module, arguments.launches, arguments.repeats)
    if "sycl" in found and sycl_cuda_present():
        lines += sycl_cuda_lines(module, arguments.launches, arguments.repeats)
    if "cuda" in found and importlib.util.find_spec("cupy"):
        lines += cuda_lines(module, arguments.launches, arguments.repeats)
    if not lines:
        print("no SYCL device with dpnp/dpctl and no CUDA device with CuPy: nothing to measure")
        return 1
    print(f"launch overhead: {arguments.launches} launches of a trivial kernel, median of {arguments.repeats}")
    for line in lines:
        print(
            f"  {line['device']}: {line['what']} {line['us_per_launch']:8.2f} us/launch, "
            f"{line['versus']} {line['other_us_per_launch']:8.2f} us/launch, ratio {line['ratio']:.3f}"
            f"{'' if line['result_ok'] else '   RESULT WRONG'}"
        )
    if arguments.json:
        arguments.json.write_text(json.dumps(lines, indent=2))
    return 0 if all(line["result_ok"] for line in lines) else 1


if __name__ == "__main__":
    sys.exit(main())
