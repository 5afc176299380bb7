"""Runs a kdsl bundle's saxpy through dpctl, as a second opinion on the SPIR-V image.

Usage: dpctl_smoke.py BUNDLE   (run with .kdsl/prefix/bin/python after `source scripts/env.sh`)

Parses the bundle format (magic "KDSLBNDL", u32 version, u64 JSON length, JSON metadata whose
images give offset, length and, from version 2, an FNV-1a 64 checksum into the payload that
follows), builds the SPIR-V image with
dpctl.program.create_program_from_spirv, runs saxpy(y, x, a, n) and checks it with numpy.
"""

import ctypes
import json
import struct
import sys

import dpctl
import dpctl.memory
import dpctl.program
import numpy as np


def fnv1a64(data):
    """The image checksum the bundle records: FNV-1a 64, as `fnv1a64:<16 hex digits>`."""
    value = 0xCBF29CE484222325
    for byte in data:
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"fnv1a64:{value:016x}"


def read_spirv(path):
    with open(path, "rb") as handle:
        data = handle.read()
    if data[:8] != b"KDSLBNDL":
        raise SystemExit(f"{path}: not a kdsl bundle")
    version, metadata_length = struct.unpack_from("<IQ", data, 8)
    if version not in (1, 2, 3):
        raise SystemExit(f"{path}: bundle format version {version} is not 1, 2 or 3")
    # Version 3 adds the metadata's FNV-1a 64 (a u64) to the header.
    start = 28 if version >= 3 else 20
    if version >= 3 and struct.unpack_from("<Q", data, 20)[0] != int(fnv1a64(data[start : start + metadata_length])[8:], 16):
        raise SystemExit(f"{path}: the metadata's checksum does not match")
    metadata = json.loads(data[start : start + metadata_length])
    payload = data[start + metadata_length :]
    for image in metadata["images"]:
        if image["target"] == "spirv":
            spirv = payload[image["offset"] : image["offset"] + image["length"]]
            if version >= 2 and image.get("checksum") != fnv1a64(spirv):
                raise SystemExit(f"{path}: the SPIR-V image's checksum does not match")
            return spirv, metadata
    raise SystemExit(f"{path}: the bundle has no SPIR-V image")


def main():
    spirv, metadata = read_spirv(sys.argv[1])
    kernels = [kernel["name"] for kernel in metadata["kernels"]]
    if "saxpy" not in kernels:
        raise SystemExit(f"the bundle has no saxpy kernel (it has {kernels})")
    queue = dpctl.SyclQueue()
    program = dpctl.program.create_program_from_spirv(queue, spirv)
    kernel = program.get_sycl_kernel("saxpy")
    n = 10_000
    rng = np.random.default_rng(7)
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    a = np.float32(1.5)
    x_usm = dpctl.memory.MemoryUSMDevice(x.nbytes, queue=queue)
    y_usm = dpctl.memory.MemoryUSMDevice(y.nbytes, queue=queue)
    x_usm.copy_from_host(x.view(np.uint8))
    y_usm.copy_from_host(y.view(np.uint8))
    global_size = (n + 255) // 256 * 256
    queue.submit(kernel, [y_usm, x_usm, ctypes.c_float(a), ctypes.c_uint32(n)], [global_size], [256]).wait()
    result = np.empty_like(y)
    y_usm.copy_to_host(result.view(np.uint8))
    expected = a * x + y
    if not np.allclose(result, expected, rtol=1e-6, atol=1e-6):
        worst = int(np.argmax(np.abs(result - expected)))
        raise SystemExit(f"saxpy mismatch at {worst}: {result[worst]} != {expected[worst]}")
    print(f"dpctl saxpy OK on {queue.sycl_device.name} ({n} elements)")


if __name__ == "__main__":
    main()
