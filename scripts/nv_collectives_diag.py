"""Which native work-group collectives disagree with the spec on this device (diagnostic)."""
import os
from dataclasses import replace

import numpy as np
import pyopencl as cl

import clpy
from clpy import Global, int32
from tests import test_collectives as T
from tests.test_collectives_util import run_cl

NAMES = ["reduce_add", "reduce_min", "reduce_max", "scan_inclusive_add", "scan_inclusive_min",
         "scan_inclusive_max", "scan_exclusive_add", "scan_exclusive_min", "scan_exclusive_max",
         "broadcast_3d", "broadcast_linear"]
want = os.environ.get("CLPY_TEST_PLATFORM", "nvidia")
dev = [d for p in cl.get_platforms() if want in p.name.lower() for d in p.get_devices()][0]
ctx = cl.Context([dev])
q = cl.CommandQueue(ctx)
tgt = clpy.get_device(dev).target
tgt = replace(tgt, info={**tgt.info, "max_work_group_size": dev.max_work_group_size,
                         "local_mem_size": dev.local_mem_size})
report = {}
for dtype in T.TYPES:
    dt = np.dtype(dtype)
    Ty = clpy.types.catalog.scalar_for_dtype(dt)
    spec = T.every_collective.specialize(x=Global[Ty], out=Global[Ty], flags=Global[int32])
    rng = np.random.default_rng(7)
    bad = {}
    for gsize, lsize in T.SHAPES:
        n = int(np.prod(gsize))
        x = (rng.standard_normal(n).astype(dt) if dt.kind == "f" else
             rng.integers(0 if dt.kind == "u" else np.iinfo(dt).min, np.iinfo(dt).max, n,
                          dtype=dt, endpoint=True))
        ls3 = tuple(lsize) + (1,) * (3 - len(lsize))
        b = (ls3[0] - 1, ls3[1] // 2, ls3[2] - 1)
        out = np.zeros(11 * n, dt)
        flags = np.zeros(2 * n, np.int32)
        _, got, gflags = run_cl(ctx, q, spec, tgt, gsize, lsize, x, out, flags, *b)
        ref, wflags = T._reference(x, gsize, lsize, b)
        for k, w in enumerate(ref):
            g = got[k * n:(k + 1) * n]
            ok = (np.allclose(g, w, rtol=1e-4, atol=1e-3 * np.abs(x).max() * np.prod(lsize))
                  if dt.kind == "f" and k in (0, 3, 6) else np.array_equal(g, w))
            if not ok:
                i = int(np.nonzero(~np.isclose(g, w) if dt.kind == "f" else g != w)[0][0])
                bad.setdefault(NAMES[k], []).append(
                    f"{gsize}/{lsize}: [{i}] got {g[i]!r} want {w[i]!r}")
        for k, w in enumerate(wflags):
            if not np.array_equal(gflags[k * n:(k + 1) * n], w):
                bad.setdefault(["all", "any"][k], []).append(f"{gsize}/{lsize}")
    report[dt.name] = bad
for dt, bad in report.items():
    print(dt, {k: len(v) for k, v in bad.items()})
    for k, v in bad.items():
        print("   ", k, v[0])
