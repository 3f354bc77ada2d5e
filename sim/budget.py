"""How much memory a simulator launch will need, checked before it allocates anything.

``sim.launch`` runs work-groups in batches of about ``max_lanes`` work-items, several batches at
once on a thread pool. What a batch holds grows with its lanes (every variable is an array
with one lane per work-item, private arrays one row per lane), with its work-groups (local
memory, and the race and uninitialized-read checkers' shadows of it) and, once per launch,
with the global buffers (the race checker keeps two 64-bit stamps per element). The estimate
here is deliberately simple and errs high; a launch over ``clpy.sim.config(max_memory=...)``
(default: half the memory the system reports available) raises ``SimulationTooLarge`` naming
the biggest part and how to make the launch smaller, instead of failing deep inside NumPy
(or making the machine swap).
"""

from __future__ import annotations

import functools
import math
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from clpy.ir.nodes import Function
from clpy.ir.walk import all_vars
from clpy.types.core import AddressSpace, ArrayType

_LANE_VALUES = 8  # temporaries, masks and copies per lane beyond the named variables
_GLOBAL_SHADOW = 16  # bytes per element: race checker's last-write and last-read stamps
_LOCAL_SHADOW = 9  # bytes per element: two int32 owners and an initialized flag


class SimulationTooLarge(MemoryError):
    """A simulator launch would need more memory than ``clpy.sim.config(max_memory=...)``."""


def available_memory() -> int | None:
    """Bytes the system reports available (``MemAvailable``), or None when unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


_AVAILABLE: list[Any] = [None, -1.0]  # (bytes, when read): /proc/meminfo at most once a second


def default_max_memory() -> int | None:
    now = time.monotonic()
    if now - _AVAILABLE[1] > 1.0:
        _AVAILABLE[:] = [available_memory(), now]
    avail = _AVAILABLE[0]
    return None if avail is None else avail // 2


def _gib(n: float) -> str:
    return f"{n / 2**30:.3g} GiB" if n >= 2**30 else f"{n / 2**20:.3g} MiB"


def estimate(
    fn: Function,
    gs: tuple[int, ...],
    ls: tuple[int, ...],
    params: Sequence[Any],
    args: Sequence[Any],
    max_lanes: int,
    threads: int,
    checks: frozenset[str],
) -> list[tuple[str, int]]:
    """The launch's memory needs in bytes, by part (largest first)."""
    parts = [
        (label(), n)
        for label, n in _parts(fn, gs, ls, params, args, max_lanes, lambda: threads, checks)
    ]
    parts.sort(key=lambda x: -x[1])
    return parts


def _parts(
    fn: Function,
    gs: tuple[int, ...],
    ls: tuple[int, ...],
    params: Sequence[Any],
    args: Sequence[Any],
    max_lanes: int,
    threads: Callable[[], int],
    checks: frozenset[str],
) -> list[tuple[Callable[[], str], int]]:
    """``estimate``'s parts with their names still to format (a launch within the budget,
    the usual case, never needs them) and ``threads`` asked only when there are batches to
    share: this runs on every launch."""
    W = math.prod(ls)
    groups = math.prod([-(-g // loc) for g, loc in zip(gs, ls)])
    per_batch = min(max(1, max_lanes // W), max(groups, 1))
    lanes = per_batch * W
    batches = -(-groups // per_batch) if groups else 0
    at_once = max(1, min(threads(), batches)) if batches > 1 else 1
    shadow = bool(checks & {"races", "uninit"})
    nvars, private, local_bytes, local_elems = _variables(fn)
    local = local_bytes + (local_elems * _LOCAL_SHADOW if shadow else 0)
    parts: list[tuple[Callable[[], str], int]] = [
        (
            lambda: f"variables of {lanes} work-items per batch",
            at_once * lanes * 8 * (nvars + _LANE_VALUES),
        )
    ]
    if private:
        parts.append((lambda: "private arrays", at_once * lanes * private))
    if local:
        parts.append((lambda: "local arrays", at_once * per_batch * local))
    races = "races" in checks
    for p, a in zip(params, args):
        kind = getattr(p, "kind", "")
        if kind == "local":
            count = int(getattr(a, "count", a) if not isinstance(a, int) else a)
            elem = p.elem.size
            size = count * (elem + (_LOCAL_SHADOW if shadow else 0))
            parts.append(
                (
                    functools.partial(
                        "local memory {!r} ({} elements per work-group)".format, p.name, count
                    ),
                    at_once * per_batch * size,
                )
            )
        elif races and kind == "buffer" and isinstance(a, np.ndarray):
            parts.append(
                (
                    functools.partial("race-checker shadow of {!r}".format, p.name),
                    (a.size // max(1, _lanes_of(a, p))) * _GLOBAL_SHADOW,
                )
            )
    return parts


# id(function) -> (the function, its variable summary): the IR walk once per compiled kernel,
# not once per launch.
_VARIABLES: dict[int, tuple[Function, tuple[int, int, int, int]]] = {}


def _variables(fn: Function) -> tuple[int, int, int, int]:
    """(variables, private-array bytes, local-array bytes, local-array elements) of ``fn``
    and the device functions it calls."""
    hit = _VARIABLES.get(id(fn))
    if hit is not None and hit[0] is fn:
        return hit[1]
    nvars = private = local_bytes = local_elems = 0
    for f in (fn, *fn.callees):
        for v in all_vars(f):
            nvars += 1
            t = v.type
            if isinstance(t, ArrayType):
                count = int(np.prod(t.shape, dtype=object))
                if t.space is AddressSpace.LOCAL:
                    local_bytes += count * t.elem.size
                    local_elems += count
                else:
                    private += count * t.elem.size
    out = (nvars, private, local_bytes, local_elems)
    _VARIABLES[id(fn)] = (fn, out)
    return out


def _lanes_of(a: np.ndarray, p: Any) -> int:
    """Array elements per kernel element (vector lanes)."""
    n = getattr(getattr(p, "elem", None), "n", None)
    return 4 if n == 3 else (n or 1)


def check(
    fn: Function,
    gs: tuple[int, ...],
    ls: tuple[int, ...],
    params: Sequence[Any],
    args: Sequence[Any],
    cfg: Any,
) -> None:
    """Raise ``SimulationTooLarge`` when the launch would need more than the budget."""
    limit = cfg.max_memory if cfg.max_memory is not None else default_max_memory()
    if limit is None:
        return
    checks = frozenset(cfg.checks)
    need = sum(
        n for _, n in _parts(fn, gs, ls, params, args, cfg.max_lanes, cfg.thread_count, checks)
    )
    if need <= limit:
        return
    parts = estimate(fn, gs, ls, params, args, cfg.max_lanes, cfg.thread_count(), checks)
    where = (
        "clpy.sim.config(max_memory=...)"
        if cfg.max_memory is not None
        else ("the default budget (half the available memory; clpy.sim.config(max_memory=...))")
    )
    biggest, big = parts[0]
    raise SimulationTooLarge(
        f"sim.launch: simulating {fn.name} (global size {gs}, local size {ls}) needs about "
        f"{_gib(need)}, more than {_gib(limit)} allowed by {where}; most of it: {biggest} "
        f"({_gib(big)}). Make the launch smaller: fewer work-items per work-group or less "
        f"local memory, clpy.sim.config(max_lanes=...) / threads=... for smaller or fewer "
        f"concurrent batches, or split the NDRange into several launches with offset=...; "
        f"nothing was allocated or run"
    )
