"""Running one native launch's work-groups: on the calling thread or in chunks on a thread
pool, and, for a launch expected to be long, in pieces that Ctrl-C can stop and that drive the
progress bar (sim/progress.py).

A launch is *long* when the time per group measured on the kernel's launches before (on one
thread) times its groups passes ``LONG_S``, and on a kernel's first launch. Only a long launch
can be stopped inside: its caller first makes it restorable (``SimSnapshot.save``), its groups
run in pieces of ~``PIECE_S`` on the pool while the calling thread waits (Python's signal
handler runs there), and Ctrl-C sets the compiled library's cancel flag (engine.h: the kernel
stops at its next ``CLPY_BACKEDGE()`` poll, or at the end of its piece), waits for the pieces
running, and raises. A short launch runs to its end: Ctrl-C then raises with it complete.
"""

from __future__ import annotations

import ctypes
import functools
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any

from clpy_sim.progress import Progress

LONG_S = 0.2  # a launch expected to take longer (one thread): restorable, cancellable, a bar
PIECE_S = 0.05  # the groups a long launch's chunk runs between two looks at Ctrl-C
CANCELLED = 1 << 30  # clpy_enter's status when a poll found the cancel flag (engine.h)


class Library:
    """A compiled kernel's entry points and the state its launches share: the time per group
    and the cancel flag (one per library: a launch sets it only when no other long launch of
    the library runs, and long launches wait while it is set)."""

    __slots__ = ("lib", "fn", "enter", "flag", "per_group", "cond", "active", "cancelling")

    def __init__(self, lib: Any) -> None:
        self.lib = lib
        self.fn = lib.clpy_run
        self.enter = lib.clpy_enter
        self.flag = lib.clpy_cancel_ptr().contents  # a c_int32 over the library's flag
        self.per_group: float | None = None  # seconds per group on one thread, last launch
        self.cond = threading.Condition()
        self.active = 0  # long launches running
        self.cancelling = False

    def expected(self, groups: int) -> float | None:
        """The launch's expected time on one thread (None: never launched)."""
        return None if self.per_group is None else self.per_group * groups

    def measured(self, seconds: float, chunks: int, groups: int) -> None:
        self.per_group = seconds * chunks / groups


Job = tuple[Any, int, int]  # (argument pointer table, first group, end group)


def run_short(lib: Library, jobs: list[Job], geo: Any, threads: int) -> list[int]:
    """Each job's status; one job on the calling thread, several on the pool. Runs to the
    end: Ctrl-C while waiting for the pool lets every chunk finish, then raises."""
    fn = lib.fn
    if len(jobs) == 1:
        ptrs, a, b = jobs[0]
        return [int(fn(ptrs, geo, a, b))]
    futs = [pool(threads).submit(fn, p, geo, a, b) for p, a, b in jobs]
    try:
        return [int(f.result()) for f in futs]
    except BaseException:
        _wait_all(futs)
        raise


def run_long(lib: Library, jobs: list[Job], geo: Any, threads: int, total: int) -> list[int]:
    """Each job's status, the jobs in pieces on the pool (a bar after a while); Ctrl-C stops
    them (their statuses are then moot: the exception goes on)."""
    stop = [False]
    done = [0] * len(jobs)
    statuses = [0] * len(jobs)
    futs: list[Future[Any]] = []
    progress = Progress(total)
    mine = False
    with lib.cond:
        while lib.cancelling:
            lib.cond.wait()
        lib.active += 1
    try:
        workers = pool(max(threads, 1))
        for i, job in enumerate(jobs):
            futs.append(workers.submit(_pieces, lib, job, geo, i, done, statuses, stop))
        pending: set[Future[Any]] | list[Future[Any]] = futs
        while pending:
            _, pending = wait(pending, timeout=0.1)
            progress.step(sum(done) - progress.done)
        for f in futs:
            f.result()  # (an exception of the worker itself)
        return statuses
    except BaseException:
        stop[0] = True
        with lib.cond:
            if lib.active == 1:  # no other long launch of this library runs: stop inside
                lib.cancelling = mine = True
                lib.flag.value = 1
        for f in futs:
            f.cancel()
        _wait_all(futs)
        raise
    finally:
        progress.close()
        with lib.cond:
            lib.active -= 1
            if mine:
                lib.flag.value = 0
                lib.cancelling = False
                lib.cond.notify_all()


def _pieces(
    lib: Library,
    job: Job,
    geo: Any,
    i: int,
    done: list[int],
    statuses: list[int],
    stop: list[bool],
) -> None:
    """Job ``i`` in pieces of groups, growing from one group to ~PIECE_S each, until a status
    (a detector, a cancelled poll) or ``stop``."""
    enter = lib.enter
    ptrs, g, end = job
    step = 1
    while g < end and not stop[0]:
        e = min(end, g + step)
        t0 = time.perf_counter()
        st = int(enter(ptrs, geo, g, e))
        dt = time.perf_counter() - t0
        if st:
            statuses[i] = st
            if st != CANCELLED:
                stop[0] = True  # a detection: the NumPy engine runs the launch again
            return
        done[i] += e - g
        g = e
        if dt < PIECE_S:
            step = max(step, min(2 * step, int(step * PIECE_S / max(dt, 1e-7))))


def _wait_all(futs: list[Future[Any]]) -> None:
    """Wait until no chunk runs: their C code writes into the launch's arrays (and shadows),
    which Python would otherwise free under them (the interpreter crashed with "SystemError:
    unknown opcode"); a second Ctrl-C does not cut this short."""
    while True:
        try:
            wait(futs)
            return
        except BaseException:
            continue


@functools.lru_cache(maxsize=4)
def pool(threads: int) -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=threads, thread_name_prefix="clpy-native")


def cancel_flag(lib: Any) -> ctypes.c_int32:
    """The library's cancel flag (for tests)."""
    return lib.clpy_cancel_ptr().contents
