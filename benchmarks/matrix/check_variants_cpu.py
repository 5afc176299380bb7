"""Runs every GEMM of wgmma_variants.txt (examples and generated variants) on the default
device, the Intel CPU device here, through their plain definitions, and checks each product
against NumPy in f64: a variant whose index arithmetic is wrong fails here before it costs
GPU time. python3 check_variants_cpu.py [NAME...] (default: all); exits 1 on any failure.

Sizes: two block rows (a band and two more where blocks go in bands), two block columns,
and six stages of K, so the ring wraps around."""
import sys
import tempfile
from pathlib import Path

import ml_dtypes
import numpy as np

import kdsl

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
import wgmma_variants  # noqa: E402

# (NumPy type of the inputs, the f64 error bound relative to the largest |C|): f16 and bf16
# products are exact in f32; tf32 rounds each input (2^-11 relative).
INPUTS = {"f16": (np.float16, 1e-5), "bf16": (ml_dtypes.bfloat16, 1e-5), "tf32": (np.float32, 2e-3)}
# C written in 16 bits (`+half`): (NumPy type, the bound its rounding adds, half an ulp).
OUTPUTS = {"f32": (np.float32, 0.0), "f16": (np.float16, 2.0**-11), "bf16": (ml_dtypes.bfloat16, 2.0**-8)}


def variants(names):
    for line in (HERE / "wgmma_variants.txt").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, source, input, *numbers = line.split()
        if not names or name in names:
            yield name, source, input, [int(x) for x in numbers]


def check(name, source, input, numbers, folder):
    groups, tiles, columns, stages = numbers
    element, _, _, depth, kernel_name = wgmma_variants.facts(input)
    rows, _, _, ring = wgmma_variants.shape(input, groups, tiles, columns, stages)
    path = ROOT / source if source != "-" else folder / f"{name}.krn"
    if source == "-":
        path.write_text(wgmma_variants.kernel(input, groups, tiles, columns, stages))
    kind = wgmma_variants.base_input(input).partition("/")[0].rstrip("a")
    dtype, bound = INPUTS[kind]
    band = int(input.partition("+")[0].partition(":")[2] or 0)
    m, n, k = (band + 2) * rows, 2 * columns, 6 * depth
    rng = np.random.default_rng(7)
    a = rng.uniform(-1, 1, (m, k)).astype(dtype)
    b = rng.uniform(-1, 1, (k, n)).astype(dtype)
    c_type, rounding = OUTPUTS[wgmma_variants.output(input)]
    bound += rounding
    c = np.zeros(m * n, c_type)
    module = kdsl.compile(path=path, targets="spirv")
    threads = 128 * groups
    local = kdsl.local(ring, {"f32": "f32", "f16": "f16", "bf16": "bf16"}[element])
    # A persistent GEMM (`+persist`) gets three work-groups, each walking several blocks; a
    # Stream-K one (`+streamk`) also six and eleven, so runs split blocks in several ways, and
    # every launch must leave `arrived` zero for the next.
    persist = "persist" in wgmma_variants.options(input)
    streamk = "streamk" in wgmma_variants.options(input)
    grid = (threads * 3, 1) if persist else (threads * n // columns, m // rows)
    if source.startswith("examples/"):
        kernel = module[Path(source).stem]
    else:
        kernel = module[kernel_name.replace("wgmma", "tma") if "tma" in wgmma_variants.options(input) else kernel_name]
    if "tma" in wgmma_variants.options(input):
        # A and B as 2-D arrays (and C with `+store`); m, n and k are their shapes.
        out = c.reshape(m, n) if "store" in wgmma_variants.options(input) else c
        area = wgmma_variants.store_area(input, groups, tiles, columns)
        areas = (kdsl.local(area, "f32"),) if area else ()
        kernel[grid, (threads, 1)](out, a, b, local, *areas).wait()
        return check_product(name, input, a, b, c, m, n, k, bound, "")
    if streamk:
        arrived = np.zeros(m // rows * (n // columns), np.uint32)
        results = []
        for launched in (3, 6, 11):
            c[:] = 0
            partials = np.zeros(2 * launched * rows * columns, np.float32)
            kernel[(threads * launched, 1), (threads, 1)](c, a.ravel(), b.ravel(), m, n, k, local, partials, arrived).wait()
            results.append(check_product(name, input, a, b, c, m, n, k, bound, f"{launched} groups"))
            if arrived.any():
                print(f"FAIL {name}: {launched} groups left arrived {arrived.tolist()}", flush=True)
                results.append(False)
        return all(results)
    kernel[grid, (threads, 1)](c, a.ravel(), b.ravel(), m, n, k, local).wait()
    return check_product(name, input, a, b, c, m, n, k, bound, "")


def check_product(name, input, a, b, c, m, n, k, bound, how):
    """Whether C (flat) is A B within `bound` of the largest |C|, printed."""
    exact = a.astype(np.float64) @ b.astype(np.float64)
    error = float(np.abs(c.reshape(m, n).astype(np.float64) - exact).max() / np.abs(exact).max())
    ok = error <= bound
    print(f"{'ok  ' if ok else 'FAIL'} {name:24} {input:20} {m}x{n}x{k} {how} error {error:.2e} (bound {bound:.0e})", flush=True)
    return ok


def main():
    with tempfile.TemporaryDirectory() as folder:
        results = [check(*variant, Path(folder)) for variant in variants(sys.argv[1:])]
    print(f"{sum(results)} passed, {len(results) - sum(results)} failed")
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
