"""tests/kernels/matrix_tf32.krn's mma_tf32 (tf32 tiles loaded from global memory) on the GPU
against an f64 product of the inputs rounded to tf32 (to nearest, ties away), as the
differential case mma_tf32 checks it: D = A x B + C, m = 48, n = 32, k = 64."""
import sys
import numpy as np
import cupy as cp

m, n, k = 48, 32, 64
rng = np.random.default_rng(7)
a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
c = rng.uniform(-1, 1, (m, n)).astype(np.float32)
# Exact ties: the dropped 13 bits 0x1000, which round away from zero.
a.view(np.uint32)[0, :8] = (a.view(np.uint32)[0, :8] & 0xffffe000) | 0x1000
def tf32(x):
    bits = x.view(np.uint32).astype(np.uint64)
    return ((bits + 0x1000) & 0xffffe000).astype(np.uint32).view(np.float32)
want = tf32(a).astype(np.float64) @ tf32(b).astype(np.float64) + c
plain = a.astype(np.float64) @ b.astype(np.float64) + c
kernel = cp.RawModule(path=sys.argv[1]).get_function("mma_tf32")
d = cp.zeros((m, n), dtype=cp.float32)
kernel((64 * n // 16 // 64, m // 16, 1), (64, 1, 1),
       (d, cp.asarray(a), cp.asarray(b), cp.asarray(c), np.uint32(n), np.uint32(k)))
got = cp.asnumpy(d).astype(np.float64)
error = np.abs(got - want).max()
print(f"mma_tf32 from global memory: max |error| {error:.3g} against tf32-rounded inputs, "
      f"{np.abs(got - plain).max():.3g} against unrounded ones")
print("PASS" if error <= 24 * 2**-23 * 8 * max(1.0, np.abs(want).max()) else "FAIL")
