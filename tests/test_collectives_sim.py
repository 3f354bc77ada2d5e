"""Collectives on the simulator against PoCL's lowered code: identical results, floats included
(both use the chunked combination order of clpy/emit/lower_helpers.py)."""

from __future__ import annotations

import numpy as np
import pytest

import clpy
import clpy_sim as sim
from clpy import Global, int32
from tests.test_collectives import SHAPES, TYPES, every_collective, spec_scan
from tests.test_collectives_util import cl_target, per_group, run_cl
from tests.test_reductions import MinMax, ValIdx, int_ops, user_reductions


def _inputs(dt: np.dtype, n: int, rng: np.random.Generator) -> np.ndarray:
    if dt.kind == "f":
        return rng.standard_normal(n).astype(dt)
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)


def test_spec_example_sim():
    x = np.array([3, 1, 7, 0, 4, 1, 6, 3], np.int32)
    inc, exc = np.zeros(8, np.int32), np.zeros(8, np.int32)
    sim.launch(spec_scan.ir, (8,), (8,), [x, inc, exc])
    assert inc.tolist() == [3, 4, 11, 11, 15, 16, 22, 25]
    assert exc.tolist() == [0, 3, 4, 11, 11, 15, 16, 22]


@pytest.mark.parametrize("dtype", TYPES, ids=lambda d: np.dtype(d).name)
def test_every_collective_sim_equals_pocl(cl_device, cl_context, cl_queue, dtype):
    dt = np.dtype(dtype)
    T = clpy.types.catalog.scalar_for_dtype(dt)
    spec = every_collective.specialize(x=Global[T], out=Global[T], flags=Global[int32])
    rng = np.random.default_rng(11)
    for gsize, lsize in SHAPES:
        n = int(np.prod(gsize))
        x = _inputs(dt, n, rng)
        ls3 = tuple(lsize) + (1,) * (3 - len(lsize))
        b = (ls3[0] // 2, ls3[1] - 1, ls3[2] // 2)
        out, flags = np.zeros(11 * n, dt), np.zeros(2 * n, np.int32)
        _, want, wflags = run_cl(cl_context, cl_queue, spec, cl_target(cl_device), gsize,
                                 lsize, x, out, flags, *b)
        sim.launch(spec.function, gsize, lsize, [x, out, flags, *(np.int32(v) for v in b)])
        np.testing.assert_array_equal(out, want, err_msg=f"{gsize} {lsize}")
        np.testing.assert_array_equal(flags, wflags)


def test_half_sim_matches_numpy_float16():
    spec = every_collective.specialize(x=Global[clpy.half], out=Global[clpy.half],
                                       flags=Global[int32])
    x = (np.arange(48) % 7 - 2).astype(np.float16)
    out, flags = np.zeros(11 * 48, np.float16), np.zeros(96, np.int32)
    sim.launch(spec.function, (48,), (16,), [x, out, flags, *(np.int32(v) for v in (3, 0, 0))])
    want = per_group(x, (48,), (16,), lambda v: np.cumsum(v, dtype=np.float16))
    np.testing.assert_array_equal(out[3 * 48:4 * 48], want)
    assert out[0] == x[:16].sum()


@pytest.mark.parametrize("gsize,lsize", [((8,), (8,)), ((60,), (12,)), ((99,), (33,))])
def test_user_and_operator_reductions_sim_equals_pocl(cl_device, cl_context, cl_queue,
                                                      gsize, lsize):
    n = gsize[0]
    rng = np.random.default_rng(5)
    x = rng.integers(-3, 4, n).astype(np.float32)
    ang = rng.uniform(-0.3, 0.3, n)
    c = np.stack([np.cos(ang), np.sin(ang)], axis=1).astype(np.float32)
    args = [x, np.zeros(n, ValIdx.dtype), c, np.zeros(n, MinMax.dtype), np.zeros(n, MinMax.dtype)]
    spec = user_reductions.specialize()
    want = run_cl(cl_context, cl_queue, spec, cl_target(cl_device), gsize, lsize, *args)
    got = [a.copy() for a in args]
    sim.launch(spec.function, gsize, lsize, got)
    for k in (1, 3, 4):  # argmax, (min, max) pairs: exact
        assert got[k].tobytes() == want[k].tobytes()
    # complex product: the device may contract a*b - c*d into an fma (FP_CONTRACT is on by
    # default in OpenCL C), so allow a few ulps per combination
    np.testing.assert_allclose(got[2], want[2], rtol=0, atol=1e-6 * lsize[0])
    xi = rng.integers(-5, 6, n).astype(np.int32)
    ispec = int_ops.specialize()
    _, iw = run_cl(cl_context, cl_queue, ispec, cl_target(cl_device), gsize, lsize, xi,
                   np.zeros(8 * n, np.int32))
    ig = np.zeros(8 * n, np.int32)
    sim.launch(ispec.function, gsize, lsize, [xi, ig])
    np.testing.assert_array_equal(ig, iw)


@clpy.kernel
def subgroup_info(out: Global[int32], red: Global[int32]):
    g = clpy.get_global_id(0)
    out[4 * g] = clpy.get_sub_group_size()
    out[4 * g + 1] = clpy.get_sub_group_id()
    out[4 * g + 2] = clpy.get_sub_group_local_id()
    out[4 * g + 3] = clpy.get_num_sub_groups()
    red[2 * g] = clpy.sub_group_reduce_add(int32(g))
    red[2 * g + 1] = clpy.sub_group_scan_exclusive(int32(g) + 1, "*")


def test_sub_groups_sim_configurable_size():
    out, red = np.zeros(4 * 40, np.int32), np.zeros(80, np.int32)
    with clpy.sim.config(sub_group_size=16):
        sim.launch(subgroup_info.ir, (40,), (40,), [out, red])
    info = out.reshape(40, 4)
    assert info[:, 0].tolist() == [16] * 32 + [8] * 8  # last sub-group smaller
    assert info[:, 1].tolist() == [0] * 16 + [1] * 16 + [2] * 8
    assert info[:, 2].tolist() == list(range(16)) * 2 + list(range(8))
    assert set(info[:, 3]) == {3}
    g = np.arange(40)
    want = np.concatenate([np.full(16, g[:16].sum()), np.full(16, g[16:32].sum()),
                           np.full(8, g[32:].sum())])
    np.testing.assert_array_equal(red[0::2], want)
    assert red[1:34:2].tolist()[:4] == [1, 1, 2, 6]


def test_sub_groups_degenerate_on_pocl_equal_sim(cl_device, cl_context, cl_queue):
    """PoCL has no sub-groups: clpy lowers with one sub-group per work-group; the simulator
    with sub_group_size = work-group size agrees."""
    spec = subgroup_info.specialize()
    src = spec.source_for(cl_target(cl_device))
    assert "sub_group" not in src.split("__kernel")[1].replace("subgroup_info", "")
    args = [np.zeros(4 * 24, np.int32), np.zeros(48, np.int32)]
    want = run_cl(cl_context, cl_queue, spec, cl_target(cl_device), (24,), (12,), *args)
    got = [a.copy() for a in args]
    with clpy.sim.config(sub_group_size=12):
        sim.launch(spec.function, (24,), (12,), got)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


@clpy.kernel
def partial_group(x: Global[int32]):
    g = clpy.get_global_id(0)
    if x[g] > 0:  # data-dependent: not provable at compile time
        x[g] = clpy.work_group_reduce_add(x[g])


def test_sim_reports_collective_reached_by_part_of_group():
    x = np.array([1, 0, 1, 1], np.int32)
    with pytest.raises(clpy.sim.SimulationError, match="work_group_reduce_add reached by 3"):
        sim.launch(partial_group.ir, (4,), (4,), [x])


def test_sub_group_info_host_side(cl_device):
    assert subgroup_info.sub_group_info("sim", (40,)) == (32, 2)
    with clpy.sim.config(sub_group_size=16):
        assert subgroup_info.sub_group_info("sim", (8, 5)) == (16, 3)
    pocl = next(d for d in clpy.devices() if d != "sim")
    assert subgroup_info.sub_group_info(pocl, (24,)) == (24, 1)  # no sub-groups: degenerate
