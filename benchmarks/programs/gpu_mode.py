"""``--mode gpu``: per program on one OpenCL GPU, same process, same inputs:

- kernel time: the sum of the OpenCL profiling intervals (end - start) of every launch, clpy's
  kernels and the hand-written original kernels, both on one profiling queue; and again with
  every run's launches queued before the first starts (``common.GATE``: the kernels' own
  time, without what the GPU's idling between short kernels adds);
- whole program (wall clock, warm): the original-style pyopencl host, clpy with
  ``clpy.DeviceArray``s, clpy with NumPy arguments (every launch copies in and back);
- the link's bandwidth, measured here: ``enqueue_copy`` host-to-device and device-to-host of a
  pinned (``ALLOC_HOST_PTR``, mapped) and a pageable (NumPy) host buffer.
"""

from __future__ import annotations

import random
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

import clpy
from benchmarks.programs import common, diagnostics, load
from benchmarks.programs.common import check
from benchmarks.programs.report import fmt_s, fmt_x, geomean, loud, machine, ratio, slug, timed
from benchmarks.programs.report import write as write_results
from clpy.runtime.devices import RUNTIME


def _cl_device(platform: str) -> Any:
    import pyopencl as cl

    want = platform.lower()
    devs = [d for p in cl.get_platforms() if want in p.name.lower() for d in p.get_devices()]
    if not devs:
        names = [p.name for p in cl.get_platforms()]
        raise SystemExit(f"no OpenCL platform matching {platform!r}: {names}")
    gpus = [d for d in devs if d.type & cl.device_type.GPU]
    return (gpus or devs)[0]


def bandwidth(ctx: Any, queue: Any, nbytes: int, repeat: int = 5) -> dict[str, float]:
    """GB/s of enqueue_copy to and from one device buffer, pinned and pageable host memory."""
    import pyopencl as cl

    mf = cl.mem_flags
    dbuf = cl.Buffer(ctx, mf.READ_WRITE, nbytes)
    pinned_buf = cl.Buffer(ctx, mf.READ_WRITE | mf.ALLOC_HOST_PTR, nbytes)
    pinned, _ = cl.enqueue_map_buffer(
        queue, pinned_buf, cl.map_flags.READ | cl.map_flags.WRITE, 0, (nbytes,), np.uint8
    )
    pageable = np.ones(nbytes, np.uint8)
    pinned[:] = 1
    out: dict[str, float] = {"bytes": float(nbytes)}
    for label, host in (("pinned", pinned), ("pageable", pageable)):
        for direction in ("h2d", "d2h"):
            ts = []
            for _ in range(repeat + 1):
                queue.finish()
                t0 = time.perf_counter()
                if direction == "h2d":
                    cl.enqueue_copy(queue, dbuf, host, is_blocking=True)
                else:
                    cl.enqueue_copy(queue, host, dbuf, is_blocking=True)
                ts.append(time.perf_counter() - t0)
            out[f"{label}_{direction}_GBps"] = nbytes / statistics.median(ts[1:]) / 1e9
    del pinned
    return out


# A program whose kernels take less than SHORT_S a run gets SHORT_ROUNDS times the runs: its
# run-to-run spread is a few percent (pathfinder's 25 launches of ~20 µs: runs of ~435 or
# ~467 µs under either host, session 9), as large as the differences measured
SHORT_S = 5e-3
SHORT_ROUNDS = 3


def _kernel_seconds(events: list[Any]) -> float:
    return sum((e.profile.end - e.profile.start) for e in events) * 1e-9


def kernel_time(m: Any, what: str, ref: Any, repeat: int, fn: Any) -> dict[str, Any]:
    """Median over runs of the summed kernel intervals of one whole program."""
    return kernel_times(m, ref, repeat, {what: (what, fn)})[what]


