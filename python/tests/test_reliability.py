"""Launches that used to kill or hang the process: each scenario runs in a child Python, so a
crash (a signal) or a deadlock (the time limit) fails the test instead of ending the run."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from conftest import EXAMPLES, has_module, spirv_device_id, sycl_available

needs_dpnp = pytest.mark.skipif(not (has_module("dpnp") and sycl_available()), reason="dpnp or SYCL absent")
# Cases that edit SPIR-V images, or time a spinning kernel that takes seconds only on a CPU.
needs_spirv_device = pytest.mark.skipif(spirv_device_id() is None, reason="no device that takes SPIR-V")


def run_child(script: str, timeout: float, device: str | None = None) -> str:
    """Runs `script` in a child Python with this process's environment (the kernel cache
    included), NumPy launches going to `device` if given (`KDSL_DEVICE`); fails on a signal,
    a non-zero exit or the time limit."""
    environment = dict(os.environ, KDSL_TEST_EXAMPLES=str(EXAMPLES))
    if device is not None:
        environment["KDSL_DEVICE"] = device
    try:
        finished = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(script)],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=environment,
        )
    except subprocess.TimeoutExpired as expired:
        pytest.fail(f"the child did not finish in {timeout} s (a deadlock?): {expired.stderr}")
    assert finished.returncode == 0, (
        f"the child exited with {finished.returncode} (negative: killed by that signal)\n"
        f"{finished.stdout}\n{finished.stderr}"
    )
    return finished.stdout


@pytest.mark.skipif(not sycl_available(), reason="no SYCL device")
def test_rejected_numpy_launch_leaves_no_copy_reading_freed_arrays():
    # A local size that does not divide the global size is refused; the refusal used to come
    # after the copies of the arrays had been submitted, and the arrays (a few MiB: freed to
    # the system at once) were freed while the copies read them.
    output = run_child(
        """
        import os
        import numpy as np
        import kdsl

        module = kdsl.compile(path=os.path.join(os.environ["KDSL_TEST_EXAMPLES"], "saxpy.krn"))
        n = 1 << 20
        refused = 0
        for attempt in range(60):
            y = np.ones(n, np.float32)
            x = np.full(n, 2.0, np.float32)
            try:
                module.saxpy[n + 7, 256](y, x, 2.0, n)
            except kdsl.LaunchError as error:
                assert error.kind == "BadLaunch", error.kind
                refused += 1
            del y, x
            # Reuse the freed memory while a stray copy would still read it.
            scratch = np.full(3 * n, 7.0, np.float32)
            del scratch
        y = np.ones(n, np.float32)
        x = np.arange(n, dtype=np.float32)
        module.saxpy[n, 256](y, x, 2.0, n)
        assert np.array_equal(y, 1.0 + 2.0 * x)
        print(refused)
        """,
        timeout=300,
    )
    assert output.split()[-1] == "60"


@needs_dpnp
def test_threads_making_first_launches_on_several_queues_do_not_deadlock():
    # Each thread's first launch on a queue adopts that queue (a call into Python); it used to
    # happen under the launcher's lock, which other threads waited for holding the GIL.
    output = run_child(
        """
        import os
        import threading
        import dpctl
        import dpnp
        import kdsl

        module = kdsl.compile(path=os.path.join(os.environ["KDSL_TEST_EXAMPLES"], "saxpy.krn"))
        rounds, threads_per_round, queues_per_round = 6, 8, 4
        results = []
        for round in range(rounds):
            # A fresh kernel object and fresh queues each round: every launch is a first one.
            kernel = type(module)(module.bundle).saxpy
            queues = [dpctl.SyclQueue() for _ in range(queues_per_round)]
            arrays = [
                (dpnp.ones(1000, dtype=dpnp.float32, sycl_queue=queue),
                 dpnp.arange(1000, dtype=dpnp.float32, sycl_queue=queue))
                for queue in queues
            ]
            start = threading.Barrier(threads_per_round)

            def launch(index):
                y, x = arrays[index % queues_per_round]
                start.wait()
                for _ in range(5):
                    kernel[1024, 256](y, x, 1.0, 1000).wait()

            threads = [threading.Thread(target=launch, args=(i,), daemon=True) for i in range(threads_per_round)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=60)
            assert not any(thread.is_alive() for thread in threads), f"round {round}: threads still waiting"
            for queue_index, (y, x) in enumerate(arrays):
                launches = 5 * len(range(queue_index, threads_per_round, queues_per_round))
                expected = 1.0 + launches * dpnp.asnumpy(x)
                assert (dpnp.asnumpy(y) == expected).all(), (round, queue_index)
            results.append(round)
        print(len(results))
        """,
        timeout=120,
    )
    assert output.split()[-1] == "6"


EDIT_BUNDLE = """
import json, os, struct, sys, tempfile
import numpy as np
import kdsl

def fnv1a64(data):
    value = 0xCBF29CE484222325
    for byte in data:
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"fnv1a64:{value:016x}"

