"""Shared fixtures: where the kernels are, the array kinds each test runs on, and a check that
the process is still usable after a misuse."""

from __future__ import annotations

import importlib.util
import os
import tempfile
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
TEST_KERNELS = Path(__file__).resolve().parent / "kernels"

# Compiled bundles go to KDSL_CACHE_DIR when set (the GPU runner points it at the carried,
# pre-filled cache); otherwise to a fresh directory, so the tests never touch ~/.cache.
if not os.environ.get("KDSL_CACHE_DIR"):
    os.environ["KDSL_CACHE_DIR"] = tempfile.mkdtemp(prefix="kdsl-test-cache-")

import kdsl  # noqa: E402


def compiler_available() -> bool:
    try:
        importlib.import_module("kdsl._compiler")
        return True
    except ImportError:
        return False


needs_compiler = pytest.mark.skipif(
    not compiler_available(), reason="kdsl._compiler (LLVM 22) is not available here"
)


def has_module(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def sycl_available() -> bool:
    return any(info.backend == "sycl" for info in kdsl.devices())


def cuda_available() -> bool:
    return any(info.backend == "cuda" for info in kdsl.devices())


def spirv_device_id() -> str | None:
    """A device that takes SPIR-V (the Intel OpenCL CPU device here), as a `KDSL_DEVICE` filter."""
    return next((info.id for info in kdsl.devices() if info.target == "spirv"), None)


def importable(name: str) -> bool:
    """Whether `name` imports: a module may be installed while its native libraries are not
    (dpctl without the SYCL runtime)."""
    if not has_module(name):
        return False
    try:
        importlib.import_module(name)
        return True
    except ImportError:
        return False


def sycl_cuda_available() -> bool:
    """A SYCL CUDA device (docs/sycl-cuda.md), seen by both kdsl and dpctl."""
    kdsl_sees = any(info.backend == "sycl" and info.platform_backend == "cuda" for info in kdsl.devices())
    if not kdsl_sees or not importable("dpctl"):
        return False
    import dpctl

    try:
        dpctl_sees = bool(dpctl.get_devices(backend="cuda"))
    except Exception:  # dpctl raises when the filter matches no platform
        dpctl_sees = False
    return dpctl_sees


class ArrayKind:
    """Makes device arrays from NumPy arrays and reads them back."""

    name = "numpy"

    def to_device(self, array: np.ndarray):
        return array

    def to_numpy(self, array) -> np.ndarray:
        return np.asarray(array)


class DpnpKind(ArrayKind):
    name = "dpnp"

    def to_device(self, array):
        import dpnp

        return dpnp.asarray(array)

    def to_numpy(self, array):
        import dpnp

        return dpnp.asnumpy(array)


def needs_shapes(kind) -> None:
    """Kernels with 2-D parameters take arrays with a shape, which untyped USM memory lacks."""
    if isinstance(kind, DpctlMemoryKind):
        pytest.skip("untyped USM memory has no shape for a 2-D parameter")


class DpctlMemoryKind(ArrayKind):
    """Untyped dpctl USM memory (``dpctl.memory.MemoryUSMDevice``) on an in-order queue."""

    name = "dpctl-usm"

    def __init__(self, filter: str | None = None, in_order: bool = True) -> None:
        import dpctl

        properties = ["in_order"] if in_order else []
        self.queue = dpctl.SyclQueue(filter, property=properties) if filter else dpctl.SyclQueue(property=properties)
        self.in_order = in_order
        self.shapes: dict[int, tuple] = {}

    def to_device(self, array):
        import dpctl.memory

        memory = dpctl.memory.MemoryUSMDevice(max(array.nbytes, 1), queue=self.queue)
        if array.nbytes:
            memory.copy_from_host(np.ascontiguousarray(array).view(np.uint8).reshape(-1))
        self.shapes[id(memory)] = (array.dtype, array.shape)
        return memory

    def to_numpy(self, memory):
        dtype, shape = self.shapes[id(memory)]
        if not self.in_order:
            # dpctl's copy of raw USM memory waits for nothing on an out-of-order queue.
            self.queue.wait()
        data = memory.copy_to_host()
        return np.frombuffer(data.tobytes()[: np.prod(shape, dtype=int) * np.dtype(dtype).itemsize], dtype=dtype).reshape(shape)


class DpnpCudaKind(ArrayKind):
    """dpnp arrays made on a dpctl queue of the SYCL CUDA device (dpnp's own kernels are SPIR-V
    only in the PyPI wheel, so only copies are asked of dpnp)."""

    name = "dpnp-sycl-cuda"

    def __init__(self) -> None:
        import dpctl

        self.queue = dpctl.SyclQueue("cuda:gpu", property="in_order")

    def to_device(self, array):
        import dpnp

        return dpnp.asarray(array, sycl_queue=self.queue)

    def to_numpy(self, array):
        import dpnp

        return dpnp.asnumpy(array)


class CupyKind(ArrayKind):
    name = "cupy"

    def to_device(self, array):
        import cupy

        return cupy.asarray(array)

    def to_numpy(self, array):
        import cupy

        return cupy.asnumpy(array)


class TorchKind(ArrayKind):
    name = "torch"

    def to_device(self, array):
        import torch

        return torch.as_tensor(array, device="cuda")

    def to_numpy(self, array):
        return array.cpu().numpy()


def array_kinds() -> list:
    kinds = [pytest.param("numpy", id="numpy")]
    for name, module, needs in [
        ("dpnp", "dpnp", sycl_available),
        ("dpctl-usm", "dpctl", sycl_available),
        ("dpctl-usm-sycl-cuda", "dpctl", sycl_cuda_available),
        ("dpctl-usm-sycl-cuda-out-of-order", "dpctl", sycl_cuda_available),
        ("dpnp-sycl-cuda", "dpnp", sycl_cuda_available),
        ("cupy", "cupy", cuda_available),
        ("torch", "torch", cuda_available),
    ]:
        available = needs() and importable(module)
        kinds.append(
            pytest.param(
                name,
                id=name,
                marks=pytest.mark.skipif(not available, reason=f"{module} or its device is absent"),
            )
        )
    return kinds


MAKERS = {
    "numpy": ArrayKind,
    "dpnp": DpnpKind,
    "dpctl-usm": DpctlMemoryKind,
    "dpctl-usm-sycl-cuda": lambda: DpctlMemoryKind("cuda:gpu"),
    "dpctl-usm-sycl-cuda-out-of-order": lambda: DpctlMemoryKind("cuda:gpu", in_order=False),
    "dpnp-sycl-cuda": DpnpCudaKind,
    "cupy": CupyKind,
    "torch": TorchKind,
}


@pytest.fixture(params=array_kinds())
def kind(request) -> ArrayKind:
    return MAKERS[request.param]()


def example(name: str) -> kdsl.Module:
    return kdsl.compile(path=EXAMPLES / f"{name}.krn")


def feature_kernels(name: str) -> kdsl.Module:
    return kdsl.compile(path=TEST_KERNELS / f"{name}.krn")


@pytest.fixture
def saxpy() -> kdsl.Module:
    return example("saxpy")


def assert_still_usable() -> None:
    """A NumPy saxpy on the default device gives the right answer."""
    module = example("saxpy")
    y = np.ones(300, np.float32)
    x = np.arange(300, dtype=np.float32)
    module.saxpy[512, 128](y, x, 2.0, 300)
    np.testing.assert_allclose(y, 1.0 + 2.0 * x)
