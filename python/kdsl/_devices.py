"""Devices: discovery, the default device, and which device a launch runs on."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Union

from . import _runtime
from ._errors import DeviceError

Device = _runtime.Device


@dataclass(frozen=True)
class DeviceInfo:
    """What discovery found out about a device (like ``kdsl devices``)."""

    id: str
    """``sycl:0``, ``cuda:1``, ``hip:0``: a filter that selects exactly this device."""
    backend: str
    platform_backend: str
    index: int
    name: str
    vendor: str
    driver_version: str
    device_type: str
    global_memory_bytes: int
    local_memory_bytes: int
    compute_units: int
    max_work_group_size: int
    sub_group_sizes: list[int]
    """The sub-group sizes the device supports (CUDA: the warp size; HIP: the wavefront size)."""
    target: str
    """The image the device takes from a bundle: ``spirv``, ``ptx:sm_90``, ``amdgpu:gfx90a``."""

    def open(self) -> Device:
        """Opens a new instance of this device (its own queue or stream)."""
        return Device(self.id)


def devices() -> list[DeviceInfo]:
    """Every device found on every backend (SYCL, CUDA, HIP). Discovery runs once per process;
    a backend that finds nothing leaves a note in :func:`device_notes` instead of failing."""
    return [DeviceInfo(**info) for info in _runtime.devices()]


def device_notes() -> list[str]:
    """One line per backend that found no device, saying why."""
    return list(_runtime.device_notes())


DeviceLike = Union[None, str, DeviceInfo, Device]

_lock = threading.Lock()
_opened: dict[Any, Device] = {}


def resolve_device(device: DeviceLike) -> Device:
    """The opened device for a ``device=`` argument: None (the default device, opened once per
    process), a filter string (opened once per distinct string), a :class:`DeviceInfo`, or a
    :class:`Device` itself."""
    if isinstance(device, Device):
        return device
    if device is None:
        key: Any = None
    elif isinstance(device, DeviceInfo):
        key = device.id
    elif isinstance(device, str):
        key = device
    else:
        raise DeviceError(
            f"device= takes None, a filter string such as 'sycl:cpu', a kdsl.DeviceInfo or a "
            f"kdsl.Device, not {type(device).__name__}",
            "BadFilter",
        )
    with _lock:
        opened = _opened.get(key)
        if opened is None:
            opened = Device(key)
            _opened[key] = opened
        return opened


def default_device() -> Device:
    """The device NumPy arrays run on when no ``device=`` is given: ``KDSL_DEVICE`` if set,
    else a GPU before an accelerator before a CPU. Opened once per process."""
    return resolve_device(None)
