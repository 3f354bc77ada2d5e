"""Two NVIDIA mismatches of the session-7 three-way fuzz run, split into spellings (issue 15).

    python scripts/gpu_absmod_diag.py [--platform nvidia] [--out FILE.json]

Seed 365246 (H100, driver 580): ``v = (long)abs(x)`` at ``x == LONG_MIN`` is ``LONG_MIN``
(OpenCL C 2.0 §6.13.3: ``abs`` returns ``(ulong)2**63``, which converts to ``LONG_MIN``), and
clpy's floor modulo ``33 % v`` is then ``33 + LONG_MIN < 0``; the H100 printed nothing for
those work-items, as if ``v`` were non-negative. clpy spells ``abs`` there as its helper
``x < 0 ? (ulong)0 - u : u`` (clpy/emit/lower_abs.py). This runs the abs spellings below for
``int`` and ``long``, used three ways (stored; floor modulo of 33; compared with 0), flat and in
a loop, with ``x`` from memory.

Seed 364290: ``f(0) >= f(2)`` with ``f`` returning ``as_double(0x7FFFFFFFFFFFFFFE) + 1.0`` (a
NaN: every ordered comparison is false, §6.3.d) was true on the H100. The NaN cases compare
NaNs made several ways (a constant in a function, a constant inline, from memory).

Prints the cases that are wrong and a count per spelling.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from diag_main import diag_main

ABS = {  # {T} signed type, {U} unsigned, {B} bits - 1
    "clpy_helper": "{U} u = as_{U}(x); a = x < ({T})0 ? ({U})0 - u : u;",
    "builtin": "a = abs(x);",
    "xor_shift": "{U} m = as_{U}(x >> {B}); a = (as_{U}(x) ^ m) - m;",
    "mul_sign": "a = as_{U}(x) * (x < ({T})0 ? ({U})-1 : ({U})1);",
    "select_fn": "{U} u = as_{U}(x); a = select(u, ({U})0 - u, ({U})(x < ({T})0));",
    "volatile": "volatile {U} u = as_{U}(x); a = x < ({T})0 ? ({U})0 - u : u;",
    "abs_diff0": "a = abs_diff(x, ({T})0);",
    "hi_bit_or": "{U} u = as_{U}(x); a = (x < ({T})0 ? ~u : u) + (({U})x >> {B});",
}
USES = {  # v: the abs as the signed type (LONG_MIN stays LONG_MIN)
    "store": "r = (long)v;",
    "fmod33": "{T} q = ({T})33 % v; r = (long)((q != 0 && ((q < 0) != (v < 0))) ? q + v : q);",
    "negative": "r = v < ({T})0;",
}
TYPES = {"int": (np.int32, "uint", 31), "long": (np.int64, "ulong", 63)}

ABS_KERNEL = """
__kernel void k(__global const {T} *xs, __global long *out) {{
    int i = get_global_id(0);
    {T} x = xs[i];
    {U} a;
    long r = -7;
{body}
    out[i] = r;
}}
"""

NAN = {  # r = 1 when the comparison is true (it never is: both sides are NaN)
    "fn_const": ("double f(uint p) {{ return as_double(0x7FFFFFFFFFFFFFFEL) - (-1.0); }}",
                 "r = f(0u) >= f(2u);"),
    "fn_const_eq": ("double f(uint p) {{ return as_double(0x7FFFFFFFFFFFFFFEL) - (-1.0); }}",
                    "r = f(0u) == f(2u);"),
    "inline_const": ("", "double a = as_double(0x7FFFFFFFFFFFFFFEL) - (-1.0); r = a >= a;"),
    "fn_mem": ("double f(double p) {{ return p - (-1.0); }}", "r = f(d[i]) >= f(d[i]);"),
    "mem": ("", "double a = d[i] + 1.0; r = a >= a;"),
    "fn_const_float": ("float f(uint p) {{ return as_float(0x7FFFFFFE) - (-1.0f); }}",
                       "r = f(0u) >= f(2u);"),
}  # fmt: skip
NAN_KERNEL = """
{helper}
__kernel void k(__global const double *d, __global long *out) {{
    int i = get_global_id(0);
    long r = -7;
{body}
    out[i] = r;
}}
"""


def _wrap(stmt: str, loop: bool) -> str:
    if not loop:
        return "    " + stmt
    return "    for (int j = 0; j < 2; ++j) { " + stmt + " }"


def _abs_want(x: np.ndarray, t: str, use: str) -> np.ndarray:
    dt, _, bits = TYPES[t]
    v = np.abs(x.astype(dt))  # NumPy's abs of MIN is MIN: the spec's value as the signed type
    v64 = v.astype(np.int64)
    if use == "store":
        return v64
    if use == "negative":
        return (v64 < 0).astype(np.int64)
    q = np.fmod(np.int64(33), v64)  # C's %: 33 % MIN is 33
    return np.where((q != 0) & ((q < 0) != (v64 < 0)), q + v64, q)


def run_device(dev: Any) -> list[dict[str, Any]]:
    import pyopencl as cl

    ctx = cl.Context([dev])
    q = cl.CommandQueue(ctx)
    mf = cl.mem_flags
    results: list[dict[str, Any]] = []

    def record(label: str, src: str, xin: np.ndarray, want: np.ndarray) -> None:
        res: dict[str, Any] = {"device": dev.name, "case": label}
        try:
            bx = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=xin)
            bout = cl.Buffer(ctx, mf.WRITE_ONLY, size=8 * len(xin))
            prg = cl.Program(ctx, src).build(options=["-cl-std=CL2.0"])
            prg.k(q, (len(xin),), None, bx, bout)
            got = np.empty(len(xin), np.int64)
            cl.enqueue_copy(q, got, bout)
            bad = np.flatnonzero(got != want)
            res["wrong"] = int(len(bad))
            res["first"] = [(str(xin[j]), int(got[j]), int(want[j])) for j in bad[:3]]
        except Exception as e:  # a build failure is a result too
            res["error"] = f"{type(e).__name__}: {str(e)[:300]}"
        results.append(res)
        if res.get("error") or res["wrong"]:
            first = " ".join(f"{a}->{b}({c})" for a, b, c in res.get("first", []))
            print(f"{label:40} {res.get('error') or str(res['wrong']) + ' wrong'} {first}")

    for t, (dt, u, bits) in TYPES.items():
        info = np.iinfo(dt)
        edges = [info.min, info.min + 1, -33, -1, 1, 33, 34, info.max]  # 33 % 0: undefined
        x = np.array(edges * 8, dtype=dt)
        for sname, spell in ABS.items():
            for uname, use in USES.items():
                for loop in (False, True):
                    p = {"T": t, "U": u, "B": bits}
                    stmt = f"{spell.format(**p)} {t} v = as_{t}(a); {use.format(**p)}"
                    src = ABS_KERNEL.format(**p, body=_wrap(stmt, loop))
                    label = f"abs/{t}/{sname}/{uname}/{'loop' if loop else 'flat'}"
                    record(label, src, x, _abs_want(x, t, uname))
    d = np.full(64, np.nan)
    for name, (helper, body) in NAN.items():
        for loop in (False, True):
            src = NAN_KERNEL.format(helper=helper.format(), body=_wrap(body, loop))
            label = f"nan/{name}/{'loop' if loop else 'flat'}"
            record(label, src, d, np.zeros(64, np.int64))
    return results


def main() -> int:
    return diag_main(__doc__ or "", run_device, depth=3)


if __name__ == "__main__":
    raise SystemExit(main())
