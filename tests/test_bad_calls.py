"""A corpus of wrong kernel launches, each run on the simulator and on PoCL.

Every case either runs correctly (the result is checked) or raises a ``TypeError``,
``ValueError`` or clpy error whose message names the parameter (or the size / device that is
wrong); after every failure the caller's arrays are bit-identical to what they were before
(bytes, dtype, shape, strides and flags are snapshotted and compared).

Cases: wrong dtypes (every NumPy kind, byte order), shapes, strides, read-only and memory-mapped
arrays, object arrays, bad scalars and vector lanes, NaN/inf/float/negative/huge global and local
sizes, empty and 2**40-item launches, local sizes that do not divide, too much local memory,
wrong argument counts and keywords. Wrong device objects, arguments from another context and
launches on arrays an async launch still uses: tests/test_bad_devices.py.
"""

from __future__ import annotations

import mmap
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Global, Local, float4, float32, int32
from clpy.errors import CompileError
from clpy.runtime.handles import LaunchError
from clpy_sim.budget import SimulationTooLarge

N = 16


@clpy.kernel
def axpy(x: Global[float32], y: Global[float32], a: float32, n: int32):
    i = clpy.get_global_id(0)
    if i < n:
        y[i] = a * x[i] + y[i]


@clpy.kernel
def vecs(h: Global[float4], v: float4, out: Global[float32]):
    i = clpy.get_global_id(0)
    out[i] = clpy.dot(h[i], v)


@clpy.kernel
def with_local(x: Global[float32], tmp: Local[float32], out: Global[float32]):
    lid = clpy.get_local_id(0)
    tmp[lid] = x[clpy.get_global_id(0)]
    clpy.barrier()
    out[clpy.get_global_id(0)] = tmp[clpy.get_local_size(0) - 1 - lid]


@clpy.kernel
def inferred(x, out, n):
    i = clpy.get_global_id(0)
    if i < n:
        out[i] = x[i] + 1


def axpy_ref(x: Any, y: Any, a: Any, n: Any) -> np.ndarray:
    x = np.asarray(x, np.float32).reshape(-1)
    y = np.asarray(y, np.float32).reshape(-1).copy()
    m = max(0, min(int(n), y.size))
    y[:m] = np.float32(a) * x[:m] + y[:m]
    return y


# ------------------------------------------------------------------------------ the corpus

# SimulationTooLarge (a MemoryError): a launch over the simulator's memory budget.
ERRORS = (TypeError, ValueError, CompileError, LaunchError, SimulationTooLarge)


@dataclass
class Case:
    kernel: Any
    sizes: Any
    args: Callable[[], list[Any]]  # fresh arguments for each run
    names: tuple[str, ...]  # one of these must appear in the message of an error
    expect: str = "error"  # "error", "ok" or "either"
    check: Callable[[list[Any], list[Any]], None] | None = None  # (args, args before) on ok
    kwargs: dict[str, Any] = field(default_factory=dict)
    devices: tuple[str, ...] = ("sim", "pocl")


CASES: dict[str, Case] = {}


def f32(n: int = N, fill: float = 1.0) -> np.ndarray:
    return np.full(n, fill, np.float32)


def check_axpy(args: list[Any], before: list[Any]) -> None:
    x, y, a, n = before
    got = np.asarray(args[1]).reshape(-1)
    np.testing.assert_array_equal(got, axpy_ref(x, y, a, n))


def axpy_case(
    name: str,
    *,
    x: Any = None,
    y: Any = None,
    a: Any = 2.0,
    n: Any = N,
    sizes: Any = (N,),
    expect: str = "error",
    names: tuple[str, ...] = (),
    check: Any = None,
    **kw: Any,
) -> None:
    def args() -> list[Any]:
        xv = x() if callable(x) else (np.arange(N, dtype=np.float32) if x is None else x)
        yv = y() if callable(y) else (f32() if y is None else y)
        return [xv, yv, a() if callable(a) else a, n() if callable(n) else n]

    if check is None and expect != "error":
        check = check_axpy
    CASES[name] = Case(axpy, sizes, args, names, expect, check, **kw)


def unchanged(args: list[Any], before: list[Any]) -> None:
    for a, b in zip(args, before):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)