def kernel_times(
    m: Any, ref: Any, repeat: int, builds: dict[str, tuple[str, Any]]
) -> dict[str, dict[str, Any]]:
    """``kernel_time`` of several builds (key -> (what, fn)), run in turn round by round (a
    warm-up round first), in a new order every round, so that clock or cache drift over the
    measurement and a build's place in the round hit each alike."""
    sums: dict[str, list[float]] = {k: [] for k in builds}
    rounds = repeat
    firsts: dict[str, list[float]] = {k: [] for k in builds}  # first launch of a run, us
    rest: dict[str, list[float]] = {k: [] for k in builds}  # every later launch, us
    launches: dict[str, int] = {}
    out: dict[str, dict[str, Any]] = {}
    i = 0
    while i <= rounds:
        # a new order every round: the build that runs first in a round measured ~3% faster
        # than the same build run last (nw's original, kernel_diag_h100_s10_static.md)
        order = list(builds.items())
        random.Random(i).shuffle(order)
        for key, (what, fn) in order:
            if key in out:  # failed
                continue
            try:
                events: list[Any] = []
                res = fn(events)
                check(m.NAME, what, res, ref, m.TOL)
                if i:
                    sums[key].append(_kernel_seconds(events))
                    ivs = [(e.profile.end - e.profile.start) * 1e-3 for e in events]
                    if ivs:
                        firsts[key].append(ivs[0])
                        rest[key] += ivs[1:]
                elif _kernel_seconds(events) < SHORT_S:
                    rounds = repeat * SHORT_ROUNDS  # short kernels: more runs (see SHORT_S)
                launches[key] = len(events)
            except Exception as e:
                loud(f"ERROR {m.NAME} [{what}]: {type(e).__name__}: {e}")
                out[key] = {"error": f"{type(e).__name__}: {e}"}
        i += 1
    for key in builds:
        if key not in out:
            out[key] = {
                "median_s": statistics.median(sums[key]),
                "rounds": len(sums[key]),
                "runs_s": sums[key],
                "launches": launches[key],
                # the first launch of a run apart (it may meet the tail of the uploads)
                "first_launch_median_us": statistics.median(firsts[key]) if firsts[key] else None,
                "later_launch_median_us": statistics.median(rest[key]) if rest[key] else None,
            }
    return out


def run(
    names: list[str],
    size: str,
    repeat: int,
    platform: str,
    seed: int,
    out_dir: Path | None,
    tag: str | None,
    numpy_cap_s: float,
    bw_bytes: int,
    numpy_reps: int = 1,
) -> int:
    import pyopencl as cl

    d = _cl_device(platform)
    dev = clpy.get_device(d)
    sel = str(dev)
    ctx = cl.Context([d])
    prof = cl.CommandQueue(ctx, d, properties=cl.command_queue_properties.PROFILING_ENABLE)
    plain = cl.CommandQueue(ctx, d)
    info = machine()
    info.update(
        device=d.name,
        platform=d.platform.name,
        driver=d.driver_version,
        opencl=d.version,
        clpy_device=sel,
        size=size,
        repeat=repeat,
        numpy_reps=numpy_reps,
    )
    print(f"device: {d.name} | {d.platform.name} | driver {d.driver_version}", flush=True)
    bw = bandwidth(ctx, plain, bw_bytes)
    info["bandwidth"] = bw
    print("bandwidth GB/s: " + ", ".join(f"{k} {v:.2f}" for k, v in bw.items() if k != "bytes"))
    rows = []
    failed = False
    for name in names:
        r = _one(name, size, repeat, seed, ctx, prof, plain, sel, numpy_cap_s, numpy_reps)
        r["diagnostics"] = diagnostics.collect(load(name), ctx, d, out_dir)
        failed |= any(
            "error" in v for k, v in r.items() if isinstance(v, dict) and k != "diagnostics"
        )
        rows.append(r)
        _write(info, rows, out_dir, tag or d.name, final=False)
    _write(info, rows, out_dir, tag or d.name, final=True)
    return 1 if failed else 0


