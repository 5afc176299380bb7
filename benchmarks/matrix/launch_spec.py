"""The launch syntax of the GEMM benchmarks (bench_matrix.py, profile_one.py, profile_pair.py):
KERNEL[@FILE][+BYTES][,THREADS[,BM,BN[,C TYPE[,persist|streamk|tma|tmastore[,AREA]]]]]
(wgmma_variants.py `launch` writes the suffix; `streamk` is persistent and takes two more
buffers, streamk_buffers; `tma` is persistent, takes A and B as 2-D arrays and a tensor map for
each, which tma_launch makes and passes through the driver, as kdsl's runtime does; `tmastore`
is `tma` with C a 2-D array and a tensor map too, AREA the byte offset of C's staging area where
it is a second launch-sized array)."""
import ctypes

import cupy as cp


def parse(spec):
    """(kernel, file, dynamic shared memory bytes, threads, block rows, block columns, C's
    type, persistent: also for `streamk`) of SPEC."""
    name, *shape = spec.split(",")
    threads, bm, bn, c_type, persist = (shape + ["256", "128", "128", "f32", ""][len(shape):])[:5]
    name, _, dynamic = name.partition("+")
    kernel, _, file = name.partition("@")
    return kernel, file or kernel, int(dynamic or 0), int(threads), int(bm), int(bn), c_type, persist in ("persist", "streamk", "tma", "tmastore")


def tma_form(spec):
    """(C by tile stores, the byte offset of C's own staging area or None) of a `tma` or
    `tmastore` SPEC; None for other GEMMs."""
    fields = spec.split(",")
    if len(fields) > 5 and fields[5] in ("tma", "tmastore"):
        return fields[5] == "tmastore", int(fields[6]) if len(fields) > 6 else None
    return None


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


# cuTensorMapEncodeTiled's data types by CuPy dtype (bf16 arrives as int16 bits).
_TENSOR_MAP_TYPES = {"float16": 6, "int16": 9, "float32": 7}
_driver = None


def _cuda():
    global _driver
    if _driver is None:
        _driver = ctypes.CDLL("libcuda.so.1")
    return _driver


def tensor_map(array, box_rows, box_columns):
    """The 128-byte tensor map kdsl's runtime makes for a tile copy from `array` (2-D,
    C-contiguous): boxes of `box_rows` x `box_columns` (128 bytes), 128-byte swizzle, zero
    fill, L2 promotion of 256 bytes."""
    encoded = (ctypes.c_uint64 * 16)()
    dims = (ctypes.c_uint64 * 2)(array.shape[1], array.shape[0])
    strides = (ctypes.c_uint64 * 1)(array.strides[0])
    box = (ctypes.c_uint32 * 2)(box_columns, box_rows)
    element_strides = (ctypes.c_uint32 * 2)(1, 1)
    status = _cuda().cuTensorMapEncodeTiled(
        ctypes.byref(encoded), ctypes.c_int(_TENSOR_MAP_TYPES[str(array.dtype)]), ctypes.c_uint32(2),
        ctypes.c_void_p(array.data.ptr), dims, strides, box, element_strides,
        ctypes.c_int(0), ctypes.c_int(3), ctypes.c_int(3), ctypes.c_int(0))
    if status != 0:
        raise RuntimeError(f"cuTensorMapEncodeTiled failed with CUresult {status}")
    return encoded


def tma_launch(kernel, blocks, threads, dynamic, c, a, b, bm, depth, store=False, area=None):
    """A launch of a `tma` GEMM (wgmma_variants.py `+tma`, entry `NAME$contiguous`): C flat
    (2-D with `store`), A and B 2-D with their shapes and strides, the ring at offset 0 (and
    C's staging area at byte offset AREA where it has one of its own), then the tensor maps in
    the order of the kernel's first uses: A's (BM rows), B's (DEPTH rows of 64 columns), with
    `store` C's (BM rows)."""
    width = 128 // a.itemsize
    values = [] if store else [ctypes.c_uint64(c.data.ptr)]
    for array in (c, a, b) if store else (a, b):
        values += [ctypes.c_uint64(array.data.ptr), ctypes.c_uint32(array.shape[0]), ctypes.c_uint32(array.shape[1]),
                   ctypes.c_uint64(array.strides[0] // array.itemsize), ctypes.c_uint64(1)]
    values.append(ctypes.c_uint32(0))
    if area is not None:
        values.append(ctypes.c_uint32(area))
    values += [tensor_map(a, bm, width), tensor_map(b, depth, width)]
    if store:
        values.append(tensor_map(c, bm, 128 // c.itemsize))
    params = (ctypes.c_void_p * len(values))(*[ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in values])
    driver = _cuda()
    driver.cuLaunchKernel.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3

    def launch():
        status = driver.cuLaunchKernel(
            getattr(kernel, "kernel", kernel).ptr, blocks[0], blocks[1], blocks[2], threads, 1, 1, dynamic,
            cp.cuda.get_current_stream().ptr, params, None)
        if status != 0:
            raise RuntimeError(f"cuLaunchKernel failed with CUresult {status}")
    launch.keep = (values, params)
    return launch
