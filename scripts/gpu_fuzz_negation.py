"""A guarded signed negation on every OpenCL device: the driver's own forms and clpy's.

    python scripts/gpu_fuzz_negation.py [--out FILE.json]

Fuzz seed 310677 (H100, driver 580): ``short f(short a) { if (a == -32768) return a; return
-(int)a; }`` gave 32768 for -32768 on NVIDIA. For char, short and int this runs, over every
value of the type (int: edge values and a sample), the raw forms (``guarded``, with a cast,
as a ternary, unguarded, inline in the kernel) and candidate spellings of the negation inside
the guard (``sub0``, ``bitnot``, ``unsigned``, ``mask``, ``shift``, ``xor``, ``vector``,
``sub_sat``, ``volatile``), each result read back through ``(long)`` and through
``convert_int_sat``/``convert_long_sat``; then clpy's kernel (the fuzzer's ``safe_neg``
helper) with each spelling of clpy/emit/lower_negation.py forced, with the device's own
quirks, and the reduced fuzz kernel of seed 310677 against the simulator. Prints one line per
device and case (``N wrong``, the first few) and writes them all as JSON. The right answer is
the two's-complement negation (``MIN`` stays ``MIN``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

TYPES = {"char": np.int8, "short": np.int16, "int": np.int32}
NARROW_BODY = {  # the negation inside the guard; {T} type, {P} promoted, {U} unsigned
    "guarded": "return -({P})a;",
    "guarded-cast": "return ({T})(-({P})a);",
    "sub0": "return ({T})(0 - a);",
    "bitnot": "return ({T})(~a + 1);",
    "unsigned": "return as_{T}(({U})(0u - (uint)as_{U}(a)));",
    "mask": "return ({T})((-({P})a) & {MASK});",
    "shift": "int n = -(int)a; return ({T})((n << {S}) >> {S});",
    "xor": "int n = (-(int)a) & {MASK}; return ({T})((n ^ {SIGN}) - {SIGN});",
    "vector": "return (-({T}2)(a)).x;",
    "sub_sat": "return sub_sat(({T})0, a);",
    "volatile": "volatile {T} r = ({T})(-({P})a); return r;",
}
INT_SKIP = {"guarded-cast", "mask", "shift", "xor"}  # no promotion to undo for int
CONSUMERS = {"long": "(long)r", "sat": "convert_{W}_sat(r)"}


def _params(t: str) -> dict[str, Any]:
    bits = np.iinfo(TYPES[t]).bits
    return {
        "T": t,
        "P": "int" if bits < 32 else t,
        "U": "u" + t,
        "MIN": f"(({t})({-(2 ** (bits - 1))}))" if bits < 32 else "(-2147483647 - 1)",
        "MASK": hex(2**bits - 1),
        "SIGN": hex(2 ** (bits - 1)),
        "S": 32 - bits,
        "W": "int" if bits < 32 else "long",
    }


def _inputs(t: str) -> np.ndarray:
    info = np.iinfo(TYPES[t])
    if info.bits <= 16:
        return np.arange(info.min, info.max + 1, dtype=np.int64).astype(TYPES[t])
    rng = np.random.default_rng(310677)
    edge = [info.min, info.min + 1, -2, -1, 0, 1, 2, info.max, info.max - 1, -32768, 32768]
    return np.concatenate([np.array(edge, TYPES[t]), rng.integers(info.min, info.max, 4096,
                                                                  dtype=TYPES[t])])  # fmt: skip


def _want(x: np.ndarray) -> np.ndarray:
    return (-x.astype(np.int64)).astype(x.dtype).astype(np.int64)  # wraps: MIN stays MIN


def raw_sources(t: str) -> dict[str, str]:
    """name -> OpenCL C program with kernel k(const T* x, long* o)."""
    p = _params(t)
    out = {}
    for cname, cons in CONSUMERS.items():
        use = cons.format(**p)
        kern = (
            f"__kernel void k(__global const {t}* x, __global long* o) {{\n"
            f"    int i = get_global_id(0);\n    {t} r = f(x[i]);\n    o[i] = {use};\n}}\n"
        )
        for name, body in NARROW_BODY.items():
            if t == "int" and name in INT_SKIP:
                continue
            b = body.format(**p)
            fn = f"{t} f({t} a) {{\n    if (a == {p['MIN']}) return a;\n    {b}\n}}\n"
            out[f"{name} [{cname}]"] = fn + kern
        if t != "int":  # the same without the guard, and the guard inline in the kernel
            unguarded = f"{t} f({t} a) {{\n    return ({t})(-(int)a);\n}}\n"
            out[f"unguarded [{cname}]"] = unguarded + kern
        out[f"ternary [{cname}]"] = (
            f"{t} f({t} a) {{\n    return a == {p['MIN']} ? a : ({t})(0 - ({p['P']})a);\n}}\n"
            + kern
        )
        out[f"inline-guarded [{cname}]"] = (
            f"__kernel void k(__global const {t}* x, __global long* o) {{\n"
            f"    int i = get_global_id(0);\n    {t} a = x[i];\n    {t} r;\n"
            f"    if (a == {p['MIN']}) r = a; else r = ({t})(0 - ({p['P']})a);\n"
            f"    o[i] = {use};\n}}\n"
        )
    return out


def _wrong(x: np.ndarray, got: np.ndarray) -> list[str]:
    want = _want(x)
    bad = np.nonzero(got != want)[0]
    return [f"{int(x[j])} -> {int(got[j])} (want {int(want[j])})" for j in bad[:4]] + (
        [f"... {len(bad)} wrong of {len(x)}"] if len(bad) > 4 else []
    )


def raw_case(cl: Any, ctx: Any, q: Any, src: str, x: np.ndarray) -> list[str]:
    prg = cl.Program(ctx, src).build()
    mf = cl.mem_flags
    xb = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    o = np.zeros(len(x), np.int64)
    ob = cl.Buffer(ctx, mf.READ_WRITE, o.nbytes)
    prg.k(q, (len(x),), None, xb, ob)
    cl.enqueue_copy(q, o, ob)
    q.finish()
    return _wrong(x, o)


CLPY_KERNELS = """
import clpy
from clpy import Global, int8, int16, int32, int64


