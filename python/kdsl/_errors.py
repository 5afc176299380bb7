"""The exception classes of kdsl. Every error kdsl raises is a subclass of :class:`Error`.

Errors raised by the runtime carry ``kind``, the name of the runtime's typed error
(``RuntimeError`` variant in Rust: ``ArgumentType``, ``AliasedBuffers``, ``BadLaunch``, ...), so
code can tell misuse cases apart without parsing messages. A misuse error is raised before
anything reaches the device, so the process (and the device's queue) stays usable after it.
"""

from __future__ import annotations

from typing import Any


class Error(Exception):
    """Base class of every kdsl error."""

    kind: str | None

    def __init__(self, message: str, kind: str | None = None) -> None:
        super().__init__(message)
        self.kind = kind


class CompileError(Error):
    """A ``.krn`` source did not compile.

    ``str(error)`` is the rendered report (``file:line:col``, a snippet, labels and hints);
    ``diagnostics`` holds one dict per problem (``code``, ``message``, ``line``, ``column``,
    ``hints``).
    """

    diagnostics: list[dict[str, Any]]

    def __init__(
        self,
        message: str,
        kind: str | None = "Diagnostics",
        diagnostics: list[dict[str, Any]] | None = None,
    ) -> None:
        super().__init__(message, kind)
        self.diagnostics = list(diagnostics or [])


class CompilerUnavailableError(CompileError):
    """The compiler half of kdsl (``kdsl._compiler``, which needs LLVM 22) could not be loaded,
    and the bundle asked for is not in the on-disk cache."""


class BundleError(Error):
    """A bundle file could not be read or is malformed, or lacks a needed image."""


class DeviceError(Error):
    """No (matching) device, no image for the device, or an error the driver reported."""


class OutOfMemoryError(DeviceError, MemoryError):
    """The device could not allocate memory."""


class LaunchError(Error):
    """A launch was rejected (sizes, work-group limits, local memory) or failed."""


class ArgumentError(LaunchError):
    """An argument does not fit the kernel's signature: count, element type, contiguity,
    a read-only array for a ``mut`` parameter, arrays on different devices, aliasing, or a scalar
    out of range."""


class RecordLayoutError(ArgumentError):
    """A NumPy structured array passed for a buffer of records has a dtype whose fields
    (names, types, offsets) or itemsize differ from the record's C layout; ``field`` names the
    first field that differs (None when only the itemsize or contiguity is wrong)."""

    field: str | None

    def __init__(self, message: str, kind: str | None = "RecordLayout", field: str | None = None) -> None:
        super().__init__(message, kind)
        self.field = field


class KernelNotFoundError(Error, AttributeError):
    """The module has no kernel of that name (the message lists the kernels it has)."""
