"""Modules (compiled bundles), their kernels, and launches."""

from __future__ import annotations

import collections
import hashlib
import inspect
import threading
from pathlib import Path
from typing import Any, Iterator, NamedTuple, Sequence, Union

from . import _arrays, _records, _runtime, _shaped
from ._devices import Device, DeviceLike, resolve_device
from ._errors import ArgumentError, BundleError, KernelNotFoundError, LaunchError

Event = _runtime.Event
Launch = _runtime.Configured
"""``kernel[global_size, local_size]``: a kernel with its launch sizes; calling it with the
kernel's arguments submits the launch and returns an :class:`Event`."""

Size = Union[int, Sequence[int]]


class Parameter(NamedTuple):
    """One kernel parameter as the bundle's metadata describes it."""

    name: str
    kind: str
    """``"buffer"``, ``"scalar"`` or ``"local"`` (local memory sized at launch: pass
    :func:`kdsl.local`)."""
    type: str
    """The scalar type, or the element type of a buffer: ``f32``, ``u32``, ..."""
    writable: bool
    """True for ``mut`` buffers."""
    space: str | None
    """``"global"`` or ``"constant"`` for buffers, ``"local"`` for local memory, None for scalars."""
    record: dict[str, Any] | None = None
    """For a buffer of records (``type`` then ``u8``): the layout, ``{"name", "size",
    "alignment", "fields": [(name, type, offset), ...]}``."""
    rank: int = 1
    """The number of dimensions of a buffer: 2 for ``global [[f32]]``, 3 for ``[[[f32]]]``."""

    def __str__(self) -> str:
        if self.kind in ("buffer", "local"):
            mutability = "mut " if self.writable else ""
            element = self.record["name"] if self.record else self.type
            element = "[" * self.rank + element + "]" * self.rank
            return f"{self.name}: {self.space} {mutability}{element}"
        return f"{self.name}: {self.type}"


def _dimensions(size: Size, what: str) -> tuple[int, ...]:
    try:
        values = (size,) if isinstance(size, int) else tuple(size)
    except TypeError:
        raise LaunchError(f"{what} must be an int or a tuple of 1 to 3 ints, not {size!r}", "BadLaunch") from None
    if not 1 <= len(values) <= 3:
        raise LaunchError(f"{what} has {len(values)} dimensions; a launch has 1, 2 or 3", "BadLaunch")
    for value in values:
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 1 << 64:
            raise LaunchError(f"{what} must be non-negative ints below 2^64, not {size!r}", "BadLaunch")
    return values


def _is_int_size(size: Any) -> bool:
    """True for an int or a tuple of ints (bools and floats excluded): the launch sizes that
    may key the cache of configured launches, where ``1.0`` and ``True`` equal ``1``."""
    if type(size) is int:
        return True
    return type(size) is tuple and all(type(value) is int for value in size)


def launch_sizes(
    global_size: Size, local_size: Size | None, required: Sequence[int] | None = None
) -> tuple[list[int], list[int]]:
    """Normalizes launch sizes (dimension 0 fastest). Without a local size, a kernel that
    requires a work-group size (``#[work_group_size(...)]``) gets it; otherwise the local size
    is ``[]``, left open: SYCL devices choose it themselves (``parallel_for(range)``: any global
    size works); on CUDA the driver's occupancy calculation bounds the work-group (on HIP,
    256) and each dimension gets the largest divisor of its global size within it."""
    global_dims = _dimensions(global_size, "global_size")
    if local_size is None and required is not None:
        local_dims: tuple[int, ...] = tuple(required[: len(global_dims)])
    elif local_size is None:
        local_dims = ()
    else:
        local_dims = _dimensions(local_size, "local_size")
        if len(local_dims) != len(global_dims):
            raise LaunchError(
                f"global_size {global_dims} and local_size {local_dims} have different numbers "
                f"of dimensions",
                "BadLaunch",
            )
    return list(global_dims), list(local_dims)


def _stream_handle(stream: Any) -> int:
    """A CUDA/HIP stream as an int handle: an int, a CuPy stream (``.ptr``), a PyTorch stream
    (``.cuda_stream``)."""
    if isinstance(stream, int):
        return stream
    for attribute in ("ptr", "cuda_stream", "handle"):
        value = getattr(stream, attribute, None)
        if isinstance(value, int):
            return value
    raise ArgumentError(
        f"stream= takes an int handle, a CuPy stream or a PyTorch stream, not {type(stream).__name__}",
        "ArgumentType",
    )


