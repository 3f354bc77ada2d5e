"""clpy.dask (issue 16): kernels over Dask arrays on process workers, on the simulator and on
PoCL. One LocalCluster (2 worker processes, 1 thread each) serves the whole module."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import clpy
from clpy import Global, float32, float64, int32

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
import clpy.dask as cd  # noqa: E402


# --- kernels (module level: pickled by module reference) ---------------------------------
@clpy.kernel
def sum_diff(
    x: Global[float32], y: Global[float32], a: float32, s: Global[float32], d: Global[float64]
):
    i = clpy.get_global_id(0)
    s[i] = a * x[i] + y[i]
    d[i] = x[i] - y[i]


@clpy.kernel
def scale(x: Global[float32], a: float32):
    x[clpy.get_global_id(0)] *= a


@clpy.kernel
def where_2d(out: Global[int32], ncols: int32, off0: int32, off1: int32):
    i = clpy.get_global_id(0)
    j = clpy.get_global_id(1)
    out[i * ncols + j] = (off0 + i) * 1000 + off1 + j


@clpy.kernel
def laplace(u: Global[float32], v: Global[float32], shape: clpy.int2):
    i = clpy.get_global_id(0)
    j = clpy.get_global_id(1)
    n = shape.y
    if 0 < i < shape.x - 1 and 0 < j < n - 1:
        c = i * n + j
        v[c] = u[c - n] + u[c + n] + u[c - 1] + u[c + 1] - 4.0 * u[c]


@clpy.kernel
def smooth_1d(u: Global[float32], v: Global[float32], n: int32):
    i = clpy.get_global_id(0)
    if 0 < i < n - 1:
        v[i] = (u[i - 1] + u[i] + u[i + 1]) / 3.0


@clpy.kernel
def reads_past_end(x: Global[float32], y: Global[float32]):
    i = clpy.get_global_id(0)
    y[i] = x[i + 1]  # the last work-item reads past its chunk


@clpy.reduction(identity=0.0)
def absmax(a: float32, b: float32) -> float32:
    return max(abs(a), abs(b))


@clpy.struct
class ValIdx:
    val: float32
    idx: int32


@clpy.reduction(identity=ValIdx(-np.inf, 2**31 - 1))
def argmax(a: ValIdx, b: ValIdx) -> ValIdx:
    return a if a.val > b.val or (a.val == b.val and a.idx < b.idx) else b


@clpy.kernel
def bad_types(x: Global[float32]):
    x[0] = x  # a pointer stored into a float: a compile error on the worker


def _line_of(text: str, fn: object) -> int:
    import inspect

    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, ln in enumerate(lines) if text in ln)


# --- fixtures --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            processes=True, n_workers=2, threads_per_worker=1, dashboard_address=None
        ) as cluster,
        Client(cluster) as c,
    ):
        yield c


@pytest.fixture(params=["sim", "opencl"])
def device(request: pytest.FixtureRequest) -> str:
    """A device selector the workers resolve: the simulator, or the tests' OpenCL device
    (PoCL unless CLPY_TEST_PLATFORM says otherwise; fails under CI=true when missing, see
    conftest.py)."""
    if request.param == "sim":
        return "sim"
    cl_device = request.getfixturevalue("cl_device")
    return clpy.get_device(cl_device).name


# --- map_blocks ------------------------------------------------------------------------------
def test_several_inputs_and_outputs(client: object, device: str) -> None:
    xn = np.linspace(-3, 3, 50, dtype=np.float32)
    yn = np.arange(50, dtype=np.float32)
    x = da.from_array(xn, chunks=13)
    y = da.from_array(yn, chunks=(20, 20, 10))  # rechunked like x
    s, d = cd.map_blocks(sum_diff, x, y, 2.5, device=device)  # outputs: the written s, d
    assert s.dtype == np.float32 and d.dtype == np.float64 and s.chunks == x.chunks
    sv, dv = da.compute(s, d)
    np.testing.assert_array_equal(sv, np.float32(2.5) * xn + yn)
    np.testing.assert_array_equal(dv, (xn - yn).astype(np.float64))
    (s1,) = cd.map_blocks(sum_diff, x, y, a=1.0, d=None, out=("s",), device=device)
    np.testing.assert_array_equal(s1.compute(), xn + yn)


def test_in_place_kernel_leaves_its_input_alone(client: object, device: str) -> None:
    xn = np.arange(30, dtype=np.float32)
    x = da.from_array(xn, chunks=7)
    y = cd.map_blocks(scale, x, 3.0, out="x", device=device)
    np.testing.assert_array_equal(y.compute(), 3 * xn)
    np.testing.assert_array_equal(x.compute(), xn)


def test_2d_chunks_block_shape_and_offset(client: object, device: str) -> None:
    """A generator over uneven 2-D chunks: each work-item writes its global (row, col)."""
    t = da.zeros((7, 10), chunks=(3, 4), dtype=np.int8)
    out = cd.map_blocks(
        where_2d,
        ncols=cd.BLOCK_SHAPE[1],
        off0=cd.BLOCK_OFFSET[0],
        off1=cd.BLOCK_OFFSET[1],
        like=t,
        device=device,
    )
    assert out.dtype == np.int32 and out.chunks == t.chunks
    i, j = np.indices((7, 10))
    np.testing.assert_array_equal(out.compute(), i * 1000 + j)


def test_stencil_with_halos_matches_numpy(client: object, device: str) -> None:
    rng = np.random.default_rng(7)
    un = rng.standard_normal((12, 10)).astype(np.float32)
    u = da.from_array(un, chunks=(5, 4))
    v = cd.map_blocks(
        laplace, u, shape=cd.BLOCK_SHAPE, out="v", depth=1, boundary=0.0, device=device
    )
    assert v.chunks == u.chunks
    p = np.pad(un, 1)
    want = p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - np.float32(4) * un
    np.testing.assert_allclose(v.compute(), want, rtol=1e-5, atol=1e-5)


def test_periodic_halo_1d(client: object, device: str) -> None:
    un = np.arange(17, dtype=np.float32) ** 2
    u = da.from_array(un, chunks=5)
    v = cd.map_blocks(
        smooth_1d, u, None, cd.BLOCK_SIZE, depth=1, boundary="periodic", device=device
    )
    want = (np.roll(un, 1) + un + np.roll(un, -1)) / np.float32(3)
    np.testing.assert_allclose(v.compute(), want, rtol=1e-6)


def test_bad_calls_name_the_parameter() -> None:
    x = da.zeros(8, chunks=4, dtype=np.float32)
    with pytest.raises(ValueError, match="never writes parameter 'u'"):
        cd.map_blocks(smooth_1d, x, None, 8, out="u")
    with pytest.raises(TypeError, match="parameter 'n' has no argument"):
        cd.map_blocks(smooth_1d, x)
    with pytest.raises(TypeError, match="needs a Dask array argument"):
        cd.map_blocks(smooth_1d, None, None, 8)
    with pytest.raises(ValueError, match="out='u' is given a ndarray"):
        cd.map_blocks(smooth_1d, np.zeros(8, np.float32), None, 8, out="u", like=x)
    with pytest.raises(ValueError, match="'y' has shape"):
        cd.map_blocks(sum_diff, x, da.zeros(9, chunks=4, dtype=np.float32), 1.0)


# --- reduce / scan ---------------------------------------------------------------------------
def test_reduce_builtin_and_user_operators(client: object, device: str) -> None:
    rng = np.random.default_rng(3)
    xi = rng.integers(-50, 50, 1000).astype(np.int32)
    xf = rng.standard_normal(1000).astype(np.float32)
    x = da.from_array(xi, chunks=130)
    f = da.from_array(xf, chunks=(300, 300, 400))
    assert cd.reduce(x, "+", device=device, split_every=2).compute() == xi.sum()
    if device == "sim":  # more built-in operators where no device compiler runs
        assert cd.reduce(x, "max", device=device).compute() == xi.max()
        assert cd.reduce(f, "min", device=device).compute() == xf.min()
    assert cd.reduce(f, absmax, device=device).compute() == np.abs(xf).max()
    recs = np.zeros(1000, ValIdx.dtype)
    recs["val"] = np.round(xf, 1)
    recs["idx"] = np.arange(1000)
    best = cd.reduce(da.from_array(recs, chunks=170), argmax, device=device).compute()
    assert best["idx"] == np.argmax(recs["val"]) and best["val"] == recs["val"].max()


def test_scan_builtin_and_user_operators(client: object, device: str) -> None:
    rng = np.random.default_rng(5)
    xi = rng.integers(-9, 9, 300).astype(np.int32)
    xf = rng.standard_normal(300).astype(np.float32)
    x = da.from_array(xi, chunks=70)
    f = da.from_array(xf, chunks=64)
    np.testing.assert_array_equal(cd.scan(x, "+", device=device).compute(), np.cumsum(xi))
    excl = cd.scan(x, "+", inclusive=False, device=device).compute()
    np.testing.assert_array_equal(excl, np.concatenate([[0], np.cumsum(xi)[:-1]]))
    got = cd.scan(f, absmax, device=device).compute()
    np.testing.assert_array_equal(got, np.maximum.accumulate(np.abs(xf)))


# --- errors from workers ---------------------------------------------------------------------
def test_simulator_error_reaches_the_client_with_its_line(client: object) -> None:
    x = da.from_array(np.arange(16, dtype=np.float32), chunks=4)
    y = cd.map_blocks(reads_past_end, x, device="sim")
    with pytest.raises(clpy.sim.SimulationError) as info:
        y.compute()
    line = _line_of("y[i] = x[i + 1]", reads_past_end)
    assert info.value.kind == "out-of-bounds" and info.value.report.line == line
    assert f"test_dask.py:{line}:" in str(info.value)
    assert "y[i] = x[i + 1]" in str(info.value)


def _specialize_on_worker() -> None:
    bad_types.specialize()


def test_compile_error_on_a_worker_reaches_the_client(client: object) -> None:
    with pytest.raises(clpy.CompileError) as here:
        bad_types.specialize()
    with pytest.raises(clpy.CompileError) as there:
        client.submit(_specialize_on_worker, pure=False).result()  # type: ignore[attr-defined]
    assert type(there.value) is type(here.value)
    assert str(there.value) == str(here.value)
    assert there.value.line == here.value.line == _line_of("x[0] = x", bad_types)


def _build_error() -> None:
    from clpy.runtime.build import build_error

    source = '#line 12 "/work/k.py"\n__kernel void k() { nope; }\n'
    log = "<source>:2:21: error: use of undeclared identifier 'nope'"
    raise build_error("k", "opencl:some device", "-cl-std=CL2.0", source, log)


def test_build_error_pickles_faithfully(client: object) -> None:
    with pytest.raises(clpy.BuildError) as here:
        _build_error()
    with pytest.raises(clpy.BuildError) as there:
        client.submit(_build_error, pure=False).result()  # type: ignore[attr-defined]
    assert str(there.value) == str(here.value)
    assert there.value.log == here.value.log and there.value.device == here.value.device


# --- pickling and devices --------------------------------------------------------------------
def _run_past_end_on_sim() -> None:
    x = np.zeros(4, np.float32)
    reads_past_end[(4,), None](x, np.zeros_like(x), device="sim")


def test_pickling_keeps_identity_in_process() -> None:
    for obj in (clpy.float32, Global[float32], clpy.float4, ValIdx, sum_diff, absmax, argmax):
        assert pickle.loads(pickle.dumps(obj)) is obj
    with pytest.raises(clpy.sim.SimulationError) as info:
        _run_past_end_on_sim()
    back = pickle.loads(pickle.dumps(info.value))
    assert str(back) == str(info.value) and back.report == info.value.report


def test_workers_take_a_device_each(client: object) -> None:
    """LocalCluster names its workers 0, 1: their ranks, for round-robin device choice."""
    workers = list(client.scheduler_info()["workers"])  # type: ignore[attr-defined]
    ranks = [
        client.submit(cd.worker_rank, workers=[w], pure=False).result()  # type: ignore[attr-defined]
        for w in workers
    ]
    assert sorted(ranks) == [0, 1]
    assert set(cd.worker_devices(client, "sim").values()) == {"sim"}


MAIN_SCRIPT = '''
import linecache, sys
import numpy as np
import dask.array as da
from distributed import Client
import clpy, clpy.dask
from clpy import Global, float32

@clpy.func
def twice(v):
    return v + v

@clpy.reduction(identity=1.0)
def times(a: float32, b: float32) -> float32:
    return a * b

def make(T):
    @clpy.kernel
    def axpb(x: Global[T], y: Global[T], a: T):
        i = clpy.get_global_id(0)
        y[i] = twice(x[i]) * a

    return axpb

CELL = """
@clpy.kernel
def shift(x: Global[float32], y: Global[float32]):
    i = clpy.get_global_id(0)
    y[i] = x[i + 1]
