"""One launch each of Triton's tutorial matmul (autotuned first, f16 and f32 C) and of kdsl
GEMMs at SIZE^3, inside a profiler range, so one ncu run with `--profile-from-start off
--clock-control base` measures them all at the same clock.
Usage: python3 profile_pair.py PTX_FOLDER SIZE [KERNEL@FILE+BYTES,THREADS,BM,BN[,C TYPE[,persist]] ...]
(the argument syntax of bench_matrix.py, launch_spec.py). f16 inputs unless a name holds tf32 (f32 inputs)
or bf16; Triton runs for the first kernel's input type. TRITON_PREBUILT=FOLDER adds the f16
tutorial kernels another Triton compiled there (triton_sass.py: triton_fp16*.ptx with f16 C,
triton_fp32*.ptx with f32 C; 128 x 256 blocks), REPEAT=N runs the profiled set N times,
TRITON_CONFIGS=all times every configuration of the tutorial's list (those the card can run)
instead of the autotuner's pick, so Triton's best is found at the profiler's clock rather than
by the autotuner's wall-clock timings (which picked 128 x 128 x 32 at 4096^3 in one run, 7%
slower than 128 x 256 x 64), TRITON_PERSISTENT=1 adds Triton's persistent TMA kernel
(triton_tma_prize.py; 16-bit C) at 3 and 4 stages, with and without warp specialisation, as a
point of reference beside kdsl's (not one of the tutorial's configurations). Each profiled launch is named on a `profiled:` line, in order."""
import glob
import os
import sys

import cupy as cp
import numpy as np
import torch
import triton

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from launch_spec import grid, parse, resident, streamk_buffers, tma_form, tma_launch  # noqa: E402
from triton_tutorial import configs, matmul_kernel as tutorial_kernel  # noqa: E402

folder, size, specs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
tuned = triton.autotune(configs=configs(), key=["M", "N", "K"])(tutorial_kernel)
first = specs[0] if specs else "hgemm"
dtype = torch.float32 if "tf32" in first else torch.bfloat16 if "bf16" in first else torch.float16
torch.backends.cuda.matmul.allow_tf32 = True
ta = torch.empty((size, size), device="cuda", dtype=dtype).uniform_(-1, 1)
tb = torch.empty((size, size), device="cuda", dtype=dtype).uniform_(-1, 1)


def triton_matmul(out_dtype):
    c = torch.empty((size, size), device="cuda", dtype=out_dtype)
    grid = lambda meta: (triton.cdiv(size, meta["BLOCK_SIZE_M"]) * triton.cdiv(size, meta["BLOCK_SIZE_N"]),)
    tuned[grid](ta, tb, c, size, size, size, ta.stride(0), ta.stride(1), tb.stride(0), tb.stride(1),
                c.stride(0), c.stride(1))


def triton_config(out_dtype, config):
    """A launch of the untuned tutorial kernel with one configuration, or None where the card
    cannot run it (too much shared memory: the autotuner prunes those too)."""
    c = torch.empty((size, size), device="cuda", dtype=out_dtype)
    meta = config.kwargs
    blocks = (triton.cdiv(size, meta["BLOCK_SIZE_M"]) * triton.cdiv(size, meta["BLOCK_SIZE_N"]),)

    def launch():
        tutorial_kernel[blocks](ta, tb, c, size, size, size, ta.stride(0), ta.stride(1), tb.stride(0),
                                tb.stride(1), c.stride(0), c.stride(1), num_warps=config.num_warps,
                                num_stages=config.num_stages, **meta)
    try:
        launch()
    except Exception as error:  # noqa: BLE001 (triton's OutOfResources and compile errors)
        print(f"skipped {config}: {type(error).__name__}", flush=True)
        return None
    return launch


def short(out_dtype):
    """f16, bf16 or f32 for torch's float16, bfloat16 or float32."""
    return str(out_dtype).removeprefix("torch.").replace("float", "f")


outputs = [dtype] if dtype == torch.float32 else [dtype, torch.float32]
launches = []
for out in outputs:
    if os.environ.get("TRITON_CONFIGS") == "all":
        for config in configs():
            launch = triton_config(out, config)
            meta = config.kwargs
            label = (f"Triton {short(out)} C {meta['BLOCK_SIZE_M']}x{meta['BLOCK_SIZE_N']}x{meta['BLOCK_SIZE_K']}"
                     f"/{config.num_warps}w{config.num_stages}s")
            if launch:
                launches.append((label, launch))
    else:
        triton_matmul(out)  # autotunes outside the profiled range
        print(f"triton C {out}: {tuned.best_config}", flush=True)
        launches.append((f"Triton {short(out)} C", lambda out=out: triton_matmul(out)))

