"""``sim.launch``: run a kernel's typed IR over an NDRange, batch by batch of work-groups."""

from __future__ import annotations

import functools
import time
import weakref
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from clpy.abi import Buffer, LocalBuffer, Param, kernel_params
from clpy.abi.buffers import SimSnapshot
from clpy.ir.nodes import Function
from clpy.types.core import ScalarType, Type, VectorType
from clpy.types.structs import StructType
from clpy_sim.aliases import share_shadows
from clpy_sim.alloc import tune as tune_allocator
from clpy_sim.budget import check as check_budget
from clpy_sim.config import SimConfig, current
from clpy_sim.enqueue import run_enqueued
from clpy_sim.errors import SimulationError
from clpy_sim.frame import Frame, PtrVal, select_lanes
from clpy_sim.images import make_image
from clpy_sim.memory import make_global, make_local
from clpy_sim.native import checked_run
from clpy_sim.native.runner import run as native_run
from clpy_sim.parallel import (
    Tuner,
    Turnstile,
    in_worker,
    restore,
    run_batches,
    snapshot,
    split,
)
from clpy_sim.plan import get_plan
from clpy_sim.printf import flush_prints
from clpy_sim.progress import Progress
from clpy_sim.state import Batch, Launch


def _sizes(name: str, v: Any) -> tuple[int, ...]:
    if type(v) is tuple and 0 < len(v) <= 3:  # the runtime's: a tuple of positive ints
        for x in v:
            if type(x) is not int or x <= 0:
                break
        else:
            return v
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
        self.serial = False  # an argument needs its batches run one after another
        self.globals: list[Any] = []  # the global buffers, in parameter order

    def global_buffer(self, param: Buffer, array: np.ndarray) -> Any:
        mem = make_global(
            self.st, param.name, param.elem, array, param.constant, written=param.written
        )
        self.st.memories.append(mem)
        self.globals.append(mem)
        return PtrVal(mem, np.int64(0))

    def local_buffer(self, param: LocalBuffer, count: int) -> Any:
        return _LocalSlot(param.elem, count)  # allocated per batch of work-groups

    def value(self, param: Param, value: Any) -> Any:
        return _scalar_arg(param.name, param.type, value)

    def pipe(self, param: Param, pipe: Any) -> Any:
        self.serial = True  # packets move in work-item order, in a host object
        return pipe  # a clpy.Pipe: its packets live in the object

    def image(self, param: Param, image: Any) -> Any:
        img = make_image(self.st, param.name, image)
        self.st.memories.append(img)
        return img

    def sampler(self, param: Param, spec: Any) -> Any:
        return np.int64(spec.bits)