# dtypes of the x (read) and y (written) arrays: every other NumPy kind, and float32
# in the other byte order.
WRONG_DTYPES = [
    "float64",
    "float16",
    "int32",
    "uint32",
    "int64",
    "int8",
    "uint8",
    "bool",
    "complex64",
    "object",
    ">f4",
    "V4",
    "U1",
    "datetime64[s]",
    "S4",
]
for dt in WRONG_DTYPES:
    for p in ("x", "y"):

        def mk(dt: str = dt) -> np.ndarray:
            if dt == "object":
                return np.array([1.0] * N, dtype=object)
            return np.zeros(N, dtype=dt)

        axpy_case(f"dtype-{p}-{dt}", **{p: mk}, names=(f"'{p}'",))

# shapes: 0-d is an error; more dimensions are flattened C-contiguous data (fine).
for p in ("x", "y"):
    axpy_case(f"shape-{p}-0d", **{p: lambda: np.array(1.0, np.float32)}, names=(f"'{p}'",))
    axpy_case(f"shape-{p}-2d", **{p: lambda: np.ones((4, 4), np.float32)}, expect="ok")
    axpy_case(f"shape-{p}-3d", **{p: lambda: np.ones((2, 2, 4), np.float32)}, expect="ok")
    axpy_case(
        f"shape-{p}-empty",
        **{p: lambda: np.ones(0, np.float32)},
        n=0,
        expect="either",
        names=(f"'{p}'",),
    )
    # strides: views that are not C-contiguous
    axpy_case(
        f"stride-{p}-step2", **{p: lambda: np.ones(2 * N, np.float32)[::2]}, names=(f"'{p}'",)
    )
    axpy_case(
        f"stride-{p}-reversed", **{p: lambda: np.ones(N, np.float32)[::-1]}, names=(f"'{p}'",)
    )
    axpy_case(
        f"stride-{p}-fortran",
        **{p: lambda: np.asfortranarray(np.ones((4, 4), np.float32))},
        names=(f"'{p}'",),
    )
    axpy_case(
        f"stride-{p}-transposed", **{p: lambda: np.ones((4, 4), np.float32).T}, names=(f"'{p}'",)
    )
    axpy_case(
        f"stride-{p}-column", **{p: lambda: np.ones((N, 2), np.float32)[:, 0]}, names=(f"'{p}'",)
    )
    axpy_case(f"stride-{p}-offset-view", **{p: lambda: np.ones(N + 3, np.float32)[3:]}, expect="ok")
    axpy_case(
        f"stride-{p}-broadcast",
        **{p: lambda: np.broadcast_to(np.float32(1), (N,))},
        names=(f"'{p}'",),
    )
    # not arrays at all
    for label, val in [
        ("list", [1.0] * N),
        ("tuple", (1.0,) * N),
        ("none", None),
        ("scalar", 1.0),
        ("str", "abc"),
        ("bytes", b"\0" * 64),
        ("memoryview", memoryview(bytearray(64))),
        ("dict", {}),
        ("localmem", clpy.LocalMemory(N)),
    ]:
        axpy_case(f"kind-{p}-{label}", **{p: (lambda v=val: v)}, names=(f"'{p}'",))


def _readonly() -> np.ndarray:
    a = f32()
    a.setflags(write=False)
    return a


axpy_case("readonly-x", x=_readonly, expect="ok")
axpy_case("readonly-y", y=_readonly, names=("'y'",))
axpy_case(
    "readonly-y-frombuffer", y=lambda: np.frombuffer(bytes(4 * N), np.float32), names=("'y'",)
)

_TMP = tempfile.mkdtemp(prefix="clpy-badcalls-")


def _memmap(mode: str, name: str) -> Callable[[], np.ndarray]:
    def make() -> np.ndarray:
        path = os.path.join(_TMP, f"{name}.bin")
        np.full(N, 3.0, np.float32).tofile(path)
        return np.memmap(path, dtype=np.float32, mode=mode, shape=(N,))

    return make


