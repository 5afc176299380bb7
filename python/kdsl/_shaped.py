"""Multi-dimensional buffer parameters (``a: global [[f32]]``): the shape and strides of the
array passed, and a flat one-dimensional view of the memory it spans, which ``_arrays``
then describes like any buffer (zero-copy for device arrays).

A kernel's bundle lists each such parameter with the hidden ``u32`` extent and ``u64``
stride (in elements) parameters that follow it; the launch fills them from the array.
Strides must be non-negative whole numbers of elements (a reversed view such as
``a[::-1]`` is refused: pass a copy), and a writable parameter refuses a zero stride over
more than one element (a broadcast array, whose elements would be written concurrently).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from . import _arrays
from ._errors import ArgumentError

U32_MAX = 2**32 - 1


class Layout(NamedTuple):
    """An array's shape and strides in elements, outermost dimension first."""

    shape: tuple[int, ...]
    strides: tuple[int, ...]

    def span(self) -> int:
        """Elements from the first to one past the last the array reaches (0 when empty)."""
        if any(extent == 0 for extent in self.shape):
            return 0
        return 1 + sum((extent - 1) * stride for extent, stride in zip(self.shape, self.strides))


def _c_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, step = [], 1
    for extent in reversed(shape):
        strides.append(step)
        step *= max(extent, 1)
    return tuple(reversed(strides))


def _element_strides(shape: tuple[int, ...], strides: Any, unit: int, where: str) -> tuple[int, ...]:
    """Strides in units of ``unit`` (the item size for byte strides, 1 for element strides)
    as element strides; None means C-contiguous."""
    if strides is None:
        return _c_strides(shape)
    result = []
    for stride in strides:
        stride = int(stride)
        if stride < 0 or stride % unit:
            raise ArgumentError(
                f"{where} has strides {tuple(strides)}, which are not non-negative whole numbers of "
                f"elements; pass a copy (numpy.ascontiguousarray, dpnp.ascontiguousarray, ...)",
                "BadStrides",
            )
        result.append(stride // unit)
    return tuple(result)


class _UsmSpan:
    """A one-dimensional SYCL USM view of ``count`` elements at ``address``."""

    def __init__(self, array: Any, address: int, count: int, typestr: str, read_only: bool, queue: Any):
        self.array = array  # kept alive with the launch
        self.__sycl_usm_array_interface__ = {
            "data": (address, read_only),
            "shape": (count,),
            "strides": None,
            "typestr": typestr,
            "version": 1,
            "syclobj": queue,
        }


class _CudaSpan:
    """A one-dimensional CUDA array-interface view of ``count`` elements at ``address``."""

    def __init__(self, array: Any, interface: dict, count: int):
        self.array = array
        stream = interface.get("stream") if interface.get("version", 0) >= 3 else None
        if stream is None and type(array).__module__.startswith("torch"):
            import torch

            stream = torch.cuda.current_stream(array.device).cuda_stream or 1
        self.__cuda_array_interface__ = {
            "data": tuple(interface["data"]),
            "shape": (count,),
            "strides": None,
            "typestr": interface["typestr"],
            "version": 3,
            "stream": stream,
        }
        if hasattr(array, "__dlpack_device__"):
            self.__dlpack_device__ = array.__dlpack_device__


def flatten(array: Any, rank: int, writable: bool, where: str) -> tuple[Any, Layout]:
    """The array's layout and a one-dimensional array over the memory it spans, starting at
    its first element; raises ``ArgumentError`` for another rank (``ShapeMismatch``), strides
    that are negative or not whole elements, and extents above 2^32 - 1."""
    usm = _arrays._usm_ndarray(array)
    if usm is not None:
        shape = tuple(int(e) for e in usm.shape)
        _check_rank(shape, rank, where)
        layout = Layout(shape, _element_strides(shape, usm.strides, 1, where))
        flat = _UsmSpan(
            array, usm._pointer, layout.span(), usm.dtype.str, not usm.flags.writable, usm.sycl_queue
        )
    elif (interface := getattr(array, "__sycl_usm_array_interface__", None)) is not None:
        shape = tuple(int(e) for e in interface["shape"])
        _check_rank(shape, rank, where)
        layout = Layout(shape, _element_strides(shape, interface.get("strides"), 1, where))
        itemsize = int(interface["typestr"][2:])
        address, read_only = interface["data"]
        address += int(interface.get("offset", 0) or 0) * itemsize
        queue = interface.get("syclobj")
        if queue is None or not hasattr(queue, "_get_capsule"):
            queue = getattr(array, "sycl_queue", None)
        flat = _UsmSpan(array, address, layout.span(), interface["typestr"], bool(read_only), queue)
    elif (interface := _arrays._cuda_interface(array, where)) is not None:
        shape = tuple(int(e) for e in interface["shape"])
        _check_rank(shape, rank, where)
        itemsize = int(interface["typestr"][2:])
        layout = Layout(shape, _element_strides(shape, interface.get("strides"), itemsize, where))
        flat = _CudaSpan(array, interface, layout.span())
    else:
        import numpy

        try:
            host = numpy.asarray(array)
        except Exception:
            raise ArgumentError(
                f"{where} must be a {rank}-dimensional array, but a {type(array).__name__} was given",
                "ArgumentType",
            ) from None
        shape = tuple(int(e) for e in host.shape)
        _check_rank(shape, rank, where)
        layout = Layout(shape, _element_strides(shape, host.strides, host.itemsize, where))
        flat = numpy.lib.stride_tricks.as_strided(
            host, shape=(layout.span(),), strides=(host.itemsize,), writeable=host.flags.writeable
        )
    for extent, stride in zip(layout.shape, layout.strides):
        if extent > U32_MAX:
            raise ArgumentError(f"{where} has an extent of {extent}, above 2^32 - 1", "ShapeMismatch")
        if writable and stride == 0 and extent > 1:
            raise ArgumentError(
                f"{where} is a `mut` parameter, but the array given has a zero stride (a broadcast "
                f"array, shape {layout.shape}); pass a copy",
                "BadStrides",
            )
    return flat, layout


def _check_rank(shape: tuple[int, ...], rank: int, where: str) -> None:
    if len(shape) != rank:
        raise ArgumentError(
            f"{where} is a {rank}-dimensional buffer, but an array of {len(shape)} dimension"
            f"{'' if len(shape) == 1 else 's'} (shape {shape}) was given",
            "ShapeMismatch",
        )
