"""Type stubs of ``kdsl._runtime``, the native half of kdsl that does not link LLVM:
device discovery, bundles, loaded programs, checked launches and events."""

from os import PathLike
from typing import Any, Callable

COMPILER_VERSION: str
"""``kdsl 0.1.0 (compiler sources <hash>)``: keys the on-disk bundle cache."""
SYCL_BUILT_IN: bool

def devices() -> list[dict[str, Any]]:
    """Every device found on every backend, as dicts (see ``kdsl.DeviceInfo``)."""

def native_cache_info() -> dict[str, Any]:
    """The native program cache: ``directory`` (None when off), ``hits``, ``misses``,
    ``rejected``, ``stores`` in this process."""

def device_notes() -> list[str]:
    """One line per backend that found no device, saying why."""

def arm_prompt_exit() -> bool:
    """For kdsl's at-exit hook: True, with the prompt exit armed, when a launch still runs."""

def dlpack_tensor(capsule: Any) -> dict[str, Any]:
    """The tensor of an unconsumed DLPack capsule: address, device_type, device_id, typestr,
    shape, strides (elements, or None) and read_only."""

class Device:
    """An opened device instance with its own queue (SYCL) or stream (CUDA, HIP)."""

    def __init__(self, filter: str | None = None) -> None:
        """Opens the first device matching ``filter`` (``"cuda:0"``, ``"sycl:cpu"``, ``"gpu"``),
        or the default device (``KDSL_DEVICE``, else a GPU before a CPU)."""
    @staticmethod
    def from_sycl_queue(capsule: Any) -> Device:
        """Adopts the SYCL queue of dpctl's ``SyclQueue._get_capsule()``."""
    @staticmethod
    def from_cuda_stream(ordinal: int, stream: int, profiled: bool = True) -> Device:
        """Adopts a CUDA stream (0: the legacy default stream) of a device's primary context;
        ``profiled``: launches record timing events (``Event.elapsed_ns``)."""
    @staticmethod
    def from_hip_stream(ordinal: int, stream: int) -> Device:
        """Adopts a HIP stream (0: the null stream). Never run on hardware."""
    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def backend(self) -> str: ...
    @property
    def label(self) -> str:
        """``sycl:0 instance 3``: the device and which opened instance this is."""
    def info(self) -> dict[str, Any]: ...
    def synchronize(self) -> None:
        """Waits until everything submitted to this device instance has finished."""

class Bundle:
    """A kdsl bundle: images per target and the kernels' signatures."""

    @staticmethod
    def from_bytes(data: bytes) -> Bundle: ...
    @staticmethod
    def read(path: str | PathLike[str]) -> Bundle: ...
    def to_bytes(self) -> bytes: ...
    @property
    def source_name(self) -> str: ...
    def kernels(self) -> list[dict[str, Any]]: ...
    def image_names(self) -> list[str]: ...
    def image(self, name: str) -> bytes | None: ...
    def spirv_for_sycl(self) -> bytes | None:
        """The SPIR-V image for dpctl, checked as the runtime checks it before a driver; a
        checked-mode bundle raises BundleError (kind CheckedMode)."""

class Program:
    """A bundle's image loaded on one device instance."""

    def __init__(self, device: Device, bundle: Bundle) -> None: ...
    @property
    def image(self) -> str: ...
    def kernel(self, name: str) -> Kernel: ...

class Kernel:
    """One kernel of a loaded program."""

    @property
    def name(self) -> str: ...
    def sycl_kernel_address(self) -> int:
        """The address of the ``sycl::kernel`` inside, on a SYCL device (for dpctl's
        ``SyclKernel_Make``, which copies it); ``kdsl.DeviceError`` elsewhere."""
    def launch(
        self,
        arguments: tuple[Any, ...],
        global_size: list[int],
        local_size: list[int],
        wait_for_sycl: list[int] = ...,
        keep_alive: Any = None,
    ) -> Event:
        """Buffer arguments are ``(kind, address, count, read_only)`` tuples (kind 0: host
        memory, copied; kind 1: memory of this device instance, borrowed); scalars are Python
        numbers converted by the signature. With host memory the call waits for its copies;
        Ctrl-C interrupts that wait, and ``keep_alive`` (the arrays) is then kept referenced
        until the copies are done."""

class Event:
    """A submitted launch."""

    def wait(self) -> None:
        """Waits for the launch; raises what the device reported. Ctrl-C (KeyboardInterrupt)
        interrupts the wait, not the kernel."""
    @property
    def is_complete(self) -> bool: ...
    @property
    def elapsed_ns(self) -> int:
        """Waits (interruptibly, as ``wait``), then gives the kernel's execution time in
        nanoseconds (device-measured)."""
    def sycl_event_capsule(self) -> Any | None:
        """A ``"SyclEventRef"`` capsule of the launch's ``sycl::event`` for ``dpctl.SyclEvent``
        (valid while this event lives); None on CUDA and HIP."""

class Launcher:
    """The native launch fast path of one kernel: dpnp/dpctl arrays (on out-of-order queues
    ordered through dpctl's SequentialOrderManager, as dpnp orders its work), CuPy
    and PyTorch CUDA arrays, read and checked without Python frames; anything else goes to
    the Python path."""

    def __init__(
        self,
        name: str,
        parameters: list[tuple[str, str, bool, int]],
        resolve: Callable[[str, Any], tuple[Kernel, Any | None] | None],
    ) -> None: ...
    def configure(self, global_size: list[int], local_size: list[int], fallback: Callable[..., Event]) -> Configured: ...
    def try_launch_sizes(self, args: tuple[Any, ...], global_size: list[int], local_size: list[int]) -> Event | None: ...

class Configured:
    """A kernel with its launch sizes, ``kernel[global_size, local_size]``: call it with the
    kernel's arguments to submit one launch, which returns an :class:`Event`.

    The launch runs where the arrays live (dpnp/dpctl: their queue; CuPy/PyTorch: their device
    and stream; NumPy: ``device=``, else the default device, with copies) and does not block,
    except for NumPy arrays. Sizes count work-items, dimension 0 fastest (``get_global_id(0)``,
    CUDA's x)::

        event = module.saxpy[1024, 256](y, x, 2.0, 1000)
        event.wait()
    """

    def __call__(
        self,
        *args: Any,
        device: Any = None,
        queue: Any = None,
        stream: Any = None,
        profile: bool = False,
    ) -> Event: ...
