"""`print` in a kernel launched on dpnp arrays: the lines reach the process's standard output
(the OpenCL runtime writes them through C's stdio, flushed here before reading)."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
from conftest import ROOT, has_module, needs_compiler, sycl_available

import kdsl

KERNELS = ROOT / "tests" / "kernels"

needs_dpnp = pytest.mark.skipif(not (has_module("dpnp") and sycl_available()), reason="dpnp or SYCL absent")


def printed_lines(text: str) -> list[str]:
    prefixes = ("i = ", "v = ", "narrow: ", "  from a device")
    return [line for line in text.splitlines() if line.startswith(prefixes)]


@needs_compiler
@needs_dpnp
def test_print_on_dpnp_arrays_reaches_stdout(capfd):
    import dpnp

    module = kdsl.compile(path=KERNELS / "print.krn")
    output = dpnp.zeros(4, dtype=dpnp.float32)
    module.print_values[4, 4](output, np.float32(0.5))
    np.testing.assert_array_equal(dpnp.asnumpy(output), [0.0, 0.5, 1.0, 1.5])
    # C's stdio buffers a piped or captured standard output until it is flushed.
    ctypes.CDLL(None).fflush(None)
    captured = capfd.readouterr()
    expected = (KERNELS / "print.stdout").read_text().splitlines()
    printed = printed_lines(captured.out)
    # Work-items print in the device's order; each line is whole.
    assert sorted(printed) == sorted(expected), captured.out
    # A work-item's own lines keep their program order.
    assert printed.index("i = 1, x = 0.5, even = false, {braces} 100%") < printed.index(
        "v = (0.5, 1), h = 0.5, d = 0.166667, s = -2"
    )


@needs_compiler
def test_print_format_errors_are_compile_errors():
    source = 'kernel k(n: u32) {\n    print("{} and {}", n);\n}\n'
    with pytest.raises(kdsl.CompileError) as raised:
        kdsl.compile(source)
    assert "E0330" in str(raised.value)
    assert "2 placeholders" in str(raised.value)
