"""Devices that run kernels: ``"sim"`` and every OpenCL device pyopencl can see.

Selection (DESIGN.md "Devices"): ``use_device(...)`` beats the ``CLPY_DEVICE`` environment
variable, which beats the default: the first OpenCL GPU, else the simulator. A selector is
``"sim"``, ``"opencl"`` (first GPU, else first OpenCL device), ``"opencl:<text>"`` (case-
insensitive substring of the platform name, vendor or version, the device name or its type),
``"opencl:<platform text>:<device text>"``, or a listed name exactly. Identical devices are
listed as ``"<name>"``, ``"<name> #1"``, ``"<name> #2"`` ... (``"opencl:nvidia:#1"``).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field, replace
from typing import Any, cast

from clpy.emit.targets import Target, target_of
from clpy.runtime.info import DeviceInfo, query
from clpy.runtime.quirks import device_target

ENV_VAR = "CLPY_DEVICE"


@dataclass(frozen=True, eq=False)
class Device:
    """One place kernels run. ``str(d)`` is its name; ``d == "sim"`` compares names.

    ``target`` is what the emitter writes for; ``build_options`` are added to every build.
    ``variant()`` gives the same device with another target or build options (for testing a
    lowering on a real device, or ``-cl-fast-relaxed-math``).
    """

    name: str
    description: str
    cl_device: Any = None
    info: DeviceInfo | None = None
    target: Target | None = None
    build_options: tuple[str, ...] = ()
    _state: dict[str, Any] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def is_sim(self) -> bool:
        return self.cl_device is None

    @property
    def context(self) -> Any:
        """The pyopencl context clpy uses on this device (created on first use)."""
        ctx = self._state.get("context")
        if ctx is None:
            import pyopencl as cl

            if self.is_sim:
                raise ValueError("the simulator has no OpenCL context")
            with self._lock:
                ctx = self._state.get("context")
                if ctx is None:
                    ctx = cl.Context([self.cl_device])
                    self._state["context"] = ctx
        return ctx

    @property
    def queue(self) -> Any:
        """The in-order command queue clpy launches on (created on first use)."""
        q = self._state.get("queue")
        if q is None:
            import pyopencl as cl

            ctx = self.context
            with self._lock:
                q = self._state.get("queue")
                if q is None:
                    q = cl.CommandQueue(ctx, self.cl_device)
                    self._state["queue"] = q
        return q

    def variant(
        self,
        target: Target | str | None = None,
        build_options: tuple[str, ...] | list[str] | str | None = None,
        *,
        exact_div_sqrt: bool | None = None,
        queue: Any = None,
    ) -> Device:
        """The same device with another target and/or extra build options; it shares the
        context and queue, and is cached separately. ``target`` is a ``Target`` or a profile
        name (``"opencl-c-1.2"``, ``"opencl-c-3.0+__opencl_c_fp64"``); a name keeps the
        device's limits (``info``) and its name in generated headers.

        ``exact_div_sqrt=False`` builds without ``-cl-fp32-correctly-rounded-divide-sqrt``:
        single-precision ``/`` and ``sqrt`` then have the spec's error bounds (2.5 and 3 ulp,
        OpenCL C 2.0 §7.4 table 7.1) as in a hand-written host that does not ask for more,
        and are faster where the device has no exact instructions; results may then differ
        from the simulator's. ``queue``: launches and device arrays on the variant use this
        pyopencl ``CommandQueue`` (of this device), e.g. one with profiling enabled."""
        if isinstance(build_options, str):
            build_options = tuple(build_options.split())
        tgt = target_of(target) if target is not None else None
        if isinstance(target, str) and tgt is not None and self.target is not None:
            tgt = replace(tgt, info=self.target.info, device=self.target.device)
        tgt = tgt or self.target
        if exact_div_sqrt is not None and tgt is not None:
            exact = bool(exact_div_sqrt) and bool(
                self.info is not None and self.info.correctly_rounded_divide_sqrt
            )
            tgt = replace(tgt, info={**tgt.info, "correctly_rounded_divide_sqrt": exact})
        state = self._state
        if queue is not None:
            state = {"context": queue.context, "queue": queue}
        return replace(
            self,
            target=tgt,
            build_options=tuple(build_options) if build_options is not None else self.build_options,
            _state=state,
        )

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"<clpy device {self.name!r}: {self.description}>"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            return self.name == other
        return self is other

    # identity, hashed in C: a device is part of every launch's plan key
    __hash__ = object.__hash__


SIM = Device(
    "sim",
    "clpy NumPy simulator: runs the typed IR on the host, checks races and out-of-bounds accesses",
)


def _opencl_devices() -> list[Any]:
    """All pyopencl devices; empty when pyopencl or an OpenCL driver (ICD) is missing."""
    try:
        import pyopencl as cl
    except Exception:  # noqa: BLE001 - no pyopencl or a broken ICD loader: sim only
        return []
    try:
        platforms = cl.get_platforms()
    except Exception:  # noqa: BLE001 - CL_PLATFORM_NOT_FOUND_KHR when no ICD is installed
        return []
    out: list[Any] = []
    for p in platforms:
        try:
            out.extend(p.get_devices())
        except Exception:  # noqa: BLE001 - a platform with no devices raises DEVICE_NOT_FOUND
            continue
    return out


def _clean(text: str) -> str:
    return " ".join(text.replace(":", " ").split())


class Runtime:
    """The process-wide device list and selection (one instance, ``RUNTIME``).

    Devices and their descriptions are queried once and cached; ``reset()`` forgets them.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._devices: list[Device] | None = None
        self._selected: Device | None = None
        self._default: Device | None = None
        # names resolved before (launches pass the same name each time)
        self._found: dict[Any, tuple[Any, Device]] = {}
        # pyopencl selectors (queues, contexts, devices) carry their answer themselves
        # (_FOUND_ATTR) with this runtime's epoch: nothing here keeps a caller's queue or
        # context alive. reset() starts a new epoch, so answers from before it are not used
        # (here, and in the launchers' memo of the last device= object: launch.py)
        self.epoch = object()

    def devices(self) -> list[Device]:
        devs = self._devices
        if devs is None:
            with self._lock:
                devs = self._devices
                if devs is None:
                    devs = [SIM]
                    seen: dict[str, int] = {}
                    for d in _opencl_devices():
                        name = f"opencl:{_clean(d.platform.name)}:{_clean(d.name)}"
                        k = seen[name] = seen.get(name, -1) + 1
                        if k:  # identical GPUs: "... #1", "... #2"
                            name = f"{name} #{k}"
                        info = query(d, name)
                        devs.append(Device(name, info.description, d, info, device_target(info)))
                    self._devices = devs
        return devs

    def find(self, selector: Any) -> Device:
        """The device a selector names (see the module docstring); ``ValueError`` if none."""
        if isinstance(selector, Device):
            return selector
        if selector is None:
            return self.current()
        if not isinstance(selector, str):
            return self._find_pyopencl(selector)
        hit = self._found.get(selector)
        if hit is not None:
            return hit[1]
        d = self._find_name(selector)
        if len(self._found) < 256:
            self._found[selector] = (selector, d)
        return d

    def _find_pyopencl(self, obj: Any) -> Device:
        """The device of a pyopencl object, remembered on the object (pyopencl's objects take
        attributes; where one does not, it is looked up each time)."""
        hit = getattr(obj, _FOUND_ATTR, None)
        if hit is not None and hit[0] is self.epoch:
            return cast(Device, hit[1])
        d = self._from_pyopencl(obj)
        try:
            setattr(obj, _FOUND_ATTR, (self.epoch, d))
        except (AttributeError, TypeError):
            pass
        return d

    def _find_name(self, selector: str) -> Device:
        sel = selector.strip()
        devs = self.devices()
        for d in devs:
            if d.name == sel:
                return d
        low = sel.lower()
        if low == "sim":
            return SIM
        cl_devs = [d for d in devs if not d.is_sim]
        if low == "opencl":
            if not cl_devs:
                raise ValueError(f"no OpenCL device found (devices: {self._names()})")
            gpus = [d for d in cl_devs if d.info and d.info.device_type == "gpu"]
            return (gpus or cl_devs)[0]
        if not low.startswith("opencl:"):
            raise ValueError(
                f"unknown device {selector!r}: use 'sim', 'opencl' or "
                f"'opencl:<platform>[:<device>]' (devices: {self._names()})"
            )
        parts = [p.strip() for p in low[len("opencl:") :].split(":")]
        for d in cl_devs:
            if _matches(d, parts):
                return d
        raise ValueError(f"no OpenCL device matches {selector!r} (devices: {self._names()})")

    def _from_pyopencl(self, obj: Any) -> Device:
        """A pyopencl Device (or the device of a Context / CommandQueue)."""
        import pyopencl as cl

        if isinstance(obj, cl.CommandQueue):
            obj = obj.device
        elif isinstance(obj, cl.Context):
            obj = obj.devices[0]
        if isinstance(obj, cl.Device):
            for d in self.devices():
                if d.cl_device is not None and d.cl_device == obj:
                    return d
        raise TypeError(
            f"device must be a name such as 'sim' or 'opencl:pocl', a clpy "
            f"Device or a pyopencl Device/Context/CommandQueue, not {obj!r}"
        )

    def _names(self) -> str:
        return ", ".join(repr(d.name) for d in self.devices())

    def current(self) -> Device:
        """The device a launch without ``device=`` uses."""
        d = self._selected or self._default
        if d is None:
            d = self._default = self._resolve_default()
        return d

    def _resolve_default(self) -> Device:
        env = os.environ.get(ENV_VAR, "").strip()
        if env:
            try:
                return self.find(env)
            except ValueError as e:
                raise ValueError(f"{ENV_VAR}={env!r}: {e}") from None
        for d in self.devices():
            if d.info is not None and d.info.device_type == "gpu":
                return d
        return SIM

    def select(self, selector: Any) -> Device:
        d = self.find(selector) if selector is not None else None
        self._selected = d
        return d if d is not None else self.current()

    def reset(self) -> None:
        with self._lock:
            self._devices = None
            self._default = None
            self._selected = None
            self._found = {}
            self.epoch = object()


def _matches(d: Device, parts: list[str]) -> bool:
    info = d.info
    assert info is not None
    plat = f"{info.platform} {info.platform_vendor} {info.platform_version}".lower()
    dev = f"{d.name.rsplit(':', 1)[-1]} {info.device_vendor} {info.device_type}".lower()
    if len(parts) == 1:
        return parts[0] in plat or parts[0] in dev or parts[0] in d.name.lower()
    p, dv = parts[0], ":".join(parts[1:])
    return p in plat and dv in dev


# The attribute on a pyopencl queue, context or device holding (runtime token, Device).
_FOUND_ATTR = "_clpy_device"

RUNTIME = Runtime()
