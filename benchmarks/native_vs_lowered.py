"""Native vs clpy-lowered work-group collectives on one OpenCL device (e.g. NVIDIA).

The same kernel (``work_group_reduce_add`` + ``work_group_scan_inclusive_add`` +
``work_group_scan_exclusive_max`` per work-group of 256) is emitted twice: with the device's own
target (native built-ins where the driver has them and gets them right) and with the
collective feature removed (clpy's local-memory lowering). Results are checked equal, then the
kernel time is measured with OpenCL profiling events (median of ``--repeat``). Writes
benchmarks/results/native_vs_lowered.json.

    python benchmarks/native_vs_lowered.py --device opencl:nvidia
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import clpy  # noqa: E402
from clpy import Global, float32  # noqa: E402
from clpy.emit.lowering import without_features  # noqa: E402

WG = "__opencl_c_work_group_collective_functions"


@clpy.kernel
def scans(x: Global[float32], red: Global[float32], inc: Global[float32],
          exc: Global[float32]):
    i = clpy.get_global_id(0)
    v = x[i]
    red[i] = clpy.work_group_reduce_add(v)
    inc[i] = clpy.work_group_scan_inclusive_add(v)
    exc[i] = clpy.work_group_scan_exclusive_max(v)


def run(dev: clpy.runtime.devices.Device, n: int, repeat: int) -> dict[str, object]:
    import pyopencl as cl

    ctx = cl.Context([dev.cl_device])
    q = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    rng = np.random.default_rng(1)
    x = rng.integers(-8, 8, n).astype(np.float32)   # exact sums: both paths bit-identical
    mf = cl.mem_flags
    xb = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    outs = [cl.Buffer(ctx, mf.READ_WRITE, x.nbytes) for _ in range(3)]
    spec = scans.specialize()
    native_t = dev.target
    lowered_t = replace(without_features(native_t, WG), name=native_t.name + " (lowered)")
    results: dict[str, object] = {"device": dev.name, "n": n, "work_group": 256}
    arrays = {}
    for label, tgt in (("native", native_t), ("lowered", lowered_t)):
        src = spec.source_for(tgt)
        prg = cl.Program(ctx, src).build(options=[tgt.std_flag])
        k = prg.scans
        k.set_args(xb, *outs)
        times = []
        for r in range(repeat + 1):
            ev = cl.enqueue_nd_range_kernel(q, k, (n,), (256,))
            ev.wait()
            if r:
                times.append((ev.profile.end - ev.profile.start) * 1e-9)
        got = [np.empty_like(x) for _ in outs]
        for g, b in zip(got, outs):
            cl.enqueue_copy(q, g, b)
        q.finish()
        arrays[label] = got
        results[f"{label}_s"] = float(np.median(times))
        results[f"{label}_native_calls"] = src.count("work_group_")
    same = all(np.array_equal(a, b) for a, b in zip(arrays["native"], arrays["lowered"]))
    results["identical"] = same
    results["lowered_over_native"] = results["lowered_s"] / results["native_s"]  # type: ignore[operator]
    return results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="opencl:nvidia")
    ap.add_argument("--n", type=int, default=1 << 24)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--json", default=str(Path(__file__).parent / "results" /
                                          "native_vs_lowered.json"))
    a = ap.parse_args()
    res = run(clpy.get_device(a.device), a.n, a.repeat)
    print(json.dumps(res, indent=1))
    Path(a.json).write_text(json.dumps(res, indent=1) + "\n")


if __name__ == "__main__":
    main()
