"""The simulator's native engine (sim/native/): kernels compiled to C give the NumPy engine's
bytes with every checker off; the engine setting, fall-backs and their reasons, thread counts,
and a machine without a C compiler. Tests that need the compiler fail (not skip) under CI."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import clpy
import clpy_sim
from clpy import Global, Local, float32, int32, uint32
from clpy_sim.native import compiler, runner
from clpy_sim.native.cgen import Geometry, generate
from clpy_sim.native.ctypes_c import Unsupported


def _have_cc() -> bool:
    try:
        compiler.compiler()
    except Unsupported:
        return False
    return True


_CC = _have_cc()
if not _CC and os.environ.get("CI") == "true":
    raise RuntimeError("CI=true but no C compiler for the native engine (cc, gcc or clang)")
needs_cc = pytest.mark.skipif(not _CC, reason="no C compiler")

BS = 16


@clpy.kernel
def k_basic(a: float32, x: Global[float32], y: Global[float32], q: Global[int32], n: int32):
    i = clpy.get_global_id(0)
    if i >= n:
        return
    acc = 0.0
    for k in range(3):
        acc += x[i] * a + float32(k)
        if acc > 100.0:
            break
    y[i] = acc + y[i] // 2.0 - y[i] % 3.0
    v = q[i]
    q[i] = (v // 7) + (v % 5) * 3 - (v << (i & 31)) + (v >> 3) + v // (i - 100)
    j = 0
    while j < i % 4:
        j += 1
        if j == 2:
            continue
        q[i] ^= j


@clpy.func
def tile_sum(t: Local[float32], lid: int32) -> float32:
    s = 0.0
    for k in range(BS):
        s += t[(lid + k) % BS]
    return s


@clpy.kernel
def k_tiles(x: Global[float32], out: Global[float32], steps: int32):
    t = clpy.local_array(float32, BS)
    lid = clpy.get_local_id(0)
    gid = clpy.get_global_id(0)
    if gid % 5 == 4:
        return  # before the barriers: the other work-items go on
    v = x[gid]
    for s in range(steps):
        t[lid] = v
        clpy.barrier()
        v = tile_sum(t, lid) * 0.25
        if s == 2 and clpy.get_group_id(0) % 2 == 1:
            break
        clpy.barrier()
    out[gid] = v


@clpy.kernel
def k_uniform(x: Global[int32], out: Global[int32], n: int32):
    t = clpy.local_array(int32, 64)
    lid = clpy.get_local_id(0)
    gid = clpy.get_global_id(0)
    grp = clpy.get_group_id(0)
    cnt = 64 if grp % 3 != 1 else n
    df = 1
    while df * 2 <= cnt:  # uniform: once per group
        df *= 2
    w = 1
    while w * 2 <= cnt:  # uniform condition, a per-work-item body: runs per work-item
        w *= 2
        out[gid] += 1
    t[lid] = x[gid]
    clpy.barrier()
    i = 2
    while i <= df:
        if (lid + 1) % i == 0 and lid < df:
            t[lid] = t[lid] + t[lid - i // 2]
        clpy.barrier()
        if i == 16 and grp % 2 == 1:
            break  # (uniform: the group's loop ends)
        i *= 2
    if grp % 2 == 0:  # uniform condition around a barrier
        t[lid] += 1
        clpy.barrier()
    for k in range(n % 5):
        if lid == k:
            return
        clpy.barrier()
    out[gid] += t[63 - lid] + df * 1000 + w


@clpy.kernel
def k_hist(data: Global[uint32], hist: Global[uint32]):
    h = clpy.local_array(uint32, 16)
    lid = clpy.get_local_id(0)
    if lid < 16:
        h[lid] = 0
    clpy.barrier()
    clpy.atomic_add(h, data[clpy.get_global_id(0)] & 15, 1)
    clpy.barrier()
    if lid < 16:
        clpy.atomic_add(hist, lid, h[lid])


@clpy.kernel
def k_coll(x: Global[float32], i: Global[int32], out: Global[float32], iout: Global[int32]):
    g = clpy.get_global_id(0)
    v = x[g]
    s = clpy.work_group_reduce_add(v)
    p = clpy.work_group_scan_inclusive_add(v)
    q = clpy.work_group_scan_exclusive_max(i[g])
    m = clpy.work_group_reduce(i[g], "*")
    b = clpy.work_group_broadcast(v, 5)
    a = clpy.work_group_all(i[g] > -90)
    out[g] = s + p * 2.0 + b
    iout[g] = q + m + a


@clpy.kernel
def k_print(x: Global[float32]):
    i = clpy.get_global_id(0)
    x[i] += 1.0
    print(i)


def _run(
    k: Any, gs: Any, ls: Any, args: list[Any], checks_on: bool = False, **cfg: Any
) -> list[Any]:
    out = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with clpy.sim.config(checks={"bounds"} if checks_on else False, **cfg):
        k[gs, ls](*out, device="sim")
    return out


def _same(a: list[Any], b: list[Any]) -> None:
    for x, y in zip(a, b):
        if isinstance(x, np.ndarray):
            assert x.tobytes() == y.tobytes()


RNG = np.random.default_rng(7)
BASIC = [
    np.float32(1.5),
    RNG.uniform(-50, 50, 1000).astype(np.float32),
    RNG.uniform(-50, 50, 1000).astype(np.float32),
    RNG.integers(-(2**31), 2**31, 1000).astype(np.int32),
    np.int32(990),
]


@needs_cc
@pytest.mark.parametrize(
    "k, gs, ls, args",
    [
        (k_basic, (1000,), (50,), BASIC),
        (k_tiles, (256,), (BS,), [RNG.uniform(-1, 1, 256).astype(np.float32),
                                  np.zeros(256, np.float32), np.int32(5)]),
        (k_uniform, (640,), (64,), [RNG.integers(-99, 99, 640).astype(np.int32),
                                    np.zeros(640, np.int32), np.int32(21)]),
        (k_coll, (300,), (100,), [RNG.uniform(-9, 9, 300).astype(np.float32),
                                  RNG.integers(-99, 99, 300).astype(np.int32),
                                  np.zeros(300, np.float32), np.zeros(300, np.int32)]),
        (k_hist, (4096,), (64,), [RNG.integers(0, 2**32, 4096).astype(np.uint32),
                                  np.zeros(16, np.uint32)]),
    ],
)  # fmt: skip
def test_native_equals_numpy(k: Any, gs: Any, ls: Any, args: list[Any]) -> None:
    ref = _run(k, gs, ls, args, engine="numpy")
    got = _run(k, gs, ls, args, engine="native", threads=1)
    assert runner.why_not(k) is None
    _same(ref, got)


@needs_cc
def test_threads_give_the_same_results() -> None:
    args = [RNG.uniform(-1, 1, 4096).astype(np.float32), np.zeros(4096, np.float32), 7]
    one = _run(k_tiles, (4096,), (BS,), args, engine="native", threads=1)
    for t in (2, 3, 8):
        _same(one, _run(k_tiles, (4096,), (BS,), args, engine="native", threads=t))
    h = [RNG.integers(0, 2**32, 1 << 16).astype(np.uint32), np.zeros(16, np.uint32)]
    _same(_run(k_hist, (1 << 16,), (64,), h, engine="native", threads=1),
          _run(k_hist, (1 << 16,), (64,), h, engine="native", threads=4))  # fmt: skip


def test_fallback_reason_and_native_error() -> None:
    x = np.arange(8, dtype=np.float32)
    ref = _run(k_print, (8,), (4,), [x], engine="numpy")
    got = _run(k_print, (8,), (4,), [x], engine="auto")  # falls back: prints, same arrays
    _same(ref, got)
    why = clpy.sim.why_not(k_print)
    assert why == runner.why_not(k_print)
    assert why is not None and why.startswith("print (") and "test_sim_native.py:" in why
    before = x.copy()
    with pytest.raises(clpy.sim.NativeUnavailable, match="print"):
        with clpy.sim.config(checks=False, engine="native"):
            k_print[(8,), (4,)](x, device="sim")
    assert x.tobytes() == before.tobytes()  # nothing ran


def test_checks_on_and_shuffled_atomics() -> None:
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in BASIC]
    # checkers on: the checked native kernel (sim/native/checked_run.py), the same bytes
    _same(_run(k_basic, (1000,), (50,), args, engine="numpy", checks_on=True),
          _run(k_basic, (1000,), (50,), args, engine="auto", checks_on=True))  # fmt: skip
    with clpy.sim.config(checks=False, atomic_order="shuffled", engine="auto"):
        k_basic[(1000,), (50,)](*args, device="sim")
    assert "atomic_order" in (runner.why_not(k_basic) or "")
    with pytest.raises(runner.NativeUnavailable, match="atomic_order"):
        with clpy.sim.config(checks=False, atomic_order="shuffled", engine="native"):
            k_basic[(1000,), (50,)](*args, device="sim")


def test_engine_setting() -> None:
    with pytest.raises(ValueError, match="engine"):
        clpy.sim.config(engine="fast")
    assert clpy_sim.current().engine_name() in ("auto", "numpy", "native")
    with clpy.sim.config(engine="numpy") as cfg:
        assert cfg.engine_name() == "numpy"


def test_no_compiler(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    src = tmp_path / "kcc.py"
    src.write_text(
        "import clpy\nfrom clpy import Global, float32\n"
        "@clpy.kernel\ndef kcc(x: Global[float32]):\n    x[clpy.get_global_id(0)] *= 2.0\n"
    )
    ns: dict[str, Any] = {}
    exec(compile(src.read_text(), str(src), "exec"), ns)
    kcc = ns["kcc"]
    monkeypatch.setenv("CC", "/nonexistent/cc")
    x = np.arange(8, dtype=np.float32)
    with clpy.sim.config(checks=False, engine="auto"):
        kcc[(8,), (4,)](x, device="sim")
    assert x.tolist() == [2.0 * i for i in range(8)]
    assert "C compiler" in (runner.why_not(kcc) or "")
    with pytest.raises(runner.NativeUnavailable, match="C compiler"):
        with clpy.sim.config(checks=False, engine="native"):
            kcc[(8,), (4,)](x, device="sim")


@needs_cc
def test_source_is_readable() -> None:
    fn = k_tiles.specialize(x=Global[float32], out=Global[float32], steps=int32).function
    src = generate(fn, Geometry(1, (BS, 1, 1)))[0]
    assert "#line" in src and "test_sim_native.py" in src
    for name in ("lid", "gid", "tile_sum", "steps"):
        assert name in src


FUZZ_SEEDS = int(os.environ.get("CLPY_NATIVE_FUZZ_SEEDS", "200"))


@needs_cc
def test_fuzzer_kernels_native_equals_numpy() -> None:
    from clpy.fuzz import features as F
    from clpy.fuzz.generator import generate as fuzz
    from clpy.fuzz.runner import load, make_inputs, run_on

    feats = F.parse("all,-struct,-printf,-subgroup,-reduction")
    native, bad = 0, []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(FUZZ_SEEDS):
            prog = load(fuzz(seed, feats), Path(tmp))
            inputs = make_inputs(prog, seed)
            a = run_on(prog, "sim", inputs, {"checks": False, "engine": "numpy"})
            b = run_on(prog, "sim", inputs, {"checks": False, "engine": "auto"})
            native += runner.why_not(prog.kernel) is None
            same = (a.error is None) == (b.error is None) and a.prints == b.prints
            if same and a.outputs is not None and b.outputs is not None:
                same = all(a.outputs[k].tobytes() == b.outputs[k].tobytes() for k in a.outputs)
            if not same:
                bad.append(seed)
    assert not bad, f"seeds whose native outputs differ: {bad}"
    assert native >= FUZZ_SEEDS // 2, f"only {native} of {FUZZ_SEEDS} fuzzer kernels native"
