"""Local-memory accesses through runs of any step (``LocalMem._run_where``: a column slice of
the run's step, NW's anti-diagonals step by -16) give the bytes and checker reports of the same
indices computed node by node as arrays (``affine.ENABLED`` off: ``LocalMem.where``'s index
rows), and of NumPy: steps -16, 18 and 1, a run ending at element 0 (a slice with no stop),
every group present and a subset of groups (a per-group branch)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Global, int32
from clpy_sim import SimulationError, affine, plan

N = 17  # work-items per group, the tile is N x N
G = 4


@clpy.kernel
def stepped(x: Global[int32], out: Global[int32], k: int32):
    tile = clpy.local_array(int32, N * N)
    back = clpy.local_array(int32, N * N)
    tx = clpy.get_local_id(0)
    g = clpy.get_group_id(0)
    for i in range(N):
        tile[i * N + tx] = x[g * N * N + i * N + tx]
        back[i * N + tx] = 0
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    a = tile[(N - 1 - tx) * (N - 1)]  # step -16, down to element 0
    b = tile[tx * (N + 1)]  # step 18, the diagonal
    c = tile[(k - tx) * N + tx]  # step -16 from row k
    back[(N - 1 - tx) * (N - 1)] = a + b  # a store of step -16
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    if g % 2 == 0:  # every other group: a subset of the groups' rows
        c += tile[(N - 1 - tx) * (N - 1) + 1] + back[tx * (N + 1)]
        back[(k - tx) * N + tx] = c
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    out[g * N + tx] = a * 3 + b * 5 + c * 7 + back[(N - 1 - tx) * (N - 1)] + back[k * N]


@clpy.kernel
def racy(out: Global[int32]):
    tile = clpy.local_array(int32, N * N)
    tx = clpy.get_local_id(0)
    tile[(N - 1 - tx) * (N - 1)] = tx  # step -16
    out[clpy.get_global_id(0)] = tile[tx * (N - 1)]  # another lane's element, no barrier


def _reference(x: np.ndarray, k: int) -> np.ndarray:
    out = np.zeros(G * N, np.int64)
    tx = np.arange(N)
    for g in range(G):
        tile = x[g * N * N : (g + 1) * N * N].astype(np.int64)
        back = np.zeros(N * N, np.int64)
        a = tile[(N - 1 - tx) * (N - 1)]
        b = tile[tx * (N + 1)]
        c = tile[(k - tx) * N + tx].copy()
        back[(N - 1 - tx) * (N - 1)] = a + b
        if g % 2 == 0:
            c += tile[(N - 1 - tx) * (N - 1) + 1] + back[tx * (N + 1)]
            back[(k - tx) * N + tx] = c
        last = back[(N - 1 - tx) * (N - 1)] + back[k * N]
        out[g * N : (g + 1) * N] = a * 3 + b * 5 + c * 7 + last
    return out.astype(np.int32)


@pytest.fixture
def fresh_plans() -> Iterator[None]:
    plan._PLANS.clear()
    yield
    affine.ENABLED = True
    plan._PLANS.clear()


def _run(kernel: Any, args: list[Any], checks: bool, exact: bool) -> Any:
    affine.ENABLED = exact
    plan._PLANS.clear()
    out = args[-1] if kernel is racy else args[1]
    out[...] = 0
    try:
        with clpy.sim.config(checks=checks, threads=1, on_error="raise"):
            kernel[(G * N,), (N,)](*args, device="sim")
        return ("ok", out.tobytes())
    except SimulationError as e:
        return ("error", [(r.kind, r.message, r.loc, r.global_id) for r in e.reports])


@pytest.mark.parametrize("checks", [False, True])
@pytest.mark.parametrize("k", [N - 1, 20])
def test_stepped_runs(fresh_plans: None, checks: bool, k: int) -> None:
    x = np.random.default_rng(3).integers(-1000, 1000, G * N * N).astype(np.int32)
    args = [x, np.zeros(G * N, np.int32), k]
    exact = _run(stepped, args, checks, True)
    general = _run(stepped, args, checks, False)
    assert exact == general
    if k < N:
        assert exact == ("ok", _reference(x, k).tobytes())
    elif checks:  # row 20 is out of the tile: the bounds checker's report
        assert exact[0] == "error"


def test_stepped_race(fresh_plans: None) -> None:
    args = [np.zeros(G * N, np.int32)]
    exact = _run(racy, args, True, True)
    assert exact == _run(racy, args, True, False)
    assert exact[0] == "error" and any(kind == "data-race" for kind, *_ in exact[1])
