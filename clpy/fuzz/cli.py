"""``python -m clpy.fuzz --count N --seed S --devices sim,opencl:pocl [--out DIR]
[--features ...] [--jobs J] [--summary FILE]``: kernel ``i`` is the program of seed ``S + i``.
Prints a progress bar (tqdm when installed) and, last, ``N kernels, M mismatches, K errors``;
exits 1 when M + K > 0.

A run can be cut short and still report: ``--time-limit`` starts no new kernel after that many
seconds; ``--hard-limit`` (or SIGTERM, as ``timeout`` sends) stops waiting, ends the worker
processes and reports the kernels that finished (the shrinking of a failure is bounded by the
hard limit too). The ``--summary`` JSON is rewritten as results come in (at the first, then
every 10 s), so even a run killed outright leaves its counts so far.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import signal
import sys
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from typing import Any

from clpy.fuzz import features as F
from clpy.fuzz.campaign import Result, check, device_features, device_limits, write_crash
from clpy.fuzz.icd import register_oclgrind


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m clpy.fuzz", description=__doc__)
    p.add_argument("--count", type=int, default=100, help="number of kernels (default 100)")
    p.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    p.add_argument(
        "--devices",
        default="sim,opencl:pocl",
        help="comma list: sim, opencl:<selector> ... (default sim,opencl:pocl)",
    )
    p.add_argument("--out", default=None, help="folder for reproducers of failures")
    p.add_argument(
        "--features",
        default="all",
        help=f"'all', a comma list, or 'all,-printf'; known: {', '.join(F.ALL)}",
    )
    p.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    p.add_argument("--no-shrink", action="store_true", help="do not reduce failures")
    p.add_argument(
        "--shrink-seconds",
        type=float,
        default=300.0,
        help="time limit for reducing one failure (default 300)",
    )
    p.add_argument("--summary", default=None, help="write a JSON summary to this file")
    p.add_argument(
        "--time-limit",
        type=float,
        default=None,
        help="start no new kernel after this many seconds (the count run is reported)",
    )
    p.add_argument(
        "--hard-limit",
        type=float,
        default=None,
        help="after this many seconds stop: end the workers, report what finished",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


class Stopped(BaseException):
    """The run was told to stop (SIGTERM) while a kernel ran in this process (a
    BaseException, so the harness's handlers of kernel failures let it through)."""


class _Stop:
    """When to stop waiting: the hard limit (``time.time()`` epoch, shared with the worker
    processes, which bound their shrinking by it) or a SIGTERM."""

    def __init__(self, hard_limit: float | None) -> None:
        self.epoch = None if hard_limit is None else time.time() + hard_limit
        self.reason: str | None = None

    def due(self) -> bool:
        if self.reason is None and self.epoch is not None and time.time() > self.epoch:
            self.reason = "hard limit"
        return self.reason is not None


def _worker(args: tuple[Any, ...]) -> Result:
    seed, devices, feats, out, shrink, budget, avoid, stop_epoch = args
    if stop_epoch is not None:  # leave time to report before the hard limit
        budget = max(0.0, min(budget, stop_epoch - time.time() - 5.0))
        shrink = shrink and budget > 0
    try:
        return check(seed, devices, feats, out, shrink, budget, avoid=avoid)
    except Exception as e:  # a crash of the harness itself is an error too, not the end
        return Result(seed, "error", f"harness: {type(e).__name__}: {e}")


def _progress(it: Iterable[Result], total: int, quiet: bool) -> Iterator[Result]:
    if quiet:
        yield from it
        return
    try:
        from tqdm import tqdm
    except ImportError:
        for k, r in enumerate(it, 1):
            if k % 10 == 0 or k == total:
                print(f"  {k}/{total}", file=sys.stderr)
            yield r
        return
    yield from tqdm(it, total=total, unit="kernel", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    a = _parser().parse_args(argv)
    if a.count < 0 or a.jobs < 1:
        print("--count must be >= 0 and --jobs >= 1", file=sys.stderr)
        return 2
    devices = [d.strip() for d in a.devices.split(",") if d.strip()]
    register_oclgrind(devices)  # before the first platform query (clpy/fuzz/icd.py)
    try:
        feats = device_features(devices, F.parse(a.features))
        avoid = device_limits(devices)  # what some device's target cannot emit
    except ValueError as e:
        print(f"python -m clpy.fuzz: {e}", file=sys.stderr)
        return 2
    if a.out:
        os.makedirs(a.out, exist_ok=True)
    stop = _Stop(a.hard_limit)
    tasks = [
        (a.seed + i, devices, feats, a.out, not a.no_shrink, a.shrink_seconds, avoid, stop.epoch)
        for i in range(a.count)
    ]
    t0 = time.perf_counter()
    deadline = None if a.time_limit is None else t0 + a.time_limit
    results: list[Result] = []
    meta = {"seed": a.seed, "devices": devices, "features": sorted(feats),
            "avoided": sorted(avoid), "jobs": a.jobs}  # fmt: skip
    serial = a.jobs == 1

    def on_term(signum: int, frame: Any) -> None:
        stop.reason = "SIGTERM"
        if serial:  # the kernel runs in this process: interrupt it
            raise Stopped()

    old_term = signal.signal(signal.SIGTERM, on_term)
    written = 0.0  # the first result is written at once, then every 10 s
    try:
        stream = (
            _run_serial(tasks, deadline, stop)
            if serial
            else _run_pool(tasks, a.jobs, deadline, stop)
        )
        for r in _progress(stream, a.count, a.quiet):
            results.append(_note(r))
            if a.summary and time.perf_counter() - written > 10.0:
                _write_summary(a.summary, results, meta, time.perf_counter() - t0, "running")
                written = time.perf_counter()
    except Stopped:
        pass
    finally:
        signal.signal(signal.SIGTERM, old_term)
    wall = time.perf_counter() - t0
    if stop.reason is None and len(results) < a.count:
        stop.reason = "time limit"  # no new kernel was started after --time-limit
    state = f"stopped ({stop.reason})" if stop.reason else "complete"
    if a.summary:
        _write_summary(a.summary, results, meta, wall, state)
    line = _counts(results)
    if stop.reason:
        print(f"python -m clpy.fuzz: {state} after {wall:.0f} s: {line}", file=sys.stderr)
    print(line)
    known = sum(r.status == "known" for r in results)
    if known:  # listed device bugs (clpy.fuzz.campaign.KNOWN_DEVICE_ERRORS): not failures
        print(f"python -m clpy.fuzz: {known} kernels hit a known device bug", file=sys.stderr)
    return 1 if any(r.status in ("mismatch", "error") for r in results) else 0


def _counts(results: list[Result]) -> str:
    mism = sum(r.status == "mismatch" for r in results)
    errs = sum(r.status == "error" for r in results)
    return f"{len(results)} kernels, {mism} mismatches, {errs} errors"


def _write_summary(
    path: str, results: list[Result], meta: dict[str, Any], wall: float, state: str
) -> None:
    """The JSON summary, replaced atomically (a reader never sees half a file)."""
    bad = [r for r in results if r.status == "mismatch"]
    bad += [r for r in results if r.status == "error"]
    data = {
        "count": len(results),
        "mismatches": sum(r.status == "mismatch" for r in results),
        "errors": sum(r.status == "error" for r in results),
        "known_device_bugs": sum(r.status == "known" for r in results),
        "state": state,
        **meta,
        "wall_seconds": round(wall, 1),
        "kernel_seconds_mean": round(sum(r.seconds for r in results) / max(len(results), 1), 3),
        "failures": [r.__dict__ for r in bad],
    }
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1)
    os.replace(tmp, path)


def _expired(deadline: float | None) -> bool:
    return deadline is not None and time.perf_counter() > deadline


def _run_serial(
    tasks: list[tuple[Any, ...]], deadline: float | None, stop: _Stop
) -> Iterator[Result]:
    for t in tasks:
        if _expired(deadline) or stop.due():
            return
        yield _worker(t)


def _run_pool(
    tasks: list[tuple[Any, ...]], jobs: int, deadline: float | None, stop: _Stop
) -> Iterator[Result]:
    """Results as they finish, with at most ``2 * jobs`` kernels queued, so that a time limit
    stops the run promptly. A worker process that dies (a driver aborting, a segfault) costs
    the kernels it held, each reported as an error; the pool is started again. At the hard
    limit (or a SIGTERM) the workers are ended and the kernels they held are not reported."""
    todo = iter(tasks)
    while True:
        broken: list[tuple[Any, ...]] = []
        pool = ProcessPoolExecutor(jobs, mp_context=get_context("spawn"))
        try:
            pending: dict[Future[Result], tuple[Any, ...]] = {}
            _fill(pool, pending, todo, jobs, deadline)
            while pending and not broken:
                done, _ = wait(list(pending), timeout=1.0, return_when=FIRST_COMPLETED)
                if stop.due():
                    _end_workers(pool)
                    return
                for f in done:
                    t = pending.pop(f)
                    try:
                        yield f.result()
                    except BrokenProcessPool:
                        broken.append(t)
                if not broken:
                    _fill(pool, pending, todo, jobs, deadline)
            broken += list(pending.values())
        finally:
            pool.shutdown(wait=not stop.due(), cancel_futures=True)
        if not broken:
            return
        # Which of the held kernels killed the worker is unknown: run each alone in a fresh
        # process; the one that dies again is the error.
        for t in broken:
            if stop.due():
                return
            yield _isolated(t)
        if _expired(deadline):
            return


def _end_workers(pool: ProcessPoolExecutor) -> None:
    """Stop the pool's worker processes now (they may be deep in a driver call)."""
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in multiprocessing.active_children():
        proc.terminate()


def _fill(
    pool: ProcessPoolExecutor,
    pending: dict[Future[Result], tuple[Any, ...]],
    todo: Iterator[tuple[Any, ...]],
    jobs: int,
    deadline: float | None,
) -> None:
    while len(pending) < 2 * jobs and not _expired(deadline):
        t = next(todo, None)
        if t is None:
            return
        pending[pool.submit(_worker, t)] = t


def _isolated(t: tuple[Any, ...]) -> Result:
    with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool:
        try:
            return pool.submit(_worker, t).result()
        except BrokenProcessPool:
            seed, devices, feats, out, shrink, budget, avoid, stop_epoch = t
            if stop_epoch is not None:
                budget = max(0.0, min(budget, stop_epoch - time.time() - 10.0))
            budget = budget if shrink else 0.0
            folder = write_crash(seed, devices, feats, out, avoid, budget) if out else None
            why = "the worker process died running this kernel"
            return Result(seed, "error", why, folder=folder)


def _note(r: Result) -> Result:
    if r.status != "ok":
        where = f" -> {r.folder}" if r.folder else ""
        print(f"seed {r.seed}: {r.status}: {r.summary[:300]}{where}", file=sys.stderr)
    return r
