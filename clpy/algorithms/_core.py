# mypy: disable-error-code="valid-type"
"""What every algorithm shares: the operator (``"+"`` ... or a ``@clpy.reduction``) as a
combiner and an identity, the element type of an input array, the place kernels run and the
arrays they use there, and the per-device tuning.

Inputs (issue 13): a NumPy array is copied to the device once and results come back as NumPy;
a ``clpy.DeviceArray`` or a ``pyopencl.array.Array`` stays where it is, and array results are
of the same kind, on the same device (a pyopencl array's own queue is used for the launches).
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass
from typing import Any, no_type_check

import numpy as np

import clpy
from clpy.abi.device_array import DeviceArray
from clpy.builtins.reductions import Reduction
from clpy.ir.operators import REDUCTIONS
from clpy.runtime.api import on_clear_caches
from clpy.runtime.devices import RUNTIME, Device
from clpy.types.catalog import scalar_for_dtype
from clpy.types.core import ScalarType, Type, VectorType
from clpy.types.structs import StructType
from clpy.vectors import vector

VECTOR_LANES = (2, 4, 8, 16)  # an (n, k) array is n vectors of k lanes (3-vectors: annotate)


# --- combiners for the operator strings (inlined by the device compiler) ---------------------
@functools.cache
@no_type_check  # device functions: clpy infers their types per call
def _combiners() -> dict[str, Any]:
    @clpy.func
    def _add(a, b):
        return a + b

    @clpy.func
    def _mul(a, b):
        return a * b

    @clpy.func
    def _and(a, b):
        return a & b

    @clpy.func
    def _or(a, b):
        return a | b

    @clpy.func
    def _xor(a, b):
        return a ^ b

    @clpy.func
    def _land(a, b):
        return 1 if a != 0 and b != 0 else 0

    @clpy.func
    def _lor(a, b):
        return 1 if a != 0 or b != 0 else 0

    @clpy.func
    def _min(a, b):
        return min(a, b)

    @clpy.func
    def _max(a, b):
        return max(a, b)

    return {
        "add": _add,
        "mul": _mul,
        "and": _and,
        "or": _or,
        "xor": _xor,
        "logical_and": _land,
        "logical_or": _lor,
        "min": _min,
        "max": _max,
    }


@dataclass(frozen=True, eq=False)
class Op:
    """An operator resolved for one element type: ``op`` is what the collectives take,
    ``combine`` a device function ``(T, T) -> T``, ``identity`` a host value of ``T``."""

    op: Any  # "+" ... or the Reduction
    combine: Any
    identity: Any
    key: Any  # hashable, for kernel caches
    vectorizable: bool  # the combiner also works lane-wise on vectors of T (scalar T)

    def host_identity(self, t: Type) -> Any:
        """The identity as a NumPy value of ``t`` (scalar, lanes array or record)."""
        return host_value(self.identity, t)


def host_value(v: Any, t: Type) -> Any:
    if isinstance(t, StructType):
        if isinstance(v, np.void) and v.dtype == t.dtype:
            return v
        rec = np.zeros((), t.dtype)
        vals = [v[n] for n, _ in t.fields] if isinstance(v, (np.void, dict)) else list(v)
        for (name, _), val in zip(t.fields, vals):
            rec[name] = val
        return rec[()]
    if isinstance(t, VectorType):
        lanes = 4 if t.n == 3 else t.n
        return np.broadcast_to(np.asarray(v, t.elem.dtype).ravel(), (lanes,)).copy()
    assert isinstance(t, ScalarType)
    return np.asarray(v).astype(t.dtype)[()]


def resolve_op(op: Any, t: Type, where: str = "op") -> Op:
    """The operator ``op`` on elements of type ``t``; a clear error for a wrong one. One
    ``Op`` object per (operator, type), so kernel caches keyed by it hit."""
    if not isinstance(op, (str, Reduction)):
        raise ValueError(
            f"{where}: expected one of {' '.join(repr(o) for o in REDUCTIONS)} or a "
            f"@clpy.reduction, got {op!r}"
        )
    return _resolve_op(op, t, where)


@functools.cache
def _resolve_op(op: Any, t: Type, where: str) -> Op:
    if isinstance(op, Reduction):
        return Op(op, op.func, op.identity, ("user", id(op)), False)
    if not isinstance(op, str) or op not in REDUCTIONS:
        raise ValueError(
            f"{where}: expected one of {' '.join(repr(o) for o in REDUCTIONS)} or a "
            f"@clpy.reduction, got {op!r}"
        )
    red = REDUCTIONS[op]
    if isinstance(t, StructType):
        raise TypeError(
            f"{where}: operator {op!r} does not combine structs ({t.name}); use a @clpy.reduction"
        )
    elem = t.elem if isinstance(t, VectorType) else t
    assert isinstance(elem, ScalarType)
    if red.op.int_only and not elem.is_int:
        raise TypeError(f"{where}: operator {op!r} needs integers, not {t}")
    if red.op.logical and isinstance(t, VectorType):
        raise TypeError(f"{where}: operators '&&' and '||' combine scalars, not {t}")
    ident = red.identity(elem)
    return Op(op, _combiners()[red.name], ident, red.name, not red.op.logical)


def element_type(dtype: np.dtype[Any], shape: tuple[int, ...], op: Any, where: str = "x") -> Type:
    """The clpy element type of an array: a scalar for 1-d arrays, ``vector(elem, k)`` for
    ``(n, k)`` arrays (k = 2, 4, 8, 16), a struct when the ``@clpy.reduction`` says so."""
    if isinstance(op, str) and dtype.fields is None:  # cached: a few µs of every call
        try:
            return _element_type_of(dtype, shape[1:], len(shape), where)
        except (TypeError, ValueError):
            pass  # the error again, naming the real shape
    return _element_type(dtype, shape, op, where)


@functools.lru_cache(maxsize=256)
def _element_type_of(dtype: np.dtype[Any], tail: tuple[int, ...], ndim: int, where: str) -> Type:
    return _element_type(dtype, (0, *tail) if ndim else (), "+", where)


def _element_type(dtype: np.dtype[Any], shape: tuple[int, ...], op: Any, where: str) -> Type:
    if isinstance(op, Reduction):
        anns = op.func.annotations()
        names = op.func.param_names
        t = anns.get(names[0]) if names else None
        if t is not None:
            _check_layout(t, dtype, shape, where)
            return t
    if dtype.fields is not None:
        raise TypeError(
            f"{where}: an array of structs ({dtype}) needs a @clpy.reduction whose parameters "
            "are annotated with the @clpy.struct"
        )
    st = scalar_for_dtype(dtype)
    if st is None or st.is_bool:
        raise TypeError(f"{where}: arrays of dtype {dtype} are not supported")
    if len(shape) == 1:
        return st
    if len(shape) == 2 and shape[1] in VECTOR_LANES:
        return vector(st, shape[1])
    raise ValueError(
        f"{where}: expected a 1-d array, or (n, k) for n vectors of k = 2, 4, 8 or 16 lanes; "
        f"got shape {shape}"
    )


def _check_layout(t: Type, dtype: np.dtype[Any], shape: tuple[int, ...], where: str) -> None:
    if isinstance(t, VectorType):
        lanes = 4 if t.n == 3 else t.n
        ok = dtype == t.elem.dtype and len(shape) == 2 and shape[1] == lanes
        want = f"shape (n, {lanes}) of {t.elem.dtype}"
    else:
        want_dt = getattr(t, "dtype", None)
        ok = dtype == want_dt and len(shape) == 1
        want = f"a 1-d array of {want_dt}"
    if not ok:
        raise TypeError(
            f"{where}: the reduction combines {t}: expected {want}, got {dtype} {shape}"
        )


# --- what the algorithms keep per queue --------------------------------------------------------
MAX_QUEUES = 8  # queues whose caches are kept (the oldest is dropped for a new one)
MAX_ITEMS = 512  # entries per queue (many lengths: the older half is dropped)


class QueueCache:
    """What the algorithms keep for one (device, queue) between calls: scratch arrays, ticket
    counters, prepared launches, the scan's look-back state, device variants (``get``).

    Everything in it belongs to the queue's context, and holds it: device arrays hold their
    queue, launches their kernels. The cache holds the queue itself too, which it must: a
    queue's handle is part of the key and pyopencl queues cannot be weakly referenced, so only
    holding the queue keeps its handle from being reused by another queue while the entry
    lives. To keep that from holding contexts the caller has dropped, at most ``MAX_QUEUES``
    queues are cached (the oldest goes, with everything it holds, when another comes: a
    queue used again later only prepares again, its kernels stay built), and
    ``clear_queue_caches()`` drops them all. (Kernels' launch plans, clpy/runtime/launch.py,
    hold their queues too, until ``clpy.clear_caches()``.)"""

    def __init__(self, dev: Device, queue: Any) -> None:
        self.dev = dev  # held: id(dev) is part of the key
        self.queue = queue
        self.lock = threading.RLock()  # make() may fill other entries (scratch arrays)
        self.items: dict[Any, Any] = {}

    def get(self, key: Any, make: Any) -> Any:
        """The entry ``key``, made by ``make()`` the first time."""
        v = self.items.get(key)
        if v is None:
            with self.lock:
                v = self.items.get(key)
                if v is None:
                    if len(self.items) >= MAX_ITEMS:
                        for k in list(self.items)[: MAX_ITEMS // 2]:
                            del self.items[k]
                    v = self.items[key] = make()
        return v


_QUEUES: dict[Any, QueueCache] = {}  # oldest first
_QUEUES_LOCK = threading.Lock()


def queue_cache(place: Place) -> QueueCache:
    """The ``QueueCache`` of ``place``'s device and queue."""
    q = None if place.dev.is_sim else place.cl_queue
    key = (id(place.dev), None if q is None else int(q.int_ptr))
    c = _QUEUES.get(key)
    if c is not None and c.dev is place.dev and c.queue is q:
        return c
    with _QUEUES_LOCK:
        c = _QUEUES.get(key)
        if c is None or c.dev is not place.dev or c.queue is not q:
            c = _QUEUES[key] = QueueCache(place.dev, q)
            while len(_QUEUES) > MAX_QUEUES:
                del _QUEUES[next(iter(_QUEUES))]
    return c


