"""The launch syntax of the GEMM benchmarks (bench_matrix.py, profile_one.py, profile_pair.py):
KERNEL[@FILE][+BYTES][,THREADS[,BM,BN[,C TYPE[,persist]]]] (wgmma_variants.py `launch`
writes the suffix)."""
import cupy as cp


def parse(spec):
    """(kernel, file, dynamic shared memory bytes, threads, block rows, block columns, C's
    type, persistent) of SPEC."""
    name, *shape = spec.split(",")
    threads, bm, bn, c_type, persist = (shape + ["256", "128", "128", "f32", ""][len(shape):])[:5]
    name, _, dynamic = name.partition("+")
    kernel, _, file = name.partition("@")
    return kernel, file or kernel, int(dynamic or 0), int(threads), int(bm), int(bn), c_type, persist == "persist"


def resident(kernel, threads, dynamic):
    """How many work-groups of `kernel` one SM holds at once (CUDA's occupancy calculator;
    1 where the driver cannot say)."""
    try:
        return max(1, cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.ptr, threads, dynamic))
    except Exception:  # noqa: BLE001 (an older CuPy without the call)
        return 1


def grid(m, n, bm, bn, persist, per_sm=1):
    """One work-group per block of C, or for a persistent GEMM as many as the SMs hold at once
    (`per_sm` each; at most a block each)."""
    if persist:
        sms = cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
        return (min(sms * per_sm, (m // bm) * (n // bn)), 1, 1)
    return (n // bn, m // bm, 1)
