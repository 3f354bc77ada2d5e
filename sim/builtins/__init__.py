"""Simulator implementations of clpy's built-ins.

Each registry entry names the module implementing it (``Builtin.sim``: this package's modules
and ``sim/collectives.py``, ``sim/atomics.py``, ``sim/pipes.py``); that module's ``IMPLS``
maps the built-in's name to its function, and ``Builtin.sim_impl()`` imports and caches it on
first use. ``clpy`` never imports ``sim``; the registry resolves the reference lazily.

Calling convention::

    def impl(call: sim.call.Call, fr: sim.frame.Frame, args: list[Value]) -> Value

``call`` carries the registry entry (``call.builtin``), the overload the type checker chose
(``call.params``, ``call.ret``), the source location (``call.loc``), the call node
(``call.expr``, e.g. ``call.expr.combiner`` for user-defined reductions), the enabled checks
and a per-call-site scratch dict. ``fr`` is the frame of lanes executing the call: ``fr.shape`` is
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

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from clpy.builtins.registry import REGISTRY
from clpy.types.core import ScalarType, Type, VectorType, element_of

if TYPE_CHECKING:
    from clpy_sim.call import Call
    from clpy_sim.frame import Frame

Impl = Callable[["Call", "Frame", list[Any]], Any]  # see the calling convention above


def table() -> dict[str, Impl]:
    """Every built-in's implementation by name, resolved through its registry entry."""
    return {name: b.sim_impl() for name, b in REGISTRY.items()}


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

    def impl(call: Call, fr: Frame, args: list[Any]) -> Any:
        xs = [f64(a) if wide and _is_float(p) else np.asarray(a) for a, p in zip(args, call.params)]
        return fix(fn(*xs), call.ret)

    impl.__name__ = getattr(fn, "__name__", "impl")
    return impl


def _is_float(t: Type) -> bool:
    return isinstance(t, (ScalarType, VectorType)) and element_of(t).is_float


def store_through(call: Call, fr: Frame, ptr: Any, value: Any) -> None:
    """``*ptr = value`` for the pointer-out parameters of math built-ins."""
    ptr.mem.store(fr, ptr.off, value, call.loc)
