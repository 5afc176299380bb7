"""The launch syntax of the GEMM benchmarks (bench_matrix.py, profile_one.py, profile_pair.py):
KERNEL[@FILE][+BYTES][,THREADS[,BM,BN[,C TYPE[,persist|streamk]]]] (wgmma_variants.py `launch`
writes the suffix; `streamk` is persistent and takes two more buffers, streamk_buffers)."""
import cupy as cp


def parse(spec):
    """(kernel, file, dynamic shared memory bytes, threads, block rows, block columns, C's
    type, persistent: also for `streamk`) of SPEC."""
    name, *shape = spec.split(",")
    threads, bm, bn, c_type, persist = (shape + ["256", "128", "128", "f32", ""][len(shape):])[:5]
    name, _, dynamic = name.partition("+")
    kernel, _, file = name.partition("@")
    return kernel, file or kernel, int(dynamic or 0), int(threads), int(bm), int(bn), c_type, persist in ("persist", "streamk")


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


def streamk_buffers(spec, m, n, bm, bn, blocks):
    """A Stream-K GEMM's (`,streamk`) two last arguments for a launch of `blocks` work-groups:
    `partials`, two slots of a block's f32 accumulators per work-group, and `arrived`, a zero
    per block of C (the kernel leaves them zero); nothing for other GEMMs."""
    if not spec.endswith(",streamk"):
        return ()
    return (cp.zeros(2 * blocks[0] * bm * bn, cp.float32), cp.zeros((m // bm) * (n // bn), cp.uint32))
