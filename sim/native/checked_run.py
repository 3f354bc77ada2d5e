"""A launch on the native engine with checkers on (sim/native/checks.py): the kernel compiled
with its detectors, the buffers it writes saved first, race shadows for them, and the launch
given back to the NumPy engine (the saved contents restored) when a detector fires, so that
engine finds and reports the bug itself.

``run(...)`` returns True when the native results stand, False when the NumPy engine must run
the launch (``runner.why_not`` says why).
"""

from __future__ import annotations

import ctypes
import threading
import time
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from clpy.abi import Param
from clpy.abi.buffers import SimSnapshot
from clpy.ir.nodes import Function
from clpy_sim.config import SimConfig
from clpy_sim.native import runner
from clpy_sim.native.cgen import Geometry
from clpy_sim.native.checks import CheckSpec, fired, generate_checked
from clpy_sim.native.chunks import CANCELLED, LONG_S, run_long, run_short
from clpy_sim.native.compiler import CompileFailed, build
from clpy_sim.native.ctypes_c import Unsupported

_LOCK = threading.Lock()
SHADOW_BYTES = 1 << 29  # race shadows of a launch's extra thread chunks, at most
SHADOW_NS = 6  # cost of a thread chunk's race shadow per element (zeroed pages, comparison)
# per kernel specialization: its checked kernels by geometry and checks, or why not
_CACHE: weakref.WeakKeyDictionary[
    Function, dict[Any, tuple[runner._Compiled, tuple[str, ...]] | str]
] = weakref.WeakKeyDictionary()


def _compiled(
    fn: Function,
    geom: Geometry,
    on: frozenset[str],
    names: tuple[str, ...],
    shared: tuple[str, ...],
) -> tuple[runner._Compiled, tuple[str, ...]]:
    """The checked kernel (and the buffers with race shadows, in order) for ``geom``, the
    checks ``on``, the global buffers ``names`` the kernel writes (or that are the same array as
    one it writes) and those of them ``shared`` with another parameter."""
    key = (geom, on, names, shared)
    with _LOCK:
        per = _CACHE.setdefault(fn, {})
        got = per.get(key)
    if isinstance(got, str):
        raise Unsupported(got)
    if got is not None:
        return got
    try:
        # the race detector runs whenever a checker does: a racy kernel's results are the
        # NumPy engine's lockstep ones, so with any checker on both engines give the same bytes
        spec = CheckSpec(frozenset(on) | {"races"}, names, shared)
        src, ordered, used = generate_checked(fn, geom, spec)
        lib = build(src)
        out: tuple[runner._Compiled, tuple[str, ...]] | str = (
            runner._Compiled(lib, src, ordered),
            used,
        )
    except Unsupported as e:
        out = e.args[0]
    except CompileFailed as e:
        if runner.strict():
            raise
        out = f"the C compiler failed on the generated source: {str(e)[:300]}"
    except Exception as e:
        if runner.strict():
            raise
        out = (
            f"internal error of the native engine's checked code generator: {type(e).__name__}: {e}"
        )
    with _LOCK:
        per[key] = out
    if isinstance(out, str):
        raise Unsupported(out)
    return out


def run(
    fn: Function,
    gs: tuple[int, ...],
    ls: tuple[int, ...],
    off: tuple[int, ...],
    args: Sequence[Any],
    params: Sequence[Param],
    cfg: SimConfig,
    mode: str | None = None,
    snapshot: SimSnapshot | None = None,
) -> bool:
    """Launch ``fn`` natively with ``cfg.checks``; False: the NumPy engine runs it, from the
    written buffers as they were before (restored from ``snapshot``, the runtime's copies,
    where it covers them; else from copies taken here)."""
    if mode is None:
        mode = cfg.engine_name()
    try:
        if cfg.atomic_order != "work-item":
            raise Unsupported(f"atomic_order={cfg.atomic_order!r}")
        binder = runner._Binder()
        bound, geom = runner.bind(binder, gs, ls, args, params)
        # the buffers the kernel writes, and any passed the same array as one of them (the
        # runner has refused partial overlaps): one shadow per array
        ptrs = {x[2] for x in binder.arrays if x[0].written and not x[0].constant}
        written = [x for x in binder.arrays if x[2] in ptrs and not x[0].constant]
        seen: dict[int, int] = {}
        for x in written:
            seen[x[2]] = seen.get(x[2], 0) + 1
        names = tuple(x[0].name for x in written)
        shared = tuple(x[0].name for x in written if seen[x[2]] > 1)
        compiled, used = _compiled(fn, geom, cfg.checks, names, shared)
    except Unsupported as e:
        return runner.refused(fn, mode, e)
    # one snapshot for the runtime's rollback and this engine's re-run: the runtime's copies
    # (a NumPy argument's working copy is restored from the caller's array, no copy at all)
    own: list[tuple[np.ndarray, np.ndarray]] = []
    if snapshot is not None:
        snapshot.save()
        own = [(x[1], x[1].copy()) for x in written if not snapshot.covers(x[1])]
    else:
        own = [(x[1], x[1].copy()) for x in written]
    at = {x[0].name: (x[2], x[3]) for x in written}
    shadowed = [at[n] for n in used]
    try:
        status = _execute(compiled, fn, gs, ls, off, bound, cfg, shadowed)
    except BaseException:  # Ctrl-C: the caller's rollback restores the snapshot
        if snapshot is None:
            _restore(own)
        raise
    if status:
        if snapshot is not None:
            snapshot.restore()
        _restore(own)
        runner._record(
            fn, f"a detector of the {fired(status)} checker fired: the NumPy engine decided"
        )
        return False
    runner._record(fn, None)
    return True


