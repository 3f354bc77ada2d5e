"""The user-facing runtime functions, re-exported lazily as ``clpy.devices`` etc."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from clpy.abi import LocalMemory
from clpy.runtime import diskcache
from clpy.runtime.build import PROGRAMS
from clpy.runtime.devices import ENV_VAR, RUNTIME, SIM, Device
from clpy.runtime.launch import KERNELS, LaunchError, LaunchHandle
from clpy.runtime.transfers import clear_pools


def devices() -> list[Device]:
    """Every device that can run kernels: ``"sim"`` first, then each OpenCL device as
    ``"opencl:<platform>:<device>"``. ``str(d)`` is the name, ``d.description`` a summary.

    >>> [str(d) for d in clpy.devices()]
    ['sim', 'opencl:Portable Computing Language:pthread-Intel(R) Xeon(R) Processor']
    """
    return list(RUNTIME.devices())


def use_device(selector: Any) -> Device:
    """Make ``selector`` the default device for launches without ``device=``; returns it.

    ``selector``: ``"sim"``, ``"opencl"``, ``"opencl:<text>"`` (substring of platform name,
    vendor, version, device name or type, any case: ``"opencl:pocl"``, ``"opencl:gpu"``),
    ``"opencl:<platform text>:<device text>"``, a clpy ``Device`` or a pyopencl ``Device``.
    ``None`` goes back to the default (``CLPY_DEVICE``, else first GPU, else the simulator).
    """
    return RUNTIME.select(selector)


def default_device() -> Device:
    """The device used when a launch gives no ``device=``."""
    return RUNTIME.current()


def get_device(selector: Any) -> Device:
    """The device ``selector`` names, without selecting it."""
    return RUNTIME.find(selector)


CACHE_HOOKS: list[Callable[[], None]] = []  # more caches to clear (clpy.algorithms' per queue)


def on_clear_caches(clear: Callable[[], None]) -> Callable[[], None]:
    """Have ``clear_caches`` call ``clear`` too (a layer above the runtime that keeps its own
    per-device or per-queue cache registers it); returns ``clear``."""
    if clear not in CACHE_HOOKS:
        CACHE_HOOKS.append(clear)
    return clear


def clear_caches(disk: bool = False) -> None:
    """Forget specializations, launch plans, built programs, pooled device buffers, device
    descriptions and the caches registered with ``on_clear_caches`` (and the on-disk
    source/binary cache with ``disk=True``). The device selection is kept."""
    for clear in CACHE_HOOKS:
        clear()
    sim = sys.modules.get("clpy_sim")  # loaded only once a launch used it (never imported here)
    if sim is not None and hasattr(sim, "release_memory"):
        sim.release_memory()  # the checkers' shadows kept between launches
    for k in list(KERNELS):
        k.kernel.clear_cache()
    PROGRAMS.clear()
    clear_pools()
    selected = RUNTIME._selected
    RUNTIME.reset()
    if selected is not None:
        RUNTIME._selected = RUNTIME.find(selected.name) if not selected.is_sim else SIM
    if disk:
        diskcache.clear()


__all__ = [
    "devices",
    "use_device",
    "default_device",
    "get_device",
    "clear_caches",
    "LocalMemory",
    "Device",
    "LaunchHandle",
    "LaunchError",
    "ENV_VAR",
]
