import cupy, numpy as np
f = cupy.RawModule(path="target/abs-check/abs16.ptx").get_function("k")
x = cupy.array([-32768, -32768, -5, 7], dtype=cupy.int16)
d = cupy.array([3, 5, 3, 3], dtype=cupy.int16)
out = cupy.zeros(4, dtype=cupy.int16)
f((1,), (4,), (out, x, d))
print("device:", out.get(), "wrapping semantics expects", [-2, -3, 2, 1])
