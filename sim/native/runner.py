"""Launching a kernel on the native engine: the engine setting, the compiled kernels (cached per
specialization and launch geometry), argument marshalling through the parameter ABI, and the
work-groups run in chunks on a thread pool (nothing a group does can be seen by another group
of the same launch in a race-free kernel, so any thread count gives the same results).

``run(...)`` returns False when the launch must run on the NumPy engine (and records why:
``why_not``); with ``engine="native"`` it raises ``NativeUnavailable`` instead.
"""

from __future__ import annotations

import ctypes
import functools
import os
import threading
import time
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from clpy.abi import Buffer, LocalBuffer, Param, Value
from clpy.abi.buffers import SimSnapshot
from clpy.ir.nodes import Function
from clpy.types.core import ScalarType, VectorType
from clpy_sim.config import SimConfig
from clpy_sim.native.cgen import Geometry, generate
from clpy_sim.native.chunks import LONG_S, Library, run_long, run_short
from clpy_sim.native.compiler import CompileFailed, build
from clpy_sim.native.ctypes_c import Unsupported


class NativeUnavailable(RuntimeError):
    """``engine="native"`` and the launch cannot run on the native engine (the message says
    why, with the construct's file:line:col where one is to blame)."""


# How the generated C tests for a global atomic made plain when one call runs every group of
# the launch (cgen_builtins.py; tests/test_sim_native_launch_path.py checks it is there).
SOLO_MARK = "if (clpy_solo) "
# A launch expected to take less on one thread is tried on one thread too (_Compiled.weigh).
WEIGH_S = 0.02


class _Compiled(Library):
    __slots__ = ("source", "ordered", "last", "solo", "trial")

    def __init__(self, lib: Any, source: str, ordered: bool) -> None:
        super().__init__(lib)
        self.source = source
        self.ordered = ordered  # groups in order on one thread (atomics whose result is used)
        self.last: tuple[Any, ...] | None = None  # (_execute's arrays of the last launch)
        self.solo = SOLO_MARK in source  # global atomics, plain on a solo call
        # (groups, threads) -> seconds per group, measured on launches of that size
        self.trial: dict[tuple[int, int], float] = {}

    def weigh(self, total: int, threads: int, est: float | None) -> int:
        """Threads for a launch of ``total`` groups that may run on ``threads``: a launch
        expected to take under ``WEIGH_S`` on one thread (so trying one thread costs little),
        or any launch of a kernel with a solo path (one call on one thread makes its global
        atomics plain), runs once on ``threads``, once on one, and then on whichever was faster
        per group at that size. On the 16-core H100 host sim_bench's histogram took 4.7 ms on
        one thread, 19.6 on two, 15.1 on sixteen at 2^22, and bitonic's 136 launches of 0.4 ms
        ran 85 ms on the pool against 52 ms (with every checker) on one thread."""
        if not (self.solo or (est is not None and est < WEIGH_S)):
            return threads
        t = self.trial
        if (total, threads) not in t:
            return threads
        if (total, 1) not in t:
            return 1
        return 1 if t[total, 1] <= t[total, threads] else threads

    def weighed(self, total: int, threads: int, seconds: float) -> None:
        self.trial[total, threads] = seconds / total


_LOCK = threading.Lock()
# per kernel specialization: its compiled kernels by geometry, or why it cannot run natively
_CACHE: weakref.WeakKeyDictionary[Function, dict[Geometry, _Compiled | str]] = (
    weakref.WeakKeyDictionary()
)
_WHY: weakref.WeakKeyDictionary[Function, str | None] = weakref.WeakKeyDictionary()
_WHY_NAME: dict[str, str | None] = {}


def why_not(kernel: Any) -> str | None:
    """Why the last launch of ``kernel`` (a ``clpy.kernel``, a specialization, a typed
    ``Function`` or a kernel name) ran on the NumPy engine; None when it ran natively.

    >>> clpy.sim.why_not(my_kernel)      # doctest: +SKIP
    'print (kernel.py:12:5)'
    """
    fn = kernel if isinstance(kernel, Function) else getattr(kernel, "function", None)
    if isinstance(fn, Function):
        if fn in _WHY:
            return _WHY[fn]
        kernel = fn.name
    name = kernel if isinstance(kernel, str) else getattr(kernel, "__name__", None)
    if name is None:
        name = getattr(kernel, "name", None)
    if name is None or name not in _WHY_NAME:
        return "not launched on the simulator yet"
    return _WHY_NAME[name]