"""

if __name__ == "__main__":
    # A notebook cell: code whose file exists only in linecache.
    linecache.cache["<cell-7>"] = (len(CELL), None, CELL.splitlines(True), "<cell-7>")
    exec(compile(CELL, "<cell-7>", "exec"), globals())
    with Client(sys.argv[1]) as client:
        x = da.from_array(np.arange(10, dtype=np.float32), chunks=4)
        for k, dev in enumerate(sys.argv[2:]):
            y = clpy.dask.map_blocks(make(np.float32), x, None, 1.5, device=dev)
            print(f"axpb{k}", y.compute().tolist())
            print(f"times{k}", float(clpy.dask.reduce(x + 1, times, device=dev).compute()))
        try:
            clpy.dask.map_blocks(shift, x, device="sim").compute()
        except clpy.sim.SimulationError as e:
            print("error", e.report.loc, repr(str(e).splitlines()[2].strip()))
'''


def test_kernels_from_main_and_notebook_cells(client: object, cl_device: object, tmp_path) -> None:
    """Kernels, a device function and a reduction defined in a script's __main__ (and in a
    kernel factory, and in a notebook-like cell) travel by source to the workers; run on the
    simulator and on the OpenCL device from one script (one interpreter start)."""
    script = tmp_path / "main_kernels.py"
    script.write_text(MAIN_SCRIPT)
    address = client.scheduler.address  # type: ignore[attr-defined]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    r = subprocess.run(
        [sys.executable, str(script), address, "sim", clpy.get_device(cl_device).name],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    lines = dict(ln.split(" ", 1) for ln in r.stdout.splitlines())
    for k in (0, 1):
        assert eval(lines[f"axpb{k}"]) == [3.0 * v for v in range(10)]
        assert float(lines[f"times{k}"]) == float(np.prod(np.arange(1, 11, dtype=np.float32)))
    assert lines["error"] == "<cell-7>:5:12 'y[i] = x[i + 1]'"


def test_rank_from_the_environment_and_round_robin(monkeypatch: pytest.MonkeyPatch) -> None:
    from clpy.dask import devices

    monkeypatch.setenv("CLPY_WORKER_RANK", "3")
    assert cd.worker_rank() == 3
    monkeypatch.setenv("CLPY_WORKER_RANK", "x")
    with pytest.raises(ValueError, match="CLPY_WORKER_RANK"):
        cd.worker_rank()
    assert devices._rank_from_name("gpu-3", "tcp://h:1") == 3
    assert devices._rank_from_name("tcp://h:4567", "tcp://h:4567") is None  # not port 4567
    sched = f"tcp://test-{os.getpid()}:1"
    mine = devices._claimed_rank(sched)
    assert devices._claimed_rank(sched) == mine  # once per process
    code = f"from clpy.dask import devices; print(devices._claimed_rank({sched!r}))"
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert other.stdout.strip() == str(mine + 1)  # a live process holds `mine`
    again = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert again.stdout.strip() == str(mine + 1)  # the first one exited: its number is free
    assert devices.matching("sim") == [clpy.get_device("sim")]
    cl = [d for d in clpy.devices() if not d.is_sim]
    if cl:  # every OpenCL device matches "opencl:<its platform>"; rank k takes match k mod n
        sel = f"opencl:{cl[0].info.platform}"
        found = devices.matching(sel)
        assert found[0] is cl[0] and all(d in cl for d in found)
        assert devices._resolve(sel, len(found) + 1, False) is found[1 % len(found)]
        assert devices._resolve(sel, 1, True) is found[0]  # CUDA_VISIBLE_DEVICES: the first
