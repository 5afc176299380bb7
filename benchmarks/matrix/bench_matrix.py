"""kdsl's GEMMs (PTX for sm_90 from `kdsl compile --emit ptx`) against cuBLAS through PyTorch
(fp16 inputs; f32 inputs with TF32 allowed) and Triton's tutorial matmul
(python/tutorials/03-matrix-multiplication.py: its kernel and its CUDA autotune list, the
autotuner's pick per shape), timed with CUDA events in one process on the same device.
Usage: python3 bench_matrix.py <folder with NAME.ptx files> <output json> [KERNEL[@FILE][+BYTES][,THREADS] ...]
(default hgemm and sgemm_tf32; KERNEL@FILE is kernel KERNEL of FILE.ptx; a name containing
"tf32" is an f32-input GEMM; +BYTES: the kernel takes a launch-sized `local mut [T]` last, given
BYTES of dynamic shared memory at offset 0; THREADS: the work-group size, 256 unless given;
BM,BN: the block of C a work-group computes, 128 x 128 unless given; C TYPE: f16 or bf16 where
the kernel writes C in 16 bits, f32 unless given; `persist`: one work-group per SM walks the
blocks). SIZES=1024,4096 picks
the sizes; NO_TRITON=1 leaves Triton out.
Each column is timed as plain launches and as a CUDA graph of the same launches (*_plain_ms and
*_ms); docs/benchmarks.md takes each column's faster one. Then kdsl and Triton writing the
same C type are timed alternately ROUNDS times (default 3), and the median of those ratios
is kept (`ratio_to_triton_same_c_interleaved_median`).
Each kernel takes (c, a, b, m, n, k[, ring]), one block of C per work-group."""
import json, os, sys
import numpy as np
import cupy as cp
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from launch_spec import grid, parse, resident, streamk_buffers  # noqa: E402

folder, output = sys.argv[1], sys.argv[2]
names = sys.argv[3:] or ["hgemm", "sgemm_tf32"]
sizes = [int(s) for s in os.environ.get("SIZES", "1024,4096,8192").split(",")]
results = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
           "cupy": cp.__version__, "cuda": torch.version.cuda, "runs": []}

try:
    if os.environ.get("NO_TRITON"):
        raise ImportError("NO_TRITON is set")
    import triton
    results["triton"] = triton.__version__

    from triton_tutorial import configs, matmul_kernel as tutorial_kernel

    matmul_kernel = triton.autotune(configs=configs(), key=['M', 'N', 'K'])(tutorial_kernel)

    def triton_matmul(a, b, out_dtype=None):
        """Triton's tutorial matmul; C in `out_dtype`, by default A's type (the tutorial's)."""
        M, K = a.shape
        _, N = b.shape
        c = torch.empty((M, N), device=a.device, dtype=out_dtype or a.dtype)
        grid = lambda META: (triton.cdiv(M, META['BLOCK_SIZE_M']) * triton.cdiv(N, META['BLOCK_SIZE_N']), )
        matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                            c.stride(0), c.stride(1))
        return c
except Exception as error:  # noqa: BLE001 (recorded, the other columns still run)
    results["triton_error"] = repr(error)
    triton_matmul = None


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


def time_graph(launch, repeats):
    """`repeats` launches captured in one CUDA graph, replayed: no host launch cost in the
    time (Triton's Python launcher costs more than a 1024^3 GEMM takes)."""
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream), cp.cuda.ExternalStream(stream.cuda_stream):
        launch()
        stream.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=stream):
            with cp.cuda.ExternalStream(stream.cuda_stream):
                for _ in range(repeats):
                    launch()
        graph.replay()
        stream.synchronize()
        best = float("inf")
        for _ in range(3):
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record(stream)
            graph.replay()
            stop.record(stream)
            stop.synchronize()
            best = min(best, start.elapsed_time(stop) / repeats)
    return best  # milliseconds


def timed(launch, repeats):
    """(graph time, plain time) in milliseconds; the graph one is None where capture failed."""
    plain = time_it(launch, repeats)
    try:
        return time_graph(launch, repeats), plain
    except Exception as error:  # noqa: BLE001 (recorded as a missing graph time)
        print("graph capture failed:", repr(error), file=sys.stderr)
        return None, plain


