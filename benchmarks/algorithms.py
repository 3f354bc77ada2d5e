"""clpy.algorithms side by side with PyOpenCL, CuPy (when importable) and a device-to-device
copy, in one process, on the same device (issue 13).

For each size (float32 unless said): reduce (sum), inclusive scan (+), histogram (256 bins of
uint8 and int32 inputs), argmax, and sort (sizes <= 2^24). Each timing is the median of
``--repeat`` runs after warm-up, by synchronized wall clock (``queue.finish()`` /
``cupy.cuda.Device().synchronize()`` around every run), results included (a reduction's scalar
comes back to the host, as the library calls return it). Bandwidth: bytes read (+ written for
scan and copy) per second; ``x copy`` = that bandwidth / the copy's read + write bandwidth.

    python -m benchmarks.algorithms --device opencl:nvidia --sizes 20,24,28
    python -m benchmarks.algorithms --device opencl:pocl --sizes 16 --repeat 5   # make bench
    python -m benchmarks.algorithms --only reduce,scan --sizes 28   # a subset

Writes algorithms_<device>.json and .md to ``--out-dir`` ($OUT if set, else
benchmarks/results). On the GPU host: scripts/gpu_algorithms.sh (same arguments).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import clpy  # noqa: E402
import clpy.algorithms as alg  # noqa: E402
from clpy.algorithms import _core, scans, sorting  # noqa: E402
from clpy.algorithms._core import Tuning, as_input, element_type, resolve_op, tuning  # noqa: E402
from clpy.algorithms.reductions import index_type  # noqa: E402
from clpy.types import catalog as C  # noqa: E402


def timed(fn: Callable[[], Any], sync: Callable[[], None], repeat: int, warm: int = 3) -> float:
    for _ in range(warm):
        fn()
    sync()
    ts = []
    for _ in range(repeat):
        sync()
        t = time.perf_counter()
        fn()
        sync()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def _cupy() -> Any:
    try:
        import cupy as cp

        cp.cuda.runtime.getDeviceCount()
        return cp
    except Exception:  # noqa: BLE001 - no CuPy, or no CUDA device
        return None


TILE_KEYS = (
    "scan_wg",
    "scan_vecs",
    "scan_wgscan",
    "scan_lb",
    "scan_loop",
    "scan_read",
    "scan_lookback",
    "scan_spec",
    "scan_maxreg",
    "scan_layout",
)
BATCH_NOTE = (
    "10 back-to-back calls without reading the result, between two synchronizations "
    "(the device's time, the host's launch cost hidden)"
)
ALGORITHMS = ("reduce", "scan", "argmax", "histogram", "sort")


def device_only(fn: Callable[[], Any], sync: Callable[[], None], batch: int = 10) -> float:
    """Seconds per call of ``fn`` (enqueues only, no result read) over ``batch`` back-to-back
    calls between two synchronizations: the device time with the host's launch cost hidden
    behind the previous launch (median of 5 batches)."""
    fn()
    sync()
    ts = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(batch):
            fn()
        sync()
        ts.append((time.perf_counter() - t) / batch)
    return statistics.median(ts)


def bench_size(
    dev: Any, n: int, repeat: int, cp: Any, only: set[str], do_sort: bool
) -> list[dict[str, Any]]:
    import pyopencl as cl
    import pyopencl.array as cla
    from pyopencl.reduction import ReductionKernel
    from pyopencl.scan import InclusiveScanKernel

    from clpy.algorithms import reductions

    q = dev.queue
    ctx = dev.context
    rng = np.random.default_rng(0)
    host = rng.random(n, dtype=np.float32)
    x = cla.to_device(q, host)
    y = cla.empty_like(x)
    sync = q.finish
    rows: list[dict[str, Any]] = []

    def row(algo: str, impl: str, sec: float, nbytes: int, **kw: Any) -> None:
        rows.append(
            {
                "algorithm": algo,
                "impl": impl,
                "n": n,
                "seconds": sec,
                "GBps": nbytes / sec / 1e9,
                **kw,
            }
        )
        print(
            f"  2^{int(np.log2(n))} {algo:16s} {impl:34s} {nbytes / sec / 1e9:8.0f} GB/s "
            f"{sec * 1e6:9.1f} us",
            flush=True,
        )

    t = timed(lambda: cl.enqueue_copy(q, y.data, x.data, byte_count=4 * n), sync, repeat)
    row("copy", "OpenCL enqueue_copy", t, 8 * n)
    inp = as_input(x, None)
    f32 = element_type(inp.dtype, inp.shape, "+")
    plus = resolve_op("+", f32)
    if "reduce" in only:
        got = float(alg.reduce(x, "+"))
        want = float(host.sum(dtype=np.float64))
        assert abs(got - want) <= 1e-3 * abs(want) + 1, (got, want)
        row("reduce", "clpy", timed(lambda: alg.reduce(x, "+"), sync, repeat), 4 * n)
        for name, bound, pinned, path in REDUCE_PATHS:  # the other ways, same run
            saved = (reductions.BOUND_LAUNCH, reductions.PINNED_RESULT, reductions.RESULT_PATH)
            reductions.BOUND_LAUNCH, reductions.PINNED_RESULT = bound, pinned
            reductions.RESULT_PATH = path
            try:
                assert abs(float(alg.reduce(x, "+")) - want) <= 1e-3 * abs(want) + 1
                sec = timed(lambda: alg.reduce(x, "+"), sync, repeat)
            finally:
                reductions.BOUND_LAUNCH, reductions.PINNED_RESULT = saved[:2]
                reductions.RESULT_PATH = saved[2]
            row("reduce", f"clpy {name}", sec, 4 * n)
        row(
            "reduce",
            "clpy device only",
            device_only(lambda: reductions.reduce_on(inp, f32, plus), sync),
            4 * n,
        )
        row("reduce", "pyopencl cla.sum", timed(lambda: cla.sum(x).get(), sync, repeat), 4 * n)
        rk = ReductionKernel(
            ctx,
            np.float32,
            neutral="0",
            reduce_expr="a+b",
            map_expr="x[i]",
            arguments="__global const float *x",
        )
        row(
            "reduce",
            "pyopencl ReductionKernel",
            timed(lambda: rk(x, queue=q).get(), sync, repeat),
            4 * n,
        )
    if "scan" in only:
        alg.scan(x, out=y)
        yh = y.get()
        ref = np.cumsum(host, dtype=np.float64)
        assert np.allclose(yh[-1], ref[-1], rtol=1e-3), (yh[-1], ref[-1])
        assert np.allclose(yh[: min(n, 4096)], ref[: min(n, 4096)], rtol=1e-4, atol=1e-2)
        row("scan", "clpy", timed(lambda: alg.scan(x, out=y), sync, repeat), 8 * n)
        bound = scans.BOUND_SCAN
        scans.BOUND_SCAN = not bound
        try:  # the other host path: a bound launch, or every call through the launcher
            sec = timed(lambda: alg.scan(x, out=y), sync, repeat)
        finally:
            scans.BOUND_SCAN = bound
        row("scan", "clpy through the launcher" if bound else "clpy bound launch", sec, 8 * n)
        row(
            "scan",
            "clpy device only",
            device_only(lambda: scans.scan_on(inp, y, f32, plus, True), sync),
            8 * n,
        )
        old_tile = dataclasses.replace(tuning(dev), scan_vecs=0)  # session 2's tile kernel
        row(
            "scan",
            "clpy local-memory tile, device only",
            device_only(lambda: scans.scan_on(inp, y, f32, plus, True, old_tile), sync),
            8 * n,
        )
        rts = dataclasses.replace(tuning(dev), lookback=False)  # three launches, 12 B/element
        row(
            "scan",
            "clpy reduce-then-scan, device only",
            device_only(lambda: scans.scan_on(inp, y, f32, plus, True, rts), sync),
            8 * n,
        )
        isk = InclusiveScanKernel(ctx, np.float32, "a+b", neutral="0")
        row(
            "scan",
            "pyopencl InclusiveScanKernel",
            timed(lambda: isk(x, y, queue=q), sync, repeat),
            8 * n,
        )
    if "argmax" in only:
        assert alg.argmax(x) == int(np.argmax(host))
        row("argmax", "clpy", timed(lambda: alg.argmax(x), sync, repeat), 4 * n)
    hb = (host * 256).astype(np.uint8)
    hi = hb.astype(np.int32)
    if "histogram" in only:
        xb, xi = cla.to_device(q, hb), cla.to_device(q, hi)
        want_h = np.bincount(hb, minlength=256)
        assert (alg.histogram(xb, 256, range=(0, 256)).get() == want_h).all()
        assert (alg.histogram(xi, 256, range=(0, 256)).get() == want_h).all()
        row(
            "histogram uint8",
            "clpy",
            timed(lambda: alg.histogram(xb, 256, range=(0, 256)), sync, repeat),
            n,
        )
        row(
            "histogram int32",
            "clpy",
            timed(lambda: alg.histogram(xi, 256, range=(0, 256)), sync, repeat),
            4 * n,
        )
    kh = (host * 2**31).astype(np.uint32)
    if do_sort:
        keys = cla.to_device(q, kh)
        assert (alg.sort(keys).get() == np.sort(kh)).all()
        row(
            "sort uint32",
            "clpy",
            timed(lambda: alg.sort(keys), sync, max(3, repeat // 4), 1),
            8 * n,
        )
    if cp is not None:
        csync = cp.cuda.Device().synchronize
        cx = cp.asarray(host)
        cy = cp.empty_like(cx)
        row("copy", "cupy copy", timed(lambda: cy.__setitem__(Ellipsis, cx), csync, repeat), 8 * n)
        if "reduce" in only:
            row("reduce", "cupy sum", timed(lambda: cp.sum(cx).item(), csync, repeat), 4 * n)
        if "scan" in only:
            row("scan", "cupy cumsum", timed(lambda: cp.cumsum(cx, out=cy), csync, repeat), 8 * n)
        if "argmax" in only:
            row("argmax", "cupy argmax", timed(lambda: cp.argmax(cx).item(), csync, repeat), 4 * n)
        if "histogram" in only:
            cb, ci = cp.asarray(hb), cp.asarray(hi)
            row(
                "histogram uint8",
                "cupy bincount",
                timed(lambda: cp.bincount(cb, minlength=256), csync, repeat),
                n,
            )
            row(
                "histogram int32",
                "cupy bincount",
                timed(lambda: cp.bincount(ci, minlength=256), csync, repeat),
                4 * n,
            )
        if do_sort:
            ck = cp.asarray(kh)
            row(
                "sort uint32",
                "cupy sort",
                timed(lambda: cp.sort(ck), csync, max(3, repeat // 4), 1),
                8 * n,
            )
        cp.get_default_memory_pool().free_all_blocks()
    return rows


# Reduce's other host paths, measured beside the default (bound launch, blocking read into
# page-locked memory): (row name, BOUND_LAUNCH, PINNED_RESULT, RESULT_PATH).
REDUCE_PATHS = (
    ("launcher + pageable read (session 2)", False, False, "read"),
    ("bound + pageable read", True, False, "read"),
    ("bound + pinned, read then wait", True, True, "wait"),
    ("bound + pinned, poll", True, True, "poll"),
    ("bound + mapped result", True, False, "map"),
)
# The scan sweep, in phases of falling priority (configurations run only while the sweep's
# time budget lasts): (scan_wgscan, or "striped" for scan_striped.py's tile; scan_loop;
# work-group sizes; 4-vectors per work-item; look-back modes; speculative loads), with the
# device's default look-back reads. Between the first grid and the rest:
# -cl-nv-maxrregcount for the best so far (NVIDIA); at the end the status-word reads and the
# serial look-back's width for the best. Looping groups (scan_loop > 0) ran at 0.7-1.4 TB/s
# on the H100: one configuration stays as a reference.
_Ints = tuple[int, ...]
_Grid = tuple[tuple[str, int, _Ints, _Ints, tuple[str, ...], tuple[bool, ...]], ...]
MODES = ("serial", "window", "early")
SWEEP_FIRST: _Grid = (
    ("native", 0, (512,), (4,), MODES, (False, True)),
    ("rake", 0, (512,), (4,), MODES, (False, True)),
    ("striped", 0, (512,), (4,), ("serial", "early"), (False, True)),
)
SWEEP_GRID: _Grid = (
    # CUB's float32 tile on sm90 (cub/device/dispatch/tuning/tuning_scan.cuh): 128 x 24
    ("rake", 0, (128, 256), (6,), ("serial", "early"), (True,)),
    ("striped", 0, (128, 256, 1024), (4,), ("serial", "early"), (True,)),
    ("native", 0, (128,), (6, 4), ("serial", "early"), (True,)),
    ("rake", 0, (256, 384, 1024), (4,), ("serial", "early"), (True,)),
    ("native", 0, (256, 384), (4,), ("serial", "early"), (True,)),
    ("rake", 0, (512,), (5, 3), ("serial", "early"), (True,)),
    ("native", 0, (256, 384, 512), (5,), ("serial", "early"), (True,)),
    ("native", 0, (768,), (4,), ("serial", "early"), (False, True)),
    ("local", 0, (512,), (4,), MODES, (True,)),
    ("native", 2, (512,), (4,), ("serial",), (False,)),
)
SWEEP_LB = (1, 2, 8)  # serial look-back: status words per step, for the best
SWEEP_READS = ("rmw", "load")  # how status words are read, for the best
SWEEP_MAXREG = (32, 40, 48, 64)  # -cl-nv-maxrregcount, for the best (NVIDIA)
SWEEP_SECONDS = 170.0  # no new configuration after this many seconds (GPU run limit: 300 s)


def _scan_ok(dev: Any, tn: Tuning, x: Any, y: Any, ref: np.ndarray) -> str:
    """'' when the scan with ``tn`` is right (float32 at sampled places, int32 exactly at an
    odd length), else what is wrong."""
    import pyopencl.array as cla

    inp = as_input(x, None)
    t = element_type(inp.dtype, inp.shape, "+")
    scans.scan_on(inp, y, t, resolve_op("+", t), True, tn)
    got = y.get()
    idx = np.unique(np.r_[np.arange(min(4096, len(ref))), np.linspace(0, len(ref) - 1, 4096)])
    idx = idx.astype(np.int64)
    if not np.allclose(got[idx], ref[idx], rtol=1e-3, atol=1e-2):
        return "float32 scan differs from NumPy"
    hi = np.random.default_rng(2).integers(-9, 10, (1 << 20) + 3).astype(np.int32)
    xi = cla.to_device(dev.queue, hi)
    yi = cla.empty_like(xi)
    ii = as_input(xi, None)
    ti = element_type(ii.dtype, ii.shape, "+")
    for incl in (True, False):
        scans.scan_on(ii, yi, ti, resolve_op("+", ti), incl, tn)
        want = np.cumsum(hi, dtype=np.int32)
        if not incl:
            want = np.r_[np.int32(0), want[:-1]]
        if not np.array_equal(yi.get(), want):
            return f"int32 {'inclusive' if incl else 'exclusive'} scan of 2^20 + 3 differs"
    return ""


def sweep(
    dev: Any, n: int, repeat: int, do_sort: bool, seconds: float = SWEEP_SECONDS
) -> list[dict[str, Any]]:
    """The single-pass scan's tile (device only, float32 +, n elements) over work-group
    size, 4-vectors per work-item and work-group scan ("native" collective or "local"),
    then the look-back width for the best; each configuration checked against NumPy first.
    Prints the best (the tuning to put in _core.SCAN_TILES); sort's tile budget when
    ``do_sort``."""
    import pyopencl.array as cla

    q = dev.queue
    host = np.random.default_rng(0).random(n, dtype=np.float32)
    ref = np.cumsum(host, dtype=np.float64)
    x = cla.to_device(q, host)
    y = cla.empty_like(x)
    inp = as_input(x, None)
    t = element_type(inp.dtype, inp.shape, "+")
    o = resolve_op("+", t)
    base = tuning(dev)
    out: list[dict[str, Any]] = []

    skipped = [0]

    def one(**kw: Any) -> None:
        if time.perf_counter() - t0 > seconds:  # the budget is spent: the rest another time
            skipped[0] += 1
            return
        tn = dataclasses.replace(base, lookback=True, **kw)
        rec: dict[str, Any] = {"n": n, **kw}
        try:
            bad = _scan_ok(dev, tn, x, y, ref)
            sec = device_only(lambda: scans.scan_on(inp, y, t, o, True, tn), q.finish)
            rec.update(GBps=8 * n / sec / 1e9, error=bad or None)
            idx = index_type(n, 4 * tn.scan_wg * tn.scan_vecs)
            k, _ = scans.tile_kernel(C.float_, o, idx, tn, True, True)
            rec["registers"] = nv_build_report(dev, k, tn.scan_maxreg).get("registers")
        except Exception as e:  # noqa: BLE001 - a configuration the device rejects
            rec.update(GBps=0.0, error=f"{type(e).__name__}: {str(e)[:200]}")
        out.append(rec)
        print(
            f"  scan sweep {' '.join(f'{k}={v}' for k, v in kw.items())}: "
            f"{rec['GBps']:.0f} GB/s{' ' + rec['error'] if rec['error'] else ''}"
            f"{' (' + str(rec.get('registers')) + ' registers)' if rec.get('registers') else ''}"
            f" [{time.perf_counter() - t0:.0f} s]",
            flush=True,
        )

    t0 = time.perf_counter()

    def grid(g: _Grid) -> None:
        for wgscan, loop, wgs, vecss, modes, specs in g:
            for wg in wgs:
                for vecs in vecss:
                    for mode in modes:
                        for spec in specs:
                            striped = wgscan == "striped"  # its own (raking) scan
                            one(
                                scan_wg=wg,
                                scan_vecs=4 if striped else vecs,
                                scan_wgscan="rake" if striped else wgscan,
                                scan_lb=base.scan_lb,
                                scan_loop=loop,
                                scan_read=base.scan_read,
                                scan_lookback=mode,
                                scan_spec=spec,
                                scan_layout="striped" if striped else "blocked",
                            )

    def tile_of(r: dict[str, Any]) -> dict[str, Any]:
        return {k: r.get(k, getattr(base, k)) for k in TILE_KEYS}

    def best() -> dict[str, Any] | None:
        good = [r for r in out if not r["error"]]
        return max(good, key=lambda r: r["GBps"]) if good else None

    def maxregs() -> None:
        b = best()
        if b is not None and "nvidia" in dev.name.lower():  # a compiler option of NVIDIA's
            for maxreg in SWEEP_MAXREG:
                one(**{**tile_of(b), "scan_maxreg": maxreg})

    def reads_and_widths() -> None:
        b = best()
        if b is None:
            return
        for read in SWEEP_READS:
            if read != b["scan_read"]:
                one(**{**tile_of(b), "scan_read": read})
        if b["scan_lookback"] == "serial":
            for lb in SWEEP_LB:
                one(**{**tile_of(b), "scan_lb": lb})

    phases = (
        ("first grid", lambda: grid(SWEEP_FIRST)),
        ("register caps", maxregs),
        ("grid", lambda: grid(SWEEP_GRID)),
        ("reads and look-back widths", reads_and_widths),
    )
    for _name, phase in phases:
        phase()
    if skipped[0]:
        print(f"  scan sweep: {skipped[0]} configurations skipped (budget spent)", flush=True)
    b = best()
    if b is not None:
        print(f"  scan sweep best ({time.perf_counter() - t0:.0f} s): {b}", flush=True)
    if not do_sort:
        return out
    ns = min(n, 1 << 24)
    keys = cla.to_device(q, np.random.default_rng(1).integers(0, 2**32, ns, dtype=np.uint32))
    default = sorting.TILE_BYTES
    try:
        for budget in (4096, 8192, 16384, 32768):
            sorting.TILE_BYTES = budget
            sec = timed(lambda: alg.sort(keys), q.finish, 5, 1)
            out.append({"sort_tile_bytes": budget, "n": ns, "GBps": 8 * ns / sec / 1e9})
            print(
                f"  sort sweep 2^{ns.bit_length() - 1} tile bytes {budget}: "
                f"{8 * ns / sec / 1e9:.0f} GB/s",
                flush=True,
            )
    finally:
        sorting.TILE_BYTES = default
    return out


def adopt_best(dev: Any, swept: list[dict[str, Any]]) -> None:
    """Use the fastest correct tile of the sweep as ``dev``'s scan tuning in this process
    (_core.SCAN_TILES, the entry for its vendor), and say so: the value to commit there."""
    good = [r for r in swept if "scan_wg" in r and not r["error"]]
    if not good:
        return
    best = max(good, key=lambda r: r["GBps"])
    info = dev.info
    hay = f"{info.platform} {info.platform_vendor}".lower()
    key = next((k for k in _core.SCAN_TILES if k in hay), info.platform.lower())
    base = tuning(dev)
    _core.SCAN_TILES[key] = {k: best.get(k, getattr(base, k)) for k in TILE_KEYS}
    _core._tuning_for.cache_clear()
    print(f"  scan tile for {key!r} in this run: {_core.SCAN_TILES[key]}", flush=True)


def ptx_report(dev: Any, out: Path) -> dict[str, Any]:
    """The default float32 scan tile kernel as the driver built it (PTX on NVIDIA) into
    out/scan_tiles.ptx, with counts of the instructions that matter (vector accesses,
    spills to local memory, barriers, atomics) and the kernel's private/local memory."""
    import pyopencl as cl

    tn = tuning(dev)
    k, _ = scans.tile_kernel(C.float_, resolve_op("+", C.float_), C.int_, tn, True, True)
    plans = [p for p in k.launches.plans.values() if hasattr(p, "kernel")]
    if not plans:
        print("  ptx: the default scan kernel was not launched", flush=True)
        return {}
    knl = plans[0].kernel
    text = knl.program.get_info(cl.program_info.BINARIES)[0].decode(errors="replace")
    out.mkdir(parents=True, exist_ok=True)
    (out / "scan_tiles.ptx").write_text(text)
    pats = (
        "ld.global.nc.v4",
        "st.global.v4",
        "ld.global.f32",
        "st.global.f32",
        "ld.local",
        "st.local",
        "bar.sync",
        "atom.",
        "shfl",
        "ld.shared",
        "st.shared",
    )
    rep: dict[str, Any] = {p: text.count(p) for p in pats}
    info = cl.kernel_work_group_info
    for name in ("PRIVATE_MEM_SIZE", "LOCAL_MEM_SIZE"):
        try:
            rep[name] = int(knl.get_work_group_info(getattr(info, name), dev.cl_device))
        except Exception as e:  # noqa: BLE001 - a query the driver does not answer
            rep[name] = repr(e)[:80]
    rep.update(nv_build_report(dev, k, tn.scan_maxreg))
    print(f"  ptx of the default scan kernel ({tn}): {rep}", flush=True)
    return rep


