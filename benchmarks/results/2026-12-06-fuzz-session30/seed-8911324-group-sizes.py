# fuzzgen seed 8911324 (session 30): the reduced kernel through the Python package on the CPU
# device at several work-group sizes, against its result computed here (NumPy).
import numpy as np, kdsl
src = open(__file__.replace('-group-sizes.py', '-reduced.krn')).read()
bad = 0
for opt in [0, 3]:
    m = kdsl.compile(src, opt_level=opt)
    rng = np.random.default_rng(1)
    for local in [1, 4, 8, 16, 32, 64, 128, 256]:
        for s in [125, 127, 128]:
            n = 256
            out6 = rng.integers(0, 2**64 - 1, size=3 * n, dtype=np.uint64)
            init = out6.copy()
            tiles = np.zeros((4, s + 4), np.int8)[:, :s]
            m["fuzz"](out6, np.zeros(4, np.uint16), np.zeros(4, np.uint8), np.zeros(n, np.uint32), tiles, global_size=n, local_size=local)
            d = (s & 127) | 1
            amount = (-(32768 // d)) & 63
            exp = init[2::3] >> np.uint64(amount)
            if not np.array_equal(out6[2::3], exp):
                bad += 1
                print("BAD opt", opt, "local", local, "s", s, "got", out6[2::3][:4], "exp", exp[:4])
print("bad", bad)
