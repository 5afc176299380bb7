"""Buffers of records: the layout as a NumPy structured dtype, structured arrays checked field by
field at launch (a mismatch is a RecordLayoutError naming the field), and dpnp arrays passed
as whole records' bytes."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_still_usable, cuda_available, has_module, importable, sycl_available

import kdsl

SOURCE = """
struct Particle { tag: u8, mass: f64, charge: i16, flag: bool }

kernel heavier(input: global [Particle], out: global mut [Particle], n: u32) {
    let i = get_global_id(0);
    if i < n {
        let p = input[i];
        out[i] = Particle { tag: p.tag + 1u8, mass: p.mass * 2.0, charge: -p.charge, flag: !p.flag };
    }
}
"""

needs_device = pytest.mark.skipif(not kdsl.devices(), reason="no device")
C_LAYOUT = np.dtype(
    [("tag", "u1"), ("mass", "<f8"), ("charge", "<i2"), ("flag", "?")], align=True
)


def module():
    return kdsl.compile(SOURCE)


def particles(n: int):
    data = np.zeros(n, C_LAYOUT)
    data["tag"] = np.arange(n) % 200
    data["mass"] = np.arange(n) * 0.5
    data["charge"] = np.arange(n) - 40
    data["flag"] = np.arange(n) % 3 == 0
    return data


def test_the_record_dtype_is_the_c_layout():
    kernel = module().heavier
    dtype = kernel.records["Particle"]
    assert dtype == C_LAYOUT
    assert dtype.itemsize == 24 and dtype.fields["charge"][1] == 16
    assert module().record_dtype("Particle") == C_LAYOUT
    assert str(kernel.parameters[0]) == "input: global [Particle]"
    assert kernel.parameters[0].record["fields"][1] == ("mass", "f64", 8)


@needs_device
def test_structured_numpy_arrays_round_trip():
    n = 100
    data = particles(n)
    out = np.zeros(n, C_LAYOUT)
    module().heavier[128, 64](data, out, n).wait()
    assert np.array_equal(out["tag"], data["tag"] + 1)
    assert np.array_equal(out["mass"], data["mass"] * 2)
    assert np.array_equal(out["charge"], -data["charge"])
    assert np.array_equal(out["flag"], ~data["flag"])


@pytest.mark.parametrize(
    "dtype, field",
    [
        ([("tag", "u1"), ("mass", "<f4"), ("charge", "<i2"), ("flag", "?")], "mass"),
        ([("tag", "u1"), ("mass", "<f8"), ("charge", "<i2")], "flag"),
        ([("tag", "u1"), ("weight", "<f8"), ("charge", "<i2"), ("flag", "?")], "mass"),
    ],
)
@needs_device
def test_a_wrong_dtype_names_the_field(dtype, field):
    n = 8
    out = np.zeros(n, C_LAYOUT)
    wrong = np.zeros(n, np.dtype(dtype, align=True))
    with pytest.raises(kdsl.RecordLayoutError) as raised:
        module().heavier[8, 8](wrong, out, n)
    assert raised.value.field == field, str(raised.value)
    assert f"`{field}`" in str(raised.value) and "argument 0 (`input`)" in str(raised.value)
    assert isinstance(raised.value, kdsl.ArgumentError)
    assert_still_usable()


@needs_device
def test_a_packed_dtype_is_refused():
    n = 8
    packed = np.zeros(n, np.dtype(C_LAYOUT.descr[:1] + [("mass", "<f8"), ("charge", "<i2"), ("flag", "?")]))
    with pytest.raises(kdsl.RecordLayoutError) as raised:
        module().heavier[8, 8](packed, np.zeros(n, C_LAYOUT), n)
    assert raised.value.field == "mass" and "offset 1" in str(raised.value)


@needs_device
def test_bytes_that_are_not_whole_records_are_refused():
    n = 8
    with pytest.raises(kdsl.ArgumentError) as raised:
        module().heavier[8, 8](np.zeros(n * 24 - 4, np.uint8), np.zeros(n, C_LAYOUT), n)
    assert raised.value.kind == "RecordBufferMismatch", str(raised.value)
    assert "not a multiple of 24" in str(raised.value)
    assert_still_usable()


@pytest.mark.skipif(not (has_module("dpnp") and sycl_available()), reason="dpnp or SYCL absent")
def test_dpnp_arrays_pass_records_as_bytes():
    import dpnp

    n = 64
    data = particles(n)
    device_in = dpnp.asarray(data.view(np.uint8))
    device_out = dpnp.zeros(n * 24, dtype=dpnp.uint8)
    module().heavier[64, 64](device_in, device_out, n).wait()
    out = dpnp.asnumpy(device_out).view(C_LAYOUT)
    assert np.array_equal(out["mass"], data["mass"] * 2)
    assert np.array_equal(out["charge"], -data["charge"])


@pytest.mark.skipif(not (cuda_available() and importable("cupy")), reason="CuPy or CUDA absent")
def test_cupy_arrays_pass_records_as_bytes():
    import cupy

    n = 64
    data = particles(n)
    device_in = cupy.asarray(data.view(np.uint8))
    device_out = cupy.zeros(n * 24, dtype=cupy.uint8)
    module().heavier[64, 64](device_in, device_out, n).wait()
    out = cupy.asnumpy(device_out).view(C_LAYOUT)
    assert np.array_equal(out["tag"], data["tag"] + 1)
    assert np.array_equal(out["mass"], data["mass"] * 2)
    assert np.array_equal(out["flag"], ~data["flag"])


@pytest.mark.skipif(not (cuda_available() and importable("torch")), reason="PyTorch or CUDA absent")
def test_torch_tensors_pass_records_as_bytes():
    import torch

    if not torch.cuda.is_available():
        pytest.skip("PyTorch without CUDA")
    n = 64
    data = particles(n)
    device_in = torch.from_numpy(data.view(np.uint8).copy()).cuda()
    device_out = torch.zeros(n * 24, dtype=torch.uint8, device="cuda")
    module().heavier[64, 64](device_in, device_out, n).wait()
    out = device_out.cpu().numpy().view(C_LAYOUT)
    assert np.array_equal(out["charge"], -data["charge"])
    assert np.array_equal(out["mass"], data["mass"] * 2)
