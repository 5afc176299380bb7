"""A prompt interpreter exit while kernels still run.

A launch cannot be cancelled, and exit used to wait for every running kernel (for ever for
one that never ends): in dpctl's at-exit wait for the events its ``SequentialOrderManager``
holds (kdsl records launches on dpnp's queues there) and in the OpenCL CPU runtime's library
destructor. The hook here runs before dpctl's: if a kdsl launch is still running, it keeps
dpctl from waiting and arms the runtime's C-level exit handler
(``crates/kdsl-python/src/exit.rs``), so that once Python has finalized, the process ends
with Python's exit status without the library destructors that would wait.
"""

from __future__ import annotations

import atexit
import sys

from . import _runtime


def _exit_promptly_if_busy() -> None:
    if not _runtime.arm_prompt_exit():
        return
    order_manager = sys.modules.get("dpctl.utils._order_manager")
    finalizer = getattr(order_manager, "f", None)
    if finalizer is not None:
        finalizer.detach()


def register() -> None:
    """(Re)registers the hook last, so that it runs first (atexit runs the last registered
    first): at import, and again once dpctl, whose wait must come after it, is in use."""
    atexit.unregister(_exit_promptly_if_busy)
    atexit.register(_exit_promptly_if_busy)
