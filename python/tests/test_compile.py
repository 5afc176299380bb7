"""kdsl.compile, the on-disk cache, kdsl.load, module and kernel signatures, to_dpctl."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from conftest import EXAMPLES, example, has_module, needs_compiler, sycl_available, sycl_cuda_available

import kdsl

SAXPY = (EXAMPLES / "saxpy.krn").read_text()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("KDSL_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_signature_and_local_memory():
    module = example("saxpy")
    kernel = module.saxpy
    assert module["saxpy"] is kernel
    assert "saxpy" in module and [k.name for k in module] == ["saxpy"]
    assert kernel.signature == "saxpy(y: global mut [f32], x: global [f32], a: f32, n: u32)"
    assert kernel.parameters[0] == kdsl.Parameter("y", "buffer", "f32", True, "global")
    assert kernel.parameters[3] == kdsl.Parameter("n", "scalar", "u32", False, None)
    assert kernel.local_memory_bytes == 0
    assert example("histogram").histogram.local_memory_bytes == 256 * 4
    assert example("reduction").reduce_sum.local_memory_bytes == 256 * 4


def test_default_targets_give_every_image():
    images = example("saxpy").image_names
    assert images[0] == "spirv"
    assert any(name.startswith("ptx:") for name in images) and "ptx:sm_90" in images
    assert any(name.startswith("amdgpu:") for name in images)


@needs_compiler
def test_default_targets_match_the_compiler():
    from kdsl import _compiler

    assert list(kdsl.DEFAULT_TARGETS) == _compiler.default_targets()


# Targets that every device the tests launch on runs: the SYCL CPU device and CUDA GPUs.
RUNNABLE = ["spirv", "ptx"]


@needs_compiler
def test_second_compile_comes_from_the_cache(cache):
    first = kdsl.compile(source=SAXPY, targets=["spirv"])
    assert not first.from_cache
    entries = list(cache.glob("*.kbundle"))
    assert len(entries) == 1
    second = kdsl.compile(source=SAXPY, targets=["spirv"])
    assert second.from_cache
    assert second.to_bytes() == first.to_bytes()
    # Other options are other entries.
    assert not kdsl.compile(source=SAXPY, targets=["spirv", "ptx:sm_90"]).from_cache
    assert not kdsl.compile(source=SAXPY, targets=["spirv"], opt_level=2).from_cache
    assert not kdsl.compile(source=SAXPY + "\n// changed\n", targets=["spirv"]).from_cache
    assert len(list(cache.glob("*.kbundle"))) == 4
    assert kdsl.clear_cache() == 4


@needs_compiler
def test_cache_works_without_the_compiler(cache, tmp_path):
    """A process that cannot import kdsl._compiler (as on a machine without LLVM) still
    compiles what is cached, and gets CompilerUnavailableError for what is not."""
    kdsl.compile(source=SAXPY, targets=RUNNABLE)
    script = textwrap.dedent(
        f"""
        import sys
        sys.modules["kdsl._compiler"] = None          # importing it now raises ImportError
        import kdsl, numpy as np
        module = kdsl.compile(source={SAXPY!r}, targets={RUNNABLE!r})
        assert module.from_cache
        y = np.ones(10, np.float32)
        module.saxpy[16, 16](y, np.ones(10, np.float32), 2.0, 10)
        assert (y == 3.0).all(), y
        try:
            kdsl.compile(source={SAXPY!r} + "// not cached", targets={RUNNABLE!r})
        except kdsl.CompilerUnavailableError as error:
            assert isinstance(error, kdsl.CompileError) and "not available" in str(error), error
            print("unavailable:", error)
        else:
            raise SystemExit("compiled without a compiler")
        print("ok")
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=dict(os.environ))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().endswith("ok")


@needs_compiler
def test_a_cache_entry_holding_another_sources_bundle_is_not_used(cache):
    # Another source's (valid) bundle under this source's key ran in its place.
    kdsl.compile(source=SAXPY, targets=["spirv"])
    (saxpy_entry,) = cache.glob("*.kbundle")
    other = kdsl.compile(path=EXAMPLES / "transpose.krn", targets=["spirv"])
    (other_entry,) = set(cache.glob("*.kbundle")) - {saxpy_entry}
    saxpy_entry.write_bytes(other_entry.read_bytes())
    module = kdsl.compile(source=SAXPY, targets=["spirv"])
    assert not module.from_cache and list(module.kernels) == ["saxpy"]
    assert kdsl.compile(source=SAXPY, targets=["spirv"]).from_cache
    assert list(other.kernels) == ["transpose"]
    assert kdsl.compile(path=EXAMPLES / "transpose.krn", targets=["spirv"]).from_cache