def _interface_stream(value: Any) -> int:
    """The stream of a ``__cuda_array_interface__`` as a handle: 1 (and None) is the legacy
    default stream (handle 0), 2 the per-thread default stream (``CU_STREAM_PER_THREAD``)."""
    if value is None or value == 1:
        return 0
    return int(value)


_lock = threading.Lock()
_sycl_devices: dict[Any, Device] = {}
_gpu_devices: dict[tuple[str, int, int, bool], Device] = {}


def sycl_device(queue: Any) -> Device:
    """The device instance adopting a dpctl ``SyclQueue`` (one per queue, made once)."""
    device = _sycl_devices.get(queue)  # made once: later launches need no lock
    if device is not None:
        return device
    with _lock:
        device = _sycl_devices.get(queue)
        if device is None:
            device = Device.from_sycl_queue(queue._get_capsule())
            _sycl_devices[queue] = device
        return device


_order_managers: Any = None


def _order_manager(queue: Any) -> Any:
    """dpctl's ``SequentialOrderManager`` of a queue (dpnp orders its operations through it)."""
    global _order_managers
    if _order_managers is None:
        from dpctl.utils import SequentialOrderManager

        from . import _exit

        _order_managers = SequentialOrderManager
        # dpctl's at-exit wait is registered now: kdsl's exit hook must run before it.
        _exit.register()
    return _order_managers[queue]


def gpu_device(kind: str, ordinal: int, stream: int, profiled: bool = False) -> Device:
    """The device instance adopting a CUDA (or HIP) stream of a device's primary context.
    Unprofiled unless asked (launches then cost about a bare ``cuLaunchKernel``); a profiled
    instance of the same stream is another instance, ordered with it by the stream itself."""
    key = (kind, ordinal, stream, profiled)
    device = _gpu_devices.get(key)  # made once: later launches need no lock
    if device is not None:
        return device
    with _lock:
        device = _gpu_devices.get(key)
        if device is None:
            if kind == "cuda":
                device = Device.from_cuda_stream(ordinal, stream, profiled)
            else:
                device = Device.from_hip_stream(ordinal, stream)
            _gpu_devices[key] = device
        return device


class _InFlight:
    """The arrays of one device instance's launches on borrowed memory, kept referenced until
    those launches have completed, even if the caller drops them.

    An instance's launches complete in the order submitted (kdsl's work on it goes through one
    in-order queue or stream), so a group of launches has completed once its last one has:
    only that launch's event is kept, queried when a later group closes (holding and querying
    an event per launch cost more than the launch on the SYCL CPU device). Submission and
    bookkeeping share a lock, so the order recorded is the order submitted even when threads
    launch at once."""

    GROUP = 64

    __slots__ = ("device", "sycl_queue", "in_order", "lock", "groups", "open")

    def __init__(self, device: Device, sycl_queue: Any) -> None:
        self.device = device
        # The dpctl queue the instance adopted (None for CUDA and HIP streams), and whether
        # it is in order (a property that asks the SYCL runtime, read once).
        self.sycl_queue = sycl_queue
        self.in_order = sycl_queue is None or bool(sycl_queue.is_in_order)
        self.lock = threading.Lock()
        self.groups: collections.deque[tuple[Any, list[Any]]] = collections.deque()
        self.open: list[Any] = []

    def submit(
        self, kernel: Any, prepared: tuple, global_dims: list[int], local_dims: list[int], arrays: Any
    ) -> Event:
        """Submits a launch and keeps `arrays` referenced until it has completed."""
        with self.lock:
            if self.in_order:
                event = kernel.launch(prepared, global_dims, local_dims)
            else:
                event = _submit(kernel, prepared, global_dims, local_dims, self.sycl_queue, False)
            self.open.append(arrays)
            if len(self.open) >= self.GROUP:
                self.groups.append((event, self.open))
                self.open = []
                while self.groups and self.groups[0][0].is_complete:
                    self.groups.popleft()
            return event


_in_flight: dict[Device, _InFlight] = {}


def _in_flight_of(device: Device, sycl_queue: Any) -> _InFlight:
    in_flight = _in_flight.get(device)
    if in_flight is None:
        with _lock:
            in_flight = _in_flight.get(device)
            if in_flight is None:
                in_flight = _InFlight(device, sycl_queue)
                _in_flight[device] = in_flight
    return in_flight