def edited(original, version, edit_metadata, edit_spirv):
    # The bundle rewritten as format `version` (1: no checksums), with its metadata and SPIR-V
    # edited and every checksum recomputed: a file that passes the checks of a damaged one.
    source_version, length = struct.unpack_from("<IQ", original, 8)
    start = 28 if source_version >= 3 else 20  # version 3 adds the metadata's checksum
    metadata = json.loads(original[start : start + length])
    payload = original[start + length :]
    edit_metadata(metadata)
    images = b""
    for entry in metadata["images"]:
        data = bytearray(payload[entry["offset"] : entry["offset"] + entry["length"]])
        if entry["target"] == "spirv":
            edit_spirv(data)
        entry.update(offset=len(images), length=len(data), checksum=fnv1a64(data))
        if version == 1:
            del entry["checksum"]
        images += bytes(data)
    text = json.dumps(metadata).encode()
    return b"KDSLBNDL" + struct.pack("<IQ", version, len(text)) + text + images

module = kdsl.compile(path=os.path.join(os.environ["KDSL_TEST_EXAMPLES"], "saxpy.krn"))
original = module.to_bytes()
os.chdir(tempfile.mkdtemp())
"""


@needs_spirv_device
@pytest.mark.parametrize("version", [1, 2])
def test_a_spirv_schema_word_is_refused_not_fatal(version):
    # Intel's SPIR-V reader calls exit(10) on a schema word other than 0, which SPIRV-Tools'
    # validation lets pass.
    output = run_child(
        EDIT_BUNDLE
        + f"""
def schema(data):
    data[16:20] = struct.pack("<I", 1)

open("schema.kbundle", "wb").write(edited(original, {version}, lambda m: None, schema))
try:
    kdsl.load("schema.kbundle").saxpy[256, 64](np.ones(256, np.float32), np.ones(256, np.float32), 1.0, 256)
except kdsl.BundleError as error:
    print(error.kind, error)
""",
        timeout=120,
        device=spirv_device_id(),
    )
    assert output.startswith("InvalidImage") and "schema" in output, output


@needs_spirv_device
@pytest.mark.parametrize("version", [1, 2])
def test_metadata_edited_to_narrower_elements_is_refused(version):
    # The runtime sizes buffers by the metadata's element type: with `u8` instead of `f32`
    # the kernel wrote four times past the copies it was given.
    output = run_child(
        EDIT_BUNDLE
        + f"""
def narrower(metadata):
    for kernel in metadata["kernels"]:
        for parameter in kernel["parameters"]:
            if parameter.get("element") == "f32":
                parameter["element"] = "u8"

open("narrower.kbundle", "wb").write(edited(original, {version}, narrower, lambda data: None))
n = 1 << 20
try:
    kdsl.load("narrower.kbundle").saxpy[n, 256](np.ones(n, np.uint8), np.ones(n, np.uint8), 1.0, n)
except kdsl.BundleError as error:
    print(error.kind, error)
""",
        timeout=120,
        device=spirv_device_id(),
    )
    assert output.startswith("InvalidImage") and "parameter `y`" in output, output


@pytest.mark.skipif(not (has_module("dpctl") and sycl_available()), reason="dpctl or SYCL absent")
def test_to_dpctl_checks_the_spirv_it_hands_over():
    # dpctl hands the SPIR-V to the same reader that ends the process on a bad schema word.
    output = run_child(
        EDIT_BUNDLE
        + """
import dpctl

def schema(data):
    data[16:20] = struct.pack("<I", 1)

open("schema.kbundle", "wb").write(edited(original, 2, lambda m: None, schema))
try:
    kdsl.load("schema.kbundle").to_dpctl(dpctl.SyclQueue())
except kdsl.BundleError as error:
    print(error.kind, error)
