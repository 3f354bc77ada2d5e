"""clpy.algorithms side by side with PyOpenCL, CuPy (when importable) and a device-to-device
copy, in one process, on the same device (issue 13).

For each size (float32 unless said): reduce (sum), inclusive scan (+), argmax, a user-defined
struct reduction (min and max as one ``@clpy.reduction`` over an array of float32 pairs:
benchmarks/algorithm_compare.py), histogram (256 bins of uint8 and int32 inputs) and sort
(sizes <= 2^24 unless ``--only`` names sort: at 2^28 it needs five arrays of n and NumPy's
sort of the reference takes ~25 s). Each timing is the median of ``--repeat`` runs after
warm-up, by synchronized wall clock (``queue.finish()`` / ``cupy.cuda.Device().synchronize()``
around every run), results included (a reduction's scalar comes back to the host, as the
library calls return it). Bandwidth: bytes read (+ written for scan and copy) per second;
``x copy`` = that bandwidth / the copy's read + write bandwidth.

    python -m benchmarks.algorithms --device opencl:nvidia --sizes 20,24,28 --budget 270
    python -m benchmarks.algorithms --device opencl:pocl --sizes 16 --repeat 5   # make bench
    python -m benchmarks.algorithms --only reduce,scan --sizes 28   # a subset

Writes algorithms_<device>.json and .md to ``--out-dir`` ($OUT if set, else
benchmarks/results), again after every size, so that a run cut off by a time limit keeps
the sizes it finished. ``--budget S``: no algorithm starts after S seconds (those left out
are listed in the files); the H100's full run (every algorithm, 2^20, 2^24, 2^28, 20 runs
each) is meant to fit in 300 s. The .md also says what issue 13's "reduce >= 1.8x PyOpenCL's
ReductionKernel" would need at the largest size (``reduce_ceiling``). On the GPU host:
scripts/gpu_algorithms.sh (same arguments).

The rows of one size are measured in benchmarks/algorithm_compare.py, the scan's tile sweep
in benchmarks/scan_sweep.py, the scan kernel's device code in benchmarks/device_code.py, the
timings by benchmarks/timing.py.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import clpy  # noqa: E402
from benchmarks.algorithm_compare import bench_size  # noqa: E402
from benchmarks.device_code import ptx_report  # noqa: E402
from benchmarks.scan_sweep import SWEEP_SECONDS, adopt_best, sweep  # noqa: E402
from benchmarks.timing import BATCH_NOTE  # noqa: E402
from clpy.algorithms._core import tuning  # noqa: E402


def _cupy() -> Any:
    try:
        import cupy as cp

        cp.cuda.runtime.getDeviceCount()
        return cp
    except Exception:  # noqa: BLE001 - no CuPy, or no CUDA device
        return None


ALGORITHMS = ("reduce", "scan", "argmax", "struct", "histogram", "sort")


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
        default=None,
        help=f"comma-separated subset of {','.join(ALGORITHMS)} (default: all; copy always "
        "runs; sort runs above 2^24 only when named here)",
    )
    ap.add_argument(
        "--budget",
        type=float,
        default=None,
        help="no algorithm starts after this many seconds from the start (default: no limit)",
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
    t0 = time.perf_counter()
    named = a.only is not None
    only = {w.strip() for w in (a.only or ",".join(ALGORITHMS)).split(",") if w.strip()}
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
    skipped: list[str] = []
    deadline = t0 + a.budget if a.budget is not None else float("inf")
    args = (
        f"--device {a.device} --sizes {a.sizes}{' --only ' + a.only if named else ''}"
        f" --repeat {a.repeat}{' --sweep' if a.sweep else ''}{' --ptx' if a.ptx else ''}"
        f"{f' --budget {a.budget:g}' if a.budget is not None else ''}"
    )
    for s in a.sizes.split(","):
        n = 1 << int(s)
        todo = set(only)
        if int(s) > 24 and not (named and "sort" in only):
            todo.discard("sort")  # by name only: five arrays of n and NumPy's sort
        rows += bench_size(dev, n, a.repeat, cp, todo, deadline, skipped)
        print(table([r for r in rows if r["n"] == n]), flush=True)
        result.update(tuning=repr(tuning(dev)), rows=rows, skipped=skipped)
        result["seconds"] = round(time.perf_counter() - t0, 1)
        write(dev, Path(a.out_dir), result, args, a.repeat)
    if a.ptx and "scan" in only:
        result["scan_ptx"] = ptx_report(dev, Path(a.out_dir))
        write(dev, Path(a.out_dir), result, args, a.repeat)
    print(f"{time.perf_counter() - t0:.0f} s in all", flush=True)
    return 0


# HBM3 peak of the H100 SXM5 80 GB (NVIDIA's data sheet): the most a read-only kernel can
# reach there, whatever the code.
H100_HBM_GBPS = 3350


def reduce_ceiling(rows: list[dict[str, Any]], device: str = "") -> str:
    """What issue 13's "reduce >= 1.8x PyOpenCL ReductionKernel" asks of this run at its
    largest size: the bandwidth it needs, against the copy's (and the HBM peak on an
    H100)."""
    if not rows:
        return ""
    n = max(r["n"] for r in rows)
    at = {(r["algorithm"], r["impl"]): r["GBps"] for r in rows if r["n"] == n}
    pocl = at.get(("reduce", "pyopencl ReductionKernel"))
    copy = at.get(("copy", "OpenCL enqueue_copy"))
    mine = at.get(("reduce", "clpy"))
    if not (pocl and copy and mine):
        return ""
    need = 1.8 * pocl
    hbm = (
        f" and {need / H100_HBM_GBPS:.2f}x the H100's HBM3 peak ({H100_HBM_GBPS} GB/s)"
        if "h100" in device.lower()
        else ""
    )
    return (
        f"Reduce at 2^{n.bit_length() - 1}: 1.8x PyOpenCL's ReductionKernel ({pocl:.0f} GB/s) "
        f"would need {need:.0f} GB/s read, {need / copy:.2f}x this run's copy (read + write "
        f"{copy:.0f} GB/s){hbm}; clpy's reduce ran at {mine:.0f} GB/s "
        f"({mine / pocl:.2f}x PyOpenCL)."
    )


def write(dev: Any, out: Path, result: dict[str, Any], args: str, repeat: int) -> None:
    """algorithms_<device>.json and .md in ``out`` (the rows so far)."""
    slug = re.sub(r"[^a-z0-9]+", "_", dev.name.lower()).strip("_")[:60]
    out.mkdir(parents=True, exist_ok=True)
    (out / f"algorithms_{slug}.json").write_text(json.dumps(result, indent=1) + "\n")
    left = result.get("skipped") or []
    note = reduce_ceiling(result["rows"], dev.name)
    md = (
        f"# clpy.algorithms on {dev.name}\n\n{dev.description}\n\n"
        f"Median of {repeat} runs, float32 unless said; `python -m benchmarks.algorithms "
        f"{args}` ({result.get('seconds', 0):.0f} s). "
        '"clpy device only": '
        f"{BATCH_NOTE}.\n\n{table(result['rows'])}\n"
        + (f"\n{note}\n" if note else "")
        + (f"\nLeft out (time budget spent): {', '.join(left)}.\n" if left else "")
    )
    (out / f"algorithms_{slug}.md").write_text(md)
    print(f"wrote {out}/algorithms_{slug}.json and .md", flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