def _submit(
    kernel: Any,
    prepared: tuple,
    global_dims: list[int],
    local_dims: list[int],
    sycl_queue: Any,
    in_order: bool,
    keep_alive: Any = None,
) -> Event:
    """Submits a launch; on an out-of-order dpctl queue (dpnp's default) ordered the way dpnp
    orders its own operations: after the events dpctl's SequentialOrderManager holds for the
    queue (the arrays' producers), and recorded there, so what dpnp submits next follows it."""
    if in_order:
        return kernel.launch(prepared, global_dims, local_dims, keep_alive=keep_alive)
    manager = _order_manager(sycl_queue)
    producers = manager.submitted_events
    event = kernel.launch(
        prepared, global_dims, local_dims, [e.addressof_ref() for e in producers], keep_alive=keep_alive
    )
    launched = _sycl_event(event.sycl_event_capsule())
    manager.add_event_pair(launched, launched)
    return event


_sycl_event_type: Any = None


def _sycl_event(capsule: Any) -> Any:
    """A dpctl ``SyclEvent`` copied from a ``"SyclEventRef"`` capsule."""
    global _sycl_event_type
    if _sycl_event_type is None:
        from dpctl import SyclEvent

        _sycl_event_type = SyclEvent
    return _sycl_event_type(capsule)


