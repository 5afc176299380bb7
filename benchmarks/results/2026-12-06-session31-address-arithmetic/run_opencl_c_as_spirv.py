# Runs strided-stores.cl on the Intel OpenCL CPU device through dpctl twice: compiled from source
# by the driver, and compiled by clang-22 to SPIR-V (`--target=spirv64 -O2`), at work-groups of
# 16, 32 and 64 items, and names the items whose stores were lost. Run with the venv of
# scripts/env.sh (clang-22 on PATH).
import ctypes
import pathlib
import subprocess
import tempfile

import dpctl
import dpctl.memory as dm
import dpctl.program as dp
import numpy as np

source = (pathlib.Path(__file__).parent / "strided-stores.cl").read_text()
q = dpctl.SyclQueue("opencl:cpu")
with tempfile.TemporaryDirectory() as folder:
    cl, spv = pathlib.Path(folder, "k.cl"), pathlib.Path(folder, "k.spv")
    cl.write_text(source)
    subprocess.run(["clang-22", "-cl-std=CL2.0", "--target=spirv64", "-O2", "-c", cl, "-o", spv], check=True)
    programs = {
        "OpenCL C from source": dp.create_program_from_source(q, source),
        "clang-22's SPIR-V": dp.create_program_from_spirv(q, spv.read_bytes()),
    }
n = 128
for name, program in programs.items():
    kernel = program.get_sycl_kernel("k")
    for local in [16, 32, 64]:
        o8, o10 = np.full(3 * n, 7.0), np.zeros(n, dtype=np.int64)
        b8, b10 = dm.MemoryUSMDevice(o8.nbytes, queue=q), dm.MemoryUSMDevice(o10.nbytes, queue=q)
        q.memcpy(b8, o8, o8.nbytes)
        q.memcpy(b10, o10, o10.nbytes)
        q.submit(kernel, [b8, b10, ctypes.c_int32(0), ctypes.c_double(0.0)], [n], [local]).wait()
        q.memcpy(o8, b8, o8.nbytes)
        lost = np.flatnonzero(o8.reshape(n, 3)[:, 1] != -14.0)
        verdict = "right" if lost.size == 0 else f"WRONG: items {lost[:4]}... ({lost.size} of {n}) lost their stores"
        print(f"{name}, work-groups of {local}: {verdict}")
