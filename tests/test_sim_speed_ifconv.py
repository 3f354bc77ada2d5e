"""If-conversion (sim/ifconv.py: branches that only set variables run on every lane and are
blended) and the unsigned-remainder fast path (sim/ops.py) give the same bytes as the
compacted branches and NumPy's remainder: int, uint, float and vector variables, ``op=``,
``else`` sides, variables set in one side only, uniform and per-group conditions."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Global, float4, float32, int32, uint32
from clpy.types import catalog as C
from clpy_sim import ifconv, ops, plan
from tests.test_sim_stmtgen import _outcome  # results, or every report in full


@clpy.kernel
def branches(x: Global[float32], k: Global[uint32], out: Global[float32], ki: Global[int32]):
    gid = clpy.get_global_id(0)
    lid = clpy.get_local_id(0)
    v = x[gid]
    u = k[gid]
    s = 1 - 2 * lid
    w = float4(v)
    if (u // 4) % 2 == 1:  # arbitrary lanes
        v = v * float32(2.0) - float32(1.0)
        u = u + 7
    else:
        s += 3
        w = w * float32(0.5)
    if v > float32(0.5):
        t = v * v  # set in this side only (not visible after the merge)
        v = t + float32(1.0)
    if lid < 3:  # the same lanes of every group: the general path
        s = s * 5
    if clpy.get_group_id(0) == 1:  # whole groups
        u = u % 5
    out[gid] = v + w.y + float32(s)
    ki[gid] = int32(u % 3) + s


@pytest.fixture
def fresh_plans() -> Iterator[None]:
    plan._PLANS.clear()
    yield
    ifconv.ENABLED = True
    plan._PLANS.clear()


@pytest.mark.parametrize("checks", [False, True])
def test_blended_branches(fresh_plans: None, checks: bool) -> None:
    rng = np.random.default_rng(7)
    x = rng.random(256).astype(np.float32)
    k = rng.integers(0, 2**32, 256, dtype=np.uint64).astype(np.uint32)
    out = np.zeros(256, np.float32)
    ki = np.zeros(256, np.int32)

    def run() -> Any:
        arrays = [out.copy(), ki.copy()]
        with clpy.sim.config(checks=checks, threads=1):
            branches[(256,), (64,)](x, k, *arrays, device="sim")
        return [a.tobytes() for a in arrays]

    got = []
    for on in (True, False):
        ifconv.ENABLED = on
        got.append(_outcome(run))
    assert got[0] == got[1] and got[0][0] == "ok"


@pytest.mark.parametrize(
    "dt, t", [(np.uint8, C.uchar), (np.uint16, C.ushort), (np.uint32, C.uint), (np.uint64, C.ulong)]
)
def test_unsigned_remainder(dt: Any, t: Any) -> None:
    info = np.iinfo(dt)
    a = np.random.default_rng(8).integers(0, int(info.max), 4096, dtype=np.uint64).astype(dt)
    a[:4] = [0, 1, info.max, info.max - 1]
    for b in (1, 2, 3, 7, 8, 64, 255, int(info.max)):
        for op in ("%", "floormod"):
            got = ops.int_binary(op, a, dt(b), t)
            assert got.dtype == dt and np.array_equal(got, np.fmod(a, dt(b)))
            one = ops.int_binary(op, a[2], dt(b), t)
            assert type(one) is type(a[2]) and one == np.fmod(a[2], dt(b))
