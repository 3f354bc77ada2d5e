"""Where a clpy kernel loses time against the hand-written original (issue 18): the same
program's kernels timed under several builds, interleaved round by round so that clock and
cache drift hit every build alike, per kernel and per launch.

    python -m benchmarks.programs.kernel_diag --platform nvidia --programs pathfinder,backprop

Builds (each a row; ``orig`` runs first and again last in every round, ``orig_b``, so its two
rows show the noise):

- ``orig``: the hand-written ``.cl`` as its host builds it (no options), the original host;
- ``orig_clpyopts``: the same with clpy's build options (``-cl-std=CL2.0`` and its float
  options);
- ``clpy``: clpy's emitted kernels as it launches them (``restrict``/``const`` on buffers no
  other argument reaches);
- ``clpy_norestrict``: the emitted source with ``restrict`` removed (no ``ld.global.nc``);
- ``clpy_noconst``: also without ``const`` on read-only buffers;
- ``clpy_restrict_noconst``: ``restrict`` kept, ``const`` removed;
- ``clpy_noopts``: the emitted source built without options (OpenCL C 1.2 defaults);
- ``orig_clpyhost``: the hand-written kernel with clpy's parameter list, launched by clpy's
  host with clpy's options (as ``clpy`` but for the kernel's code: kernel or host?);
- ``clpy_orighost``: the reverse, clpy's emitted kernel (renamed, with the original's
  parameter list) launched by the original host, built with clpy's options (compare with
  ``orig_clpyopts``);
- ``clpy_contract``: the emitted source with ``FP_CONTRACT ON``, the OpenCL C default the
  originals build with (clpy emits OFF unless the kernel asks for ``fp_contract``);
- ``clpy_noline``: the emitted source without ``#line`` directives;
- ``clpy_minmax``: ``min``/``max`` as conditional-expression macros, as the originals write
  them, instead of the built-in functions;
- ``orig_sync``, ``clpy_sync``: the queue finished before each launch (whether a profiled
  interval includes waiting for the uploads still running ahead of it: clpy's staged uploads
  return once the DMAs are enqueued, the original host's copies block);
- ``orig_delay``: the original host waiting ``KDIAG_DELAY_US`` (25) us before each launch, as
  a slower host loop would: whether kernels get slower when the GPU idles between them;
- ``orig_gated``, ``clpy_gated``: every command of a run held back by a marker waiting on a
  user event that a timer completes ``common.GATE_S`` later, so all launches are queued
  before the first runs (a host loop that costs nothing between launches).

Every build's row also gives the median idle time between consecutive kernels (profiled START
of one minus END of the previous) and the median host time of a launch call.

Host buffers (kernel or buffers? ``orig_clpyhost`` runs the original kernel under clpy's
launch path with clpy's own ``DeviceArray``s: ``clpy.to_device``, pinned staging from 4 MiB
(clpy/runtime/transfers.py), ``clpy.zeros`` filled on the device). These builds keep clpy's
launch path and change only where the arrays' buffers come from (``HOST_BUFFERS``):

- ``orig_clpyhost_fresh``: fresh ``COPY_HOST_PTR`` buffers, no pool, no pinned staging; the
  empty arrays uninitialised (a plain ``READ_WRITE`` buffer);
- ``orig_clpyhost_pageable``: buffers made as the original host makes them (``READ_WRITE``,
  then one blocking ``enqueue_copy`` from the NumPy array), empty arrays uninitialised;
- ``orig_clpyhost_pooled``: buffers from clpy's per-queue pool (given back after each run, so
  later runs reuse them), written with a blocking ``enqueue_copy`` from pageable memory;
- ``orig_clpyhost_nofill``: clpy's staged uploads, but the empty arrays uninitialised
  (``clpy.zeros``' device-side fill left out);
- ``clpy_pageable``: clpy's emitted kernels with the original host's buffers (as
  ``orig_clpyhost_pageable``);
- ``orig_staged``, ``orig_zerofill``: the reverse, the original host with its uploads through
  clpy's pinned staging (``transfers.upload``) or its empty buffers zero-filled
  (``enqueue_fill_buffer``), the rest of that host unchanged;
- ``orig_flush``, ``clpy_flush``, ``orig_clpyhost_flush``, ``orig_clpyhost_pageable_flush``:
  every launch after a fill of a 256 MiB scratch buffer and a finished queue, so that each
  kernel starts with none of its data in the L2 cache (what the uploads or the previous
  kernel left there no longer counts).

Each run's buffer arguments' device addresses are recorded after its timed launches (a
one-item kernel writes the pointers): the table says whether a build's runs differed in
where their buffers were, and each layout's median time.

``--builds`` (or ``KDIAG_BUILDS`` in the environment) picks builds by name or ``fnmatch``
pattern, comma-separated (``orig`` and ``orig_b`` always run: the baseline and its noise).
``--shuffle`` (``KDIAG_SHUFFLE=1``) runs the builds between them in a new order every round,
so that no build always follows the same one (the state a build leaves, clocks or caches or
freed device memory, is then spread over all).

The clpy variants keep clpy's host loop (DeviceArrays, one profiling queue); only the program
behind each launch plan's kernel is swapped. Per build: the summed kernel time per run
(median over rounds), and per kernel the median launch and the first launch of a run.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.programs import common, load
from benchmarks.programs import kdiag_hosts as hosts
from benchmarks.programs import kdiag_sources as sources
from benchmarks.programs.common import check
from benchmarks.programs.report import machine, slug
from clpy.runtime.devices import RUNTIME

# Where the programs' binaries (PTX on NVIDIA) go, from --out: ``<dir>/<program>/`` with
# ``*_clpy.bin`` and ``*_original.bin`` as scripts/ptx_compare.py reads them, and the hybrid
# builds' programs as ``*.ptx`` beside them.
PTX_DIR: Path | None = None


def _save_ptx(m: Any, ctx: Any, swap: hosts.Swap, extra: dict[str, Any]) -> None:
    assert PTX_DIR is not None
    d = PTX_DIR / m.NAME
    d.mkdir(parents=True, exist_ok=True)
    for i, (_, prg, k) in enumerate(swap.saved):
        b = sources.binary(prg)
        if b is not None:
            (d / f"{k.function_name}_{i}_clpy.bin").write_bytes(b)
    orig_prg = common.BUILT.get((int(ctx.int_ptr), m.CL_FILE))
    b = None if orig_prg is None else sources.binary(orig_prg)
    if b is not None:
        (d / f"{m.NAME}_original.bin").write_bytes(b)
    names = {
        "replaced": "clpy_orighost",
        "static": "orig_static_local",
        "transform": "orig_clpyhost",
        "sources.same": "clpy_noopts",
    }
    for label, prg in [*extra.items(), *swap.built.items()]:
        b = sources.binary(prg)
        if b is not None:
            (d / f"{names.get(label, label.strip('_'))}.ptx").write_bytes(b)


# Distinct outputs kept per program for _checked (each as big as the program's outputs)
SEEN_OUTPUTS = 4


def _checked(m: Any, name: str, out: Any, ref: Any, seen: list[tuple[np.ndarray, ...]]) -> None:
    """``check`` against the NumPy reference, unless ``out`` is bit for bit an output that
    passed it before (``seen``): the tolerance check of backprop's 284 MB of outputs took
    about as long as the rest of a run."""
    got = tuple(np.asarray(x) for x in (out if isinstance(out, tuple) else (out,)))
    for prev in seen:
        if len(prev) == len(got) and all(
            a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b)
            for a, b in zip(prev, got)
        ):
            return
    check(m.NAME, name, out, ref, m.TOL)
    if len(seen) < SEEN_OUTPUTS:
        seen.append(tuple(x.copy() for x in got))


# The *_delay builds' busy wait before each launch (us; KDIAG_DELAY_US): about what clpy's
# launch call costs beyond the original host's on the GPU host.
DELAY_US = float(os.environ.get("KDIAG_DELAY_US", "25"))


def _timeline(events: list[Any], host_us: list[float]) -> tuple[float, float]:
    """(median idle us between consecutive kernels, median host us per launch call)."""
    gaps = [(b.profile.start - a.profile.end) * 1e-3 for a, b in zip(events, events[1:])] or [0.0]
    return statistics.median(gaps), statistics.median(host_us) if host_us else 0.0


def _select(builds: list[Any], patterns: list[str]) -> list[Any]:
    """The builds named by ``patterns`` (names or fnmatch patterns), with ``orig`` and
    ``orig_b`` always; a pattern that names none of this program's builds is said."""
    for p in patterns:
        if not any(fnmatch.fnmatchcase(b[0], p) for b in builds):
            print(f"  kernel_diag: no build matches {p!r}", flush=True)
    return [
        b
        for b in builds
        if b[0] in ("orig", "orig_b") or any(fnmatch.fnmatchcase(b[0], p) for p in patterns)
    ]