class Kernel:
    """A kernel of a :class:`Module`: its signature, and launches.

    ``kernel[global_size, local_size](*args)`` or
    ``kernel(*args, global_size=..., local_size=..., device=None, queue=None, stream=None)``;
    either returns an :class:`Event`. Sizes count work-items: ints or tuples of 1 to 3 ints,
    **dimension 0 fastest** (``get_global_id(0)``, CUDA's x). SYCL orders ranges the other way
    (its last dimension is fastest): numba-dpex's ``kernel[Range(h, w), Range(lh, lw)]`` is
    kdsl's ``kernel[(w, h), (lw, lh)]``. Without a local size a kernel with
    ``#[work_group_size(...)]`` gets that size; for any other kernel the backend chooses: SYCL
    devices pick the work-group size themselves (``parallel_for(range)``, so the global size
    may be any size, a prime one too); on CUDA the driver's occupancy calculation for the
    kernel bounds the work-group (on HIP, 256) and each dimension gets the largest divisor of
    its global size within that bound. Kernels using local memory get the largest power of
    two up to 256 (1-D), 16 (2-D) or 8 (3-D) dividing each dimension. A kernel whose code
    depends on its work-group size (local arrays, barriers, ``get_local_id``) should be given
    one, or declare it with ``#[work_group_size(...)]``.

    Example::

        module = kdsl.compile(path="examples/saxpy.krn")
        saxpy = module.saxpy            # help(saxpy) shows saxpy's own parameters
        event = saxpy[1024, 256](y, x, 2.0, 1000)   # y, x: dpnp, CuPy, PyTorch or NumPy
        event.wait()
        saxpy(y, x, 2.0, 1000, global_size=1024)    # the same, local size chosen
    """

    __signature__: inspect.Signature
    """``inspect.signature(kernel)``: the kernel's own parameters, then the launch options."""

    def __init__(self, module: Module, info: dict[str, Any]) -> None:
        self.module = module
        self.name: str = info["name"]
        all_parameters = tuple(Parameter(**p) for p in info["parameters"])
        # Multi-dimensional buffers: the launch fills their hidden shape and stride parameters.
        self._shaped = {s["buffer"]: s for s in info.get("shaped_buffers", ())}
        hidden = {index for s in self._shaped.values() for index in (*s["shape"], *s["strides"])}
        self._visible = tuple(index for index in range(len(all_parameters)) if index not in hidden)
        self._all_parameters = all_parameters
        self.parameters: tuple[Parameter, ...] = tuple(
            all_parameters[index]._replace(rank=self._shaped[index]["rank"])
            if index in self._shaped
            else all_parameters[index]
            for index in self._visible
        )
        self.local_memory_bytes: int = info["local_memory_bytes"]
        required = info.get("work_group_size")
        self.work_group_size: tuple[int, int, int] | None = tuple(required) if required else None
        """The work-group size the kernel requires (``#[work_group_size(x, y, z)]``), or None."""
        self._record_parameters = tuple(
            (index, parameter) for index, parameter in enumerate(self.parameters) if parameter.record
        )
        self._buffer_parameters = tuple(
            (index, parameter)
            for index, parameter in enumerate(all_parameters)
            if parameter.kind == "buffer"
        )
        self._loaded: dict[Device, Any] = {}
        # The native fast path (dpnp/dpctl, CuPy and PyTorch arrays), and launches configured
        # by `kernel[global, local]`, by their sizes.
        self._launcher = _runtime.Launcher(
            self.name,
            self._fast_parameters(all_parameters),
            self._fast_target,
        )
        self._configured: dict[Any, Any] = {}
        self.__doc__ = self._docstring()
        self.__signature__ = self._call_signature()

    def _fast_parameters(self, all_parameters: tuple[Parameter, ...]) -> list[tuple[str, str, bool, int]]:
        """The fast path's view of the parameters: `(kind, type, writable, rank)` per argument.
        It fills a multi-dimensional buffer's hidden extents and strides when they follow the
        buffer (as the compiler lays them out); otherwise it gets every parameter, whose count
        no call matches, so launches take the general path."""
        for buffer, shaped in self._shaped.items():
            rank = shaped["rank"]
            if list(shaped["shape"]) + list(shaped["strides"]) != list(range(buffer + 1, buffer + 1 + 2 * rank)):
                return [(p.kind, p.type, p.writable, 1) for p in all_parameters]
        return [(p.kind, p.type, p.writable, p.rank) for p in self.parameters]

    def _docstring(self) -> str:
        """This kernel's own help text: its signature, parameters and how to launch it."""
        lines = [f"kdsl kernel {self.signature}", ""]
        for parameter in self.parameters:
            if parameter.kind == "buffer":
                access = "written and read" if parameter.writable else "read only"
                lines.append(f"    {parameter.name}: an array of {parameter.type} ({access})")
            elif parameter.kind == "local":
                lines.append(
                    f"    {parameter.name}: local memory of {parameter.type} per work-group, "
                    f'sized at launch: kdsl.local(length, "{parameter.type}")'
                )
            else:
                lines.append(f"    {parameter.name}: a {parameter.type} scalar")
        if self.work_group_size is not None:
            lines += ["", f"Requires the work-group size {self.work_group_size}."]
        if self.local_memory_bytes:
            lines += ["", f"Uses {self.local_memory_bytes} bytes of local memory per work-group."]
        names = ", ".join(parameter.name for parameter in self.parameters)
        lines += [
            "",
            f"Launch: {self.name}[global_size, local_size]({names}) -> Event, or",
            f"{self.name}({names}, global_size=..., local_size=None, device=None, queue=None, "
            "stream=None, profile=False) -> Event.",
            "Sizes count work-items, dimension 0 fastest (get_global_id(0), CUDA's x).",
            "See help(kdsl.Kernel) for sizes, devices and synchronisation.",
        ]
        return "\n".join(lines)

    def _call_signature(self) -> inspect.Signature:
        """``kernel(*args, global_size=..., ...)`` with the kernel's own parameter names."""
        positional = [
            inspect.Parameter(
                parameter.name, inspect.Parameter.POSITIONAL_ONLY, annotation=str(parameter).split(": ", 1)[1]
            )
            for parameter in self.parameters
        ]
        keywords = [
            inspect.Parameter("global_size", inspect.Parameter.KEYWORD_ONLY, annotation="Size"),
            inspect.Parameter("local_size", inspect.Parameter.KEYWORD_ONLY, default=None, annotation="Size | None"),
            inspect.Parameter("device", inspect.Parameter.KEYWORD_ONLY, default=None),
            inspect.Parameter("queue", inspect.Parameter.KEYWORD_ONLY, default=None),
            inspect.Parameter("stream", inspect.Parameter.KEYWORD_ONLY, default=None),
            inspect.Parameter("profile", inspect.Parameter.KEYWORD_ONLY, default=False),
        ]
        return inspect.Signature(positional + keywords, return_annotation="Event")

    @property
    def signature(self) -> str:
        """``saxpy(y: global mut [f32], x: global [f32], a: f32, n: u32)``"""
        return f"{self.name}({', '.join(str(p) for p in self.parameters)})"

    def __repr__(self) -> str:
        return f"<kdsl.Kernel {self.signature}, {self.local_memory_bytes} bytes of local memory>"

    def __getitem__(self, sizes: Any) -> Launch:
        """``kernel[global_size, local_size]`` or ``kernel[global_size]``: the kernel with its
        launch sizes (a :data:`Launch`); call it with the arguments. A 2-D launch without a
        local size is ``kernel[(width, height), None]``."""
        if isinstance(sizes, tuple) and len(sizes) == 2:
            global_size, local_size = sizes
        else:
            global_size, local_size = sizes, None
        # Only sizes of ints are cached: a float or bool equal to a cached int would hit it.
        cacheable = _is_int_size(global_size) and (local_size is None or _is_int_size(local_size))
        if cacheable:
            configured = self._configured.get(sizes)
            if configured is not None:
                return configured
        slow = _Configured(self, global_size, local_size)
        configured = self._launcher.configure(slow.global_size, slow.local_size, slow)
        if cacheable and len(self._configured) < 256:
            self._configured[sizes] = configured
        return configured

    def _fast_target(self, kind: str, where: Any) -> Any:
        """For the native fast path: ``(kernel, order manager)``, the kernel loaded on the
        device instance of a dpctl queue (``kind`` "sycl") or of a CUDA device's stream
        (``"cuda"``, ``(ordinal, stream)``), and for an out-of-order queue dpctl's
        ``SequentialOrderManager`` of it (else None)."""
        manager = None
        if kind == "sycl":
            device = sycl_device(where)
            if not _in_flight_of(device, where).in_order:
                manager = _order_manager(where)
        else:
            ordinal, stream = where
            device = gpu_device(kind, ordinal, stream)
        return self._loaded.get(device) or self.loaded(device), manager

    def __call__(
        self,
        *args: Any,
        global_size: Size | None = None,
        local_size: Size | None = None,
        device: DeviceLike = None,
        queue: Any = None,
        stream: Any = None,
        profile: bool = False,
    ) -> Event:
        if global_size is None:
            raise LaunchError(
                f"kernel `{self.name}` needs global_size= (or launch it as kernel[global, local](...))",
                "BadLaunch",
            )
        return self.launch(
            args, global_size, local_size, device=device, queue=queue, stream=stream, profile=profile
        )

    @property
    def records(self) -> dict[str, Any]:
        """The NumPy structured dtype of each record type the kernel's buffers hold, by name:
        ``numpy.zeros(n, dtype=kernel.records["Node"])`` makes an array to pass."""
        return {
            parameter.record["name"]: _records.record_dtype(parameter.record)
            for _, parameter in self._record_parameters
        }

    def _record_bytes(self, args: Sequence[Any]) -> list[Any]:
        """Structured arrays for record parameters, checked and viewed as bytes."""
        prepared = list(args)
        for index, parameter in self._record_parameters:
            if index < len(prepared):
                where = f"argument {index} (`{parameter.name}`) of kernel `{self.name}`"
                prepared[index] = _records.as_bytes(prepared[index], parameter.record, where)
        return prepared

    def loaded(self, device: Device) -> Any:
        """This kernel loaded on a device instance (loaded once per instance)."""
        kernel = self._loaded.get(device)
        if kernel is None:
            kernel = self.module._program(device).kernel(self.name)
            self._loaded[device] = kernel
        return kernel

    def launch(
        self,
        args: Sequence[Any],
        global_size: Size,
        local_size: Size | None = None,
        *,
        device: DeviceLike = None,
        queue: Any = None,
        stream: Any = None,
        profile: bool = False,
    ) -> Event:
        """Checks the arguments against the signature, picks the device the data lives on, and
        submits the launch. See the package documentation for the synchronisation rules.
        ``profile=True`` times a launch on CuPy/PyTorch arrays (``Event.elapsed_ns``); a dpctl
        queue times its launches when it was made with ``enable_profiling``."""
        global_dims, local_dims = launch_sizes(global_size, local_size, self.work_group_size)
        return self._launch(args, global_dims, local_dims, device, queue, stream, profile)

    def _launch(
        self,
        args: Sequence[Any],
        global_dims: list[int],
        local_dims: list[int],
        device: DeviceLike,
        queue: Any,
        stream: Any,
        profile: bool = False,
    ) -> Event:
        if self._record_parameters:
            args = self._record_bytes(args)
        if device is None and queue is None and stream is None and not profile:
            event = self._launcher.try_launch_sizes(tuple(args), global_dims, local_dims)
            if event is not None:
                return event
        return self._launch_general(args, global_dims, local_dims, device, queue, stream, profile)

    def _launch_general(
        self,
        args: Sequence[Any],
        global_dims: list[int],
        local_dims: list[int],
        device: DeviceLike,
        queue: Any,
        stream: Any,
        profile: bool = False,
    ) -> Event:
        """Any arrays: described one by one (raising the precise error for misuse), then the
        device chosen from where they live."""
        if self._record_parameters:
            args = self._record_bytes(args)
        if len(args) != len(self.parameters):
            raise ArgumentError(
                f"kernel `{self.name}` takes {len(self.parameters)} arguments, but {len(args)} "
                f"were given: {self.signature}",
                "ArgumentCount",
            )
        if self._shaped:
            args = self._with_layouts(args)
        prepared = list(args)
        arrays = []
        for index, parameter in self._buffer_parameters:
            # Messages number the arguments as the caller passed them.
            position = self._visible.index(index) if self._shaped else index
            array = _arrays.describe(args[index], position, parameter, self.name)
            arrays.append(array)
            prepared[index] = (array.memory, array.address, array.count, array.read_only)
        target, sycl_queue = self._choose_device(arrays, device, queue, stream, profile)
        kernel = self._loaded.get(target) or self.loaded(target)
        in_flight = _in_flight_of(target, sycl_queue)
        if arrays and arrays[0].memory == _arrays.DEVICE_MEMORY:
            keep_alive = [array.keep_alive for array in arrays]
            return in_flight.submit(kernel, tuple(prepared), global_dims, local_dims, keep_alive)
        # Host arrays: the launch waits for its copies; the arrays are kept only if Ctrl-C
        # interrupts that wait, until the copies are done.
        keep_alive = [array.keep_alive for array in arrays]
        return _submit(
            kernel, tuple(prepared), global_dims, local_dims, sycl_queue, in_flight.in_order, keep_alive
        )

    def _with_layouts(self, args: Sequence[Any]) -> list[Any]:
        """The arguments of every parameter, hidden ones included: each multi-dimensional
        array as a flat view of the memory it spans, followed by its shape and strides."""
        full: list[Any] = [None] * len(self._all_parameters)
        for index, argument in zip(self._visible, args):
            shaped = self._shaped.get(index)
            if shaped is None:
                full[index] = argument
                continue
            parameter = self._all_parameters[index]
            where = f"argument {self._visible.index(index)} (`{parameter.name}`) of kernel `{self.name}`"
            flat, layout = _shaped.flatten(argument, shaped["rank"], parameter.writable, where)
            full[index] = flat
            for slot, extent in zip(shaped["shape"], layout.shape):
                full[slot] = extent
            for slot, stride in zip(shaped["strides"], layout.strides):
                full[slot] = stride
        return full

    def _choose_device(
        self,
        arrays: list[_arrays.ArrayArgument],
        device: DeviceLike,
        queue: Any,
        stream: Any,
        profile: bool = False,
    ) -> tuple[Device, Any]:
        """The device instance to launch on, and the dpctl queue when it adopts one."""
        placements = {array.placement.kind for array in arrays}
        if len(placements) == 1 and device is None and queue is None and stream is None:
            first = arrays[0].placement
            if first.kind == "sycl" and all(array.placement.where is first.where for array in arrays):
                # The common case: every array on one dpnp queue.
                found = _sycl_devices.get(first.where)
                if found is not None:
                    return found, first.where
        if len(placements) > 1:
            kinds = ", ".join(
                f"argument {index} (`{parameter.name}`) on {array.placement.kind}"
                for (index, parameter), array in zip(self._buffer_parameters, arrays)
            )
            raise ArgumentError(
                f"kernel `{self.name}` was given arrays on different devices ({kinds}); all arrays "
                f"of a launch must live on one device (move them with dpnp.asarray, cupy.asarray, "
                f"torch.as_tensor or numpy.asarray)",
                "DifferentDevices",
            )
        placement = next(iter(placements)) if placements else "host"
        if placement == "host":
            if queue is not None:
                return sycl_device(queue), queue
            if stream is not None:
                ordinal = 0
                if isinstance(device, str) and device.startswith(("cuda:", "hip:")):
                    ordinal = int(device.split(":", 1)[1])
                kind = "rocm" if isinstance(device, str) and device.startswith("hip") else "cuda"
                return gpu_device(kind, ordinal, _stream_handle(stream), profile), None
            return resolve_device(device), None
        if device is not None:
            raise ArgumentError(
                f"device= chooses where NumPy (host) arrays run; the arrays given to kernel "
                f"`{self.name}` live on a {placement} device and the launch runs there",
                "DifferentDevices",
            )
        if placement == "sycl":
            array_queue = arrays[0].placement.where
            for array in arrays[1:]:
                if array.placement.where != array_queue:
                    if array.placement.where.sycl_context != array_queue.sycl_context:
                        raise ArgumentError(
                            f"the arrays given to kernel `{self.name}` belong to different SYCL "
                            f"contexts; all arrays of a launch must live on one device",
                            "DifferentDevices",
                        )
            chosen = array_queue if queue is None else queue
            if chosen.sycl_context != array_queue.sycl_context:
                raise ArgumentError(
                    f"queue= is in another SYCL context than the arrays given to kernel `{self.name}`",
                    "DifferentDevices",
                )
            return sycl_device(chosen), chosen
        ordinals = {array.placement.where[0] for array in arrays}
        if len(ordinals) > 1:
            raise ArgumentError(
                f"the arrays given to kernel `{self.name}` live on {placement} devices "
                f"{sorted(ordinals)}; all arrays of a launch must live on one device",
                "DifferentDevices",
            )
        if stream is not None:
            handle = _stream_handle(stream)
        else:
            streams = [array.placement.where[1] for array in arrays if array.placement.where[1] is not None]
            handle = _interface_stream(streams[0] if streams else None)
        return gpu_device(placement, ordinals.pop(), handle, profile), None


