"""A loop of launches with NumPy arguments vs ``clpy.DeviceArray`` arguments, same process,
same kernel, same device: what keeping data on the device saves in a whole program.

An explicit-Euler heat-equation step (3-point stencil, ping-pong buffers) is launched
``--steps`` times over ``--n`` float32 cells. With NumPy arguments every launch copies both
arrays to the device and the written one back (the README's simple way); with DeviceArrays the
data crosses the bus twice in all. The results must be bit-identical. Reported: wall time of
the whole loop (median of ``--repeat``) and the ratio NumPy / DeviceArray.

    .venv/bin/python benchmarks/device_arrays.py [--device opencl] [--n 4194304] [--steps 50]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import clpy  # noqa: E402
from clpy import Global, float32, int32  # noqa: E402


@clpy.kernel
def heat(u: Global[float32], v: Global[float32], n: int32, r: float32):
    i = clpy.get_global_id(0)
    if 0 < i < n - 1:
        v[i] = u[i] + r * (u[i - 1] - 2.0 * u[i] + u[i + 1])
    elif i == 0 or i == n - 1:
        v[i] = u[i]


def run_numpy(dev: str, u0: np.ndarray, steps: int) -> tuple[float, np.ndarray]:
    n = u0.size
    u, v = u0.copy(), np.empty_like(u0)
    t = time.perf_counter()
    for _ in range(steps):
        heat[(n,), (256,)](u, v, n, 0.25, device=dev)
        u, v = v, u
    return time.perf_counter() - t, u


def run_device(dev: str, u0: np.ndarray, steps: int) -> tuple[float, np.ndarray]:
    n = u0.size
    t = time.perf_counter()
    u = clpy.to_device(u0, device=dev)
    v = clpy.empty(n, np.float32, device=dev)
    for _ in range(steps):
        heat[(n,), (256,)](u, v, n, 0.25, device=dev)
        u, v = v, u
    out = u.get()
    return time.perf_counter() - t, out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="opencl")
    ap.add_argument("--n", type=int, default=1 << 22)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    dev = str(clpy.get_device(a.device))
    u0 = np.random.default_rng(1).random(a.n, dtype=np.float32)
    run_numpy(dev, u0[:1024].copy(), 2)         # build and warm up
    run_device(dev, u0[:1024].copy(), 2)
    tn, td = [], []
    for _ in range(a.repeat):
        t1, out_n = run_numpy(dev, u0, a.steps)
        t2, out_d = run_device(dev, u0, a.steps)
        assert out_n.tobytes() == out_d.tobytes(), "NumPy and DeviceArray results differ"
        tn.append(t1)
        td.append(t2)
    mn, md = statistics.median(tn), statistics.median(td)
    row = {"device": dev, "n": a.n, "steps": a.steps, "numpy_s": mn, "device_array_s": md,
           "ratio": mn / md}
    print(f"device: {dev}\nheat, {a.n} cells, {a.steps} steps (median of {a.repeat}):")
    print(f"  NumPy arguments      {mn * 1e3:9.1f} ms")
    print(f"  DeviceArray          {md * 1e3:9.1f} ms")
    print(f"  NumPy / DeviceArray  {mn / md:9.2f}x   (bit-identical results)")
    if a.json:
        Path(a.json).write_text(json.dumps(row, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
