"""Fewer commands for a NumPy-argument launch (issue 18, the 4 MiB launch).

clpy's registered path (clpy/runtime/registered.py) registers the page-aligned interior of an
array and moves the ends (< a page each, NumPy's large arrays start 16 bytes into a page)
through pinned slots: per array a map, an unmap, a device copy and two end copies, and a
download's end copies make the host wait for the queue. This measures the candidates, each a
``touch`` launch (x in, y in, ``y += x``, y out, one finish), median of ``--reps`` in
interleaved rounds, at each size:

- ``cur``: clpy's ``Registered`` (interior + ends), ``sync=False`` and one finish;
- ``rounded``: the array's page-rounded range registered (its first and last page shared with
  whatever else lies there), copied on the device at the array's offset: no ends; the
  download maps only the array's bytes for reading;
- ``rounded_sub``: the same with the upload's map also only over the array's bytes;
- ``direct_reg`` / ``direct_plain``: ``enqueue_copy`` from and into the NumPy memory itself
  with and without a registration over it (does the driver see the pinned pages?);
- ``pinned``: ``ALLOC_HOST_PTR`` arrays and ``enqueue_copy`` (the launch's practical bound);
- ``bind_aligned``: page-aligned arrays whose registered buffers are the kernel's arguments;
- ``kernel``: the kernel alone on device buffers.

Then the correctness question of ``rounded``: bytes sharing the array's first and last page
that the host changes after the upload must survive the download (``sentinel``: the
sub-range map, and for information the whole-buffer map).

Usage: ``python scripts/gpu_reg_rounded.py --platform nvidia --mib 1,4,16 --reps 30``
"""

from __future__ import annotations

import argparse
import ctypes
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

PAGE = 4096
SRC = """
__kernel void touch(__global const float *x, __global float *y, int n) {
    int i = get_global_id(0);
    if (i < n) y[i] = y[i] + x[i];
}
"""