def _record(fn: Function, why: str | None) -> None:
    if why is not None or _WHY.get(fn, "") is not None:  # (a weak reference less per launch)
        _WHY[fn] = why
    _WHY_NAME[fn.name] = why


def strict() -> bool:
    return os.environ.get("CLPY_SIM_NATIVE_STRICT", "").strip() not in ("", "0")


# per Buffer parameter (by id, checked): its element dtype and the lanes of one element
_BUFFERS: dict[int, tuple[Any, np.dtype[Any], int]] = {}
# per array (by id; checked by a weak reference and its size): its data address (1.4 us for
# array.ctypes.data). An ndarray's data moves only in resize() to another size
_ADDRESSES: dict[int, tuple[weakref.ref[np.ndarray], int, int]] = {}
# NumPy scalar type codes -> ctypes types of the same bits
_SCALARS: dict[str, Any] = {
    "?": ctypes.c_bool,
    "b": ctypes.c_int8,
    "B": ctypes.c_uint8,
    "h": ctypes.c_int16,
    "H": ctypes.c_uint16,
    "i": ctypes.c_int32,
    "I": ctypes.c_uint32,
    "l": ctypes.c_int64,
    "L": ctypes.c_uint64,
    "q": ctypes.c_longlong,
    "Q": ctypes.c_ulonglong,
    "f": ctypes.c_float,
    "d": ctypes.c_double,
}


class _Binder:
    """The native engine's side of the parameter ABI (``clpy.abi.SimBinder``)."""

    def __init__(self) -> None:
        self.local_counts: list[tuple[str, int]] = []
        self.spans: list[tuple[int, int]] = []
        self.keep: list[Any] = []  # the values' storage, alive until the launch ends
        # each global buffer: (parameter, array, its address, its elements)
        self.arrays: list[tuple[Buffer, np.ndarray, int, int]] = []

    def global_buffer(self, param: Buffer, array: np.ndarray) -> Any:
        dt, lanes = _layout(param)
        return self.array(param, array, dt, lanes)

    def array(self, param: Buffer, array: np.ndarray, dt: np.dtype[Any], lanes: int) -> Any:
        flags = array.flags
        if array.dtype != dt or not flags.c_contiguous:
            raise Unsupported(f"argument {param.name!r}: not a C-contiguous array of {dt}")
        if not flags.writeable and param.written:
            raise Unsupported(f"argument {param.name!r} is read-only")
        nbytes = array.nbytes
        known = _ADDRESSES.get(id(array))
        if known is not None and known[0]() is array and known[1] == nbytes:
            ptr = known[2]
        else:
            ptr = array.ctypes.data
            if len(_ADDRESSES) > 1024:
                _ADDRESSES.clear()
            _ADDRESSES[id(array)] = (weakref.ref(array), nbytes, ptr)
        count = array.size // lanes
        self.spans.append((ptr, ptr + nbytes))
        self.arrays.append((param, array, ptr, count))
        return ("buffer", ptr, count)

    def local_buffer(self, param: LocalBuffer, count: int) -> Any:
        self.local_counts.append((param.name, count))
        return ("local", None, count)

    def value(self, param: Param, value: Any) -> Any:
        t = param.type
        if isinstance(t, ScalarType):
            x = t.dtype.type(value)  # (the NumPy engine's conversion)
            ct = _SCALARS.get(x.dtype.char)
            if ct is not None:
                c = ct(x.item())
                self.keep.append(c)
                return ("value", ctypes.addressof(c), 0)
            v = np.asarray(x)
        elif isinstance(t, VectorType):
            v = np.zeros(4 if t.n == 3 else t.n, dtype=t.elem.dtype)
            a = np.asarray(value, dtype=t.elem.dtype).reshape(-1)[: t.n]
            v[: a.size] = a
        else:
            raise Unsupported(f"a parameter of type {t}")
        self.keep.append(v)
        return ("value", v.ctypes.data, 0)

    def pipe(self, param: Param, pipe: Any) -> Any:
        raise Unsupported("pipes")

    def image(self, param: Param, image: Any) -> Any:
        raise Unsupported("images")

    def sampler(self, param: Param, spec: Any) -> Any:
        raise Unsupported("samplers")


def _layout(param: Buffer) -> tuple[np.dtype[Any], int]:
    """A buffer parameter's element dtype and the lanes of one element."""
    known = _BUFFERS.get(id(param))
    if known is not None and known[0] is param:
        return known[1], known[2]
    elem = param.elem
    if isinstance(elem, VectorType):
        dt, lanes = elem.elem.dtype, (4 if elem.n == 3 else elem.n)
    elif isinstance(elem, ScalarType):
        dt, lanes = elem.dtype, 1
    else:
        raise Unsupported(f"a buffer of {elem}")
    if len(_BUFFERS) > 4096:
        _BUFFERS.clear()
    _BUFFERS[id(param)] = (param, dt, lanes)
    return dt, lanes


