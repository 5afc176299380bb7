"""Tile copies (``async_tile_copy``, ``async_tile_store``): a work-group copies rectangles of a
2-D array into local memory and stores them back. On NumPy and dpnp arrays (the CPU device) and
CuPy and PyTorch arrays (CUDA: tensor copies on sm_90a where the rows allow a tensor map, plain
copies otherwise) the results match NumPy, including rows a tensor map cannot describe, a
ragged edge read as zeros and stores that write nothing past the array's shape."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import ROOT, cuda_available, has_module, sycl_available

import kdsl


@pytest.fixture(scope="module")
def module():
    return kdsl.compile(path=ROOT / "tests" / "kernels" / "tile_copies.krn")


def _kinds():
    kinds = [pytest.param("numpy", id="numpy")]
    kinds.append(
        pytest.param(
            "dpnp",
            id="dpnp",
            marks=pytest.mark.skipif(not (has_module("dpnp") and sycl_available()), reason="dpnp or SYCL absent"),
        )
    )
    for name in ("cupy", "torch"):
        kinds.append(
            pytest.param(
                name,
                id=name,
                marks=pytest.mark.skipif(not (has_module(name) and cuda_available()), reason=f"{name} or CUDA absent"),
            )
        )
    return kinds


def to_device(kind: str, host: np.ndarray):
    if kind == "dpnp":
        import dpnp

        return dpnp.asarray(host)
    if kind == "cupy":
        import cupy

        return cupy.asarray(host)
    if kind == "torch":
        import torch

        return torch.from_numpy(host).cuda()
    return host.copy()


def to_numpy(kind: str, array) -> np.ndarray:
    if kind == "dpnp":
        import dpnp

        return dpnp.asnumpy(array)
    if kind == "cupy":
        import cupy

        return cupy.asnumpy(array)
    if kind == "torch":
        return array.cpu().numpy()
    return array


@pytest.mark.parametrize("kind", _kinds())
@pytest.mark.parametrize("pitch", [72, 71], ids=["aligned-rows", "unaligned-rows"])
def test_tiles_land_swizzled_and_zero_past_the_edge(module, kind, pitch):
    host = np.random.default_rng(3).standard_normal((40, pitch)).astype(np.float32)
    matrix = to_device(kind, host)[:, :70]
    output = to_device(kind, np.full(48 * 96, -7.0, np.float32))
    module.tile_roundtrip[(3 * 64, 3), (64, 1)](output, matrix).wait()
    expected = np.zeros((48, 96), np.float32)
    expected[:40, :70] = host[:, :70]
    np.testing.assert_array_equal(to_numpy(kind, output).reshape(48, 96), expected)


@pytest.mark.parametrize("kind", _kinds())
def test_a_ring_of_two_slots_sums_rows(module, kind):
    host = np.random.default_rng(4).uniform(-1, 1, (50, 208)).astype(np.float16)
    matrix = to_device(kind, host)[:, :200]
    sums = to_device(kind, np.zeros(50, np.float32))
    module.ring_row_sums[(32, 4), (32, 2)](sums, matrix).wait()
    expected = host[:, :200].astype(np.float64).sum(axis=1)
    np.testing.assert_allclose(to_numpy(kind, sums), expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("kind", _kinds())
@pytest.mark.parametrize(
    "pitch,columns", [(72, 64), (72, 70), (71, 70)], ids=["whole-chunks", "ragged-chunk", "unaligned-rows"]
)
def test_stores_write_the_tile_and_nothing_past_the_edge(module, kind, pitch, columns):
    host = np.random.default_rng(5).standard_normal((48, 96)).astype(np.float32)
    padded = np.full((40, pitch), -7.0, np.float32)
    output = to_device(kind, padded)
    view = output[:, :columns]
    module.tile_store_blocks[(3 * 64, 3), (64, 1)](view, to_device(kind, host.reshape(-1)), np.uint32(96), np.float32(2.0)).wait()
    expected = padded.copy()
    expected[:, :columns] = host[:40, :columns] * 2 + np.arange(40, dtype=np.float32)[:, None]
    np.testing.assert_array_equal(to_numpy(kind, output), expected)