axpy_case("memmap-x-readonly", x=_memmap("r", "xr"), expect="ok")
axpy_case("memmap-x-readwrite", x=_memmap("r+", "xw"), expect="ok")
axpy_case("memmap-x-copyonwrite", x=_memmap("c", "xc"), expect="ok")
axpy_case("memmap-y-readonly", y=_memmap("r", "yr"), names=("'y'",))
axpy_case("memmap-y-readwrite", y=_memmap("r+", "yw"), expect="ok")
axpy_case("memmap-y-copyonwrite", y=_memmap("c", "yc"), expect="ok")
axpy_case("matrix-x", x=lambda: np.asmatrix(np.ones((1, N), np.float32)), expect="ok")
axpy_case(
    "matrix-y", y=lambda: np.asmatrix(np.ones((1, N), np.float32)), expect="either", names=("'y'",)
)
axpy_case(
    "masked-y",
    y=lambda: np.ma.masked_array(f32(), mask=[True] * N),
    expect="either",
    names=("'y'",),
)
axpy_case("aliased-x-y", x=None, y=None, expect="ok")  # distinct arrays; see below for aliasing
axpy_case("mmap-buffer-y", y=lambda: np.frombuffer(mmap.mmap(-1, 4 * N), np.float32), expect="ok")

# scalar values
for label, val, ok in [
    ("a-str", "2.0", False),
    ("a-none", None, False),
    ("a-list", [2.0], False),
    ("a-complex", 2j, False),
    ("a-huge", 1e300, False),
    ("a-npf64-huge", np.float64(1e39), False),
    ("a-nan", float("nan"), True),
    ("a-inf", float("inf"), True),
    ("a-int", 2, True),
    ("a-bool", True, True),
    ("a-npf16", np.float16(2), True),
    ("a-0d", np.array(2.0), True),
    ("a-1d", np.array([2.0]), False),
    ("a-obj", object(), False),
    ("a-dtype", np.float32, False),
    ("a-decimal", __import__("decimal").Decimal("2.0"), False),
    ("a-fraction", __import__("fractions").Fraction(1, 2), False),
]:
    axpy_case(label, a=(lambda v=val: v), expect="ok" if ok else "error", names=("'a'",))
for label, val, ok in [
    ("n-float", 16.0, False),
    ("n-nan", float("nan"), False),
    ("n-inf", float("inf"), False),
    ("n-str", "16", False),
    ("n-none", None, False),
    ("n-2**31", 2**31, False),
    ("n--2**31-1", -(2**31) - 1, False),
    ("n-2**64", 2**64, False),
    ("n-npuint64-big", np.uint64(2**63), False),
    ("n-npint64-ok", np.int64(16), True),
    ("n-npint8", np.int8(16), True),
    ("n-bool", True, True),
    ("n-negative", -5, True),
    ("n-npfloat32", np.float32(16), False),
    ("n-complex", 16 + 0j, False),
    ("n-1d", np.array([16]), False),
    ("n-0d-int", np.array(16), True),
    ("n-0d-float", np.array(16.0), False),
    ("n-big-endian", np.array(16, ">i4")[()], True),
]:
    axpy_case(label, n=(lambda v=val: v), expect="ok" if ok else "error", names=("'n'",))

# global and local sizes
for label, sizes, expect in [
    ("g-nan", float("nan"), "error"),
    ("g-inf", float("inf"), "error"),
    ("g-float", 16.0, "error"),
    ("g-npfloat", np.float32(16), "error"),
    ("g-negative", -16, "error"),
    ("g-str", "16", "error"),
    ("g-none", None, "error"),
    ("g-bool", True, "error"),
    ("g-4d", ((2, 2, 2, 2), None), "error"),
    ("g-empty-tuple", ((), None), "error"),
    ("g-list", [16], "ok"),
    ("g-zero", 0, "ok"),
    ("g-zero-2d", ((0, 4), None), "ok"),
    ("g-npint", np.int64(16), "ok"),
    ("g-2**40", 2**40, "error"),
    ("g-2**31", 2**31, "error"),
    ("g-3tuple-bare", (16, 4, 1), "error"),
    ("l-zero", ((16,), (0,)), "error"),
    ("l-negative", ((16,), (-4,)), "error"),
    ("l-float", ((16,), (4.0,)), "error"),
    ("l-nan", ((16,), float("nan")), "error"),
    ("l-dims", ((16,), (4, 4)), "error"),
    ("l-not-dividing", ((16,), (5,)), "either"),
    ("l-bigger-than-global", ((16,), (32,)), "either"),
    ("l-too-big", ((1 << 20,), (1 << 20,)), "either"),  # the simulator has no limit
]:
    axpy_case(
        label,
        sizes=sizes,
        expect=expect,
        check=unchanged if "zero" in label else None,
        names=("global", "local", "size", "NDRange", "work-group", "work-items"),
    )

