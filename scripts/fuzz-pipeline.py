"""Type-swapping fuzzer for the whole compiler: rewrites every example and feature kernel with
one scalar type replaced by another, compiles what the front end accepts for every target,
validates the SPIR-V with spirv-val and the PTX with ptxas, and reports any crash (an exit
code other than 0 or 1), internal error, or invalid output. Files that fail are kept as
fuzz-failure-N.krn in the working folder.

Usage (after `source scripts/env.sh` and `cargo build -p kdsl-cli`):
    python3 scripts/fuzz-pipeline.py [SEED] [FRACTION]
"""

import glob
import os
import random
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KDSL = os.path.join(ROOT, "target/debug/kdsl")
TYPES = ["f32", "f64", "f16", "i32", "u32", "i64", "u64", "u8", "i8", "i16", "u16"]


def run(arguments):
    return subprocess.run(arguments, capture_output=True, text=True)


def main():
    random.seed(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
    fraction = float(sys.argv[2]) if len(sys.argv) > 2 else 0.3
    ptxas = glob.glob(os.path.join(os.environ["KDSL_PREFIX"], "lib/python3*/site-packages/nvidia/cu13/bin/ptxas"))[0]
    sources = sorted(glob.glob(os.path.join(ROOT, "examples/*.krn")) + glob.glob(os.path.join(ROOT, "tests/kernels/*.krn")))
    work = tempfile.mkdtemp(prefix="kdsl-fuzz-")
    tried = accepted = failures = 0
    for path in sources:
        original = open(path).read()
        for old in TYPES:
            for new in TYPES:
                if old == new or not re.search(rf"\b{old}\b", original) or random.random() > fraction:
                    continue
                tried += 1
                source = os.path.join(work, "mutant.krn")
                open(source, "w").write(re.sub(rf"\b{old}\b", new, original))
                problems = []
                bundle = run([KDSL, "compile", source, "--target", "spirv,ptx,amdgpu", "--arch", "sm_75,sm_90,gfx90a,gfx1100,gfx9-generic", "-o", os.path.join(work, "m.kbundle")])
                if bundle.returncode not in (0, 1) or "internal" in bundle.stderr.lower() or "E080" in bundle.stderr:
                    problems.append(f"compile exit {bundle.returncode}: {bundle.stderr[-600:]}")
                if bundle.returncode == 0:
                    accepted += 1
                    spv, ptx = os.path.join(work, "m.spv"), os.path.join(work, "m.ptx")
                    run([KDSL, "compile", source, "--emit", "spirv", "-o", spv])
                    run([KDSL, "compile", source, "--emit", "ptx", "--arch", "sm_90", "-o", ptx])
                    validation = run(["spirv-val", spv])
                    if validation.returncode:
                        problems.append("spirv-val: " + (validation.stdout + validation.stderr)[-600:])
                    assembled = run([ptxas, "-arch=sm_90", ptx, "-o", os.devnull])
                    if assembled.returncode:
                        problems.append("ptxas: " + assembled.stderr[-600:])
                if problems:
                    failures += 1
                    kept = f"fuzz-failure-{failures}.krn"
                    open(kept, "w").write(open(source).read())
                    print(f"FAILURE {os.path.basename(path)} {old}->{new} (kept as {kept}):", *problems, sep="\n  ")
    print(f"{tried} mutants, {accepted} accepted by the front end, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
