"""Compares the machine code of kdsl's matrix-group GEMMs with Triton's tutorial matmul on
sm_90a without a GPU: Triton compiles ahead of time for a named target, and its wheel ships
ptxas and cuobjdump. For each kernel: registers, shared memory, and the instructions of its
main loop (the longest backward branch holding an HGMMA) and of the whole kernel, by kind.

    python3 -m venv /tmp/tv && /tmp/tv/bin/pip install triton numpy
    /tmp/tv/bin/python benchmarks/matrix/triton_sass.py OUT_FOLDER KDSL.ptx...

Triton's configuration is the one its autotuner picks for f16 at 4096 on the H200
(128 x 256 x 64, GROUP_SIZE_M 8, 3 stages, 8 warps), with f16 and f32 outputs; `TRITON=BM,BN,BK,STAGES,WARPS`
takes another. Static counts only: the GPU is the judge of speed."""
import collections
import os
import re
import subprocess
import sys
from pathlib import Path

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

sys.path.insert(0, str(Path(__file__).resolve().parent))
from triton_tutorial import matmul_kernel  # noqa: E402

BIN = Path(triton.__file__).parent / "backends" / "nvidia" / "bin"


def triton_cubin(out_type, config, folder):
    """Triton's kernel for f16 inputs and `out_type` C; the runtime's specialisation (pointers
    and sizes divisible by 16, unit strides) is given by hand, as no launch makes it."""
    bm, bn, bk, stages, warps = config
    names = matmul_kernel.arg_names
    signature = {name: "i32" for name in names}
    signature.update(a_ptr="*fp16", b_ptr="*fp16", c_ptr=f"*{out_type}")
    constants = dict(stride_ak=1, stride_bn=1, stride_cn=1, BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn,
                     BLOCK_SIZE_K=bk, GROUP_SIZE_M=8)
    signature.update({name: "constexpr" for name in constants})
    divisible = ["a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bk", "stride_cm"]
    source = ASTSource(
        fn=matmul_kernel, signature=signature,
        constexprs={(names.index(name),): value for name, value in constants.items()},
        attrs={(names.index(name),): [["tt.divisibility", 16]] for name in divisible})
    compiled = triton.compile(source, target=GPUTarget("cuda", 90, 32),
                              options={"num_stages": stages, "num_warps": warps})
    path = folder / f"triton_{out_type}.cubin"
    path.write_bytes(compiled.asm["cubin"])
    (folder / f"triton_{out_type}.ptx").write_text(compiled.asm["ptx"])
    return path, compiled.metadata.shared


def kdsl_cubin(ptx, folder):
    path = folder / (Path(ptx).stem + ".cubin")
    subprocess.run([BIN / "ptxas", "-arch=sm_90a", "-O3", ptx, "-o", path], check=True)
    return path, None


def sass(cubin):
    """(address, instruction) of every instruction, and the registers used."""
    text = subprocess.run([BIN / "cuobjdump", "-sass", cubin], check=True, capture_output=True,
                          text=True).stdout
    lines = re.findall(r"/\*([0-9a-f]{4,})\*/\s+([^;]*);", text)
    usage = subprocess.run([BIN / "cuobjdump", "-res-usage", cubin], capture_output=True,
                           text=True).stdout
    registers = re.search(r"REG:(\d+)", usage)
    return [(int(a, 16), i.strip()) for a, i in lines], registers and int(registers.group(1))


def kind(instruction):
    """The opcode with its width suffixes (STG.E.64), without predicates and operands."""
    opcode = instruction.removeprefix("@").split()[0] if not instruction.startswith("@") \
        else instruction.split()[1]
    parts = opcode.split(".")
    keep = [p for p in parts[1:] if p in {"64", "128", "U16", "ASYNC", "ALL", "SYNC"}]
    return ".".join([parts[0]] + keep)


def main_loop(code):
    """The instructions of the longest loop (a branch back to an earlier address) holding an
    HGMMA."""
    best = []
    for index, (address, instruction) in enumerate(code):
        target = re.search(r"BRA\s+(?:`\(\.L_x_\d+\)|0x([0-9a-f]+))", instruction)
        if not target or not target.group(1) or int(target.group(1), 16) >= address:
            continue
        start = int(target.group(1), 16)
        body = [i for a, i in code[:index + 1] if a >= start]
        if any("HGMMA" in i for i in body) and len(body) > len(best):
            best = body
    return best


def report(name, cubin, shared):
    code, registers = sass(cubin)
    code = [(a, i) for a, i in code if not i.startswith("@!PT")]
    loop = main_loop(code)
    counts = collections.Counter(kind(i) for _, i in code if kind(i) != "NOP")
    loop_counts = collections.Counter(kind(i) for i in loop if kind(i) != "NOP")
    interesting = ["HGMMA", "WARPGROUP", "LDGSTS", "LDGDEPBAR", "DEPBAR", "BAR.SYNC", "MEMBAR.ALL",
                   "FENCE.ASYNC", "STG", "STG.64", "STG.128", "STS", "STS.128", "STSM", "LDS",
                   "LDS.128"]
    lines = [f"## {name}: {registers} registers" + (f", {shared} bytes of shared memory" if shared else ""),
             f"main loop: {sum(loop_counts.values())} instructions; kernel: {sum(counts.values())}"]
    for key in interesting:
        total = sum(v for k, v in counts.items() if k == key or k.startswith(key + "."))
        in_loop = sum(v for k, v in loop_counts.items() if k == key or k.startswith(key + "."))
        if total:
            lines.append(f"  {key:12} loop {in_loop:4}  kernel {total:5}")
    order = [kind(i) for i in loop if kind(i).split(".")[0] in
             {"HGMMA", "LDGSTS", "BAR", "MEMBAR", "DEPBAR", "WARPGROUP"}]
    squeezed = [k for index, k in enumerate(order) if index == 0 or k != order[index - 1]]
    lines.append("  loop order: " + " ".join(squeezed))
    return "\n".join(lines)


def main():
    folder = Path(sys.argv[1])
    folder.mkdir(parents=True, exist_ok=True)
    config = tuple(int(x) for x in os.environ.get("TRITON", "128,256,64,3,8").split(","))
    parts = [f"# Machine code on sm_90a (Triton {triton.__version__}, its ptxas), Triton config {config}"]
    for out_type in ("fp16", "fp32"):
        parts.append(report(f"Triton tutorial matmul, f16 in, {out_type} out",
                            *triton_cubin(out_type, config, folder)))
    for ptx in sys.argv[2:]:
        parts.append(report(f"kdsl {Path(ptx).stem}", *kdsl_cubin(ptx, folder)))
    text = "\n\n".join(parts) + "\n"
    (folder / "sass-summary.txt").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