def _write(
    info: dict[str, Any], rows: list[dict[str, Any]], out_dir: Path | None, tag: str, final: bool
) -> None:
    """Write the results so far (after each program, so a run cut short keeps them)."""
    keys = (
        "kernel_ratio",
        "kernel_ratio_relaxed",
        "kernel_ratio_queued",
        "kernel_ratio_relaxed_queued",
        "kernel_ratio_best",
        "kernel_ratio_orighost",
        "device_ratio",
        "device_ratio_relaxed",
        "numpy_ratio",
    )
    g = {k: geomean([r.get(k) for r in rows]) for k in keys}
    for k in keys:  # the lowest program, for "none below"
        vals = [(r[k], r["program"]) for r in rows if isinstance(r.get(k), float)]
        g["lowest_" + k] = min(vals) if vals else None
    data = {"machine": info, "programs": rows, "geomean": g}
    md = _markdown(info, rows, g)
    paths = write_results(f"gpu_programs_{slug(tag)}", data, md, out_dir)
    if final:
        print("\n" + md)
        for p in paths:
            print(f"wrote {p}")


def _one(
    name: str,
    size: str,
    repeat: int,
    seed: int,
    ctx: Any,
    prof: Any,
    plain: Any,
    sel: str,
    numpy_cap_s: float,
    numpy_reps: int,
) -> dict[str, Any]:
    m = load(name)
    t0 = time.perf_counter()
    inp = m.make_inputs(size, seed)
    ref = m.numpy_reference(inp)
    r: dict[str, Any] = {"program": name, "origin": m.ORIGIN, "kind": m.KIND}
    # The originals are built as their hosts build them: contraction on (the compiler's
    # default) and the spec's 2.5/3-ulp single-precision / and sqrt. clpy's default keeps
    # Python's floats (FP_CONTRACT OFF, correctly rounded / and sqrt where the device has
    # them); the same kernels under the originals' rules: fp_contract=True on a variant
    # built without -cl-fp32-correctly-rounded-divide-sqrt (README "Performance on a GPU").
    relaxed = RUNTIME.find(prof).variant(exact_div_sqrt=False, queue=prof)

    def run_relaxed(ev: list[Any]) -> Any:
        common.LAUNCH_OPTIONS["fp_contract"] = True
        try:
            return m.run_clpy(inp, relaxed, resident=True, events=ev)
        finally:
            common.LAUNCH_OPTIONS.clear()

    def queued(fn: Any) -> Any:
        """``fn`` with its launches held until all are queued (common.GATE)."""

        def run(ev: list[Any]) -> Any:
            common.GATE[:] = [prof]
            try:
                return fn(ev)
            finally:
                common.GATE.clear()

        return run

    # clpy's emitted kernels (the variants clpy's host launched, contraction on) in the
    # original .cl under the original host and its build options: the kernels alone differ
    m.run_clpy(inp, prof, resident=True)  # builds the plans
    swapped = _clpy_in_original(m, prof)
    extra: dict[str, tuple[str, Any]] = {}
    if swapped is not None:
        extra["kernel_clpy_orighost"] = (
            "clpy kernels in the original host",
            lambda ev: _orig(m, inp, ctx, prof, ev, *swapped),
        )
    # interleaved: original, clpy, clpy relaxed, and both queued in every round
    kt = kernel_times(
        m,
        ref,
        repeat,
        {
            "kernel_original": ("original kernels", lambda ev: _orig(m, inp, ctx, prof, ev)),
            "kernel_clpy": (
                "clpy kernels",
                lambda ev: m.run_clpy(inp, prof, resident=True, events=ev),
            ),
            "kernel_clpy_relaxed": ("clpy kernels, originals' float rules", run_relaxed),
            "kernel_original_queued": (
                "original kernels, queued",
                queued(lambda ev: _orig(m, inp, ctx, prof, ev)),
            ),
            "kernel_clpy_queued": (
                "clpy kernels, queued",
                queued(lambda ev: m.run_clpy(inp, prof, resident=True, events=ev)),
            ),
            "kernel_clpy_relaxed_queued": (
                "clpy kernels, originals' float rules, queued",
                queued(run_relaxed),
            ),
            **extra,
        },
    )
    r.update(kt)
    r["whole_original"] = timed(
        m, "original host", ref, repeat, lambda: _orig(m, inp, ctx, plain, None)
    )
    r["whole_clpy_device"] = timed(
        m, "clpy DeviceArray", ref, repeat, lambda: m.run_clpy(inp, sel, resident=True)
    )
    # the same under the originals' floating-point rules (as "same rules" for the kernels):
    # clpy's default exact / and sqrt is a choice, not a cost of its host (nbody: 3x the
    # kernel time on an H100)
    same_rules = RUNTIME.find(sel).variant(exact_div_sqrt=False)

    def whole_relaxed() -> Any:
        common.LAUNCH_OPTIONS["fp_contract"] = True
        try:
            return m.run_clpy(inp, same_rules, resident=True)
        finally:
            common.LAUNCH_OPTIONS.clear()

    r["whole_clpy_device_relaxed"] = timed(
        m, "clpy DeviceArray, originals' float rules", ref, repeat, whole_relaxed
    )
    r["whole_clpy_numpy"] = timed(
        m,
        "clpy NumPy args",
        ref,
        numpy_reps,
        lambda: m.run_clpy(inp, sel, resident=False),
        cap_s=numpy_cap_s,
        warmup=False,
    )
    r["kernel_ratio"] = ratio(r["kernel_original"], r["kernel_clpy"])
    r["kernel_ratio_relaxed"] = ratio(r["kernel_original"], r["kernel_clpy_relaxed"])
    r["kernel_ratio_queued"] = ratio(r["kernel_original_queued"], r["kernel_clpy_queued"])
    r["kernel_ratio_relaxed_queued"] = ratio(
        r["kernel_original_queued"], r["kernel_clpy_relaxed_queued"]
    )
    # the best run of each (queued, same rules): run times of short kernels are bimodal
    # (pathfinder: ~435 or ~467 µs a run under either build, session 9), and a median flips
    # between the modes with how many runs fell in each
    r["kernel_ratio_best"] = _best_ratio(
        r["kernel_original_queued"], r["kernel_clpy_relaxed_queued"]
    )
    if "kernel_clpy_orighost" in r:
        r["kernel_ratio_orighost"] = ratio(r["kernel_original"], r["kernel_clpy_orighost"])
    r["device_ratio"] = ratio(r["whole_original"], r["whole_clpy_device"])
    r["device_ratio_relaxed"] = ratio(r["whole_original"], r["whole_clpy_device_relaxed"])
    r["numpy_ratio"] = ratio(r["whole_original"], r["whole_clpy_numpy"])
    print(
        f"{name:12s} kernels: clpy {fmt_s(r['kernel_clpy'])} original "
        f"{fmt_s(r['kernel_original'])} ({fmt_x(r['kernel_ratio'])}); whole: original "
        f"{fmt_s(r['whole_original'])}, DeviceArray {fmt_s(r['whole_clpy_device'])} "
        f"({fmt_x(r['device_ratio'])}; same rules {fmt_x(r['device_ratio_relaxed'])}), "
        f"NumPy {fmt_s(r['whole_clpy_numpy'])} "
        f"({fmt_x(r['numpy_ratio'])})  [{time.perf_counter() - t0:.0f} s]",
        flush=True,
    )
    return r


