"""Saturating conversions from ``int`` to narrow types, spelled several ways (issue 15).

    python scripts/gpu_sat_diag.py [--platform nvidia] [--out FILE.json]

Fuzz seeds 354812 and 340201 (H100, driver 580) share one shape: an ``int`` converted with
``convert_uchar_sat`` (on NVIDIA clpy spells it as its helper, clpy/emit/lower_convert.py,
``x < 0 ? 0 : x > UCHAR_MAX ? UCHAR_MAX : (uchar)x``) and then compared or passed to ``max``.
In 354812 ``v5 = convert_uchar_sat(lid); if (v5 < (uchar)255) printf(...)`` printed nothing
for lid 0 and 1; in 340201 ``max((uchar)254, convert_uchar_sat(lin))`` was 255 everywhere.
By OpenCL C 2.0 §6.2.3.3 the saturated value of 0 <= x <= 255 is x.

For each destination (char, uchar, short, ushort) this runs every spelling of the conversion
(the device's built-in, clpy's helper as clpy emits it, and candidate spellings computed in
``int``), each used three ways (stored, compared with the maximum, ``max`` with maximum-1),
straight-line and in a two-trip loop, with ``x`` from memory (edge values and a sweep) or
from the local id, under ``-cl-std=CL1.2`` and ``CL2.0``. Prints the cases that are wrong
and a count; a spelling right in every case is what clpy's NVIDIA lowering should emit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from diag_main import diag_main

DESTS = {"char": np.int8, "uchar": np.uint8, "short": np.int16, "ushort": np.uint16}


def _clpy_helper(d: str) -> str:
    """clpy's own helper for ``convert_<d>_sat(int)`` (what the NVIDIA lowering emits)."""
    from clpy.emit.lower_convert import sat_helper_source
    from clpy.types import catalog as C

    return sat_helper_source(f"sat:{d}", C.int_).replace(f"clpy_convert_{d}_sat_int", "helper")


SPELLINGS: dict[str, str] = {  # {D} destination, {LO} {HI} its limits as int literals
    "builtin": "convert_{D}_sat(x)",
    "clpy_helper": "helper(x)",
    "int_ternary": "convert_{D}(x < {LO} ? {LO} : x > {HI} ? {HI} : x)",
    "int_ternary_cast": "({D})(x < {LO} ? {LO} : x > {HI} ? {HI} : x)",  # the helper before s7
    "clamp": "convert_{D}(clamp(x, {LO}, {HI}))",
    "clamp_cast": "({D})clamp(x, {LO}, {HI})",
    "minmax": "convert_{D}(min(max(x, {LO}), {HI}))",
    "select": "convert_{D}(select(select(x, {LO}, x < {LO}), {HI}, x > {HI}))",
}
USES: dict[str, str] = {  # v: the converted value of type {D}; r: the int result
    "store": "r = (int)v;",
    "compare": "r = v < ({D}){HI};",
    "max": "r = (int)max(({D})({HI} - 1), v);",
}
SOURCES = {"mem": "xs[i]", "lid": "(int)get_local_id(0)"}

KERNEL = """
{helper}
__kernel void k(__global const int *xs, __global int *out) {{
    int i = get_global_id(0);
    int x = {X};
    int r = -7;
{body}
    out[i] = r;
}}
"""


def _inputs() -> np.ndarray:
    edges = [-(2**31), -70000, -65536, -32769, -32768, -32767, -257, -256, -129, -128, -127]
    edges += [-2, -1, 0, 1, 2, 126, 127, 128, 129, 253, 254, 255, 256, 257, 32766, 32767]
    edges += [32768, 32769, 65534, 65535, 65536, 70000, 2**31 - 1]
    sweep = np.arange(-1024, 1024)
    x = np.concatenate([np.array(edges, np.int64), sweep]).astype(np.int32)
    pad = (-len(x)) % 64
    return np.concatenate([x, np.zeros(pad, np.int32)])


def _expected(x: np.ndarray, d: str, use: str) -> np.ndarray:
    info = np.iinfo(DESTS[d])
    v = np.clip(x.astype(np.int64), info.min, info.max)
    if use == "store":
        return v
    if use == "compare":
        return (v < info.max).astype(np.int64)
    return np.maximum(info.max - 1, v)


def cases(d: str) -> list[tuple[str, str, str, Callable[[np.ndarray], np.ndarray]]]:
    info = np.iinfo(DESTS[d])
    p = {"D": d, "LO": str(int(info.min)), "HI": str(int(info.max))}
    helper = _clpy_helper(d)
    out = []
    for sname, spell in SPELLINGS.items():
        for uname, use in USES.items():
            for src in SOURCES:
                for loop in (False, True):
                    stmt = f"{d} v = {spell.format(**p)}; {use.format(**p)}"
                    if loop:
                        stmt = f"    for (int j = 0; j < 2; ++j) {{ {stmt} }}"
                    else:
                        stmt = "    " + stmt
                    label = f"{sname}/{uname}/{src}/{'loop' if loop else 'flat'}"
                    kern = KERNEL.format(helper=helper, X=SOURCES[src], body=stmt)
                    out.append((label, src, kern, lambda x, u=uname: _expected(x, d, u)))
    return out


def run_device(dev: Any) -> list[dict[str, Any]]:
    import pyopencl as cl

    ctx = cl.Context([dev])
    q = cl.CommandQueue(ctx)
    mf = cl.mem_flags
    x = _inputs()
    bx = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    bout = cl.Buffer(ctx, mf.WRITE_ONLY, size=4 * len(x))
    lids = (np.arange(len(x)) % 64).astype(np.int32)
    results = []
    for std in ("CL1.2", "CL2.0"):
        for d in DESTS:
            for label, src, kern, want in cases(d):
                res: dict[str, Any] = {"device": dev.name, "std": std, "dest": d, "case": label}
                try:
                    prg = cl.Program(ctx, kern).build(options=[f"-cl-std={std}"])
                    prg.k(q, (len(x),), (64,), bx, bout)
                    got = np.empty(len(x), np.int32)
                    cl.enqueue_copy(q, got, bout)
                    xin = x if src == "mem" else lids
                    exp = want(xin)
                    bad = np.flatnonzero(got != exp)
                    res["wrong"] = int(len(bad))
                    res["first"] = [(int(xin[j]), int(got[j]), int(exp[j])) for j in bad[:4]]
                except Exception as e:  # a build failure is a result too
                    res["error"] = f"{type(e).__name__}: {str(e)[:300]}"
                results.append(res)
                if res.get("error") or res["wrong"]:
                    status = res.get("error") or f"{res['wrong']} wrong"
                    first = " ".join(f"{a}->{b}({c})" for a, b, c in res.get("first", []))
                    print(f"{std} {d:6} {label:36} {status} {first}", flush=True)
    return results


def main() -> int:
    return diag_main(__doc__ or "", run_device, depth=1)


if __name__ == "__main__":
    raise SystemExit(main())