modules = {name: cp.RawModule(path=f"{folder}/{parse(name)[1]}.ptx") for name in names}
for size in sizes:
    m = n = k = size
    flops = 2.0 * m * n * k
    repeats = max(3, int(2e12 / flops * 4))
    for name in names:
        tf32, bf16 = "tf32" in name, "bf16" in name
        if bf16:
            # CuPy has no bfloat16: the data lives in torch, CuPy sees its bits.
            ta = torch.empty((m, k), device="cuda", dtype=torch.bfloat16).uniform_(-1, 1)
            tb = torch.empty((k, n), device="cuda", dtype=torch.bfloat16).uniform_(-1, 1)
            a, b = cp.asarray(ta.view(torch.int16)), cp.asarray(tb.view(torch.int16))
        else:
            dtype = cp.float32 if tf32 else cp.float16
            a = cp.random.uniform(-1, 1, (m, k)).astype(dtype)
            b = cp.random.uniform(-1, 1, (k, n)).astype(dtype)
            ta, tb = torch.as_tensor(a, device="cuda"), torch.as_tensor(b, device="cuda")
        kernel_name, _, dynamic, threads, bm, bn, c_type, persist = parse(name)
        # C in f32, or in the inputs' 16-bit type (bf16 as torch's, CuPy seeing its bits).
        tc = torch.zeros((m, n), device="cuda", dtype=getattr(torch, {"f32": "float32", "f16": "float16", "bf16": "bfloat16"}[c_type]))
        c = cp.asarray(tc.view(torch.int16)) if c_type == "bf16" else cp.asarray(tc)
        kernel = modules[name].get_function(kernel_name)
        args = (c, a, b, np.uint32(m), np.uint32(n), np.uint32(k))
        if dynamic:
            # The ring's byte offset into the dynamic shared memory, above 48 KiB by opt-in.
            args += (np.uint32(0),)
            kernel.max_dynamic_shared_size_bytes = dynamic
        blocks = grid(m, n, bm, bn, persist, resident(kernel, threads, dynamic))
        args += streamk_buffers(name, m, n, bm, bn, blocks)
        launch = lambda: kernel(blocks, (threads, 1, 1), args, shared_mem=dynamic)
        graph_ms, plain_ms = timed(launch, repeats)
        ms = graph_ms or plain_ms
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
        error = None
        if size <= 4096:
            exact = ta.double() @ tb.double()
            got = tc.double()
            error = float(((got - exact).abs().max() / exact.abs().max()).item())
        torch_graph_ms, torch_plain_ms = timed(lambda: torch.matmul(ta, tb), repeats)
        torch_ms = torch_graph_ms or torch_plain_ms
        run = {"kernel": name, "size": size, "c_type": c_type, "dynamic_shared_bytes": dynamic, "kdsl_ms": ms, "kdsl_tflops": flops / ms / 1e9,
               "cublas_ms": torch_ms, "cublas_tflops": flops / torch_ms / 1e9,
               "ratio": torch_ms / ms, "kdsl_plain_ms": plain_ms, "cublas_plain_ms": torch_plain_ms,
               "graph": graph_ms is not None and torch_graph_ms is not None, "max_error_vs_f64_relative_to_max": error,
               "cublas": "torch.matmul f32, allow_tf32=True" if tf32 else f"torch.matmul {ta.dtype} (same output type)"}
        if triton_matmul is not None:
            try:
                triton_matmul(ta, tb)  # autotunes on the first call per shape and type
                best = matmul_kernel.best_config
                triton_graph_ms, triton_plain_ms = timed(lambda: triton_matmul(ta, tb), repeats)
                triton_ms = triton_graph_ms or triton_plain_ms
                run.update({"triton_plain_ms": triton_plain_ms, "triton_graph": triton_graph_ms is not None})
                run.update({"triton_ms": triton_ms, "triton_tflops": flops / triton_ms / 1e9,
                            "ratio_to_triton": triton_ms / ms, "triton_config": str(best)})
                if size <= 4096:
                    got = triton_matmul(ta, tb).double()
                    run["triton_max_error"] = float(((got - exact).abs().max() / exact.abs().max()).item())
                if ta.dtype != torch.float32:
                    # kdsl's kernels write C in f32: the same output through Triton (autotuned
                    # apart, C's type is part of its autotuning key).
                    wide = lambda: triton_matmul(ta, tb, torch.float32)
                    wide()
                    wide_graph_ms, wide_plain_ms = timed(wide, repeats)
                    wide_ms = wide_graph_ms or wide_plain_ms
                    run.update({"triton_f32_out_ms": wide_ms, "triton_f32_out_tflops": flops / wide_ms / 1e9,
                                "ratio_to_triton_f32_out": wide_ms / ms,
                                "triton_f32_out_config": str(matmul_kernel.best_config)})
                # Alternate kdsl and Triton writing the same C type ROUNDS times: the card's clock
                # drifts over a run, and a ratio of neighbours in time is the fair one.
                same_c = (lambda: triton_matmul(ta, tb, torch.float32)) if c_type == "f32" and not tf32 \
                    else (lambda: triton_matmul(ta, tb))
                ours, theirs = [], []
                for _ in range(int(os.environ.get("ROUNDS", "3"))):
                    ours.append(min(t for t in timed(launch, repeats) if t is not None))
                    theirs.append(min(t for t in timed(same_c, repeats) if t is not None))
                ratios = sorted(t / o for o, t in zip(ours, theirs))
                run.update({"interleaved_kdsl_ms": ours, "interleaved_triton_same_c_ms": theirs,
                            "ratio_to_triton_same_c_interleaved_median": ratios[len(ratios) // 2]})
            except Exception as error:  # noqa: BLE001
                run["triton_error"] = repr(error)
        print(json.dumps(run), flush=True)
        results["runs"].append(run)
        del a, b, c, ta, tb, tc
        torch.cuda.empty_cache()
json.dump(results, open(output, "w"), indent=1)
