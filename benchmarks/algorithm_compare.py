"""One size of benchmarks/algorithms.py: reduce, scan, argmax, a user-defined struct
reduction, histogram and sort by clpy.algorithms (its default and its other host paths and
kernels), PyOpenCL and CuPy, and a device-to-device copy, each checked against NumPy first;
the rows of the table.

The struct row ("struct min/max", issue 13's "user-defined struct reduction" goal): ``reduce``
with the ``@clpy.reduction`` ``minmax`` over an array of n ``@clpy.struct MinMax`` (two
float32: lo, hi; lo = hi = the float32 input), 8n bytes read. Beside it, the same
combination by PyOpenCL's ``ReductionKernel`` over n ``float2`` (8n bytes, one pass) and by
CuPy as ``min`` then ``max`` of the n float32 (two passes of 4n bytes: the same 8n bytes
read, CuPy has no reduction of structs), every result read back to the host.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import numpy as np

import clpy
import clpy.algorithms as alg
from benchmarks.timing import device_only, timed
from clpy import float32
from clpy.algorithms import scans
from clpy.algorithms._core import as_input, element_type, resolve_op, tuning


@clpy.struct
class MinMax:
    lo: float32
    hi: float32


@clpy.reduction(identity=MinMax(np.inf, -np.inf))
def minmax(a: MinMax, b: MinMax) -> MinMax:
    return MinMax(min(a.lo, b.lo), max(a.hi, b.hi))


def bench_size(
    dev: Any,
    n: int,
    repeat: int,
    cp: Any,
    only: set[str],
    deadline: float = float("inf"),
    skipped: list[str] | None = None,
) -> list[dict[str, Any]]:
    """The rows of size ``n`` for the algorithms in ``only``; one that would start after
    ``deadline`` (``time.perf_counter()``) is left out and named in ``skipped``. CuPy's rows
    follow for the algorithms that ran."""
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
    ran: set[str] = set()

    def go(name: str) -> bool:
        if name not in only:
            return False
        if time.perf_counter() > deadline:
            if skipped is not None:
                skipped.append(f"{name} 2^{n.bit_length() - 1}")
            return False
        ran.add(name)
        return True

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
    if go("reduce"):
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
    if go("scan"):
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
    if go("argmax"):
        assert alg.argmax(x) == int(np.argmax(host))
        row("argmax", "clpy", timed(lambda: alg.argmax(x), sync, repeat), 4 * n)
    if go("struct"):
        rows_struct(q, host, n, repeat, row)
    hb = (host * 256).astype(np.uint8)
    hi = hb.astype(np.int32)
    if go("histogram"):
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
    if go("sort"):
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
        if "reduce" in ran:
            row("reduce", "cupy sum", timed(lambda: cp.sum(cx).item(), csync, repeat), 4 * n)
        if "scan" in ran:
            row("scan", "cupy cumsum", timed(lambda: cp.cumsum(cx, out=cy), csync, repeat), 8 * n)
        if "argmax" in ran:
            row("argmax", "cupy argmax", timed(lambda: cp.argmax(cx).item(), csync, repeat), 4 * n)
        if "struct" in ran:
            want = (float(host.min()), float(host.max()))
            assert (cp.min(cx).item(), cp.max(cx).item()) == want
            row(
                "struct min/max",
                "cupy min, then max (two passes)",
                timed(lambda: (cp.min(cx).item(), cp.max(cx).item()), csync, repeat),
                8 * n,
            )
        if "histogram" in ran:
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
        if "sort" in ran:
            ck = cp.asarray(kh)
            row(
                "sort uint32",
                "cupy sort",
                timed(lambda: cp.sort(ck), csync, max(3, repeat // 4), 1),
                8 * n,
            )
        cp.get_default_memory_pool().free_all_blocks()
    return rows


def rows_struct(q: Any, host: np.ndarray, n: int, repeat: int, row: Any) -> None:
    """The struct reduction's rows (module docstring): clpy's ``reduce`` of a MinMax array
    and PyOpenCL's ReductionKernel of the same bytes as float2, each checked first."""
    import pyopencl.array as cla
    import pyopencl.cltypes as clt
    from pyopencl.reduction import ReductionKernel

    pairs = np.empty(n, MinMax.dtype)
    pairs["lo"] = pairs["hi"] = host
    want = (float(host.min()), float(host.max()))
    s = cla.to_device(q, pairs)
    r = alg.reduce(s, minmax)
    assert (float(r["lo"]), float(r["hi"])) == want, (r, want)
    row("struct min/max", "clpy", timed(lambda: alg.reduce(s, minmax), q.finish, repeat), 8 * n)
    f2 = cla.Array(q, (n,), clt.float2, data=s.data)
    rk = ReductionKernel(
        q.context,
        clt.float2,
        neutral="(float2)(INFINITY, -INFINITY)",
        reduce_expr="(float2)(fmin(a.x, b.x), fmax(a.y, b.y))",
        map_expr="x[i]",
        arguments="__global const float2 *x",
        name="minmax_float2",
    )
    got = rk(f2, queue=q).get()
    assert (float(got["x"]), float(got["y"])) == want, (got, want)
    row(
        "struct min/max",
        "pyopencl ReductionKernel (float2)",
        timed(lambda: rk(f2, queue=q).get(), q.finish, repeat),
        8 * n,
    )


# Reduce's other host paths, measured beside the default (bound launch, blocking read into
# page-locked memory): (row name, BOUND_LAUNCH, PINNED_RESULT, RESULT_PATH).
REDUCE_PATHS = (
    ("launcher + pageable read (session 2)", False, False, "read"),
    ("bound + pageable read", True, False, "read"),
    ("bound + pinned, read then wait", True, True, "wait"),
    ("bound + pinned, poll", True, True, "poll"),
    ("bound + mapped result", True, False, "map"),
)
