"""The native program cache across processes: a new process loads the device binary the first
one stored (seen in ``kdsl.cache_info()``, not by timing), and a damaged entry is refused,
rebuilt and rewritten."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EXAMPLES, needs_compiler

import kdsl

# Compiles saxpy (from the bundle cache after the first run), launches it on NumPy arrays on
# the device named by KDSL_DEVICE, checks the result and prints the native cache's counts.
CHILD = """
import json, sys
import numpy as np
import kdsl
module = kdsl.compile(path=sys.argv[1])
y, x = np.ones(1000, np.float32), np.full(1000, 2.0, np.float32)
module.saxpy[1024, 256](y, x, 3.0, 1000)
assert (y == 7.0).all()
print(json.dumps(kdsl.cache_info()["native"]))
"""


def opencl_device() -> str | None:
    return next(
        (info.id for info in kdsl.devices() if info.backend == "sycl" and info.platform_backend == "opencl"),
        None,
    )


def run_child(cache: Path, device: str) -> dict:
    environment = dict(os.environ, KDSL_CACHE_DIR=str(cache), KDSL_DEVICE=device)
    environment.pop("KDSL_NATIVE_CACHE_DIR", None)
    environment.pop("KDSL_NATIVE_CACHE", None)
    output = subprocess.run(
        [sys.executable, "-c", CHILD, str(EXAMPLES / "saxpy.krn")],
        env=environment,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(output.strip().splitlines()[-1])


@needs_compiler
def test_a_new_process_loads_the_stored_binary_and_a_damaged_one_is_rewritten(tmp_path):
    device = opencl_device()
    if device is None:
        pytest.skip("no SYCL device on OpenCL here (the native program cache is kept for those)")
    first = run_child(tmp_path, device)
    assert first["directory"] == str(tmp_path / "native")
    assert (first["hits"], first["misses"], first["stores"]) == (0, 1, 1)
    entries = list((tmp_path / "native").glob("*.bin"))
    assert len(entries) == 1
    stored = entries[0].read_bytes()

    second = run_child(tmp_path, device)
    assert (second["hits"], second["misses"], second["rejected"], second["stores"]) == (1, 0, 0, 0)

    damaged = bytearray(stored)
    damaged[len(damaged) // 2] ^= 0xFF
    entries[0].write_bytes(bytes(damaged))
    third = run_child(tmp_path, device)
    assert (third["hits"], third["rejected"], third["stores"]) == (0, 1, 1)
    assert entries[0].read_bytes() != bytes(damaged)

    fourth = run_child(tmp_path, device)
    assert fourth["hits"] == 1


def test_the_cache_can_be_turned_off_and_moved(monkeypatch, tmp_path):
    monkeypatch.setenv("KDSL_NATIVE_CACHE_DIR", str(tmp_path / "elsewhere"))
    assert kdsl.cache_info()["native"]["directory"] == str(tmp_path / "elsewhere")
    monkeypatch.setenv("KDSL_NATIVE_CACHE", "off")
    assert kdsl.cache_info()["native"]["directory"] is None
