"""Local memory sized at launch: the argument of a ``local mut [T]`` kernel parameter."""

from __future__ import annotations

from typing import Any

from ._arrays import NUMPY_NAME, TYPESTR
from ._errors import ArgumentError

_TYPE_NAMES = {NUMPY_NAME[code]: kdsl for kdsl, code in TYPESTR.items()}


def _type_name(dtype: Any) -> str:
    """The kdsl name of an element type given as ``"f32"``, ``"float32"``, ``numpy.float32``
    or ``numpy.dtype("float32")``."""
    if isinstance(dtype, str) and dtype in TYPESTR:
        name = dtype
    else:
        try:
            import numpy

            name = _TYPE_NAMES.get(numpy.dtype(dtype).name, "")
        except (ImportError, TypeError):
            name = ""
    if not name or name == "bool":
        raise ArgumentError(
            f"kdsl.local: {dtype!r} is not an element type (use f32, f64, i32, u32, ... or a NumPy dtype)",
            "ArgumentType",
        )
    return name


class LocalMemory(tuple):
    """``kdsl.local(length, dtype)``: work-group local memory of ``length`` elements for a
    ``local mut [T]`` parameter; each work-group of the launch gets its own, uninitialized.
    Like dpctl's ``LocalAccessor``. Read ``length`` and ``dtype`` (the kdsl type name)."""

    __slots__ = ()

    def __new__(cls, length: int, dtype: Any) -> LocalMemory:
        if isinstance(length, bool) or not isinstance(length, int) or length < 1:
            raise ArgumentError(f"kdsl.local: the length must be a positive int, not {length!r}", "ArgumentType")
        return super().__new__(cls, ("local", length, _type_name(dtype)))

    @property
    def length(self) -> int:
        return int(self[1])

    @property
    def dtype(self) -> str:
        return str(self[2])

    def __repr__(self) -> str:
        return f"kdsl.local({self.length}, {self.dtype!r})"


def local(length: int, dtype: Any) -> LocalMemory:
    """Local memory of ``length`` elements of ``dtype`` (``"f32"``, ``numpy.float32``, ...) for a
    ``local mut [T]`` kernel parameter: ``kernel[global, group](out, kdsl.local(group, "f32"))``."""
    return LocalMemory(length, dtype)
