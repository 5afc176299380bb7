# fuzzgen seed 8900964 (session 30) in OpenCL C: the Intel OpenCL CPU device gives 0 for the sign
# of the wrapping negation of INT_MIN (expected -1). Run with the venv of scripts/env.sh.
import numpy as np, dpctl, dpctl.program as dp, dpctl.memory as dm
q = dpctl.SyclQueue("opencl:cpu")
src = '''
kernel void t(global int *out, global const int *x) {
    size_t i = get_global_id(0);
    out[i] = (int)(0u - (uint)x[i]) >> 31;
}'''
p = dp.create_program_from_source(q, src)
k = p.get_sycl_kernel("t")
x = np.array([-2**31, 5, -3], np.int32)
bx = dm.MemoryUSMDevice(x.nbytes, queue=q); q.memcpy(bx, x, x.nbytes)
bo = dm.MemoryUSMDevice(x.nbytes, queue=q)
q.submit(k, [bo, bx], [3]).wait()
out = np.zeros(3, np.int32); q.memcpy(out, bo, out.nbytes); print("OpenCL C:", out, "expected [-1 -1 0]")
