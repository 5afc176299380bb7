"""Buffers of records (``nodes: global [Node]``): the record layout from the bundle metadata as
a NumPy structured dtype, and the check of a structured array's dtype against it at launch.

A record buffer is passed as its bytes. A NumPy structured array is checked field by field
(names, types, offsets, itemsize) and passed as a ``uint8`` view of the same memory, so the
kernel's writes land in it. Arrays without structured dtypes (dpnp, CuPy, PyTorch) are passed as
``uint8`` arrays of whole records, which the runtime checks (size a multiple of the record
size, start aligned)."""

from __future__ import annotations

from typing import Any

from ._errors import RecordLayoutError

# The NumPy type of each kernel-language scalar (little-endian, as every kdsl target is).
NUMPY_TYPES = {
    "bool": "?",
    "i8": "i1",
    "u8": "u1",
    "i16": "<i2",
    "u16": "<u2",
    "i32": "<i4",
    "u32": "<u4",
    "i64": "<i8",
    "u64": "<u8",
    "f16": "<f2",
    "f32": "<f4",
    "f64": "<f8",
}


def _numpy_type(ty: str) -> Any:
    """The NumPy dtype of a field of kernel-language type ``ty``; ``bf16`` is ml_dtypes'
    ``bfloat16`` (NumPy has none)."""
    import numpy

    if ty != "bf16":
        return numpy.dtype(NUMPY_TYPES[ty])
    try:
        import ml_dtypes
    except ImportError:
        raise RecordLayoutError(
            "a record with a bf16 field needs ml_dtypes for its NumPy dtype (pip install ml_dtypes)",
            field=None,
        ) from None
    return numpy.dtype(ml_dtypes.bfloat16)


def record_dtype(layout: dict[str, Any]) -> Any:
    """The NumPy structured dtype of a record: ``numpy.dtype(..., align=True)`` of its fields."""
    import numpy

    return numpy.dtype(
        {
            "names": [name for name, _, _ in layout["fields"]],
            "formats": [_numpy_type(ty) for _, ty, _ in layout["fields"]],
            "offsets": [offset for _, _, offset in layout["fields"]],
            "itemsize": layout["size"],
            "aligned": True,
        }
    )


def check_dtype(dtype: Any, layout: dict[str, Any], where: str) -> None:
    """Raises :class:`RecordLayoutError` naming the first field where ``dtype`` differs."""
    record = layout["name"]
    names = list(dtype.names or ())
    expected = [name for name, _, _ in layout["fields"]]
    for name, ty, offset in layout["fields"]:
        if name not in names:
            raise RecordLayoutError(
                f"{where}: the array's dtype has no field `{name}` of the record `{record}` "
                f"(its fields are {names}); use kdsl's dtype: kernel.records[{record!r}]",
                field=name,
            )
        field_type, field_offset = dtype.fields[name][:2]
        want = _numpy_type(ty)
        if field_type != want or field_offset != offset:
            raise RecordLayoutError(
                f"{where}: field `{name}` of the array's dtype is {field_type} at offset "
                f"{field_offset}, but the record `{record}` has {ty} ({want}) at offset {offset}",
                field=name,
            )
    extra = [name for name in names if name not in expected]
    if extra:
        raise RecordLayoutError(
            f"{where}: the array's dtype has field `{extra[0]}`, which the record `{record}` lacks",
            field=extra[0],
        )
    if names != expected:
        raise RecordLayoutError(
            f"{where}: the array's fields are in the order {names}, the record `{record}` "
            f"declares {expected}",
            field=next(a for a, b in zip(names, expected) if a != b),
        )
    if dtype.itemsize != layout["size"]:
        raise RecordLayoutError(
            f"{where}: the array's records are {dtype.itemsize} bytes apart, the record "
            f"`{record}` is {layout['size']} bytes (C layout, numpy.dtype(..., align=True))",
            field=None,
        )


def as_bytes(array: Any, layout: dict[str, Any], where: str) -> Any:
    """A structured array checked and viewed as ``uint8``; anything else unchanged."""
    dtype = getattr(array, "dtype", None)
    if dtype is None or getattr(dtype, "names", None) is None:
        return array
    check_dtype(dtype, layout, where)
    import numpy

    if not isinstance(array, numpy.ndarray):
        return array
    if not array.flags.c_contiguous:
        raise RecordLayoutError(
            f"{where}: the array of records is not contiguous; pass numpy.ascontiguousarray(...)",
            field=None,
        )
    return array.reshape(-1).view(numpy.uint8)
