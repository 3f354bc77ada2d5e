"""Launch plans for the ``"sim"`` device: the same argument checks as on OpenCL, then
``sim.launch(fn, global_size, local_size, args, offset)`` (docs/ARCHITECTURE.md).

The simulator writes into copies; written arrays are copied back only after it returned
without error, so a ``SimulationError`` leaves the caller's arrays bit-identical.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from clpy.runtime.clplan import plan_params
from clpy.runtime.launch import DoneHandle, LaunchHandle, Meta
from clpy.runtime.marshal import (
    LocalMemory,
    Param,
    _tname,
    check_host_array,
    check_local,
    check_pipe,
    pointer_kind,
    value_converter,
)
from clpy.runtime.pipes import Pipe
from clpy.runtime.sizes import Sizes, check_uniform, pick_local
from clpy.types.core import PointerType, VectorType

if TYPE_CHECKING:
    from clpy.kernel import Specialization

Converter = Callable[[Any, list[Any]], Any]


def _sim_module() -> Any:
    try:
        import sim
    except ImportError as e:
        raise RuntimeError("the simulator package 'sim' is not installed or failed to import "
                           f"({e}); choose an OpenCL device") from None
    if not hasattr(sim, "launch"):
        where = getattr(sim, "__file__", None) or list(getattr(sim, "__path__", []))
        raise RuntimeError(f"the package 'sim' imported from {where} has no launch(): not "
                           "clpy's simulator, or a stale editable install (pip install -e .)")
    return sim


class SimPlan:
    """One specialization prepared for the simulator."""

    def __init__(self, spec: Specialization, meta: Meta) -> None:
        self.function = spec.function
        self.name = meta.name
        self.params = plan_params(spec, meta)
        self.converters = [(i, self._converter(p)) for i, p in self.params]
        self.has_pipes = any(pointer_kind(p) == "pipe" for _, p in self.params)

    def _converter(self, p: Param) -> Converter:
        kind = pointer_kind(p)
        if kind == "local":
            return lambda a, copies: check_local(p, a, None)
        if kind == "global":
            return _global_converter(p)
        if kind == "pipe":
            return lambda a, copies: check_pipe(p, a)
        conv = value_converter(p)
        if isinstance(p.type, VectorType):
            n = p.type.n
            return lambda a, copies: conv(a)[:n]
        return lambda a, copies: conv(a)

    def run(self, args: tuple[Any, ...], sizes: Sizes, wait: bool,
            offset: Any) -> LaunchHandle | None:
        sim = _sim_module()
        copies: list[Any] = []
        sim_args = [conv(args[i], copies) for i, conv in self.converters]
        g, loc = sizes
        if 0 in g:
            return None if wait else DoneHandle()
        if loc is None:
            loc = pick_local(g)
        else:
            check_uniform(self.name, g, loc, "the simulator",
                          bool(getattr(sim, "SUPPORTS_NON_UNIFORM", False)))
        off = None if offset is None else tuple(int(x) for x in np.atleast_1d(offset))
        if self.has_pipes:  # a failing kernel leaves its pipes as they were, like arrays
            _launch_restoring_pipes(sim, self.function, g, loc, sim_args, off)
        else:
            sim.launch(self.function, g, loc, sim_args, offset=off)
        for restore in copies:
            restore()
        return None if wait else DoneHandle()


def _launch_restoring_pipes(sim: Any, fn: Any, g: Any, loc: Any, args: list[Any],
                            off: Any) -> None:
    pipes = [a for a in args if isinstance(a, Pipe)]
    saved = [(a.slots.copy() if a.slots is not None else None, a.read_seq, a.write_seq)
             for a in pipes]
    try:
        sim.launch(fn, g, loc, args, offset=off)
    except BaseException:
        for a, (slots, r, w) in zip(pipes, saved):
            if slots is not None and a.slots is not None:
                a.slots[...] = slots
            a.read_seq, a.write_seq = r, w
        raise


def _pyopencl() -> tuple[Any, Any]:
    try:
        import pyopencl as cl
        import pyopencl.array as cla
    except ImportError:  # pragma: no cover - pyopencl is a dependency
        return None, None
    return cl, cla


def _global_converter(p: Param) -> Converter:
    assert isinstance(p.type, PointerType)
    elem = p.type.elem
    elem_size = elem.size
    written = p.written

    def conv(a: Any, copies: list[Any]) -> Any:
        if isinstance(a, np.ndarray):
            check_host_array(p, a)
            work = np.array(a, copy=True, order="C")
            if written:
                copies.append(lambda: np.copyto(a, work))
            return work
        cl, cla = _pyopencl()
        if cla is not None and isinstance(a, cla.Array):
            check_host_array(p, a)
            work = a.get()
            if written:
                copies.append(lambda: a.set(work))
            return work
        if cl is not None and isinstance(a, cl.Buffer):
            from clpy.runtime.marshal import element_layout

            dtype, lanes = element_layout(p, elem)
            if a.size % elem_size:
                raise ValueError(f"{p.where()}: buffer size {a.size} is not a multiple of "
                                 f"the element size {elem_size}")
            count = a.size // elem_size
            work = np.empty((count, lanes) if lanes else (count,), dtype)
            queue = cl.CommandQueue(a.context)
            cl.enqueue_copy(queue, work, a)
            if written:
                copies.append(lambda: cl.enqueue_copy(queue, a, work))
            return work
        if isinstance(a, LocalMemory):
            raise TypeError(f"{p.where()}: LocalMemory is only for Local[...] parameters")
        raise TypeError(f"{p.where()}: expected a NumPy array, pyopencl.array.Array or "
                        f"pyopencl.Buffer, got {_tname(a)}")

    return conv
