"""Simulator settings: ``clpy.sim.config(checks=..., on_error=..., ...)``.

Settings live in a ``ContextVar`` (no mutable module global): ``config(...)`` changes them for
the current context and returns a handle that restores the previous settings when used as a
context manager::

    clpy.sim.config(checks=False)              # from now on, in this context
    with clpy.sim.config(on_error="warn"):     # only inside the block
        k[(n,), (64,)](x, device="sim")
"""

from __future__ import annotations

import contextvars
import functools
import os
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

CHECKS = frozenset({"bounds", "races", "barriers", "uninit", "div_zero", "progress", "assert"})
ENGINES = frozenset({"auto", "numpy", "native"})


@dataclass(frozen=True)
class SimConfig:
    """``checks``: the enabled checkers (a subset of ``CHECKS``). ``on_error``: ``"raise"`` or
    ``"warn"``. ``atomic_order``: ``"work-item"`` or ``"shuffled"`` (used by atomics).
    ``sub_group_size``: lanes per sub-group. ``spin_limit``: iterations without any change of
    state after which a loop is reported as making no progress. ``max_lanes``: work-items
    simulated together (whole work-groups; bounds memory use). ``seed``: for shuffled orders.
    ``threads``: work-group batches run at once on a thread pool (``None``: ``CLPY_SIM_THREADS``
    or every core, and each kernel's multi-batch launches use the pool, or with every checker
    off batches of 4x ``max_lanes``, only where that measured faster: sim/parallel.py
    ``Tuner``); results and reports do not depend on it (docs/simulator.md "Threads").
    ``sample``: the shadow-memory checkers (``races``, ``uninit``) watch every ``sample``-th
    batch of work-groups only (1: all; the other checkers watch every work-item).
    ``max_memory``: bytes a launch may need (``None``: half the available memory); a bigger
    launch fails before allocating, saying how to make it smaller (sim/budget.py).
    ``split_lanes``: with every checker off, a launch with fewer batches than threads and at
    least twice this many work-items is cut into one batch per thread (of at least this many
    work-items each) instead of by ``max_lanes`` (``None``: ``CLPY_SIM_SPLIT_LANES`` or 0,
    never; sim/parallel.py ``split``). ``engine``: ``"auto"`` runs a kernel on the native engine
    (C compiled by the machine's compiler, docs/simulator.md "Native engine"; with checkers on,
    with detectors that hand a launch where the NumPy engine could report something back to
    it) when ``atomic_order`` is ``"work-item"``, a C compiler works and the kernel is in its
    subset, else on the NumPy engine; ``"native"`` raises where ``"auto"`` would fall back;
    ``"numpy"`` never runs natively (``None``: ``CLPY_SIM_ENGINE`` or ``"auto"``)."""

    checks: frozenset[str] = CHECKS
    on_error: str = "raise"
    atomic_order: str = "work-item"
    sub_group_size: int = 32
    spin_limit: int = 64
    max_lanes: int = 1 << 17
    seed: int = 0
    # device-side enqueue: nesting levels of children below a host launch; the kernel
    # queries' answers (get_kernel_work_group_size)
    enqueue_depth: int = 16
    max_work_group_size: int = 1024
    threads: int | None = None
    sample: int = 1
    max_memory: int | None = None
    split_lanes: int | None = None
    engine: str | None = None

    def engine_name(self) -> str:
        """``engine``, else ``CLPY_SIM_ENGINE``, else ``"auto"`` (sim/native/runner.py)."""
        if self.engine is not None:
            return self.engine
        env = os.environ.get("CLPY_SIM_ENGINE", "").strip().lower()
        if not env:
            return "auto"
        if env not in ENGINES:
            raise ValueError(f"CLPY_SIM_ENGINE must be one of {sorted(ENGINES)}, got {env!r}")
        return env

    def on(self, check: str) -> bool:
        return check in self.checks

    def split_lane_count(self) -> int:
        """``split_lanes``, else ``CLPY_SIM_SPLIT_LANES``, else 0 (never split)."""
        if self.split_lanes is not None:
            return self.split_lanes
        return _env_int("CLPY_SIM_SPLIT_LANES", 0, zero=True) or 0

    def thread_count(self) -> int:
        """Threads a launch may use: ``threads``, else ``CLPY_SIM_THREADS``, else every core."""
        if self.threads is not None:
            return self.threads
        return default_threads()


