"""Every misuse raises its own exception type before anything runs, and the process (and the
device's queue) stays usable afterwards."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_still_usable, example, feature_kernels, has_module, needs_shapes, sycl_available

import kdsl


def saxpy_arrays(n: int = 100):
    return np.ones(n, np.float32), np.arange(n, dtype=np.float32)


def expect(error_type, kind, call):
    with pytest.raises(error_type) as raised:
        call()
    assert raised.value.kind == kind, (raised.value.kind, str(raised.value))
    assert isinstance(raised.value, kdsl.Error)
    assert_still_usable()
    return raised.value


def test_wrong_element_type():
    y, _ = saxpy_arrays()
    error = expect(
        kdsl.ArgumentError,
        "ArgumentType",
        lambda: example("saxpy").saxpy[128, 128](y, np.arange(100, dtype=np.float64), 2.0, 100),
    )
    assert "argument 1 (`x`)" in str(error) and "float64" in str(error)


def test_not_contiguous():
    y, _ = saxpy_arrays()
    strided = np.arange(200, dtype=np.float32)[::2]
    error = expect(
        kdsl.ArgumentError, "NotContiguous", lambda: example("saxpy").saxpy[128, 128](y, strided, 2.0, 100)
    )
    assert "ascontiguousarray" in str(error)


def test_read_only_array_for_mut_parameter():
    y, x = saxpy_arrays()
    y.flags.writeable = False
    expect(kdsl.ArgumentError, "ReadOnlyArray", lambda: example("saxpy").saxpy[128, 128](y, x, 2.0, 100))


def test_same_array_twice_is_aliasing():
    y, _ = saxpy_arrays()
    expect(kdsl.ArgumentError, "AliasedBuffers", lambda: example("saxpy").saxpy[128, 128](y, y, 2.0, 100))


def test_overlapping_views_are_aliasing():
    data = np.ones(150, np.float32)
    expect(
        kdsl.ArgumentError,
        "AliasedBuffers",
        lambda: example("saxpy").saxpy[128, 128](data[:100], data[50:], 2.0, 100),
    )


@pytest.mark.skipif(not (has_module("dpnp") and sycl_available()), reason="dpnp or SYCL absent")
def test_dpnp_array_twice_is_aliasing():
    import dpnp

    y = dpnp.ones(100, dtype=dpnp.float32)
    expect(kdsl.ArgumentError, "AliasedBuffers", lambda: example("saxpy").saxpy[128, 128](y, y, 2.0, 100))


@pytest.mark.skipif(not (has_module("dpnp") and sycl_available()), reason="dpnp or SYCL absent")
def test_arrays_on_different_devices():
    import dpnp

    y = dpnp.ones(100, dtype=dpnp.float32)
    _, x = saxpy_arrays()
    error = expect(
        kdsl.ArgumentError, "DifferentDevices", lambda: example("saxpy").saxpy[128, 128](y, x, 2.0, 100)
    )
    assert "one device" in str(error)


@pytest.mark.parametrize("n", [-1, 2**32])
def test_int_out_of_range_for_u32(n):
    y, x = saxpy_arrays()
    error = expect(
        kdsl.ArgumentError, "ScalarOutOfRange", lambda: example("saxpy").saxpy[128, 128](y, x, 2.0, n)
    )
    assert "u32" in str(error) and str(n) in str(error)


def test_float_for_int_parameter():
    y, x = saxpy_arrays()
    expect(kdsl.ArgumentError, "ArgumentType", lambda: example("saxpy").saxpy[128, 128](y, x, 2.0, 100.0))


def test_string_for_float_parameter():
    y, x = saxpy_arrays()
    expect(kdsl.ArgumentError, "ArgumentType", lambda: example("saxpy").saxpy[128, 128](y, x, "2", 100))


def test_float_out_of_range_for_f32():
    y, x = saxpy_arrays()
    expect(kdsl.ArgumentError, "ScalarOutOfRange", lambda: example("saxpy").saxpy[128, 128](y, x, 1e300, 100))


def test_not_an_array():
    _, x = saxpy_arrays()
    expect(kdsl.ArgumentError, "ArgumentType", lambda: example("saxpy").saxpy[128, 128]("abc", x, 2.0, 100))


def test_wrong_argument_count():
    y, x = saxpy_arrays()
    error = expect(kdsl.ArgumentError, "ArgumentCount", lambda: example("saxpy").saxpy[128, 128](y, x, 2.0))
    assert "takes 4 arguments" in str(error)
    # Fewer arguments than array parameters: counted before the arrays are read.
    error = expect(kdsl.ArgumentError, "ArgumentCount", lambda: example("saxpy").saxpy[128, 128](y))
    assert "but 1 were given" in str(error)


def test_global_not_multiple_of_local():
    y, x = saxpy_arrays()
    error = expect(kdsl.LaunchError, "BadLaunch", lambda: example("saxpy").saxpy[100, 64](y, x, 2.0, 100))
    assert "not a multiple" in str(error)


TILE_PER_SUB_GROUP = """
kernel tile_per_sub_group(d: global mut [f32], a: global [f16], b: global [f16]) {
    let mut acc: [f32; 256];
    let mut a_tile: [f16; 256];
    let mut b_tile: [f16; 256];
    matrix_fill(acc, 1.0);
    matrix_load_a(a_tile, a, 0, 16);
    matrix_load_b(b_tile, b, 0, 16);
    matrix_mma(acc, a_tile, b_tile, acc);
    let sub_group = get_group_id(0) * get_num_sub_groups() + get_sub_group_id();
    matrix_store(acc, d, sub_group * 256, 16);
}
"""


def test_tiles_need_whole_sub_groups():
    # Matrix units and the plain SPIR-V layout compute a tile with whole sub-groups only
    # (16 lanes on SPIR-V, 32 on NVIDIA, 32 or 64 on AMD): 8 work-items are never whole.
    module = kdsl.compile(source=TILE_PER_SUB_GROUP)
    a = (np.arange(256) % 5 - 2).astype(np.float16)
    b = (np.arange(256) % 3 - 1).astype(np.float16)
    d = np.zeros(16 * 256, np.float32)
    error = expect(kdsl.LaunchError, "BadLaunch", lambda: module.tile_per_sub_group[24, 8](d, a, b))
    assert "whole sub-groups" in str(error), str(error)
    # Without a local size the runtime picks whole sub-groups.
    module.tile_per_sub_group[64](d, a, b)
    expected = 1.0 + a.astype(np.float32).reshape(16, 16) @ b.astype(np.float32).reshape(16, 16)
    np.testing.assert_array_equal(d[:256].reshape(16, 16), expected)


@pytest.mark.parametrize(
    "sizes",
    [(100.0, 50), (100, 50.0), (True, 1), ((100, 1.0), (50, 1)), (2**64, 64), (-1, 1), ("100", 50)],
    ids=["float-global", "float-local", "bool", "float-in-tuple", "2^64", "negative", "str"],
)
def test_launch_sizes_must_be_ints(sizes):
    # Refused the same whether or not an equal int size was launched before (the configured
    # launches are cached by their sizes, and 100.0 == 100), never as a bare OverflowError.
    y, x = saxpy_arrays()
    module = example("saxpy")
    module.saxpy[100, 50](y, x, 2.0, 100)
    module.saxpy[(100, 1), (50, 1)](y, x, 2.0, 100)
    expect(kdsl.LaunchError, "BadLaunch", lambda: module.saxpy[sizes](y, x, 2.0, 100))
    expect(kdsl.LaunchError, "BadLaunch", lambda: module.saxpy(y, x, 2.0, 100, global_size=sizes[0], local_size=sizes[1]))


def test_work_group_too_large():
    y, x = saxpy_arrays()
    limit = kdsl.default_device().info()["max_work_group_size"]
    expect(kdsl.LaunchError, "BadLaunch", lambda: example("saxpy").saxpy[limit * 2, limit * 2](y, x, 2.0, 100))


def test_four_dimensions():
    y, x = saxpy_arrays()
    expect(kdsl.LaunchError, "BadLaunch", lambda: example("saxpy").saxpy[(1, 1, 1, 1), (1, 1, 1, 1)](y, x, 2.0, 1))


def test_missing_global_size():
    y, x = saxpy_arrays()
    expect(kdsl.LaunchError, "BadLaunch", lambda: example("saxpy").saxpy(y, x, 2.0, 100))


def test_missing_kernel():
    module = example("saxpy")
    error = expect(kdsl.KernelNotFoundError, "KernelNotFound", lambda: module["saxpi"])
    assert "saxpy" in str(error)
    expect(kdsl.KernelNotFoundError, "KernelNotFound", lambda: module.saxpi)
    assert not hasattr(module, "saxpi")


def test_bad_device_filter():
    y, x = saxpy_arrays()
    expect(kdsl.DeviceError, "BadFilter", lambda: example("saxpy").saxpy[128, 128](y, x, 2.0, 100, device="gpu:first"))


def test_no_matching_device():
    expect(kdsl.DeviceError, "NoMatchingDevice", lambda: kdsl.Device("hip:7"))


def test_not_a_bundle(tmp_path):
    path = tmp_path / "not.kbundle"
    path.write_bytes(b"hello, this is not a bundle")
    expect(kdsl.BundleError, "Bundle", lambda: kdsl.load(path))


def test_missing_bundle_file(tmp_path):
    expect(kdsl.BundleError, "Bundle", lambda: kdsl.load(tmp_path / "missing.kbundle"))


def test_scalar_types_convert_by_signature():
    module = feature_kernels("types")
    out = np.zeros(10, np.int8)
    module.fill_i8[16, 16](out, -128, 10)
    np.testing.assert_array_equal(out, -128)
    expect(kdsl.ArgumentError, "ScalarOutOfRange", lambda: module.fill_i8[16, 16](out, 128, 10))
    out = np.zeros(10, np.uint16)
    module.fill_u16[16, 16](out, 65535, 10)
    np.testing.assert_array_equal(out, 65535)
    out = np.zeros(10, np.int64)
    module.fill_i64[16, 16](out, -(2**63), 10)
    np.testing.assert_array_equal(out, -(2**63))
    out = np.zeros(10, np.uint64)
    module.fill_u64[16, 16](out, 2**64 - 1, 10)
    np.testing.assert_array_equal(out, 2**64 - 1)
    expect(kdsl.ArgumentError, "ScalarOutOfRange", lambda: module.fill_u64[16, 16](out, 2**64, 10))
    out = np.zeros(10, np.float64)
    module.fill_f64[16, 16](out, 1e300, np.uint32(10))
    np.testing.assert_array_equal(out, 1e300)


def test_f16_scalars_from_python_and_numpy():
    module = feature_kernels("types")
    out = np.zeros(10, np.float16)
    module.fill_f16[16, 16](out, np.float16(-2.5), 10)
    np.testing.assert_array_equal(out, np.float16(-2.5))
    module.fill_f16[16, 16](out, 0.1, 10)  # rounded once to the nearest f16
    np.testing.assert_array_equal(out, np.float16(0.1))
    module.fill_f16[16, 16](out, 65504, 10)
    np.testing.assert_array_equal(out, np.float16(65504))
    expect(kdsl.ArgumentError, "ScalarOutOfRange", lambda: module.fill_f16[16, 16](out, 1e5, 10))
    expect(kdsl.ArgumentError, "ArgumentType", lambda: module.fill_f16[16, 16](out, True, 10))


def test_dimension_zero_is_fastest():
    width, height = 24, 10
    out = np.zeros(width * height, np.uint32)
    feature_kernels("types").dimension_order[(width, height), (8, 2)](out, width)
    ids = out.reshape(height, width)
    x, y = np.meshgrid(np.arange(width), np.arange(height))
    np.testing.assert_array_equal(ids, x + 1000 * y)


def test_without_a_local_size_the_backend_chooses(kind):
    """No local size: the device (SYCL) or the runtime (CUDA, HIP) picks the work-group size,
    and the launch covers exactly the global size, prime sizes and 2-D ones too."""
    width, height = 37, 23
    out = kind.to_device(np.zeros(width * height, np.uint32))
    feature_kernels("types").dimension_order[(width, height), None](out, width)
    x, y = np.meshgrid(np.arange(width), np.arange(height))
    np.testing.assert_array_equal(kind.to_numpy(out).reshape(height, width), x + 1000 * y)
    saxpy = example("saxpy").saxpy
    for n in (997, 1000):
        y_values = kind.to_device(np.ones(n, np.float32))
        saxpy[n](y_values, kind.to_device(np.full(n, 2.0, np.float32)), 3.0, n)
        np.testing.assert_array_equal(kind.to_numpy(y_values), 7.0)
        saxpy(y_values, kind.to_device(np.ones(n, np.float32)), 1.0, n, global_size=n)
        np.testing.assert_array_equal(kind.to_numpy(y_values), 8.0)


def test_dlpack_capsules_are_read_both_ways():
    """The DLPack reader the CUDA/ROCm path uses, on NumPy's capsules (1.x and legacy)."""
    from kdsl import _runtime

    array = np.arange(12, dtype=np.float32).reshape(3, 4)[1:]
    for capsule in (array.__dlpack__(max_version=(1, 0)), array.__dlpack__()):
        tensor = _runtime.dlpack_tensor(capsule)
        assert tensor["address"] == array.__array_interface__["data"][0]
        assert (tensor["device_type"], tensor["typestr"], tensor["shape"]) == (1, "f4", [2, 4])
        assert tensor["strides"] in (None, [4, 1])
        assert tensor["read_only"] is False
    frozen = array.copy()
    frozen.flags.writeable = False
    assert _runtime.dlpack_tensor(frozen.__dlpack__(max_version=(1, 0)))["read_only"] is True
    with pytest.raises(TypeError):
        _runtime.dlpack_tensor(object())


