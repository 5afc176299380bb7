"""Type stubs of ``kdsl._compiler``, the native half of kdsl that links LLVM 22. Imported
only by ``kdsl.compile`` on a cache miss."""

from typing import Any

def compile(
    source_name: str,
    source: str,
    targets: list[str],
    opt_level: int = 3,
    defines: list[tuple[str, str]] = ...,
    checked: bool = False,
    skip_unfit: bool = False,
) -> tuple[bytes | None, str | None, list[dict[str, Any]], list[str]]:
    """``(bundle_bytes, None, [], skipped)``, or ``(None, rendered_report, diagnostics,
    skipped)``; with ``skip_unfit`` the targets the kernels do not fit are left out (unless
    none would remain) and ``skipped`` says which and why."""

def default_targets() -> list[str]: ...