_GENERIC, _BUF, _VAL = 0, 1, 2
# per parameter list (by id, checked): how each parameter binds (a buffer: its dtype and
# lanes; a scalar value: its NumPy and ctypes types; else the ABI's bind_sim)
_SLOTS: dict[int, tuple[Sequence[Param], list[tuple[Any, ...]]]] = {}


def _slots(params: Sequence[Param]) -> list[tuple[Any, ...]]:
    known = _SLOTS.get(id(params))
    if known is not None and known[0] is params:
        return known[1]
    out: list[tuple[Any, ...]] = []
    for p in params:
        slot: tuple[Any, ...] = (_GENERIC,)
        if type(p) is Buffer:
            try:
                slot = (_BUF, *_layout(p))
            except Unsupported:
                pass
        elif type(p) is Value and isinstance(p.type, ScalarType):
            make = p.type.dtype.type
            ct = _SCALARS.get(np.dtype(make).char)
            if ct is not None:
                slot = (_VAL, make, ct)
        out.append(slot)
    if len(_SLOTS) > 4096:
        _SLOTS.clear()
    _SLOTS[id(params)] = (params, out)
    return out


def _overlap(spans: list[tuple[int, int]]) -> bool:
    """Whether two of the buffers' byte ranges overlap (one array passed twice does not)."""
    if len(spans) < 2:
        return False
    last_end = -1
    prev = None
    for lo, hi in sorted(spans):
        if (lo, hi) == prev or lo == hi:
            continue  # one array passed twice: the same pointer
        if lo < last_end:
            return True
        prev = (lo, hi)
        last_end = max(last_end, hi)
    return False


def _blocked(cfg: SimConfig) -> str | None:
    if cfg.atomic_order != "work-item":
        return f"atomic_order={cfg.atomic_order!r}"
    if cfg.checks:  # (sim.launch runs these with sim/native/checked_run.py)
        on = ", ".join(sorted(cfg.checks))
        return f"checkers on ({on}): run with sim/native/checked_run.py"
    return None


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
    """Launch ``fn`` natively; False: run it on the NumPy engine (why: ``why_not``).
    ``mode``: ``cfg.engine_name()``; ``snapshot``: saved first when the launch is long
    (sim/native/chunks.py), so Ctrl-C can stop it."""
    if mode is None:
        mode = cfg.engine_name()
    if mode == "numpy":
        return False
    try:
        why = _blocked(cfg)
        if why is not None:
            raise Unsupported(why)
        binder = _Binder()  # keeps the arguments' storage alive until the launch ends
        bound, geom = bind(binder, gs, ls, args, params)
        compiled = _compiled(fn, geom)
    except Unsupported as e:
        return refused(fn, mode, e)
    _execute(compiled, fn, gs, ls, off, bound, cfg, snapshot)
    _record(fn, None)
    return True


def bind(
    binder: _Binder,
    gs: tuple[int, ...],
    ls: tuple[int, ...],
    args: Sequence[Any],
    params: Sequence[Param],
) -> tuple[list[Any], Geometry]:
    """The arguments bound through ``binder`` and the source's geometry; raises
    ``Unsupported`` for a launch the native engine cannot run (checked or not)."""
    for g, n in zip(gs, ls):
        if g % n:
            raise Unsupported("a global size that is not a multiple of the local size")
    bound: list[Any] = []
    keep = binder.keep
    for slot, p, a in zip(_slots(params), params, args):
        kind = slot[0]
        if kind == _BUF and type(a) is np.ndarray:
            bound.append(binder.array(p, a, slot[1], slot[2]))  # type: ignore[arg-type]
        elif kind == _VAL:
            c = slot[2](slot[1](a).item())  # (the NumPy engine's conversion)
            keep.append(c)
            bound.append(("value", ctypes.addressof(c), 0))
        else:
            bound.append(p.bind_sim(binder, a))
    if len(binder.spans) > 1 and _overlap(binder.spans):
        raise Unsupported("overlapping buffer arguments")
    key = (len(gs), ls, tuple(binder.local_counts))
    geom = _GEOMS.get(key)
    if geom is None:
        lsz = (*ls, 1, 1)[:3]
        geom = Geometry(len(gs), (lsz[0], lsz[1], lsz[2]), key[2])
        if len(_GEOMS) > 4096:
            _GEOMS.clear()
        _GEOMS[key] = geom
    return bound, geom


