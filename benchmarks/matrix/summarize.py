"""Turns bench_matrix.py's JSON into the tables of docs/benchmarks.md: python3 summarize.py
BENCH.json [BENCH.json ...] (several calls' files together). TFLOP/s are each column's faster
timing (CUDA graph or plain launches, as bench_matrix.py keeps them).

Two tables:
- every run: kdsl, cuBLAS, Triton writing C in the inputs' type and Triton writing f32 C, with
  kdsl's ratio to cuBLAS and to the Triton column that writes kdsl's C type ("same C");
- the goal of issue 25: per input type and size, kdsl's fastest kernel against Triton writing
  the same C type, and against Triton writing the tutorial's C (the inputs' type), and the
  median ratio of their alternating timings where bench_matrix.py made them."""
import json
import sys


def input_type(kernel):
    """f16, bf16 or tf32, from the kernel's name (hgemm*, gemm_bf16*, sgemm_tf32*)."""
    name = kernel.split("@")[0]
    if "tf32" in name:
        return "tf32"
    if "bf16" in name:
        return "bf16"
    return "f16"


def short_name(kernel):
    """The file part of KERNEL@FILE+BYTES,...: the variant's name."""
    return kernel.split("@")[-1].split("+")[0]


def median(values):
    values = sorted(value for value in values if value is not None)
    return values[len(values) // 2] if values else None


def triton_columns(runs):
    """{(input type, size): (Triton with C in the inputs' type, Triton with f32 C)}, TFLOP/s:
    the median over the runs (Triton is timed again beside every kdsl kernel, and the card's
    clock drifts over a run)."""
    timings = {}
    for run in runs:
        key = (input_type(run["kernel"]), run["size"])
        sixteen, wide = timings.setdefault(key, ([], []))
        sixteen.append(run.get("triton_tflops"))
        wide.append(run.get("triton_f32_out_tflops"))
    return {key: (median(sixteen), median(wide)) for key, (sixteen, wide) in timings.items()}


def same_c_triton(run, columns):
    """Triton's TFLOP/s writing the C type kdsl's kernel writes (tf32 inputs: f32 C in both),
    or None where not measured."""
    kind = input_type(run["kernel"])
    sixteen, wide = columns.get((kind, run["size"]), (None, None))
    if kind == "tf32" or run.get("c_type", "f32") != "f32":
        return sixteen
    return wide


def number(value, digits=1):
    return "-" if value is None else f"{value:.{digits}f}"


def error(value):
    return "-" if value is None else f"{value:.1e}"


def ratio(numerator, denominator):
    return "-" if numerator is None or not denominator else f"{numerator / denominator:.2f}"


def main(paths):
    runs = [run for path in paths for run in json.load(open(path))["runs"]]
    columns = triton_columns(runs)
    print("| kernel | size | C | kdsl | cuBLAS | Triton | Triton, f32 C | kdsl / cuBLAS | kdsl / Triton, same C | max error |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for run in sorted(runs, key=lambda r: (input_type(r["kernel"]), r["size"], -r["kdsl_tflops"])):
        print(f"| {short_name(run['kernel'])} | {run['size']} | {run.get('c_type', 'f32')} "
              f"| {number(run['kdsl_tflops'])} | {number(run.get('cublas_tflops'))} "
              f"| {number(run.get('triton_tflops'))} | {number(run.get('triton_f32_out_tflops'))} "
              f"| {ratio(run['kdsl_tflops'], run.get('cublas_tflops'))} "
              f"| {ratio(run['kdsl_tflops'], same_c_triton(run, columns))} "
              f"| {error(run.get('max_error_vs_f64_relative_to_max'))} |")
    print()
    print("| input | size | kdsl's fastest | kdsl | Triton, same C | ratio | Triton, the tutorial's C | ratio | interleaved, same C (median) |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    groups = {}
    for run in runs:
        groups.setdefault((input_type(run["kernel"]), run["size"]), []).append(run)
    for (kind, size), group in sorted(groups.items()):
        best = max(group, key=lambda r: r["kdsl_tflops"])
        sixteen = columns.get((kind, size), (None, None))[0]
        print(f"| {kind} | {size} | {short_name(best['kernel'])} ({best.get('c_type', 'f32')} C) "
              f"| {number(best['kdsl_tflops'])} | {number(same_c_triton(best, columns))} "
              f"| **{ratio(best['kdsl_tflops'], same_c_triton(best, columns))}** | {number(sixteen)} "
              f"| {ratio(best['kdsl_tflops'], sixteen)} "
              f"| {number(best.get('ratio_to_triton_same_c_interleaved_median'), 2)} |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
