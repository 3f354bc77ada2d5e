"""A ``ushort`` saturated from a ``short``, then a guarded division by it (issue 15, seed 380415).

    python scripts/gpu_udiv_diag.py [--platform nvidia] [--out FILE.json]

Fuzz seed 380415 (H100, driver 580, session 8): ``v1 = convert_ushort_sat(in[1])`` (clpy's
NVIDIA helper ``convert_ushort(x < (short)0 ? 0 : x)``), then ``safe_div(as_ushort((short)-1),
v1)`` (``if (b == 0) return a; return a / b;``) in a one-trip loop gave 65535 for ``in[1] == 7``
instead of 65535 / 7 = 9362: the ``b == 0`` branch taken. PoCL and the simulator give 9362.

This runs each spelling of the conversion (``SAT``) with each spelling of the guarded division
(``DIV``), straight-line or in a one-trip loop, with ``x`` from memory at several values,
under ``-cl-std=CL1.2`` and ``CL2.0``, and prints what is wrong: a spelling right in every case
is what clpy's NVIDIA lowering should emit.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from diag_main import diag_main

SAT: dict[str, str] = {
    "clpy_helper": "return convert_ushort(x < (short)0 ? 0 : x);",
    "builtin": "return convert_ushort_sat(x);",
    "ternary_outside": "return x < (short)0 ? (ushort)0 : convert_ushort(x);",
    "cast": "return x < (short)0 ? (ushort)0 : (ushort)x;",
    "int_ternary": "int y = (int)x; return convert_ushort(y < 0 ? 0 : y);",
    "as_masked": "return as_ushort((short)(x & ~(x >> 15)));",
    "max_int": "return convert_ushort(max((int)x, 0));",
}
DIV: dict[str, str] = {
    "if_return": "if (b == 0) { return a; } return a / b;",
    "ternary": "return b == 0 ? a : a / b;",
    "uint_compare": "if ((uint)b == 0u) { return a; } return a / b;",
    "in_uint": "if (b == 0) { return a; } return convert_ushort((uint)a / (uint)b);",
}
KERNEL = """
ushort sat(short x) {{ {sat} }}
ushort safe_div(ushort a, ushort b) {{ {div} }}
__kernel void k(__global const short *xs, __global ushort *out, int at) {{
    int i = get_global_id(0);
    ushort v1 = (ushort)0;
{body}
    out[i] = v1;
}}
"""
BODY = "v1 = sat(xs[at]); v1 = safe_div(as_ushort((short)-1), v1);"
XS = [7, 0, 1, -5, 2, 255, 32767, -32768]


def _expected(x: int) -> int:
    v = max(x, 0)
    return 65535 if v == 0 else 65535 // v


def run_device(dev: Any) -> list[dict[str, Any]]:
    import pyopencl as cl

    ctx = cl.Context([dev])
    q = cl.CommandQueue(ctx)
    mf = cl.mem_flags
    n = 128
    results = []
    for std in ("CL1.2", "CL2.0"):
        for sname, sat in SAT.items():
            for dname, div in DIV.items():
                for loop in (True, False):
                    body = f"    for (int i5 = 0; i5 < 1; ++i5) {{ {BODY} }}" if loop else BODY
                    src = KERNEL.format(sat=sat, div=div, body=body)
                    label = f"{sname}/{dname}/{'loop' if loop else 'flat'}"
                    res: dict[str, Any] = {"device": dev.name, "std": std, "case": label}
                    try:
                        prg = cl.Program(ctx, src).build(options=[f"-cl-std={std}"])
                        kern = cl.Kernel(prg, "k")
                        wrong, first = 0, []
                        for x in XS:
                            xs = np.array([0, x] * (n // 2), np.int16)
                            bx = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=xs)
                            bo = cl.Buffer(ctx, mf.WRITE_ONLY, size=2 * n)
                            kern(q, (n,), (64,), bx, bo, np.int32(1))
                            got = np.empty(n, np.uint16)
                            cl.enqueue_copy(q, got, bo)
                            exp = _expected(x)
                            bad = np.flatnonzero(got != exp)
                            if len(bad):
                                wrong += 1
                                first.append((x, int(got[bad[0]]), exp))
                        res["wrong"] = wrong
                        res["first"] = first[:4]
                    except Exception as e:  # a build failure is a result too
                        res["error"] = f"{type(e).__name__}: {str(e)[:300]}"
                    results.append(res)
                    if res.get("error") or res["wrong"]:
                        status = res.get("error") or f"{res['wrong']} inputs wrong"
                        print(f"{std} {label:40} {status} {res.get('first', '')}", flush=True)
    return results


if __name__ == "__main__":
    raise SystemExit(diag_main(__doc__ or "", run_device, depth=1))
