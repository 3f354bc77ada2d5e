"""Program-scope variables in the simulator (clpy/ir/program_vars.py, spec §6.5).

A ``__constant`` table is constant memory made from the table's current values at the first
use in a launch (so a table changed in place between launches is seen, as on OpenCL, where the
launcher re-specializes; clpy/program_scope.py). A ``__global`` variable is global memory over
storage that persists across launches of one program: here a program is the kernel's
``Function`` (one specialization), as on OpenCL where each specialization is its own program.
Both are found by ``ProgramVar.key`` from any function of the launch (device functions run in
frames that cannot see the kernel's variables), once per launch.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

import numpy as np

from clpy.ir.program_vars import ProgramVar
from clpy.types.core import AddressSpace
from clpy_sim.frame import Frame, PtrVal
from clpy_sim.memory import make_global
from clpy_sim.state import Launch

_lock = threading.Lock()
# id(kernel Function) -> (weak reference to it, {variable key: storage})
_STORAGE: dict[int, tuple[weakref.ref[Any], dict[Any, np.ndarray]]] = {}


def value(fr: Frame, var: ProgramVar) -> PtrVal:
    """The pointer to the variable's memory in this launch."""
    launch = fr.batch.launch
    mems: dict[Any, PtrVal] | None = getattr(launch, "program_mems", None)
    if mems is not None:
        p = mems.get(var.key)
        if p is not None:
            return p
    with _lock:
        mems = getattr(launch, "program_mems", None)
        if mems is None:
            mems = {}
            launch.program_mems = mems  # type: ignore[attr-defined]
        p = mems.get(var.key)
        if p is None:
            p = PtrVal(_memory(launch, var), np.int64(0))
            mems[var.key] = p
    return p


def _memory(launch: Launch, var: ProgramVar) -> Any:
    elem = var.type.elem  # type: ignore[attr-defined]
    if var.space is AddressSpace.CONSTANT:
        data = np.ascontiguousarray(var.source.values())
        return make_global(launch, var.name, elem, data, constant=True)
    return make_global(launch, var.name, elem, _storage(launch, var), constant=False)


def _storage(launch: Launch, var: ProgramVar) -> np.ndarray:
    """The persistent storage of a ``__global`` variable for the launch's program."""
    program = getattr(launch, "program", None)
    if program is None:  # launched without a program identity: fresh each launch
        return np.array(var.source.values())
    entry = _STORAGE.get(id(program))
    if entry is None or entry[0]() is not program:
        for k in [k for k, (r, _) in _STORAGE.items() if r() is None]:
            del _STORAGE[k]
        entry = (weakref.ref(program), {})
        _STORAGE[id(program)] = entry
    store = entry[1]
    arr = store.get(var.key)
    if arr is None:
        arr = store[var.key] = np.array(var.source.values())
    return arr


def storage_of(program: Any, var_key: Any) -> np.ndarray | None:
    """The simulator's storage of a program's global variable (None before its first use)."""
    entry = _STORAGE.get(id(program))
    if entry is None or entry[0]() is not program:
        return None
    return entry[1].get(var_key)


__all__ = ["value", "storage_of"]
