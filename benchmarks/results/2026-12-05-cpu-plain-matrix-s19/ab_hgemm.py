import sys, time, json, numpy as np, kdsl
size = 512; m = n = k = size
rng = np.random.default_rng(1)
a16 = rng.uniform(-1, 1, (m, k)).astype(np.float16); b16 = rng.uniform(-1, 1, (k, n)).astype(np.float16)
exact = a16.astype(np.float64) @ b16.astype(np.float64)
ring = kdsl.local(53760, "f16")
outs = {}
for path in sys.argv[1:]:
    c = np.zeros(m * n, np.float32)
    t0 = time.perf_counter()
    kern = kdsl.load(path)["hgemm"][(n, m // 128), (128, 1)]
    kern(c, a16.ravel(), b16.ravel(), m, n, k, ring).wait()
    first = time.perf_counter() - t0
    err = float(np.abs(c.reshape(m, n) - exact).max() / np.abs(exact).max())
    ts = []
    for _ in range(3):
        s = time.perf_counter(); kern(c, a16.ravel(), b16.ravel(), m, n, k, ring).wait(); ts.append(time.perf_counter() - s)
    outs[path] = c.copy()
    print(json.dumps({"bundle": path, "first_s": round(first, 2), "ms": [round(x * 1e3, 1) for x in ts], "err": err}), flush=True)
vals = list(outs.values())
print("identical:", all(np.array_equal(v.view(np.uint32), vals[0].view(np.uint32)) for v in vals))