def default_threads() -> int:
    """``CLPY_SIM_THREADS`` (a positive int) or the number of cores this process may use."""
    return _env_int("CLPY_SIM_THREADS", None) or _cores()


def _env_int(name: str, default: int | None, zero: bool = False) -> int | None:
    """A positive int (``zero``: or 0) from the environment variable ``name``, or
    ``default`` when unset."""
    env = os.environ.get(name, "").strip()
    if not env:
        return default
    what = "an int >= 0" if zero else "a positive int"
    try:
        n = int(env)
    except ValueError:
        raise ValueError(f"{name} must be {what}, got {env!r}") from None
    if n < 0 or (n == 0 and not zero):
        raise ValueError(f"{name} must be {what}, got {env!r}")
    return n


@functools.cache
def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1


_CURRENT: contextvars.ContextVar[SimConfig] = contextvars.ContextVar(
    "clpy_sim_config",
    default=SimConfig(),  # noqa: B039 - SimConfig is frozen
)


def current() -> SimConfig:
    """The settings in effect."""
    return _CURRENT.get()


class _ConfigHandle:
    def __init__(self, token: contextvars.Token[SimConfig], cfg: SimConfig) -> None:
        self._token = token
        self.settings = cfg

    def __enter__(self) -> SimConfig:
        return self.settings

    def __exit__(self, *exc: Any) -> None:
        _CURRENT.reset(self._token)

    def __repr__(self) -> str:
        return f"<clpy.sim.config {self.settings}>"


def config(
    checks: bool | str | Iterable[str] | None = None,
    *,
    on_error: str | None = None,
    atomic_order: str | None = None,
    sub_group_size: int | None = None,
    spin_limit: int | None = None,
    max_lanes: int | None = None,
    seed: int | None = None,
    enqueue_depth: int | None = None,
    max_work_group_size: int | None = None,
    threads: int | None = None,
    sample: int | None = None,
    max_memory: int | None = None,
    split_lanes: int | None = None,
    engine: str | None = None,
) -> _ConfigHandle:
    """Change simulator settings (see ``SimConfig``); ``checks=True``/``False`` turns every
    checker on/off, or name them: ``checks={"bounds", "races"}``. ``threads=1`` runs every
    launch on the calling thread only."""
    cfg = _CURRENT.get()
    kw: dict[str, Any] = {}
    if checks is not None:
        if checks is True:
            kw["checks"] = CHECKS
        elif checks is False:
            kw["checks"] = frozenset()
        else:
            names = frozenset([checks] if isinstance(checks, str) else checks)
            unknown = names - CHECKS
            if unknown:
                raise ValueError(
                    f"config(checks=...): unknown check(s) {sorted(unknown)}; "
                    f"valid: {sorted(CHECKS)}"
                )
            kw["checks"] = names
    if on_error is not None:
        if on_error not in ("raise", "warn"):
            raise ValueError(f"config(on_error=...) must be 'raise' or 'warn', got {on_error!r}")
        kw["on_error"] = on_error
    if engine is not None:
        if engine not in ENGINES:
            raise ValueError(f"config(engine=...) must be one of {sorted(ENGINES)}, got {engine!r}")
        kw["engine"] = engine
    if atomic_order is not None:
        if atomic_order not in ("work-item", "shuffled"):
            raise ValueError("config(atomic_order=...) must be 'work-item' or 'shuffled'")
        kw["atomic_order"] = atomic_order
    for name, v in (
        ("sub_group_size", sub_group_size),
        ("spin_limit", spin_limit),
        ("max_lanes", max_lanes),
        ("seed", seed),
        ("enqueue_depth", enqueue_depth),
        ("max_work_group_size", max_work_group_size),
        ("threads", threads),
        ("sample", sample),
        ("max_memory", max_memory),
        ("split_lanes", split_lanes),
    ):
        if v is not None:
            if not isinstance(v, int) or isinstance(v, bool):
                raise ValueError(f"config({name}=...) must be a positive int, got {v!r}")
            if name == "split_lanes" and v < 0:  # (0: never split)
                raise ValueError(f"config(split_lanes=...) must be an int >= 0, got {v!r}")
            if v <= 0 and name not in ("seed", "split_lanes"):
                raise ValueError(f"config({name}=...) must be a positive int, got {v!r}")
            kw[name] = v
    new = replace(cfg, **kw)
    return _ConfigHandle(_CURRENT.set(new), new)