@clpy.func
def safe_neg_char(a: int8) -> int8:
    if a == int8(-128):
        return a
    return int8(-a)


@clpy.func
def safe_neg_short(a: int16) -> int16:
    if a == int16(-32768):
        return a
    return int16(-a)


@clpy.func
def safe_neg_int(a: int32) -> int32:
    if a == int32(-2147483648):
        return a
    return int32(-a)


@clpy.kernel
def neg_char(x: Global[int8], o: Global[int64]):
    i = clpy.get_global_id(0)
    o[i] = int64(clpy.convert_int_sat(safe_neg_char(x[i])))


@clpy.kernel
def neg_short(x: Global[int16], o: Global[int64]):
    i = clpy.get_global_id(0)
    o[i] = int64(clpy.convert_int_sat(safe_neg_short(x[i])))


@clpy.kernel
def neg_int(x: Global[int32], o: Global[int64]):
    i = clpy.get_global_id(0)
    o[i] = int64(safe_neg_int(x[i]))


@clpy.struct
class RedPair:
    hi: int32
    acc: clpy.uint32


@clpy.reduction(identity=RedPair(-2147483648, 0))
def redpair_op(a: RedPair, b: RedPair) -> RedPair:
    return RedPair(max(a.hi, b.hi), a.acc + b.acc)


@clpy.kernel
def fuzz_310677(in_short: Global[int16], out_int: Global[int32]):
    lin = clpy.get_global_linear_id()
    v4: int16 = safe_neg_short(in_short[(lin & 63)])
    r8 = clpy.work_group_scan_exclusive(RedPair(clpy.convert_int_sat(v4), clpy.uint32(0)),
                                        redpair_op)
    out_int[lin * 3 + 2] = r8.hi
