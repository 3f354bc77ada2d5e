"""Simulator benchmark: block tree reduction, Hillis–Steele block scan and a local-atomics
histogram (work-group 256).

For N = 2^16, 2^20, 2^22 the same clpy kernel runs on the simulator with 1, 2 and all
threads, checks off and on; its emitted OpenCL C runs on PoCL through pyopencl (kernel time,
and kernel plus host<->device copies), and plain NumPy computes the same result; all in one
process on the same inputs. Reported: medians of ``--repeat`` runs (default 5), throughput
ratios PoCL time / simulator time, and the load average before and after (figures taken while
other processes ran are marked "under load").

    .venv/bin/python benchmarks/sim_bench.py            # writes benchmarks/results/sim_bench.*
    .venv/bin/python benchmarks/sim_bench.py --quick    # N = 2^16, 2^20 only, 3 runs
    .venv/bin/python benchmarks/sim_bench.py --threads 1,all --tag h100host --out $OUT
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import clpy  # noqa: E402
import clpy_sim as sim  # noqa: E402
from benchmarks.timing import median_time  # noqa: E402
from clpy import Global, float32, int32, uint32  # noqa: E402
from clpy.emit.program import emit_program  # noqa: E402
from clpy_sim.config import default_threads  # noqa: E402

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


@clpy.kernel
def local_histogram(x: Global[uint32], h: Global[int32]):
    lh = clpy.local_array(int32, 256)
    lid = clpy.get_local_id(0)
    lh[lid] = 0
    clpy.barrier()
    clpy.atomic_inc(lh, x[clpy.get_global_id(0)] % 256)
    clpy.barrier()
    clpy.atomic_add(h, lid, lh[lid])


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


def _kernels() -> dict[str, tuple[Any, Any, Any, Any, Any]]:
    """name -> (kernel, input maker, output maker, NumPy reference, output check)."""
    def close(got: np.ndarray, want: np.ndarray) -> bool:
        return bool(np.allclose(got, want, rtol=1e-4, atol=1e-3))

    return {
        "block_reduce": (block_reduce, lambda rng, n: rng.random(n, dtype=np.float32),
                         lambda n: np.zeros(n // WG, np.float32),
                         lambda x: x.reshape(-1, WG).sum(axis=1), close),
        "block_scan": (block_scan, lambda rng, n: rng.random(n, dtype=np.float32),
                       lambda n: np.zeros(n, np.float32),
                       lambda x: np.cumsum(x.reshape(-1, WG), axis=1).ravel(), close),
        "histogram": (local_histogram,
                      lambda rng, n: rng.integers(0, 1 << 20, n).astype(np.uint32),
                      lambda n: np.zeros(256, np.int32),
                      lambda x: np.bincount(x % 256, minlength=256),
                      lambda got, want: bool(np.array_equal(got, want))),
    }


def bench(sizes: list[int], repeat: int, threads: list[int | str],
          kernels: list[str] | None = None) -> dict[str, Any]:
    rng = np.random.default_rng(0)
    cl_env = _pocl()
    rows: list[dict[str, Any]] = []
    load0 = os.getloadavg()
    for name, (kern, make_x, make_out, numpy_ref, check) in _kernels().items():
        if kernels and name not in kernels:
            continue
        fn = kern.specialize().function
        for n in sizes:
            x = make_x(rng, n)
            out = make_out(n)
            row: dict[str, Any] = {"kernel": name, "n": n, "sim": {}}

            def run_sim(fn: Any = fn, n: int = n, x: np.ndarray = x,
                        out: np.ndarray = out) -> None:
                out[...] = 0
                sim.launch(fn, (n,), (WG,), [x, out])

            ok = True
            for t in threads:
                cell = {}
                for checks in (False, True):
                    # "auto": threads left to the default (the pool where it was faster)
                    with sim.config(checks=checks, threads=None if t == "auto" else t):
                        reps = repeat if not checks or n <= 1 << 20 else max(1, repeat // 2)
                        # default threads: past the tuner's trial launches (each way twice)
                        warm = 1 if t != "auto" else 8
                        cell["on" if checks else "off"] = median_time(run_sim, reps, warm)
                        ok = ok and check(out, numpy_ref(x))
                row["sim"][str(t)] = cell
            row["sim_correct"] = ok
            row["numpy_s"] = median_time(lambda ref=numpy_ref, x=x: ref(x), repeat)
            if cl_env is not None:
                row.update(_bench_cl(cl_env, fn, name, x, out, repeat))
            rows.append(row)
            print(_fmt_row(row), flush=True)
    return {"rows": rows, "machine": platform.processor() or platform.machine(),
            "cpus": os.cpu_count(), "threads": threads, "repeat": repeat, "work_group": WG,
            "sim_max_lanes": sim.current().max_lanes,
            # (getattr: this script also times older simulators, for before/after figures)
            "sim_split_lanes": getattr(sim.current(), "split_lane_count", lambda: 0)(),
            "loadavg_before": load0, "loadavg_after": os.getloadavg()}


def _bench_cl(env: tuple[Any, Any], fn: Any, name: str, x: np.ndarray, out: np.ndarray,
              repeat: int) -> dict[str, Any]:
    import pyopencl as cl

    ctx, q = env
    prg = cl.Program(ctx, emit_program(fn, "opencl-c-1.2")).build()
    k = cl.Kernel(prg, name if name != "histogram" else "local_histogram")
    mf = cl.mem_flags
    xb = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    ob = cl.Buffer(ctx, mf.READ_WRITE, out.nbytes)
    host = np.empty_like(out)
    zero = np.zeros_like(out)

    def kernel_only() -> None:
        k(q, (len(x),), (WG,), xb, ob)
        q.finish()

    def with_copies() -> None:
        cl.enqueue_copy(q, xb, x)
        cl.enqueue_copy(q, ob, zero)
        k(q, (len(x),), (WG,), xb, ob)
        cl.enqueue_copy(q, host, ob)
        q.finish()

    return {"pocl_s": median_time(kernel_only, repeat),
            "pocl_copy_s": median_time(with_copies, repeat)}


def _tname(t: str) -> str:
    return "default threads" if t == "auto" else f"{t} thread" + ("s" if t != "1" else "")


def _fmt_row(r: dict[str, Any]) -> str:
    out = f"{r['kernel']:13s} N=2^{int(np.log2(r['n'])):2d}"
    pocl = r.get("pocl_s")
    for t, c in r["sim"].items():
        out += f"  t={t}: {c['off'] * 1e3:7.2f}/{c['on'] * 1e3:7.2f} ms"
        if pocl:
            out += f" ({pocl / c['off']:.2f}x/{pocl / c['on']:.2f}x)"
    if pocl:
        out += f"  pocl {pocl * 1e3:.2f} ms"
    return out + f"  numpy {r['numpy_s'] * 1e3:.2f} ms  ok={r['sim_correct']}"


def markdown(result: dict[str, Any]) -> str:
    threads = [str(t) for t in result["threads"]]
    busy = max(result["loadavg_before"][0], result["loadavg_after"][0])
    load = (f"load average {result['loadavg_before'][0]:.1f} before, "
            f"{result['loadavg_after'][0]:.1f} after"
            + (" (**under load**: other processes shared the cores)"
               if busy > 0.5 * (result["cpus"] or 1) else " (quiet)"))
    lines = ["# Simulator benchmark", "",
             f"Machine: {result['machine']}, {result['cpus']} CPUs; work-group {WG}; medians of "
             f"{result['repeat']} runs; simulator batch = {result['sim_max_lanes']} lanes"
             + (f", split into one batch per thread (>= {result['sim_split_lanes']} lanes, "
                "checks off)" if result.get("sim_split_lanes") else "")
             + f"; {load}.",
             "Cells: simulator time checks off / checks on (ms), and the throughput ratio "
             "PoCL kernel time / simulator time (1.0 = as fast as PoCL)."
             + (" Default threads ('auto'): after 8 warm-up launches, the tuner's trials of "
                "each way (sim/parallel.py Tuner); the others after one."
                if "auto" in threads else ""), "",
             "| kernel | N | PoCL (ms) | NumPy (ms) | "
             + " | ".join(f"sim {_tname(t)} (ms) | ratio {t}t" for t in threads) + " |",
             "|---|---|---|---|" + "---|---|" * len(threads)]
    for r in result["rows"]:
        pocl = r.get("pocl_s")
        cells = [r["kernel"], f"2^{int(np.log2(r['n']))}",
                 f"{pocl * 1e3:.2f}" if pocl else "n/a", f"{r['numpy_s'] * 1e3:.2f}"]
        for t in threads:
            c = r["sim"][t]
            cells.append(f"{c['off'] * 1e3:.2f} / {c['on'] * 1e3:.1f}")
            cells.append(f"{pocl / c['off']:.2f}x / {pocl / c['on']:.2f}x" if pocl else "n/a")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def write(result: dict[str, Any], folder: str, tag: str) -> None:
    os.makedirs(folder, exist_ok=True)
    base = os.path.join(folder, f"sim_bench{tag}")
    with open(base + ".json", "w") as f:
        json.dump(result, f, indent=2)
    with open(base + ".md", "w") as f:
        f.write(markdown(result))


def _threads(spec: str) -> list[int | str]:
    out: list[int | str] = []
    for part in spec.split(","):
        p = part.strip()
        t: int | str = default_threads() if p == "all" else p if p == "auto" else int(p)
        if t not in out:
            out.append(t)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="N = 2^16 and 2^20, 3 runs, no files")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--threads", default="1,2,all",
                    help="simulator thread counts ('all': every core; 'auto': the default, "
                         "pool or one thread per kernel as measured)")
    ap.add_argument("--sizes", default=None, help="log2 sizes, e.g. 16,20,22")
    ap.add_argument("--kernels", default=None, help="block_reduce,block_scan,histogram")
    ap.add_argument("--max-lanes", type=int, default=None, help="simulator batch size")
    ap.add_argument("--split-lanes", type=int, default=None,
                    help="clpy.sim.config(split_lanes=...) (default: CLPY_SIM_SPLIT_LANES or 0)")
    ap.add_argument("--tag", default="", help="results file suffix: sim_bench<tag>.{json,md}")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  "results"))
    a = ap.parse_args()
    os.environ.setdefault("CLPY_PROGRESS", "0")
    sizes = [1 << 16, 1 << 20] if a.quick else [1 << 16, 1 << 20, 1 << 22]
    if a.sizes:
        sizes = [1 << int(s) for s in a.sizes.split(",")]
    if a.max_lanes:
        sim.config(max_lanes=a.max_lanes)
    if a.split_lanes is not None:
        sim.config(split_lanes=a.split_lanes)
    result = bench(sizes, 3 if a.quick else a.repeat, _threads(a.threads),
                   a.kernels.split(",") if a.kernels else None)
    if not a.quick:
        write(result, a.out, a.tag)


if __name__ == "__main__":
    main()
