"""One launch of one kdsl GEMM at SIZE^3 (default 4096), for a profiler to look at.
Usage: python3 profile_one.py PTX_FOLDER KERNEL@FILE[+BYTES][,THREADS[,BM,BN[,C TYPE[,persist]]]] [SIZE]
(the argument syntax of bench_matrix.py, launch_spec.py; two launches: a warm-up and the
profiled one)."""
import os
import sys
import numpy as np
import cupy as cp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from launch_spec import grid, parse, resident, streamk_buffers  # noqa: E402

folder, name = sys.argv[1], sys.argv[2]
size = int(sys.argv[3]) if len(sys.argv) > 3 else 4096
kernel_name, file, dynamic, threads, bm, bn, c_type, persist = parse(name)
kernel = cp.RawModule(path=f"{folder}/{file}.ptx").get_function(kernel_name)
dtype = cp.float32 if "tf32" in kernel_name else cp.float16
a = cp.random.uniform(-1, 1, (size, size)).astype(dtype)
b = cp.random.uniform(-1, 1, (size, size)).astype(dtype)
# A 16-bit C (f16 or bf16: the same bytes for a profile) or f32.
c = cp.zeros((size, size), dtype=cp.float32 if c_type == "f32" else cp.float16)
args = (c, a, b, np.uint32(size), np.uint32(size), np.uint32(size))
if dynamic:
    args += (np.uint32(0),)
    kernel.max_dynamic_shared_size_bytes = dynamic
blocks = grid(size, size, bm, bn, persist, resident(kernel, threads, dynamic))
args += streamk_buffers(name, size, size, bm, bn, blocks)
for _ in range(2):
    kernel(blocks, (threads, 1, 1), args, shared_mem=dynamic)
cp.cuda.runtime.deviceSynchronize()
