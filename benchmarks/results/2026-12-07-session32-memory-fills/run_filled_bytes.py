# Runs filled-bytes.cl on the Intel OpenCL CPU device through dpctl: compiled from source by
# the driver, and compiled by clang-22 to SPIR-V (`--target=spirv64 -O2`, which also makes the
# loop an llvm.memset of a runtime byte); and kdsl's SPIR-V of seed-9011949-reduced.krn as
# kdsl emitted it before session 32 (kdsl-before.spvasm) and after (kdsl-after.spvasm). Run with
# the venv of scripts/env.sh (clang-22 and spirv-as on PATH). Expected: 27 everywhere.
import ctypes
import pathlib
import subprocess
import tempfile

import dpctl
import dpctl.memory as dm
import dpctl.program as dp
import numpy as np

here = pathlib.Path(__file__).parent
source = (here / "filled-bytes.cl").read_text()
q = dpctl.SyclQueue("opencl:cpu")
programs = {"OpenCL C from source": dp.create_program_from_source(q, source)}
with tempfile.TemporaryDirectory() as folder:
    cl, spv = pathlib.Path(folder, "k.cl"), pathlib.Path(folder, "k.spv")
    cl.write_text(source)
    subprocess.run(["clang-22", "-cl-std=CL2.0", "--target=spirv64", "-O2", "-c", cl, "-o", spv], check=True)
    programs["clang-22's SPIR-V"] = dp.create_program_from_spirv(q, spv.read_bytes())
    for name in ["kdsl-before", "kdsl-after"]:
        binary = pathlib.Path(folder, name + ".spv")
        subprocess.run(["spirv-as", "--target-env", "spv1.2", here / f"{name}.spvasm", "-o", binary], check=True)
        programs[f"{name}.spvasm"] = dp.create_program_from_spirv(q, binary.read_bytes())
for name, program in programs.items():
    kernel = program.get_sycl_kernel("fill")
    out, side = np.full(64, -1.0), np.zeros(64, np.float32)
    values = np.arange(8, dtype=np.int16)
    buffers = []
    for array in (out, values, side):
        buffer = dm.MemoryUSMDevice(array.nbytes, queue=q)
        q.memcpy(buffer, array, array.nbytes)
        buffers.append(buffer)
    q.submit(kernel, [*buffers, ctypes.c_uint32(27)], [64], [16]).wait()
    q.memcpy(out, buffers[0], out.nbytes)
    verdict = "right" if np.all(out == 27.0) else f"WRONG: read {out[:4]} (expected 27)"
    print(f"{name}: {verdict}")