@on_clear_caches
def clear_queue_caches() -> None:
    """Forget every queue's cache (and the pyopencl queues' places), releasing what they
    hold; later calls prepare again. ``clpy.clear_caches()`` calls it."""
    with _QUEUES_LOCK:
        _QUEUES.clear()
        _QUEUE_PLACES.clear()


# --- where kernels run ------------------------------------------------------------------------
class Place:
    """The device of one call, how to launch there and how to make arrays there."""

    def __init__(self, dev: Device, queue: Any = None) -> None:
        self.dev = dev
        self.queue = queue  # a pyopencl input's own queue (None: clpy's queue)

    @property
    def is_sim(self) -> bool:
        return self.dev.is_sim

    @property
    def launch_on(self) -> Any:
        return self.queue if self.queue is not None else self.dev

    @property
    def cl_queue(self) -> Any:
        return self.queue if self.queue is not None else self.dev.queue

    def empty(self, shape: Any, dtype: Any) -> Any:
        """A device array the kernels take (DeviceArray on the simulator, pyopencl on CL)."""
        if self.is_sim:
            return DeviceArray(self.dev, np.zeros(shape, dtype), None)
        import pyopencl.array as cla

        return cla.empty(self.cl_queue, shape, np.dtype(dtype))

    def scratch(self, name: str, shape: Any, dtype: Any) -> Any:
        """A temporary reused by later calls of this thread on this queue (safe: the queue is
        in order and the caller reads its result before returning)."""
        key = ("scratch", threading.get_ident(), name, tuple(np.atleast_1d(shape)), np.dtype(dtype))
        return queue_cache(self).get(key, lambda: self.empty(shape, dtype))

    def zeros(self, shape: Any, dtype: Any) -> Any:
        if self.is_sim:
            return self.empty(shape, dtype)
        import pyopencl.array as cla

        return cla.zeros(self.cl_queue, shape, np.dtype(dtype))

    def to_host(self, a: Any) -> np.ndarray:
        return a.get()

    def upload(self, host: np.ndarray) -> Any:
        if self.is_sim:
            return DeviceArray(self.dev, np.array(host, order="C", copy=True), None)
        import pyopencl.array as cla

        return cla.to_device(self.cl_queue, np.ascontiguousarray(host))


