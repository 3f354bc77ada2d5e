"""``python -m clpy.fuzz --count N --seed S --devices sim,opencl:pocl [--out DIR]
[--features ...] [--jobs J] [--summary FILE]``: kernel ``i`` is the program of seed ``S + i``.
Prints a progress bar (tqdm when installed) and, last, ``N kernels, M mismatches, K errors``;
exits 1 when M + K > 0."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from typing import Any

from clpy.fuzz import features as F
from clpy.fuzz.campaign import Result, check, device_features


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
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def _worker(args: tuple[Any, ...]) -> Result:
    seed, devices, feats, out, shrink, budget = args
    try:
        return check(seed, devices, feats, out, shrink, budget)
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
    try:
        feats = device_features(devices, F.parse(a.features))
    except ValueError as e:
        print(f"python -m clpy.fuzz: {e}", file=sys.stderr)
        return 2
    if a.out:
        os.makedirs(a.out, exist_ok=True)
    tasks = [
        (a.seed + i, devices, feats, a.out, not a.no_shrink, a.shrink_seconds)
        for i in range(a.count)
    ]
    t0 = time.perf_counter()
    deadline = None if a.time_limit is None else t0 + a.time_limit
    results: list[Result] = []
    stream = _run_serial(tasks, deadline) if a.jobs == 1 else _run_pool(tasks, a.jobs, deadline)
    for r in _progress(stream, a.count, a.quiet):
        results.append(_note(r))
    wall = time.perf_counter() - t0
    mism = [r for r in results if r.status == "mismatch"]
    errs = [r for r in results if r.status == "error"]
    if a.summary:
        with open(a.summary, "w") as f:
            json.dump(
                {
                    "count": len(results),
                    "mismatches": len(mism),
                    "errors": len(errs),
                    "seed": a.seed,
                    "devices": devices,
                    "features": sorted(feats),
                    "jobs": a.jobs,
                    "wall_seconds": round(wall, 1),
                    "kernel_seconds_mean": round(
                        sum(r.seconds for r in results) / max(len(results), 1), 3
                    ),
                    "failures": [r.__dict__ for r in mism + errs],
                },
                f,
                indent=1,
            )
    print(f"{len(results)} kernels, {len(mism)} mismatches, {len(errs)} errors")
    return 1 if mism or errs else 0


def _expired(deadline: float | None) -> bool:
    return deadline is not None and time.perf_counter() > deadline


def _run_serial(tasks: list[tuple[Any, ...]], deadline: float | None) -> Iterator[Result]:
    for t in tasks:
        if _expired(deadline):
            return
        yield _worker(t)


def _run_pool(tasks: list[tuple[Any, ...]], jobs: int, deadline: float | None) -> Iterator[Result]:
    """Results as they finish, with at most ``2 * jobs`` kernels queued, so that a time limit
    stops the run promptly. A worker process that dies (a driver aborting, a segfault) costs
    the kernels it held, each reported as an error; the pool is started again."""
    todo = iter(tasks)
    while True:
        broken: list[tuple[Any, ...]] = []
        with ProcessPoolExecutor(jobs, mp_context=get_context("spawn")) as pool:
            pending: dict[Future[Result], tuple[Any, ...]] = {}
            _fill(pool, pending, todo, jobs, deadline)
            while pending and not broken:
                done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
                for f in done:
                    t = pending.pop(f)
                    try:
                        yield f.result()
                    except BrokenProcessPool:
                        broken.append(t)
                if not broken:
                    _fill(pool, pending, todo, jobs, deadline)
            broken += list(pending.values())
        if not broken:
            return
        # Which of the held kernels killed the worker is unknown: run each alone in a fresh
        # process; the one that dies again is the error.
        for t in broken:
            yield _isolated(t)
        if _expired(deadline):
            return


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
            return Result(t[0], "error", "the worker process died running this kernel")


def _note(r: Result) -> Result:
    if r.status != "ok":
        where = f" -> {r.folder}" if r.folder else ""
        print(f"seed {r.seed}: {r.status}: {r.summary[:300]}{where}", file=sys.stderr)
    return r
