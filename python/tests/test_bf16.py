"""bf16 buffers and scalars from Python: bfloat16 arrays (ml_dtypes' NumPy dtype, PyTorch's
torch.bfloat16) are taken; arrays of other types, their uint16 bits included, are refused with an
error that says how to pass them."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_still_usable, cuda_available, feature_kernels, has_module

import kdsl


def expect_argument_type(call) -> str:
    with pytest.raises(kdsl.ArgumentError) as raised:
        call()
    assert raised.value.kind == "ArgumentType", (raised.value.kind, str(raised.value))
    assert_still_usable()
    return str(raised.value)


def test_other_element_types_and_raw_bits_are_refused_with_how_to_pass_bfloat16():
    module = feature_kernels("types")
    for wrong in (np.zeros(10, np.uint16), np.zeros(10, np.int16), np.zeros(10, np.float16)):
        message = expect_argument_type(lambda: module.fill_bf16[16, 16](wrong, 1.0, 10))
        assert "argument 0 (`out`)" in message and "bf16 (bfloat16)" in message, message
        assert "view(ml_dtypes.bfloat16)" in message and "view(torch.bfloat16)" in message, message
    # A bfloat16 array for an f16 parameter names its type too.
    if has_module("ml_dtypes"):
        import ml_dtypes

        halves = np.zeros(10, ml_dtypes.bfloat16)
        message = expect_argument_type(lambda: module.fill_f16[16, 16](halves, 1.0, 10))
        assert "an array of bfloat16 was given" in message, message


def test_scalars_round_once_to_bf16():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    module = feature_kernels("types")
    out = np.zeros(10, ml_dtypes.bfloat16)
    bits = out.view(np.uint16)
    module.fill_bf16[16, 16](out, 0.1, 10)  # rounded once to the nearest bfloat16
    np.testing.assert_array_equal(bits, 0x3DCD)
    # 1 + 2^-8 + 2^-40 lies just above a tie of bf16, which rounding through f32 would land on.
    module.fill_bf16[16, 16](out, 1.0 + 2.0**-8 + 2.0**-40, 10)
    np.testing.assert_array_equal(bits, 0x3F81)
    module.fill_bf16[16, 16](out, ml_dtypes.bfloat16(-2.5), 10)
    np.testing.assert_array_equal(bits, 0xC020)
    module.fill_bf16[16, 16](out, 3.3e38, 10)  # bf16 has f32's range
    np.testing.assert_array_equal(out.astype(np.float32), np.float32(ml_dtypes.bfloat16(3.3e38)))
    with pytest.raises(kdsl.ArgumentError) as raised:
        module.fill_bf16[16, 16](out, 1e39, 10)
    assert raised.value.kind == "ScalarOutOfRange"
    expect_argument_type(lambda: module.fill_bf16[16, 16](out, True, 10))


def test_numpy_bfloat16_arrays_compute_in_f32_and_round_to_nearest_even():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    module = feature_kernels("types")
    n = 1000
    values = np.random.default_rng(7).uniform(-100, 100, n).astype(ml_dtypes.bfloat16)
    factor = ml_dtypes.bfloat16(1.0 + 2.0**-7)
    out = np.zeros(n, ml_dtypes.bfloat16)
    module.scale_bf16[1024, 64](out, values, factor, kdsl.local(64, ml_dtypes.bfloat16), n)
    # The reference: each product and sum in f32, rounded to bfloat16 (ml_dtypes rounds to
    # nearest even), compared bit for bit.
    product = (values.astype(np.float32) * np.float32(factor)).astype(ml_dtypes.bfloat16)
    expected = (product.astype(np.float32) + np.float32(1)).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(out.view(np.uint16), expected.view(np.uint16))
    # uint16 bits become bfloat16 without a copy through a view.
    raw = np.zeros(n, np.uint16)
    module.scale_bf16[1024, 64](raw.view(ml_dtypes.bfloat16), values, factor, kdsl.local(64, "bf16"), n)
    np.testing.assert_array_equal(raw, expected.view(np.uint16))


def test_local_memory_names_bfloat16():
    assert kdsl.local(8, "bf16").dtype == "bf16"
    if has_module("ml_dtypes"):
        import ml_dtypes

        assert kdsl.local(8, ml_dtypes.bfloat16).dtype == "bf16"
        assert kdsl.local(8, "bfloat16").dtype == "bf16"


def torch_devices() -> list[str]:
    if not has_module("torch"):
        return []
    return ["cpu"] + (["cuda"] if cuda_available() else [])


@pytest.mark.parametrize("device", torch_devices())
def test_torch_bfloat16_tensors(device: str):
    import torch

    module = feature_kernels("types")
    n = 300
    values = torch.linspace(-50, 50, n, dtype=torch.float32).to(torch.bfloat16).to(device)
    factor = 1.0 + 2.0**-7
    out = torch.zeros(n, dtype=torch.bfloat16, device=device)
    module.scale_bf16[320, 64](out, values, factor, kdsl.local(64, "bf16"), n)
    if device == "cuda":
        torch.cuda.synchronize()
    # PyTorch's bfloat16 arithmetic also computes in f32 and rounds to nearest even.
    product = (values.float() * torch.tensor(factor, dtype=torch.bfloat16).float()).to(torch.bfloat16)
    expected = (product.float() + 1).to(torch.bfloat16)
    assert torch.equal(out.cpu().view(torch.int16), expected.cpu().view(torch.int16))
    wrong = torch.zeros(n, dtype=torch.int16, device=device)
    message = expect_argument_type(lambda: module.fill_bf16[320, 64](wrong, 1.0, n))
    assert "bf16" in message, message


def test_two_dimensional_bfloat16_views():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    module = feature_kernels("types")
    matrix = np.arange(6 * 10, dtype=np.float32).reshape(6, 10).astype(ml_dtypes.bfloat16)
    view = matrix.T  # strides (1, 10): no copy needed
    output = np.zeros(view.shape, ml_dtypes.bfloat16)
    module.double2d_bf16[(6, 10), None](output, view)
    expected = (view.astype(np.float32) * 2).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(output.view(np.uint16), expected.view(np.uint16))
    bits = np.zeros(view.shape, np.uint16)
    message = expect_argument_type(lambda: module.double2d_bf16[(6, 10), None](bits, view))
    assert "bf16" in message, message