@needs_compiler
def test_damaged_cache_entry_is_recompiled(cache):
    kdsl.compile(source=SAXPY, targets=["spirv"])
    (entry,) = cache.glob("*.kbundle")
    entry.write_bytes(b"garbage")
    module = kdsl.compile(source=SAXPY, targets=["spirv"])
    assert not module.from_cache and module.saxpy.name == "saxpy"


@needs_compiler
def test_compile_error_is_a_rendered_report(cache, tmp_path):
    path = tmp_path / "broken.krn"
    path.write_text("kernel k(out: global mut [f32]) {\n    out[0] = 1u32;\n}\n")
    with pytest.raises(kdsl.CompileError) as raised:
        kdsl.compile(path=path)
    report = str(raised.value)
    assert f"{path}:2:14" in report, report
    assert "error[E0301]" in report and "hint:" in report
    (diagnostic,) = raised.value.diagnostics
    assert (diagnostic["code"], diagnostic["line"], diagnostic["column"]) == ("E0301", 2, 14)
    assert not list(cache.glob("*.kbundle"))


@needs_compiler
def test_every_error_of_a_file_is_reported():
    source = (EXAMPLES.parent / "tests" / "errors" / "several_errors.krn").read_text()
    with pytest.raises(kdsl.CompileError) as raised:
        kdsl.compile(source=source, targets=["spirv"])
    assert len(raised.value.diagnostics) > 1
    assert str(raised.value).count("error[") == len(raised.value.diagnostics)


SCALED = """
const SCALE: f32 = 1.0;
const OFFSET: u32 = 0;
kernel scaled(out: global mut [f32], n: u32) {
    let i = get_global_id(0);
    if i < n { out[i] = SCALE * ((i + OFFSET) as f32); }
}
"""


@needs_compiler
def test_defines_set_module_constants(cache):
    plain = kdsl.compile(source=SCALED, targets=RUNNABLE)
    defined = kdsl.compile(source=SCALED, targets=RUNNABLE, defines={"SCALE": 0.5, "OFFSET": 10})
    assert not defined.from_cache  # the defines are part of the cache key
    assert kdsl.compile(source=SCALED, targets=RUNNABLE, defines={"OFFSET": 10, "SCALE": 0.5}).from_cache
    out = np.zeros(8, np.float32)
    plain.scaled[8, 8](out, 8)
    np.testing.assert_array_equal(out, np.arange(8))
    defined.scaled[8, 8](out, 8)
    np.testing.assert_array_equal(out, 0.5 * (np.arange(8) + 10))


@needs_compiler
def test_required_work_group_size(cache):
    source = """
#[work_group_size(64)]
kernel group_ids(out: global mut [u32]) {
    out[get_global_id(0)] = get_local_id(0);
}
"""
    kernel = kdsl.compile(source=source, targets=RUNNABLE).group_ids
    assert kernel.work_group_size == (64, 1, 1)
    out = np.zeros(256, np.uint32)
    kernel[256](out)  # no local size: the required one
    np.testing.assert_array_equal(out, np.arange(256) % 64)
    with pytest.raises(kdsl.LaunchError) as raised:
        kernel[256, 128](out)
    assert raised.value.kind == "BadLaunch" and "64" in str(raised.value)


@needs_compiler
def test_bad_defines_are_compile_errors():
    with pytest.raises(kdsl.CompileError) as raised:
        kdsl.compile(source=SCALED, targets=["spirv"], defines={"SCALE": "true"})
    assert raised.value.diagnostics, str(raised.value)
    with pytest.raises(kdsl.CompileError) as raised:
        kdsl.compile(source=SCALED, targets=["spirv"], defines={"MISSING": 1})
    assert "MISSING" in str(raised.value)
    with pytest.raises(kdsl.CompileError) as raised:
        kdsl.compile(source=SCALED, targets=["spirv"], defines={"SCALE": [1]})
    assert raised.value.kind == "BadDefine"


def test_bad_arguments():
    with pytest.raises(kdsl.CompileError):
        kdsl.compile()
    with pytest.raises(kdsl.CompileError):
        kdsl.compile(source=SAXPY, path="saxpy.krn")
    with pytest.raises(kdsl.CompileError) as raised:
        kdsl.compile(source=SAXPY, targets=["metal"])
    assert raised.value.kind == "BadTarget"
    with pytest.raises(kdsl.CompileError) as raised:
        kdsl.compile(path="/nonexistent/file.krn")
    assert raised.value.kind == "Io"


@pytest.mark.parametrize("targets", ["ptx:sm_90\0", ["spirv", "amdgpu:gfx\090a"], "spirv\0", [3], 7])
def test_bad_targets_are_compile_errors(targets):
    # A NUL byte used to reach the compiler and surface as a PanicException.
    with pytest.raises(kdsl.CompileError) as raised:
        kdsl.compile(source=SAXPY, targets=targets, cache=False)
    assert raised.value.kind == "BadTarget"


