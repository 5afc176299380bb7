# fuzzgen seed 8911324 (session 30): the reduced SPIR-V written as OpenCL C (dpctl builds it
# from source); right at every work-group size, unlike the SPIR-V.
import ctypes, numpy as np, dpctl, dpctl.program as dp, dpctl.memory as dm
q = dpctl.SyclQueue("opencl:cpu")
src = '''
kernel void k(global ulong *o, uint sc) {
  ulong gid = get_global_id(0);
  uint g3 = (uint)gid * 3u;
  o[g3 + 1] = (ulong)sc << ((gid + 51) & 63);
  ushort d = (ushort)(((ushort)sc & (ushort)126) | (ushort)1);
  ushort quotient = (ushort)((ushort)32768 / d);
  ushort amount = (ushort)((ushort)(0 - quotient) & (ushort)63);
  o[g3 + 2] = o[g3 + 2] >> amount;
}'''
p = dp.create_program_from_source(q, src)
k = p.get_sycl_kernel("k")
rng = np.random.default_rng(1)
for local in [16, 64]:
    for s in [125, 127]:
        n = 256
        x = rng.integers(0, 2**64 - 1, size=3 * n, dtype=np.uint64); init = x.copy()
        b = dm.MemoryUSMDevice(x.nbytes, queue=q); q.memcpy(b, x, x.nbytes)
        q.submit(k, [b, ctypes.c_uint32(s)], [n], [local]).wait()
        q.memcpy(x, b, x.nbytes)
        amount = (-(32768 // ((s & 126) | 1))) & 63
        exp = init[2::3] >> np.uint64(amount)
        print("OpenCL C", local, s, amount, "ok" if np.array_equal(x[2::3], exp) else f"BAD {x[2::3][:3]} exp {exp[:3]}")
