"""Simulator benchmark: block tree reduction and Hillis–Steele block scan (work-group 256).

For N = 2^16, 2^20, 2^22 the same clpy kernel runs on the simulator (checks off and on), its
emitted OpenCL C runs on PoCL through pyopencl (kernel time, and kernel plus host<->device
copies), and plain NumPy computes the same result; all in one process on the same inputs.
Reported: medians of ``--repeat`` runs (default 5) and throughput ratios sim / PoCL.

    .venv/bin/python benchmarks/sim_bench.py            # writes benchmarks/results/sim_bench.*
    .venv/bin/python benchmarks/sim_bench.py --quick    # N = 2^16, 2^20 only, 3 runs
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import clpy  # noqa: E402
import clpy_sim as sim  # noqa: E402
from clpy import Global, float32  # noqa: E402
from clpy.emit.program import emit_program  # noqa: E402

WG = 256


@clpy.kernel
def block_reduce(x: Global[float32], out: Global[float32]):
    lid = clpy.get_local_id(0)
    tmp = clpy.local_array(float32, 256)
    tmp[lid] = x[clpy.get_global_id(0)]
    clpy.barrier()
    s = 128
    while s > 0:
        if lid < s:
            tmp[lid] += tmp[lid + s]
        clpy.barrier()
        s //= 2
    if lid == 0:
        out[clpy.get_group_id(0)] = tmp[0]


@clpy.kernel
def block_scan(x: Global[float32], y: Global[float32]):
    lid = clpy.get_local_id(0)
    gid = clpy.get_global_id(0)
    tmp = clpy.local_array(float32, 256)
    tmp[lid] = x[gid]
    clpy.barrier()
    off = 1
    while off < 256:
        v = tmp[lid]
        if lid >= off:
            v += tmp[lid - off]
        clpy.barrier()
        tmp[lid] = v
        clpy.barrier()
        off *= 2
    y[gid] = tmp[lid]


def _median(fn: Callable[[], Any], repeat: int) -> float:
    fn()  # warm-up (plan compilation, program build, page faults)
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


def _pocl() -> tuple[Any, Any] | None:
    try:
        import pyopencl as cl
    except ImportError:
        return None
    for p in cl.get_platforms():
        if "portable" in p.name.lower():
            ctx = cl.Context(p.get_devices())
            return ctx, cl.CommandQueue(ctx)
    return None


def bench(sizes: list[int], repeat: int) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    cl_env = _pocl()
    rows: list[dict[str, Any]] = []
    kernels = {
        "block_reduce": (block_reduce, lambda n: n // WG,
                         lambda x: x.reshape(-1, WG).sum(axis=1)),
        "block_scan": (block_scan, lambda n: n, lambda x: np.cumsum(x.reshape(-1, WG),
                                                                    axis=1).ravel()),
    }
    for name, (kern, out_len, numpy_ref) in kernels.items():
        fn = kern.specialize().function
        for n in sizes:
            x = rng.random(n, dtype=np.float32)
            out = np.zeros(out_len(n), np.float32)
            row: dict[str, Any] = {"kernel": name, "n": n}

            def run_sim(fn: Any = fn, n: int = n, x: np.ndarray = x,
                        out: np.ndarray = out) -> None:
                sim.launch(fn, (n,), (WG,), [x, out])

            with sim.config(checks=False):
                row["sim_s"] = _median(run_sim, repeat)
            ok = np.allclose(out, numpy_ref(x), rtol=1e-4, atol=1e-3)
            with sim.config(checks=True):
                row["sim_checks_s"] = _median(run_sim, max(1, repeat if n <= 1 << 20 else 3))
            row["sim_correct"] = bool(ok)
            row["numpy_s"] = _median(lambda ref=numpy_ref, x=x: ref(x), repeat)
            if cl_env is not None:
                row.update(_bench_cl(cl_env, fn, name, x, out_len(n), repeat))
            rows.append(row)
            print(_fmt_row(row), flush=True)
    return {"rows": rows, "machine": platform.processor() or platform.machine(),
            "cpus": os.cpu_count(), "repeat": repeat, "work_group": WG,
            "sim_max_lanes": sim.current().max_lanes}


def _bench_cl(env: tuple[Any, Any], fn: Any, name: str, x: np.ndarray, out_len: int,
              repeat: int) -> dict[str, Any]:
    import pyopencl as cl

    ctx, q = env
    prg = cl.Program(ctx, emit_program(fn, "opencl-c-1.2")).build()
    k = cl.Kernel(prg, name)
    mf = cl.mem_flags
    xb = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    ob = cl.Buffer(ctx, mf.READ_WRITE, out_len * 4)
    host = np.empty(out_len, np.float32)

    def kernel_only() -> None:
        k(q, (len(x),), (WG,), xb, ob)
        q.finish()

    def with_copies() -> None:
        cl.enqueue_copy(q, xb, x)
        k(q, (len(x),), (WG,), xb, ob)
        cl.enqueue_copy(q, host, ob)
        q.finish()

    return {"pocl_s": _median(kernel_only, repeat), "pocl_copy_s": _median(with_copies, repeat)}


def _fmt_row(r: dict[str, Any]) -> str:
    out = f"{r['kernel']:13s} N=2^{int(np.log2(r['n'])):2d}  sim {r['sim_s'] * 1e3:8.2f} ms" \
          f"  sim+checks {r['sim_checks_s'] * 1e3:9.2f} ms  numpy {r['numpy_s'] * 1e3:7.2f} ms"
    if "pocl_s" in r:
        out += (f"  pocl {r['pocl_s'] * 1e3:7.2f} ms ({r['pocl_copy_s'] * 1e3:.2f} with copies)"
                f"  sim/pocl {r['pocl_s'] / r['sim_s']:.2f}x"
                f"  checks/pocl {r['pocl_s'] / r['sim_checks_s']:.3f}x")
    return out


def write(result: dict[str, Any], folder: str) -> None:
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "sim_bench.json"), "w") as f:
        json.dump(result, f, indent=2)
    lines = ["# Simulator benchmark", "",
             f"Machine: {result['machine']}, {result['cpus']} CPUs; work-group {WG}; medians of "
             f"{result['repeat']} runs; simulator batch = {result['sim_max_lanes']} lanes.",
             "Throughput ratio = PoCL kernel time / simulator time (1.0 = as fast as PoCL; the "
             "goal is >= 0.5 with checks off and >= 0.1 with checks on at N = 2^20).", "",
             "| kernel | N | sim (ms) | sim+checks (ms) | PoCL kernel (ms) | PoCL+copies (ms) "
             "| NumPy (ms) | sim / PoCL | sim+checks / PoCL |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in result["rows"]:
        pocl = r.get("pocl_s")
        lines.append(
            f"| {r['kernel']} | 2^{int(np.log2(r['n']))} | {r['sim_s'] * 1e3:.2f} | "
            f"{r['sim_checks_s'] * 1e3:.1f} | "
            f"{pocl * 1e3:.2f} | {r['pocl_copy_s'] * 1e3:.2f} | " if pocl else "n/a | n/a | ")
        lines[-1] += (f"{r['numpy_s'] * 1e3:.2f} | "
                      + (f"{pocl / r['sim_s']:.2f}x | {pocl / r['sim_checks_s']:.3f}x |"
                         if pocl else "n/a | n/a |"))
    with open(os.path.join(folder, "sim_bench.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="N = 2^16 and 2^20, 3 runs")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--max-lanes", type=int, default=None, help="simulator batch size")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  "results"))
    a = ap.parse_args()
    sizes = [1 << 16, 1 << 20] if a.quick else [1 << 16, 1 << 20, 1 << 22]
    if a.max_lanes:
        sim.config(max_lanes=a.max_lanes)
    result = bench(sizes, 3 if a.quick else a.repeat)
    if not a.quick:
        write(result, a.out)


if __name__ == "__main__":
    main()
