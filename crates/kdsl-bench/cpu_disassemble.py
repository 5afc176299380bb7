"""The x86 code the Intel OpenCL CPU device builds from a kernel, and how its memory accesses
were vectorized: per function, the vector gathers and scatters (an access whose lanes the
vectorizer could not prove consecutive) against the other vector memory operands (unit-stride
loads and stores). Unlike a timing, this does not depend on the machine's load.

The input is a kdsl bundle (its SPIR-V image), a SPIR-V module or OpenCL C source (.cl). The
device's program binary is an ELF file whose `.ocl.obj` section is an x86-64 object, which
`llvm-objdump` disassembles. The vectorized copy of a kernel is named `_ZGV..._<kernel>` when
the device keeps a scalar one beside it.

Usage: python cpu_disassemble.py INPUT [--asm OUT.s]
"""

import argparse
import ctypes
import pathlib
import re
import shutil
import struct
import subprocess
import sys
import tempfile

from bench_cpu import spirv_image

CL_DEVICE_TYPE_CPU = 1 << 1
CL_PROGRAM_BINARY_SIZES = 0x1165
CL_PROGRAM_BINARIES = 0x1166
CL_PROGRAM_BUILD_LOG = 0x1183


def program_binary(path):
    """Builds INPUT for the first OpenCL CPU device and returns the program binary."""
    cl = ctypes.CDLL("libOpenCL.so.1")
    handle = ctypes.c_void_p
    count = ctypes.c_uint()
    platforms = (handle * 16)()
    if cl.clGetPlatformIDs(16, platforms, ctypes.byref(count)) != 0:
        raise SystemExit("no OpenCL platform")
    device = handle()
    if not any(
        cl.clGetDeviceIDs(handle(platforms[i]), ctypes.c_ulong(CL_DEVICE_TYPE_CPU), 1, ctypes.byref(device), None) == 0
        for i in range(count.value)
    ):
        raise SystemExit("no OpenCL CPU device")
    error = ctypes.c_int()
    cl.clCreateContext.restype = handle
    cl.clCreateProgramWithIL.restype = handle
    cl.clCreateProgramWithSource.restype = handle
    context = cl.clCreateContext(None, 1, ctypes.byref(device), None, None, ctypes.byref(error))
    if path.suffix == ".cl":
        text = ctypes.c_char_p(path.read_bytes())
        program = cl.clCreateProgramWithSource(handle(context), 1, ctypes.byref(text), None, ctypes.byref(error))
    else:
        il = path.read_bytes() if path.suffix == ".spv" else spirv_image(path)
        program = cl.clCreateProgramWithIL(handle(context), il, ctypes.c_size_t(len(il)), ctypes.byref(error))
    if error.value != 0:
        raise SystemExit(f"{path}: program not created ({error.value})")
    if cl.clBuildProgram(handle(program), 1, ctypes.byref(device), b"", None, None) != 0:
        log = ctypes.create_string_buffer(1 << 16)
        cl.clGetProgramBuildInfo(handle(program), device, CL_PROGRAM_BUILD_LOG, len(log), log, None)
        raise SystemExit(f"{path}: build failed\n{log.value.decode(errors='replace')}")
    size = ctypes.c_size_t()
    cl.clGetProgramInfo(handle(program), CL_PROGRAM_BINARY_SIZES, ctypes.sizeof(size), ctypes.byref(size), None)
    binary = ctypes.create_string_buffer(size.value)
    pointers = (ctypes.c_char_p * 1)(ctypes.cast(binary, ctypes.c_char_p))
    cl.clGetProgramInfo(handle(program), CL_PROGRAM_BINARIES, ctypes.sizeof(pointers), pointers, None)
    return binary.raw


def elf_section(data, wanted):
    """The bytes of the ELF64 section named `wanted`."""
    header_offset, = struct.unpack_from("<Q", data, 0x28)
    count, names_index = struct.unpack_from("<HH", data, 0x3C)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, header_offset + 64 * i) for i in range(count)]
    names = headers[names_index][4]
    for name, _, _, _, offset, size, *_ in headers:
        end = data.index(b"\0", names + name)
        if data[names + name : end] == wanted:
            return data[offset : offset + size]
    raise SystemExit(f"no section {wanted.decode()} in the program binary")


def summary(assembly):
    """Per function: instructions, gathers and scatters, and the other instructions with a
    vector register and a memory operand (unit-stride loads and stores, also of constants)."""
    rows, name = [], None
    for line in assembly.splitlines():
        match = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if match:
            name = match.group(1)
            rows.append({"function": name, "instructions": 0, "gathers_scatters": 0, "vector_memory": 0})
        elif name and re.match(r"^\s+[0-9a-f]+:", line):
            row = rows[-1]
            row["instructions"] += 1
            if "gather" in line or "scatter" in line:
                row["gathers_scatters"] += 1
            elif re.search(r"[yz]mm", line) and "(" in line and "broadcast" not in line:
                row["vector_memory"] += 1
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("input", type=pathlib.Path)
    parser.add_argument("--asm", type=pathlib.Path, help="write the disassembly here")
    options = parser.parse_args()
    objdump = shutil.which("llvm-objdump-22") or shutil.which("llvm-objdump")
    if not objdump:
        raise SystemExit("llvm-objdump not found")
    code = elf_section(program_binary(options.input), b".ocl.obj")
    with tempfile.NamedTemporaryFile(suffix=".o") as object_file:
        object_file.write(code)
        object_file.flush()
        assembly = subprocess.run(
            [objdump, "-d", "--no-show-raw-insn", object_file.name], check=True, capture_output=True, text=True
        ).stdout
    if options.asm:
        options.asm.write_text(assembly)
    print(f"{'function':<40} {'instructions':>12} {'gathers+scatters':>17} {'other vector memory':>20}")
    for row in summary(assembly):
        print(
            f"{row['function']:<40} {row['instructions']:>12} {row['gathers_scatters']:>17} "
            f"{row['vector_memory']:>20}"
        )


if __name__ == "__main__":
    sys.exit(main())
