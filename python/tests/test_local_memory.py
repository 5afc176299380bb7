"""Local memory sized at launch: ``local mut [T]`` parameters take ``kdsl.local(length, dtype)``
(like dpctl's ``LocalAccessor``), on every array kind here; too much local memory is a
``LaunchError`` after which the process keeps launching."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import example

import kdsl

RNG = np.random.default_rng(11)


def group_sums(values: np.ndarray, group: int) -> list[float]:
    return [values[g : g + group].sum(dtype=np.float64) for g in range(0, len(values), group)]


@pytest.mark.parametrize("group", [32, 128])
def test_reduction_with_launch_sized_scratch(kind, group):
    n = 3000
    values = RNG.standard_normal(n).astype(np.float32)
    groups = (n + group - 1) // group
    partial = kind.to_device(np.zeros(groups, np.float32))
    kernel = example("reduction_sized").reduce_sum_sized
    kernel[groups * group, group](partial, kind.to_device(values), kdsl.local(group, "f32"), n).wait()
    np.testing.assert_allclose(kind.to_numpy(partial), group_sums(values, group), rtol=1e-4, atol=1e-4)


def test_local_takes_numpy_dtypes():
    assert kdsl.local(8, np.float32) == kdsl.local(8, "f32")
    assert kdsl.local(8, np.dtype("int64")).dtype == "i64"
    assert kdsl.local(8, "uint16").dtype == "u16"
    assert kdsl.local(8, "f64").length == 8
    assert repr(kdsl.local(3, "f32")) == "kdsl.local(3, 'f32')"
    for bad_type in ("bool", "complex64", object, "half-float"):
        with pytest.raises(kdsl.ArgumentError):
            kdsl.local(8, bad_type)
    for bad_length in (0, -1, 2.0, True, "8"):
        with pytest.raises(kdsl.ArgumentError):
            kdsl.local(bad_length, "f32")


def test_parameter_describes_local_memory():
    kernel = example("reduction_sized").reduce_sum_sized
    scratch = kernel.parameters[2]
    assert (scratch.kind, scratch.type, scratch.space, scratch.writable) == ("local", "f32", "local", True)
    assert str(scratch) == "scratch: local mut [f32]"
    assert 'kdsl.local(length, "f32")' in kernel.__doc__


def test_too_much_local_memory_is_a_launch_error(kind):
    n = 256
    values = RNG.standard_normal(n).astype(np.float32)
    partial = kind.to_device(np.zeros(4, np.float32))
    kernel = example("reduction_sized").reduce_sum_sized
    with pytest.raises(kdsl.LaunchError) as raised:
        kernel[n, 64](partial, kind.to_device(values), kdsl.local(1 << 28, "f32"), n)
    assert raised.value.kind == "LocalMemoryExceeded"
    assert "`scratch` 1073741824 bytes" in str(raised.value)
    assert "the device has" in str(raised.value)
    # The process and the device stay usable: the same launch with a fitting size works.
    kernel[n, 64](partial, kind.to_device(values), kdsl.local(64, "f32"), n).wait()
    np.testing.assert_allclose(kind.to_numpy(partial), group_sums(values, 64), rtol=1e-4, atol=1e-4)


def test_wrong_local_arguments_are_argument_errors():
    values = np.ones(64, np.float32)
    partial = np.zeros(1, np.float32)
    kernel = example("reduction_sized").reduce_sum_sized
    for wrong in (64, kdsl.local(64, "f64"), np.zeros(64, np.float32)):
        with pytest.raises(kdsl.ArgumentError) as raised:
            kernel[64, 64](partial, values, wrong, 64)
        assert raised.value.kind == "ArgumentType"
        assert "`scratch`" in str(raised.value)


# Vector stores and loads on launch-sized local memory; `pad` (3 bytes) puts `staging` at the
# next 16-byte boundary, which `vload4` needs.
STAGED_PAIRS = """
kernel staged_pairs(out: global mut [f32], x: global [f32], pad: local mut [u8], staging: local mut [f32]) {
    let i = get_local_id(0);
    let pair = get_global_id(0);
    if i < 3 { pad[i] = 1u8; }
    vstore2(staging, i, f32x2(2.0 * x[2 * pair], 2.0 * x[2 * pair + 1]));
    barrier();
    let half = get_local_size(0) / 2;
    if i < half {
        vstore4(out, get_group_id(0) * half + i, vload4(staging, i));
    }
}
"""


def test_vectors_on_launch_sized_local_memory(kind):
    group, groups = 64, 5
    values = RNG.standard_normal(2 * group * groups).astype(np.float32)
    out = kind.to_device(np.zeros_like(values))
    kernel = kdsl.compile(source=STAGED_PAIRS).staged_pairs
    kernel[group * groups, group](out, kind.to_device(values), kdsl.local(3, "u8"), kdsl.local(2 * group, "f32")).wait()
    np.testing.assert_array_equal(kind.to_numpy(out), 2 * values)
