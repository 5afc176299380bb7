"""The array libraries the Python examples run on: NumPy (kdsl copies in and out), dpnp (SYCL
queues), CuPy and PyTorch (CUDA), as far as each is installed and has a device here."""

from __future__ import annotations

import importlib.util

import numpy as np

import kdsl


class Backend:
    """How one array library makes arrays, reads them back and waits."""

    def __init__(self, name: str):
        self.name = name
        self.xp = None if name == "numpy" else importlib.import_module(name)

    def array(self, values: np.ndarray):
        values = np.ascontiguousarray(values)
        if self.name == "numpy":
            return values
        if self.name == "torch":
            return self.xp.as_tensor(values, device="cuda")
        return self.xp.asarray(values)

    def empty(self, shape: tuple[int, ...], dtype=np.float32):
        return self.array(np.zeros(shape, dtype))

    def to_numpy(self, array) -> np.ndarray:
        if self.name == "numpy":
            return array
        if self.name in ("dpnp", "cupy"):
            return self.xp.asnumpy(array)
        return array.cpu().numpy()

    def synchronize(self, array) -> None:
        if self.name == "dpnp":
            array.sycl_queue.wait()
        elif self.name == "cupy":
            self.xp.cuda.Device().synchronize()
        elif self.name == "torch":
            self.xp.cuda.synchronize()


def available_backends() -> list[str]:
    """numpy always; dpnp where kdsl sees a SYCL device; cupy and torch where it sees CUDA."""
    names = ["numpy"]
    backends = {info.backend for info in kdsl.devices()}
    if "sycl" in backends and importlib.util.find_spec("dpnp"):
        names.append("dpnp")
    for name in ("cupy", "torch"):
        if "cuda" in backends and importlib.util.find_spec(name):
            names.append(name)
    return names
