"""Generated statements for float vectors and declarations (sim/stmtgen.py), ``sqrt`` in its
own precision (sim/builtins/math.py) and vector loads without ``np.moveaxis``
(sim/memory.py) give the same bytes as the closures and the wide ``sqrt``: N-body's inner
loop shape, float4 and double2, accumulators updated in place and not."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Global, double2, float4, float32, float64
from clpy_sim import plan, stmtgen


@clpy.kernel
def bodies(pos: Global[float4], out: Global[float4], d2: Global[double2], eps: float32):
    tid = clpy.get_local_id(0)
    tile = clpy.local_array(float4, 16)
    me = pos[clpy.get_global_id(0)]
    tile[tid] = me
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    acc = float4(0.0)
    for j in range(16):
        p = tile[j]
        r = p - me
        q = r * r + p
        dist = r.x * r.x + r.y * r.y + r.z * r.z
        inv = float32(1.0) / clpy.sqrt(dist + eps)
        acc += (p.w * inv) * r
        acc -= q * float32(1.0e-3)
    out[clpy.get_global_id(0)] = acc
    v = d2[clpy.get_global_id(0)]
    w = v * v + v
    w += clpy.sqrt(v)
    d2[clpy.get_global_id(0)] = w


@pytest.fixture
def fresh_plans() -> Iterator[None]:
    plan._PLANS.clear()
    yield
    stmtgen.ENABLED = True
    plan._PLANS.clear()


@pytest.mark.parametrize("checks", [False, True])
def test_vector_statements(fresh_plans: None, checks: bool) -> None:
    rng = np.random.default_rng(9)
    pos = rng.standard_normal((64, 4)).astype(np.float32)
    pos[3, 1] = np.nan
    d2 = rng.standard_normal((64, 2))

    def run() -> Any:
        out = np.zeros((64, 4), np.float32)
        dd = d2.copy()
        with clpy.sim.config(checks=checks, threads=1):
            bodies[(64,), (16,)](pos, out, dd, float32(0.25), device="sim")
        return out.tobytes(), dd.tobytes()

    got = []
    for on in (True, False):
        stmtgen.ENABLED = on
        plan._PLANS.clear()
        got.append(run())
    assert got[0] == got[1]


def test_sqrt_own_precision() -> None:
    from clpy_sim.builtins import math as smath

    class Call:
        def __init__(self, ret: Any) -> None:
            self.ret = ret
            self.params = [ret]

    rng = np.random.default_rng(10)
    for dt, t in ((np.float32, float32), (np.float64, float64)):
        bits = np.uint32 if dt == np.float32 else np.uint64
        x = rng.integers(0, np.iinfo(bits).max, 100_000, dtype=bits).view(dt)
        with np.errstate(all="ignore"):
            got = smath.IMPLS["sqrt"](Call(t), None, [x])
            wide = np.sqrt(x.astype(np.float64)).astype(dt)
        assert got.dtype == dt and got.view(bits).tobytes() == wide.view(bits).tobytes()
