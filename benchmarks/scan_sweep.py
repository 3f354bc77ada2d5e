"""The single-pass scan's tile sweep of benchmarks/algorithms.py (``--sweep``): work-group
size, 4-vectors per work-item, work-group scan, look-back mode, register caps and look-back
reads, each configuration checked against NumPy first; the best is used
for the rest of the run and printed as the value for clpy/algorithms/_core.py SCAN_TILES."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import numpy as np

import clpy.algorithms as alg
from benchmarks.device_code import nv_build_report
from benchmarks.timing import device_only, timed
from clpy.algorithms import _core, scans, sorting
from clpy.algorithms._core import Tuning, as_input, element_type, resolve_op, tuning
from clpy.algorithms.reductions import index_type
from clpy.types import catalog as C

TILE_KEYS = (
    "scan_wg",
    "scan_vecs",
    "scan_wgscan",
    "scan_lb",
    "scan_read",
    "scan_lookback",
    "scan_maxreg",
    "scan_layout",
)


# The scan sweep, in phases of falling priority (configurations run only while the sweep's
# time budget lasts): (scan_wgscan, or "striped" for scan_striped.py's tile; work-group
# sizes; 4-vectors per work-item; look-back modes), with the device's default look-back
# reads. Between the first grid and the rest: -cl-nv-maxrregcount for the best so far
# (NVIDIA); at the end the status-word reads and the serial look-back's width for the best.
# Session 6 pruned the variants that lost every H100 sweep (scan_tiles.py says which and by
# how much): the "local" work-group scan, looping groups and speculative loads; the grid's
# configurations that differed only by them are gone with them.
_Ints = tuple[int, ...]
_Grid = tuple[tuple[str, _Ints, _Ints, tuple[str, ...]], ...]
MODES = ("serial", "window", "early")
SWEEP_FIRST: _Grid = (
    ("native", (512,), (4,), MODES),
    ("rake", (512,), (4,), MODES),
    ("striped", (512,), (4,), ("serial", "early")),
)
SWEEP_GRID: _Grid = (
    # CUB's float32 tile on sm90 (cub/device/dispatch/tuning/tuning_scan.cuh): 128 x 24
    ("rake", (128, 256), (6,), ("serial", "early")),
    ("striped", (128, 256, 1024), (4,), ("serial", "early")),
    ("native", (128,), (6, 4), ("serial", "early")),
    ("rake", (256, 384, 1024), (4,), ("serial", "early")),
    ("native", (256, 384), (4,), ("serial", "early")),
    ("rake", (512,), (5, 3), ("serial", "early")),
    ("native", (256, 384, 512), (5,), ("serial", "early")),
    ("native", (768,), (4,), ("serial", "early")),
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
    size, 4-vectors per work-item and work-group scan ("native" collective or "rake"),
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
            k = scans.tile_kernel(C.float_, o, idx, tn, True, True)
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
        for wgscan, wgs, vecss, modes in g:
            for wg in wgs:
                for vecs in vecss:
                    for mode in modes:
                        striped = wgscan == "striped"  # its own (raking) scan
                        one(
                            scan_wg=wg,
                            scan_vecs=4 if striped else vecs,
                            scan_wgscan="rake" if striped else wgscan,
                            scan_lb=base.scan_lb,
                            scan_read=base.scan_read,
                            scan_lookback=mode,
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
