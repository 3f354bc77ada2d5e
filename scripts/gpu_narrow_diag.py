"""Two NVIDIA miscompilations of narrow integers, split into candidate spellings (issue 15).

    python scripts/gpu_narrow_diag.py [--platform nvidia] [--out FILE.json]

Fuzz seed 333251 (H100, driver 580): ``(short)(0 - s) > 0`` is true at ``s == -32768``, where
OpenCL C 2.0 §6.2.3.3 and C99 §6.3.1.3 (what every OpenCL compiler does) give ``(short)32768
== -32768``. Fuzz seed 333693: ``safe_div(1, min((short)0, s))`` (a guarded floor division
that returns the numerator for a zero divisor) came back one less than the spec's value; seed
342146 is the same shape with ``max``.

For ``char`` and ``short``, over every value of the type, this runs each bug's raw form and
the spellings clpy could emit instead, each straight-line and inside a two-trip loop (the fuzz
kernels had the loop), with the zero taken from a literal, a private variable and memory.
Prints one line per device and case, ``OK`` or ``N wrong`` with the first few ``x -> got
(want)``, and writes them all as JSON. A spelling that is right on every device and context
is what clpy's NVIDIA lowering should emit.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np
from diag_main import diag_main

TYPES = {"char": np.int8, "short": np.int16}
ZEROS = {"lit": "0", "var": "z", "mem": "y[i]"}  # where the 0 of `0 - x` comes from

# --- seed 333251: compare a narrowed difference. {N} type, {U} unsigned, {A} zero, {K} bound
COMPARE = {
    "cast": "r = ({N})({A} - x[i]) > {K};",
    "temp": "{N} v = ({N})({A} - x[i]); r = v > {K};",
    "volatile": "volatile {N} v = ({N})({A} - x[i]); r = v > {K};",
    "as_unsigned": "r = as_{N}(({U})({A} - x[i])) > {K};",
    "uint_arith": "r = ({N})((uint){A} - (uint)x[i]) > {K};",
    "convert": "r = convert_{N}((int)({A} - x[i])) > {K};",
    "shift_sext": "int w = {A} - x[i]; r = ((w << {S}) >> {S}) > {K};",
    "xor_sext": "int w = ({A} - x[i]) & {MASK}; r = ((w ^ {SIGN}) - {SIGN}) > {K};",
    "and_sext": "int u = ({A} - x[i]) & {MASK}; r = (u - ((u & {SIGN}) << 1)) > {K};",
    "vector": "r = convert_{N}2((int2)({A} - x[i])).x > {K};",
    "opaque_xor": (
        "{N} v = ({N})({A} - x[i]); v = as_{N}(({U})(as_{U}(v) ^ ({U})o[0])); r = v > {K};"
    ),
    "helper": "r = narrow_{N}({A} - x[i]) > {K};",
    "helper_volatile": "r = narrow_v_{N}({A} - x[i]) > {K};",
}
HELPERS = """
{N} narrow_{N}(int w) {{ return ({N})w; }}
{N} narrow_v_{N}(int w) {{ volatile {N} v = ({N})w; return v; }}
"""

# --- seed 333693 / 342146: floor division by min/max of a narrowed value, guarded for zero
DIV_HELPERS = """
int fdiv(int a, int b) {{ int q = a / b; return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q; }}
{N} sdiv({N} a, {N} b) {{
    if (b == 0 || (a == {MIN} && b == -1)) {{ return a; }}
    return fdiv((int)a, (int)b);
}}
"""
DIVIDE = {  # {F} min or max, {A} numerator
    "builtin": "r = sdiv(({N}){A}, {F}(z, x[i]));",
    "builtin_swapped": "r = sdiv(({N}){A}, {F}(x[i], z));",
    "via_int": "r = sdiv(({N}){A}, ({N}){F}((int)z, (int)x[i]));",
    "ternary": "r = sdiv(({N}){A}, {TERN});",
    "volatile": "volatile {N} m = {F}(z, x[i]); r = sdiv(({N}){A}, m);",
    "temp_then_fdiv": "{N} m = {F}(z, x[i]); r = m == 0 ? 7 : ({N})fdiv({A}, (int)m);",
    "via_int_fdiv": "{N} m = ({N}){F}((int)z, (int)x[i]); r = m == 0 ? 7 : ({N})fdiv({A}, (int)m);",
    "no_min": "r = sdiv(({N}){A}, x[i]);",
}

KERNEL = """{helpers}
__kernel void k(__global const {N}* x, __global const {N}* y, __global const int* o,
                __global int* out) {{
    int i = get_global_id(0);
    {N} z = 0;
    int r = -99;
{body}
    out[i] = r;
}}"""


def _params(t: str) -> dict[str, Any]:
    bits = np.iinfo(TYPES[t]).bits
    return {
        "N": t, "U": "u" + t, "S": 32 - bits, "MASK": hex(2**bits - 1),
        "SIGN": hex(2 ** (bits - 1)), "MIN": f"(({t})({-(2 ** (bits - 1))}))",
    }  # fmt: skip


def _wrap(stmt: str, loop: bool) -> str:
    if not loop:
        return "    " + stmt
    return "    for (int j = 0; j < 2; ++j) {\n        " + stmt + "\n    }"


def _narrow(w: np.ndarray, t: str) -> np.ndarray:
    return w.astype(np.int64).astype(TYPES[t]).astype(np.int64)  # the low bits, signed


def _sdiv(a: int, b: np.ndarray, t: str) -> np.ndarray:
    lo = int(np.iinfo(TYPES[t]).min)
    safe = np.where(b == 0, 1, b)
    q = np.floor_divide(a, safe)
    return np.where((b == 0) | ((a == lo) & (b == -1)), a, q)


def cases(t: str) -> list[tuple[str, str, Callable[[np.ndarray], np.ndarray]]]:
    """(name, kernel source, expected(x)) for type ``t``."""
    p = _params(t)
    out: list[tuple[str, str, Callable[[np.ndarray], np.ndarray]]] = []
    for name, body in COMPARE.items():
        for zname, zero in ZEROS.items():
            for k in (0, 33):
                for loop in (False, True):
                    stmt = body.format(**p, A=zero, K=k)
                    src = KERNEL.format(**p, helpers=HELPERS.format(**p), body=_wrap(stmt, loop))
                    label = f"compare/{name}/{zname}/>{k}/{'loop' if loop else 'flat'}"
                    out.append((label, src, lambda x, k=k: (_narrow(-x, t) > k).astype(np.int64)))
    for fname, tern in (("min", "(z < x[i] ? z : x[i])"), ("max", "(z > x[i] ? z : x[i])")):
        for name, body in DIVIDE.items():
            for a in (1, -1):
                for loop in (False, True):
                    stmt = body.format(**p, F=fname, A=a, TERN=tern)
                    helpers = DIV_HELPERS.format(**p)
                    src = KERNEL.format(**p, helpers=helpers, body=_wrap(stmt, loop))
                    label = f"divide/{fname}/{name}/{a}/{'loop' if loop else 'flat'}"
                    f = np.minimum if fname == "min" else np.maximum

                    def want(x: np.ndarray, a: int = a, f: Any = f, name: str = name) -> Any:
                        m = x if name == "no_min" else f(0, x)
                        if name.endswith("fdiv"):
                            return np.where(m == 0, 7, np.floor_divide(a, np.where(m == 0, 1, m)))
                        return _sdiv(a, m, t)

                    out.append((label, src, want))
    return out


def run_device(dev: Any) -> list[dict[str, Any]]:
    import pyopencl as cl

    ctx = cl.Context([dev])
    q = cl.CommandQueue(ctx)
    mf = cl.mem_flags
    results = []
    for t, dt in TYPES.items():
        info = np.iinfo(dt)
        x = np.arange(info.min, info.max + 1, dtype=np.int64).astype(dt)
        y = np.zeros_like(x)
        o = np.zeros(1, np.int32)
        bx = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
        by = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=y)
        bo = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=o)
        bout = cl.Buffer(ctx, mf.WRITE_ONLY, size=4 * len(x))
        for label, src, want in cases(t):
            res: dict[str, Any] = {"device": dev.name, "type": t, "case": label}
            try:
                prg = cl.Program(ctx, src).build(options=["-cl-std=CL1.2"])
                prg.k(q, (len(x),), None, bx, by, bo, bout)
                got = np.empty(len(x), np.int32)
                cl.enqueue_copy(q, got, bout)
                exp = want(x.astype(np.int64))
                bad = np.flatnonzero(got != exp)
                res["wrong"] = int(len(bad))
                res["first"] = [(int(x[j]), int(got[j]), int(exp[j])) for j in bad[:4]]
            except Exception as e:  # a build failure is a result too
                res["error"] = f"{type(e).__name__}: {str(e)[:300]}"
            results.append(res)
            status = res.get("error") or ("OK" if not res["wrong"] else f"{res['wrong']} wrong")
            first = (
                ""
                if not res.get("first")
                else " " + " ".join(f"{a}->{b}({c})" for a, b, c in res["first"])
            )
            print(f"{dev.name[:24]:24} {t:5} {label:40} {status}{first}", flush=True)
    return results


def main() -> int:
    return diag_main(__doc__ or "", run_device)


if __name__ == "__main__":
    sys.exit(main())