def _best_ratio(a: dict[str, Any], b: dict[str, Any]) -> float | None:
    """a's best run / b's best run (None if either failed)."""
    if "error" in a or "error" in b or not b.get("runs_s"):
        return None
    return float(min(a["runs_s"]) / min(b["runs_s"]))


def _orig(
    m: Any,
    inp: Any,
    ctx: Any,
    queue: Any,
    events: Any,
    source: str | None = None,
    options: str = "",
) -> Any:
    """The original host; with ``source``, that OpenCL C in place of the original .cl (built
    with the host's own options and ``options``)."""
    make = None if source is None else common.source_instead(source, options)
    with common.original_programs(make):
        out = m.run_original(inp, ctx, queue, events)
    queue.finish()
    return out


def _clpy_in_original(m: Any, queue: Any) -> tuple[str, str] | None:
    """The original .cl with clpy's emitted kernels in place of its own (the variants clpy
    launched on ``queue``, ``#pragma OPENCL FP_CONTRACT ON`` as the originals are built;
    benchmarks/programs/kdiag_sources.py ORIG_SIGNATURE), and the build options to add to the
    original host's: clpy's own less the correctly rounded / and sqrt (its language version,
    the originals' float rules); None where the program has no such mapping for every
    kernel."""
    from benchmarks.programs import kdiag_hosts, kdiag_sources

    launched: dict[str, str] = {}
    plans = kdiag_hosts.plans(m, queue)
    opts = plans[0].options if plans else ""
    opts = " ".join(o for o in opts.split() if o != "-cl-fp32-correctly-rounded-divide-sqrt")
    for p in plans:
        for v in p._variants.values():
            name = v.kernel.function_name
            if getattr(v, "last", None) is not None or name not in launched:
                launched[name] = kdiag_sources.contract(v.source)
    table = kdiag_sources.ORIG_SIGNATURE.get(m.NAME, {})
    if not launched or any(k not in table for k in launched):
        return None
    try:
        src = kdiag_sources.orig_signature(m, launched)
        return None if src is None else (src, opts)
    except ValueError as e:
        loud(f"ERROR {m.NAME}: clpy's kernels in the original host: {e}")
        return None


