"""The installed package sets up what the SYCL runtime needs by itself, whatever is imported
first: its .pth file names Intel's OpenCL CPU device (OCL_ICD_FILENAMES) at interpreter start,
so dpnp finds the CPU device before kdsl is imported, without scripts/env.sh."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import has_module

# What scripts/env.sh sets; a user's shell has none of it.
KDSL_ENVIRONMENT = ("OCL_ICD_FILENAMES", "KDSL_PREFIX", "KDSL_SYCL_SHIM", "LLVM_SYS_221_PREFIX", "LD_LIBRARY_PATH")
CPU_DEVICE_LIBRARY = Path(sys.prefix) / "lib" / "libintelocl.so"

needs_opencl_cpu_wheel = pytest.mark.skipif(
    not CPU_DEVICE_LIBRARY.exists(), reason="the intel-opencl-rt wheel is not installed in this environment"
)


def _installed_in_site_packages() -> bool:
    """Whether kdsl is installed where Python reads .pth files at start (pip into an
    environment), not put on PYTHONPATH from a `pip install --target` folder."""
    import site

    import kdsl

    package_parent = Path(kdsl.__file__).resolve().parent.parent
    return any(package_parent == Path(folder).resolve() for folder in site.getsitepackages())


needs_site_install = pytest.mark.skipif(
    not _installed_in_site_packages(),
    reason="kdsl is not pip-installed here (.pth files are not read; the SYCL shim's rpath misses libsycl)",
)


def run_clean(script: str, **extra: str) -> subprocess.CompletedProcess[str]:
    """Runs `script` in a child Python of this environment without kdsl's variables."""
    environment = {name: value for name, value in os.environ.items() if name not in KDSL_ENVIRONMENT}
    environment.update(extra)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=environment, timeout=300)


@needs_opencl_cpu_wheel
@needs_site_install
@pytest.mark.skipif(not has_module("dpnp"), reason="dpnp is not installed")
def test_dpnp_imported_first_finds_the_cpu_device_without_kdsl_variables() -> None:
    script = (
        "import os, sys, dpnp\n"
        "assert 'kdsl' not in sys.modules\n"
        "array = dpnp.ones(3)\n"
        "print(array.sycl_device.device_type.name, float(array.sum()), os.environ['OCL_ICD_FILENAMES'])\n"
    )
    result = run_clean(script)
    assert result.returncode == 0, result.stderr
    device_type, total, library = result.stdout.split()
    assert device_type == "cpu"
    assert total == "3.0"
    assert Path(library).resolve() == CPU_DEVICE_LIBRARY.resolve()


@needs_opencl_cpu_wheel
@needs_site_install
def test_kdsl_lists_the_cpu_device_without_kdsl_variables() -> None:
    script = "import kdsl\nprint(sorted({info.device_type for info in kdsl.devices() if info.backend == 'sycl'}))"
    result = run_clean(script)
    assert result.returncode == 0, result.stderr
    assert "cpu" in result.stdout


def test_an_icd_path_already_set_is_left_alone() -> None:
    result = run_clean("import os, kdsl; print(os.environ['OCL_ICD_FILENAMES'])", OCL_ICD_FILENAMES="/chosen/libOpenCL-driver.so")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "/chosen/libOpenCL-driver.so"


@pytest.fixture
def startup_module(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """The wheel's top-level startup module, looking in `tmp_path` only, with the variable unset."""
    if not has_module("_kdsl_opencl_icd"):
        pytest.skip("kdsl is not installed from its wheel here (no _kdsl_opencl_icd)")
    module = importlib.import_module("_kdsl_opencl_icd")
    monkeypatch.setattr(module, "environment_library_directories", lambda: [str(tmp_path)])
    monkeypatch.delenv("OCL_ICD_FILENAMES", raising=False)
    return module


def test_the_startup_module_names_the_library_it_finds(startup_module, tmp_path: Path) -> None:
    library = tmp_path / "libintelocl.so"
    library.write_bytes(b"")
    startup_module.name_opencl_cpu_device()
    assert os.environ["OCL_ICD_FILENAMES"] == str(library)


def test_the_startup_module_sets_nothing_without_the_library(startup_module) -> None:
    startup_module.name_opencl_cpu_device()
    assert "OCL_ICD_FILENAMES" not in os.environ