def diagnose(
    m: Any,
    ctx: Any,
    queue: Any,
    rounds: int,
    size: str,
    select: list[str] | None = None,
    shuffle: bool = False,
    deadline: float | None = None,
) -> dict[str, Any]:
    """Every build's kernels, ``rounds`` interleaved rounds after a warm-up round; fewer
    when the next round would end after ``deadline`` seconds (from this call's start)."""
    import pyopencl as cl

    inp = m.make_inputs(size, 0)
    ref = m.numpy_reference(inp)

    extra_progs: dict[str, Any] = {}  # the rewritten programs built, for _save_ptx

    def kept(label: str, make: Callable[[Any, str, str], Any]) -> Callable[[Any, str, str], Any]:
        def build(c: Any, p: str, opt: str) -> Any:
            prg = extra_progs[label] = make(c, p, opt)
            return prg

        return build

    def orig(
        events: list[Any], options: str = "", static: bool = False, source: str | None = None
    ) -> Any:
        make: Callable[[Any, str, str], Any] | None = None
        if source is not None:  # this source instead of the .cl (with the host's options too)
            make = kept("replaced", common.source_instead(source, options))
        elif options:  # the host's own options plus these
            build = common._program
            make = lambda c, p, opt: build(c, p, f"{opt} {options}".strip())  # noqa: E731
        elif static:  # the .cl with its __local arrays declared in the kernel
            make = kept(
                "static",
                lambda c, p, opt: common.built(
                    c, sources.static_local(m.NAME, Path(p).read_text()), opt
                ),
            )
        with common.original_programs(make):
            out = m.run_original(inp, ctx, queue, events)
        queue.finish()
        return out

    def clpy_run(events: list[Any]) -> Any:
        out = m.run_clpy(inp, queue, resident=True, events=events)
        queue.finish()
        return out

    scratch: list[Any] = []

    def flushed(fn: Callable[[list[Any]], Any]) -> Callable[[list[Any]], Any]:
        def run(events: list[Any]) -> Any:
            if not scratch:
                scratch.append(cl.Buffer(ctx, cl.mem_flags.READ_WRITE, hosts.FLUSH_BYTES))
            hosts.FLUSH.append((queue, scratch[0]))
            try:
                return fn(events)
            finally:
                hosts.FLUSH.clear()

        return run

    def holding(
        setting: list[Any], value: Any
    ) -> Callable[[Callable[[list[Any]], Any], list[Any]], Any]:
        """A run of ``fn`` with ``value`` in the hosts' ``setting`` list (SYNC, DELAY_US,
        GATE), emptied afterwards."""

        def run(fn: Callable[[list[Any]], Any], events: list[Any]) -> Any:
            setting[:] = [value]
            try:
                return fn(events)
            finally:
                setting.clear()

        return run

    synced = holding(hosts.SYNC, queue)
    delayed = holding(hosts.DELAY_US, DELAY_US)
    gated = holding(common.GATE, queue)

    def ringed(fn: Callable[[list[Any]], Any], events: list[Any]) -> Any:
        """``fn`` with clpy's large transfers through its pinned ring instead of registered
        host memory (no registration, so no device copy of the host arrays beside the data)."""
        from clpy.runtime import transfers

        saved = transfers.PIPELINE
        transfers.PIPELINE = "ring"
        transfers.clear_pools()
        try:
            return fn(events)
        finally:
            transfers.PIPELINE = saved
            transfers.clear_pools()

    clpy_run([])  # builds the plans
    swap = hosts.Swap(cl, m, queue)
    clopts = swap.options
    builds: list[tuple[str, Callable[[list[Any]], Any], Callable[[], None]]] = [
        ("orig", orig, lambda: None),
        ("orig_clpyopts", lambda ev: orig(ev, clopts), lambda: None),
        ("clpy", clpy_run, swap.restore),
        ("clpy_norestrict", clpy_run, lambda: swap.apply(sources.norestrict, None)),
        ("clpy_noconst", clpy_run, lambda: swap.apply(sources.noconst, None)),
        ("clpy_restrict_noconst", clpy_run, lambda: swap.apply(sources.constless, None)),
        ("clpy_noopts", clpy_run, lambda: swap.apply(sources.same, "")),
        ("orig_sync", lambda ev: synced(orig, ev), lambda: None),
        ("clpy_sync", lambda ev: synced(clpy_run, ev), swap.restore),
        ("orig_delay", lambda ev: delayed(orig, ev), lambda: None),
        ("orig_gated", lambda ev: gated(orig, ev), lambda: None),
        ("clpy_gated", lambda ev: gated(clpy_run, ev), swap.restore),
        ("clpy_ring", lambda ev: ringed(clpy_run, ev), swap.restore),
        ("clpy_ring_gated", lambda ev: ringed(lambda e: gated(clpy_run, e), ev), swap.restore),
        ("orig_b", orig, lambda: None),
    ]
    adapted = sources.clpy_signature(m)
    if adapted is not None:
        builds.insert(3, ("orig_clpyhost", clpy_run, lambda: swap.apply(adapted, None)))
    launched: dict[str, str] = {}  # per kernel, the source of the variant clpy launched
    for v, _, k in swap.saved:
        if getattr(v, "last", None) is not None or k.function_name not in launched:
            launched[k.function_name] = v.source
    clpy_in_orig = sources.orig_signature(m, launched)
    if clpy_in_orig is not None:
        builds.insert(
            4, ("clpy_orighost", lambda ev: orig(ev, clopts, source=clpy_in_orig), lambda: None)
        )
    builds[-3:-3] = [
        ("clpy_contract", clpy_run, lambda: swap.apply(sources.contract, None)),
        ("clpy_noline", clpy_run, lambda: swap.apply(sources.noline, None)),
        ("clpy_minmax", clpy_run, lambda: swap.apply(sources.minmax, None)),
    ]
    if m.NAME in sources.STATIC_LOCAL:
        builds.insert(2, ("orig_static_local", lambda ev: orig(ev, static=True), lambda: None))
    # the host-buffer builds (module docstring), before the *_sync pair
    hb: list[tuple[str, Callable[[list[Any]], Any], Callable[[], None]]] = []
    if adapted is not None:
        apply_adapted = lambda: swap.apply(adapted, None)  # noqa: E731
        hb += [
            (f"orig_clpyhost_{mode}", hosts.with_buffers(mode, clpy_run), apply_adapted)
            for mode in hosts.CLPY_MODES
        ]
    hb += [
        ("clpy_pageable", hosts.with_buffers("pageable", clpy_run), swap.restore),
        ("orig_staged", hosts.with_buffers("staged", orig), lambda: None),
        ("orig_zerofill", hosts.with_buffers("zerofill", orig), lambda: None),
    ]
    # each kernel after an L2 flush (a fill of hosts.FLUSH_BYTES) and a finished queue: whether a
    # gap comes from what the previous command left in the cache
    hb += [
        ("orig_flush", flushed(orig), lambda: None),
        ("clpy_flush", flushed(clpy_run), swap.restore),
    ]
    if adapted is not None:
        hb += [
            ("orig_clpyhost_flush", flushed(clpy_run), apply_adapted),
            (
                "orig_clpyhost_pageable_flush",
                flushed(hosts.with_buffers("pageable", clpy_run)),
                apply_adapted,
            ),
        ]
    at = next(i for i, b in enumerate(builds) if b[0] == "orig_sync")
    builds[at:at] = hb
    if select:
        builds = _select(builds, select)
    res: dict[str, Any] = {"clpy_options": clopts}
    runs: dict[str, list[list[tuple[str, float]]]] = {b[0]: [] for b in builds}
    # per run: the median idle time between consecutive kernels (START of one minus END of
    # the one before, us) and the median host time of a launch call (us)
    timeline: dict[str, list[tuple[float, float]]] = {b[0]: [] for b in builds}
    addrs: dict[str, list[dict[str, list[int]]]] = {b[0]: [] for b in builds}
    addr_prgs: dict[int, Any] = {}
    seen: list[tuple[np.ndarray, ...]] = []  # outputs already checked against NumPy
    errors: dict[str, str] = {}
    order = random.Random(0)
    t0 = time.perf_counter()
    done = 0
    for r in range(rounds + 1):
        spent = time.perf_counter() - t0
        if r >= 2 and deadline is not None and spent + spent / r > deadline:
            print(f"  {m.NAME}: {r - 1} of {rounds} rounds within the time budget", flush=True)
            break
        done = r
        if shuffle and r:  # each round in its own order: no build always follows the same one
            builds = [builds[0], *order.sample(builds[1:-1], len(builds) - 2), builds[-1]]
        for name, fn, setup in builds:
            if name in errors:
                continue
            try:
                setup()
                events: list[Any] = []
                hosts.NAMES.clear()
                hosts.BUFFERS.clear()
                hosts.HOST_US.clear()
                out = fn(events)
                _checked(m, name, out, ref, seen)
                if r:  # round 0 warms every build up
                    runs[name].append(list(zip(list(hosts.NAMES), sources.intervals(events))))
                    timeline[name].append(_timeline(events, hosts.HOST_US))
                    # after the timed launches: where this run's buffers were
                    addrs[name].append(hosts.addresses(ctx, queue, addr_prgs))
            except Exception as e:
                errors[name] = f"{type(e).__name__}: {e}"
                print(f"  {m.NAME} {name}: {errors[name]}", flush=True)
    swap.restore()
    res["rounds_done"] = done
    # registers and memory per kernel as the CUDA JIT compiles the PTX (NVIDIA only); the
    # original's program is the last one its host built (orig_b: the host's own options)
    if PTX_DIR is not None and "nvidia" in queue.device.platform.name.lower():
        _save_ptx(m, ctx, swap, extra_progs)
    if "nvidia" in queue.device.platform.name.lower():
        cuda: dict[str, Any] = {}
        for _, prg, k in swap.saved:
            b = sources.binary(prg)
            if b is not None:
                cuda.update(sources.cuda_attributes(b, [k.function_name]))
        orig_prg = common.BUILT.get((int(ctx.int_ptr), m.CL_FILE))
        b = None if orig_prg is None else sources.binary(orig_prg)
        if b is not None:
            names = [kk.function_name for kk in orig_prg.all_kernels()]
            cuda.update({f"orig:{n}": a for n, a in sources.cuda_attributes(b, names).items()})
        res["cuda"] = cuda
        print(f"  {m.NAME} cuda attributes: {cuda}", flush=True)
    for name, rs in runs.items():
        if not rs:
            res[name] = {"error": errors.get(name, "no runs")}
            continue
        per_kernel: dict[str, dict[str, float]] = {}
        for kname in dict.fromkeys(k for run in rs for k, _ in run):
            all_ = [t for run in rs for k, t in run if k == kname]
            firsts = [next(t for k, t in run if k == kname) for run in rs]
            per_kernel[kname] = {
                "launches_per_run": len(all_) / len(rs),
                "median_us": statistics.median(all_),
                "min_us": min(all_),
                "first_median_us": statistics.median(firsts),
            }
        totals = [sum(t for _, t in run) for run in rs]
        res[name] = {
            "total_median_us": statistics.median(totals),
            "totals_us": totals,
            "kernels": per_kernel,
            "gap_median_us": statistics.median(g for g, _ in timeline[name]),
            "host_median_us": statistics.median(h for _, h in timeline[name]),
            # per run: each kernel's buffer arguments' device addresses (first launch)
            "addresses": addrs[name],
        }
    return res