def launch(
    fn: Function,
    global_size: Sequence[int] | int,
    local_size: Sequence[int] | int,
    args: Sequence[Any],
    offset: Sequence[int] | None = None,
    params: Sequence[Param] | None = None,
    snapshot: SimSnapshot | None = None,
) -> None:
    """Execute kernel ``fn`` (a typed ``clpy.ir.nodes.Function``) on NumPy arrays in place.

    ``args`` follow docs/ARCHITECTURE.md "Runtime ↔ simulator contract", one per
    ``fn.params`` entry; ``params`` is the kernel's parameter ABI (``clpy.abi``; computed from
    ``fn`` when not given). Raises ``SimulationError`` when a checker finds a bug (see
    ``clpy.sim.config``). ``snapshot`` (the runtime's ``clpy.abi.buffers.SimSnapshot`` of
    the written arguments) is saved before any path that can fail after writing: the NumPy
    engine, the checked native engine (which restores from it for its re-run), a native
    launch expected to be long (which Ctrl-C then stops); a short native launch takes none
    (it cannot fail once started; Ctrl-C raises when it has completed).
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
    tune_allocator()  # once per process: lane arrays reuse memory (sim/alloc.py)
    if params is None:
        params = _PARAMS.get(fn)
        if params is None:
            params = _PARAMS[fn] = kernel_params(fn)
    mode = cfg.engine_name()
    if mode != "numpy":
        # checkers on: the kernel with their detectors; a detection hands the launch, from
        # untouched inputs, to the NumPy engine (sim/native/checked_run.py)
        run_native = checked_run.run if cfg.checks else native_run
        if run_native(fn, gs, ls, off, args, params, cfg, mode, snapshot):
            return  # ran on the native engine (sim/native/)
    check_budget(fn, gs, ls, params, args, cfg)  # before anything is allocated
    if snapshot is not None:
        snapshot.save()  # the NumPy engine can fail (a checker, Ctrl-C) after writing
    _run(fn, gs, ls, off, args, params, cfg, None)


# per kernel: its parameter ABI, for callers that pass none (computing it takes ~4 us)
_PARAMS: weakref.WeakKeyDictionary[Function, Sequence[Param]] = weakref.WeakKeyDictionary()


def _run(
    fn: Function,
    gs: tuple[int, ...],
    ls: tuple[int, ...],
    off: tuple[int, ...],
    args: Sequence[Any],
    params: Sequence[Param],
    cfg: SimConfig,
    threads: int | None,
) -> None:
    """One launch on up to ``threads`` threads (None: as configured; see sim/parallel.py for
    what stays equal)."""
    st = Launch(cfg, gs, ls, off)
    st.program = fn  # type: ignore[attr-defined]  # global variables persist per program
    plan = get_plan(fn, cfg.checks)
    binder = _Binder(st)
    fixed: dict[Any, Any] = {}
    local_params: list[tuple[Any, Type, int]] = []
    for v, p, a in zip(fn.params, params, args):
        bound = p.bind_sim(binder, a)
        if type(bound) is _LocalSlot:
            local_params.append((v, bound.elem, bound.count))
        else:
            fixed[v] = bound
    share_shadows(st, binder.globals)  # overlapping buffers: one shadow (sim/aliases.py)
    W = st.W
    total = st.total_groups
    per_batch = max(1, cfg.max_lanes // W)
    pool, tuner, way = False, None, 0
    if total > per_batch or (total > 1 and total * W >= 2 * cfg.split_lane_count() > 0):
        # several batches, or a launch split_lanes may cut (one batch: the calling thread)
        serial = (
            binder.serial
            or cfg.on_error == "warn"
            or in_worker()
            or (plan.serial_checked and "races" in cfg.checks)
        )
        want = 1 if serial else (threads if threads is not None else cfg.thread_count())
        # nothing can depend on how the groups are cut into batches (sim/parallel.py split)
        free = not cfg.checks and cfg.atomic_order == "work-item" and plan.batch_free
        cut = split(total, W, per_batch, want, cfg.split_lane_count()) if free else per_batch
        # the ways to run it: (on the pool, groups per batch)
        ways = [(False, per_batch)]
        if want > 1 and total > cut:
            ways.append((True, cut))
        if threads is None and cfg.threads is None and not serial:
            # threads left to the default: measure the ways (parallel.Tuner)
            big = per_batch * Tuner.BIG
            if free and total > per_batch and _fits(fn, gs, ls, params, args, cfg, big * W):
                ways.append((False, big))
            if len(ways) > 1:
                key = (total, len(ways))
                tuner = plan.tuners.get(key)
                if tuner is None:
                    if len(plan.tuners) >= 64:  # (launches of many sizes: start afresh)
                        plan.tuners.clear()
                    tuner = plan.tuners[key] = Tuner(len(ways))
        way = tuner.choose() if tuner is not None else len(ways) - 1 if want > 1 else 0
        pool, per_batch = ways[way]
        if pool:
            threads = want
    nbatch = -(-total // per_batch)
    threads = min(threads or 1, nbatch) if pool else 1
    llid = _lane_ids(W)

    def run(k: int, turn: Turnstile | None) -> int:
        # np.errstate is per thread and, in NumPy 2, per context: run_batches runs this in a
        # copy of the launching thread's context (which overrides the errstate its workers
        # set), so each batch sets it here (0/0 is NaN in OpenCL C, not a RuntimeWarning)
        with np.errstate(all="ignore"):
            return run_batch(k, turn)

    def run_batch(k: int, turn: Turnstile | None) -> int:
        gfirst = k * per_batch
        G = min(per_batch, total - gfirst)
        batch = Batch(st, gfirst, G)
        batch.index = k
        batch.turn = batch.stop = turn
        batch.watch = k % cfg.sample == 0  # sampled by the race and uninit checkers
        root = Frame(batch, (G, W), _group_slots(G), llid)
        root.env.update(fixed)
        for p, elem, count in local_params:
            lm = make_local(st, p.name, elem, count, G, batch.watch)
            batch.locals[p] = lm
            root.env[p] = PtrVal(lm, np.int64(0))
        if st.uniform:
            plan.body(root)
        else:
            active = select_lanes(st.active_lanes(gfirst, G), root.shape)
            plan.body(root if active is True else root.sub(active))  # type: ignore[arg-type]
        return G

    progress = Progress(total) if nbatch > 1 else None  # a bar after ~2 s; Ctrl-C raises here
    saved = None
    t0 = time.perf_counter()
    try:
        if threads <= 1:
            with np.errstate(all="ignore"):
                for k in range(nbatch):
                    g = run(k, None)
                    if progress is not None:
                        progress.step(g)
        else:
            saved = snapshot(st.memories) if "races" in cfg.checks else None
            st.saved = saved
            run_batches(nbatch, threads, run, progress.step if progress else _no_step)
    except SimulationError as e:
        if saved is not None:
            # a finding of a parallel run with the race checker on: the sequential run's
            # report, exactly (which race, which lines and work-items), from the same inputs
            restore(saved)
            if progress is not None:
                progress.close()
            st.prints.clear()
            return _run(fn, gs, ls, off, args, params, cfg, 1)
        # one clean traceback frame: the finding already names the kernel's file:line
        raise SimulationError(e.reports) from None
    finally:
        if progress is not None:
            progress.close()
        flush_prints(st)
    if tuner is not None:
        tuner.record(way, (time.perf_counter() - t0) / total)
    run_enqueued(st)  # device-side enqueue: the children run after the parent kernel


def _fits(
    fn: Function,
    gs: tuple[int, ...],
    ls: tuple[int, ...],
    params: Sequence[Param],
    args: Sequence[Any],
    cfg: SimConfig,
    lanes: int,
) -> bool:
    """Whether batches of ``lanes`` work-items stay within the memory budget."""
    try:
        check_budget(fn, gs, ls, params, args, replace(cfg, max_lanes=lanes, threads=1))
    except MemoryError:
        return False
    return True


def _no_step(groups: int) -> None:
    return None


@functools.lru_cache(maxsize=64)
def _lane_ids(W: int) -> np.ndarray:
    """Local linear ids of a root frame, shape (1, W) (shared, read-only)."""
    a = np.arange(W, dtype=np.int64)[None, :]
    a.flags.writeable = False
    return a


@functools.lru_cache(maxsize=64)
def _group_slots(G: int) -> np.ndarray:
    """Work-group slots of a root frame, shape (G, 1) (shared, read-only)."""
    a = np.arange(G, dtype=np.int64)[:, None]
    a.flags.writeable = False
    return a


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