class _Configured:
    """``kernel[global_size, local_size]``: a kernel with its launch sizes, called with the
    arguments."""

    def __init__(self, kernel: Kernel, global_size: Size, local_size: Size | None) -> None:
        self.kernel = kernel
        self.global_size, self.local_size = launch_sizes(global_size, local_size, kernel.work_group_size)

    def __call__(
        self,
        *args: Any,
        device: DeviceLike = None,
        queue: Any = None,
        stream: Any = None,
        profile: bool = False,
    ) -> Event:
        # The native fast path (`_runtime.Configured`) already declined these arguments.
        return self.kernel._launch_general(
            args, self.global_size, self.local_size, device, queue, stream, profile
        )


# Programs built on a device instance, for the life of the process, by the bundle's digest and
# the instance's label: another Module of the same bundle (a second kdsl.compile of the same
# source and options, a cache hit) takes the built program instead of building it again.
_built_programs: dict[tuple[bytes, str], Any] = {}


class Module:
    """A compiled ``.krn`` file: its kernels (``module.saxpy``, ``module["saxpy"]``) and the
    bundle holding its images (SPIR-V, PTX, AMDGPU).

    Made by :func:`kdsl.compile` or :func:`kdsl.load`. A program is built once per device
    instance and process, whichever Module of the same bundle asks, and on OpenCL devices its
    binary is kept on disk for later processes (:func:`kdsl.cache_info`).

    Example::

        module = kdsl.compile(path="examples/kmeans.krn")
        print(list(module.kernels))     # ['kmeans_assign', 'kmeans_update']
        for kernel in module:
            print(kernel.signature)
        module.save("kmeans.kbundle")   # kdsl.load("kmeans.kbundle") later, without a compiler
    """

    def __init__(self, bundle: Any, *, from_cache: bool = False, source_name: str | None = None) -> None:
        self.bundle = bundle
        self._source_name = source_name
        self.from_cache = from_cache
        """True when :func:`kdsl.compile` found the bundle in the on-disk cache."""
        self.kernels: dict[str, Kernel] = {
            info["name"]: Kernel(self, info) for info in bundle.kernels()
        }
        self._programs: dict[str, Any] = {}
        self._digest: bytes | None = None

    @property
    def source_name(self) -> str:
        """The file compiled (a cached bundle keeps the name it was first compiled under)."""
        return self._source_name or self.bundle.source_name

    @property
    def image_names(self) -> list[str]:
        """The images the bundle holds: ``spirv``, ``ptx:sm_90``, ``amdgpu:gfx90a``."""
        return list(self.bundle.image_names())

    def __getitem__(self, name: str) -> Kernel:
        kernel = self.kernels.get(name)
        if kernel is None:
            listed = ", ".join(self.kernels) or "(none)"
            raise KernelNotFoundError(
                f"the bundle has no kernel named `{name}`; its kernels are: {listed}",
                "KernelNotFound",
            )
        return kernel

    def __getattr__(self, name: str) -> Kernel:
        if name.startswith("_"):
            raise AttributeError(name)
        return self[name]

    def record_dtype(self, name: str) -> Any:
        """The NumPy structured dtype of the record type ``name`` that a kernel's buffer holds
        (its C layout: ``numpy.dtype(..., align=True)``)."""
        for kernel in self:
            dtype = kernel.records.get(name)
            if dtype is not None:
                return dtype
        raise KeyError(f"no kernel of this module has a buffer of `{name}` records")

    def __contains__(self, name: object) -> bool:
        return name in self.kernels

    def __iter__(self) -> Iterator[Kernel]:
        return iter(self.kernels.values())

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self.kernels))

    def __repr__(self) -> str:
        return f"<kdsl.Module {self.source_name}: {', '.join(self.kernels)}; images {', '.join(self.image_names)}>"

    def to_bytes(self) -> bytes:
        return self.bundle.to_bytes()

    def save(self, path: str | Path) -> None:
        """Writes the bundle as a ``.kbundle`` file (readable with :func:`kdsl.load`)."""
        Path(path).write_bytes(self.to_bytes())

    def _program(self, device: Device) -> Any:
        program = self._programs.get(device.label)
        if program is None:
            if self._digest is None:
                self._digest = hashlib.sha256(self.bundle.to_bytes()).digest()
            key = (self._digest, device.label)
            program = _built_programs.get(key)
            if program is None:
                # Two threads may build at once; the first program stored is the one kept.
                program = _built_programs.setdefault(key, _runtime.Program(device, self.bundle))
            self._programs[device.label] = program
        return program

    def to_dpctl(self, queue: Any) -> dict[str, Any]:
        """The module's kernels as dpctl ``SyclKernel`` objects for ``queue`` (a dpctl
        ``SyclQueue``).

        On OpenCL and Level Zero devices dpctl builds the SPIR-V image itself
        (``dpctl.program.create_program_from_spirv``). dpctl cannot build PTX or AMDGPU code, so
        on a SYCL CUDA or HIP device kdsl builds the kernel bundle on the queue's context and
        hands its kernels to dpctl through dpctl's C API (``SyclKernel_Make``).

        dpctl takes launch ranges in SYCL's order, slowest dimension first, which is kdsl's
        order reversed: a kdsl launch ``[(g0, g1), (l0, l1)]`` is
        ``queue.submit(kernel, args, [g1, g0], [l1, l0])``. Arguments are dpctl's: USM memory
        (``dpctl.memory`` objects; a dpnp array's is ``x.get_array().usm_data``, dpnp arrays
        have no ``usm_data`` of their own) and ctypes scalars (``ctypes.c_float``,
        ``ctypes.c_uint32``) in the kernel's parameter order. A ``local mut [T]`` parameter
        takes a ``dpctl.LocalAccessor`` of its length on OpenCL and Level Zero devices; on a
        SYCL CUDA device it is a byte offset into the launch's dynamic local memory, whose size
        dpctl cannot give, so launch such kernels with kdsl there.

        A checked module (``checked=True``) is refused (``BundleError``, kind ``CheckedMode``):
        its kernels take hidden parameters that only kdsl's launches supply.
        """
        spirv = self.bundle.spirv_for_sycl()
        device = sycl_device(queue)
        if device.info()["target"] != "spirv":
            return {name: _dpctl_kernel(self[name].loaded(device).sycl_kernel_address(), name) for name in self.kernels}
        if spirv is None:
            raise BundleError(
                f"the bundle of {self.source_name} has no SPIR-V image (it has {', '.join(self.image_names)})",
                "NoMatchingImage",
            )
        import dpctl.program

        program = dpctl.program.create_program_from_spirv(queue, spirv)
        return {name: program.get_sycl_kernel(name) for name in self.kernels}


def _dpctl_kernel(address: int, name: str) -> Any:
    """A dpctl ``SyclKernel`` holding a copy of the ``sycl::kernel`` at ``address``, made by
    dpctl's C API function ``SyclKernel_Make`` (which copies the kernel it is given)."""
    import ctypes

    import dpctl.program._program as dpctl_program

    capsule = dpctl_program.__pyx_capi__["SyclKernel_Make"]
    capsule_name = ctypes.pythonapi.PyCapsule_GetName
    capsule_name.restype = ctypes.c_char_p
    capsule_name.argtypes = [ctypes.py_object]
    capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    capsule_pointer.restype = ctypes.c_void_p
    capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    function = capsule_pointer(capsule, capsule_name(capsule))
    make = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p)(function)
    return make(address, name.encode())
