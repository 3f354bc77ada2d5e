"""``k[global_size, local_size](*args, device=None, wait=True)``: specialize, build, launch.

The fast path is one dict lookup: the plan for (argument-type signature, device, context)
holds the built ``pyopencl.Kernel`` and one converter per argument. Everything else (type
inference, emission, the OpenCL build) happens once, on the first launch of a signature. A
launch with the same ``device=`` object as the kernel's last one (and the same signature, in
the same runtime epoch) skips even that lookup (``KernelLaunches.last``); the plan then
recognises arguments it saw in its last two launches (clpy/runtime/clplan.py).
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from clpy.abi import DeviceArray, ForeignContext, LocalMemory, arg_count_error
from clpy.ir.program_vars import captures, stale
from clpy.runtime.clplan import CLPlan
from clpy.runtime.devices import RUNTIME, Device
from clpy.runtime.handles import DoneHandle, LaunchError, LaunchHandle
from clpy.runtime.simplan import SimPlan
from clpy.runtime.sizes import parse_sizes
from clpy.types import catalog as C
from clpy.types.annotations import _Constexpr, const_key
from clpy.types.core import AddressSpace, PointerType, Type

if TYPE_CHECKING:
    from clpy.kernel import Kernel, Specialization

# Launch states with plans, so clear_caches() can reach them.
KERNELS: weakref.WeakSet[KernelLaunches] = weakref.WeakSet()


@dataclass(frozen=True)
class Meta:
    """What a kernel's signature says about launching it (computed once per kernel)."""

    name: str
    names: tuple[str, ...]
    dynamic: tuple[int, ...]  # unannotated: specialized from the argument's type
    constexprs: tuple[int, ...]  # compile-time: specialized from the argument's value
    count: int  # len(names)
    keyed: bool  # dynamic or constexprs: launches have a spec_key

    def spec_key(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        if not self.keyed:
            return ()
        return (
            tuple(_type_key(args[i]) for i in self.dynamic),
            tuple(const_key(args[i]) for i in self.constexprs),
        )

    def bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
        """Positional and keyword arguments in parameter order."""
        out = list(args)
        for name in self.names[len(args) :]:
            if name not in kwargs:
                break
            out.append(kwargs.pop(name))
        if kwargs:
            bad = next(iter(kwargs))
            if bad in self.names:
                raise TypeError(f"{self.name}(): parameter {bad!r} given twice")
            raise TypeError(
                f"{self.name}(): no parameter named {bad!r}; parameters are {', '.join(self.names)}"
            )
        return tuple(out)


class KernelLaunches:
    """The launch state of one kernel, owned by the runtime: its signature ``Meta`` (computed
    on the first launch) and the plans per (argument-type signature, device, context, queue).
    ``Kernel.launches`` holds it; ``clear()`` forgets everything."""

    __slots__ = ("kernel", "meta", "plans", "captures", "last", "__weakref__")

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self.meta: Meta | None = None
        self.plans: dict[Any, CLPlan | SimPlan] = {}
        # module-level tables the plans' programs hold (clpy/program_scope.py): checked
        # before each launch, a change re-specializes the kernel
        self.captures: list[tuple[Any, Any]] = []
        # the last launch's target: (device= object, fp_contract, signature key, runtime
        # epoch, device, context, plan); see Launcher.__call__
        self.last: tuple[Any, ...] | None = None

    def meta_of(self) -> Meta:
        m = self.meta
        if m is None:
            k = self.kernel
            names = tuple(k.param_names)
            anns = k.annotations()
            dynamic = tuple(i for i, n in enumerate(names) if n not in anns)
            constexprs = tuple(
                i for i, n in enumerate(names) if isinstance(anns.get(n), _Constexpr)
            )
            m = Meta(
                k.__name__,
                names,
                dynamic,
                constexprs,
                len(names),
                bool(dynamic or constexprs),
            )
            self.meta = m
            KERNELS.add(self)
        return m

    def clear(self) -> None:
        self.meta = None
        self.plans.clear()
        self.captures = []
        self.last = None


def _type_key(a: Any) -> Any:
    t = type(a)
    if t is int:
        return "int" if -(2**31) <= a < 2**31 else "long"
    if t is float:
        return "float"
    dt = getattr(a, "dtype", None)
    if dt is not None:
        return (t.__name__, dt, getattr(a, "ndim", 0))
    return t


def infer_type(kname: str, name: str, a: Any) -> Any:
    """The parameter type an argument implies (``clpy.kernel.arg_type`` plus pyopencl arrays
    and typed ``LocalMemory``)."""
    if isinstance(a, LocalMemory):
        if a.dtype is None:
            raise TypeError(
                f"{kname}(): parameter {name!r} is unannotated: annotate it "
                "Local[T] or pass clpy.LocalMemory(count, dtype)"
            )
        return PointerType(_scalar(kname, name, a.dtype), AddressSpace.LOCAL)
    if isinstance(a, DeviceArray) or _is_pyopencl_array(a):
        return PointerType(_scalar(kname, name, a.dtype), AddressSpace.GLOBAL)
    if type(a).__module__.startswith("pyopencl"):
        raise TypeError(
            f"{kname}(): parameter {name!r} is unannotated and a "
            f"{type(a).__name__} carries no element type: annotate it "
            "(Global[float32] ...)"
        )
    try:
        return arg_type(name, a)
    except TypeError as e:
        raise TypeError(f"{kname}(): {e}") from None


def _is_pyopencl_array(a: Any) -> bool:
    if not type(a).__module__.startswith("pyopencl"):
        return False
    import pyopencl.array as cla  # deferred: `import clpy` does not load pyopencl

    return isinstance(a, cla.Array)


def arg_type(name: str, value: Any) -> Type:
    """The parameter type an unannotated launch argument implies (DESIGN.md "Types")."""
    if isinstance(value, np.ndarray):
        st = C.scalar_for_dtype(value.dtype)
        if st is None and value.dtype.fields is None:
            raise TypeError(f"argument {name!r}: arrays of dtype {value.dtype} are not supported")
        if st is None:
            raise TypeError(f"argument {name!r}: annotate struct arrays with their @clpy.struct")
        return PointerType(st, AddressSpace.GLOBAL)
    if isinstance(value, bool):
        return C.int_
    if isinstance(value, int):
        return C.int_ if -(2**31) <= value < 2**31 else C.long
    if isinstance(value, float):
        return C.float_
    if isinstance(value, np.generic):
        st = C.scalar_for_dtype(value.dtype)
        if st is not None:
            return st
    raise TypeError(
        f"argument {name!r}: cannot infer a kernel parameter type from "
        f"{type(value).__name__}; annotate the parameter"
    )


def _scalar(kname: str, name: str, dtype: Any) -> Any:
    st = C.scalar_for_dtype(dtype)
    if st is None:
        raise TypeError(
            f"{kname}(): parameter {name!r}: arrays of dtype {dtype} need an annotation"
        )
    return st


def specialize_for(
    k: Kernel, meta: Meta, args: tuple[Any, ...], fp_contract: bool | None = None
) -> Specialization:
    kw: dict[str, Any] = {}
    for i in meta.dynamic:
        kw[meta.names[i]] = infer_type(meta.name, meta.names[i], args[i])
    for i in meta.constexprs:
        kw[meta.names[i]] = args[i]
    return k.specialize_with(kw, fp_contract)


def _exec_target(device: Any) -> tuple[Device, Any, Any]:
    """(clpy Device, pyopencl context or None, queue or None) for a ``device=`` value."""
    if device is None:
        return RUNTIME.current(), None, None
    if isinstance(device, (str, Device)):
        return RUNTIME.find(device), None, None
    import pyopencl as cl  # deferred: `import clpy` does not load pyopencl

    if isinstance(device, cl.CommandQueue):
        return RUNTIME.find(device), device.context, device
    if isinstance(device, cl.Context):
        return RUNTIME.find(device), device, None
    return RUNTIME.find(device), None, None


_plan_lock = threading.Lock()


class Launcher:
    """``kernel[global_size, local_size]``: call it with the kernel's arguments."""

    __slots__ = ("kernel", "sizes")

    def __init__(self, kernel: Kernel, sizes: Any) -> None:
        self.kernel = kernel
        self.sizes = sizes

    def __call__(
        self,
        *args: Any,
        device: Any = None,
        wait: bool = True,
        offset: Any = None,
        fp_contract: bool | None = None,
        **kwargs: Any,
    ) -> LaunchHandle | None:
        """Run the kernel. ``device``: a name, a clpy Device, or a pyopencl
        Device/Context/CommandQueue; ``wait=False`` returns a ``LaunchHandle``;
        ``offset``: global work offset (1–3 ints); ``fp_contract``: fuse ``a*b + c`` into
        ``fma`` for this launch (default: the kernel's ``fp_contract``)."""
        launches = self.kernel.launches
        meta = launches.meta or launches.meta_of()
        if kwargs:
            args = meta.bind(args, kwargs)
        if len(args) != meta.count:
            raise arg_count_error(meta.name, list(meta.names), len(args))
        sizes = parse_sizes(self.sizes, meta.name)
        spec_key = meta.spec_key(args) if meta.keyed else ()
        last = launches.last
        # The same device= object (a name, a Device, a queue ...) as the last launch, in the
        # same runtime epoch, with the same signature: the same plan (for device=None, while
        # the current device is the same). ``last`` holds the object, so its identity stays.
        if (
            last is not None
            and last[0] is device
            and last[1] is fp_contract
            and last[3] is RUNTIME.epoch
            and last[2] == spec_key
            and (device is not None or last[4] is RUNTIME.current())
            and not (launches.captures and stale(launches.captures))
        ):
            dev, ctx, plan = last[4], last[5], last[6]
        else:
            dev, ctx, plan = self._resolve(launches, meta, args, spec_key, device, fp_contract)
        try:
            return plan.run(args, sizes, wait, offset)
        except ForeignContext as fc:
            if ctx is not None:
                raise ValueError(
                    f"{meta.name}(): parameter {fc.param!r} lives in another "
                    "pyopencl context than the requested device"
                ) from None
            if device is not None and dev.cl_device not in fc.context.devices:
                raise ValueError(
                    f"{meta.name}(): parameter {fc.param!r} lives on another device than {dev}"
                ) from None
            # Run where the memory is: the same device (keeping a variant's target and build
            # options), in the argument's context and on its queue.
            there = dev if device is not None else RUNTIME.find(fc.context)
            qkey = None if fc.queue is None else int(fc.queue.int_ptr)
            if fp_contract is not None:
                spec_key = (spec_key, bool(fp_contract))
            key = (spec_key, there, int(fc.context.int_ptr), qkey)
            plan = launches.plans.get(key)
            if plan is None:
                plan = self._plan(
                    launches, key, meta, args, there, fc.context, fc.queue, fp_contract
                )
            return plan.run(args, sizes, wait, offset)

    def _resolve(
        self,
        launches: KernelLaunches,
        meta: Meta,
        args: tuple[Any, ...],
        spec_key: Any,
        device: Any,
        fp_contract: bool | None,
    ) -> tuple[Device, Any, CLPlan | SimPlan]:
        """(device, context or None, plan) for a launch, and the memo of it in
        ``launches.last``."""
        epoch = RUNTIME.epoch
        if device is None:
            dev, ctx, queue = RUNTIME.current(), None, None
        else:
            dev, ctx, queue = _exec_target(device)
        key_sig = spec_key if fp_contract is None else (spec_key, bool(fp_contract))
        ctx_key = None if ctx is None else int(ctx.int_ptr)
        key = (key_sig, dev, ctx_key, None if queue is None else int(queue.int_ptr))
        try:
            plan = launches.plans.get(key)
        except TypeError:  # an unhashable constexpr value: specialize() says why
            specialize_for(self.kernel, meta, args, fp_contract)
            raise
        if launches.captures and stale(launches.captures):  # a module table changed
            self.kernel.clear_cache()
            launches.meta = meta
            plan = None
        if plan is None:
            plan = self._plan(launches, key, meta, args, dev, ctx, queue, fp_contract)
        launches.last = (device, fp_contract, spec_key, epoch, dev, ctx, plan)
        return dev, ctx, plan

    def _plan(
        self,
        launches: KernelLaunches,
        key: tuple[Any, ...],
        meta: Meta,
        args: tuple[Any, ...],
        dev: Device,
        ctx: Any,
        queue: Any,
        fp_contract: bool | None = None,
    ) -> CLPlan | SimPlan:
        spec = specialize_for(self.kernel, meta, args, fp_contract)
        caps = captures(spec.function)
        with _plan_lock:
            launches.captures = [*launches.captures, *caps]
            plan = launches.plans.get(key)
            if plan is None:
                if dev.is_sim:
                    plan = SimPlan(spec, meta.name)
                else:
                    plan = CLPlan(spec, meta.name, dev, ctx, queue)
                launches.plans[key] = plan
        return plan

    def __repr__(self) -> str:
        return f"<clpy launcher {self.kernel.__name__}[{self.sizes!r}]>"


__all__ = [
    "Launcher",
    "KernelLaunches",
    "LaunchHandle",
    "LaunchError",
    "DoneHandle",
    "ForeignContext",
    "LocalMemory",
    "arg_type",
]
