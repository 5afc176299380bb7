"""What makes Intel's OpenCL CPU device lose stores after a barrier (fuzzgen seed 2000672;
session 19 found it, session 20 narrowed the trigger). Each kernel below is OpenCL C built by
the driver's own compiler; 384 work-items in groups of 128 (16 and 32 where named). A row
counts the work-items whose store after the barrier did not land.
Run with dpctl: python3 trigger.py"""
import dpctl
import dpctl.memory as dm
import dpctl.program as dp
import numpy as np

G = 384
queue = dpctl.SyclQueue("opencl:cpu")
print(queue.sycl_device.name, queue.sycl_device.driver_version)

BARRIER = "barrier(CLK_GLOBAL_MEM_FENCE);"
STORE = "out[gid * 3u + 2u] = v | 7;"


def lost(body, group=128, landed=lambda out, g: out[3 * g + 2] != 200):
    source = f"""
__kernel __attribute__((reqd_work_group_size({group}, 1, 1)))
void lost(__global uchar* out, __global const ulong* input) {{
    uint gid = (uint)get_global_id(0);
    {body}
}}"""
    kernel = dp.create_program_from_source(queue, source).get_sycl_kernel("lost")
    out = np.full(8 * G, 200, np.uint8)
    data = np.arange(64, dtype=np.uint64) * 1000003 + 17
    buffers = []
    for array in (out, data):
        memory = dm.MemoryUSMShared(array.nbytes, queue=queue)
        memory.copy_from_host(array.view(np.uint8))
        buffers.append(memory)
    queue.submit(kernel, buffers, [G], [group]).wait()
    result = np.frombuffer(buffers[0].copy_to_host(), np.uint8)
    return sum(1 for g in range(G) if not landed(result, g))


def gather(index):
    return f"uchar v = (uchar)input[{index}];"


CASES = [
    ("the trigger: gather at (gid + 13) & 63, barrier, one stride-3 store",
     gather("(gid + 13u) & 63u") + BARRIER + STORE, 128),
    ("the same in groups of 32", gather("(gid + 13u) & 63u") + BARRIER + STORE, 32),
    ("the same in groups of 16 (one vector of 16)", gather("(gid + 13u) & 63u") + BARRIER + STORE, 16),
    ("gather at (gid + 1) & 63", gather("(gid + 1u) & 63u") + BARRIER + STORE, 128),
    ("gather at (gid + 13) >> 3", gather("(gid + 13u) >> 3") + BARRIER + STORE, 128),
    ("gather at (gid - 3) & 63", gather("(gid - 3u) & 63u") + BARRIER + STORE, 128),
    ("gather at gid & 63 (no offset)", gather("gid & 63u") + BARRIER + STORE, 128),
    ("gather at (gid + 13) % 23", gather("(gid + 13u) % 23u") + BARRIER + STORE, 128),
    ("gather at (gid * 3 + 1) & 63", gather("(gid * 3u + 1u) & 63u") + BARRIER + STORE, 128),
    ("gather at (gid ^ 13) & 63", gather("(gid ^ 13u) & 63u") + BARRIER + STORE, 128),
    ("gather at (lid + 13) & 63", "uint lid = (uint)get_local_id(0);" + gather("(lid + 13u) & 63u") + BARRIER + STORE, 128),
    ("gid as group * 128 + lid", "gid = (uint)get_group_id(0) * 128u + (uint)get_local_id(0);" + gather("(gid + 13u) & 63u") + BARRIER + STORE, 128),
    ("the gather after the barrier", BARRIER + gather("(gid + 13u) & 63u") + STORE, 128),
    ("no barrier", gather("(gid + 13u) & 63u") + STORE, 128),
    ("the store's index in 64 bits: out[(size_t)gid * 3 + 2]",
     gather("(gid + 13u) & 63u") + BARRIER + "out[(size_t)gid * 3 + 2] = v | 7;", 128),
    ("a stride-1 store beside the stride-3 one",
     gather("(gid + 13u) & 63u") + BARRIER + STORE + "out[1200u + gid] = 9;", 128),
    ("stride-3 store of a constant, the gathered value unused after the barrier",
     gather("(gid + 13u) & 63u") + "out[gid * 3u] = v;" + BARRIER + "out[gid * 3u + 2u] = 7;", 128),
]

if __name__ == "__main__":
    for name, body, group in CASES:
        print(f"{lost(body, group):3d} of {G} lost: {name}", flush=True)
