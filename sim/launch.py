"""``sim.launch``: run a kernel's typed IR over an NDRange, batch by batch of work-groups."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from clpy.ir.nodes import Function
from clpy.types.core import AddressSpace, PointerType, ScalarType, Type, VectorType
from clpy.types.pipes import PipeType
from clpy.types.structs import StructType
from sim.config import current
from sim.errors import SimulationError
from sim.frame import Frame, PtrVal, select_lanes
from sim.memory import make_global, make_local
from sim.plan import get_plan
from sim.printf import flush_prints
from sim.state import Batch, Launch


def _sizes(name: str, v: Any) -> tuple[int, ...]:
    t = (v,) if isinstance(v, (int, np.integer)) else tuple(v)
    if not 1 <= len(t) <= 3 or any(not isinstance(x, (int, np.integer)) or x <= 0 for x in t):
        raise ValueError(f"sim.launch: {name} must be 1 to 3 positive ints, got {v!r}")
    return tuple(int(x) for x in t)


def launch(fn: Function, global_size: Sequence[int] | int, local_size: Sequence[int] | int,
           args: Sequence[Any], offset: Sequence[int] | None = None) -> None:
    """Execute kernel ``fn`` (a typed ``clpy.ir.nodes.Function``) on NumPy arrays in place.

    ``args`` follow docs/ARCHITECTURE.md "Runtime ↔ simulator contract". Raises
    ``SimulationError`` when a checker finds a bug (see ``clpy.sim.config``).
    """
    if not fn.is_kernel:
        raise TypeError(f"sim.launch: {fn.name} is a device function, not a kernel")
    gs = _sizes("global_size", global_size)
    ls = _sizes("local_size", local_size)
    if len(gs) != len(ls):
        raise ValueError(f"sim.launch: global_size {gs} and local_size {ls} differ in length")
    off = tuple(offset) if offset is not None else (0,) * len(gs)
    if len(off) != len(gs):
        raise ValueError(f"sim.launch: offset {off} must have {len(gs)} entries")
    if len(args) != len(fn.params):
        raise TypeError(f"sim.launch: {fn.name} takes {len(fn.params)} arguments, got "
                        f"{len(args)}")
    cfg = current()
    st = Launch(cfg, gs, ls, off)
    plan = get_plan(fn, cfg.checks)
    fixed: dict[Any, Any] = {}
    local_params: list[tuple[Any, Type, int]] = []
    for p, a in zip(fn.params, args):
        t = p.type
        if isinstance(t, PointerType):
            if t.space is AddressSpace.LOCAL:
                count = _local_count(p.name, a)
                local_params.append((p, t.elem, count))
                continue
            if not isinstance(a, np.ndarray):
                raise TypeError(f"sim.launch: argument {p.name!r} must be a NumPy array")
            mem = make_global(st, p.name, t.elem, a, t.space is AddressSpace.CONSTANT,
                              written=p.name in fn.written)
            fixed[p] = PtrVal(mem, np.int64(0))
        elif isinstance(t, PipeType):  # a clpy.Pipe: its packets live in the object
            fixed[p] = a
        else:
            fixed[p] = _scalar_arg(p.name, t, a)
    W = st.W
    per_batch = max(1, cfg.max_lanes // W)
    total = st.total_groups
    llid = np.arange(W, dtype=np.int64)[None, :]
    with np.errstate(all="ignore"):
        try:
            for gfirst in range(0, total, per_batch):
                G = min(per_batch, total - gfirst)
                batch = Batch(st, gfirst, G)
                root = Frame(batch, (G, W), np.arange(G, dtype=np.int64)[:, None], llid)
                root.env.update(fixed)
                for p, elem, count in local_params:
                    lm = make_local(st, p.name, elem, count, G)
                    batch.locals[p] = lm
                    root.env[p] = PtrVal(lm, np.int64(0))
                if st.uniform:
                    plan.body(root)
                    continue
                active = select_lanes(st.active_lanes(gfirst, G), root.shape)
                plan.body(root if active is True else root.sub(active))  # type: ignore[arg-type]
        except SimulationError as e:
            # one clean traceback frame: the finding already names the kernel's file:line
            raise SimulationError(e.reports) from None
        finally:
            flush_prints(st)


def _local_count(name: str, a: Any) -> int:
    for attr in ("count", "size", "nbytes"):
        v = getattr(a, attr, None)
        if isinstance(v, (int, np.integer)):
            return int(v)
    if isinstance(a, (int, np.integer)):
        return int(a)
    raise TypeError(f"sim.launch: Local argument {name!r} must be a clpy.LocalMemory(count)")


def _scalar_arg(name: str, t: Type, a: Any) -> Any:
    if isinstance(t, ScalarType):
        return t.dtype.type(a)
    if isinstance(t, VectorType):
        v = np.asarray(a, dtype=t.elem.dtype).reshape(-1)[: t.n]
        return v.reshape(t.n, 1, 1)
    if isinstance(t, StructType):
        rec = np.asarray(a, dtype=t.dtype)
        return _struct_value(rec, t)
    raise TypeError(f"sim.launch: cannot pass a value for parameter {name!r} of type {t}")


def _struct_value(rec: np.ndarray, t: StructType) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for fname, ft in t.fields:
        f = rec[fname]
        if isinstance(ft, StructType):
            out[fname] = _struct_value(f, ft)
        elif isinstance(ft, VectorType):
            out[fname] = np.asarray(f).reshape(-1)[: ft.n].reshape(ft.n, 1, 1)
        else:
            out[fname] = np.asarray(f)[()]
    return out
