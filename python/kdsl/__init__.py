"""kdsl: portable GPU kernels from Python.

Write a kernel once in kdsl's language (``.krn``), compile it to SPIR-V (SYCL), PTX (CUDA) and
AMDGPU (HIP), and launch it on the arrays you already have: dpnp/dpctl USM arrays, CuPy and
PyTorch tensors, anything with DLPack, and NumPy arrays::

    import kdsl, numpy as np
    module = kdsl.compile(path="saxpy.krn")
    y, x = np.ones(1000, np.float32), np.arange(1000, dtype=np.float32)
    module.saxpy[1024, 256](y, x, 2.0, 1000)      # or module.saxpy(y, x, 2.0, 1000, global_size=1024)

Compute follows data: dpnp/dpctl arrays run on their own SYCL queue, CuPy/PyTorch arrays on
their CUDA device and stream, NumPy arrays on ``device=`` (default: a GPU before a CPU) with
copies in and, for ``mut`` parameters, back out.

The compiler (``kdsl._compiler``, which links LLVM 22) is imported only when a compilation is
needed; loading bundles, listing devices and launching need only ``kdsl._runtime``.
"""

from ._environment import prepare_environment as _prepare_environment

_prepare_environment()

from . import _exit, _runtime  # noqa: E402
from ._compile import (  # noqa: E402
    COMPILER_VERSION,
    DEFAULT_TARGETS,
    cache_dir,
    cache_info,
    clear_cache,
    compile,
    default_targets,
    load,
)
from ._devices import Device, DeviceInfo, default_device, device_notes, devices  # noqa: E402
from ._errors import (  # noqa: E402
    ArgumentError,
    BundleError,
    CompileError,
    CompilerUnavailableError,
    DeviceError,
    Error,
    KernelNotFoundError,
    LaunchError,
    OutOfMemoryError,
    RecordLayoutError,
)
from ._module import Event, Kernel, Launch, Module, Parameter, launch_sizes  # noqa: E402

_exit.register()

__version__ = "0.1.0"

__all__ = [
    "ArgumentError",
    "BundleError",
    "COMPILER_VERSION",
    "CompileError",
    "CompilerUnavailableError",
    "DEFAULT_TARGETS",
    "Device",
    "DeviceError",
    "DeviceInfo",
    "Error",
    "Event",
    "Kernel",
    "KernelNotFoundError",
    "Launch",
    "LaunchError",
    "Module",
    "OutOfMemoryError",
    "RecordLayoutError",
    "Parameter",
    "cache_dir",
    "cache_info",
    "clear_cache",
    "compile",
    "default_device",
    "default_targets",
    "device_notes",
    "devices",
    "launch_sizes",
    "load",
]