def markdown(info: dict[str, Any], results: dict[str, Any]) -> str:
    lines = [
        "# Kernel diagnosis: clpy's kernels vs the originals under several builds",
        "",
        f"{info['device']} ({info['platform']}, driver {info['driver']}), {info['date_utc']} "
        f"UTC; size `{info['size']}`, {info['rounds']} interleaved rounds after a warm-up "
        f"round{' (builds in a new order every round)' if info.get('shuffled') else ''}; "
        "times are OpenCL profiling intervals in microseconds. ratio = orig total / this "
        "build's total (bigger is better).",
        "",
    ]
    for prog, res in results.items():
        base = res.get("orig", {}).get("total_median_us")
        lines += [
            f"## {prog}",
            "",
            f"clpy options: `{res.get('clpy_options', '')}`; rounds measured: "
            f"{res.get('rounds_done', info['rounds'])}",
            "",
            "| build | total (median run) | ratio | idle between kernels | host per launch "
            "| per kernel: median launch / first launch |",
            "|---|---|---|---|---|---|",
        ]
        for name, r in res.items():
            if not isinstance(r, dict) or name == "cuda":
                continue
            if "error" in r:
                lines.append(f"| {name} | error: {r['error'][:120]} | | | | |")
                continue
            t = r["total_median_us"]
            ks = "; ".join(
                f"{k} x{v['launches_per_run']:.0f}: {v['median_us']:.1f} / "
                f"{v['first_median_us']:.1f}"
                for k, v in r["kernels"].items()
            )
            rat = f"{base / t:.3f}x" if base else "-"
            lines.append(
                f"| {name} | {t:.1f} | {rat} | {r.get('gap_median_us', 0):.1f} "
                f"| {r.get('host_median_us', 0):.1f} | {ks} |"
            )
        lay = [
            (name, r["addresses"])
            for name, r in res.items()
            if isinstance(r, dict) and r.get("addresses")
        ]
        if lay:
            lines += [
                "",
                "Buffer arguments' device addresses (each kernel's first launch), as MiB from "
                "the run's lowest buffer, first run; *layouts*: how many different relative "
                "layouts the runs had (each with its runs' median total):",
                "",
                "| build | first run | layouts |",
                "|---|---|---|",
            ]
            for name, runs in lay:
                totals = res[name]["totals_us"]
                by: dict[str, list[float]] = {}
                for a, t in zip(runs, totals):
                    by.setdefault(hosts.layout(a).split("; ", 1)[-1], []).append(t)
                kinds = "; ".join(
                    f"{len(ts)} runs {statistics.median(ts):.0f} us" for ts in by.values()
                )
                lines.append(f"| {name} | {hosts.layout(runs[0])} | {len(by)}: {kinds} |")
        cuda = res.get("cuda")
        if cuda:
            lines.append("")
            lines.append(
                "CUDA JIT of the PTX: "
                + "; ".join(
                    f"{k}: {v.get('num_regs')} regs, shared {v.get('shared_size_bytes')}, "
                    f"local {v.get('local_size_bytes')}"
                    if isinstance(v, dict)
                    else f"{k}: {v}"
                    for k, v in cuda.items()
                )
            )
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    import pyopencl as cl

    from benchmarks.programs.gpu_mode import _cl_device

    ap = argparse.ArgumentParser(prog="python -m benchmarks.programs.kernel_diag")
    ap.add_argument("--platform", default="nvidia")
    ap.add_argument("--programs", default="pathfinder,backprop")
    ap.add_argument("--size", default="gpu")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument(
        "--builds",
        default=os.environ.get("KDIAG_BUILDS", ""),
        help="comma-separated build names or fnmatch patterns (default: all; env KDIAG_BUILDS)",
    )
    ap.add_argument(
        "--shuffle",
        action="store_true",
        default=os.environ.get("KDIAG_SHUFFLE", "") not in ("", "0"),
        help="run the builds between orig and orig_b in a new order every round (a build's "
        "time may depend on what ran before it); env KDIAG_SHUFFLE=1",
    )
    ap.add_argument(
        "--budget",
        type=float,
        default=float(os.environ.get("KDIAG_BUDGET", "0") or 0),
        help="seconds for all programs together (0: none): a program stops after the round "
        "that would overrun its share (at least 1 round); env KDIAG_BUDGET",
    )
    a = ap.parse_args(argv)
    select = [b.strip() for b in a.builds.split(",") if b.strip()] or None
    d = _cl_device(a.platform)
    ctx = cl.Context([d])
    queue = cl.CommandQueue(ctx, d, properties=cl.command_queue_properties.PROFILING_ENABLE)
    RUNTIME.find(queue)
    info = machine()
    info.update(
        device=d.name,
        platform=d.platform.name,
        driver=d.driver_version,
        size=a.size,
        rounds=a.rounds,
        builds=a.builds or "all",
        shuffled=a.shuffle,
    )
    global PTX_DIR
    if a.out is not None:
        PTX_DIR = a.out / "ptx_kdiag"
    undo = hosts.record_names()
    undo_buffers = hosts.patch_buffers()
    results: dict[str, Any] = {}
    t0 = time.perf_counter()
    try:
        names = [n.strip() for n in a.programs.split(",") if n.strip()]
        for name in names:
            m = load(name)
            print(f"kernel_diag: {m.NAME}", flush=True)
            left = len(names) - names.index(name)
            share = (a.budget - (time.perf_counter() - t0)) / left if a.budget > 0 else None
            results[m.NAME] = diagnose(m, ctx, queue, a.rounds, a.size, select, a.shuffle, share)
            results[m.NAME]["wall_s"] = round(time.perf_counter() - t0, 1)
            print(f"kernel_diag: {m.NAME} done at {time.perf_counter() - t0:.0f} s", flush=True)
            md = markdown(info, results)
            if a.out is not None:
                a.out.mkdir(parents=True, exist_ok=True)
                stem = f"kernel_diag_{slug(d.name)}"
                (a.out / f"{stem}.json").write_text(
                    json.dumps({"machine": info, "programs": results}, indent=1, default=float)
                )
                (a.out / f"{stem}.md").write_text(md)
    finally:
        undo_buffers()
        undo()
    print(markdown(info, results))
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())
