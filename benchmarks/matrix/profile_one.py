"""One launch of one kdsl GEMM at SIZE^3 (default 4096), for a profiler to look at.
Usage: python3 profile_one.py PTX_FOLDER KERNEL@FILE[+BYTES][,THREADS[,BM,BN[,C TYPE]]] [SIZE]
(the argument syntax of bench_matrix.py; two launches: a warm-up and the profiled one)."""
import sys
import numpy as np
import cupy as cp

folder, name = sys.argv[1], sys.argv[2]
size = int(sys.argv[3]) if len(sys.argv) > 3 else 4096
name, *shape = name.split(",")
threads, bm, bn, c_type = (shape + ["256", "128", "128", "f32"][len(shape):])[:4]
threads, bm, bn = int(threads), int(bm), int(bn)
name, _, dynamic = name.partition("+")
dynamic = int(dynamic or 0)
kernel_name, _, file = name.partition("@")
kernel = cp.RawModule(path=f"{folder}/{file or kernel_name}.ptx").get_function(kernel_name)
dtype = cp.float32 if "tf32" in kernel_name else cp.float16
a = cp.random.uniform(-1, 1, (size, size)).astype(dtype)
b = cp.random.uniform(-1, 1, (size, size)).astype(dtype)
# A 16-bit C (f16 or bf16: the same bytes for a profile) or f32.
c = cp.zeros((size, size), dtype=cp.float32 if c_type == "f32" else cp.float16)
args = (c, a, b, np.uint32(size), np.uint32(size), np.uint32(size))
if dynamic:
    args += (np.uint32(0),)
    kernel.max_dynamic_shared_size_bytes = dynamic
for _ in range(2):
    kernel((size // bn, size // bm, 1), (threads, 1, 1), args, shared_mem=dynamic)
cp.cuda.runtime.deviceSynchronize()