""",
        timeout=120,
    )
    assert output.startswith("InvalidImage") and "schema" in output, output


@needs_dpnp
def test_ctrl_c_interrupts_event_wait_on_a_long_kernel():
    output = run_child(
        '''
import os, signal, threading, time
import dpnp
import kdsl

module = kdsl.compile(source="""
kernel spin(out: global mut [u32], rounds: u32) {
    let i = get_global_id(0);
    let mut x = i;
    for r in 0u32..rounds {
        x = x * 1664525u32 + 1013904223u32;
    }
    out[i] = x;
}
""")
out = dpnp.zeros(64, dtype=dpnp.uint32)
module.spin[64, 1](out, 10).wait()
event = module.spin[64, 1](out, 40_000_000)  # seconds on the CPU device
threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
started = time.monotonic()
try:
    event.wait()
    print("not interrupted")
except KeyboardInterrupt:
    print("interrupted", time.monotonic() - started, event.is_complete)
event.wait()
''',
        timeout=120,
    )
    words = output.split()
    assert words[0] == "interrupted", output
    assert float(words[1]) < 2.0 and words[2] == "False", output


@needs_spirv_device
def test_ctrl_c_interrupts_a_numpy_launch_and_the_arrays_outlive_its_copies():
    # The launch waits for the copy back of `out`; Ctrl-C ends that wait, and `out`, dropped
    # by the caller, must stay allocated until the copy has written it.
    output = run_child(
        '''
import gc, os, signal, threading, time
import numpy as np
import kdsl

module = kdsl.compile(source="""
kernel spin(out: global mut [u32], rounds: u32) {
    let i = get_global_id(0);
    let mut x = i;
    for r in 0u32..rounds {
        x = x * 1664525u32 + 1013904223u32;
    }
    if i < 64u32 { out[i] = x; }
}
""")
out = np.zeros(1 << 20, np.uint32)  # 4 MiB: returned to the system when freed
module.spin[64, 1](out, 10)
threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
started = time.monotonic()
try:
    module.spin[64, 1](out, 40_000_000)  # seconds on the CPU device
    print("not interrupted")
except KeyboardInterrupt:
    print("interrupted", time.monotonic() - started)
del out
gc.collect()
scratch = [np.full(1 << 20, 7, np.uint32) for _ in range(4)]
time.sleep(8)  # the kernel and its copy back finish meanwhile
y = np.zeros(64, np.uint32)
module.spin[64, 1](y, 10)  # releases the kept arrays
print("alive")
''',
        timeout=120,
        device=spirv_device_id(),
    )
    words = output.split()
    assert words[0] == "interrupted" and float(words[1]) < 2.0 and words[-1] == "alive", output


def test_metadata_edited_in_a_current_bundle_is_refused_by_its_checksum(tmp_path):
    # Format 3 records the metadata's checksum: the element type edited in place (f32 to
    # u8, as a text editor would) is damage, whatever the device (before any image is
    # compared with the metadata).
    import kdsl

    data = bytearray(kdsl.compile(path=EXAMPLES / "saxpy.krn", targets=["spirv", "ptx:sm_90"]).to_bytes())
    assert data[8:12] == (3).to_bytes(4, "little")
    at = data.index(b'"f32"')
    data[at + 1 : at + 4] = b"u8 "
    path = tmp_path / "edited.kbundle"
    path.write_bytes(bytes(data))
    with pytest.raises(kdsl.BundleError) as raised:
        kdsl.load(path)
    assert "metadata's checksum" in str(raised.value), str(raised.value)


NEVER_ENDING = '''
import sys, time
import dpctl, dpnp
import kdsl

module = kdsl.compile(source="""
kernel forever(out: global mut [u32], go: u32) {
    let i = get_global_id(0);
    let mut x = i;
    while go != 0u32 {
        x = x * 1664525u32 + 1013904223u32;
        out[i] = x;
    }
}
""")
queue = dpctl.SyclQueue(property="in_order") if sys.argv[1] == "in_order" else None
out = dpnp.zeros(64, dtype=dpnp.uint32, sycl_queue=queue)
module.forever[64, 1](out, 0).wait()
event = module.forever[64, 1](out, 1)  # never ends
time.sleep(0.5)
print("launched", event.is_complete, flush=True)
sys.exit(3)
'''


@needs_dpnp
@pytest.mark.parametrize("queue", ["dpnp_default", "in_order"])
def test_exit_is_prompt_while_a_kernel_runs(queue):
    # Exit used to wait for the kernel: in dpctl's at-exit wait (dpnp's default queue records
    # kdsl's launches in its order manager) and in the OpenCL CPU runtime's destructor.
    try:
        finished = subprocess.run(
            [sys.executable, "-c", NEVER_ENDING, queue],
            capture_output=True,
            text=True,
            timeout=20,
        )
    except subprocess.TimeoutExpired as expired:
        pytest.fail(f"the interpreter did not exit in 20 s while a kernel ran: {expired.stdout} {expired.stderr}")
    assert finished.stdout.split() == ["launched", "False"], finished.stderr
    assert finished.returncode == 3, finished.stderr


AFTER_FOREIGN_CUDA = r'''
import sys
import kdsl
import {library} as lib
module = kdsl.compile(path=sys.argv[1])
if "{library}" == "cupy":
    y, x = lib.ones(1000, dtype=lib.float32), lib.ones(1000, dtype=lib.float32)
else:
    y, x = lib.ones(1000, device="cuda"), lib.ones(1000, device="cuda")
module.saxpy[1000, 100](y, x, 2.0, 1000)
print(float(y[0]))
'''


@pytest.mark.parametrize("library", ["cupy", "torch"])
def test_exit_after_launches_on_cupy_and_torch_arrays_is_clean(library):
    # The prompt-exit hook asked kdsl's remembered CUDA events at exit, after the library had
    # torn its streams and context down: the process died with SIGSEGV on the H200.
    if not has_module(library):
        pytest.skip(f"{library} absent")
    import kdsl

    if not any(info.backend == "cuda" for info in kdsl.devices()):
        pytest.skip("no CUDA device")
    finished = subprocess.run(
        [sys.executable, "-c", AFTER_FOREIGN_CUDA.replace("{library}", library), str(EXAMPLES / "saxpy.krn")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert finished.returncode == 0, (finished.returncode, finished.stderr)
    assert finished.stdout.split() == ["3.0"], finished.stderr
