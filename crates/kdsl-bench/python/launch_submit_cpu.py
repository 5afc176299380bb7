#!/usr/bin/env python3
"""Launch overhead from Python on a SYCL device as the submitting thread's CPU time: the
trivial kernel launched 100 times per round (``time.thread_time`` around the launches, the
queue waited outside the timed part), rounds interleaved across the cases, min and median of
the rounds in microseconds per launch. Other processes' load barely changes CPU time, unlike
the wall time that ``launch_overhead.py`` reports, so this tells changes of kdsl's own cost
apart on a shared machine. Needs dpnp and dpctl.

Usage: ``python launch_submit_cpu.py [ROUNDS] [OUT.json]``.
"""

import ctypes
import json
import statistics
import sys
import time
from pathlib import Path

import dpctl
import dpnp
from dpctl.utils import SequentialOrderManager

import kdsl
from kdsl import _module

N = 1024
m = kdsl.compile(path=Path(__file__).resolve().parent / "trivial.krn")
touch = m.touch[N, 256]
q = dpctl.SyclQueue(property="in_order")
data = dpnp.zeros(N, dtype=dpnp.float32, sycl_queue=q)
default = dpnp.zeros(N, dtype=dpnp.float32)
touch(data, N); touch(default, N); q.wait(); default.sycl_queue.wait()
rk = m.touch._loaded[_module._sycl_devices[q]]
u = data.get_array()
prep = ((1, u._pointer, N, False), N)
dk = m.to_dpctl(q)["touch"]
dargs = [u.usm_data, ctypes.c_uint32(N)]
# What dpnp (and numba-dpex) do for a kernel on an out-of-order queue: depend on the events of
# the queue's SequentialOrderManager, then record the launch there.
manager = SequentialOrderManager[default.sycl_queue]
default_kernel = m.to_dpctl(default.sycl_queue)["touch"]
default_args = [default.get_array().usm_data, ctypes.c_uint32(N)]


def ordered_dpctl():
    event = default.sycl_queue.submit_async(default_kernel, default_args, [N], [256], manager.submitted_events)
    manager.add_event_pair(event, event)

cases = {
    "kdsl, dpnp array, in-order queue": (lambda: touch(data, N), q.wait),
    "kdsl, dpnp array, dpnp's out-of-order queue": (lambda: touch(default, N), default.sycl_queue.wait),
    "kdsl._runtime Kernel.launch alone": (lambda: rk.launch(prep, [N], [256]), q.wait),
    "dpctl submit_async, in-order queue": (lambda: q.submit_async(dk, dargs, [N], [256]), q.wait),
    "dpctl submit_async, dpnp's out-of-order queue, ordered as dpnp does": (ordered_dpctl, default.sycl_queue.wait),
}
samples = {name: [] for name in cases}
for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 30):
    for name, (launch, wait) in cases.items():
        t = time.thread_time()
        for _ in range(100):
            launch()
        samples[name].append((time.thread_time() - t) / 100 * 1e6)
        wait()
out = {name: {"min": min(v), "median": statistics.median(v)} for name, v in samples.items()}
for name, v in out.items():
    print(f"{name:46s} min {v['min']:6.2f}  median {v['median']:6.2f} us")
if len(sys.argv) > 2:
    open(sys.argv[2], "w").write(json.dumps(out))
