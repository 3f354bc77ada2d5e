"""Making ``clpy.DeviceArray``s (clpy/abi/device_array.py) on a device: ``to_device``,
``empty``, ``zeros``, ``zeros_like``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from clpy.abi.device_array import DeviceArray
from clpy.runtime.devices import RUNTIME, Device
from clpy.runtime.registered import out_of_memory
from clpy.runtime.transfers import MOVER, pinned_array


def _device(device: Any) -> Device:
    return RUNTIME.current() if device is None else RUNTIME.find(device)


def _queue(dev: Device, device: Any) -> Any:
    """The pyopencl queue a device array is made on: ``device`` itself when it is a
    ``CommandQueue`` (so that a launch with ``device=queue`` uses the array in place), else
    the queue clpy uses for ``dev``."""
    if device is not None and not isinstance(device, (str, Device)):
        import pyopencl as cl

        if isinstance(device, cl.CommandQueue):
            return device
    return dev.queue


def _allocated(what: str, shape: Any, dtype: Any, dev: Device, make: Callable[[], Any]) -> Any:
    """``make()`` (a pyopencl array on ``dev``), with a device that runs out of memory said as
    a ``MemoryError`` naming the call, the array and the device (NVIDIA allocates at first use:
    its error otherwise names the fill kernel or the copy that touched the memory first)."""
    import pyopencl as cl

    try:
        return make()
    except cl.Error as e:
        if not out_of_memory(cl, e):
            raise
        dt = np.dtype(dtype)
        n = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
        raise MemoryError(
            f"clpy.{what}: an array of shape {tuple(int(x) for x in np.atleast_1d(shape))} "
            f"and dtype {dt} "
            f"({n / 2**30:.2f} GiB) does not fit on {dev}: {e}"
        ) from e


def _wrap(dev: Device, host: np.ndarray, device: Any = None) -> DeviceArray:
    if dev.is_sim:
        return DeviceArray(dev, host, None)
    import pyopencl.array as cla

    def make() -> Any:
        arr = cla.empty(_queue(dev, device), host.shape, host.dtype)
        MOVER.write(arr, host)  # pinned staging for large arrays (clpy/runtime/transfers.py)
        return arr

    return DeviceArray(dev, None, _allocated("to_device", host.shape, host.dtype, dev, make), MOVER)


def to_device(a: Any, device: Any = None) -> DeviceArray:
    """Copy ``a`` (a NumPy array or anything ``np.asarray`` takes) to ``device`` (a name, a
    clpy ``Device``, or a pyopencl ``CommandQueue``: the array then lives in that queue's
    context; default: the current device) once; launches then use it in place."""
    if isinstance(a, DeviceArray):
        a = a.get()
    dev = _device(device)
    # the simulator uses its array in place: a copy; a device reads the host data once
    host = np.array(a, order="C", copy=True) if dev.is_sim else np.ascontiguousarray(a)
    if host.ndim == 0:
        raise ValueError(
            "to_device: expected an array with at least one dimension, got a 0-d value"
        )
    return _wrap(dev, host, device)


def empty(shape: Any, dtype: Any, device: Any = None) -> DeviceArray:
    """An uninitialised device array (zero-filled on the simulator)."""
    dev = _device(device)
    if dev.is_sim:
        return DeviceArray(dev, np.zeros(shape, dtype), None)
    import pyopencl.array as cla

    arr = _allocated(
        "empty", shape, dtype, dev, lambda: cla.empty(_queue(dev, device), shape, np.dtype(dtype))
    )
    return DeviceArray(dev, None, arr, MOVER)


def zeros(shape: Any, dtype: Any, device: Any = None) -> DeviceArray:
    """A zero-filled device array."""
    dev = _device(device)
    if dev.is_sim:
        return DeviceArray(dev, np.zeros(shape, dtype), None)
    import pyopencl.array as cla

    arr = _allocated(
        "zeros", shape, dtype, dev, lambda: cla.zeros(_queue(dev, device), shape, np.dtype(dtype))
    )
    return DeviceArray(dev, None, arr, MOVER)


def zeros_like(a: DeviceArray | np.ndarray, device: Any = None) -> DeviceArray:
    """Zeros with ``a``'s shape and dtype, on ``a``'s device unless ``device`` is given."""
    if device is None and isinstance(a, DeviceArray):
        device = a.device
    return zeros(a.shape, a.dtype, device)


def pinned_empty(shape: Any, dtype: Any, device: Any = None) -> np.ndarray:
    """An uninitialised NumPy array in page-locked host memory of ``device`` (default: the
    current device): launches and ``clpy.to_device``/``.get()``/``.set()`` move it with one
    DMA at the link's full rate instead of through clpy's pinned staging (README
    "Performance on a GPU"). On the simulator it is a plain NumPy array. Page-locked memory
    is a limited resource: use it for the arrays that travel often."""
    dev = _device(device)
    if dev.is_sim:
        return np.empty(shape, dtype)
    import pyopencl as cl

    return pinned_array(cl, _queue(dev, device), shape, dtype)


__all__ = ["DeviceArray", "to_device", "empty", "zeros", "zeros_like", "pinned_empty"]
