"""Compiling ``.krn`` sources (with an on-disk cache) and loading bundles."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import warnings
from pathlib import Path
from typing import Any, Iterable, Mapping

from . import _runtime
from ._errors import BundleError, CompileError, CompilerUnavailableError, Error
from ._module import Module

COMPILER_VERSION: str = _runtime.COMPILER_VERSION

DEFAULT_TARGETS: tuple[str, ...] = ("spirv", "ptx", "ptx:sm_90", "amdgpu", "amdgpu:gfx1100")
"""What a bundle gets unless ``targets=`` says otherwise (``kdsl::default_targets``): SPIR-V,
PTX for the default processor and sm_90, AMDGPU for the default processor and gfx1100."""


def default_targets() -> list[str]:
    return list(DEFAULT_TARGETS)


def cache_dir() -> Path:
    """Where compiled bundles are cached: ``KDSL_CACHE_DIR``, else ``$XDG_CACHE_HOME/kdsl``,
    else ``~/.cache/kdsl``."""
    configured = os.environ.get("KDSL_CACHE_DIR")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kdsl"


def _normalize_targets(targets: str | Iterable[str] | None) -> list[str]:
    if targets is None:
        return list(DEFAULT_TARGETS)
    if isinstance(targets, str):
        targets = targets.split(",")
    try:
        targets = list(targets)
    except TypeError:
        raise CompileError(f"targets= takes a str or a list of str, not {type(targets).__name__}", "BadTarget") from None
    for target in targets:
        if not isinstance(target, str) or "\0" in target:
            raise CompileError(
                f"targets= takes names such as spirv, ptx:sm_90 and amdgpu:gfx90a, not {target!r}", "BadTarget"
            )
    normalized = [target.strip() for target in targets if target.strip()]
    if not normalized:
        raise CompileError("targets= names no target (spirv, ptx[:sm_XX], amdgpu[:gfxNNN])", "BadTarget")
    for target in normalized:
        kind = target.split(":", 1)[0]
        if kind not in ("spirv", "ptx", "amdgpu"):
            raise CompileError(
                f"unknown target `{target}`: the targets are spirv[:intel_gpu_pvc], ptx[:sm_XX] and amdgpu[:gfxNNN]",
                "BadTarget",
            )
    return normalized


def _normalize_defines(defines: Mapping[str, Any] | None) -> dict[str, str]:
    """Each value as the literal the compiler reads: ``true``/``false``, ints as written,
    floats in their shortest exact form (``repr``), strings as given."""
    if not defines:
        return {}
    normalized = {}
    for name, value in defines.items():
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, int):
            text = str(value)
        elif isinstance(value, float):
            text = repr(value)
        elif isinstance(value, str):
            text = value
        else:
            raise CompileError(
                f"define `{name}`: the value must be a bool, int, float or str, not {type(value).__name__}",
                "BadDefine",
            )
        normalized[str(name)] = text
    return normalized


def cache_key(
    source: str, targets: list[str], defines: dict[str, str], opt_level: int, checked: bool = False
) -> str:
    """The cache key: a hash of the compiler version, the source and every option. It needs
    no compiler, so a machine without LLVM finds bundles compiled elsewhere into the same
    cache directory."""
    description = json.dumps(
        {
            "compiler": COMPILER_VERSION,
            "source": source,
            "targets": targets,
            "defines": sorted(defines.items()),
            "opt_level": opt_level,
            **({"checked": True} if checked else {}),
        },
        sort_keys=True,
    )
    return hashlib.sha256(description.encode()).hexdigest()


def _load_compiler() -> Any:
    try:
        from . import _compiler
    except ImportError as error:
        raise CompilerUnavailableError(
            f"the kdsl compiler is not available here ({error}); it needs LLVM 22's libLLVM. "
            f"Only bundles already in the cache ({cache_dir()}) or .kbundle files (kdsl.load) "
            f"can be used on this machine",
            "CompilerUnavailable",
        ) from error
    return _compiler


# A cache entry is the bundle followed by this line and its key: the bundle a key's file
# holds is used only if it was stored under that key (the bundle reader ignores bytes after
# the images), so a bundle of another source copied to that name is compiled over instead.
_CACHE_KEY_LINE = b"\nkdsl-cache-key "


def _cache_entry(bundle: bytes, key: str) -> bytes:
    return bundle + _CACHE_KEY_LINE + key.encode() + b"\n"


def _cached_bundle(entry: bytes, key: str) -> bytes | None:
    """The bundle of a cache entry stored under `key`, else None."""
    tail = _CACHE_KEY_LINE + key.encode() + b"\n"
    return entry[: -len(tail)] if entry.endswith(tail) else None


def _write_atomically(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".kbundle")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def compile(
    source: str | None = None,
    path: str | os.PathLike[str] | None = None,
    targets: str | Iterable[str] | None = None,
    defines: Mapping[str, Any] | None = None,
    *,
    opt_level: int = 3,
    checked: bool = False,
    cache: bool = True,
) -> Module:
    """Compiles kdsl source text (``source=``) or a ``.krn`` file (``path=``) into a
    :class:`Module`.

    - ``targets``: ``"spirv"``, ``"ptx"``, ``"ptx:sm_90"``, ``"amdgpu:gfx90a"`` (a list, or one
      comma-separated string); default :data:`DEFAULT_TARGETS` (plus ``ptx:sm_90a`` for
      matrix-group statements, whose matrix units only that image reaches), of which a target
      the kernels do not fit (a GPU's local-memory limit, say) is left out with a warning; a target named
      here that they do not fit is a :class:`CompileError`.
    - ``defines``: module constants set at compile time (``{"TILE": 16, "SCALE": 0.5}``), as
      ``kdsl compile -D NAME=VALUE``: each replaces the declared value of the ``const`` it names;
      the value must be a literal of the constant's type (a float for an ``f32`` constant).
      Part of the cache key.
    - ``checked=True`` compiles in checked mode (``kdsl compile --checked``): every buffer and
      array access and integer division is checked, and the first violation of a launch is
      raised by the launch's ``Event.wait()`` (or by the launch itself when NumPy arrays are
      copied back) as :class:`LaunchError` with ``kind == "KernelFault"``, naming the kernel,
      ``file:line:col``, the buffer or array, the index and the work-item. Without it an
      out-of-bounds access is undefined behaviour.
    - Errors in the source raise :class:`CompileError`, whose ``str()`` is the rendered report
      with ``file:line:col``.
    - Bundles are cached on disk (:func:`cache_dir`) keyed by the source, the options and the
      compiler version, so compiling the same kernels again costs no compilation, and works
      where the compiler is unavailable (no LLVM) when the bundle is cached. The program a
      device builds from it is kept too (:func:`cache_info`), so a new process's first launch
      does not build it again.

    Example::

        import kdsl, numpy as np
        module = kdsl.compile(source='''
            kernel scale(y: global mut [f32], a: f32, n: u32) {
                let i = get_global_id(0);
                if i < n { y[i] = a * y[i]; }
            }''')
        y = np.ones(1000, np.float32)
        module.scale[1024, 256](y, 3.0, 1000)   # NumPy: copied in and back, waits
        assert (y == 3.0).all()
    """
    if (source is None) == (path is None):
        raise CompileError("kdsl.compile takes exactly one of source= and path=", "BadArguments")
    if path is not None:
        try:
            source = Path(path).read_bytes().decode("utf-8", errors="replace")
        except OSError as error:
            raise CompileError(f"cannot read `{path}`: {error}", "Io") from error
        source_name = str(path)
    else:
        source_name = "<source>"
    assert source is not None
    normalized_targets = _normalize_targets(targets)
    normalized_defines = _normalize_defines(defines)
    if type(opt_level) is not int or not 0 <= opt_level <= 3:
        raise CompileError(f"opt_level must be an int from 0 to 3 (as kdsl compile -O), not {opt_level!r}", "BadOptLevel")
    checked = bool(checked)
    key = cache_key(source, normalized_targets, normalized_defines, opt_level, checked)
    cached = cache_dir() / f"{key}.kbundle"
    if cache and cached.exists():
        try:
            stored = _cached_bundle(cached.read_bytes(), key)
            if stored is not None:
                return Module(_runtime.Bundle.from_bytes(stored), from_cache=True, source_name=source_name)
        except (Error, OSError):
            pass  # a damaged or foreign cache entry is compiled again and overwritten
    compiler = _load_compiler()
    try:
        data, report, diagnostics, skipped = compiler.compile(
            source_name,
            source,
            normalized_targets,
            opt_level,
            sorted(normalized_defines.items()),
            checked,
            skip_unfit=targets is None,
        )
    except ValueError as error:
        raise CompileError(str(error), "BadTarget") from error
    for reason in skipped:
        warnings.warn(f"kdsl.compile: {reason}", stacklevel=2)
    if data is None:
        raise CompileError(report, "Diagnostics", diagnostics)
    bundle = _runtime.Bundle.from_bytes(data)
    if cache:
        try:
            _write_atomically(cached, _cache_entry(bytes(data), key))
        except OSError:
            pass  # an unwritable cache only costs the next compilation
    return Module(bundle, source_name=source_name)


def load(path: str | os.PathLike[str]) -> Module:
    """Reads a ``.kbundle`` file (``kdsl compile`` or :meth:`Module.save` wrote it). Needs no
    compiler."""
    try:
        return Module(_runtime.Bundle.read(Path(path)))
    except BundleError:
        raise


def clear_cache() -> int:
    """Deletes every cached bundle, and the native programs cached beside them (the
    ``native`` folder, see :func:`cache_info`); returns how many bundles were deleted."""
    removed = 0
    directory = cache_dir()
    if directory.is_dir():
        for entry in directory.glob("*.kbundle"):
            entry.unlink(missing_ok=True)
            removed += 1
        for entry in (directory / "native").glob("*.bin"):
            entry.unlink(missing_ok=True)
    return removed


def cache_info() -> dict[str, Any]:
    """Where kdsl caches, and what the native program cache did in this process.

    ``{"bundles": <folder of compiled bundles>, "native": {"directory": ..., "hits": ...,
    "misses": ..., "rejected": ..., "stores": ...}}``. The native program cache (kdsl's runtime,
    for SYCL devices on OpenCL) keeps the driver's binary of each built program, keyed by
    device, driver version and image, so the first launch in a new process loads it instead
    of compiling the SPIR-V again. Its folder is ``KDSL_NATIVE_CACHE_DIR``, else ``native`` in
    the bundle cache; ``KDSL_NATIVE_CACHE=off`` turns it off. A damaged or foreign entry is
    counted in ``rejected``, ignored and written again.

    ``kdsl.cache_info()["native"]["hits"]`` counts the programs loaded from disk so far.
    """
    return {"bundles": str(cache_dir()), "native": dict(_runtime.native_cache_info())}