"""


def _clpy_module() -> dict[str, Any]:
    """The kernels above as an imported module (clpy reads annotations from its file)."""
    import importlib.util

    folder = Path(tempfile.mkdtemp(prefix="clpy-neg-"))
    path = folder / "clpy_neg_kernels.py"
    path.write_text(CLPY_KERNELS)
    spec = importlib.util.spec_from_file_location("clpy_neg_kernels", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["clpy_neg_kernels"] = mod
    spec.loader.exec_module(mod)
    return vars(mod)


def clpy_cases(cl: Any, dev: Any) -> dict[str, list[str]]:
    import clpy
    from clpy.emit.lower_negation import SPELLINGS

    mod = _clpy_module()
    cdev = next(d for d in clpy.devices() if getattr(d, "cl_device", None) == dev)
    base = cdev.target
    out: dict[str, list[str]] = {}
    for t in TYPES:
        k = mod[f"neg_{t}"]
        x = _inputs(t)
        for spelling in SPELLINGS:
            tgt = replace(base, name=f"{base.name}-neg-{spelling}", info={
                **base.info, "lower_negation": frozenset({"char", "short", "int", "long"}),
                "negation_spelling": spelling})  # fmt: skip
            what = f"clpy {t} lowered as {spelling}"
            try:
                src = k.source_for(tgt, line_directives=False)
                assert f"clpy_neg_{t}(" in src, src
                o = np.zeros(len(x), np.int64)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    k[(len(x),), None](x, o, device=cdev.variant(target=tgt))
                out[what] = _wrong(x, o)
            except Exception as e:
                out[what] = [f"failed: {type(e).__name__}: {' '.join(str(e).split())[:300]}"]
        what = f"clpy {t} with the device's quirks"
        try:
            o = np.zeros(len(x), np.int64)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                k[(len(x),), None](x, o, device=cdev)
            out[what] = _wrong(x, o)
        except Exception as e:
            out[what] = [f"failed: {type(e).__name__}: {' '.join(str(e).split())[:300]}"]
    what = "clpy reduced fuzz kernel 310677 vs the simulator"
    try:
        rng = np.random.default_rng(310677)
        xs = rng.integers(-32768, 32768, 64, dtype=np.int16)
        xs[::7] = -32768
        res = []
        for device in (cdev, "sim"):
            o = np.zeros(3 * 192, np.int32)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                mod["fuzz_310677"][(192,), (16,)](xs.copy(), o, device=device)
            res.append(o)
        bad = np.nonzero(res[0] != res[1])[0]
        out[what] = [f"[{j}] device {res[0][j]} sim {res[1][j]}" for j in bad[:4]] + (
            [f"... {len(bad)} differ"] if len(bad) > 4 else []
        )
    except Exception as e:
        out[what] = [f"failed: {type(e).__name__}: {' '.join(str(e).split())[:300]}"]
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=None, help="write the findings as JSON here")
    p.add_argument("--platform", default="", help="only platforms whose name contains this")
    a = p.parse_args(argv)
    import pyopencl as cl

    report: dict[str, dict[str, list[str]]] = {}
    for plat in cl.get_platforms():
        if a.platform.lower() not in plat.name.lower():
            continue
        for dev in plat.get_devices():
            name = f"{plat.name}: {dev.name} (driver {dev.driver_version})"
            ctx = cl.Context([dev])
            q = cl.CommandQueue(ctx)
            report[name] = rep = {}
            for t in TYPES:
                x = _inputs(t)
                for case, src in raw_sources(t).items():
                    what = f"raw {t} {case}"
                    try:
                        rep[what] = raw_case(cl, ctx, q, src, x)
                    except Exception as e:  # a build failure is a finding too
                        rep[what] = [
                            f"failed: {type(e).__name__}: {' '.join(str(e).split())[:200]}"
                        ]
                    _show(name, what, rep[what])
            try:
                found = clpy_cases(cl, dev)
            except Exception as e:
                found = {"clpy": [f"failed: {type(e).__name__}: {' '.join(str(e).split())[:300]}"]}
            for what, wrong in found.items():
                rep[what] = wrong
                _show(name, what, wrong)
    if a.out:
        Path(a.out).write_text(json.dumps(report, indent=1))
    return 0


def _show(dev: str, what: str, wrong: list[str]) -> None:
    head = "; ".join(wrong[:5])
    print(f"{dev} | {what}: {'OK' if not wrong else 'WRONG: ' + head}")
    sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
