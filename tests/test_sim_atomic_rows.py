"""Unused-result integer atomics on global memory whose address is the same for every
work-group of a batch (``atomic_add(h, lid, v)``: per-group histograms merged into one) take
``sim/atomics.py``'s ``_discarded_rows`` (combine down the groups first): the final memory is
the general path's, bit for bit, for every operator and integer dtype, with wrap-around and
with several lanes of a group on one address; and a kernel gives NumPy's answer."""

from __future__ import annotations

import numpy as np
import pytest

import clpy
from clpy import Global, int32, uint32
from clpy_sim import atomics

OPS = ["add", "sub", "inc", "dec", "min", "max", "and", "or", "xor"]
DTYPES = [np.int32, np.uint32, np.int64, np.uint64]


def _vals(rng: np.random.Generator, dt: type, shape: tuple[int, int]) -> np.ndarray:
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, shape, dtype=dt, endpoint=True)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("row", ["ramp", "repeats", "reversed"])
def test_rows_equal_general_path(op: str, dt: type, row: str) -> None:
    rng = np.random.default_rng(hash((op, row)) % 2**32)
    G, W, size = 7, 16, 40
    addr = {
        "ramp": np.arange(W) + 3,
        "repeats": rng.integers(0, 5, W),
        "reversed": np.arange(W)[::-1] * 2,
    }[row]
    idx = np.broadcast_to(addr[None, :], (G, W))
    vals = [_vals(rng, dt, (G, W))] if op not in ("inc", "dec") else []
    start = _vals(rng, dt, (size,))
    a, b = start.copy(), start.copy()
    assert idx.strides[0] == 0
    assert atomics._discarded(op, a, idx, vals, (G, W))  # the rows path
    assert atomics._discarded(op, b, np.ascontiguousarray(idx), vals, (G, W))  # general
    assert a.dtype == b.dtype and a.tobytes() == b.tobytes()


def test_rows_operand_broadcast_over_groups() -> None:
    """A uniform operand (shape (1, W) or a scalar) is counted once per group."""
    G, W = 5, 8
    idx = np.broadcast_to(np.arange(W)[None, :], (G, W))
    for v in (np.arange(W, dtype=np.int32)[None, :], np.int32(3)):
        a = np.zeros(W, np.int32)
        b = a.copy()
        atomics._discarded("add", a, idx, [v], (G, W))
        atomics._discarded("add", b, np.ascontiguousarray(idx), [v], (G, W))
        assert a.tobytes() == b.tobytes()


@clpy.kernel
def _merge(x: Global[uint32], h: Global[int32]):
    lh = clpy.local_array(int32, 64)
    lid = clpy.get_local_id(0)
    lh[lid] = 0
    clpy.barrier()
    clpy.atomic_inc(lh, x[clpy.get_global_id(0)] % 64)
    clpy.barrier()
    clpy.atomic_add(h, lid % 16, lh[lid])  # four lanes of a group per address
    clpy.atomic_max(h, 16 + lid % 8, lh[lid])


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("checks", [False, True])
def test_histogram_merge_kernel(threads: int, checks: bool) -> None:
    x = np.random.default_rng(0).integers(0, 1 << 20, 64 * 40).astype(np.uint32)
    h = np.zeros(24, np.int32)
    with clpy.sim.config(checks=checks, threads=threads, max_lanes=64 * 8):
        _merge[(x.size,), (64,)](x, h, device="sim")
    per = np.stack([np.bincount(g % 64, minlength=64) for g in x.reshape(-1, 64)])
    want = np.zeros(24, np.int64)
    want[:16] = per.reshape(-1, 4, 16).sum(axis=(0, 1))
    want[16:] = per.reshape(-1, 8, 8).max(axis=(0, 1))
    assert h.tolist() == want.tolist()
