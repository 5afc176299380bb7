#!/usr/bin/env python3
"""The vector kernels of vectors.krn (one f32x4 per access: vload4/vstore4) and their scalar
twins against Triton and PyTorch, in one process on one CUDA device, on PyTorch tensors:
saxpy over 2^28 f32 (``y.add_(x, alpha=a)``, Triton's saxpy with BLOCK 1024), a copy of 2^28
f32 (``dst.copy_(src)``, a Triton copy with BLOCK 1024) and a softmax over the rows of an
8192 x 8192 f32 matrix (``torch.softmax``, Triton's one-row-per-program softmax; the scalar
twin is collectives.krn's ``softmax_rows``).

Every implementation runs on the same tensors and stream, timed with CUDA events (the median
of several rounds of ``--runs`` launches, the rounds of the implementations interleaved); each
line gives GB/s (bytes read and written over time) and the ratio kdsl / other (other's time
over kdsl's: above 1, kdsl is faster). Results are checked against PyTorch. Writes JSON with
``--json``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl

import kdsl
from collectives_vs_triton import time_all, triton_softmax

HERE = Path(__file__).resolve().parent
KERNELS = HERE / "vectors.krn"
# The scalar softmax the vector one is written from.
SCALAR_SOFTMAX = HERE / "collectives.krn"
BLOCK = 1024  # softmax_rows4's work-group size
ITEMS = 256  # work-items a work-group for saxpy and copy
TRITON_BLOCK = 1024
N = 1 << 28


@triton.jit
def triton_saxpy(y_ptr, x_ptr, a, n, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(y_ptr + offsets, a * x + y, mask=mask)


@triton.jit
def triton_copy(output_ptr, input_ptr, n, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    tl.store(output_ptr + offsets, tl.load(input_ptr + offsets, mask=mask), mask=mask)


def saxpy_lines(module: kdsl.Module, runs: int, rounds: int) -> list[dict]:
    n, a = N, 0.5
    x = torch.rand(n, device="cuda", dtype=torch.float32)
    y0 = torch.rand(n, device="cuda", dtype=torch.float32)
    # One y for each implementation (y = a * x + y works in place), all from y0, one x for all.
    ys = {name: y0.clone() for name in ("vector", "scalar", "triton", "torch")}
    vector = module.saxpy4[n // 4, ITEMS]
    scalar = module.saxpy[n, ITEMS]
    grid = (triton.cdiv(n, TRITON_BLOCK),)
    cases = {
        "vector": lambda: vector(ys["vector"], x, a, n),
        "scalar": lambda: scalar(ys["scalar"], x, a, n),
        "triton": lambda: triton_saxpy[grid](ys["triton"], x, a, n, BLOCK_SIZE=TRITON_BLOCK),
        "torch": lambda: ys["torch"].add_(x, alpha=a),
    }
    times = time_all(cases, runs, rounds)
    # The check: every y back to y0, one launch each, against PyTorch's.
    for y in ys.values():
        y.copy_(y0)
    for case in cases.values():
        case()
    torch.cuda.synchronize()
    ok = all(torch.allclose(ys[name], ys["torch"], rtol=1e-6, atol=1e-6) for name in ("vector", "scalar", "triton"))
    ok = ok and torch.allclose(ys["torch"], y0 + a * x, rtol=1e-6, atol=1e-6)
    del ys, x, y0
    return lines("saxpy 2^28 f32", ("saxpy4", "saxpy"), 3 * n * 4, times, ok)


def copy_lines(module: kdsl.Module, runs: int, rounds: int) -> list[dict]:
    n = N
    source = torch.rand(n, device="cuda", dtype=torch.float32)
    outputs = {name: torch.empty_like(source) for name in ("vector", "scalar", "triton", "torch")}
    vector = module.copy4[n // 4, ITEMS]
    scalar = module.copy[n, ITEMS]
    grid = (triton.cdiv(n, TRITON_BLOCK),)
    cases = {
        "vector": lambda: vector(outputs["vector"], source, n),
        "scalar": lambda: scalar(outputs["scalar"], source, n),
        "triton": lambda: triton_copy[grid](outputs["triton"], source, n, BLOCK_SIZE=TRITON_BLOCK),
        "torch": lambda: outputs["torch"].copy_(source),
    }
    times = time_all(cases, runs, rounds)
    for output in outputs.values():
        output.zero_()
    for case in cases.values():
        case()
    torch.cuda.synchronize()
    ok = all(torch.equal(output, source) for output in outputs.values())
    del outputs, source
    return lines("copy 2^28 f32", ("copy4", "copy"), 2 * n * 4, times, ok)


def softmax_lines(module: kdsl.Module, scalar_module: kdsl.Module, runs: int, rounds: int) -> list[dict]:
    rows = columns = 8192
    data = torch.randn(rows, columns, device="cuda", dtype=torch.float32)
    outputs = {name: torch.empty_like(data) for name in ("vector", "scalar", "triton")}
    vector = module.softmax_rows4[rows * BLOCK, BLOCK]
    scalar = scalar_module.softmax_rows[rows * BLOCK, BLOCK]
    reference = {}
    cases = {
        "vector": lambda: vector(outputs["vector"], data, columns),
        "scalar": lambda: scalar(outputs["scalar"], data, columns),
        "triton": lambda: triton_softmax[(rows,)](outputs["triton"], data, columns,
                                                  BLOCK_SIZE=triton.next_power_of_2(columns), num_warps=16),
        "torch": lambda: reference.__setitem__("softmax", torch.softmax(data, dim=1)),
    }
    times = time_all(cases, runs, rounds)
    for output in outputs.values():
        output.zero_()
    for case in cases.values():
        case()
    torch.cuda.synchronize()
    ok = all(torch.allclose(outputs[name], reference["softmax"], rtol=1e-4, atol=1e-7) for name in outputs)
    del outputs, reference, data
    return lines(f"softmax 8192 x 8192 f32, {BLOCK} a row", ("softmax_rows4", "softmax_rows"), 2 * rows * columns * 4, times, ok)


def lines(what: str, kernels: tuple[str, str], moved_bytes: int, times: dict, ok: bool) -> list[dict]:
    """Lines for the vector kernel and its scalar twin (`kernels`), each against Triton and
    PyTorch, and the vector kernel against the scalar one."""
    rate = {name: moved_bytes / (ms * 1e-3) / 1e9 for name, ms in times.items()}
    fastest_other = min((times[name], name) for name in ("triton", "torch"))[1]
    out = []
    for mine, kernel, versus in (("vector", kernels[0], ("triton", "torch", "scalar")),
                                 ("scalar", kernels[1], ("triton", "torch"))):
        for other in versus:
            out.append({
                "device": torch.cuda.get_device_name(0), "what": f"{what} ({kernel}, {'f32x4' if mine == 'vector' else 'f32'})",
                "kernel": kernel, "kdsl_ms": times[mine], "kdsl_gb_s": rate[mine],
                "versus": f"kdsl {kernels[1]}" if other == "scalar" else other,
                "other_ms": times[other], "other_gb_s": rate[other],
                "speed_ratio": times[other] / times[mine], "fastest_other": fastest_other,
                "results_ok": ok,
            })
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--bundle", type=Path, help="a compiled vectors.krn (default: compile it)")
    parser.add_argument("--scalar-softmax-bundle", type=Path,
                        help="a compiled collectives.krn, for the scalar softmax (default: compile it)")
    arguments = parser.parse_args()
    module = kdsl.load(arguments.bundle) if arguments.bundle else kdsl.compile(path=KERNELS)
    scalar_module = (kdsl.load(arguments.scalar_softmax_bundle) if arguments.scalar_softmax_bundle
                     else kdsl.compile(path=SCALAR_SOFTMAX))
    results = []
    results += saxpy_lines(module, arguments.runs, arguments.rounds)
    torch.cuda.empty_cache()
    results += copy_lines(module, arguments.runs, arguments.rounds)
    torch.cuda.empty_cache()
    results += softmax_lines(module, scalar_module, arguments.runs, arguments.rounds)
    for line in results:
        print(
            f"{line['what']:<54} kdsl {line['kdsl_ms']:.4f} ms ({line['kdsl_gb_s']:.0f} GB/s)  "
            f"{line['versus']:<18} {line['other_ms']:.4f} ms ({line['other_gb_s']:.0f} GB/s)  "
            f"speed kdsl/other {line['speed_ratio']:.3f}  results {'ok' if line['results_ok'] else 'WRONG'}"
        )
    if arguments.json:
        arguments.json.write_text(json.dumps({"torch": torch.__version__, "triton": triton.__version__,
                                              "kdsl": kdsl.COMPILER_VERSION, "lines": results}, indent=2))
    return 0 if all(line["results_ok"] for line in results) else 1


if __name__ == "__main__":
    sys.exit(main())
