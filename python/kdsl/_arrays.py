"""Turns the arrays handed to a launch into what the runtime needs: where the memory lives
(host, a SYCL queue, a CUDA or ROCm device), its address, element count and writability,
after checking element type and C-contiguity against the kernel's signature.

Protocols, in the order they are tried:

1. ``__sycl_usm_array_interface__`` (dpnp, dpctl): USM memory of the array's SYCL queue.
2. ``__cuda_array_interface__`` (CuPy, PyTorch, Numba): CUDA device memory; its ``stream``
   entry (version 3) names the stream the producer works on.
3. ``__dlpack__`` / ``__dlpack_device__`` (JAX, PyTorch, anything DLPack 1.x or legacy):
   CPU memory is used as host memory, CUDA and ROCm memory as device memory.
4. ``__array_interface__`` and the buffer protocol (NumPy, ``array.array``, ``bytearray``,
   ``memoryview``): host memory, copied to the device for the launch.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from . import _runtime
from ._errors import ArgumentError

HOST_MEMORY = 0
DEVICE_MEMORY = 1

# DLPack device types.
DLPACK_CPU = 1
DLPACK_CUDA = 2
DLPACK_CUDA_HOST = 3
DLPACK_ROCM = 10
DLPACK_ONEAPI = 14

# The array-interface type code (without byte order) of each kdsl element type. bfloat16 has
# none (NumPy has no bfloat16; ml_dtypes' reports `V2`, DLPack its own type code): `bf2` is
# kdsl's, given to arrays known to hold bfloat16 (`_typestr`).
TYPESTR = {
    "bool": "b1",
    "i8": "i1",
    "u8": "u1",
    "i16": "i2",
    "u16": "u2",
    "i32": "i4",
    "u32": "u4",
    "i64": "i8",
    "u64": "u8",
    "f16": "f2",
    "bf16": "bf2",
    "f32": "f4",
    "f64": "f8",
}
ITEMSIZE = {name: int(code[-1]) for name, code in TYPESTR.items()}
NUMPY_NAME = {
    "b1": "bool",
    "i1": "int8",
    "u1": "uint8",
    "i2": "int16",
    "u2": "uint16",
    "i4": "int32",
    "u4": "uint32",
    "i8": "int64",
    "u8": "uint64",
    "f2": "float16",
    "bf2": "bfloat16",
    "f4": "float32",
    "f8": "float64",
}


class Placement(NamedTuple):
    """Where an array's memory lives: ``("host", None)``, ``("sycl", SyclQueue)``,
    ``("cuda", (ordinal, stream or None))``, ``("rocm", (ordinal, None))``."""

    kind: str
    where: Any


HOST = Placement("host", None)


class ArrayArgument(NamedTuple):
    placement: Placement
    memory: int
    address: int
    count: int
    read_only: bool
    keep_alive: Any


class _What:
    """``argument 1 (`x`) of kernel `saxpy``, formatted only when an error needs it."""

    __slots__ = ("index", "parameter", "kernel")

    def __init__(self, index: int, parameter: Any, kernel: str) -> None:
        self.index, self.parameter, self.kernel = index, parameter, kernel

    def __str__(self) -> str:
        return f"argument {self.index} (`{self.parameter.name}`) of kernel `{self.kernel}`"

    __format__ = lambda self, spec: format(str(self), spec)  # noqa: E731


def _element_name(typestr: str) -> str:
    return NUMPY_NAME.get(typestr[1:], typestr)


# How to pass bfloat16 data, for a `bf16` parameter given another element type.
BFLOAT16_HINT = (
    "; pass bfloat16 arrays: a torch.bfloat16 tensor, or a NumPy array of ml_dtypes.bfloat16 "
    "(bits held in uint16 or int16 become one without a copy: `array.view(ml_dtypes.bfloat16)`, "
    "`tensor.view(torch.bfloat16)`); CuPy, dpnp and dpctl have no bfloat16"
)


def _check_typestr(typestr: str, parameter: Any, where: str) -> None:
    expected = TYPESTR[parameter.type]
    if typestr[1:] != expected or typestr[0] not in "<|=":
        hint = BFLOAT16_HINT if parameter.type == "bf16" else ""
        raise ArgumentError(
            f"{where} must be an array of {parameter.type} ({NUMPY_NAME[expected]}), but an array "
            f"of {_element_name(typestr)} was given{hint}",
            "ArgumentType",
        )


def _typestr(array: Any, interface: dict) -> str:
    """The array interface's type string, `bf2` for ml_dtypes' bfloat16 (whose `V2` says
    only "two bytes")."""
    typestr = interface["typestr"]
    if typestr[1:] == "V2" and getattr(getattr(array, "dtype", None), "name", None) == "bfloat16":
        return typestr[0] + "bf2"
    return typestr


def _is_torch_bfloat16(array: Any) -> bool:
    """A torch.bfloat16 tensor, which only DLPack describes (the CUDA array interface and
    NumPy have no bfloat16)."""
    return type(array).__module__.startswith("torch") and str(getattr(array, "dtype", "")) == (
        "torch.bfloat16"
    )


def _count(shape: Any) -> int:
    count = 1
    for extent in shape:
        count *= int(extent)
    return count


def _check_contiguous(shape: Any, strides: Any, itemsize: int, where: str) -> None:
    """Strides in units of ``itemsize`` (1 for strides in elements)."""
    if strides is None:
        return
    expected = 1
    for extent, stride in zip(reversed(tuple(shape)), reversed(tuple(strides))):
        if extent != 1 and stride != expected * itemsize:
            raise ArgumentError(
                f"{where} is not C-contiguous (shape {tuple(shape)}, strides {tuple(strides)}); "
                f"kernels index a flat buffer: pass a contiguous copy (numpy.ascontiguousarray, "
                f"dpnp.ascontiguousarray, cupy.ascontiguousarray, tensor.contiguous())",
                "NotContiguous",
            )
        expected *= int(extent)


def _check_writable(read_only: bool, parameter: Any, where: str) -> None:
    if read_only and parameter.writable:
        raise ArgumentError(
            f"{where} is a `mut` parameter, but the array given is read-only",
            "ReadOnlyArray",
        )


def _is_untyped_usm(array: Any, interface: dict) -> bool:
    """dpctl's ``MemoryUSMDevice``/``MemoryUSMShared``/``MemoryUSMHost``: untyped bytes."""
    return interface["typestr"] == "|u1" and type(array).__module__.startswith("dpctl.memory")


def _sycl_array(array: Any, interface: dict, parameter: Any, where: str) -> ArrayArgument:
    itemsize = ITEMSIZE[parameter.type]
    shape = interface["shape"]
    if _is_untyped_usm(array, interface):
        # Raw USM bytes take the parameter's element type; the size must be a whole number
        # of elements.
        nbytes = _count(shape)
        if nbytes % itemsize:
            raise ArgumentError(
                f"{where}: the USM allocation of {nbytes} bytes is not a whole number of "
                f"{parameter.type} elements",
                "ArgumentType",
            )
        shape = (nbytes // itemsize,)
        address = interface["data"][0]
        # dpctl memory objects always report read-only (their interface hard-codes it), but
        # are writable USM allocations.
        read_only = False
    else:
        _check_typestr(interface["typestr"], parameter, where)
        _check_contiguous(shape, interface.get("strides"), 1, where)
        address, read_only = interface["data"]
    _check_writable(read_only, parameter, where)
    address += int(interface.get("offset", 0) or 0) * itemsize
    queue = interface.get("syclobj")
    if queue is None or not hasattr(queue, "_get_capsule"):
        queue = getattr(array, "sycl_queue", None)
    if queue is None:
        raise ArgumentError(f"{where}: the USM array names no SYCL queue", "BadForeignObject")
    return ArrayArgument(
        Placement("sycl", queue), DEVICE_MEMORY, address, _count(shape), bool(read_only), array
    )


def _cuda_array(array: Any, interface: dict, parameter: Any, where: str) -> ArrayArgument:
    _check_typestr(interface["typestr"], parameter, where)
    shape = interface["shape"]
    _check_contiguous(shape, interface.get("strides"), ITEMSIZE[parameter.type], where)
    address, read_only = interface["data"]
    _check_writable(read_only, parameter, where)
    ordinal = 0
    if hasattr(array, "__dlpack_device__"):
        device_type, ordinal = array.__dlpack_device__()
        ordinal = int(ordinal)
    kind = "rocm" if hasattr(array, "__dlpack_device__") and device_type == DLPACK_ROCM else "cuda"
    stream = interface.get("stream") if interface.get("version", 0) >= 3 else None
    if stream is None and type(array).__module__.startswith("torch"):
        # PyTorch's interface names no stream: its current stream on the tensor's device is
        # where its producers ran.
        import torch

        stream = torch.cuda.current_stream(array.device).cuda_stream or 1
    return ArrayArgument(
        Placement(kind, (ordinal, stream)),
        DEVICE_MEMORY,
        int(address or 0),
        _count(shape),
        bool(read_only),
        array,
    )


def _host_array(array: Any, parameter: Any, where: str) -> ArrayArgument:
    interface = getattr(array, "__array_interface__", None)
    if interface is None:
        import numpy

        try:
            array = numpy.asarray(memoryview(array))
        except TypeError:
            raise ArgumentError(
                f"{where} must be an array of {parameter.type}, but a {type(array).__name__} was "
                f"given (kdsl takes dpnp/dpctl, CuPy, PyTorch, DLPack and NumPy arrays)",
                "ArgumentType",
            ) from None
        interface = array.__array_interface__
    typestr = _typestr(array, interface)
    _check_typestr(typestr, parameter, where)
    shape = interface["shape"]
    _check_contiguous(shape, interface.get("strides"), ITEMSIZE[parameter.type], where)
    address, read_only = interface["data"]
    _check_writable(read_only, parameter, where)
    return ArrayArgument(HOST, HOST_MEMORY, int(address or 0), _count(shape), bool(read_only), array)


def _dlpack_array(array: Any, parameter: Any, where: str) -> ArrayArgument:
    device_type, ordinal = array.__dlpack_device__()
    if device_type in (DLPACK_CPU, DLPACK_CUDA_HOST):
        if not _is_torch_bfloat16(array):
            import numpy

            return _host_array(numpy.from_dlpack(array), parameter, where)
        # NumPy takes no bfloat16 from DLPack: the capsule itself describes the host memory.
        capsule = array.__dlpack__()
        tensor = _runtime.dlpack_tensor(capsule)
        _check_typestr("|" + tensor["typestr"], parameter, where)
        _check_contiguous(tensor["shape"], tensor["strides"], 1, where)
        _check_writable(tensor["read_only"], parameter, where)
        return ArrayArgument(
            HOST,
            HOST_MEMORY,
            tensor["address"],
            _count(tensor["shape"]),
            tensor["read_only"],
            (array, capsule),
        )
    if device_type not in (DLPACK_CUDA, DLPACK_ROCM):
        raise ArgumentError(
            f"{where}: DLPack device type {device_type} is not supported (CPU, CUDA and ROCm "
            f"arrays are; oneAPI arrays are taken through __sycl_usm_array_interface__)",
            "ArgumentType",
        )
    # The producer makes its data ready for the legacy default stream (1), which the launch
    # then uses unless stream= is given.
    try:
        capsule = array.__dlpack__(stream=1, max_version=(1, 0))
    except TypeError:
        capsule = array.__dlpack__(stream=1)
    tensor = _runtime.dlpack_tensor(capsule)
    if tensor["device_type"] != device_type:
        raise ArgumentError(f"{where}: the DLPack capsule disagrees with __dlpack_device__", "BadForeignObject")
    _check_typestr("|" + tensor["typestr"], parameter, where)
    _check_contiguous(tensor["shape"], tensor["strides"], 1, where)
    _check_writable(tensor["read_only"], parameter, where)
    kind = "cuda" if device_type == DLPACK_CUDA else "rocm"
    return ArrayArgument(
        Placement(kind, (int(ordinal), 1)),
        DEVICE_MEMORY,
        tensor["address"],
        _count(tensor["shape"]),
        tensor["read_only"],
        (array, capsule),
    )


# NumPy's one-character type codes of each kdsl element type (`long` and `long long` are both
# 64-bit on Linux).
TYPE_CHARS = {
    "bool": "?",
    "i8": "b",
    "u8": "B",
    "i16": "h",
    "u16": "H",
    "i32": "i",
    "u32": "I",
    "i64": "lq",
    "u64": "LQ",
    "f16": "e",
    "bf16": "E",
    "f32": "f",
    "f64": "d",
}


def _dpnp_array(array: Any, usm: Any, parameter: Any, where: str) -> ArrayArgument:
    """A dpnp array (or its ``dpnp.tensor.usm_ndarray``), read through its attributes: dpnp's
    ``__sycl_usm_array_interface__`` waits for the array's whole queue, which would make every
    launch synchronous. The launch is ordered after the producers by a queue barrier instead
    (see ``Kernel.launch``)."""
    dtype = usm.dtype
    if dtype.char not in TYPE_CHARS[parameter.type]:
        _check_typestr(dtype.str, parameter, where)
    flags = usm.flags
    if not flags.c_contiguous:
        _check_contiguous(usm.shape, usm.strides, 1, where)
    read_only = not flags.writable
    if read_only:
        _check_writable(read_only, parameter, where)
    return ArrayArgument(
        Placement("sycl", usm.sycl_queue), DEVICE_MEMORY, usm._pointer, usm.size, read_only, array
    )


def _usm_ndarray(array: Any) -> Any:
    """The ``dpnp.tensor.usm_ndarray`` behind a dpnp array, or the array itself, or None."""
    module = type(array).__module__
    if module.startswith("dpnp.tensor"):
        return array
    if module.startswith("dpnp") and hasattr(array, "get_array"):
        return array.get_array()
    return None


# Array types whose protocol is known: types without an instance `__dict__` (CuPy's and
# NumPy's arrays) get their attributes from the class only, so the protocol found for one
# instance holds for all, and later launches skip probing the others.
_CUDA_INTERFACE = 1
_ARRAY_INTERFACE = 2
_PROTOCOLS: dict[type, int] = {}


def _cuda_interface(array: Any, where: Any) -> Any:
    if _is_torch_bfloat16(array):
        return None  # taken through DLPack
    try:
        return getattr(array, "__cuda_array_interface__", None)
    except Exception as error:  # PyTorch refuses tensors that require grad
        raise ArgumentError(f"{where}: {error}", "ArgumentType") from error


def describe(array: Any, index: int, parameter: Any, kernel: str) -> ArrayArgument:
    """Where the array lives and what the runtime needs of it, after the checks that do not
    need the device: element type, C-contiguity and writability."""
    where: Any = _What(index, parameter, kernel)
    protocol = _PROTOCOLS.get(type(array))
    if protocol == _CUDA_INTERFACE:
        interface = _cuda_interface(array, where)
        if interface is not None:
            return _cuda_array(array, interface, parameter, where)
    elif protocol == _ARRAY_INTERFACE:
        return _host_array(array, parameter, where)
    usm = _usm_ndarray(array)
    if usm is not None:
        return _dpnp_array(array, usm, parameter, where)
    interface = getattr(array, "__sycl_usm_array_interface__", None)
    if interface is not None:
        return _sycl_array(array, interface, parameter, where)
    interface = _cuda_interface(array, where)
    # Known for the type when its instances have no attributes of their own and its class
    # defines no SYCL interface (that an instance might report).
    fixed_attributes = not hasattr(array, "__dict__") and not hasattr(
        type(array), "__sycl_usm_array_interface__"
    )
    if interface is not None:
        if fixed_attributes:
            _PROTOCOLS[type(array)] = _CUDA_INTERFACE
        return _cuda_array(array, interface, parameter, where)
    if hasattr(array, "__array_interface__"):
        if fixed_attributes and not hasattr(type(array), "__cuda_array_interface__"):
            _PROTOCOLS[type(array)] = _ARRAY_INTERFACE
        return _host_array(array, parameter, where)
    if hasattr(array, "__dlpack__") and hasattr(array, "__dlpack_device__"):
        return _dlpack_array(array, parameter, where)
    return _host_array(array, parameter, where)
