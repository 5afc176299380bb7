"""What TMA copies and warp specialisation are worth on this card, measured on Triton alone:
the tutorial matmul (03) at its best 4096^3 configuration against the same blocks loaded
through tensor descriptors (TMA), non-persistent and persistent, with and without Triton's
warp specialisation. kdsl has neither yet; this sizes the prize before building them.

    python3 benchmarks/matrix/triton_tma_prize.py [SIZES]

Times with triton.testing.do_bench (CUDA events, L2 flushed), median of REPEAT runs; results
checked against torch.matmul."""
import os
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

sys.path.insert(0, str(Path(__file__).resolve().parent))
from triton_tutorial import matmul_kernel  # noqa: E402

BM, BN, BK, GM = 128, 256, 64, 8


@triton.jit
def tile_of(tile, num_pid_m, num_pid_n, GROUP_SIZE_M: tl.constexpr):
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = tile // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + (tile % group_size_m)
    pid_n = (tile % num_pid_in_group) // group_size_m
    return pid_m, pid_n


@triton.jit
def tma_kernel(a_desc, b_desc, c_desc, M, N, K, BLOCK_SIZE_M: tl.constexpr,
               BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr):
    pid_m, pid_n = tile_of(tl.program_id(0), tl.cdiv(M, BLOCK_SIZE_M), tl.cdiv(N, BLOCK_SIZE_N),
                           GROUP_SIZE_M)
    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = a_desc.load([pid_m * BLOCK_SIZE_M, k * BLOCK_SIZE_K])
        b = b_desc.load([k * BLOCK_SIZE_K, pid_n * BLOCK_SIZE_N])
        acc = tl.dot(a, b, acc)
    c_desc.store([pid_m * BLOCK_SIZE_M, pid_n * BLOCK_SIZE_N], acc.to(tl.float16))


@triton.jit
def tma_persistent_kernel(a_desc, b_desc, c_desc, M, N, K, BLOCK_SIZE_M: tl.constexpr,
                          BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                          GROUP_SIZE_M: tl.constexpr, NUM_SMS: tl.constexpr,
                          WARP_SPECIALIZE: tl.constexpr):
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    k_tiles = tl.cdiv(K, BLOCK_SIZE_K)
    for tile in tl.range(tl.program_id(0), num_pid_m * num_pid_n, NUM_SMS, flatten=True,
                         warp_specialize=WARP_SPECIALIZE):
        pid_m, pid_n = tile_of(tile, num_pid_m, num_pid_n, GROUP_SIZE_M)
        acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
        for k in range(k_tiles):
            a = a_desc.load([pid_m * BLOCK_SIZE_M, k * BLOCK_SIZE_K])
            b = b_desc.load([k * BLOCK_SIZE_K, pid_n * BLOCK_SIZE_N])
            acc = tl.dot(a, b, acc)
        c_desc.store([pid_m * BLOCK_SIZE_M, pid_n * BLOCK_SIZE_N], acc.to(tl.float16))


def main():
    sizes = [int(s) for s in (sys.argv[1:] or ["1024", "4096", "8192"])]
    repeat = int(os.environ.get("REPEAT", "5"))
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    print(f"# {torch.cuda.get_device_name(0)}, Triton {triton.__version__}, {sms} SMs")
    for n in sizes:
        torch.manual_seed(0)
        a = torch.randn(n, n, device="cuda", dtype=torch.float16)
        b = torch.randn(n, n, device="cuda", dtype=torch.float16)
        c = torch.empty(n, n, device="cuda", dtype=torch.float16)
        want = torch.matmul(a, b)
        blocks = triton.cdiv(n, BM) * triton.cdiv(n, BN)
        ad = TensorDescriptor.from_tensor(a, [BM, BK])
        bd = TensorDescriptor.from_tensor(b, [BK, BN])
        cd = TensorDescriptor.from_tensor(c, [BM, BN])
        runs = {
            "tutorial 03 (cp.async)": lambda: matmul_kernel[(blocks,)](
                a, b, c, n, n, n, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                c.stride(0), c.stride(1), BLOCK_SIZE_M=BM, BLOCK_SIZE_N=BN, BLOCK_SIZE_K=BK,
                GROUP_SIZE_M=GM, num_stages=3, num_warps=8),
            "TMA": lambda: tma_kernel[(blocks,)](
                ad, bd, cd, n, n, n, BLOCK_SIZE_M=BM, BLOCK_SIZE_N=BN, BLOCK_SIZE_K=BK,
                GROUP_SIZE_M=GM, num_stages=3, num_warps=8),
            "TMA persistent": lambda: tma_persistent_kernel[(min(sms, blocks),)](
                ad, bd, cd, n, n, n, BLOCK_SIZE_M=BM, BLOCK_SIZE_N=BN, BLOCK_SIZE_K=BK,
                GROUP_SIZE_M=GM, NUM_SMS=sms, WARP_SPECIALIZE=False, num_stages=3, num_warps=8),
            "TMA persistent + warp specialised": lambda: tma_persistent_kernel[(min(sms, blocks),)](
                ad, bd, cd, n, n, n, BLOCK_SIZE_M=BM, BLOCK_SIZE_N=BN, BLOCK_SIZE_K=BK,
                GROUP_SIZE_M=GM, NUM_SMS=sms, WARP_SPECIALIZE=True, num_stages=3, num_warps=8),
            "cuBLAS": lambda: torch.matmul(a, b, out=c),
        }
        times = {}
        for name, run in runs.items():
            try:
                c.zero_()
                run()
                torch.cuda.synchronize()
                err = (c.float() - want.float()).abs().max().item()
                t = sorted(triton.testing.do_bench(run, warmup=50, rep=200) for _ in range(repeat))
                times[name] = t[len(t) // 2]
                print(f"{n} {name:38s} {times[name] * 1e3:9.1f} us  "
                      f"{2 * n ** 3 / times[name] / 1e9:7.1f} TFLOP/s  max err {err:.3g}", flush=True)
            except Exception as e:  # noqa: BLE001 - report and go on
                print(f"{n} {name:38s} failed: {type(e).__name__}: {str(e)[:300]}", flush=True)
        base = times.get("tutorial 03 (cp.async)")
        if base:
            for name, t in times.items():
                print(f"{n} {name:38s} / tutorial = {t / base:.3f}")


if __name__ == "__main__":
    main()
