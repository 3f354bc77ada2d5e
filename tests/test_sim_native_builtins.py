"""The native engine's C built-ins (sim/native/builtins.py, prelude.h) give the NumPy engine's
bits: every built-in overload ``c_call`` implements (all scalar overloads, a vector width per
element type, every width somewhere) runs over random and special inputs in a C harness compiled
with the machine's C compiler and in a clpy kernel on the simulator, and the outputs are
compared byte for byte. Cases with the same signature share one kernel and one C function.

Run as a script for a large measurement: ``python tests/test_sim_native_builtins.py 1000000``
prints the mismatches of every case (lanes compared and lanes different); ``--local=7`` runs
work-groups of 7 (odd row lengths put lanes in NumPy's loop tails), ``--uniform-only`` the
uniform-argument launches.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import types
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import clpy
import clpy.types.catalog as C
from clpy.builtins.registry import REGISTRY, Builtin, Overload
from clpy.ir.nodes import NOWHERE, CallBuiltin
from clpy.types.core import PointerType, ScalarType, Type, VectorType, element_of
from clpy_sim import ops
from clpy_sim.native import builtins as NB
from clpy_sim.native import compiler as NC
from clpy_sim.native.builtins_c import c_type

PRELUDE = Path(NB.__file__).with_name("prelude.h")
FAMILIES = (
    "math integer common integer/common relational geometric misc-vector conversions"
).split()
# the native engine's flags (sim/native/compiler.py), warnings on
FLAGS = [f for f in NC.FLAGS if f != "-w"]


def compiler() -> str | None:
    for cc in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if cc and shutil.which(cc):
            return cc
    return None


def _need_cc() -> str:
    cc = compiler()
    if cc is None:
        if os.environ.get("CI") == "true":
            pytest.fail(
                "no C compiler (cc, gcc, clang) on a CI machine: the native engine needs one"
            )
        pytest.skip("no C compiler")
    return cc


# ----------------------------------------------------------------------------- cases


@dataclass(frozen=True)
class Case:
    builtin: Builtin | None  # None: a conversion by assignment (a Cast node, c_cast)
    overload: Overload
    expr: str  # the C text of c_call (c_cast) over the argument names x0, x1 ...

    @property
    def name(self) -> str:
        return self.builtin.name if self.builtin is not None else "cast"


_NATIVE = [
    getattr(C, n)
    for n in "bool_ char uchar short ushort int_ uint long ulong float_ double".split()
]


def cast_cases() -> list[Case]:
    """Every scalar conversion an assignment makes (``o[i] = a[i]``: a ``Cast`` node)."""
    out = []
    for src in _NATIVE:
        for dst in _NATIVE:
            if src is not dst:
                expr = NB.c_cast("x0", src, dst)
                assert expr is not None, (src, dst)
                out.append(Case(None, Overload((src,), dst), expr))
    return out


def _family(b: Builtin) -> str:
    return "conversions" if b.conversion is not None else b.family


def _pick(b: Builtin, ovs: list[Overload], every: bool) -> list[Overload]:
    """Scalar overloads, and for each element type one vector width (rotating, so every width
    is tested for some type); ``every``: all of them."""
    if every:
        return ovs
    out, k = [], 0
    seen: set[ScalarType] = set()
    for ov in ovs:
        t = ov.ret if isinstance(ov.ret, VectorType) else ov.params[0]
        if not isinstance(t, VectorType) and not any(isinstance(p, VectorType) for p in ov.params):
            out.append(ov)
            continue
        e = element_of(t)
        if e in seen:
            continue
        widths = [o for o in ovs if isinstance(o.ret, VectorType) and element_of(o.ret) is e]
        widths = widths or [o for o in ovs if element_of(o.params[0]) is e]
        out.append(widths[k % len(widths)])
        seen.add(e)
        k += 1
    return out


def _conversion_overloads(b: Builtin) -> list[Overload]:
    """convert_T / as_T have a type rule, not overloads: every source of T's lane count
    (as_T: byte size) among the native types."""
    assert b.conversion is not None
    dst = b.conversion.dest
    out = []
    for e in ("char uchar short ushort int uint long ulong float double").split():
        s = getattr(C, {"int": "int_", "float": "float_"}.get(e, e))
        for n in (1, 2, 3, 4, 8, 16):
            t: Type = s if n == 1 else VectorType(s, n)
            if b.conversion.reinterpret:
                if t.size == dst.size and t is not dst:
                    out.append(Overload((t,), dst))
            elif n == (dst.n if isinstance(dst, VectorType) else 1):
                out.append(Overload((t,), dst))
    return out


def _arg(j: int, p: Type) -> str:
    """The harness's name of argument ``j``: ``y``, an lvalue, for the pointer a built-in
    writes through (builtins.c_call's convention), else ``x<j>``."""
    return "y" if isinstance(p, PointerType) else f"x{j}"


def _values(params: tuple[Type, ...]) -> tuple[Type, ...]:
    return tuple(p for p in params if not isinstance(p, PointerType))


def _pointee(params: tuple[Type, ...]) -> Type | None:
    return params[-1].elem if params and isinstance(params[-1], PointerType) else None


def cases(every: bool = False) -> list[Case]:
    out = []
    for b in REGISTRY.values():
        if _family(b) not in FAMILIES:
            continue
        ovs = _conversion_overloads(b) if b.conversion is not None else list(b.overloads)
        if b.conversion is not None and not every:
            # a sample of the 636 conversion built-ins: scalar and 4-lane destinations
            if isinstance(b.conversion.dest, VectorType) and b.conversion.dest.n != 4:
                continue
        for ov in _pick(b, ovs, every):
            call = CallBuiltin(ov.ret, NOWHERE, b, ov, ())
            expr = NB.c_call(call, [_arg(j, p) for j, p in enumerate(ov.params)])
            if expr is not None:
                out.append(Case(b, ov, expr))
    return out + cast_cases()


# ----------------------------------------------------------------------------- inputs

_F_SPECIAL = [
    0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.0, 0.25, 2.0, -2.0, 10.0,
    np.pi, -np.pi, np.pi / 2, 1e-3, 127.5, 128.0, -128.5, 255.5, 32767.5, 65535.5, 2.0**31,
    -(2.0**31), 2.0**31 - 128, 2.0**32, 2.0**63, -(2.0**63), 2.0**64, 1e30, -1e30,
    np.inf, -np.inf, np.nan, -np.nan,
]  # fmt: skip


def _float_special(dt: np.dtype[Any]) -> np.ndarray:
    info = np.finfo(dt)
    ut = np.dtype(f"uint{dt.itemsize * 8}")
    m = info.nmant
    bits = [
        (1 << (dt.itemsize * 8 - 1)) - 1,  # NaN, max payload
        ((1 << (dt.itemsize * 8 - 1 - m)) - 1) << m | 1,  # signalling NaN
        ((1 << (dt.itemsize * 8 - 1 - m)) - 1) << m | (1 << (m - 1)) | 5,  # quiet, payload
        1,  # smallest subnormal
        (1 << m) - 1,  # largest subnormal
    ]
    extra = np.array(bits, dtype=ut).view(dt)
    with np.errstate(all="ignore"):
        vals = np.array(_F_SPECIAL + [info.max, -info.max, info.tiny, -info.tiny], dtype=dt)
    return np.concatenate([vals, extra, -extra])


def _int_special(dt: np.dtype[Any]) -> np.ndarray:
    info = np.iinfo(dt)
    bits = dt.itemsize * 8
    v = [0, 1, 2, 3, bits - 1, bits, bits + 1, info.max, info.max - 1, info.min, info.min + 1]
    v += [info.max // 2, info.max // 2 + 1, -1, -2, -bits, 0x55, 0xAA]
    return np.array([x & ((1 << bits) - 1) for x in v], dtype=f"uint{bits}").view(dt)


def _random(e: ScalarType, n: int, rng: np.random.Generator) -> np.ndarray:
    dt = e.dtype
    bits = rng.integers(0, 2**63, n, dtype=np.uint64) * 2 + rng.integers(0, 2, n, dtype=np.uint64)
    raw = bits.astype(f"uint{dt.itemsize * 8}").view(dt)
    if not e.is_float:
        small = rng.integers(-300, 300, n).astype(dt)
        return np.where(rng.random(n) < 0.3, small, raw)
    with np.errstate(all="ignore"):
        pick = rng.integers(0, 5, n)
        uni = rng.uniform(-10, 10, n)
        wide = rng.uniform(-1e4, 1e4, n)
        ints = np.round(rng.uniform(-300, 300, n) * 2) / 2
        unit = rng.uniform(-1.2, 1.2, n)
        v = np.choose(pick, [raw.astype(np.float64), uni, wide, ints, unit]).astype(dt)
        return np.where(pick == 0, raw, v)


def inputs(params: tuple[Type, ...], n: int, seed: int) -> list[np.ndarray]:
    """One array per parameter: ``n`` lanes (vectors: ``(n, 4 or width)``), the first lanes
    every pair of specials of the first two parameters, the rest random."""
    rng = np.random.default_rng(seed)
    cols = []
    for j, p in enumerate(params):
        e = element_of(p)
        if e.is_bool:
            cols.append(rng.integers(0, 2, n).astype(np.bool_))
            continue
        sp = _float_special(e.dtype) if e.is_float else _int_special(e.dtype)
        width = 4 if isinstance(p, VectorType) and p.n == 3 else lanes_of(p)
        vals = _random(e, n * width, rng).reshape(n, width)
        k = len(sp)
        if j == 0:
            m = min(n, k * k if len(params) > 1 else k)
            vals[:m, 0] = np.tile(sp, k)[:m] if len(params) > 1 else sp[:m]
        elif j == 1:
            m = min(n, k * k)
            vals[:m, 0] = np.repeat(sp, k)[:m]
        cols.append(vals if isinstance(p, VectorType) else vals[:, 0].copy())
    return cols


def lanes_of(t: Type) -> int:
    return t.n if isinstance(t, VectorType) else 1


# ----------------------------------------------------------------------------- the two engines


def _group(cs: list[Case]) -> dict[tuple[tuple[Type, ...], Type], list[Case]]:
    groups: dict[tuple[tuple[Type, ...], Type], list[Case]] = defaultdict(list)
    for c in cs:
        groups[(c.overload.params, c.overload.ret)].append(c)
    return groups


def _kernel_source(
    groups: dict[tuple[tuple[Type, ...], Type], list[Case]], uniform: bool = False
) -> str:
    """One kernel per group; ``uniform``: the arguments are values, the same in every lane
    (the NumPy engine computes with NumPy scalars then), else buffer elements."""
    # vector types by their spelling (clpy.int8 is NumPy's name of char)
    lines = [
        "import clpy",
        "from clpy.types.core import VectorType",
        "import clpy.types.catalog as C",
    ]
    names = {t for (params, ret) in groups for t in (*_values(params), ret)}
    names |= {t for (params, ret) in groups if (t := _pointee(params)) is not None}
    for t in sorted(names, key=str):
        e = element_of(t)
        spell = {"int": "int_", "float": "float_", "bool": "bool_"}.get(e.name, e.name)
        v = f"VectorType(C.{spell}, {t.n})" if isinstance(t, VectorType) else f"C.{spell}"
        lines.append(f"T_{t.cl_name} = {v}")
    lines.append("")
    for g, ((params, ret), cs) in enumerate(groups.items()):
        vals, pt = _values(params), _pointee(params)
        ps = [
            f"a{j}: T_{p.cl_name}" if uniform else f"a{j}: clpy.Global[T_{p.cl_name}]"
            for j, p in enumerate(vals)
        ]
        ps += [f"o{m}: clpy.Global[T_{ret.cl_name}]" for m in range(len(cs))]
        if pt is not None:
            ps += [f"q{m}: clpy.Global[T_{pt.cl_name}]" for m in range(len(cs))]
        lines += ["@clpy.kernel", f"def k{g}({', '.join(ps)}):", "    i = clpy.get_global_id(0)"]
        args = ", ".join(f"a{j}" if uniform else f"a{j}[i]" for j in range(len(vals)))
        for m, c in enumerate(cs):
            more = f", q{m} + i" if pt is not None else ""
            lines.append(
                f"    o{m}[i] = clpy.{c.name}({args}{more})"
                if c.builtin
                else f"    o{m}[i] = {args}"
            )
        lines.append("")
    return "\n".join(lines)


def _c_source(groups: dict[tuple[tuple[Type, ...], Type], list[Case]]) -> str:
    out = [f'#include "{PRELUDE}"', ""]
    for g, ((params, ret), cs) in enumerate(groups.items()):
        vals, pt = _values(params), _pointee(params)
        ps = [f"const char *a{j}" for j in range(len(vals))]
        ps += [f"char *o{m}" for m in range(len(cs))]
        ps += [f"char *q{m}" for m in range(len(cs) if pt is not None else 0)]
        out.append(f"void h{g}({', '.join(ps)}, long n) {{")
        out.append("    for (long i = 0; i < n; ++i) {")
        for j, p in enumerate(vals):
            t = c_type(p)
            out.append(f"        {t} x{j}; memcpy(&x{j}, a{j} + i * {p.size}, {p.size});")
        rt = c_type(ret)
        for m, c in enumerate(cs):
            store = f"memcpy(o{m} + i * {ret.size}, &r, {ret.size});"
            if pt is not None:
                store += f" memcpy(q{m} + i * {pt.size}, &y, {pt.size});"
                out.append(f"        {{ {c_type(pt)} y; {rt} r = {c.expr}; {store} }}")
            else:
                out.append(f"        {{ {rt} r = {c.expr}; {store} }}")
        out += ["    }", "}", ""]
    return "\n".join(out)


def _compile(cc: str, src: str, workdir: Path) -> ctypes.CDLL:
    key = hashlib.sha256((src + PRELUDE.read_text() + cc).encode()).hexdigest()[:16]
    lib = workdir / f"h{key}.so"
    if not lib.exists():
        c = workdir / f"h{key}.c"
        c.write_text(src)
        subprocess.run([cc, *FLAGS, "-o", str(lib), str(c), "-lm"], check=True)
    return ctypes.CDLL(str(lib))


def _load_kernels(src: str, workdir: Path) -> dict[str, Any]:
    path = workdir / f"kernels_{hashlib.sha256(src.encode()).hexdigest()[:16]}.py"
    path.write_text(src)
    mod = types.ModuleType(f"native_builtins_{path.stem}")
    mod.__file__ = str(path)
    sys.modules[mod.__name__] = mod
    try:
        exec(compile(src, str(path), "exec"), mod.__dict__)
    finally:
        sys.modules.pop(mod.__name__, None)
    return mod.__dict__


@dataclass
class Result:
    case: Case
    lanes: int
    bad: int
    example: str
    nan_choice: int = 0  # lanes whose two NaN inputs give NaNs of different bits (not pinned)


def run(
    cs: list[Case],
    n: int,
    workdir: Path,
    seed: int = 1,
    cc: str | None = None,
    local: int = 64,
) -> list[Result]:
    """Each case over ``n`` lanes on the simulator (work-groups of ``local``) and in C; the
    lanes that differ."""
    cc = cc or compiler()
    assert cc is not None
    groups = _group(cs)
    lib = _compile(cc, _c_source(groups), workdir)
    kernels = _load_kernels(_kernel_source(groups), workdir)
    results = []
    for g, ((params, ret), gcs) in enumerate(groups.items()):
        vals, pt = _values(params), _pointee(params)
        ins = inputs(vals, n, seed + g)
        dt = element_of(ret).dtype
        sim_out = [_zeros(ret, n) for _ in gcs]
        c_out = [_zeros(ret, n) for _ in gcs]
        sim_q = [_zeros(pt, n) for _ in gcs] if pt is not None else []
        c_q = [_zeros(pt, n) for _ in gcs] if pt is not None else []
        with clpy.sim.config(checks=False, engine="numpy"):
            kernels[f"k{g}"][(n,), (local,)](*ins, *sim_out, *sim_q, device="sim")
        ptrs = [ctypes.c_void_p(a.ctypes.data) for a in (*ins, *c_out, *c_q)]
        getattr(lib, f"h{g}")(*ptrs, ctypes.c_long(n))
        keep = lanes_of(ret)
        nans = sum(
            np.isnan(a.reshape(n, -1)[:, : lanes_of(p)]).sum(axis=1)
            for a, p in zip(ins, vals)
            if element_of(p).is_float
        )
        for m, (c, s, o) in enumerate(zip(gcs, sim_out, c_out)):
            sv = s.reshape(n, -1)[:, :keep]
            ov = o.reshape(n, -1)[:, :keep]
            ut = np.dtype(f"uint{dt.itemsize * 8}")
            differ = sv.view(ut) != ov.view(ut)
            if pt is not None:  # the value stored through the pointer must be the same too
                qs, qc = (_bits(q[m].reshape(n, -1)[:, : lanes_of(pt)]) for q in (sim_q, c_q))
                differ = differ | (qs != qc).any(axis=1, keepdims=True)
            # where two NaNs meet in + - * /, the NumPy engine's NaN is the first operand's in
            # NumPy's SIMD loops but may be the second in others (in place, other sizes)
            choice = np.zeros(n, bool)
            if dt.kind == "f" and c.builtin is not None and c.builtin.name in _NAN_CHOICE:
                choice = (nans >= 2) & ~(differ & ~(np.isnan(sv) & np.isnan(ov))).any(axis=1)
            diff = np.flatnonzero(differ.any(axis=1) & ~choice)
            ex = ""
            if diff.size:
                i = diff[0]
                args = ", ".join(_show(a[i]) for a in ins)
                ex = f"({args}) -> sim {_show(sv[i])} C {_show(ov[i])}"
            results.append(
                Result(c, n, int(diff.size), ex, int((choice & differ.any(axis=1)).sum()))
            )
    return results


def _zeros(t: Type, n: int) -> np.ndarray:
    width = 4 if isinstance(t, VectorType) and t.n == 3 else lanes_of(t)
    return np.zeros((n, width) if isinstance(t, VectorType) else (n,), element_of(t).dtype)


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(np.dtype(f"uint{a.dtype.itemsize * 8}"))


# built-ins doing + - * / on two arguments that may both be NaN
_NAN_CHOICE = frozenset("mix mad fma dot cross distance fast_distance smoothstep".split())


def _show(v: np.ndarray) -> str:
    """Values with the bits of floats (NaN payloads)."""
    a = np.atleast_1d(v)
    if a.dtype.kind != "f":
        return str(a.tolist())
    ut = np.dtype(f"uint{a.dtype.itemsize * 8}")
    return "[" + ", ".join(f"{x!r}={b:#x}" for x, b in zip(a.tolist(), a.view(ut).tolist())) + "]"


def vector_casts() -> list[Case]:
    """Scalar to vector (broadcast) and vector to vector of as many lanes: the ``Cast`` forms
    a kernel cannot write by assignment, checked against sim/ops.py ``convert`` directly."""
    out = []
    for k, src in enumerate(_NATIVE[1:]):
        for j, dst in enumerate(_NATIVE[1:]):
            n = (2, 3, 4, 8, 16)[(k + j) % 5]
            for s, d in ((src, VectorType(dst, n)), (VectorType(src, n), VectorType(dst, n))):
                if s is not d:
                    expr = NB.c_cast("x0", s, d)
                    assert expr is not None, (s, d)
                    out.append(Case(None, Overload((s,), d), expr))
    return out


def run_casts(cs: list[Case], n: int, workdir: Path, seed: int = 7) -> list[Result]:
    """``cs`` in C and through the NumPy engine's ``ops.convert`` (component axis first)."""
    cc = compiler()
    assert cc is not None
    groups = _group(cs)
    lib = _compile(cc, _c_source(groups), workdir)
    results = []
    for g, ((params, ret), gcs) in enumerate(groups.items()):
        (x,) = inputs(params, n, seed + g)
        lanes = x.T[: lanes_of(params[0]), None, :] if x.ndim == 2 else x[None, :]
        with np.errstate(all="ignore"):
            ref = np.asarray(ops.convert(lanes, params[0], ret))  # (lanes, 1, n)
        ref = np.broadcast_to(ref, (lanes_of(ret), 1, n))[:, 0, :].T
        width = 4 if isinstance(ret, VectorType) and ret.n == 3 else lanes_of(ret)
        dt = element_of(ret).dtype
        got = np.zeros((n, width), dt)
        getattr(lib, f"h{g}")(
            ctypes.c_void_p(x.ctypes.data), ctypes.c_void_p(got.ctypes.data), ctypes.c_long(n)
        )
        ut = np.dtype(f"uint{dt.itemsize * 8}")
        bad = (ref.view(ut) != got[:, : lanes_of(ret)].view(ut)).any(axis=1)
        ex = ""
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            ex = f"({_show(x[i])}) -> sim {_show(ref[i])} C {_show(got[i])}"
        results.append(Result(gcs[0], n, int(bad.sum()), ex))
    return results


# ----------------------------------------------------------------------------- tests


@pytest.fixture(scope="module")
def workdir() -> Any:
    with tempfile.TemporaryDirectory(prefix="clpy_native_builtins_") as d:
        yield Path(d)


def run_uniform(cs: list[Case], limit: int, workdir: Path) -> list[Result]:
    """Scalar float cases with uniform arguments (kernel values: NumPy scalars on the NumPy
    engine, whose loops for them are not the SIMD ones): the pairs of specials (at most
    ``limit`` per signature), one single-work-item launch each."""
    cc = compiler()
    assert cc is not None
    cs = [
        c
        for c in cs
        if c.builtin is not None
        and isinstance(c.overload.ret, ScalarType)
        and all(isinstance(p, ScalarType) and p.is_float for p in c.overload.params)
    ]
    groups = _group(cs)
    lib = _compile(cc, _c_source(groups), workdir)
    kernels = _load_kernels(_kernel_source(groups, uniform=True), workdir)
    results = []
    for g, ((params, ret), gcs) in enumerate(groups.items()):
        k = len(_float_special(element_of(params[0]).dtype))
        n = min(limit, k ** min(len(params), 2))
        # a float kernel argument reaches the NumPy engine as a Python float: quieted
        ins = [_quiet32(a) for a in inputs(params, n, 3 + g)]
        dt = element_of(ret).dtype
        sim_out = [np.zeros(n, dt) for _ in gcs]
        c_out = [np.zeros(n, dt) for _ in gcs]
        one = [np.zeros(1, dt) for _ in gcs]
        launch = kernels[f"k{g}"][(1,), (1,)]
        with clpy.sim.config(checks=False, engine="numpy"):
            for i in range(n):
                launch(*(a[i] for a in ins), *one, device="sim")
                for s, o in zip(sim_out, one):
                    s[i] = o[0]
        ptrs = [ctypes.c_void_p(a.ctypes.data) for a in (*ins, *c_out)]
        getattr(lib, f"h{g}")(*ptrs, ctypes.c_long(n))
        for c, sv, ov in zip(gcs, sim_out, c_out):
            diff = np.flatnonzero(_bits(sv) != _bits(ov))
            ex = ""
            if diff.size:
                i = int(diff[0])
                args = ", ".join(_show(a[i]) for a in ins)
                ex = f"({args}) -> sim {_show(sv[i])} C {_show(ov[i])}"
            results.append(Result(c, n, int(diff.size), ex))
    return results


def _quiet32(a: np.ndarray) -> np.ndarray:
    if a.dtype != np.float32:
        return a
    with np.errstate(all="ignore"):
        return np.where(np.isnan(a), a + a, a)


def test_uniform_arguments_match_numpy_engine(workdir: Path) -> None:
    """Every scalar float built-in, min max fmin fmax clamp maxmag minmag pow included: the
    NumPy engine says which operand of equal zeros or of two NaNs wins itself (np.where),
    not through NumPy's loops, whose scalar and SIMD versions differ
    (tests/test_sim_minmax_bits.py)."""
    _need_cc()
    cs = cases()
    bad = [r for r in run_uniform(cs, 400, workdir) if r.bad]
    assert not bad, "\n".join(f"{r.case.name}{r.case.overload}: {r.example}" for r in bad[:40])


def _other_compilers() -> list[str]:
    """clang and gcc where installed besides the default compiler (the prelude supports both;
    they fold floating-point code differently: clang flipped NaN signs of a - b)."""
    cc = compiler()
    main = os.path.realpath(shutil.which(cc) or "") if cc else ""
    return [
        c
        for c in ("gcc", "clang")
        if shutil.which(c) and os.path.realpath(shutil.which(c) or "") != main
    ]


@pytest.mark.parametrize("cc", [None, *_other_compilers()])
def test_every_case_matches_numpy_engine(workdir: Path, cc: str | None) -> None:
    _need_cc()
    cs = cases()
    assert len(cs) > 300
    bad = [r for r in run(cs, 4096, workdir, cc=cc) if r.bad]
    lines = [f"{r.case.name}{r.case.overload}: {r.bad} lanes, e.g. {r.example}" for r in bad]
    assert not bad, "\n".join(lines[:40])


def test_vector_casts_match_ops_convert(workdir: Path) -> None:
    _need_cc()
    bad = [r for r in run_casts(vector_casts(), 4096, workdir) if r.bad]
    assert not bad, "\n".join(f"{r.case.overload}: {r.bad} lanes, e.g. {r.example}" for r in bad)


# deliberately wrong C for some cases: each must be caught
_WRONG = {
    ("hadd", "(int, int) -> int"): "((x0 + x1) >> 1)",  # overflows where hadd does not
    ("fmin", "(float, float) -> float"): "fminf(x0, x1)",  # C's fmin: another zero and NaN
    ("clz", "(uchar) -> uchar"): "(uchar)__builtin_clz(x0 | 1)",
    ("convert_int_sat_rte", "(float) -> int"): "(int)rintf(x0)",  # no saturation, NaN UB
    ("fma", "(double, double, double) -> double"): "(x0 * x1 + x2)",  # two roundings
    ("sin", "(float) -> float"): "sinf(x0)",  # float's own routine, not double's
    ("select", "(uint4, uint4, int4) -> uint4"): (  # c != 0 instead of its top bit
        "({ uint4 r; for (int k = 0; k < 4; k++) r[k] = x2[k] != 0 ? x1[k] : x0[k]; r; })"
    ),
    ("cast", "(float) -> uint"): "(uint)(long)x0",  # wraps instead of saturating
    ("frexp", "(float, int*) -> float"): (  # the right mantissa, the exponent stored off by one
        "({ int e; float m = (float)frexp(clpy_wf(x0), &e); y = isfinite(x0) ? e + 1 : 0; m; })"
    ),
}


def test_wrong_implementations_are_caught(workdir: Path) -> None:
    _need_cc()
    pool = {(c.name, str(c.overload)): c for c in cases(every=True)}
    for key in _WRONG:
        if key not in pool:
            b = REGISTRY[key[0]]
            assert b.conversion is not None
            ov = next(o for o in _conversion_overloads(b) if str(o) == key[1])
            pool[key] = Case(b, ov, "")
    wrong = [Case(pool[k].builtin, pool[k].overload, expr) for k, expr in _WRONG.items()]
    caught = {(r.case.name, str(r.case.overload)): r.bad for r in run(wrong, 4096, workdir)}
    assert all(caught[k] > 0 for k in _WRONG), caught


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 16
    every = "--every" in sys.argv
    local = next((int(a[8:]) for a in sys.argv if a.startswith("--local=")), 64)
    names = [a for a in sys.argv[2:] if not a.startswith("--")]
    cs = [c for c in cases(every) if not names or c.name in names]
    with tempfile.TemporaryDirectory(prefix="clpy_native_builtins_") as d:
        if "--uniform-only" in sys.argv:  # uniform arguments only, n pairs of specials
            rs = run_uniform(cs, n, Path(d))
        else:
            rs = run(cs, n, Path(d), local=local)
            if not names or "cast" in names:
                rs += run_casts(vector_casts(), n, Path(d))
    for r in rs:
        if r.bad:
            print(f"{r.case.name}{r.case.overload}: {r.bad}/{r.lanes} e.g. {r.example}")
    print(
        f"{len(rs)} cases, {sum(r.lanes for r in rs)} lanes, {sum(1 for r in rs if r.bad)} differ"
    )
    print(f"lanes where two NaN inputs gave NaNs of other bits: {sum(r.nan_choice for r in rs)}")


if __name__ == "__main__":
    main()