# devices
for label, dev in [
    ("dev-name", "no-such-device"),
    ("dev-int", 42),
    ("dev-obj", object()),
    ("dev-opencl-nomatch", "opencl:no-such-platform"),
    ("dev-dtype", np.float32),
    ("dev-empty", ""),
]:
    axpy_case(label, names=("device",), kwargs={"device": dev}, devices=("sim",))

# argument count and keywords
axpy_case("kw-unknown", names=("'b'", "parameter"), kwargs={"b": 1})
CASES["count-missing"] = Case(axpy, (N,), lambda: [f32(), f32()], ("'a'", "missing"))
CASES["count-extra"] = Case(axpy, (N,), lambda: [f32(), f32(), 1.0, N, 5], ("argument",))
CASES["kw-twice"] = Case(axpy, (N,), lambda: [f32(), f32(), 1.0, N], ("'n'",), kwargs={"n": N})


# vectors: float4 buffer and value
def vec_args(h: Any = None, v: Any = (1.0, 2.0, 3.0, 4.0)) -> Callable[[], list[Any]]:
    def args() -> list[Any]:
        hv = h() if callable(h) else (np.ones((N, 4), np.float32) if h is None else h)
        return [hv, v() if callable(v) else v, np.zeros(N, np.float32)]

    return args


def check_vecs(args: list[Any], before: list[Any]) -> None:
    h = np.asarray(before[0], np.float32).reshape(-1, 4)
    v = np.zeros(4, np.float32)
    v[:] = np.asarray(before[1], np.float32).reshape(-1)[:4]
    want = (h * v).sum(axis=1, dtype=np.float32)
    np.testing.assert_allclose(args[2], want, rtol=1e-6)


