"""Multi-dimensional buffer parameters (``global [[f32]]``): shapes and strides come from the
array passed (NumPy, dpnp, and CuPy/PyTorch on CUDA machines), views such as transposes and
slices need no copy, and misuse is a typed ``ArgumentError``."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ROOT, cuda_available, has_module, sycl_available

import kdsl

needs_dpnp = pytest.mark.skipif(not (has_module("dpnp") and sycl_available()), reason="dpnp or SYCL absent")
needs_cupy = pytest.mark.skipif(not (has_module("cupy") and cuda_available()), reason="CuPy or CUDA absent")
needs_torch = pytest.mark.skipif(not (has_module("torch") and cuda_available()), reason="PyTorch or CUDA absent")


@pytest.fixture(scope="module")
def module():
    return kdsl.compile(path=ROOT / "tests" / "kernels" / "shaped_buffers.krn")


def scale(module, output, matrix, rows: int, cols: int) -> None:
    module.scale2d[(cols, rows), None](output, matrix, np.float32(1.5))


def test_signature_shows_dimensions_and_hides_layout_parameters(module):
    assert module.scale2d.signature == "scale2d(output: global mut [[f32]], input: global [[f32]], factor: f32)"
    assert [p.rank for p in module.add3d.parameters] == [3, 3, 3]


@pytest.mark.parametrize(
    "view",
    [
        lambda m: m,  # contiguous
        lambda m: m.T,  # transposed: strides (1, rows)
        lambda m: m[1:, ::2],  # sliced rows, every other column
        lambda m: np.asfortranarray(m),  # column-major
    ],
    ids=["contiguous", "transposed", "sliced", "fortran"],
)
def test_numpy_views(module, view):
    rng = np.random.default_rng(5)
    matrix = view(rng.standard_normal((12, 18)).astype(np.float32))
    rows, cols = matrix.shape
    output = np.zeros((rows, cols), dtype=np.float32)
    scale(module, output, matrix, rows, cols)
    np.testing.assert_allclose(output, matrix * 1.5, rtol=1e-6)


def test_numpy_output_view_is_written_in_place(module):
    whole = np.zeros((8, 10), dtype=np.float32)
    matrix = np.arange(20, dtype=np.float32).reshape(4, 5)
    scale(module, whole[::2, ::2], matrix, 4, 5)
    np.testing.assert_array_equal(whole[::2, ::2], matrix * 1.5)
    np.testing.assert_array_equal(whole[1::2], 0)
    np.testing.assert_array_equal(whole[:, 1::2], 0)


def test_numpy_3d_and_layout_queries(module):
    rng = np.random.default_rng(9)
    a = rng.integers(-100, 100, (4, 5, 6), dtype=np.int32)
    b = rng.integers(-100, 100, (6, 5, 4), dtype=np.int32).transpose(2, 1, 0)
    output = np.zeros((4, 5, 6), dtype=np.int32)
    module.add3d[(8, 8, 4), (4, 4, 2)](output, a, b)
    np.testing.assert_array_equal(output, a + b)
    cube = np.arange(6 * 8 * 10, dtype=np.uint8).reshape(6, 8, 10)[::2, :4, 1::2]
    info = np.zeros(7, dtype=np.uint64)
    module.layout[(4,), (4,)](info, cube)
    itemsize = cube.itemsize
    assert list(info[:3]) == list(cube.shape)
    assert list(info[3:6]) == [s // itemsize for s in cube.strides]
    assert info[6] == cube[-1, -1, -1]


def test_row_sums_with_padded_rows(module):
    padded = np.random.default_rng(3).standard_normal((30, 20)).astype(np.float32)
    matrix = padded[:, :17]
    sums = np.zeros(30, dtype=np.float32)
    module.row_sums[(32,), None](sums, matrix)
    np.testing.assert_allclose(sums, matrix.sum(axis=1), rtol=1e-5, atol=1e-5)


def test_misuse_is_a_typed_error(module):
    matrix = np.ones((4, 4), dtype=np.float32)
    output = np.zeros((4, 4), dtype=np.float32)
    with pytest.raises(kdsl.ArgumentError) as rank:
        scale(module, output, np.ones(16, dtype=np.float32), 4, 4)
    assert rank.value.kind == "ShapeMismatch" and "2-dimensional" in str(rank.value)
    with pytest.raises(kdsl.ArgumentError) as reversed_rows:
        scale(module, output, matrix[::-1], 4, 4)
    assert reversed_rows.value.kind == "BadStrides"
    with pytest.raises(kdsl.ArgumentError) as broadcast:
        scale(module, np.broadcast_to(np.zeros(4, dtype=np.float32), (4, 4)), matrix, 4, 4)
    assert broadcast.value.kind in ("BadStrides", "ReadOnlyArray")
    with pytest.raises(kdsl.ArgumentError) as element:
        scale(module, output, np.ones((4, 4), dtype=np.float64), 4, 4)
    assert element.value.kind == "ArgumentType" and "argument 1 (`input`)" in str(element.value)
    with pytest.raises(kdsl.ArgumentError) as count:
        module.scale2d[(4, 4), None](output, matrix)
    assert count.value.kind == "ArgumentCount"


@needs_dpnp
def test_dpnp_views_are_passed_without_a_copy(module):
    import dpnp

    host = np.random.default_rng(11).standard_normal((16, 24)).astype(np.float32)
    matrix = dpnp.asarray(host)
    for view, expected in [(matrix, host), (matrix.T, host.T), (matrix[2:, 1::3], host[2:, 1::3])]:
        rows, cols = view.shape
        output = dpnp.zeros((rows, cols), dtype=dpnp.float32, sycl_queue=matrix.sycl_queue)
        scale(module, output, view, rows, cols)
        np.testing.assert_allclose(dpnp.asnumpy(output), expected * 1.5, rtol=1e-6)
    # A strided output: every other row of a zeroed array, written in place.
    whole = dpnp.zeros((32, 24), dtype=dpnp.float32, sycl_queue=matrix.sycl_queue)
    scale(module, whole[::2], matrix, 16, 24)
    result = dpnp.asnumpy(whole)
    np.testing.assert_allclose(result[::2], host * 1.5, rtol=1e-6)
    np.testing.assert_array_equal(result[1::2], 0)
    with pytest.raises(kdsl.ArgumentError) as rank:
        scale(module, output, dpnp.ones(16, dtype=dpnp.float32), 4, 4)
    assert rank.value.kind == "ShapeMismatch"
    with pytest.raises(kdsl.ArgumentError) as reversed_rows:
        scale(module, whole, matrix[::-1], 16, 24)
    assert reversed_rows.value.kind == "BadStrides"


@needs_dpnp
def test_dpnp_contiguous_arrays_take_the_fast_path(module):
    """C-contiguous dpnp arrays of the parameter's rank launch through the native fast path,
    which fills in the extents and strides; views and other ranks go to the Python path."""
    import dpnp

    host = np.random.default_rng(12).standard_normal((16, 24)).astype(np.float32)
    matrix = dpnp.asarray(host)
    output = dpnp.zeros((16, 24), dtype=dpnp.float32, sycl_queue=matrix.sycl_queue)
    launcher = module.scale2d._launcher
    event = launcher.try_launch_sizes((output, matrix, np.float32(1.5)), [24, 16], [8, 8])
    assert event is not None, "the fast path refused C-contiguous 2-D arrays"
    event.wait()
    np.testing.assert_allclose(dpnp.asnumpy(output), host * 1.5, rtol=1e-6)
    a = np.arange(120, dtype=np.int32).reshape(4, 5, 6)
    cube, twice = dpnp.asarray(a, sycl_queue=matrix.sycl_queue), dpnp.asarray(2 * a, sycl_queue=matrix.sycl_queue)
    total = dpnp.zeros((4, 5, 6), dtype=dpnp.int32, sycl_queue=matrix.sycl_queue)
    event = module.add3d._launcher.try_launch_sizes((total, cube, twice), [8, 8, 4], [4, 4, 2])
    assert event is not None, "the fast path refused C-contiguous 3-D arrays"
    event.wait()
    np.testing.assert_array_equal(dpnp.asnumpy(total), 3 * a)
    flat = dpnp.ones(16 * 24, dtype=dpnp.float32, sycl_queue=matrix.sycl_queue)
    for refused in [(output, matrix.T, np.float32(1.5)), (output, flat, np.float32(1.5))]:
        assert launcher.try_launch_sizes(refused, [24, 16], [8, 8]) is None


@needs_cupy
def test_cupy_views(module):
    import cupy

    host = np.random.default_rng(13).standard_normal((16, 24)).astype(np.float32)
    matrix = cupy.asarray(host)
    for view, expected in [(matrix, host), (matrix.T, host.T), (matrix[2:, 1::3], host[2:, 1::3])]:
        rows, cols = view.shape
        output = cupy.zeros((rows, cols), dtype=cupy.float32)
        scale(module, output, view, rows, cols)
        np.testing.assert_allclose(cupy.asnumpy(output), expected * 1.5, rtol=1e-6)


@needs_torch
def test_torch_views(module):
    import torch

    host = np.random.default_rng(17).standard_normal((16, 24)).astype(np.float32)
    matrix = torch.from_numpy(host).cuda()
    for view, expected in [(matrix, host), (matrix.t(), host.T), (matrix[2:, 1::3], host[2:, 1::3])]:
        rows, cols = view.shape
        output = torch.zeros((rows, cols), dtype=torch.float32, device="cuda")
        scale(module, output, view, rows, cols)
        np.testing.assert_allclose(output.cpu().numpy(), expected * 1.5, rtol=1e-6)


def test_device_functions_take_the_shape_along(module):
    stored = np.random.default_rng(19).standard_normal((6, 4)).astype(np.float32)
    matrix = stored.T  # 4 x 6, strides (1, 4)
    output = np.zeros((6, 5), dtype=np.float32)
    module.traces[(8,), (8,)](output, matrix)
    trace = sum(float(matrix[k, k]) for k in range(4))
    np.testing.assert_allclose(output, trace + np.arange(6, dtype=np.float32)[:, None] + np.zeros((6, 5)), rtol=1e-5)