@pytest.mark.parametrize("opt_level", [-1, 4, 7, 300, 2**70, 2.0, True, "3"])
def test_opt_level_outside_0_to_3_is_a_compile_error(opt_level):
    # 7 was accepted silently and 300 raised a bare OverflowError.
    with pytest.raises(kdsl.CompileError) as raised:
        kdsl.compile(source=SAXPY, opt_level=opt_level, cache=False)
    assert raised.value.kind == "BadOptLevel"


def test_save_and_load(tmp_path):
    module = example("saxpy")
    path = tmp_path / "saxpy.kbundle"
    module.save(path)
    loaded = kdsl.load(path)
    assert loaded.saxpy.signature == module.saxpy.signature
    y = np.ones(10, np.float32)
    loaded.saxpy[16, 16](y, np.full(10, 2.0, np.float32), 0.5, 10)
    np.testing.assert_array_equal(y, 2.0)


def test_devices_and_notes():
    found = kdsl.devices()
    assert found, kdsl.device_notes()
    for info in found:
        assert info.id == f"{info.backend}:{info.index}"
        assert info.target
        # What `kdsl devices` prints: the sub-group sizes a kernel's collectives may see.
        assert info.sub_group_sizes and all(size >= 1 for size in info.sub_group_sizes), info
    device = found[0].open()
    assert device.id == found[0].id and device.label.startswith(found[0].id)
    assert isinstance(kdsl.device_notes(), list)


def test_device_argument_selects_the_device():
    info = kdsl.devices()[0]
    y = np.ones(10, np.float32)
    event = example("saxpy").saxpy[16, 16](y, np.ones(10, np.float32), 1.0, 10, device=info.id)
    assert event.is_complete and event.elapsed_ns > 0
    np.testing.assert_array_equal(y, 2.0)
    example("saxpy").saxpy(y, np.ones(10, np.float32), 1.0, 10, global_size=10, device=kdsl.Device(info.id))
    np.testing.assert_array_equal(y, 3.0)


def test_launch_sizes():
    # No local size: left open for the backend (SYCL devices choose; CUDA/HIP a divisor).
    assert kdsl.launch_sizes(1000, None) == ([1000], [])
    assert kdsl.launch_sizes((64, 48), None) == ([64, 48], [])
    assert kdsl.launch_sizes((64, 48), None, (8, 4, 1)) == ([64, 48], [8, 4])
    assert kdsl.launch_sizes((64, 48), (16, 4)) == ([64, 48], [16, 4])


@pytest.mark.parametrize(
    "queue_filter",
    [
        pytest.param(None, id="default-queue"),
        pytest.param(
            "cuda:gpu",
            id="sycl-cuda",
            marks=pytest.mark.skipif(not sycl_cuda_available(), reason="no SYCL CUDA device (docs/sycl-cuda.md)"),
        ),
    ],
)
@pytest.mark.skipif(not (has_module("dpctl") and sycl_available()), reason="dpctl or SYCL absent")
def test_to_dpctl_runs_with_reversed_ranges(queue_filter):
    import ctypes

    import dpctl
    import dpctl.memory

    queue = dpctl.SyclQueue(queue_filter, property="in_order") if queue_filter else dpctl.SyclQueue(property="in_order")
    kernels = example("transpose").to_dpctl(queue)
    height, width = 32, 48
    source = np.random.default_rng(1).standard_normal((height, width)).astype(np.float32)
    input_memory = dpctl.memory.MemoryUSMDevice(source.nbytes, queue=queue)
    input_memory.copy_from_host(source.view(np.uint8).reshape(-1))
    output_memory = dpctl.memory.MemoryUSMDevice(source.nbytes, queue=queue)
    # A 2-D array parameter is its memory followed by the hidden shape (u32 per dimension) and
    # strides (u64, in elements), which kdsl's own launches supply and a dpctl caller passes.
    def shaped(memory, rows, columns):
        return [memory, ctypes.c_uint32(rows), ctypes.c_uint32(columns), ctypes.c_uint64(columns), ctypes.c_uint64(1)]

    # kdsl's launch is [(width, height), (16, 16)]: dpctl takes it slowest dimension first.
    queue.submit(
        kernels["transpose"],
        shaped(output_memory, width, height) + shaped(input_memory, height, width),
        [height, width],
        [16, 16],
    ).wait()
    result = np.frombuffer(output_memory.copy_to_host().tobytes(), np.float32).reshape(width, height)
    np.testing.assert_array_equal(result, source.T)


