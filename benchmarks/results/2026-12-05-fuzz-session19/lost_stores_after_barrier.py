"""Intel's OpenCL CPU device loses stores after a barrier (fuzzgen seed 2000672, session 19).

Each work-item loads a value at `(gid + 13) & 63` before a barrier and stores two elements at
`gid * S + 1` and `gid * S + 2` after it. From OpenCL C source (the driver's own compiler)
and from clang's -O2 SPIR-V alike, most work-items' stores never land (all but the first 16
of each work-group of 128 for S = 3). Without the `+ 13`, without the barrier, or with S = 1 or
4, every store lands. kdsl's SPIR-V of the same kernel (seed-2000672-reduced.krn) shows it too.
Run with dpctl: python3 lost_stores_after_barrier.py"""
import dpctl
import dpctl.memory as dm
import dpctl.program as dp
import numpy as np

G, LOCAL = 384, 128
queue = dpctl.SyclQueue("opencl:cpu")
print(queue.sycl_device.name, queue.sycl_device.driver_version)
for ty, stride, shift in [("uchar", 3, 13), ("uchar", 3, 0), ("uchar", 4, 13), ("uint", 3, 13), ("uchar", 2, 13)]:
    source = f"""
__kernel __attribute__((reqd_work_group_size({LOCAL}, 1, 1)))
void lost(__global {ty}* out, __global const ulong* input) {{
    uint gid = (uint)get_global_id(0);
    {ty} v = ({ty})(input[(gid + {shift}u) & 63u] % 93ul);
    barrier(CLK_GLOBAL_MEM_FENCE);
    out[gid * {stride}u + 1u] = v;
    out[gid * {stride}u + 2u] = 7;
}}"""
    kernel = dp.create_program_from_source(queue, source).get_sycl_kernel("lost")
    element = np.dtype({"uchar": np.uint8, "uint": np.uint32}[ty])
    out = np.full(stride * G + 8, 200, element)
    data = np.random.default_rng(0).integers(0, 2**63, 64, dtype=np.uint64)
    buffers = []
    for array in (out, data):
        memory = dm.MemoryUSMShared(array.nbytes, queue=queue)
        memory.copy_from_host(array.view(np.uint8))
        buffers.append(memory)
    queue.submit(kernel, buffers, [G], [LOCAL]).wait()
    result = np.frombuffer(buffers[0].copy_to_host(), element)
    lost = sum(1 for g in range(G) if result[g * stride + 2] != 7)
    print(f"{ty} stride {stride}, index (gid + {shift}) & 63: {lost} of {G} work-items lost their stores")
