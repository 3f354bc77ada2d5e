"""Running the work-group batches of one launch on a thread pool.

A launch is cut into batches of whole work-groups by ``max_lanes`` alone, never by the thread
count or by timing, unless its results cannot depend on the cut (every checker off: ``split``,
and the ``Tuner``'s bigger batches). With ``threads`` left to its default, the ``Tuner``
decides from measured times whether a kernel's batches run on the pool at all. Barriers,
local memory and collectives act within a work-group, so batches are independent except
through global memory, and the launch keeps the meaning of running them one after another in
increasing order (docs/simulator.md "Threads"):

- an operation whose result depends on the order of work-groups across batches (an atomic on
  global memory; ``Batch.ordered``) first waits until every earlier batch has finished, so
  atomics run in batch order whatever the thread count;
- non-atomic global accesses of different work-groups to the same element, one a write, are a
  data race (spec §3.3.4): the race checker (shared shadow memory, updated under a lock) finds
  one whenever one exists, in any interleaving, and the launch is then re-run on one thread
  (``launch``) so that the report is exactly the sequential one;
- findings of the other checkers come from within one batch: the launch raises the one of the
  lowest batch that found something, after every earlier batch has finished, which is what the
  sequential run raises first.

NumPy releases the GIL inside its loops, so batches of large arrays overlap on several cores.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any

import numpy as np

_POOLS: dict[int, ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()
_WORKER = threading.local()  # .active: this thread is running a batch


class Aborted(Exception):
    """A batch stopped because an earlier one failed (its own outcome no longer matters)."""


class Turnstile:
    """Which batches of a launch have finished, and the lowest one that failed."""

    def __init__(self, n: int) -> None:
        self.cond = threading.Condition()
        self.done = [False] * n
        self.prefix = 0  # batches 0 .. prefix-1 have all finished
        self.failed = n  # lowest batch that failed (n: none)

    def finish(self, k: int, ok: bool) -> None:
        with self.cond:
            self.done[k] = True
            if not ok and k < self.failed:
                self.failed = k
            while self.prefix < len(self.done) and self.done[self.prefix]:
                self.prefix += 1
            self.cond.notify_all()

    def wait(self, k: int) -> None:
        """Return once batches 0 .. k-1 have finished; raise ``Aborted`` if one failed."""
        with self.cond:
            while self.prefix < k:
                if self.failed < k:
                    raise Aborted
                self.cond.wait()
            if self.failed < k:
                raise Aborted

    def aborted(self, k: int) -> bool:
        return self.failed < k

    def abort_all(self) -> None:
        with self.cond:
            self.failed = -1
            self.cond.notify_all()


def split(groups: int, W: int, per_batch: int, threads: int, split_lanes: int) -> int:
    """Work-groups per batch of a launch whose results do not depend on its batches (every
    checker off, atomics in work-item order, ``Plan.batch_free``): ``per_batch`` (from
    ``max_lanes``) unless that gives fewer batches than ``threads`` and the launch has at least
    ``2 * split_lanes`` work-items; then as many batches as threads, each of at least
    ``split_lanes`` work-items (whole groups), so that every thread gets one. ``split_lanes``
    0: never. A launch of one big batch otherwise runs on one core however many there are."""
    nbatch = -(-groups // per_batch)
    if split_lanes <= 0 or threads <= 1 or nbatch >= threads:
        return per_batch
    parts = min(threads, groups, (groups * W) // split_lanes)
    if parts <= nbatch:
        return per_batch
    return -(-groups // parts)


class Tuner:
    """How a kernel's launches run, from how long each took: ``ways`` ways (seconds per
    work-group, the least of the last ``KEEP`` of each). The first launches try every way in
    turn, ``TRIES`` times; then each launch takes the fastest, and every ``EXPLORE``-th
    launch tries another again (load and launch sizes change). ``sim/launch.py`` offers: the
    batches of ``max_lanes`` on the calling thread; on the pool; and (every checker off,
    nothing depending on the cut) batches of ``BIG`` times ``max_lanes`` on the calling thread.

    Why measure: threads pay only where a batch spends its time inside NumPy's loops. The
    interpreter lock is held for every Python step between them and handed over at every
    NumPy call, which costs both threads time: on the 2-core machine, sim_bench's kernels
    with 2^17-lane batches used 1.5-1.65 cores on 2 threads yet ran 0.56-1.14x as fast as on
    one. Bigger batches pay where each statement's fixed cost (~15 us of Python per statement
    and batch) outweighs the arrays' falling out of the caches: the tree reduction and scan
    (2^20 work-items: 6.9 -> 3.4 ms and 12 -> 7.8 ms with 2^19-lane batches), not the
    histogram or srad (slower). The results never depend on the way taken."""

    EXPLORE = 8
    KEEP = 3
    TRIES = 2
    BIG = 4

    def __init__(self, ways: int) -> None:
        self.costs: list[list[float]] = [[] for _ in range(ways)]
        self.launches = 0

    def choose(self) -> int:
        """The way (an index) to run this launch."""
        counts = [len(c) for c in self.costs]
        least = min(counts)
        if least < self.TRIES:
            return counts.index(least)
        self.launches += 1
        ways = range(len(self.costs))
        best = min(ways, key=lambda i: min(self.costs[i]))
        if self.launches % self.EXPLORE:
            return best
        others = [i for i in ways if i != best]
        return others[(self.launches // self.EXPLORE) % len(others)]

    def record(self, way: int, seconds_per_group: float) -> None:
        c = self.costs[way]
        c.append(seconds_per_group)
        del c[: -self.KEEP]


def in_worker() -> bool:
    """Whether the calling thread is running a batch (a nested launch then runs serially)."""
    return bool(getattr(_WORKER, "active", False))


def _pool(n: int) -> ThreadPoolExecutor:
    with _POOLS_LOCK:
        pool = _POOLS.get(n)
        if pool is None:
            pool = _POOLS[n] = ThreadPoolExecutor(n, thread_name_prefix="clpy-sim")
        return pool


def run_batches(
    count: int,
    threads: int,
    run: Callable[[int, Turnstile], int],
    step: Callable[[int], None],
) -> None:
    """Run ``run(k, turnstile)`` for k = 0 .. count-1 on ``threads`` threads; ``step(groups)``
    (in the calling thread) as batches finish. Raises the exception of the lowest batch that
    failed, once every batch before it has finished."""
    turn = Turnstile(count)
    errors: dict[int, BaseException] = {}

    def work(k: int, ctx: contextvars.Context) -> int:
        if turn.aborted(k):
            turn.finish(k, False)
            return 0
        ok = False
        _WORKER.active = True
        try:
            with np.errstate(all="ignore"):
                groups = ctx.run(run, k, turn)
            ok = True
            return groups
        except Aborted:
            return 0
        except BaseException as e:  # noqa: BLE001 - handed to the launching thread
            errors[k] = e
            return 0
        finally:
            _WORKER.active = False
            turn.finish(k, ok)

    pool = _pool(threads)
    # submitted in batch order: a batch waits only on earlier ones, which started before it
    futures: list[Future[int]] = [
        pool.submit(work, k, contextvars.copy_context()) for k in range(count)
    ]
    try:
        pending: set[Future[int]] = set(futures)
        while pending:
            done, pending = wait(pending, return_when="FIRST_COMPLETED")
            for f in done:
                step(f.result())
    except BaseException:
        turn.abort_all()  # Ctrl-C: the batches still queued do nothing
        for f in futures:
            f.cancel()
        wait(futures)
        raise
    if errors:
        raise errors[min(errors)]


def shutdown() -> None:
    """Stop the pools' threads (tests; the pools otherwise live as long as the process)."""
    with _POOLS_LOCK:
        pools = list(_POOLS.values())
        _POOLS.clear()
    for p in pools:
        p.shutdown(wait=True)


def snapshot(memories: list[Any]) -> list[tuple[Any, Any]]:
    """Copies of the contents of the memories a launch may write (its shadowed ones)."""
    return [(m, m.data.copy()) for m in memories if getattr(m, "shadow", None) is not None]


def restore(saved: list[tuple[Any, Any]]) -> None:
    for m, data in saved:
        m.data[...] = data


__all__ = [
    "Aborted",
    "Turnstile",
    "in_worker",
    "run_batches",
    "snapshot",
    "restore",
    "shutdown",
    "split",
    "Tuner",
]