for label, h, ok in [
    ("h-flat", lambda: np.ones(4 * N, np.float32), False),
    ("h-3lanes", lambda: np.ones((N, 3), np.float32), False),
    ("h-5lanes", lambda: np.ones((N, 5), np.float32), False),
    ("h-float64", lambda: np.ones((N, 4)), False),
    ("h-strided", lambda: np.ones((N, 8), np.float32)[:, :4], False),
    ("h-3d", lambda: np.ones((2, N // 2, 4), np.float32), True),
]:
    CASES[f"vec-{label}"] = Case(
        vecs, (N,), vec_args(h=h), ("'h'",), "ok" if ok else "error", check_vecs if ok else None
    )
for label, v, ok in [
    ("v-scalar", 1.0, False),
    ("v-3", (1.0, 2.0, 3.0), False),
    ("v-5", (1.0,) * 5, False),
    ("v-str", "abcd", False),
    ("v-strs", ("a", "b", "c", "d"), False),
    ("v-none", None, False),
    ("v-complex", (1j, 1j, 1j, 1j), False),
    ("v-objects", [object()] * 4, False),
    ("v-huge", (1e300, 0.0, 0.0, 0.0), False),
    ("v-nested", [[1.0] * 4], False),
    ("v-ints", (1, 2, 3, 4), True),
    ("v-array", np.arange(4.0), True),
    ("v-nan", (float("nan"),) * 4, "either"),
    ("v-float4-type", clpy.float4, False),
    ("v-dict", {}, False),
]:
    CASES[f"vec-{label}"] = Case(
        vecs,
        (N,),
        vec_args(v=(lambda x=v: x)),
        ("'v'",),
        "ok" if ok is True else ("error" if ok is False else "either"),
        check_vecs if ok is True else None,
    )


# local memory
def local_args(tmp: Any) -> Callable[[], list[Any]]:
    return lambda: [
        np.arange(N, dtype=np.float32),
        tmp() if callable(tmp) else tmp,
        np.zeros(N, np.float32),
    ]


def check_local(args: list[Any], before: list[Any]) -> None:
    want = before[0].reshape(-1, 8)[:, ::-1].reshape(-1)
    np.testing.assert_array_equal(args[2], want)


for label, tmp, ok in [
    ("array", lambda: np.zeros(8, np.float32), False),
    ("int", 8, False),
    ("none", None, False),
    ("huge", lambda: clpy.LocalMemory(1 << 40), "either"),
    ("too-much", lambda: clpy.LocalMemory(1 << 20), "either"),  # 4 MiB
    ("exact", lambda: clpy.LocalMemory(8), True),
    ("more", lambda: clpy.LocalMemory(64), True),
    ("dtype-mismatch", lambda: clpy.LocalMemory(8, np.float64), "either"),
]:
    CASES[f"local-{label}"] = Case(
        with_local,
        ((N,), (8,)),
        local_args(tmp),
        ("'tmp'",),
        "ok" if ok is True else ("error" if ok is False else "either"),
        check_local if ok is not False else None,
    )

# inferred (unannotated) parameters
for label, x, ok in [
    ("object", lambda: np.array([1.0] * N, dtype=object), False),
    ("complex", lambda: np.zeros(N, np.complex64), False),
    ("str", lambda: np.array(["a"] * N), False),
    ("record", lambda: np.zeros(N, [("a", "f4")]), False),
    ("list", lambda: [1.0] * N, False),
    ("int16", lambda: np.ones(N, np.int16), True),
]:
    CASES[f"inferred-x-{label}"] = Case(
        inferred,
        (N,),
        lambda x=x: [x(), np.zeros(N, np.float32), N],
        ("'x'",),
        "ok" if ok else "error",
        (
            lambda args, before: np.testing.assert_array_equal(
                args[1], (before[0] + 1).astype(np.float32)
            )
        )
        if ok
        else None,
    )
for label, n, ok in [
    ("n-float-nan", float("nan"), True),
    ("n-obj", object(), False),
    ("n-str", "3", False),
    ("n-huge", 2**70, False),
]:
    CASES[f"inferred-{label}"] = Case(
        inferred,
        (N,),
        lambda n=n: [np.ones(N, np.float32), np.zeros(N, np.float32), n],
        ("'n'",),
        "either" if ok else "error",
    )


# ------------------------------------------------------------------------------ the runner


def snapshot(a: Any) -> Any:
    if isinstance(a, np.ndarray):
        raw = np.array(a, copy=True, subok=False)
        data = raw.tobytes() if raw.dtype != object else repr(raw.tolist())
        return ("array", a.dtype, a.shape, a.strides, a.flags.writeable, data)
    if isinstance(a, clpy.LocalMemory):
        return ("local", a.count, a.dtype)
    return ("value", repr(a))


def run_case(case: Case, device: Any) -> None:
    args = case.args()
    before = [snapshot(a) for a in args]
    copies = [
        np.array(a, copy=True) if isinstance(a, np.ndarray) and a.dtype != object else a
        for a in args
    ]
    kwargs = dict(case.kwargs)
    kwargs.setdefault("device", device)
    try:
        case.kernel[case.sizes](*args, **kwargs)
    except ERRORS as e:
        assert case.expect in ("error", "either"), f"expected success, got {e!r}"
        msg = str(e)
        assert any(n in msg for n in case.names), f"the message does not name {case.names}: {msg}"
        after = [snapshot(a) for a in args]
        assert after == before, "a failed launch changed the caller's arguments"
        return
    assert case.expect in ("ok", "either"), "expected an error, the launch succeeded"
    if case.check is not None:
        case.check(args, copies)


@pytest.mark.parametrize("name", sorted(c for c in CASES if "sim" in CASES[c].devices))
def test_bad_call_sim(name: str) -> None:
    run_case(CASES[name], "sim")


@pytest.mark.parametrize("name", sorted(c for c in CASES if "pocl" in CASES[c].devices))
def test_bad_call_pocl(name: str, cl_device: Any) -> None:
    run_case(CASES[name], cl_device)


def test_corpus_size() -> None:
    assert len(CASES) >= 150
