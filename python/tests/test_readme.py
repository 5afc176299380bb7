"""The README's Python section runs as written: its set-up, then each array library's lines
where that library and a device for it are here (dpnp and NumPy on the CPU device; CuPy and
PyTorch on CUDA machines), each checked for saxpy's result."""

from __future__ import annotations

import importlib.util
import os
import re

import numpy as np
import pytest
from conftest import ROOT, cuda_available, needs_compiler, sycl_available

LIBRARIES = {"dpnp": sycl_available, "cupy": cuda_available, "torch": cuda_available, "numpy": lambda: True}


def readme_sections() -> tuple[str, dict[str, str]]:
    """The block's set-up, and the lines of each library (from its `import` to the next)."""
    text = (ROOT / "README.md").read_text()
    block = next(
        code for code in re.findall(r"```python\n(.*?)```", text, re.S) if "import cupy" in code and "saxpy[" in code
    )
    parts = re.split(r"^(?=import (?:dpnp|cupy|torch|numpy)\b)", block, flags=re.M)
    sections = {part.split()[1]: part for part in parts[1:]}
    return parts[0], sections


def as_numpy(array) -> np.ndarray:
    if hasattr(array, "asnumpy"):
        return array.asnumpy()
    module = type(array).__module__.split(".")[0]
    if module in ("dpnp", "cupy"):
        return importlib.import_module(module).asnumpy(array)
    if module == "torch":
        return array.cpu().numpy()
    return np.asarray(array)


@needs_compiler
@pytest.mark.parametrize("library", list(LIBRARIES))
def test_the_readme_python_section_runs(library):
    setup, sections = readme_sections()
    assert set(sections) == set(LIBRARIES)
    if importlib.util.find_spec(library) is None or not LIBRARIES[library]():
        pytest.skip(f"{library} (or a device for it) is not available here")
    namespace: dict = {}
    current = os.getcwd()
    os.chdir(ROOT)
    try:
        exec(compile(setup + sections[library], "README.md", "exec"), namespace)
    finally:
        os.chdir(current)
    y = namespace["y"]
    if library == "dpnp":
        y.sycl_queue.wait()
    elif library == "cupy":
        importlib.import_module("cupy").cuda.Device().synchronize()
    np.testing.assert_allclose(as_numpy(y), 1.0 + 2.0 * np.arange(1000), rtol=1e-6)
