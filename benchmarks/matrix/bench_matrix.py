"""kdsl's hgemm and sgemm_tf32 (examples/*.krn, PTX for sm_90 from `kdsl compile --emit ptx`)
against cuBLAS through PyTorch (fp16 inputs; f32 inputs with TF32 allowed), timed with CUDA
events on the same device. Usage: python3 bench_matrix.py <folder with hgemm.ptx and
sgemm_tf32.ptx> <output json>."""
import json, sys, time
import numpy as np
import cupy as cp
import torch

folder, output = sys.argv[1], sys.argv[2]
results = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
           "cupy": cp.__version__, "cuda": torch.version.cuda, "runs": []}

def time_it(launch, repeats):
    launch()
    cp.cuda.runtime.deviceSynchronize()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    best = float("inf")
    for _ in range(3):
        start.record()
        for _ in range(repeats):
            launch()
        stop.record()
        stop.synchronize()
        best = min(best, cp.cuda.get_elapsed_time(start, stop) / repeats)
    return best  # milliseconds

modules = {name: cp.RawModule(path=f"{folder}/{name}.ptx") for name in ("hgemm", "sgemm_tf32")}
for size in (1024, 4096, 8192):
    m = n = k = size
    flops = 2.0 * m * n * k
    repeats = max(3, int(2e12 / flops * 4))
    for name, dtype in (("hgemm", cp.float16), ("sgemm_tf32", cp.float32)):
        a = cp.random.uniform(-1, 1, (m, k)).astype(dtype)
        b = cp.random.uniform(-1, 1, (k, n)).astype(dtype)
        c = cp.zeros((m, n), dtype=cp.float32)
        kernel = modules[name].get_function(name)
        args = (c, a, b, np.uint32(m), np.uint32(n), np.uint32(k))
        launch = lambda: kernel((n // 128, m // 128, 1), (256, 1, 1), args)
        ms = time_it(launch, repeats)
        ta, tb = torch.as_tensor(a, device="cuda"), torch.as_tensor(b, device="cuda")
        torch.backends.cuda.matmul.allow_tf32 = name == "sgemm_tf32"
        torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
        reference = ta.float() @ tb.float() if size <= 4096 else None
        error = None
        if reference is not None:
            torch.backends.cuda.matmul.allow_tf32 = False
            exact = (ta.double() @ tb.double())
            got = torch.as_tensor(c, device="cuda").double()
            error = float(((got - exact).abs().max() / exact.abs().max()).item())
            torch.backends.cuda.matmul.allow_tf32 = name == "sgemm_tf32"
        torch_ms = time_it(lambda: torch.matmul(ta, tb), repeats)
        run = {"kernel": name, "size": size, "kdsl_ms": ms, "kdsl_tflops": flops / ms / 1e9,
               "cublas_ms": torch_ms, "cublas_tflops": flops / torch_ms / 1e9,
               "ratio": torch_ms / ms, "max_error_vs_f64_relative_to_max": error,
               "cublas": "torch.matmul fp16 (f16 output)" if name == "hgemm" else "torch.matmul f32, allow_tf32=True"}
        print(json.dumps(run), flush=True)
        results["runs"].append(run)
        del a, b, c, ta, tb
        torch.cuda.empty_cache()
json.dump(results, open(output, "w"), indent=1)
