"""Every example kernel launched from Python on every array kind available here (NumPy,
dpnp, dpctl USM memory; CuPy and PyTorch on CUDA machines), checked against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import EXAMPLES, cuda_available, example, has_module, needs_shapes

import kdsl

RNG = np.random.default_rng(7)


def test_saxpy(kind):
    n = 1000
    x = RNG.standard_normal(n).astype(np.float32)
    y = RNG.standard_normal(n).astype(np.float32)
    # In f64: a device may fuse the multiply and add (one rounding), NumPy does not.
    expected = 3.0 * x.astype(np.float64) + y
    dy, dx = kind.to_device(y), kind.to_device(x)
    event = example("saxpy").saxpy[1024, 256](dy, dx, 3.0, n)
    event.wait()
    np.testing.assert_allclose(kind.to_numpy(dy), expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name,dtype", [("axpby_f32", np.float32), ("axpby_f64", np.float64)])
def test_generic_axpby(kind, name, dtype):
    n = 777
    x = RNG.standard_normal(n).astype(dtype)
    y = RNG.standard_normal(n).astype(dtype)
    expected = 1.5 * x.astype(np.float64) - 0.5 * y.astype(np.float64)
    dy = kind.to_device(y)
    example("generic")[name](dy, kind.to_device(x), 1.5, -0.5, n, global_size=1024, local_size=128)
    tolerance = 1e-6 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(kind.to_numpy(dy), expected, rtol=tolerance, atol=tolerance)


def test_histogram(kind):
    n = 10_000
    data = RNG.integers(0, 256, n, dtype=np.uint8)
    bins = np.zeros(256, np.uint32)
    dbins = kind.to_device(bins)
    example("histogram").histogram(dbins, kind.to_device(data), n, global_size=10_240, local_size=256)
    np.testing.assert_array_equal(kind.to_numpy(dbins), np.bincount(data, minlength=256))


def test_reduction(kind):
    n = 5000
    values = RNG.standard_normal(n).astype(np.float32)
    groups = (n + 255) // 256
    partial = np.zeros(groups, np.float32)
    dpartial = kind.to_device(partial)
    example("reduction").reduce_sum[groups * 256, 256](dpartial, kind.to_device(values), n)
    sums = kind.to_numpy(dpartial)
    expected = [values[g * 256 : (g + 1) * 256].sum(dtype=np.float64) for g in range(groups)]
    np.testing.assert_allclose(sums, expected, rtol=1e-4, atol=1e-4)


def test_reduction_total(kind):
    """The one-launch sum: twice, since each launch leaves its arrival count at zero."""
    n = 5000
    groups = (n + 255) // 256
    kernel = example("reduction").reduce_total
    arrived = kind.to_device(np.zeros(1, np.uint32))
    for seed in (1, 2):
        values = np.random.default_rng(seed).standard_normal(n).astype(np.float32)
        total = kind.to_device(np.zeros(1, np.float32))
        partial = kind.to_device(np.zeros(groups, np.float32))
        kernel[groups * 256, 256](total, partial, arrived, kind.to_device(values), n).wait()
        np.testing.assert_allclose(kind.to_numpy(total)[0], values.sum(dtype=np.float64), rtol=1e-4, atol=1e-3)
        assert kind.to_numpy(arrived)[0] == 0


def test_matmul(kind):
    needs_shapes(kind)
    m, n, k = 48, 80, 64
    a = RNG.standard_normal((m, k)).astype(np.float32)
    b = RNG.standard_normal((k, n)).astype(np.float32)
    c = np.zeros((m, n), np.float32)
    dc = kind.to_device(c)
    example("matmul").matmul[(n, m), (16, 16)](dc, kind.to_device(a), kind.to_device(b))
    np.testing.assert_allclose(kind.to_numpy(dc), a @ b, rtol=1e-4, atol=1e-4)


def test_transpose(kind):
    needs_shapes(kind)
    height, width = 48, 80
    source = RNG.standard_normal((height, width)).astype(np.float32)
    out = np.zeros((width, height), np.float32)
    dout = kind.to_device(out)
    example("transpose").transpose[(width, height), (16, 16)](dout, kind.to_device(source))
    np.testing.assert_array_equal(kind.to_numpy(dout), source.T)


def test_stencil(kind):
    height, width = 30, 50
    grid = RNG.standard_normal((height, width)).astype(np.float32)
    out = np.zeros_like(grid)
    dout = kind.to_device(out)
    example("stencil").stencil[(64, 32), (16, 8)](dout, kind.to_device(grid), width, height)
    expected = grid.copy()
    expected[1:-1, 1:-1] = 0.2 * (
        grid[1:-1, 1:-1] + grid[1:-1, :-2] + grid[1:-1, 2:] + grid[:-2, 1:-1] + grid[2:, 1:-1]
    )
    np.testing.assert_allclose(kind.to_numpy(dout).reshape(height, width), expected, rtol=1e-5, atol=1e-6)


def test_softmax(kind):
    rows, columns = 12, 300
    values = RNG.standard_normal((rows, columns)).astype(np.float32)
    out = np.zeros_like(values)
    dout = kind.to_device(out)
    example("softmax").softmax[rows * 128, 128](dout, kind.to_device(values), columns)
    shifted = np.exp(values - values.max(axis=1, keepdims=True))
    expected = shifted / shifted.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(kind.to_numpy(dout).reshape(rows, columns), expected, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("assign", ["kmeans_assign", "kmeans_assign_tiles"])
def test_kmeans_lloyd_iteration(kind, assign):
    """examples/kmeans.krn (2-D and 3-D arrays, a device function returning a tuple, arrays
    passed by reference, privatised sums): one Lloyd iteration against NumPy, on samples
    around separated centres; also with examples/kmeans_tf32.krn's kmeans_assign_tiles (the
    same arguments, the dot products on matrix units) in place of kmeans_assign."""
    needs_shapes(kind)
    samples, features, clusters, copies = 3000, 14, 37, 8
    centres = RNG.uniform(-20, 20, (clusters, features)).astype(np.float32)
    x = (centres[RNG.integers(0, clusters, samples)] + RNG.uniform(-0.5, 0.5, (samples, features))).astype(
        np.float32
    )
    start = (centres + 0.25).astype(np.float32)
    module = example("kmeans")
    labels = kind.to_device(np.zeros(samples, np.uint32))
    sums = kind.to_device(np.zeros((copies, clusters, features), np.float32))
    counts = kind.to_device(np.zeros((copies, clusters), np.uint32))
    centroids_t = kind.to_device(np.ascontiguousarray(start.T))
    half_norms = kind.to_device((0.5 * (start * start).sum(axis=1)).astype(np.float32))
    x_t = kind.to_device(np.ascontiguousarray(x.T))
    if assign == "kmeans_assign":
        kernel = module.kmeans_assign
    else:
        # tf32 tiles need sm_80 or later: not the default targets' sm_75.
        tiles = kdsl.compile(path=EXAMPLES / "kmeans_tf32.krn", targets=["spirv", "ptx:sm_90", "amdgpu"])
        kernel = tiles.kmeans_assign_tiles
    # The sizes (and the number of copies of the sums) come from the arrays' shapes; the
    # kernels fix their work-group sizes.
    group = kernel.work_group_size[0]
    kernel[-(-samples // group) * group](labels, sums, counts, x_t, centroids_t, half_norms)
    module.kmeans_update[64, 32](centroids_t, half_norms, sums, counts).wait()
    distances = ((x[:, None, :].astype(np.float64) - start[None, :, :]) ** 2).sum(axis=2)
    expected_labels = distances.argmin(axis=1)
    np.testing.assert_array_equal(kind.to_numpy(labels), expected_labels)
    expected = start.astype(np.float64).copy()
    for cluster in range(clusters):
        members = x[expected_labels == cluster]
        if len(members):
            expected[cluster] = members.astype(np.float64).mean(axis=0)
    np.testing.assert_allclose(kind.to_numpy(centroids_t).T, expected, rtol=1e-4, atol=1e-4)
    assert not kind.to_numpy(counts).any()


@pytest.mark.parametrize("targets", [None, "spirv,ptx:sm_90"], ids=["default", "sm_90"])
@pytest.mark.parametrize("name,dtype,depth", [("hgemm_wgmma", np.float16, 64), ("sgemm_tf32_wgmma", np.float32, 32)])
def test_gemm_on_matrix_groups(kind, name, dtype, depth, targets):
    """examples/hgemm_wgmma.krn and sgemm_tf32_wgmma.krn (matrix-group tiles: wgmma through the
    sm_90a image of the default targets on an H100 or H200, mma.sync per warp through an sm_90
    image, the plain definition elsewhere) against NumPy: one work-group of 256 per 128 x 256
    block of C, a ring of four stages that wraps around. hgemm_wgmma is persistent: its one
    work-group walks both blocks of C, the second block's first copies flying while the first
    block's C is stored."""
    m, n, k = 256, 256, 5 * depth
    a = RNG.uniform(-1, 1, (m, k)).astype(dtype)
    b = RNG.uniform(-1, 1, (k, n)).astype(dtype)
    c = kind.to_device(np.zeros(m * n, np.float32))
    module = kdsl.compile(path=EXAMPLES / f"{name}.krn", targets=targets)
    if targets is None:
        # The default targets gain sm_90a, whose wgmma matrix groups reach.
        assert "ptx:sm_90a" in module.image_names
    ring = kdsl.local(4 * (128 + 256) * depth, "f16" if dtype == np.float16 else "f32")
    grid = (256, 1) if name == "hgemm_wgmma" else (n, m // 128)
    module[name][grid, (256, 1)](
        c, kind.to_device(a.ravel()), kind.to_device(b.ravel()), m, n, k, ring
    ).wait()
    expected = a.astype(np.float64) @ b.astype(np.float64)
    # f16 products are exact in f32; tf32 inputs keep 10 mantissa bits.
    tolerance = 1e-4 if dtype == np.float16 else 2e-2
    np.testing.assert_allclose(kind.to_numpy(c).reshape(m, n), expected, rtol=tolerance, atol=tolerance)


def test_hgemm_through_tile_copies_and_stores(kind):
    """examples/hgemm_wgmma_tma.krn (tile copies in, matrix groups, tile stores out: the TMA
    and wgmma on sm_90a, the plain definitions elsewhere) against NumPy in f64. Three
    work-groups walk four 128 x 256 blocks of 2-D f16 arrays, so one takes two blocks and the
    ring of four slots runs across a block's end; C is written in f16."""
    if kind.name.startswith("dpctl-usm"):
        pytest.skip("untyped USM memory carries no shape for 2-D parameters")
    m, n, k = 256, 512, 5 * 64
    a = RNG.uniform(-1, 1, (m, k)).astype(np.float16)
    b = RNG.uniform(-1, 1, (k, n)).astype(np.float16)
    c = kind.to_device(np.zeros((m, n), np.float16))
    module = example("hgemm_wgmma_tma")
    ring = kdsl.local(4 * (128 + 256) * 64 + 128 * 128, "f16")
    module["hgemm_wgmma_tma"][(3 * 256, 1), (256, 1)](c, kind.to_device(a), kind.to_device(b), ring).wait()
    expected = a.astype(np.float64) @ b.astype(np.float64)
    # Products exact in f32, sums in f32, then C rounded to f16 (half an ulp: 2^-11 relative).
    np.testing.assert_allclose(kind.to_numpy(c).astype(np.float64), expected, rtol=2.0**-10, atol=1e-3)


@pytest.mark.parametrize("targets", [None, "spirv,ptx:sm_90"], ids=["default", "sm_90"])
@pytest.mark.parametrize("memory", ["numpy", "torch-cuda"])
def test_bf16_gemm_on_matrix_groups(memory, targets):
    """examples/gemm_bf16_wgmma.krn (hgemm_wgmma.krn with bf16 inputs) against NumPy in f64:
    ml_dtypes' bfloat16 arrays on the default device, torch.bfloat16 tensors on a CUDA one."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    m, n, k = 128, 256, 5 * 64
    a = RNG.uniform(-1, 1, (m, k)).astype(ml_dtypes.bfloat16)
    b = RNG.uniform(-1, 1, (k, n)).astype(ml_dtypes.bfloat16)
    try:
        module = kdsl.compile(path=EXAMPLES / "gemm_bf16_wgmma.krn", targets=targets)
    except kdsl.CompilerUnavailableError:
        # A machine without the compiler runs what was cached where this test could run.
        pytest.skip("kdsl._compiler is not here and this build is not in the cache")
    ring = kdsl.local(4 * (128 + 256) * 64, "bf16")
    launch = module["gemm_bf16_wgmma"][(n, m // 128), (256, 1)]
    if memory == "numpy":
        c = np.zeros(m * n, np.float32)
        launch(c, a.ravel(), b.ravel(), m, n, k, ring).wait()
    else:
        if not (has_module("torch") and cuda_available()):
            pytest.skip("needs PyTorch and a CUDA device")
        import torch

        def tensor(array):
            bits = torch.from_numpy(array.ravel().view(np.int16).copy())
            return bits.view(torch.bfloat16).cuda()

        c_tensor = torch.zeros(m * n, dtype=torch.float32, device="cuda")
        launch(c_tensor, tensor(a), tensor(b), m, n, k, ring).wait()
        c = c_tensor.cpu().numpy()
    # bf16 products are exact in f32; only the f32 sums round.
    expected = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(c.reshape(m, n), expected, rtol=1e-4, atol=1e-4)