def triton_persistent(out_dtype, stages, specialise):
    """Triton's persistent TMA matmul (triton_tma_prize.py: one loop flattened over blocks and
    K, TMA copies and stores) at 128 x 256 x 64 on 8 warps, or None where it does not compile.
    Not the tutorial kernel issue 25 measures against: ncu_table.py lists it beside kdsl's.
    TRITON_DUMP=FOLDER writes its PTX there."""
    from triton.tools.tensor_descriptor import TensorDescriptor
    from triton_tma_prize import tma_persistent_kernel

    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    c = torch.empty((size, size), device="cuda", dtype=out_dtype)
    ad, bd = TensorDescriptor.from_tensor(ta, [128, 64]), TensorDescriptor.from_tensor(tb, [64, 256])
    cd = TensorDescriptor.from_tensor(c, [128, 256])
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    blocks = (min(sms, triton.cdiv(size, 128) * triton.cdiv(size, 256)),)

    def launch():
        return tma_persistent_kernel[blocks](ad, bd, cd, size, size, size, BLOCK_SIZE_M=128, BLOCK_SIZE_N=256,
                                             BLOCK_SIZE_K=64, GROUP_SIZE_M=8, NUM_SMS=sms,
                                             WARP_SPECIALIZE=specialise, num_stages=stages, num_warps=8)
    try:
        compiled = launch()
    except Exception as error:  # noqa: BLE001 (out of shared memory, compile errors)
        print(f"skipped persistent TMA {stages} stages: {type(error).__name__}: {str(error)[:200]}", flush=True)
        return None
    torch.cuda.synchronize()
    want = ta.float() @ tb.float()
    error = ((c.float() - want).abs().max() / want.abs().max()).item()
    print(f"checked: Triton persistent TMA {stages} stages{' ws' if specialise else ''} relative error {error:.2e}", flush=True)
    if os.environ.get("TRITON_DUMP"):
        os.makedirs(os.environ["TRITON_DUMP"], exist_ok=True)
        stem = f"{os.environ['TRITON_DUMP']}/triton_persistent_tma_{short(out_dtype)}_s{stages}{'_ws' if specialise else ''}"
        for kind in ("ptx", "sass"):
            if kind in compiled.asm:
                open(f"{stem}.{kind}", "w").write(compiled.asm[kind])
    return launch


if os.environ.get("TRITON_PERSISTENT") and dtype != torch.float32:
    for stages in (3, 4):
        for specialise in (False, True):
            launch = triton_persistent(dtype, stages, specialise)
            if launch:
                launches.append((f"Triton-persistent {short(dtype)} C 128x256x64/8w{stages}s{' ws' if specialise else ''}", launch))

for spec in specs:
    kernel_name, file, dynamic, threads, bm, bn, c_type, persist = parse(spec)
    kernel = cp.RawModule(path=f"{folder}/{file}.ptx").get_function(kernel_name)
    a = cp.asarray(ta.view(torch.int16) if dtype == torch.bfloat16 else ta)
    b = cp.asarray(tb.view(torch.int16) if dtype == torch.bfloat16 else tb)
    c = cp.zeros((size, size), dtype=cp.float32 if c_type == "f32" else cp.float16)
    args = (c, a, b, np.uint32(size), np.uint32(size), np.uint32(size))
    if dynamic:
        args += (np.uint32(0),)
        kernel.max_dynamic_shared_size_bytes = dynamic
    blocks = grid(size, size, bm, bn, persist, resident(kernel, threads, dynamic))
    args += streamk_buffers(spec, size, size, bm, bn, blocks)
    form = tma_form(spec)
    if form:
        store, area = form
        launches.append((spec, tma_launch(kernel, blocks, threads, dynamic, c, a, b, bm, 64, store, area)))
    else:
        launches.append((spec, lambda k=kernel, g=blocks, t=threads, a=args, d=dynamic: k(g, (t, 1, 1), a, shared_mem=d)))
    launches[-1][1]()  # warm-up, outside the range
    if form and dtype == torch.float16:
        cp.cuda.runtime.deviceSynchronize()
        want = ta.float() @ tb.float()
        got = torch.as_tensor(c, device="cuda").float()
        error = ((got - want).abs().max() / want.abs().max()).item()
        print(f"checked: {spec} relative error {error:.2e} ({'ok' if error < 2e-3 else 'FAIL'})", flush=True)


def prebuilt(path):
    """A tutorial kernel of another Triton (its PTX), 128 x 256 blocks of 256 work-items; its
    last two parameters are Triton's scratch pointers, unused here."""
    kernel = cp.RawModule(path=path).get_function("matmul_kernel")
    shared = int(os.environ.get("TRITON_PREBUILT_SHARED", "147456"))
    kernel.max_dynamic_shared_size_bytes = shared
    c = cp.zeros((size, size), dtype=cp.float16 if "fp16" in os.path.basename(path) else cp.float32)
    a, b = cp.asarray(ta), cp.asarray(tb)
    n = np.int32(size)
    args = (a, b, c, n, n, n, n, n, n, np.uint64(0), np.uint64(0))
    blocks = (size // 128) * (size // 256)
    return lambda: kernel((blocks, 1, 1), (256, 1, 1), args, shared_mem=shared)


if os.environ.get("TRITON_PREBUILT") and dtype == torch.float16:
    for path in sorted(glob.glob(os.path.join(os.environ["TRITON_PREBUILT"], "triton_fp*.ptx"))):
        launches.append((os.path.basename(path), prebuilt(path)))
        launches[-1][1]()
cp.cuda.runtime.deviceSynchronize()

cp.cuda.runtime.profilerStart()
for _ in range(int(os.environ.get("REPEAT", "1"))):
    for spec, launch in launches:
        print("profiled:", spec, flush=True)
        launch()
cp.cuda.runtime.deviceSynchronize()
cp.cuda.runtime.profilerStop()
