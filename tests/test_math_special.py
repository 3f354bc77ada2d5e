"""Every math built-in over special values, simulator vs PoCL (issue 12): ±0, ±inf, NaN,
denormals, the largest finite, and a few ordinary values, in float and double, every
combination for two arguments, integer arguments (``ldexp``, ``pown``, ``rootn``) over their
own extremes, and the out-pointers of ``frexp``, ``modf``, ``fract``, ``remquo``, ``sincos``,
``lgamma_r``. Kernels are built straight from the IR (one overload each). Results must agree:
NaN with NaN, infinities and zeros with their sign, finite values within 4 ulp (the spec's
bound for most functions is that or wider, but at these points the two agree that closely).
``native_*`` functions have implementation-defined accuracy (spec §2.4) and are only checked
for not crashing; ``tgamma(-inf)`` used to crash the simulator."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import clpy_sim as sim
from clpy.builtins.registry import REGISTRY, Builtin, Overload
from clpy.emit.program import emit_program
from clpy.ir.nodes import (
    Assign,
    Binary,
    CallBuiltin,
    Cast,
    Const,
    Expr,
    Function,
    Index,
    Loc,
    Stmt,
    Var,
    VarRef,
)
from clpy.types import catalog as C
from clpy.types.core import AddressSpace, PointerType, ScalarType

LOC = Loc(__file__, 1)
_G = AddressSpace.GLOBAL


def _specials(dt: Any) -> np.ndarray:
    fi = np.finfo(dt)
    tiny = fi.smallest_subnormal
    vals = [0.0, -0.0, np.inf, -np.inf, np.nan, tiny, -tiny, fi.tiny / 4, -fi.tiny / 4,
            fi.max, -fi.max, 1.0, -1.0, 0.5, -2.5, 2.0, 100.0, -100.0]
    return np.array(vals, dt)


INTS = np.array([0, 1, -1, 2, 3, -3, 31, 200, -200, 2**31 - 1, -(2**31)], np.int32)


def _fits(ov: Overload, f: ScalarType) -> bool:
    def ok(t: Any) -> bool:
        if isinstance(t, PointerType):
            return t.space is _G and ok(t.elem)
        return t is f or t is C.int_
    return ok(ov.ret) and all(ok(p) for p in ov.params) and any(
        p is f for p in ov.params)


def _overload(b: Builtin, f: ScalarType) -> Overload | None:
    return next((ov for ov in b.overloads if _fits(ov, f)), None)


def _columns(ov: Overload, dt: Any) -> list[np.ndarray]:
    """Inputs, one array per value parameter: every combination of up to two of them."""
    pools = [_specials(dt) if not isinstance(p, PointerType) and p is not C.int_ else INTS
             for p in ov.params if not isinstance(p, PointerType)]
    if len(pools) == 1:
        return pools
    a, b = pools[0], pools[1]
    cols = [np.repeat(a, len(b)), np.tile(b, len(a))]
    if len(pools) == 3:
        cols.append(np.roll(np.tile(pools[2], len(a) * len(b) // len(pools[2]) + 1)
                            [: len(cols[0])], 5))
    return cols


def _kernel(b: Builtin, ov: Overload) -> tuple[Function, int]:
    """``k(in0, in1, ..., out, p0, ...)``: out[i] = b(in0[i], ..., &p0[i], ...)."""
    gid = Cast(C.int_, LOC, CallBuiltin(C.size_t, LOC, REGISTRY["get_global_id"],
                                        REGISTRY["get_global_id"].overloads[0],
                                        (Const(C.uint, LOC, 0),)))
    ins: list[Var] = []
    ptrs: list[Var] = []
    args: list[Expr] = []
    for j, p in enumerate(ov.params):
        if isinstance(p, PointerType):
            v = Var(f"p{j}", p, LOC, True)
            ptrs.append(v)
            args.append(Binary(p, LOC, "+", VarRef(p, LOC, v), gid))  # &p[i]
        else:
            v = Var(f"a{j}", PointerType(p, _G), LOC, True)
            ins.append(v)
            args.append(Index(p, LOC, VarRef(v.type, LOC, v), gid))
    out = Var("out", PointerType(ov.ret, _G), LOC, True)
    call = CallBuiltin(ov.ret, LOC, b, ov, tuple(args))
    body: list[Stmt] = [Assign(LOC, Index(ov.ret, LOC, VarRef(out.type, LOC, out), gid), call)]
    written = frozenset({"out", *(v.name for v in ptrs)})
    fn = Function(f"k_{b.name}", (*ins, out, *ptrs), C.void, tuple(body), True, LOC, __file__,
                  written)
    return fn, len(ptrs)


def _agree(s: np.ndarray, d: np.ndarray, ulps: int = 4) -> np.ndarray:
    if s.dtype.kind != "f":
        return s == d
    with np.errstate(all="ignore"):
        return _agree_floats(s, d, ulps)


def _agree_floats(s: np.ndarray, d: np.ndarray, ulps: int) -> np.ndarray:
    both_nan = np.isnan(s) & np.isnan(d)
    same = (s == d) & (np.signbit(s) == np.signbit(d))
    close = np.isfinite(s) & np.isfinite(d) & (
        np.abs(s.astype(np.float64) - d) <= ulps * np.spacing(np.abs(d).astype(s.dtype)))
    return both_nan | same | (close & (s != 0) & (d != 0))


# Looser bounds where the spec's table (§7.4, table 7.1/7.2) allows more than 4 ulp.
# lgamma has none (footnote 68): near its zeros (x = -2.5) Python's lgamma, which the
# simulator uses, is ~75 ulp from the correctly rounded value.
ULPS = {"lgamma": 256, "lgamma_r": 256, "tgamma": 16, "rootn": 16, "pow": 16, "pown": 16,
        "powr": 16}


def _pinned(name: str, cols: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray] | None:
    """Points where the spec (§7.5.1 "Additional requirements") pins the result and PoCL
    gives another one: (where, the spec's value). There the simulator must give the spec's."""
    x = cols[0]
    with np.errstate(all="ignore"):
        integer = np.isfinite(x) & (x == np.trunc(x))
        if name == "cospi":  # cospi(n + 0.5) is +0
            half = np.isfinite(2 * x) & (2 * x == np.trunc(2 * x)) & ~integer
            return half, np.zeros_like(x)
        if name == "sinpi":  # sinpi(±0) is ±0, sinpi(+n) +0, sinpi(-n) -0
            return integer, np.copysign(np.zeros_like(x), x)
        if name == "tanpi":  # copysign(0, n) for even n, copysign(0, -n) for odd n
            odd = integer & (np.abs(x) % 2 == 1)
            return integer, np.copysign(np.zeros_like(x), np.where(odd, -x, x))
        if name == "atanpi":  # atanpi(±0) is ±0
            return x == 0, x.copy()
        if name == "log1p":  # denormal x: log1p(x) rounds to x (PoCL flushes it to 0)
            return (x != 0) & (np.abs(x) < np.finfo(x.dtype).tiny), x.copy()
    return None


def _zero_sign_free(name: str, cols: list[np.ndarray]) -> np.ndarray | None:
    """Points where the spec leaves the sign of a zero result open; there the accepted set is
    both signs of zero. fmax/fmin (§1.13.2 math functions, "Returns y if x < y, otherwise
    it returns x") follow C99, whose F.9.9.2 leaves fmax(±0, ∓0) / fmin(±0, ∓0) free of a
    sign ("ideally would be sensitive to the sign of zero ... might be impractical"); PoCL
    and the simulator give y, NVIDIA x. maxmag/minmag of equal magnitudes are fmax/fmin."""
    if name in ("fmax", "fmin", "maxmag", "minmag"):
        return (cols[0] == 0) & (cols[1] == 0)
    return None


def _run_sim(fn: Function, cols: list[np.ndarray], outs: list[np.ndarray]) -> list[np.ndarray]:
    outs = [np.zeros_like(o) for o in outs]
    with np.errstate(all="ignore"):
        sim.launch(fn, (len(cols[0]),), (1,), [c.copy() for c in cols] + outs)
    return outs


def _loose_ok(name: str, f: ScalarType, cols: list[np.ndarray], s: np.ndarray,
              d: np.ndarray, outs: list[np.ndarray]) -> np.ndarray:
    """On a device other than PoCL, where the spec leaves the result to the implementation
    within a bound, the device's value within that bound.

    mad: table 36/39 (§2.4) "Implemented either as a correctly rounded fma or as a multiply
    followed by an add both of which are correctly rounded": the accepted set is those two
    values exactly (the simulator's mad is the second; its fma the first). NVIDIA fuses.
    half_*: table 36, ≤ 8192 ulp; and §1.13.2 "Support for denormal values is optional for
    half_ functions ... may return any result allowed by Edge Case Behavior": §2.5.3, a
    subnormal operand may be flushed to zero before computing, a subnormal result (before
    rounding) may be flushed to a zero of either sign. NVIDIA: half_recip(±FLT_MAX) = ±0."""
    if name == "mad":
        fb = REGISTRY["fma"]
        fov = _overload(fb, f)
        assert fov is not None
        fused = _run_sim(_kernel(fb, fov)[0], cols, outs)[0]
        return _agree(s, d, 0) | _agree(fused, d, 0)
    fi = np.finfo(s.dtype)
    sub = [np.abs(c) < fi.tiny for c in cols]
    ftz = [np.where(z, np.copysign(np.zeros_like(c), c), c) for c, z in zip(cols, sub)]
    ov = _overload(REGISTRY[name], f)
    assert ov is not None
    flushed = _run_sim(_kernel(REGISTRY[name], ov)[0], ftz, outs)[0]
    ok = np.zeros(len(d), bool)
    for ref in (s, flushed):
        with np.errstate(all="ignore"):
            tiny_ref = np.isfinite(ref) & (np.abs(ref) < fi.tiny)
        ok |= _agree(ref, d, 8192) | ((tiny_ref | (ref == 0)) & (d == 0))
    return ok


# Measured deviations beyond the spec's bounds, per platform (substring of its name, as
# clpy/runtime/quirks.py matches them): the points, the value measured there, the reason.
# NVIDIA (H100, driver 580): rootn(±FLT_MAX, 1) is ±inf; table 36 bounds rootn by 16 ulp
# and the exact result is ±FLT_MAX, so inf is outside it: a driver bug, not a freedom.
DEVICE_QUIRKS: dict[tuple[str, str, str], Any] = {
    ("nvidia", "rootn", "float"): (
        lambda cols: (np.abs(cols[0]) == np.finfo(np.float32).max) & (cols[1] == 1),
        lambda cols: np.copysign(np.float32(np.inf), cols[0]),
        "rootn(±FLT_MAX, 1) on NVIDIA gives ±inf (measured on an H100, driver 580), "
        "beyond the spec's 16 ulp (table 36); FLT_MAX is exact",
    ),
}


CASES = [(n, f) for f in (C.float_, C.double) for n, b in sorted(REGISTRY.items())
         if b.family == "math" and _overload(b, f) is not None]


@pytest.mark.parametrize("name, f", CASES, ids=[f"{n}-{f}" for n, f in CASES])
def test_special_values_sim_vs_pocl(name: str, f: ScalarType, cl_device: Any,
                                    cl_context: Any, cl_queue: Any) -> None:
    """Bit-for-bit (4 ulp for finite values) against PoCL; on other devices the same, except
    where the spec leaves the result to the implementation (``_loose_ok``) and at the
    measured device bugs in ``DEVICE_QUIRKS`` (reported as a skip naming the value)."""
    import pyopencl as cl

    b = REGISTRY[name]
    ov = _overload(b, f)
    assert ov is not None
    dt = f.dtype
    cols = _columns(ov, dt)
    n = len(cols[0])
    fn, nptr = _kernel(b, ov)
    ptr_types = [p.elem for p in ov.params if isinstance(p, PointerType)]
    outs_sim = [np.zeros(n, ov.ret.dtype)] + [np.zeros(n, t.dtype) for t in ptr_types]
    with np.errstate(all="ignore"):
        sim.launch(fn, (n,), (1,), [c.copy() for c in cols] + outs_sim)
    src = emit_program(fn, "opencl-c-1.2")
    prg = cl.Program(cl_context, src).build(options="-cl-std=CL1.2")
    mf = cl.mem_flags
    bufs = [cl.Buffer(cl_context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=c) for c in cols]
    obufs = [cl.Buffer(cl_context, mf.READ_WRITE, o.nbytes) for o in outs_sim]
    getattr(prg, fn.name)(cl_queue, (n,), None, *bufs, *obufs)
    outs_dev = [np.empty_like(o) for o in outs_sim]
    for o, ob in zip(outs_dev, obufs):
        cl.enqueue_copy(cl_queue, o, ob)
    cl_queue.finish()
    if name.startswith("native_"):
        return  # implementation-defined accuracy: only that the simulator runs them
    pinned = _pinned(name, cols)
    if pinned is not None:
        where, want = pinned
        np.testing.assert_array_equal(np.signbit(outs_sim[0][where]), np.signbit(want[where]))
        np.testing.assert_array_equal(outs_sim[0][where], want[where])
        outs_dev[0][where] = want[where]  # PoCL's deviation from the spec, not compared
    platform = cl_device.platform.name.lower()
    pocl = "portable computing language" in platform
    skipped = ""
    for which, (s, d) in enumerate(zip(outs_sim, outs_dev)):
        ok = _agree(s, d, ULPS.get(name, 4))
        free = _zero_sign_free(name, cols)
        if which == 0 and free is not None:
            ok |= free & (s == 0) & (d == 0)  # accepted: +0 and -0
        if which == 0 and not pocl and (name == "mad" or name.startswith("half_")):
            ok |= _loose_ok(name, f, cols, s, d, outs_sim)
        for (plat, qname, qtype), (where, measured, reason) in DEVICE_QUIRKS.items():
            if which == 0 and plat in platform and (qname, qtype) == (name, str(f)):
                at = where(cols) & ~ok
                if at.any():
                    assert _agree(measured(cols)[at], d[at], 0).all(), (
                        f"{name}({f}) on {platform}: expected the known deviation there, "
                        f"got {d[at]}")
                    ok |= at
                    skipped = reason
        if not ok.all():
            j = np.flatnonzero(~ok)[:5]
            shown = [(tuple(c[k] for c in cols), s[k], d[k]) for k in j]
            pytest.fail(f"{name}({f}) output {which}: simulator vs {cl_device.platform.name} "
                        f"differ at {int((~ok).sum())} of {n} points, e.g. "
                        f"(args, sim, device) {shown}")
    if skipped:
        pytest.skip(f"every other point agrees; skipped: {skipped}")


def test_tgamma_of_minus_infinity_is_nan() -> None:
    b = REGISTRY["tgamma"]
    ov = _overload(b, C.float_)
    assert ov is not None
    fn, _ = _kernel(b, ov)
    x = np.array([-np.inf, np.inf, -3.0, -0.0, 0.0, 5.0], np.float32)
    out = np.zeros(6, np.float32)
    sim.launch(fn, (6,), (1,), [x, out])
    assert np.isnan(out[0]) and out[1] == np.inf and np.isnan(out[2])
    assert out[3] == -np.inf and out[4] == np.inf and out[5] == 24.0


@pytest.mark.parametrize("dt, f", [(np.float32, C.float_), (np.float64, C.double)])
def test_loose_points_accept_exactly_what_the_spec_allows(dt: Any, f: ScalarType) -> None:
    # What NVIDIA gave (H100, driver 580): mad fused; both other readings rejected.
    big, tiny = np.finfo(dt).max, np.finfo(dt).smallest_subnormal
    cols = [np.array([-tiny, big, 2.0], dt), np.array([tiny, 2.0, 3.0], dt),
            np.array([0.0, -big, 1.0], dt)]
    outs = [np.zeros(3, dt)]
    s = _run_sim(_kernel(REGISTRY["mad"], _overload(REGISTRY["mad"], f))[0],  # type: ignore[arg-type]
                 cols, outs)[0]
    np.testing.assert_array_equal(s, [0.0, np.inf, 7.0])  # multiply, then add
    fused = np.array([-0.0, big, 7.0], dt)
    assert _loose_ok("mad", f, cols, s, fused, outs).all()
    assert not _loose_ok("mad", f, cols, s, np.array([tiny, big * 0.5, 7.5], dt), outs).any()
    if f is C.float_:
        x = [np.array([big, -big, 2.0, tiny], dt)]
        h = _run_sim(_kernel(REGISTRY["half_recip"],
                             _overload(REGISTRY["half_recip"], f))[0], x, [np.zeros(4, dt)])[0]
        d = np.array([0.0, -0.0, 0.5, np.inf], dt)  # flushed result; flushed operand: 1/+0
        assert _loose_ok("half_recip", f, x, h, d, [np.zeros(4, dt)]).all()
        assert not _loose_ok("half_recip", f, x, h, np.array([1.0, 1.0, 0.25, 1.0], dt),
                             [np.zeros(4, dt)]).any()
    z = [np.array([0.0, -0.0, 1.0], dt), np.array([-0.0, 0.0, -1.0], dt)]
    free = _zero_sign_free("fmax", z)
    assert free is not None and free.tolist() == [True, True, False]
