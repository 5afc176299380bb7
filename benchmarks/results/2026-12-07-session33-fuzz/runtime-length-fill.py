# Runs runtime-length-fill.krn on the default device through the kdsl Python package and
# checks the filled bytes read back (session 33); prints "bad 0" when every case is right.
import kdsl, numpy as np
import os
m = kdsl.compile(path=os.path.join(os.path.dirname(os.path.abspath(__file__)), "runtime-length-fill.krn"))
bad = 0
for n in [5, 7, 11, 100, 255]:
  for ln in [1, 3, 17, 37, 40]:
    out = np.zeros(32, np.float64); side = np.zeros(16, np.float32)
    vals = np.array([1,2,-9,4], np.int16)
    m.fill_runtime[16, 8](out, vals, side, n, ln)
    exp0 = float(np.array([n & 255], np.uint8).view(np.int8)[0])
    exp1 = float((n*3) & 255)
    if not (np.all(out[0::2]==exp0) and np.all(out[1::2]==exp1) and np.all(side==-4)):
        bad += 1; print("BAD", n, ln, out[:4], exp0, exp1, side[:2])
print("bad", bad)
