"""What the wheel adds so that it works on a machine with nothing but Python: libclc's bitcode
for the compiler, and the compiler module's stand-in for glibc 2.36's arc4random (the wheel is
tagged manylinux_2_35)."""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

import pytest

import kdsl
from conftest import needs_compiler

PACKAGED_LIBCLC = Path(kdsl.__file__).resolve().parent / "clc"
from_wheel = pytest.mark.skipif(not PACKAGED_LIBCLC.is_dir(), reason="kdsl is not installed from its wheel here")


@from_wheel
def test_the_package_names_its_libclc_copy_for_the_compiler() -> None:
    assert sorted(path.name for path in PACKAGED_LIBCLC.iterdir()) == ["amdgcn-amd-amdhsa.bc", "nvptx64--nvidiacl.bc"]
    assert Path(os.environ["KDSL_LIBCLC_DIR"]).resolve() == PACKAGED_LIBCLC


@from_wheel
@needs_compiler
def test_the_compiler_modules_arc4random_stand_in_gives_random_bits() -> None:
    import kdsl._compiler

    stand_in = ctypes.CDLL(kdsl._compiler.__file__).__wrap_arc4random
    stand_in.restype = ctypes.c_uint32
    values = {stand_in() for _ in range(16)}
    assert len(values) > 12  # 16 draws of 32 random bits: a repeat is a one in 10^7 event