def _restore(saved: list[tuple[np.ndarray, np.ndarray]]) -> None:
    for a, copy in saved:
        np.copyto(a, copy)


def _execute(
    c: runner._Compiled,
    fn: Function,
    gs: tuple[int, ...],
    ls: tuple[int, ...],
    off: tuple[int, ...],
    bound: list[Any],
    cfg: SimConfig,
    shadowed: list[tuple[int, int]],
) -> int:
    """Run the launch; the OR of the chunks' statuses. Each chunk of groups (one per thread)
    has its own race shadows of the global buffers ``shadowed`` (address, elements; one per
    array), checked
    against each other's at the end (``clpy_ck_cross``)."""
    n = len(bound)
    vals = [b[1] if b[0] != "local" else None for b in bound]
    g3 = (*gs, 1, 1)[:3]
    l3 = (*ls, 1, 1)[:3]
    o3 = (*off, 0, 0)[:3]
    ng = [g3[0] // l3[0], g3[1] // l3[1], g3[2] // l3[2]]
    geo = (ctypes.c_int64 * (9 + n))(*g3, *ng, *o3, *[b[2] for b in bound])
    total = ng[0] * ng[1] * ng[2]
    threads = 1 if c.ordered else cfg.thread_count()
    chunks = 1
    est = c.expected(total)  # the launch's time on one thread, from the launches before
    if threads > 1 and total > 1 and (est is None or est > 5e-4):
        chunks = min(total, threads)
        # each chunk's shadows take 16 bytes per element: no more than SHADOW_BYTES in all
        # beyond the first chunk's (memory stays bounded on many cores)
        count = sum(dict(shadowed).values())
        if count and 16 * count * (chunks - 1) > SHADOW_BYTES:
            chunks = max(1, min(chunks, 1 + SHADOW_BYTES // (16 * count)))
        # and a chunk's shadows cost their zeroed pages and the comparison at the end, ~6 ns
        # per element (bitonic's 136 launches of 64k elements: 93 ms on 2 threads, 52 on one)
        if (
            count
            and est is not None
            and est * (1 - 1 / chunks) < 5e-4 + SHADOW_NS * 1e-9 * count * chunks
        ):
            chunks = 1
        if chunks > 1:  # one thread may win (runner._Compiled.weigh)
            chunks = min(chunks, c.weigh(total, chunks, est))
    arrays: dict[int, list[np.ndarray]] = {}  # per array: its shadow in each chunk
    order: list[int] = []
    for key, count in shadowed:
        if key not in arrays:
            arrays[key] = [np.zeros(2 * count, np.int64) for _ in range(chunks)]
        order.append(key)

    def ptrs_of(chunk: int) -> Any:
        own = [arrays[k][chunk].ctypes.data for k in order]
        return (ctypes.c_void_p * max(n + len(own), 1))(*vals, *own)

    jobs = [(ptrs_of(i), total * i // chunks, total * (i + 1) // chunks) for i in range(chunks)]
    t0 = time.perf_counter()
    if est is None or est > LONG_S:
        statuses = run_long(c, jobs, geo, chunks, total)
    else:
        statuses = run_short(c, jobs, geo, chunks)
    spent = time.perf_counter() - t0
    c.measured(spent, chunks, total)
    if threads > 1 and total > 1 and (est is None or est > 5e-4):
        c.weighed(total, chunks, spent)
    status = 0
    for st in statuses:
        status |= st
    if status & CANCELLED:
        raise RuntimeError(f"native engine: kernel {fn.name} was cancelled")
    if chunks > 1 and not status:
        cross = c.lib.clpy_ck_cross
        for shs in arrays.values():
            tab = (ctypes.c_void_p * chunks)(*[s.ctypes.data for s in shs])
            status |= int(cross(tab, chunks, ctypes.c_int64(shs[0].size // 2)))
    return status