_GEOMS: dict[tuple[Any, ...], Geometry] = {}


def refused(fn: Function, mode: str, e: Unsupported) -> bool:
    """Record why ``fn`` runs on the NumPy engine (False), or raise ``NativeUnavailable``
    under ``engine="native"``."""
    _record(fn, e.args[0])
    if mode == "native":
        raise NativeUnavailable(
            f"kernel {fn.name} cannot run on the native engine: {e.args[0]}"
        ) from None
    return False


def _compiled(fn: Function, geom: Geometry) -> _Compiled:
    per = _CACHE.get(fn)
    if per is not None:
        got = per.get(geom)
        if type(got) is _Compiled:
            return got
    with _LOCK:
        per = _CACHE.setdefault(fn, {})
        got = per.get(geom)
    if isinstance(got, str):
        raise Unsupported(got)
    if got is not None:
        return got
    try:
        src, ordered = generate(fn, geom)
        lib = build(src)
        out: _Compiled | str = _Compiled(lib, src, ordered)
    except Unsupported as e:
        out = e.args[0]
    except CompileFailed as e:
        if strict():
            raise
        out = f"the C compiler failed on the generated source: {str(e)[:300]}"
    except Exception as e:  # a code generator bug: the NumPy engine runs the kernel
        if strict():
            raise
        out = f"internal error of the native engine's code generator: {type(e).__name__}: {e}"
    with _LOCK:
        per[geom] = out
    if isinstance(out, str):
        raise Unsupported(out)
    return out


def source(fn: Function, geom: Geometry) -> str:
    """The generated C source of ``fn`` for ``geom`` (for reading and debugging)."""
    return generate(fn, geom)[0]


def _execute(
    c: _Compiled,
    fn: Function,
    gs: tuple[int, ...],
    ls: tuple[int, ...],
    off: tuple[int, ...],
    bound: list[Any],
    cfg: SimConfig,
    snapshot: SimSnapshot | None,
) -> None:
    vals = tuple([b[1] for b in bound])
    key = (gs, ls, off, tuple([b[2] for b in bound]))
    last = c.last  # the ctypes arrays of the launch before, when they fit this one
    if last is not None and last[0] == vals:
        ptrs = last[1]
    else:
        ptrs = _arg_types(len(bound))[0](*vals)
    if last is not None and last[2] == key:
        geo, total = last[3], last[4]
    else:
        g3 = (*gs, 1, 1)[:3]
        l3 = (*ls, 1, 1)[:3]
        o3 = (*off, 0, 0)[:3]
        ng = [g3[0] // l3[0], g3[1] // l3[1], g3[2] // l3[2]]
        geo = _arg_types(len(bound))[1](*g3, *ng, *o3, *key[3])
        total = ng[0] * ng[1] * ng[2]
    c.last = (vals, ptrs, key, geo, total)  # (read-only to the C code: threads may share)
    est = c.expected(total)
    # threads only where the launch is long enough to pay for the hand-overs (~30 us each):
    # the time per group measured on the launches before
    many = total > 1 and not c.ordered and (est is None or est > 5e-4)
    threads = cfg.thread_count() if many else 1
    weighing = threads > 1
    if weighing:
        threads = c.weigh(total, threads, est)
        one = c.trial.get((total, 1))
        if threads == 1 and one is not None:
            # measured on one thread: the pool's time per group times its threads (``est``)
            # overstates a launch whose threads contended (atomics), which would make it
            # "long" and cut it into pieces that lose the solo path
            est = one * total
    chunks = min(total, threads)
    jobs = [(ptrs, total * i // chunks, total * (i + 1) // chunks) for i in range(chunks)]
    t0 = time.perf_counter()
    if est is None or est > LONG_S:
        if snapshot is not None:
            snapshot.save()  # Ctrl-C may stop it: restorable first
        statuses = run_long(c, jobs, geo, threads, total)
    else:
        statuses = run_short(c, jobs, geo, threads)
    spent = time.perf_counter() - t0
    c.measured(spent, chunks, total)
    if weighing:
        c.weighed(total, threads, spent)
    for st in statuses:
        _status(st, fn)


def _status(st: int, fn: Function) -> None:
    if st != 0:
        raise RuntimeError(f"native engine: kernel {fn.name} returned status {st}")


@functools.lru_cache(maxsize=64)
def _arg_types(n: int) -> tuple[Any, Any]:
    """The ctypes array types of a kernel's argument pointers and geometry (``n`` params)."""
    return ctypes.c_void_p * max(n, 1), ctypes.c_int64 * (9 + n)