def _markdown(info: dict[str, Any], rows: list[dict[str, Any]], g: dict[str, Any]) -> str:
    bw = info["bandwidth"]
    lines = [
        "# Real programs on a GPU: clpy vs the original OpenCL C kernels and hosts",
        "",
        f"{info['device']} ({info['platform']}, {info['opencl']}, driver {info['driver']}), "
        f"host {info['host']} ({info['cpus']} CPUs), {info['date_utc']} UTC; size "
        f"`{info['size']}`; medians of {info['repeat']} runs after a checked warm-up (NumPy "
        f"arguments: {info.get('numpy_reps', 1)} run, no warm-up: the kernels are built by then); "
        "every result checked against NumPy.",
        "",
        f"Link measured here ({bw['bytes'] / 2**20:.0f} MiB, enqueue_copy): pinned "
        f"H2D {bw['pinned_h2d_GBps']:.1f} GB/s, D2H {bw['pinned_d2h_GBps']:.1f} GB/s; pageable "
        f"H2D {bw['pageable_h2d_GBps']:.1f} GB/s, D2H {bw['pageable_d2h_GBps']:.1f} GB/s.",
        "",
        "Kernel time: sum of the profiling intervals of all launches (same queue). Ratios are "
        "original time / clpy time (bigger is better; 1.0 = as fast as the original). "
        "*clpy kernels* use clpy's default floats (no contraction, correctly rounded / and "
        "sqrt: the simulator's bits); *same rules* are the same clpy kernels built with the "
        "originals' floating-point rules (fp_contract=True, "
        "variant(exact_div_sqrt=False)); the whole program with DeviceArrays is timed both "
        "ways too. *queued*: clpy's and the original kernels again, each run's launches held "
        "behind a user event until all are queued, so that no kernel follows an idle GPU "
        "(a host loop's speed changes the profiled time of short kernels: "
        "benchmarks/programs/common.py GATE); the kernels' own time, the same for any host. "
        f"Programs whose kernels take < {SHORT_S * 1e3:.0f} ms a run: {SHORT_ROUNDS}x the "
        "runs. *best runs*: the queued same-rules kernels' fastest run against the queued "
        "originals' fastest (short kernels' run times are bimodal, and a median flips "
        "between the modes). *in original host*: clpy's emitted kernels (contraction on) "
        "put into the original .cl and run by the original host with its build options "
        "and clpy's -cl-std, "
        "against the originals: the same host, buffers and cadence, only the kernels differ "
        "(programs whose every kernel has a mapping of parameters: "
        "benchmarks/programs/kdiag_sources.py ORIG_SIGNATURE).",
        "",
        "| program | launches | kernels clpy | kernels original | kernel ratio | same rules | "
        "ratio | queued: clpy | original | ratio | same rules | ratio | best runs | "
        "in original host | "
        "whole: original host | clpy DeviceArray | ratio | same rules | ratio | "
        "clpy NumPy args | ratio |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        kc = r["kernel_clpy"]
        lines.append(
            f"| {r['program']} | {kc.get('launches', '-')} | {fmt_s(kc)} | "
            f"{fmt_s(r['kernel_original'])} | {fmt_x(r['kernel_ratio'])} | "
            f"{fmt_s(r.get('kernel_clpy_relaxed', {'error': '-'}))} | "
            f"{fmt_x(r.get('kernel_ratio_relaxed'))} | "
            f"{fmt_s(r.get('kernel_clpy_queued', {'error': '-'}))} | "
            f"{fmt_s(r.get('kernel_original_queued', {'error': '-'}))} | "
            f"{fmt_x(r.get('kernel_ratio_queued'))} | "
            f"{fmt_s(r.get('kernel_clpy_relaxed_queued', {'error': '-'}))} | "
            f"{fmt_x(r.get('kernel_ratio_relaxed_queued'))} | "
            f"{fmt_x(r.get('kernel_ratio_best'))} | "
            f"{fmt_x(r.get('kernel_ratio_orighost'))} | "
            f"{fmt_s(r['whole_original'])} | {fmt_s(r['whole_clpy_device'])} | "
            f"{fmt_x(r['device_ratio'])} | "
            f"{fmt_s(r.get('whole_clpy_device_relaxed', {'error': '-'}))} | "
            f"{fmt_x(r.get('device_ratio_relaxed'))} | {fmt_s(r['whole_clpy_numpy'])} | "
            f"{fmt_x(r['numpy_ratio'])} |"
        )
    lines.append(
        f"| **geomean** | | | | **{fmt_x(g['kernel_ratio'])}** | | "
        f"**{fmt_x(g['kernel_ratio_relaxed'])}** | | | **{fmt_x(g['kernel_ratio_queued'])}** "
        f"| | **{fmt_x(g['kernel_ratio_relaxed_queued'])}** | "
        f"**{fmt_x(g['kernel_ratio_best'])}** | **{fmt_x(g['kernel_ratio_orighost'])}** | | | "
        f"**{fmt_x(g['device_ratio'])}** | | **{fmt_x(g['device_ratio_relaxed'])}** | | "
        f"**{fmt_x(g['numpy_ratio'])}** |"
    )

    def low(k: str) -> str:
        v = g.get("lowest_" + k)
        return f"{fmt_x(v[0])} {v[1]}" if v else "-"

    lines.append(
        f"| lowest | | | | {low('kernel_ratio')} | | {low('kernel_ratio_relaxed')} | | | "
        f"{low('kernel_ratio_queued')} | | {low('kernel_ratio_relaxed_queued')} | "
        f"{low('kernel_ratio_best')} | {low('kernel_ratio_orighost')} | | | "
        f"{low('device_ratio')} | | {low('device_ratio_relaxed')} | | {low('numpy_ratio')} |"
    )
    lines += diagnostics.markdown(rows)
    errs = [
        (r["program"], k, v["error"])
        for r in rows
        for k, v in r.items()
        if isinstance(v, dict) and "error" in v
    ]
    if errs:
        lines += ["", "Errors:"] + [f"- {p} [{k}]: {e}" for p, k, e in errs]
    lines += ["", "Sources:"] + [f"- {r['program']}: {r['origin']}" for r in rows]
    return "\n".join(lines) + "\n"