@dataclass
class Input:
    """An input array on its device: ``data`` is what kernels take; ``kind`` says how to hand
    array results back ("numpy", "device" or "pyopencl")."""

    data: Any
    place: Place
    kind: str
    dtype: np.dtype[Any]
    shape: tuple[int, ...]

    @property
    def count(self) -> int:
        return self.shape[0] if self.shape else 0

    def result(self, a: Any) -> Any:
        """An array made on ``place`` in the form the caller gave its input."""
        if self.kind == "numpy":
            return a.get()
        if self.kind == "device":
            if isinstance(a, DeviceArray):
                return a
            return DeviceArray(self.place.dev, None, a)
        if isinstance(a, DeviceArray):  # pyopencl input on the simulator cannot happen
            return a.get()
        return a


# The Place of a pyopencl queue (id -> (queue, place)): the queue -> device lookup once per
# queue, not once per call (~4 µs). The entry holds the queue, so its id is not reused; at
# most MAX_QUEUES entries (QueueCache says why).
_QUEUE_PLACES: dict[int, tuple[Any, Place]] = {}


def _queue_place(q: Any) -> Place:
    hit = _QUEUE_PLACES.get(id(q))
    if hit is not None and hit[0] is q:
        return hit[1]
    p = Place(RUNTIME.find(q), q)
    with _QUEUES_LOCK:
        if len(_QUEUE_PLACES) >= MAX_QUEUES:
            _QUEUE_PLACES.clear()
        _QUEUE_PLACES[id(q)] = (q, p)
    return p


