"""Bilinear image sampling throughput: the simulator against an OpenCL device (issue 10).

One kernel reads ``n`` samples (default 2^20) of a 512x512 RGBA float image with a normalized,
linear, REPEAT sampler at pseudo-random coordinates and writes them out. The table gives the
best of ``--repeat`` launches after a warm-up (arguments copied in and out, as a user's call
does) and the ratio simulator / device in samples per second.

    .venv/bin/python benchmarks/images_bench.py [--device opencl] [--n 1048576] [--repeat 5]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import clpy  # noqa: E402
from benchmarks.timing import best_time  # noqa: E402
from clpy import Global, float2, float4  # noqa: E402

SMP = clpy.sampler(normalized=True, address=clpy.REPEAT, filter=clpy.LINEAR)


@clpy.kernel
def bilinear(img: clpy.Image2D, c: Global[float2], out: Global[float4]):
    i = clpy.get_global_id(0)
    out[i] = clpy.read_imagef(img, SMP, c[i])


def _best(
    dev: str, n: int, repeat: int, img: np.ndarray, c: np.ndarray
) -> tuple[float, np.ndarray]:
    out = np.zeros((n, 4), np.float32)
    return best_time(lambda: bilinear[(n,), (256,)](img, c, out, device=dev), repeat), out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="opencl")
    ap.add_argument("--n", type=int, default=1 << 20)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    img = rng.random((512, 512, 4), dtype=np.float32)
    c = rng.uniform(-1.0, 2.0, (a.n, 2)).astype(np.float32)
    with clpy.sim.config(checks=False):
        t_sim, o_sim = _best("sim", a.n, a.repeat, img, c)
    t_dev, o_dev = _best(a.device, a.n, a.repeat, img, c)
    diff = float(np.abs(o_sim - o_dev).max())
    print(f"bilinear sampling, {a.n} samples of a 512x512 RGBA float image")
    print("| device | time (ms) | samples/s |")
    print("| --- | --- | --- |")
    print(f"| sim | {t_sim * 1e3:.1f} | {a.n / t_sim:.3g} |")
    print(f"| {clpy.get_device(a.device)} | {t_dev * 1e3:.1f} | {a.n / t_dev:.3g} |")
    ratio = t_dev / t_sim
    print(f"sim / device throughput: {ratio:.2f}x (goal >= 0.5x); max |sim - device| {diff:.1e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
