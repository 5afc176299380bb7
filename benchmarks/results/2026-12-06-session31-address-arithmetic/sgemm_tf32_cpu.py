# sgemm_tf32 (examples/sgemm_tf32.krn) on the CPU device: the bundles of the compiler with
# the address rewrite (/tmp/mx-after) and without (/tmp/mx-before), alternating. Made by
# `kdsl compile examples/sgemm_tf32.krn --target spirv` with widen_index_arithmetic on and off.
import time, statistics, numpy as np, dpnp, kdsl
m = n = k = 512
rng = np.random.default_rng(1)
a = rng.standard_normal((m, k), dtype=np.float32); b = rng.standard_normal((k, n), dtype=np.float32)
da, db = dpnp.asarray(a), dpnp.asarray(b)
mods = {name: kdsl.load(f"/tmp/mx-{name}/sgemm_tf32.kbundle") for name in ["after", "before"]}
out = {}
for rnd in range(7):
    for name, mod in mods.items():
        c = dpnp.zeros((m, n), dtype=np.float32)
        times = []
        for _ in range(5):
            t = time.perf_counter()
            mod["sgemm_tf32"](c, da, db, m, n, k, kdsl.local(26880, "f32"), global_size=(n, m // 128), local_size=(128, 1))
            c.sycl_queue.wait()
            times.append((time.perf_counter() - t) * 1e3)
        out.setdefault(name, []).append(statistics.median(times))
        ref = a @ b
        err = float(np.max(np.abs(dpnp.asnumpy(c) - ref)) / np.max(np.abs(ref)))
        assert err < 1e-2, err
for name, v in out.items(): print(name, ["%.2f" % t for t in v], "best %.2f ms" % min(v))
print("after/before %.3f" % (min(out["after"]) / min(out["before"])))