def as_input(x: Any, device: Any, where: str = "x", place: Place | None = None) -> Input:
    """Accept a NumPy array (or anything ``np.asarray`` takes), a ``clpy.DeviceArray`` or a
    ``pyopencl.array.Array``. ``place``: the device of the call's first array."""
    if isinstance(x, DeviceArray):
        if device is not None and RUNTIME.find(device) is not x.device:
            raise ValueError(f"{where}: the DeviceArray lives on {x.device}, not on {device}")
        p = place or Place(x.device)
        if p.dev is not x.device:
            raise ValueError(f"{where}: the DeviceArray lives on {x.device}, not on {p.dev}")
        data = x if x.device.is_sim else x.cl_array
        return Input(data, p, "device", x.dtype, x.shape)
    if type(x).__module__.startswith("pyopencl"):
        import pyopencl.array as cla

        if not isinstance(x, cla.Array):
            raise TypeError(f"{where}: expected an array, got a {type(x).__name__}")
        if not x.flags.c_contiguous:
            raise ValueError(f"{where}: the pyopencl array is not contiguous")
        p = place or _queue_place(x.queue)
        return Input(x, p, "pyopencl", x.dtype, tuple(x.shape))
    try:
        host = np.ascontiguousarray(x)
    except Exception as e:  # noqa: BLE001 - anything np.asarray rejects
        raise TypeError(f"{where}: expected an array, got {type(x).__name__}: {e}") from None
    if host.ndim == 0:
        raise ValueError(f"{where}: expected an array with at least one dimension, got a 0-d value")
    p = place or Place(RUNTIME.current() if device is None else RUNTIME.find(device))
    return Input(p.upload(host), p, "numpy", host.dtype, host.shape)


