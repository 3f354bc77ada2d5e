"""Per-launch overhead of a cached trivial kernel: clpy vs raw pyopencl, same process, PoCL.

Both sides launch the same one-line kernel (``x[i] += 1`` over a pyopencl buffer, 64
work-items, int32 scalar) and wait for it. Reported: median wall time per launch over many
launches, after warm-up, and the ratio clpy / pyopencl (goal ≤ 1.5). A second pair launches
with a NumPy array (clpy copies it in and back; the raw side does the same copies by hand).
clpy re-sends only kernel arguments that changed since the previous launch, so two more pairs
are reported: against the floor (raw arguments set once, enqueue + wait only), and with a
scalar that changes on every launch. On PoCL these two exaggerate host-side time: its worker
threads stop spinning when the next launch comes a few microseconds later, so each µs of
Python between launches costs more than a µs of wall time.

    .venv/bin/python benchmarks/launch_overhead.py [--launches N] [--json PATH]

``--cpu``: the CPU time a launch costs the host, in the loop shapes of whole programs (clpy's
launches name the device's queue, as the programs' hosts do), clpy against raw pyopencl with
the same arguments through pyopencl's fast setters (``set_arg`` for buffers, ``_set_arg_buf``
for NumPy scalars): ``pingpong`` (two DeviceArrays swapped every launch, one int scalar
changing, ``wait=False``: pathfinder, hotspot, stencils), ``pathfinder`` (the same
arguments launched as benchmarks/programs/common.Host does: ``k[(g,), (256,)]`` spelled in
each call of a host function, the handle's kernel event kept in a list; the raw side keeps
its events too), ``same`` and ``same_wait`` (the
same arguments every launch, ``wait=False`` / ``wait=True``) and ``numpy`` (NumPy arrays
copied in and out, ``wait=True``, one loop trip). Per case: µs per launch of ``process_time``
(every thread: the driver's too), ``thread_time`` (the launching thread) and wall time (to
the queue's end: with short kernels the host's pace, with long ones the device's), the best
of ``--rounds`` batches of ``--launches``; the raw side sets every argument (``raw_all``, as the
originals' hosts) or only those that changed (``raw_changed``). One JSON line per process.
``--tree DIR`` imports clpy from DIR (a worktree of another revision); ``--against DIR`` runs
``--processes`` processes of each tree, alternating, and prints the medians and minima per
case; ``--stub-enqueue`` leaves the kernels out (the Python cost alone, any device). On PoCL
give ``--iters 200`` (kernels of ~0.1 ms: its threads never wait for the next
launch, whose wake-up would count on the launching thread); ``--profiling`` launches on a
profiling queue, as the programs' GPU mode does:

    .venv/bin/python benchmarks/launch_overhead.py --cpu --device opencl:pocl
    git worktree add -f /tmp/old <rev>
    .venv/bin/python benchmarks/launch_overhead.py --cpu --against /tmp/old --processes 3
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def _tree() -> str:
    """The source tree to import clpy from (``--tree DIR``; else this checkout)."""
    if "--tree" in sys.argv:
        return str(Path(sys.argv[sys.argv.index("--tree") + 1]).resolve())
    return str(ROOT)


sys.path.insert(0, _tree())

import clpy  # noqa: E402
from clpy import Global, float32, int32  # noqa: E402


@clpy.kernel
def bump(x: Global[float32], n: int32):
    i = clpy.get_global_id(0)
    if i < n:
        x[i] += 1.0


def _paired(raw: Callable[[], Any], ours: Callable[[], Any], launches: int,
            rounds: int) -> tuple[float, float, float]:
    """Alternate batches of raw and clpy launches so both see the same machine load.
    Returns (median µs/launch raw, median µs/launch clpy, median of per-round ratios)."""
    for _ in range(max(20, launches // 10)):
        raw()
        ours()
    t_raw: list[float] = []
    t_ours: list[float] = []
    for _ in range(rounds):
        for fn, out in ((raw, t_raw), (ours, t_ours)):
            t0 = time.perf_counter()
            for _ in range(launches):
                fn()
            out.append((time.perf_counter() - t0) / launches * 1e6)
    ratios = [b / a for a, b in zip(t_raw, t_ours)]
    return statistics.median(t_raw), statistics.median(t_ours), statistics.median(ratios)


@clpy.kernel
def relax(iters: int32, wall: Global[int32], src: Global[int32], dst: Global[int32],
          cols: int32, t: int32, border: int32):
    """A pathfinder-shaped launch (seven arguments: two buffers swapped every launch);
    ``iters`` trips of its loop set how long it runs."""
    i = clpy.get_global_id(0)
    if i < cols:
        w = wall[t * cols + i]
        acc = 0
        for _ in range(iters):
            acc = acc * 3 + w  # (a recurrence: no closed form for the compiler to take)
        dst[i] = src[i] + acc + border


def cpu_cases(device: str, launches: int, rounds: int, iters: int,
              stub: bool = False, profiling: bool = False) -> dict[str, Any]:
    """µs per launch, per case and side: {case: {side: [process, thread, wall]}}."""
    import pyopencl as cl

    from clpy.runtime.api import get_device

    dev = get_device(device)
    q = dev.queue  # launches name the queue, as the whole programs' hosts do
    if profiling:  # as the programs' GPU mode (a profiling queue shared with the originals)
        q = cl.CommandQueue(dev.context, dev.cl_device,
                            properties=cl.command_queue_properties.PROFILING_ENABLE)
    rows, cols, local = 8, 1024, 64
    wall_h = np.ones((rows, cols), np.int32)
    wall = clpy.to_device(wall_h, dev)
    res = [clpy.to_device(np.zeros(cols, np.int32), dev), clpy.zeros(cols, np.int32, dev)]
    g, loc = (cols,), (local,)
    relax[g, loc](iters, wall, res[0], res[1], cols, 0, 0, device=q)
    plan = next(p for p in relax.launches.plans.values() if getattr(p, "queue", None) is q)
    prg = cl.Program(dev.context, plan.source).build(options=plan.options)
    knl = cl.Kernel(prg, "relax")
    set_buf, set_arg = knl._set_arg_buf, knl.set_arg
    if stub:  # the Python side alone: no kernel enqueued (both sides), an event returned
        done = cl.enqueue_marker(q)
        q.finish()
        cl.enqueue_nd_range_kernel = lambda *a, **kw: done
    enqueue = cl.enqueue_nd_range_kernel
    bufs = [wall.cl_array.base_data, res[0].cl_array.base_data, res[1].cl_array.base_data]
    i32 = np.int32
    host_in = np.zeros(cols, np.int32)
    host_out = np.zeros(cols, np.int32)
    mf = cl.mem_flags

    def clpy_pingpong(n: int) -> None:
        for s in range(n):
            relax[(cols,), (local,)](iters, wall, res[s & 1], res[1 - (s & 1)], cols, s % rows,
                                     7, device=q, wait=False)

    def raw_pingpong_all(n: int) -> None:
        for s in range(n):
            set_buf(0, i32(iters))
            set_arg(1, bufs[0])
            set_arg(2, bufs[1 + (s & 1)])
            set_arg(3, bufs[2 - (s & 1)])
            set_buf(4, i32(cols))
            set_buf(5, i32(s % rows))
            set_buf(6, i32(7))
            enqueue(q, knl, (cols,), (local,))

    def raw_pingpong_changed(n: int) -> None:
        for s in range(n):
            set_arg(2, bufs[1 + (s & 1)])
            set_arg(3, bufs[2 - (s & 1)])
            set_buf(5, i32(s % rows))
            enqueue(q, knl, (cols,), (local,))

    # pathfinder as benchmarks/programs/common.Host launches it: through a host function,
    # ``k[(g,), (256,)]`` spelled per call, wait=False, the handle's kernel event kept
    g_pf, l_pf = (cols + 255) // 256 * 256, 256

    def host_call(k: Any, gsize: Any, lsize: Any, *args: Any) -> None:
        h = k[gsize, lsize](*args, device=q, wait=False)
        if h is not None and h.event is not None:
            events.append(h.event)

    events: list[Any] = []

    def clpy_pathfinder(n: int) -> None:
        events.clear()
        for s in range(n):
            host_call(relax, (g_pf,), (l_pf,), iters, wall, res[s & 1], res[1 - (s & 1)],
                      cols, s % rows, 7)

    def raw_pathfinder(n: int) -> None:
        events.clear()
        for s in range(n):
            set_arg(2, bufs[1 + (s & 1)])
            set_arg(3, bufs[2 - (s & 1)])
            set_buf(5, i32(s % rows))
            events.append(enqueue(q, knl, (g_pf,), (l_pf,)))

    def clpy_same(n: int, wait: bool = False) -> None:
        for _ in range(n):
            relax[(cols,), (local,)](iters, wall, res[0], res[1], cols, 3, 7, device=q, wait=wait)

    def clpy_same_wait(n: int) -> None:
        clpy_same(n, True)

    def raw_same_all(n: int) -> None:
        for _ in range(n):
            set_buf(0, i32(iters))
            set_arg(1, bufs[0])
            set_arg(2, bufs[1])
            set_arg(3, bufs[2])
            set_buf(4, i32(cols))
            set_buf(5, i32(3))
            set_buf(6, i32(7))
            enqueue(q, knl, (cols,), (local,))

    def raw_same_changed(n: int) -> None:
        for _ in range(n):
            enqueue(q, knl, (cols,), (local,))

    def clpy_numpy(n: int) -> None:
        for _ in range(n):
            relax[(cols,), (local,)](1, wall_h, host_in, host_out, cols, 3, 7, device=q)

    def raw_numpy(n: int) -> None:  # the copies clpy makes, by hand
        for _ in range(n):
            b_wall = cl.Buffer(dev.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=wall_h)
            b_in = cl.Buffer(dev.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=host_in)
            b_out = cl.Buffer(dev.context, mf.READ_WRITE, host_out.nbytes)
            set_buf(0, i32(1))
            set_arg(1, b_wall)
            set_arg(2, b_in)
            set_arg(3, b_out)
            set_buf(4, i32(cols))
            set_buf(5, i32(3))
            set_buf(6, i32(7))
            enqueue(q, knl, (cols,), (local,))
            cl.enqueue_copy(q, host_out, b_out)

    cases: dict[str, dict[str, Callable[[int], None]]] = {
        "pingpong": {"clpy": clpy_pingpong, "raw_all": raw_pingpong_all,
                     "raw_changed": raw_pingpong_changed},
        "pathfinder": {"clpy": clpy_pathfinder, "raw_changed": raw_pathfinder},
        "same": {"clpy": clpy_same, "raw_all": raw_same_all, "raw_changed": raw_same_changed},
        "same_wait": {"clpy": clpy_same_wait, "raw_changed": raw_same_changed},
        "numpy": {"clpy": clpy_numpy, "raw_all": raw_numpy},
    }
    out: dict[str, Any] = {}
    for case, sides in cases.items():
        n = launches if case != "numpy" else max(1, launches // 10)
        best = {side: [1e99, 1e99, 1e99] for side in sides}
        for fn in sides.values():  # warm-up: plans, pools, the driver's first launches
            fn(max(10, n // 10))
            q.finish()
        for _ in range(rounds):
            for side, fn in sides.items():
                if side != "clpy":  # the raw side set its own arguments on its own kernel
                    knl.set_args(i32(iters), bufs[0], bufs[1], bufs[2], i32(cols), i32(3), i32(7))
                p0, t0, w0 = time.process_time(), time.thread_time(), time.perf_counter()
                fn(n)
                q.finish()
                p1, t1, w1 = time.process_time(), time.thread_time(), time.perf_counter()
                b = best[side]
                b[0] = min(b[0], (p1 - p0) / n * 1e6)
                b[1] = min(b[1], (t1 - t0) / n * 1e6)
                b[2] = min(b[2], (w1 - w0) / n * 1e6)
        out[case] = {side: [round(v, 2) for v in b] for side, b in best.items()}
    return {"device": str(dev), "tree": _tree(), "launches": launches, "rounds": rounds,
            "iters": iters, "stub_enqueue": stub, "profiling_queue": profiling,
            "us_per_launch_process_thread": out}


def cpu_main(opts: Any) -> None:
    if not opts.against:
        print(json.dumps(cpu_cases(opts.device, opts.launches, opts.rounds, opts.iters,
                                   opts.stub_enqueue, opts.profiling)))
        return
    trees = {"old": str(Path(opts.against).resolve()), "new": str(ROOT)}
    runs: dict[str, list[dict[str, Any]]] = {"old": [], "new": []}
    for _ in range(opts.processes):
        for name, tree in trees.items():
            cmd = [sys.executable, str(Path(__file__).resolve()), "--cpu", "--tree", tree,
                   "--device", opts.device, "--launches", str(opts.launches),
                   "--rounds", str(opts.rounds), "--iters", str(opts.iters)]
            if opts.stub_enqueue:
                cmd.append("--stub-enqueue")
            if opts.profiling:
                cmd.append("--profiling")
            line = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            runs[name].append(json.loads(line.strip().splitlines()[-1]))
            print(name, line.strip(), flush=True)
    print(f"\nµs per launch, {opts.processes} processes per tree alternated (median / min of "
          "the processes' best batches); process_time | thread_time | wall (to the queue's end)")
    first = runs["new"][0]["us_per_launch_process_thread"]
    for case, sides in first.items():
        for side in sides:
            cells = []
            for name in ("old", "new"):
                for k in (0, 1, 2):
                    vals = [r["us_per_launch_process_thread"][case][side][k] for r in runs[name]]
                    cells.append(f"{statistics.median(vals):7.2f}/{min(vals):7.2f}")
            print(f"{case:>10} {side:>11}: old {' | '.join(cells[:3])}   "
                  f"new {' | '.join(cells[3:])}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--launches", type=int, default=None)
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--device", default="opencl:pocl")
    ap.add_argument("--json", default=str(Path(__file__).parent / "results" /
                                           "launch_overhead.json"))
    ap.add_argument("--cpu", action="store_true", help="CPU µs per launch per loop shape")
    ap.add_argument("--tree", default=None, help="import clpy from this source tree")
    ap.add_argument("--against", default=None,
                    help="with --cpu: alternate processes of this tree (old) and this checkout")
    ap.add_argument("--processes", type=int, default=3)
    ap.add_argument("--stub-enqueue", action="store_true",
                    help="with --cpu: replace clEnqueueNDRangeKernel by a stub (both sides): "
                    "the Python cost alone; the numpy case still copies")
    ap.add_argument("--profiling", action="store_true",
                    help="with --cpu: launch on a profiling queue (the programs' GPU mode)")
    ap.add_argument("--iters", type=int, default=1,
                    help="with --cpu: loop trips per work-item (a longer kernel: on PoCL, "
                    "enough that its threads never wait for the next launch)")
    opts = ap.parse_args()
    if opts.cpu:
        opts.launches = opts.launches or 2000
        opts.rounds = opts.rounds or 5
        cpu_main(opts)
        return
    opts.launches = opts.launches or 200
    opts.rounds = opts.rounds or 41
    import pyopencl as cl

    from clpy.runtime.api import get_device

    dev = get_device(opts.device)
    ctx, queue = dev.context, dev.queue
    n = 64
    host = np.zeros(n, np.float32)
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=host)
    nn = np.int32(n)

    # The raw side builds exactly the source clpy emitted, with the same options.
    launch = bump[(n,), None]
    launch(buf, n, device=dev)
    plan = next(iter(bump.launches.plans.values()))
    prg = cl.Program(ctx, plan.source).build(options=plan.options)
    knl = prg.bump

    def raw_buffer() -> None:
        knl(queue, (n,), None, buf, nn).wait()

    # The floor: arguments set once, then only enqueue + wait (what clpy does when the
    # arguments are the same objects as last launch).
    knl2 = cl.Kernel(prg, "bump")
    knl2.set_args(buf, nn)

    def raw_enqueue_only() -> None:
        cl.enqueue_nd_range_kernel(queue, knl2, (n,), None).wait()

    flip = [np.int32(n), np.int32(n - 1)]
    count = [0]

    def raw_changing() -> None:
        count[0] += 1
        knl(queue, (n,), None, buf, flip[count[0] & 1]).wait()

    def clpy_changing() -> None:
        count[0] += 1
        bump[(n,), None](buf, n - (count[0] & 1), device=dev)

    def clpy_buffer() -> None:
        bump[(n,), None](buf, n, device=dev)

    arr = np.zeros(n, np.float32)
    mf = cl.mem_flags

    def raw_numpy() -> None:
        b = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=arr)
        knl(queue, (n,), None, b, nn).wait()
        cl.enqueue_copy(queue, arr, b)

    def clpy_numpy() -> None:
        bump[(n,), None](arr, n, device=dev)

    raw_b, clpy_b, ratio = _paired(raw_buffer, clpy_buffer, opts.launches, opts.rounds)
    raw_n, clpy_n, ratio_np = _paired(raw_numpy, clpy_numpy, opts.launches, opts.rounds)
    raw_f, clpy_f, ratio_floor = _paired(raw_enqueue_only, clpy_buffer, opts.launches,
                                         opts.rounds)
    raw_c, clpy_c, ratio_chg = _paired(raw_changing, clpy_changing, opts.launches, opts.rounds)
    results = {"raw_buffer": raw_b, "clpy_buffer": clpy_b, "raw_numpy": raw_n,
               "clpy_numpy": clpy_n, "raw_enqueue_only": raw_f, "clpy_buffer_vs_floor": clpy_f,
               "raw_changing_scalar": raw_c, "clpy_changing_scalar": clpy_c}
    report = {
        "benchmark": "launch_overhead",
        "device": str(dev),
        "launches_per_batch": opts.launches,
        "rounds": opts.rounds,
        "median_us_per_launch": {k: round(v, 2) for k, v in results.items()},
        "ratio_buffer": round(ratio, 3),
        "ratio_numpy": round(ratio_np, 3),
        "ratio_vs_enqueue_only_floor": round(ratio_floor, 3),
        "ratio_changing_scalar": round(ratio_chg, 3),
        "overhead_us_buffer": round(clpy_b - raw_b, 2),
        "goal": "ratio_buffer <= 1.5",
        "python": platform.python_version(),
        "pyopencl": cl.VERSION_TEXT,
        "cpu_count": os.cpu_count(),
    }
    for k, v in results.items():
        print(f"{k:>14}: {v:8.2f} us/launch")
    print(f"clpy / pyopencl (buffer arg): {ratio:.3f}x  (+{clpy_b - raw_b:.2f} us)")
    print(f"clpy / pyopencl (NumPy arg, copy in+out): {ratio_np:.3f}x")
    print(f"clpy / enqueue-only floor (args set once): {ratio_floor:.3f}x "
          f"(+{clpy_f - raw_f:.2f} us)")
    print(f"clpy / pyopencl (scalar changes every launch): {ratio_chg:.3f}x")
    Path(opts.json).parent.mkdir(parents=True, exist_ok=True)
    Path(opts.json).write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {opts.json}")


if __name__ == "__main__":
    main()
