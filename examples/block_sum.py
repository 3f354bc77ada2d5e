"""The README's example: per-work-group sums with a work-group collective.

Run with `make demo`. Prints the emitted OpenCL C, runs the kernel on the default device (the
first OpenCL GPU, else clpy's simulator; CLPY_DEVICE overrides) and checks the result.
"""

from __future__ import annotations

import numpy as np

import clpy
from clpy import Global, float32, int32, kernel


@kernel
def block_sum(x: Global[float32], out: Global[float32], n: int32):
    gid = clpy.get_global_id(0)
    v = x[gid] if gid < n else 0.0
    s = clpy.work_group_reduce_add(v)
    if clpy.get_local_id(0) == 0:
        out[clpy.get_group_id(0)] = s


def main() -> None:
    print(block_sum.source)
    n, wg = 1000, 256
    groups = (n + wg - 1) // wg
    rng = np.random.default_rng(0)
    x = rng.random(n, dtype=np.float32)
    out = np.zeros(groups, np.float32)
    device = clpy.default_device()
    block_sum[(groups * wg,), (wg,)](x, out, n)
    padded = np.zeros(groups * wg, np.float32)
    padded[:n] = x
    expected = padded.reshape(groups, wg).sum(axis=1)
    ok = np.allclose(out, expected, rtol=1e-5)
    print(f"device: {device}")
    print(f"block sums: {np.array2string(out, precision=4)}")
    print(f"NumPy:      {np.array2string(expected, precision=4)}")
    print("OK" if ok else "MISMATCH")
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