def _rounded(cl: Any, ctx: Any, a: np.ndarray) -> tuple[Any, int]:
    """A USE_HOST_PTR buffer over the pages ``a``'s bytes touch, and ``a``'s offset in it."""
    addr = a.ctypes.data
    lo = addr - addr % PAGE
    hi = -(-(addr + a.nbytes) // PAGE) * PAGE
    host = (ctypes.c_ubyte * (hi - lo)).from_address(lo)
    mf = cl.mem_flags
    return cl.Buffer(ctx, mf.READ_WRITE | mf.USE_HOST_PTR, hostbuf=host), addr - lo


def _map(cl: Any, q: Any, buf: Any, flags: Any, off: int, n: int) -> None:
    m, _ = cl.enqueue_map_buffer(q, buf, flags, off, (n,), np.uint8, is_blocking=False)
    m.base.release(q)


def _aligned(a: np.ndarray) -> np.ndarray:
    raw = np.empty(a.nbytes + PAGE, np.uint8)
    off = -raw.ctypes.data % PAGE
    out = raw[off : off + a.nbytes].view(a.dtype)
    out[...] = a
    return out


def measure(cl: Any, dev: Any, mib: int, reps: int) -> dict[str, Any]:
    from clpy.runtime.registered import Registered

    ctx = cl.Context([dev])
    q = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, SRC).build()
    kern = cl.Kernel(prg, "touch")
    n = (mib << 20) // 4
    nb = n * 4
    mf = cl.mem_flags
    W, R = cl.map_flags.WRITE_INVALIDATE_REGION, cl.map_flags.READ
    x = np.ones(n, np.float32)
    y = np.zeros(n, np.float32)
    xp, yp = np.ones(n, np.float32), np.zeros(n, np.float32)  # never registered
    dx = cl.Buffer(ctx, mf.READ_WRITE, nb)
    dy = cl.Buffer(ctx, mf.READ_WRITE, nb)
    nn = np.int32(n)
    gsz = (-(-n // 256) * 256,)

    def run_kernel(a: Any, b: Any) -> None:
        kern.set_args(a, b, nn)
        cl.enqueue_nd_range_kernel(q, kern, gsz, (256,))

    reg = Registered(cl, q)

    def cur() -> None:
        reg.upload(dx, x, sync=False)
        reg.upload(dy, y, sync=False)
        run_kernel(dx, dy)
        reg.download(y, dy, sync=False)
        reg.finish()

    cur()  # registers x and y (interiors)
    rx2 = np.ones(n, np.float32)
    ry2 = np.zeros(n, np.float32)
    bx, ox = _rounded(cl, ctx, rx2)
    by, oy = _rounded(cl, ctx, ry2)

    def rounded(sub: bool) -> Callable[[], None]:
        def go() -> None:
            if sub:
                _map(cl, q, bx, W, ox, nb)
            else:
                _map(cl, q, bx, W, 0, bx.size)
            cl.enqueue_copy(q, dx, bx, byte_count=nb, src_offset=ox)
            if sub:
                _map(cl, q, by, W, oy, nb)
            else:
                _map(cl, q, by, W, 0, by.size)
            cl.enqueue_copy(q, dy, by, byte_count=nb, src_offset=oy)
            run_kernel(dx, dy)
            cl.enqueue_copy(q, by, dy, byte_count=nb, dst_offset=oy)
            _map(cl, q, by, R, oy, nb)
            q.finish()

        return go

    def direct(a: np.ndarray, b: np.ndarray) -> Callable[[], None]:
        def go() -> None:
            cl.enqueue_copy(q, dx, a, is_blocking=False)
            cl.enqueue_copy(q, dy, b, is_blocking=False)
            run_kernel(dx, dy)
            cl.enqueue_copy(q, b, dy, is_blocking=False)
            q.finish()

        return go

    pbx = cl.Buffer(ctx, mf.READ_WRITE | mf.ALLOC_HOST_PTR, nb)
    pby = cl.Buffer(ctx, mf.READ_WRITE | mf.ALLOC_HOST_PTR, nb)
    px, _ = cl.enqueue_map_buffer(q, pbx, R | cl.map_flags.WRITE, 0, (n,), np.float32)
    py, _ = cl.enqueue_map_buffer(q, pby, R | cl.map_flags.WRITE, 0, (n,), np.float32)
    px[:] = 1
    py[:] = 0

    ax, ay = _aligned(x), _aligned(y)
    abx = cl.Buffer(ctx, mf.READ_WRITE | mf.USE_HOST_PTR, hostbuf=ax)
    aby = cl.Buffer(ctx, mf.READ_WRITE | mf.USE_HOST_PTR, hostbuf=ay)

    def bind_aligned() -> None:
        _map(cl, q, abx, W, 0, nb)
        _map(cl, q, aby, W, 0, nb)
        run_kernel(abx, aby)
        _map(cl, q, aby, R, 0, nb)
        q.finish()

    def kernel() -> None:
        run_kernel(dx, dy)
        q.finish()

    variants: dict[str, Callable[[], None]] = {
        "cur": cur,
        "rounded": rounded(False),
        "rounded_sub": rounded(True),
        "direct_reg": direct(rx2, ry2),
        "direct_plain": direct(xp, yp),
        "pinned": direct(px, py),
        "bind_aligned": bind_aligned,
        "kernel": kernel,
    }
    ts = _interleaved(variants, reps)
    out: dict[str, Any] = {"mib": mib, "device": dev.name, "x_page_offset": x.ctypes.data % PAGE}
    for k, v in ts.items():
        out[k + "_us"] = round(statistics.median(v) * 1e6, 1)
        out[k + "_min_us"] = round(min(v) * 1e6, 1)
    # link rate from the pinned copies alone, at this size
    up = statistics.median(_times(lambda: (cl.enqueue_copy(q, dx, px), q.finish()), reps))
    down = statistics.median(_times(lambda: (cl.enqueue_copy(q, px, dx), q.finish()), reps))
    out["pinned_h2d_GBps"] = round(nb / up / 1e9, 2)
    out["pinned_d2h_GBps"] = round(nb / down / 1e9, 2)
    bound = 2 * up + down + statistics.median(ts["kernel"])
    out["bound_us"] = round(bound * 1e6, 1)
    for k in variants:
        if k != "kernel":
            out[k + "_of_bound"] = round(bound / statistics.median(ts[k]), 3)
    # the results are right
    out["rounded_values_ok"] = bool(np.all(ry2 > 0))
    reg.clear()
    return out


def layouts(cl: Any, dev: Any, mib: int, reps: int) -> dict[str, Any]:
    """The launch on arrays laid out as malloc lays them out: ``sep`` each in its own mapping
    at +16 (large allocations), ``adj`` one right after the other (the heap: y's first page is
    x's last). Registrations never share a page: in ``adj`` y's registration starts at its
    second page and its head goes through a pinned slot (``adj_slot``) or through x's
    registration, which covers that page (``adj_nbr``); ``adj_cur`` is clpy's interior +
    ends on the same arrays."""
    import mmap

    from clpy.runtime.registered import Registered

    ctx = cl.Context([dev])
    q = cl.CommandQueue(ctx)
    kern = cl.Kernel(cl.Program(ctx, SRC).build(), "touch")
    nb = mib << 20
    n = nb // 4
    mf = cl.mem_flags
    W, R = cl.map_flags.WRITE_INVALIDATE_REGION, cl.map_flags.READ
    dx = cl.Buffer(ctx, mf.READ_WRITE, nb)
    dy = cl.Buffer(ctx, mf.READ_WRITE, nb)
    gsz = (-(-n // 256) * 256,)
    nn = np.int32(n)
    pin = cl.Buffer(ctx, mf.READ_WRITE | mf.ALLOC_HOST_PTR, 4 * PAGE)
    slots, _ = cl.enqueue_map_buffer(q, pin, R | cl.map_flags.WRITE, 0, (4 * PAGE,), np.uint8)
    landing: list[tuple[np.ndarray, np.ndarray]] = []

    def reg_over(lo: int, hi: int) -> Any:
        host = (ctypes.c_ubyte * (hi - lo)).from_address(lo)
        return cl.Buffer(ctx, mf.READ_WRITE | mf.USE_HOST_PTR, hostbuf=host)

    def up(parts: list[tuple[Any, ...]], flat: np.ndarray, dst: Any) -> None:
        for p in parts:
            if p[0] == "reg":
                _, buf, boff, aoff, k = p
                _map(cl, q, buf, W, boff, k)
                cl.enqueue_copy(q, dst, buf, byte_count=k, src_offset=boff, dst_offset=aoff)
            else:
                _, aoff, k, si = p
                sl = slots[si * PAGE : si * PAGE + k]
                sl[:] = flat[aoff : aoff + k]
                cl.enqueue_copy(q, dst, sl, dst_offset=aoff, is_blocking=False)

    def down(parts: list[tuple[Any, ...]], flat: np.ndarray, src: Any) -> None:
        for p in parts:
            if p[0] == "reg":
                _, buf, boff, aoff, k = p
                cl.enqueue_copy(q, buf, src, byte_count=k, src_offset=aoff, dst_offset=boff)
                _map(cl, q, buf, R, boff, k)
            else:
                _, aoff, k, si = p
                sl = slots[si * PAGE : si * PAGE + k]
                cl.enqueue_copy(q, sl, src, src_offset=aoff, is_blocking=False)
                landing.append((flat[aoff : aoff + k], sl))

    def launch(xp: list[Any], yp: list[Any], xf: np.ndarray, yf: np.ndarray) -> Callable[[], None]:
        def go() -> None:
            up(xp, xf, dx)
            up(yp, yf, dy)
            kern.set_args(dx, dy, nn)
            cl.enqueue_nd_range_kernel(q, kern, gsz, (256,))
            down(yp, yf, dy)
            q.finish()
            for a, b in landing:
                a[:] = b
            landing.clear()

        return go

    # sep: two mappings, the arrays at +16
    m1, m2 = mmap.mmap(-1, nb + PAGE), mmap.mmap(-1, nb + PAGE)
    sx = np.frombuffer(m1, np.uint8)[16 : 16 + nb]
    sy = np.frombuffer(m2, np.uint8)[16 : 16 + nb]
    sx.view(np.float32)[:] = 1
    sy[:] = 0
    bsx = reg_over(sx.ctypes.data - 16, sx.ctypes.data - 16 + nb + PAGE)
    bsy = reg_over(sy.ctypes.data - 16, sy.ctypes.data - 16 + nb + PAGE)
    sep = launch([("reg", bsx, 16, 0, nb)], [("reg", bsy, 16, 0, nb)], sx, sy)
    # adj: one block, y right after x
    raw = np.empty(2 * nb + 4 * PAGE, np.uint8)
    base = raw.ctypes.data + (-raw.ctypes.data % PAGE)
    o = base - raw.ctypes.data
    ax = raw[o + 16 : o + 16 + nb]
    ay = raw[o + 32 + nb : o + 32 + 2 * nb]
    ax.view(np.float32)[:] = 1
    ay[:] = 0
    xlo, xhi = base, base + -(-(16 + nb) // PAGE) * PAGE
    ys = ay.ctypes.data
    ylo, yhi = -(-ys // PAGE) * PAGE, -(-(ys + nb) // PAGE) * PAGE
    bax, bay = reg_over(xlo, xhi), reg_over(ylo, yhi)
    head = ylo - ys
    xparts = [("reg", bax, 16, 0, nb)]
    rest = ("reg", bay, 0, head, nb - head)
    adj_slot = launch(xparts, [("slot", 0, head, 0), rest], ax, ay)
    adj_nbr = launch(xparts, [("reg", bax, ys - xlo, 0, head), rest], ax, ay)
    cx, cy = raw.copy(), None  # clpy's Registered on a second, identical layout
    cbase = cx.ctypes.data + (-cx.ctypes.data % PAGE)
    co = cbase - cx.ctypes.data
    cax, cay = cx[co + 16 : co + 16 + nb], cx[co + 32 + nb : co + 32 + 2 * nb]
    reg = Registered(cl, q)

    def adj_cur() -> None:
        reg.upload(dx, cax, sync=False)
        reg.upload(dy, cay, sync=False)
        kern.set_args(dx, dy, nn)
        cl.enqueue_nd_range_kernel(q, kern, gsz, (256,))
        reg.download(cay, dy, sync=False)
        reg.finish()

    # exact: separate mappings again, each array registered from its own (unaligned) first
    # byte and bound to the kernel itself: no device copy (would clpy gain from binding?)
    m3, m4 = mmap.mmap(-1, nb + PAGE), mmap.mmap(-1, nb + PAGE)
    ex = np.frombuffer(m3, np.uint8)[16 : 16 + nb]
    ey = np.frombuffer(m4, np.uint8)[16 : 16 + nb]
    ex.view(np.float32)[:] = 1
    ey[:] = 0
    bex, bey = (
        reg_over(ex.ctypes.data, ex.ctypes.data + nb),
        reg_over(ey.ctypes.data, ey.ctypes.data + nb),
    )

    def exact() -> None:
        _map(cl, q, bex, W, 0, nb)
        _map(cl, q, bey, W, 0, nb)
        kern.set_args(bex, bey, nn)
        cl.enqueue_nd_range_kernel(q, kern, gsz, (256,))
        _map(cl, q, bey, R, 0, nb)
        q.finish()

    variants = {
        "sep": sep,
        "adj_slot": adj_slot,
        "adj_nbr": adj_nbr,
        "adj_cur": adj_cur,
        "exact_bound": exact,
    }
    ts = _interleaved(variants, reps)
    out: dict[str, Any] = {"layout_mib": mib, "head_bytes": head}
    for k, v in ts.items():
        out[k + "_us"] = round(statistics.median(v) * 1e6, 1)
    # values: y accumulates x once per launch in every variant
    for k, arr in (("sep", sy), ("adj", ay), ("cur", cay), ("exact", ey)):
        f = arr.view(np.float32)
        out[k + "_uniform"] = bool(np.all(f == f[0])) and float(f[0]) > 0
    _ = cy
    reg.clear()
    for b in (bsx, bsy, bax, bay, bex, bey):
        b.release()
    return out


def download_alone(cl: Any, dev: Any, mib: int, reps: int) -> dict[str, Any]:
    """A download alone (device buffer -> the registration of an array at +16 in its own
    mapping, then a map for reading, waited for), by how the map is cut: ``sub`` the array's
    bytes (offset 16), ``sub_nb`` the same non-blocking + finish, ``whole`` the whole
    registration from 0, ``split`` the page-aligned middle and the two partial pages apart;
    and the upload alone the same ways (``up_sub``, ``up_split``)."""
    import mmap

    ctx = cl.Context([dev])
    q = cl.CommandQueue(ctx)
    nb = mib << 20
    mm = mmap.mmap(-1, nb + PAGE)
    a = np.frombuffer(mm, np.uint8)[16 : 16 + nb]
    a[:] = 1
    host = (ctypes.c_ubyte * (nb + PAGE)).from_address(a.ctypes.data - 16)
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.USE_HOST_PTR, hostbuf=host)
    dbuf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, nb)
    R, W = cl.map_flags.READ, cl.map_flags.WRITE_INVALIDATE_REGION
    head, mid_end = PAGE - 16, PAGE + (nb - (PAGE - 16)) // PAGE * PAGE  # in buf

    def mapped(flags: Any, at: int, n: int, blocking: bool) -> None:
        m, _ = cl.enqueue_map_buffer(q, buf, flags, at, (n,), np.uint8, is_blocking=blocking)
        m.base.release(q)

    def down(cut: str) -> Callable[[], None]:
        def go() -> None:
            cl.enqueue_copy(q, buf, dbuf, byte_count=nb, dst_offset=16)
            if cut == "sub":
                mapped(R, 16, nb, True)
            elif cut == "sub_nb":
                mapped(R, 16, nb, False)
            elif cut == "whole":
                mapped(R, 0, nb + PAGE, True)
            else:
                mapped(R, 16, head, False)
                mapped(R, mid_end, 16 + nb - mid_end, False)
                mapped(R, PAGE, mid_end - PAGE, True)
            q.finish()

        return go

    def up(cut: str) -> Callable[[], None]:
        def go() -> None:
            if cut == "sub":
                mapped(W, 16, nb, False)
            else:
                mapped(W, 16, head, False)
                mapped(W, mid_end, 16 + nb - mid_end, False)
                mapped(W, PAGE, mid_end - PAGE, False)
            cl.enqueue_copy(q, dbuf, buf, byte_count=nb, src_offset=16)
            q.finish()

        return go

    variants = {
        "sub": down("sub"),
        "sub_nb": down("sub_nb"),
        "whole": down("whole"),
        "split": down("split"),
        "up_sub": up("sub"),
        "up_split": up("split"),
    }
    ts = _interleaved(variants, reps)
    out: dict[str, Any] = {"alone_mib": mib}
    for k, v in ts.items():
        out[k + "_GBps"] = round(nb / statistics.median(v) / 1e9, 2)
    buf.release()
    return out


def _interleaved(variants: dict[str, Callable[[], None]], reps: int) -> dict[str, list[float]]:
    """Each variant once to warm up, then ``reps`` rounds of all in turn: seconds each."""
    ts: dict[str, list[float]] = {k: [] for k in variants}
    for fn in variants.values():
        fn()
    for _ in range(reps):
        for k, fn in variants.items():
            t0 = time.perf_counter()
            fn()
            ts[k].append(time.perf_counter() - t0)
    return ts


def _times(fn: Callable[[], Any], reps: int) -> list[float]:
    fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return ts


def sentinel(cl: Any, dev: Any) -> dict[str, Any]:
    """Bytes on the array's first and last page, changed by the host after the upload, must
    survive a download through the page-rounded registration."""
    ctx = cl.Context([dev])
    q = cl.CommandQueue(ctx)
    nb = (1 << 20) + 300
    raw = np.empty(nb + 4 * PAGE, np.uint8)
    base = -raw.ctypes.data % PAGE + PAGE
    a = raw[base + 100 : base + 100 + nb]
    before = raw[base : base + 100]
    end = base + 100 + nb
    after = raw[end : -(-end // PAGE) * PAGE]
    res: dict[str, Any] = {"after_bytes": int(after.size)}
    dev_buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, nb)
    W, R = cl.map_flags.WRITE_INVALIDATE_REGION, cl.map_flags.READ
    for mode in ("sub", "whole"):
        buf, off = _rounded(cl, ctx, a)
        before[:] = 1
        after[:] = 1
        a[:] = 2
        _map(cl, q, buf, W, 0, buf.size)  # upload: the whole rounded range
        cl.enqueue_copy(q, dev_buf, buf, byte_count=nb, src_offset=off)
        q.finish()
        before[:] = 3  # another object's bytes change on the host meanwhile
        after[:] = 3
        cl.enqueue_fill_buffer(q, dev_buf, np.uint8(5), 0, nb)  # the kernel writes
        cl.enqueue_copy(q, buf, dev_buf, byte_count=nb, dst_offset=off)
        if mode == "sub":
            _map(cl, q, buf, R, off, nb)
        else:
            _map(cl, q, buf, R, 0, buf.size)
        q.finish()
        res[mode] = {
            "array_ok": bool(np.all(a == 5)),
            "before_kept": bool(np.all(before == 3)),
            "after_kept": bool(np.all(after == 3)),
        }
        buf.release()
        # a second registration of the same pages after the first is gone
    # two registrations sharing a page (neighbouring arrays)
    try:
        a1 = raw[base + 100 : base + 100 + PAGE * 2]
        a2 = raw[base + 100 + PAGE * 2 : base + 100 + PAGE * 4]
        b1, _ = _rounded(cl, ctx, a1)
        b2, _ = _rounded(cl, ctx, a2)
        res["overlapping_registration"] = "made"
        b1.release()
        b2.release()
    except cl.Error as e:
        res["overlapping_registration"] = f"refused: {e}"
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--platform", default="")
    ap.add_argument("--mib", default="1,4,16")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    import pyopencl as cl

    rows: list[dict[str, Any]] = []
    for plat in cl.get_platforms():
        if a.platform.lower() not in plat.name.lower():
            continue
        for dev in plat.get_devices():
            s = sentinel(cl, dev)
            print(json.dumps({"sentinel": s, "device": dev.name}), flush=True)
            rows.append({"sentinel": s})
            for mib in (int(v) for v in a.mib.split(",")):
                alone = download_alone(cl, dev, mib, a.reps)
                print(json.dumps(alone), flush=True)
                rows.append(alone)
                lay = layouts(cl, dev, mib, a.reps)
                print(json.dumps(lay), flush=True)
                rows.append(lay)
                row = measure(cl, dev, mib, a.reps)
                print(json.dumps(row), flush=True)
                rows.append(row)
    if a.out:
        a.out.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
