#!/usr/bin/env python3
"""The collective kernels of collectives.krn against Triton and PyTorch, in one process on one
CUDA device, on PyTorch tensors: a sum over 2^28 f32 (``torch.sum``, a Triton block sum with
an atomic per program) and a softmax over the rows of an 8192 x 8192 f32 matrix
(``torch.softmax``, Triton's one-row-per-program softmax).

Every implementation runs on the same tensors and stream, timed with CUDA events (the median
of several rounds of ``--runs`` launches, the rounds of the implementations interleaved); each
line gives GB/s (bytes read and written over time) and the ratio kdsl / other. Results are
checked against PyTorch. Writes JSON with ``--json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl

import kdsl

KERNELS = Path(__file__).resolve().parent / "collectives.krn"
BLOCK = 1024


@triton.jit
def triton_sum(total_ptr, input_ptr, n, BLOCK_SIZE: tl.constexpr):
    start = tl.program_id(0) * BLOCK_SIZE
    offsets = start + tl.arange(0, BLOCK_SIZE)
    values = tl.load(input_ptr + offsets, mask=offsets < n, other=0.0)
    tl.atomic_add(total_ptr, tl.sum(values, axis=0))


@triton.jit
def triton_softmax(output_ptr, input_ptr, columns, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK_SIZE)
    mask = offsets < columns
    values = tl.load(input_ptr + row * columns + offsets, mask=mask, other=-float("inf"))
    shifted = values - tl.max(values, axis=0)
    numerator = tl.exp(shifted)
    result = numerator / tl.sum(numerator, axis=0)
    tl.store(output_ptr + row * columns + offsets, result, mask=mask)


def time_all(cases: dict, runs: int, rounds: int) -> dict:
    """Median milliseconds per launch of each case over `rounds` rounds of `runs` launches."""
    for case in cases.values():
        case()
    torch.cuda.synchronize()
    samples: dict = {name: [] for name in cases}
    for _ in range(rounds):
        for name, case in cases.items():
            began, ended = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            began.record()
            for _ in range(runs):
                case()
            ended.record()
            ended.synchronize()
            samples[name].append(began.elapsed_time(ended) / runs)
    return {name: statistics.median(values) for name, values in samples.items()}


def sum_lines(module: kdsl.Module, runs: int, rounds: int, kernel_name: str = "sum", groups_per_unit: int = 2) -> list[dict]:
    n = 1 << 28
    data = torch.rand(n, device="cuda", dtype=torch.float32)
    totals = {name: torch.zeros(1, device="cuda", dtype=torch.float32) for name in ("kdsl", "triton")}
    groups = torch.cuda.get_device_properties(0).multi_processor_count * groups_per_unit
    kernel = module[kernel_name][groups * BLOCK, BLOCK]
    triton_block = 4096

    def run_kdsl():
        totals["kdsl"].zero_()
        kernel(totals["kdsl"], data, n)

    def run_triton():
        totals["triton"].zero_()
        triton_sum[(triton.cdiv(n, triton_block),)](totals["triton"], data, n, BLOCK_SIZE=triton_block)

    reference = {}

    def run_torch():
        reference["sum"] = torch.sum(data)

    times = time_all({"kdsl": run_kdsl, "triton": run_triton, "torch": run_torch}, runs, rounds)
    run_kdsl(), run_triton(), run_torch()
    torch.cuda.synchronize()
    want = float(reference["sum"])
    ok = all(abs(float(totals[name]) - want) <= 1e-3 * abs(want) for name in ("kdsl", "triton"))
    return lines(f"sum 2^28 f32 ({kernel_name}, {groups_per_unit}/SM)", n * 4, times, ok)


def softmax_lines(module: kdsl.Module, runs: int, rounds: int, block: int = BLOCK) -> list[dict]:
    rows = columns = 8192
    data = torch.randn(rows, columns, device="cuda", dtype=torch.float32)
    outputs = {name: torch.empty_like(data) for name in ("kdsl", "triton")}
    kernel = module.softmax_rows[rows * block, block]

    def run_kdsl():
        kernel(outputs["kdsl"], data, columns)

    def run_triton():
        triton_softmax[(rows,)](outputs["triton"], data, columns, BLOCK_SIZE=triton.next_power_of_2(columns), num_warps=16)

    reference = {}

    def run_torch():
        reference["softmax"] = torch.softmax(data, dim=1)

    times = time_all({"kdsl": run_kdsl, "triton": run_triton, "torch": run_torch}, runs, rounds)
    run_kdsl(), run_triton(), run_torch()
    torch.cuda.synchronize()
    ok = all(torch.allclose(outputs[name], reference["softmax"], rtol=1e-4, atol=1e-7) for name in outputs)
    return lines(f"softmax 8192 x 8192 f32 ({block} a row)", 2 * rows * columns * 4, times, ok)


def lines(what: str, moved_bytes: int, times: dict, ok: bool) -> list[dict]:
    rate = {name: moved_bytes / (ms * 1e-3) / 1e9 for name, ms in times.items()}
    fastest_other = min((times[name], name) for name in times if name != "kdsl")[1]
    out = []
    for other in ("triton", "torch"):
        out.append({
            "device": torch.cuda.get_device_name(0), "what": what,
            "kdsl_ms": times["kdsl"], "kdsl_gb_s": rate["kdsl"],
            "versus": other, "other_ms": times[other], "other_gb_s": rate[other],
            "speed_ratio": times[other] / times["kdsl"], "fastest_other": fastest_other,
            "results_ok": ok,
        })
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--bundle", type=Path, help="a compiled collectives.krn (default: compile it)")
    parser.add_argument("--softmax-variant", action="append", default=[], metavar="BLOCK=BUNDLE")
    arguments = parser.parse_args()
    module = kdsl.load(arguments.bundle) if arguments.bundle else kdsl.compile(path=KERNELS)
    results = []
    for kernel_name, groups_per_unit in (("sum", 2), ("sum4", 2), ("sum4", 8)):
        results += sum_lines(module, arguments.runs, arguments.rounds, kernel_name, groups_per_unit)
    results += softmax_lines(module, arguments.runs, arguments.rounds)
    # Narrower work-groups, more columns per work-item: bundles compiled with
    # `-D BLOCK=512 -D PER_ITEM=16` and so on, named by `--softmax-variant BLOCK=PATH`.
    for variant in arguments.softmax_variant:
        block, path = variant.split("=", 1)
        results += softmax_lines(kdsl.load(path), arguments.runs, arguments.rounds, int(block))
    for line in results:
        print(
            f"{line['what']:<34} kdsl {line['kdsl_ms']:.4f} ms ({line['kdsl_gb_s']:.0f} GB/s)  "
            f"{line['versus']:<6} {line['other_ms']:.4f} ms ({line['other_gb_s']:.0f} GB/s)  "
            f"speed kdsl/other {line['speed_ratio']:.3f}  results {'ok' if line['results_ok'] else 'WRONG'}"
        )
    if arguments.json:
        arguments.json.write_text(json.dumps({"torch": torch.__version__, "triton": triton.__version__,
                                              "kdsl": kdsl.COMPILER_VERSION, "lines": results}, indent=2))
    return 0 if all(line["results_ok"] for line in results) else 1


if __name__ == "__main__":
    sys.exit(main())
