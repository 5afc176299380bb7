import sys, numpy as np, dpctl, dpctl.program as dp, dpctl.memory as dm
q = dpctl.SyclQueue("opencl:cpu")
spv = open(sys.argv[1], "rb").read()
prog = dp.create_program_from_spirv(q, spv, sys.argv[3] if len(sys.argv) > 3 else "")
k = prog.get_sycl_kernel(sys.argv[2])
n = 64
buf = dm.MemoryUSMShared(n * 8, queue=q)
host = np.full(n, 7.0)
q.memcpy(buf, host, n * 8)
import os; L=int(os.environ.get("L","16")); q.submit(k, [buf], [n], [L]).wait()
out = np.empty(n); q.memcpy(out, buf, n * 8)
print(out[:16])