@pytest.mark.skipif(not (has_module("dpctl") and sycl_available()), reason="dpctl or SYCL absent")
def test_to_dpctl_takes_local_accessors_for_launch_sized_arrays():
    """On a SPIR-V device a `local mut [T]` parameter is one local argument: dpctl's
    `LocalAccessor` of the length."""
    import ctypes

    import dpctl
    import dpctl.memory

    queue = dpctl.SyclQueue(property="in_order")
    kernel = example("reduction_sized").to_dpctl(queue)["reduce_sum_sized"]
    n, group = 1000, 64
    groups = (n + group - 1) // group
    values = np.random.default_rng(2).standard_normal(n).astype(np.float32)
    input_memory = dpctl.memory.MemoryUSMDevice(values.nbytes, queue=queue)
    input_memory.copy_from_host(values.view(np.uint8))
    partial_memory = dpctl.memory.MemoryUSMDevice(groups * 4, queue=queue)
    arguments = [partial_memory, input_memory, dpctl.LocalAccessor("f4", (group,)), ctypes.c_uint32(n)]
    queue.submit(kernel, arguments, [groups * group], [group]).wait()
    partial = np.frombuffer(partial_memory.copy_to_host().tobytes(), np.float32)
    want = [values[g : g + group].sum(dtype=np.float64) for g in range(0, n, group)]
    np.testing.assert_allclose(partial, want, rtol=1e-4, atol=1e-4)


@pytest.mark.skipif(not (has_module("dpctl") and sycl_available()), reason="dpctl or SYCL absent")
def test_to_dpctl_refuses_checked_modules():
    import dpctl

    module = kdsl.compile(path=EXAMPLES / "saxpy.krn", checked=True)
    with pytest.raises(kdsl.BundleError) as raised:
        module.to_dpctl(dpctl.SyclQueue())
    assert raised.value.kind == "CheckedMode"
    assert "hidden parameters" in str(raised.value)


def test_import_without_a_loadable_sycl_runtime(tmp_path):
    """Where the SYCL shim (or libsycl) cannot be loaded, `import kdsl` works and discovery
    gives a note instead of failing."""
    script = "import kdsl; print([d.id for d in kdsl.devices() if d.backend == 'sycl']); print(kdsl.device_notes())"
    env = dict(os.environ, KDSL_SYCL_SHIM=str(tmp_path / "missing" / "libkdsl_sycl_shim.so"))
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    sycl_ids, notes = result.stdout.strip().splitlines()
    assert sycl_ids == "[]"
    assert "SYCL" in notes and "could not be loaded" in notes, notes


@pytest.mark.skipif(not (has_module("dpctl") and sycl_available()), reason="dpctl or SYCL absent")
def test_numpy_arrays_on_a_given_queue():
    import dpctl

    queue = dpctl.SyclQueue(property=["in_order", "enable_profiling"])
    y = np.ones(100, np.float32)
    event = example("saxpy").saxpy(y, np.full(100, 2.0, np.float32), 3.0, 100, global_size=128, queue=queue)
    np.testing.assert_array_equal(y, 7.0)
    assert event.elapsed_ns > 0


BIG_LOCAL = textwrap.dedent(
    """
    kernel big(out: global mut [f32]) {
        local tile: [f32; 32768];
        tile[get_local_id(0)] = 1.0;
        barrier();
        out[get_global_id(0)] = tile[0];
    }
    """
)


@needs_compiler
def test_default_targets_a_kernel_does_not_fit_are_skipped_with_a_warning(cache):
    # 128 KiB of local memory: fine for SPIR-V devices, more than NVIDIA and AMD GPUs allow.
    with pytest.warns(UserWarning) as record:
        module = kdsl.compile(source=BIG_LOCAL)
    messages = [str(warning.message) for warning in record]
    assert len(messages) == len(kdsl.DEFAULT_TARGETS) - 1, messages
    assert all("targets=" in message for message in messages), messages
    # Too much local memory for the GPUs; where libclc is absent (a CUDA machine without
    # LLVM), AMDGPU is skipped for that instead.
    assert all("E0602" in message or "libclc" in message for message in messages), messages
    assert any("skipping default target ptx" in message and "E0602" in message for message in messages), messages
    assert module.image_names == ["spirv"]
    with pytest.raises(kdsl.CompileError) as raised:
        kdsl.compile(source=BIG_LOCAL, targets=["spirv", "ptx"])
    assert "E0602" in str(raised.value)


def test_a_second_module_of_the_same_bundle_reuses_the_built_program():
    """kdsl.compile of the same source twice in one process (a cache hit the second time) builds
    the device program once: the second Module takes the first one's built program."""
    first = example("saxpy")
    y = np.ones(64, np.float32)
    first.saxpy[64, 32](y, np.full(64, 2.0, np.float32), 3.0, 64)
    second = example("saxpy")
    assert second is not first
    z = np.ones(64, np.float32)
    second.saxpy[64, 32](z, np.full(64, 2.0, np.float32), 3.0, 64)
    np.testing.assert_array_equal(y, 7.0)
    np.testing.assert_array_equal(z, 7.0)
    (label, program), = first._programs.items()
    assert second._programs[label] is program
