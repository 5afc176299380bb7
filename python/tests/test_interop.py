"""Compute follows data: dpnp's out-of-order queues, and CuPy/PyTorch streams (on CUDA
machines; skipped elsewhere)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from conftest import EXAMPLES, cuda_available, example, has_module, sycl_available

import kdsl

needs_dpnp = pytest.mark.skipif(not (has_module("dpnp") and sycl_available()), reason="dpnp or SYCL absent")
needs_cupy = pytest.mark.skipif(not (has_module("cupy") and cuda_available()), reason="CuPy or CUDA absent")
needs_torch = pytest.mark.skipif(not (has_module("torch") and cuda_available()), reason="PyTorch or CUDA absent")


@needs_dpnp
def test_dpnp_producers_and_consumers_are_ordered():
    """On dpnp's out-of-order queue, each launch sees what dpnp computed before it and dpnp
    sees what the launch wrote, without waits in between."""
    import dpnp

    saxpy = example("saxpy").saxpy
    n = 1 << 18
    x = dpnp.arange(n, dtype=dpnp.float32)
    assert not x.sycl_queue.is_in_order
    y = dpnp.zeros(n, dtype=dpnp.float32)
    expected = np.zeros(n, np.float32)
    host_x = np.arange(n, dtype=np.float32)
    for step in range(10):
        y = y * 0.5 + 1.0                       # dpnp producer
        expected = expected * 0.5 + 1.0
        saxpy[n, 256](y, x, 0.25, n)            # kdsl, no wait
        expected = expected + 0.25 * host_x
        y = y + 0.0                             # dpnp consumer and producer
        # The native path orders the launch by dpctl's SequentialOrderManager too.
        assert saxpy._launcher.try_launch_sizes((y, x, 0.25, n), [n], [256]) is not None
        expected = expected + 0.25 * host_x
    total = dpnp.asnumpy(y + 0.0)               # dpnp consumer
    np.testing.assert_allclose(total, expected, rtol=1e-5)


@needs_dpnp
def test_dpnp_launch_runs_on_the_arrays_queue_and_loads_once():
    import dpnp

    module = kdsl.compile(path=EXAMPLES / "saxpy.krn")
    y = dpnp.ones(64, dtype=dpnp.float32)
    x = dpnp.ones(64, dtype=dpnp.float32)
    module.saxpy[64, 64](y, x, 1.0, 64)
    module.saxpy[64, 64](y, x, 1.0, 64)
    assert len(module._programs) == 1           # one program for the array's queue
    device = next(iter(module.saxpy._loaded))
    assert device.backend == "sycl"
    np.testing.assert_array_equal(dpnp.asnumpy(y), 3.0)


@needs_dpnp
def test_dpnp_arrays_of_launches_are_kept_until_done_then_released():
    """Arrays the caller drops right after launching are kept until their launch completed
    (the results are right), and released afterwards (kdsl keeps no array for ever)."""
    import sys

    import dpnp

    saxpy = example("saxpy").saxpy
    n = 4096
    x = dpnp.ones(n, dtype=dpnp.float32)
    watched = dpnp.full(n, 2.0, dtype=dpnp.float32)
    references = sys.getrefcount(watched)
    results = []
    for step in range(200):
        y = dpnp.full(n, float(step), dtype=dpnp.float32)
        temporary = watched if step == 0 else dpnp.full(n, 2.0, dtype=dpnp.float32)
        saxpy[n, 256](y, temporary, 0.5, n)  # the caller drops `temporary` right away
        if step == 0:
            assert sys.getrefcount(watched) > references  # kdsl holds it while it may run
        del temporary
        results.append(y)
        saxpy[n, 256](y, x, 1.0, n)
    for step, y in enumerate(results):
        np.testing.assert_array_equal(dpnp.asnumpy(y), step + 2.0)
    for _ in range(64):  # completed launches are forgotten in groups, when a later one closes
        saxpy[n, 256](x, results[0], 0.0, n)
    assert sys.getrefcount(watched) == references


@needs_dpnp
def test_dpnp_in_order_queue_native_launches_keep_arrays_and_refuse_misuse():
    """On an in-order queue launches take the native fast path (no event per launch): results
    are right, dropped arrays are kept until their launch completed, and misuse still raises
    its exception type, with later launches unaffected."""
    import sys

    import dpctl
    import dpnp

    queue = dpctl.SyclQueue(property="in_order")
    saxpy = example("saxpy").saxpy
    n = 4096
    x = dpnp.ones(n, dtype=dpnp.float32, sycl_queue=queue)
    watched = dpnp.full(n, 2.0, dtype=dpnp.float32, sycl_queue=queue)
    references = sys.getrefcount(watched)
    assert saxpy._launcher.try_launch_sizes((x, watched, 0.0, n), [n], [256]) is not None
    results = []
    for step in range(150):
        y = dpnp.full(n, float(step), dtype=dpnp.float32, sycl_queue=queue)
        temporary = watched if step == 0 else dpnp.full(n, 2.0, dtype=dpnp.float32, sycl_queue=queue)
        saxpy[n, 256](y, temporary, 0.5, n)
        if step == 0:
            assert sys.getrefcount(watched) > references
        del temporary
        results.append(y)
        saxpy(y, x, 1.0, n, global_size=n, local_size=256)
    for step, y in enumerate(results):
        np.testing.assert_array_equal(dpnp.asnumpy(y), step + 2.0)
    for _ in range(64):
        saxpy[n, 256](x, results[0], 0.0, n)
    queue.wait()
    assert sys.getrefcount(watched) == references
    with pytest.raises(kdsl.ArgumentError) as raised:
        saxpy[n, 256](x, dpnp.ones(n, dtype=dpnp.int32, sycl_queue=queue), 1.0, n)
    assert raised.value.kind == "ArgumentType"
    with pytest.raises(kdsl.ArgumentError) as raised:
        saxpy[n, 256](x, x, 1.0, n)
    assert raised.value.kind == "AliasedBuffers"
    with pytest.raises(kdsl.ArgumentError):
        saxpy[n, 256](x, results[1], 1.0, -1)
    saxpy[n, 256](results[0], x, 3.0, n).wait()
    np.testing.assert_array_equal(dpnp.asnumpy(results[0]), 5.0)


@needs_dpnp
def test_dpnp_read_only_and_strided_views():
    import dpnp

    saxpy = example("saxpy").saxpy
    y = dpnp.ones(100, dtype=dpnp.float32)
    with pytest.raises(kdsl.ArgumentError) as raised:
        saxpy[128, 128](y, dpnp.ones(200, dtype=dpnp.float32)[::2], 1.0, 100)
    assert raised.value.kind == "NotContiguous"
    # A contiguous slice with an offset is fine.
    x = dpnp.arange(200, dtype=dpnp.float32)[100:]
    saxpy[128, 128](y, x, 1.0, 100)
    np.testing.assert_array_equal(dpnp.asnumpy(y), 1.0 + np.arange(100, 200))


@needs_cupy
def test_cupy_default_and_non_default_stream():
    import cupy

    saxpy = example("saxpy").saxpy
    n = 1 << 20
    x = cupy.arange(n, dtype=cupy.float32)
    y = cupy.ones(n, dtype=cupy.float32)
    saxpy[n, 256](y, x, 2.0, n)                 # the producer's (current) stream
    np.testing.assert_allclose(cupy.asnumpy(y), 1.0 + 2.0 * np.arange(n, dtype=np.float32))
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        a = cupy.full(n, 3.0, dtype=cupy.float32)   # produced on `stream`
        b = cupy.ones(n, dtype=cupy.float32)
        event = saxpy[n, 256](b, a, 2.0, n)          # ordered on `stream` (the array interface names it)
        c = b * 2                                     # consumer on the same stream
    stream.synchronize()
    assert event.is_complete
    np.testing.assert_array_equal(cupy.asnumpy(c), 14.0)
    # stream= names the stream explicitly.
    other = cupy.cuda.Stream(non_blocking=True)
    d = cupy.zeros(n, dtype=cupy.float32)
    cupy.cuda.Device().synchronize()
    saxpy(d, a, 1.0, n, global_size=n, local_size=256, stream=other).wait()
    np.testing.assert_array_equal(cupy.asnumpy(d), 3.0)


@needs_torch
def test_torch_default_and_non_default_stream():
    import torch

    saxpy = example("saxpy").saxpy
    n = 1 << 20
    x = torch.arange(n, dtype=torch.float32, device="cuda")
    y = torch.ones(n, dtype=torch.float32, device="cuda")
    saxpy[n, 256](y, x, 2.0, n)
    torch.testing.assert_close(y.cpu(), 1.0 + 2.0 * torch.arange(n, dtype=torch.float32))
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        a = torch.full((n,), 3.0, device="cuda")
        b = torch.ones(n, device="cuda")
        saxpy[n, 256](b, a, 2.0, n)              # on PyTorch's current stream, `stream`
        c = b * 2
        saxpy[n, 256](c, a, 1.0, n, stream=stream)  # stream= names it explicitly
        d = c + 1
    torch.cuda.synchronize()
    assert bool((d == 18.0).all()), d[:4]
    with pytest.raises(kdsl.ArgumentError) as raised:
        saxpy[n, 256](y, x[::2].contiguous().double(), 2.0, n // 2)
    assert raised.value.kind == "ArgumentType"


@pytest.mark.parametrize("library", ["cupy", "torch"])
def test_cuda_arrays_take_the_native_path_unprofiled_unless_asked(library):
    """CuPy and PyTorch arrays on their current stream go through the native fast path (no
    Python frames between the call and cuLaunchKernel), also on a non-default stream; such
    launches are not timed unless `profile=True` asks."""
    if not (has_module(library) and cuda_available()):
        pytest.skip(f"{library} or CUDA absent")
    module = importlib.import_module(library)
    saxpy = example("saxpy").saxpy
    n = 1 << 16

    def full(value):
        if library == "cupy":
            return module.full(n, value, dtype=module.float32)
        return module.full((n,), value, dtype=module.float32, device="cuda")

    def host(array):
        return module.asnumpy(array) if library == "cupy" else array.cpu().numpy()

    x, y = full(1.0), full(2.0)
    event = saxpy._launcher.try_launch_sizes((y, x, 3.0, n), [n], [256])
    assert event is not None, "the fast path refused plain contiguous arrays on the current stream"
    event.wait()
    np.testing.assert_array_equal(host(y), 5.0)
    with pytest.raises(kdsl.LaunchError) as raised:
        _ = saxpy[n, 256](y, x, 1.0, n).elapsed_ns
    assert raised.value.kind == "ProfilingDisabled"
    timed = saxpy(y, x, 1.0, n, global_size=n, local_size=256, profile=True)
    assert timed.elapsed_ns > 0
    stream = module.cuda.Stream(non_blocking=True) if library == "cupy" else module.cuda.Stream()
    with (stream if library == "cupy" else module.cuda.stream(stream)):
        a, b = full(4.0), full(1.0)
        assert saxpy._launcher.try_launch_sizes((b, a, 0.5, n), [n], [256]) is not None
        c = b * 2                                    # the library's consumer on that stream
    stream.synchronize()
    np.testing.assert_array_equal(host(c), 6.0)
    np.testing.assert_array_equal(host(y), 7.0)


@needs_cupy
def test_cupy_misuse_and_dlpack():
    import cupy

    saxpy = example("saxpy").saxpy
    y = cupy.ones(100, dtype=cupy.float32)
    with pytest.raises(kdsl.ArgumentError) as raised:
        saxpy[128, 128](y, np.ones(100, np.float32), 1.0, 100)
    assert raised.value.kind == "DifferentDevices"
    with pytest.raises(kdsl.ArgumentError) as raised:
        saxpy[128, 128](y, y, 1.0, 100)
    assert raised.value.kind == "AliasedBuffers"

    class OnlyDlpack:
        """An array that offers nothing but DLPack (like JAX)."""

        def __init__(self, array):
            self.array = array

        def __dlpack__(self, **kwargs):
            return self.array.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self.array.__dlpack_device__()

    x = cupy.arange(100, dtype=cupy.float32)
    saxpy[128, 128](OnlyDlpack(y), OnlyDlpack(x), 1.0, 100)
    cupy.cuda.Device().synchronize()
    np.testing.assert_array_equal(cupy.asnumpy(y), 1.0 + np.arange(100))


@needs_dpnp
def test_dpnp_vector_loads_and_misaligned_views():
    """`vload4`/`vstore4` on dpnp arrays; a view that starts between vectors is refused with
    a typed error before the launch, and the arrays stay usable."""
    import dpnp

    module = kdsl.compile(path=EXAMPLES.parent / "tests" / "kernels" / "vectors.krn")
    n = 4096
    host_x = np.arange(n, dtype=np.float32)
    x = dpnp.asarray(host_x)
    y = dpnp.ones(n, dtype=dpnp.float32)
    module.saxpy4[n // 4, 64](y, x, 2.0, n // 4)
    np.testing.assert_array_equal(dpnp.asnumpy(y), 1.0 + 2.0 * host_x)
    with pytest.raises(kdsl.ArgumentError) as raised:
        module.saxpy4[n // 4, 64](y, x[1:], 2.0, n // 4 - 1)
    assert raised.value.kind == "MisalignedBuffer"
    module.saxpy4[n // 4, 64](y, x[4:], -2.0, n // 4 - 1)
    expected = 1.0 + 2.0 * host_x
    expected[: n - 4] += -2.0 * host_x[4:]
    np.testing.assert_array_equal(dpnp.asnumpy(y), expected)


@needs_dpnp
def test_dpnp_untimed_queue_error_names_the_python_way_to_a_timed_one():
    """dpnp's default queue has no profiling: the error says how to make a timed queue, and
    doing what it says gives a timed launch."""
    import dpctl
    import dpnp

    saxpy = example("saxpy").saxpy
    y, x = dpnp.ones(256, dtype=dpnp.float32), dpnp.ones(256, dtype=dpnp.float32)
    with pytest.raises(kdsl.LaunchError) as raised:
        _ = saxpy[256, 64](y, x, 1.0, 256).elapsed_ns
    assert raised.value.kind == "ProfilingDisabled"
    assert 'property=["in_order", "enable_profiling"]' in str(raised.value)
    assert "Device::queue" not in str(raised.value)
    timed = dpctl.SyclQueue(y.sycl_device, property=["in_order", "enable_profiling"])
    y, x = dpnp.asarray(y, sycl_queue=timed), dpnp.asarray(x, sycl_queue=timed)
    assert saxpy[256, 64](y, x, 1.0, 256).elapsed_ns > 0
