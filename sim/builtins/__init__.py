"""Simulator implementations of clpy's built-ins, resolved by built-in name.

Every module in this package (and the optional top-level modules listed in ``_EXTRA``, e.g.
``sim/collectives.py`` or ``sim/atomics.py``) that defines ``IMPLS: dict[str, Impl]``
contributes entries; adding a family is adding one module. ``clpy`` never imports ``sim``: the
simulator looks implementations up by ``Builtin.name`` when it compiles a call.

Calling convention::

    def impl(call: sim.plan.Call, fr: sim.frame.Frame, args: list[Value]) -> Value

``call`` carries the registry entry (``call.builtin``), the overload the type checker chose
(``call.params``, ``call.ret``), the source location (``call.loc``), the enabled checks and a
per-call-site scratch dict. ``fr`` is the frame of lanes executing the call: ``fr.shape`` is
``(groups, items)``, ``fr.gslot`` the batch slot of each lane's work-group, ``fr.llid`` its
local linear id, ``fr.batch.launch`` the NDRange geometry and the reporting functions
(``launch.fail_lanes``). ``args`` are lane values, already converted to ``call.params``:
scalars are NumPy scalars or arrays broadcastable to ``fr.shape``, vectors have a leading
component axis ``(n, g, w)``, pointers are ``sim.frame.PtrVal(mem, off)`` (read and write with
``mem.load(fr, off + i, call.loc)`` / ``mem.store(...)``, which bounds-check and record races;
atomics use ``idx = mem.element_indices(fr, off + i, call.loc)`` and read-modify-write
``mem.flat_data()[idx]`` themselves in the configured order, which keeps them exempt from race
checks). Work-group functions reduce over the lanes of each work-group: in a frame with
``fr.complete`` and ``fr.gslot`` of shape ``(G, 1)`` a work-group is a row; otherwise group the
lanes by ``fr.gslot``.

An implementation may define ``impl.specialize(call, arg_fns)`` returning a closure
``fr -> value`` (or None) to precompute per call site. Uniform built-ins (barriers,
collectives) see whole work-groups: ``fr.complete`` tells whether every work-item of each
present group is in the frame.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Callable
from typing import Any

import numpy as np

from clpy.types.core import ScalarType, Type, VectorType, element_of

Impl = Callable[..., Any]

_EXTRA = ("sim.collectives", "sim.atomics", "sim.subgroups", "sim.images", "sim.workgroup",
          "sim.pipes", "sim.enqueue")


@functools.lru_cache(maxsize=1)
def table() -> dict[str, Impl]:
    """Every implementation, by built-in name."""
    out: dict[str, Impl] = {}
    names = [f"{__name__}.{m.name}" for m in pkgutil.iter_modules(__path__)]
    for modname in (*sorted(names), *_EXTRA):
        try:
            mod = importlib.import_module(modname)
        except ModuleNotFoundError as e:
            if e.name == modname:
                continue
            raise
        impls = getattr(mod, "IMPLS", None)
        if isinstance(impls, dict):
            out.update(impls)
    from clpy.builtins.registry import REGISTRY

    for name, impl in out.items():  # fill the registry's simulator slot (Builtin.sim)
        b = REGISTRY.get(name)
        if b is not None and b.sim is None:
            b.sim = impl
    return out


def lookup(name: str) -> Impl | None:
    return table().get(name)


# ----------------------------------------------------------------------------- helpers


def fix(r: Any, t: Type) -> Any:
    """``r`` in the element dtype of ``t`` (0-d arrays become NumPy scalars)."""
    e = element_of(t)
    a = np.asarray(r)
    if a.dtype != e.dtype:
        a = a.astype(e.dtype)
    return a[()] if a.ndim == 0 else a


def f64(x: Any) -> Any:
    return np.asarray(x, dtype=np.float64)


def elementwise(fn: Callable[..., Any], wide: bool = True) -> Impl:
    """A built-in computed by ``fn`` on NumPy arrays. With ``wide``, float and half arguments
    are computed in double and rounded once to the result type (more accurate than the
    spec's ULP bounds); integer arguments are passed through."""
    def impl(call: Any, fr: Any, args: list[Any]) -> Any:
        xs = [f64(a) if wide and _is_float(p) else np.asarray(a)
              for a, p in zip(args, call.params)]
        return fix(fn(*xs), call.ret)
    impl.__name__ = getattr(fn, "__name__", "impl")
    return impl


def _is_float(t: Type) -> bool:
    return isinstance(t, (ScalarType, VectorType)) and element_of(t).is_float


def store_through(call: Any, fr: Any, ptr: Any, value: Any) -> None:
    """``*ptr = value`` for the pointer-out parameters of math built-ins."""
    ptr.mem.store(fr, ptr.off, value, call.loc)