# --- tuning per device ------------------------------------------------------------------------
@dataclass(frozen=True)
class Tuning:
    """Launch shapes for one device: work-group size ``wg``, number of groups for grid-stride
    passes ``groups``, items per work-item of a scan tile ``items``, and whether a
    single-pass scan may wait on other work-groups (``lookback``)."""

    wg: int
    groups: int
    items: int
    lookback: bool
    vec: int  # lanes per load in reductions of scalars (1: scalar loads)
    # The single-pass scan of 4-byte scalars (scan_tiles.py): work-group size, 4-vectors per
    # work-item, work-group scan of the work-items' totals ("native" collective or "rake":
    # scan_tiles.py) and status words read per look-back step.
    scan_wg: int = 256
    scan_vecs: int = 4
    scan_wgscan: str = "native"
    scan_lb: int = 4
    scan_read: str = "rmw"  # how the look-back reads status words: "rmw" or "load"
    scan_lookback: str = "serial"  # one work-item looks back, or "window": 32 at once
    scan_maxreg: int = 0  # > 0: -cl-nv-maxrregcount for the tile kernel (NVIDIA only)
    scan_layout: str = "blocked"  # or "striped": coalesced rows (scan_striped.py, 4 vectors)


# The single-pass scan's tile per GPU vendor (platform name substring), measured with
# `python -m benchmarks.algorithms --sweep` (benchmarks/results/algorithms_h100.json).
SCAN_TILES: dict[str, dict[str, Any]] = {
    "nvidia": {
        "scan_wg": 512,
        "scan_vecs": 4,
        "scan_wgscan": "rake",
        "scan_lb": 4,
        "scan_read": "load",  # relaxed atomic loads: 2197 vs 1994 GB/s for "rmw" (H100, 2^28)
        # The session-5 sweep (H100, float32, 2^28, benchmarks/results/algorithms_h100_scan28_s5):
        # striped (coalesced) tile 2526 vs blocked 2167-2264 GB/s; early-window look-back;
        # a 40-register cap 2896 GB/s vs 2525 uncapped (47 registers) and 2300 at 32.
        "scan_lookback": "early",
        "scan_maxreg": 40,
        "scan_layout": "striped",
    },
}


def _scan_tiles(info: Any) -> dict[str, Any]:
    hay = f"{info.platform} {info.platform_vendor}".lower()
    for key, tile in SCAN_TILES.items():
        if key in hay:
            return {**tile, "scan_wg": min(tile["scan_wg"], info.max_work_group_size)}
    return {"scan_wg": min(256, info.max_work_group_size)}


@functools.cache
def _tuning_for(target: Any, info: Any) -> Tuning:
    if info is None:  # the simulator: small groups keep its batches cheap
        return Tuning(wg=64, groups=16, items=4, lookback=False, vec=1)
    wg = min(256, info.max_work_group_size)
    if info.device_type == "gpu":
        # Enough resident groups to fill every compute unit (2048 threads / SM on NVIDIA).
        groups = info.max_compute_units * max(1, 2048 // wg)
        # Look-back waits only on groups that took an earlier ticket, i.e. that already run:
        # safe on GPUs, whose resident work-groups keep being scheduled (module docstring).
        return Tuning(
            wg=wg,
            groups=groups,
            items=15,
            lookback=True,
            vec=4,
            **_scan_tiles(info),
        )
    return Tuning(
        wg=min(wg, 64), groups=max(4, info.max_compute_units * 2), items=8, lookback=False, vec=4
    )


def tuning(dev: Device) -> Tuning:
    """The cached tuning of ``dev`` (from its target and DeviceInfo)."""
    return _tuning_for(dev.target, dev.info)


def launch_sizes(count: int, wg: int) -> int:
    return max(wg, -(-count // wg) * wg)
