# Builds interleaved-bytes.cl on the Intel OpenCL CPU device through dpctl, from source, in a
# child process each (the device's compiler aborts the process), with the index as written
# (size_t) and as uint. Run with the venv of scripts/env.sh.
import pathlib
import subprocess
import sys

source = (pathlib.Path(__file__).parent / "interleaved-bytes.cl").read_text()
build = "import dpctl, dpctl.program as dp, sys; dp.create_program_from_source(dpctl.SyclQueue('opencl:cpu'), sys.stdin.read()); print('built')"
for name, text in [("size_t index", source), ("uint index", source.replace("size_t g", "uint g"))]:
    child = subprocess.run([sys.executable, "-c", build], input=text, capture_output=True, text=True)
    verdict = "built" if child.returncode == 0 else f"ABORTED (exit {child.returncode}): " + next(
        (line for line in child.stderr.splitlines() if "Internal compiler error" in line), child.stderr[-200:]
    )
    print(f"{name}: {verdict}")