def nv_build_report(dev: Any, k: Any, maxreg: int = 0) -> dict[str, Any]:
    """ptxas's account of a launched clpy kernel on NVIDIA (registers per work-item, spills,
    shared memory: they set how many groups stay resident), from a rebuild of the plan's
    source with ``-cl-nv-verbose``; {} elsewhere or when the driver says nothing."""
    if "nvidia" not in dev.name.lower():
        return {}
    import pyopencl as cl

    cap = f"-cl-nv-maxrregcount={maxreg}"
    plans = [
        p
        for p in k.launches.plans.values()
        if hasattr(p, "options") and (cap in p.options) == (maxreg > 0)
    ]
    if not plans:
        return {}
    p = plans[0]
    try:
        prg = cl.Program(dev.context, p.source).build(
            options=f"{p.options} -cl-nv-verbose", devices=[dev.cl_device]
        )
        log = prg.get_build_info(dev.cl_device, cl.program_build_info.LOG)
    except Exception as e:  # noqa: BLE001 - a diagnostic only
        return {"ptxas": f"{type(e).__name__}: {str(e)[:120]}"}
    m = re.search(r"Used (\d+) registers", log)
    return {"registers": int(m.group(1)) if m else None, "ptxas": " ".join(log.split())[-240:]}


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| n | algorithm | implementation | GB/s | x copy | clpy speed-up over this |",
        "| --- | --- | --- | ---: | ---: | ---: |",
    ]
    for n in sorted({r["n"] for r in rows}):
        rs = [r for r in rows if r["n"] == n]
        copy = next(r for r in rs if r["impl"] == "OpenCL enqueue_copy")["GBps"]
        for r in rs:
            mine = next(
                (c for c in rs if c["algorithm"] == r["algorithm"] and c["impl"] == "clpy"), None
            )
            own = r["impl"].startswith("clpy")
            rel = f"{r['seconds'] / mine['seconds']:.2f}x" if mine and not own else ""
            lines.append(
                f"| 2^{int(np.log2(n))} | {r['algorithm']} | {r['impl']} | "
                f"{r['GBps']:.0f} | {r['GBps'] / copy:.2f} | {rel} |"
            )
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="opencl")
    ap.add_argument("--sizes", default="20,24,28", help="log2 sizes, comma-separated")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument(
        "--only",
        default=",".join(ALGORITHMS),
        help=f"comma-separated subset of {','.join(ALGORITHMS)} (copy always runs)",
    )
    ap.add_argument("--sweep", action="store_true", help="also sweep the scan's tuning")
    ap.add_argument(
        "--ptx", action="store_true", help="write the scan kernel's device code, with counts"
    )
    ap.add_argument(
        "--sweep-seconds",
        type=float,
        default=SWEEP_SECONDS,
        help="no new scan sweep configuration after this many seconds",
    )
    results = str(Path(__file__).parent / "results")
    ap.add_argument(
        "--out-dir",
        default=os.environ.get("OUT") or results,
        help="where the .json and .md go (default: $OUT, else benchmarks/results)",
    )
    a = ap.parse_args()
    only = {w.strip() for w in a.only.split(",") if w.strip()}
    if not only <= set(ALGORITHMS):
        ap.error(
            f"--only: unknown {', '.join(sorted(only - set(ALGORITHMS)))}; "
            f"choose from {', '.join(ALGORITHMS)}"
        )
    dev = clpy.get_device(a.device)
    if dev.is_sim:
        raise SystemExit("benchmarks.algorithms compares OpenCL libraries: pick an OpenCL device")
    cp = _cupy() if "nvidia" in dev.name.lower() else None
    print(
        f"device: {dev.name} ({dev.description}); default tuning {tuning(dev)}; "
        f"CuPy: {'yes' if cp is not None else 'no'}",
        flush=True,
    )
    result: dict[str, Any] = {"device": dev.name, "description": dev.description}
    if a.sweep:  # first, so that the tables below use the tile it picks
        result["scan_sweep"] = sweep(
            dev,
            1 << max(int(s) for s in a.sizes.split(",")),
            a.repeat,
            "sort" in only,
            a.sweep_seconds,
        )
        adopt_best(dev, result["scan_sweep"])
        print(f"  tuning from here on (the sweep's best tile): {tuning(dev)}", flush=True)
    rows: list[dict[str, Any]] = []
    for s in a.sizes.split(","):
        n = 1 << int(s)
        # sort at 2^28 only when asked for by name (--only sort): it needs 5 arrays of n
        do_sort = "sort" in only and (int(s) <= 24 or a.only != ",".join(ALGORITHMS))
        rows += bench_size(dev, n, a.repeat, cp, only, do_sort)
        print(table([r for r in rows if r["n"] == n]), flush=True)
    result.update(tuning=repr(tuning(dev)), rows=rows)
    if a.ptx and "scan" in only:
        result["scan_ptx"] = ptx_report(dev, Path(a.out_dir))
    slug = re.sub(r"[^a-z0-9]+", "_", dev.name.lower()).strip("_")[:60]
    out = Path(a.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"algorithms_{slug}.json").write_text(json.dumps(result, indent=1) + "\n")
    md = (
        f"# clpy.algorithms on {dev.name}\n\n{dev.description}\n\n"
        f"Median of {a.repeat} runs, float32 unless said; `python -m benchmarks.algorithms "
        f"--device {a.device} --sizes {a.sizes} --only {a.only}"
        f"{' --sweep' if a.sweep else ''}{' --ptx' if a.ptx else ''}`. "
        '"clpy device only": '
        f"{BATCH_NOTE}.\n\n{table(rows)}\n"
    )
    (out / f"algorithms_{slug}.md").write_text(md)
    print(f"wrote {out}/algorithms_{slug}.json and .md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
