"""The Python examples next to k-means (examples/python/): pairwise distances and the tiled
matmul with local memory, on every array library available here (NumPy and dpnp on the CPU
device; CuPy and PyTorch on CUDA machines), with sizes that leave partial work-groups."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import numpy as np
import pytest
from conftest import EXAMPLES, needs_compiler

import kdsl

sys.path.insert(0, str(EXAMPLES / "python"))
from backends import Backend, available_backends  # noqa: E402

BACKENDS = ["numpy", "dpnp", "cupy", "torch"]
RNG = np.random.default_rng(11)


def example_module(name: str):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / "python" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def backend_or_skip(name: str) -> Backend:
    if name not in available_backends():
        pytest.skip(f"{name} (or a device for it) is not available here")
    return Backend(name)


@needs_compiler
@pytest.mark.parametrize("name", BACKENDS)
def test_pairwise_distance(name):
    backend = backend_or_skip(name)
    example = example_module("pairwise_distance")
    x = RNG.standard_normal((100, 5)).astype(np.float32)
    distances, seconds = example.pairwise_distance(kdsl.compile(path=example.KERNELS), backend, x)
    np.testing.assert_allclose(distances, example.reference(x), rtol=1e-5, atol=1e-5)
    assert seconds > 0


@needs_compiler
@pytest.mark.parametrize("name", BACKENDS)
def test_matmul_with_local_memory(name):
    backend = backend_or_skip(name)
    example = example_module("matmul")
    a = RNG.standard_normal((70, 45)).astype(np.float32)
    b = RNG.standard_normal((45, 33)).astype(np.float32)
    module = kdsl.compile(path=example.KERNELS)
    assert module.matmul.local_memory_bytes == 2 * example.TILE * example.TILE * 4
    c, _ = example.matmul(module, backend, a, b)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-4, atol=1e-4)


@needs_compiler
@pytest.mark.parametrize("script", ["pairwise_distance.py", "matmul.py"])
def test_the_example_scripts_run_and_agree_with_numpy(script):
    arguments = ["--points", "200"] if script.startswith("pairwise") else ["--size", "96"]
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "python" / script), *arguments], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "OK" in result.stdout and "MISMATCH" not in result.stdout
