"""Launch plans for the ``"sim"`` device: the same argument checks as on OpenCL (each
parameter's ABI object converts its argument), then
``sim.launch(fn, global_size, local_size, args, offset, params)``.

The simulator reads copies of the NumPy arguments the kernel only reads (as a device
gets them), and writes the ones the kernel writes in place where they are aligned
(else into copies, copied back only after it returned without error), as it does device
arrays (``clpy.DeviceArray``): the arrays written in place are snapshotted when the simulator
asks (``SimSnapshot``: before a path that can fail after writing) and restored when the launch
fails, as are pipes (always snapshotted); so a ``SimulationError`` leaves the caller's arrays
bit-identical.
"""

from __future__ import annotations

import functools
import inspect
import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

from clpy.abi import Buffer, Converter, DeviceArray, Param, SimDeferred
from clpy.abi.aliasing import shared_arrays
from clpy.abi.buffers import SimSnapshot
from clpy.ir.nesting import deepest_ir, nesting_guard
from clpy.runtime.handles import DoneHandle, LaunchHandle
from clpy.runtime.sizes import (
    Sizes,
    check_index_range,
    check_uniform,
    index_range,
    pick_local,
)

if TYPE_CHECKING:
    from clpy.kernel import Specialization


def _sim_module() -> ModuleType:
    try:
        import clpy_sim as sim  # the simulator starts only when the user picks it (DESIGN.md)
    except ImportError as e:
        raise RuntimeError(
            "the simulator package 'sim' is not installed or failed to import "
            f"({e}); choose an OpenCL device"
        ) from None
    if not hasattr(sim, "launch"):
        where = getattr(sim, "__file__", None) or list(getattr(sim, "__path__", []))
        raise RuntimeError(
            f"the package 'sim' imported from {where} has no launch(): not "
            "clpy's simulator, or a stale editable install (pip install -e .)"
        )
    return sim


@functools.lru_cache(maxsize=8)
def _takes_snapshot(launch: Any) -> bool:
    """Whether ``sim.launch`` takes ``snapshot=`` (saving it itself where it can fail)."""
    try:
        return "snapshot" in inspect.signature(launch).parameters
    except (TypeError, ValueError):
        return False


class SimPlan:
    """One specialization prepared for the simulator."""

    def __init__(self, spec: Specialization, name: str) -> None:
        self.function = spec.function
        self.name = name
        self.params: tuple[Param, ...] = spec.abi
        self.index_range = index_range(spec.function)
        self.converters: list[tuple[int, Converter]] = [
            (p.index, p.sim_converter()) for p in self.params
        ]
        self._multi_buffer = sum(isinstance(p, Buffer) for p in self.params) > 1
        # the argument positions of the buffer parameters (clpy/abi/aliasing.py looks at them)
        self._buffer_args = [
            p.index for p in self.params if isinstance(p, Buffer) and p.index is not None
        ]
        self._sim: ModuleType | None = None  # the simulator module of the last launch
        self._lazy = False  # its launch takes snapshot=

    def _may_share(self, args: tuple[Any, ...]) -> bool:
        for i in self._buffer_args:
            a = args[i]
            if isinstance(a, np.ndarray) or (type(a) is DeviceArray and a.staged):
                return True
        return False

    def _convert_shared(self, args: tuple[Any, ...], deferred: list[SimDeferred]) -> list[Any]:
        """Convert the arguments, giving parameters passed one NumPy array one working copy
        of it (clpy/abi/aliasing.py), written back once."""
        # (no NumPy array and no staged DeviceArray view: nothing shared_arrays could find)
        shared = shared_arrays(self.params, args) if self._may_share(args) else {}
        out: list[Any] = []
        for slot, (i, conv) in enumerate(self.converters):
            k = shared.get(slot)
            if k is None:
                out.append(conv(args[i], deferred))
                continue
            p, first = self.params[slot], self.params[k]
            assert isinstance(p, Buffer)
            p.check_array(args[i])
            work = out[k]
            out.append(work)
            if p.written and not first.written:
                deferred.append(
                    SimDeferred(
                        commit=functools.partial(np.copyto, args[i], work),
                        restore=functools.partial(np.copyto, work, args[i]),
                        array=work,
                    )
                )
        return out

    def run(
        self, args: tuple[Any, ...], sizes: Sizes, wait: bool, offset: Any
    ) -> LaunchHandle | None:
        sim = sys.modules.get("clpy_sim")
        if sim is None or sim is not self._sim:
            sim = self._sim = _sim_module()
            self._lazy = _takes_snapshot(sim.launch)
        if self.index_range is not None:
            check_index_range(self.name, sizes[0], offset, self.index_range)
        deferred: list[SimDeferred] = []
        if self._multi_buffer:
            sim_args = self._convert_shared(args, deferred)
        else:
            sim_args = [conv(args[i], deferred) for i, conv in self.converters]
        g, loc = sizes
        if 0 in g:
            return None if wait else DoneHandle()
        if loc is None:
            loc = pick_local(g)
        else:
            check_uniform(
                self.name,
                g,
                loc,
                "the simulator",
                bool(getattr(sim, "SUPPORTS_NON_UNIFORM", False)),
            )
        off = None if offset is None else tuple(int(x) for x in np.atleast_1d(offset))
        snap = SimSnapshot(deferred)
        try:
            try:
                if self._lazy:
                    sim.launch(self.function, g, loc, sim_args, off, self.params, snapshot=snap)
                else:  # a simulator without lazy snapshots: restorable before it starts
                    snap.save()
                    sim.launch(self.function, g, loc, sim_args, offset=off, params=self.params)
            except RecursionError:
                # The simulator compiles and runs expressions recursively, like the emitter.
                fns = [self.function, *self.function.callees]
                with nesting_guard(lambda: deepest_ir(fns)):
                    raise
        except BaseException:
            for d in deferred:
                d.rollback()
            raise
        for d in deferred:
            d.commit()
        return None if wait else DoneHandle()