class OnlyDlpack:
    """An array that offers nothing but DLPack (like a JAX array)."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def test_dlpack_only_host_arrays():
    y, x = saxpy_arrays()
    example("saxpy").saxpy[128, 128](OnlyDlpack(y), OnlyDlpack(x), 2.0, 100)
    np.testing.assert_array_equal(y, 1.0 + 2.0 * x)


WRITE_PAST = """
kernel write_past(output: global mut [u32], offset: u32) {
    let i = get_global_id(0);
    output[i + offset] = i + 1;
}
"""


@pytest.mark.parametrize("array_kind", ["numpy", "dpnp"])
def test_checked_mode_reports_an_out_of_bounds_write(array_kind):
    if array_kind == "dpnp" and not (has_module("dpnp") and sycl_available()):
        pytest.skip("dpnp or a SYCL device is missing")
    module = kdsl.compile(source=WRITE_PAST, targets=["spirv", "ptx"], checked=True)
    unchecked = kdsl.compile(source=WRITE_PAST, targets=["spirv", "ptx"])
    assert module is not unchecked
    if array_kind == "dpnp":
        import dpnp

        output = dpnp.zeros(64, dtype=dpnp.uint32)
        event = module.write_past[64, 64](output, 1)
        error = expect(kdsl.LaunchError, "KernelFault", event.wait)
        result = dpnp.asnumpy(output)
    else:
        output = np.zeros(64, np.uint32)
        error = expect(kdsl.LaunchError, "KernelFault", lambda: module.write_past[64, 64](output, 1))
        result = None
    message = str(error)
    assert "write_past" in message and "<source>:4:5" in message, message
    assert "index 64" in message and "length 64" in message, message
    assert "(63, 0, 0)" in message, message
    if result is not None:
        # Every write inside the buffer happened; the one past it was skipped.
        np.testing.assert_array_equal(result[1:], np.arange(1, 64, dtype=np.uint32))
    # The same kernel inside its bounds runs without a fault.
    inside = np.zeros(64, np.uint32)
    module.write_past[63, 63](inside, 1)
    np.testing.assert_array_equal(inside[1:], np.arange(1, 64, dtype=np.uint32))


def test_kernels_with_local_memory_keep_a_power_of_two_group_without_a_local_size(kind):
    """examples/matmul.krn stages 16 x 16 tiles in local arrays: without a local size it gets
    16 x 16 groups on every device (not the device's choice), so it stays correct."""
    needs_shapes(kind)
    m, n, k = 48, 64, 40
    rng = np.random.default_rng(3)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = kind.to_device(np.zeros((m, n), np.float32))
    example("matmul").matmul[(n, m), None](c, kind.to_device(a), kind.to_device(b))
    np.testing.assert_allclose(kind.to_numpy(c), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
