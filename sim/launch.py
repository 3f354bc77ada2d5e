"""``sim.launch``: run a kernel's typed IR over an NDRange, batch by batch of work-groups."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from clpy.abi import Buffer, LocalBuffer, Param, kernel_params
from clpy.ir.nodes import Function
from clpy.types.core import ScalarType, Type, VectorType
from clpy.types.structs import StructType
from clpy_sim.config import current
from clpy_sim.enqueue import run_enqueued
from clpy_sim.errors import SimulationError
from clpy_sim.frame import Frame, PtrVal, select_lanes
from clpy_sim.images import make_image
from clpy_sim.memory import make_global, make_local
from clpy_sim.plan import get_plan
from clpy_sim.printf import flush_prints
from clpy_sim.progress import Progress
from clpy_sim.state import Batch, Launch


def _sizes(name: str, v: Any) -> tuple[int, ...]:
    t = (v,) if isinstance(v, (int, np.integer)) else tuple(v)
    if not 1 <= len(t) <= 3 or any(not isinstance(x, (int, np.integer)) or x <= 0 for x in t):
        raise ValueError(f"sim.launch: {name} must be 1 to 3 positive ints, got {v!r}")
    return tuple(int(x) for x in t)


class _LocalSlot:
    __slots__ = ("elem", "count")

    def __init__(self, elem: Type, count: int) -> None:
        self.elem = elem
        self.count = count


class _Binder:
    """The simulator's side of the parameter ABI (``clpy.abi.SimBinder``): each parameter's
    ABI object calls back the method for its kind of memory."""

    def __init__(self, st: Launch) -> None:
        self.st = st

    def global_buffer(self, param: Buffer, array: np.ndarray) -> Any:
        mem = make_global(
            self.st, param.name, param.elem, array, param.constant, written=param.written
        )
        return PtrVal(mem, np.int64(0))

    def local_buffer(self, param: LocalBuffer, count: int) -> Any:
        return _LocalSlot(param.elem, count)  # allocated per batch of work-groups

    def value(self, param: Param, value: Any) -> Any:
        return _scalar_arg(param.name, param.type, value)

    def pipe(self, param: Param, pipe: Any) -> Any:
        return pipe  # a clpy.Pipe: its packets live in the object

    def image(self, param: Param, image: Any) -> Any:
        return make_image(self.st, param.name, image)

    def sampler(self, param: Param, spec: Any) -> Any:
        return np.int64(spec.bits)


def launch(
    fn: Function,
    global_size: Sequence[int] | int,
    local_size: Sequence[int] | int,
    args: Sequence[Any],
    offset: Sequence[int] | None = None,
    params: Sequence[Param] | None = None,
) -> None:
    """Execute kernel ``fn`` (a typed ``clpy.ir.nodes.Function``) on NumPy arrays in place.

    ``args`` follow docs/ARCHITECTURE.md "Runtime ↔ simulator contract", one per
    ``fn.params`` entry; ``params`` is the kernel's parameter ABI (``clpy.abi``; computed from
    ``fn`` when not given). Raises ``SimulationError`` when a checker finds a bug (see
    ``clpy.sim.config``).
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
        raise TypeError(f"sim.launch: {fn.name} takes {len(fn.params)} arguments, got {len(args)}")
    cfg = current()
    st = Launch(cfg, gs, ls, off)
    plan = get_plan(fn, cfg.checks)
    if params is None:
        params = kernel_params(fn)
    binder = _Binder(st)
    fixed: dict[Any, Any] = {}
    local_params: list[tuple[Any, Type, int]] = []
    for v, p, a in zip(fn.params, params, args):
        bound = p.bind_sim(binder, a)
        if type(bound) is _LocalSlot:
            local_params.append((v, bound.elem, bound.count))
        else:
            fixed[v] = bound
    W = st.W
    per_batch = max(1, cfg.max_lanes // W)
    total = st.total_groups
    llid = np.arange(W, dtype=np.int64)[None, :]
    progress = Progress(total)  # a bar after ~2 s; Ctrl-C raises here, the caller rolls back
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
                else:
                    active = select_lanes(st.active_lanes(gfirst, G), root.shape)
                    plan.body(root if active is True else root.sub(active))  # type: ignore[arg-type]
                progress.step(G)
        except SimulationError as e:
            # one clean traceback frame: the finding already names the kernel's file:line
            raise SimulationError(e.reports) from None
        finally:
            progress.close()
            flush_prints(st)
    run_enqueued(st)  # device-side enqueue: the children run after the parent kernel


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
