"""Edge values of the built-ins the fuzzer saw drivers get wrong, on every OpenCL device here.

    python scripts/gpu_fuzz_diag.py [--out FILE.json]

For each OpenCL device: the driver's own (raw OpenCL C) saturating conversions from float and
double at edge values (every integer destination, every rounding mode), 64-bit
integer-to-integer saturating conversions, 64-bit ``mad_sat add_sat sub_sat mul_hi mad_hi
hadd rhadd``, and ``vload16``/``vstore16`` of 64-bit lanes; then clpy's conversions (lowered
for the device where clpy/runtime/quirks.py says so) at the same values. Each is compared with
the exact result the OpenCL C 2.0 spec gives (§6.2.3.3, §6.13.3) computed in Python. Prints one
line per device and family (``N wrong``, the first few) and writes them all as JSON: the data
for the quirk table (``lower_sat_conversions``) and the fuzz triage. Run by scripts/gpu_fuzz.sh
before a campaign (DIAG=0 skips it).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import warnings
from typing import Any

import numpy as np

from clpy.fuzz.edges import EDGES, I64, INTS, ROUNDINGS, U64, limits, spec_sat


class Device:
    def __init__(self, cl: Any, dev: Any) -> None:
        self.cl = cl
        self.dev = dev
        self.ctx = cl.Context([dev])
        self.q = cl.CommandQueue(self.ctx)

    def run(
        self,
        src: str,
        ins: list[np.ndarray],
        outs: list[np.ndarray],
        n: int | tuple[int, ...],
        local: tuple[int, ...] | None = None,
        options: str = "",
    ) -> None:
        cl = self.cl
        prg = cl.Program(self.ctx, src).build(options=options)
        mf = cl.mem_flags
        bufs = [cl.Buffer(self.ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a) for a in ins]
        obufs = [cl.Buffer(self.ctx, mf.READ_WRITE, max(o.nbytes, 8)) for o in outs]
        prg.k(self.q, (n,) if isinstance(n, int) else n, local, *bufs, *obufs)
        for o, b in zip(outs, obufs):
            cl.enqueue_copy(self.q, o, b)
        self.q.finish()


def raw_float_conversions(d: Device, src: str) -> list[str]:
    dt = np.float32 if src == "float" else np.float64
    x = np.array(EDGES, dt)
    cases = [(t, r) for t in INTS for r in ROUNDINGS]
    lines = [f"__kernel void k(__global const {src}* x, __global long* s, __global ulong* u) {{",
             "    int i = get_global_id(0);"]  # fmt: skip
    for j, (t, r) in enumerate(cases):
        out = "u" if t[0] == "u" else "s"
        lines.append(f"    {out}[i * {len(cases)} + {j}] = convert_{t}_sat{r}(x[i]);")
    s = np.zeros(len(x) * len(cases), np.int64)
    u = np.zeros(len(x) * len(cases), np.uint64)
    d.run("\n".join(lines) + "\n}", [x], [s, u], len(x))
    wrong = []
    for i, xv in enumerate(x.tolist()):
        for j, (t, r) in enumerate(cases):
            got = int((u if t[0] == "u" else s)[i * len(cases) + j])
            if got != spec_sat(xv, t, r):
                wrong.append(f"convert_{t}_sat{r}(({src}){xv!r}) = {got}")
    return wrong


def raw_int64_conversions(d: Device) -> list[str]:
    pairs = [(a, b) for a in ("long", "ulong") for b in INTS if a != b]
    pairs += [(a, b) for a in INTS for b in ("long", "ulong") if a != b and a not in ("long",
              "ulong")]  # fmt: skip
    xs = {"long": np.array(I64, np.int64), "ulong": np.array(U64 + U64[:4], np.uint64)}
    for n, t in INTS.items():
        if n not in xs:
            xs[n] = np.array(I64, np.int64).astype(t)
    m = len(I64)
    names = list(INTS)
    params = ", ".join(f"__global const {n}* x{j}" for j, n in enumerate(names))
    lines = [f"__kernel void k({params}, __global long* s, __global ulong* u) {{",
             "    int i = get_global_id(0);"]  # fmt: skip
    for k, (a, b) in enumerate(pairs):
        out = "u" if b[0] == "u" else "s"
        lines.append(f"    {out}[i * {len(pairs)} + {k}] = convert_{b}_sat(x{names.index(a)}[i]);")
    s = np.zeros(m * len(pairs), np.int64)
    u = np.zeros(m * len(pairs), np.uint64)
    d.run("\n".join(lines) + "\n}", [xs[n] for n in names], [s, u], m)
    wrong = []
    for i in range(m):
        for k, (a, b) in enumerate(pairs):
            v = int(xs[a][i])
            lo, hi = limits(b)
            got = int((u if b[0] == "u" else s)[i * len(pairs) + k])
            if got != min(max(v, lo), hi):
                wrong.append(f"convert_{b}_sat(({a}){v}) = {got}")
    return wrong


def raw_int64_arith(d: Device) -> list[str]:
    wrong = []
    i32 = [-(2**31), -(2**31) + 1, -1, 0, 1, 2, 65536, 2**31 - 1, 46341]
    u32 = [0, 1, 2, 2**31, 2**32 - 1, 65536, 65537, 7]
    types = {"long": np.int64, "ulong": np.uint64, "int": np.int32, "uint": np.uint32}
    for t, vals in (("long", I64), ("ulong", U64), ("int", i32), ("uint", u32)):
        trip = list(itertools.product(vals, repeat=3))
        dt = types[t]
        a, b, c = (np.array([p[k] for p in trip], dt) for k in range(3))
        o = np.zeros(7 * len(trip), dt)
        src = (
            f"__kernel void k(__global const {t}* a, __global const {t}* b, "
            f"__global const {t}* c, __global {t}* o) {{\n    int i = get_global_id(0);\n"
            "    o[7*i] = mad_sat(a[i], b[i], c[i]); o[7*i+1] = add_sat(a[i], b[i]);\n"
            "    o[7*i+2] = sub_sat(a[i], b[i]); o[7*i+3] = mul_hi(a[i], b[i]);\n"
            "    o[7*i+4] = mad_hi(a[i], b[i], c[i]); o[7*i+5] = hadd(a[i], b[i]);\n"
            "    o[7*i+6] = rhadd(a[i], c[i]);\n}"
        )
        d.run(src, [a, b, c], [o], len(trip))
        bits = np.dtype(dt).itemsize * 8
        signed = t in ("long", "int")
        lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2**bits - 1)

        def wrap(v: int, signed: bool = signed, bits: int = bits) -> int:
            v %= 2**bits
            return v - 2**bits if signed and v >= 2 ** (bits - 1) else v

        for i, (x, y, z) in enumerate(trip):
            want = [min(max(x * y + z, lo), hi), min(max(x + y, lo), hi),
                    min(max(x - y, lo), hi), (x * y) >> bits, wrap(((x * y) >> bits) + z),
                    (x + y) >> 1, (x + z + 1) >> 1]  # fmt: skip
            names = ("mad_sat", "add_sat", "sub_sat", "mul_hi", "mad_hi", "hadd", "rhadd")
            for j, (w, g) in enumerate(zip(want, o[7 * i : 7 * i + 7].tolist())):
                if w != int(g):
                    wrong.append(f"{names[j]}(({t}){x}, {y}, {z}) = {int(g)} (spec {w})")
    return wrong


def raw_uniform_reduce(d: Device) -> list[str]:
    """work_group_reduce_add of a work-group-uniform value (NVIDIA: seeds 200528, 200801,
    201639), native: built with -cl-std=CL2.0 (a driver without the collectives fails)."""
    wrong = []
    src = (
        "__kernel void k(__global long* o, __global ulong* u, __global int* w) {\n"
        "    size_t g = get_global_linear_id();\n"
        "    o[g] = work_group_reduce_add((long)-512);\n"
        "    u[g] = work_group_reduce_add((ulong)2);\n"
        "    w[g] = work_group_reduce_add(-512);\n}"
    )
    for gsize, lsize in (((2,), (1,)), ((7,), (7,)), ((15,), (15,)), ((6, 5), (3, 5))):
        n, group = int(np.prod(gsize)), int(np.prod(lsize))
        outs = [np.zeros(n, np.int64), np.zeros(n, np.uint64), np.zeros(n, np.int32)]
        d.run(src, [], outs, gsize, lsize, "-cl-std=CL2.0")
        for name, o, v in zip(("long", "ulong", "int"), outs, (-512, 2, -512)):
            bad = [int(x) for x in o if int(x) != v * group]
            if bad:
                wrong.append(
                    f"work_group_reduce_add(({name}){v}) over {lsize}: {bad[0]} (spec {v * group})"
                )
    return wrong


def raw_vload16(d: Device) -> list[str]:
    """vload16/vstore16 of 64-bit lanes, 1-d and in 2-d groups of (4, 2): the GPU host's PoCL
    (cpu-skylake-avx512) returned garbage in lanes 12-15 of a long16 loaded this way (seed
    100245, sim vs PoCL on the H100 host)."""
    wrong = []
    for t, dt in (("long", np.int64), ("ulong", np.uint64), ("double", np.float64)):
        x = (np.arange(64) * 0x0101010101 + 7).astype(dt)
        for gsize, lsize in (((64,), None), ((8, 8), (4, 2))):
            o = np.zeros(64 * 16, dt)
            src = (
                f"__kernel void k(__global const {t}* x, __global {t}* o) {{\n"
                "    int i = (int)(get_global_id(1) * get_global_size(0) + get_global_id(0));\n"
                f"    {t}16 v = vload16(i & 3, x);\n"
                "    vstore16(v, 0, o + i * 16);\n}"
            )
            d.run(src, [x], [o], gsize, lsize)
            want = np.concatenate([x[16 * (i & 3) : 16 * (i & 3) + 16] for i in range(64)])
            bad = np.flatnonzero(o.view(np.uint64) != want.view(np.uint64))
            if len(bad):
                lanes = sorted(set((bad % 16).tolist()))
                wrong.append(f"vload16/vstore16 of {t} ({gsize}, {lsize}): {len(bad)} of "
                             f"{o.size} lanes wrong, lanes {lanes}")  # fmt: skip
    return wrong


def clpy_conversions(dev: Any, src: str) -> list[str]:
    """The same float edge values through clpy (its target for the device, quirks applied)."""
    import tempfile
    from pathlib import Path

    t = "float32" if src == "float" else "float64"
    cases = [(d, r) for d in INTS for r in ROUNDINGS]
    lines = ["import clpy", "from clpy import Global, float32, float64, int64, uint64", "",
             "@clpy.kernel", f"def conv(x: Global[{t}], s: Global[int64], u: Global[uint64]):",
             "    i = clpy.get_global_id(0)"]  # fmt: skip
    for j, (d, r) in enumerate(cases):
        out, wide = ("u", "uint64") if d[0] == "u" else ("s", "int64")
        lines.append(f"    {out}[i * {len(cases)} + {j}] = {wide}(clpy.convert_{d}_sat{r}(x[i]))")
    folder = Path(tempfile.mkdtemp(prefix="clpy-diag-"))
    path = folder / f"diag_{src}.py"
    path.write_text("\n".join(lines) + "\n")
    mod: dict[str, Any] = {"__name__": f"clpy_diag_{src}"}
    exec(compile(path.read_text(), str(path), "exec"), mod)
    x = np.array(EDGES, t)
    s = np.zeros(len(x) * len(cases), np.int64)
    u = np.zeros(len(x) * len(cases), np.uint64)
    import pyopencl as cl

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mod["conv"][(len(x),), (1,)](x, s, u, device=cl.Context([dev]))
    wrong = []
    for i, xv in enumerate(x.tolist()):
        for j, (d, r) in enumerate(cases):
            got = int((u if d[0] == "u" else s)[i * len(cases) + j])
            if got != spec_sat(xv, d, r):
                wrong.append(f"clpy.convert_{d}_sat{r}(({src}){xv!r}) = {got}")
    return wrong


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=None, help="write the findings as JSON here")
    a = p.parse_args(argv)
    import pyopencl as cl

    report: dict[str, dict[str, list[str]]] = {}
    for plat in cl.get_platforms():
        for dev in plat.get_devices():
            name = f"{plat.name}: {dev.name}"
            d = Device(cl, dev)
            fp64 = "cl_khr_fp64" in dev.extensions
            checks: list[tuple[str, Any, tuple[Any, ...]]] = [
                ("raw float->int sat", raw_float_conversions, (d, "float")),
                ("raw double->int sat", raw_float_conversions, (d, "double")),
                ("raw 64-bit int->int sat", raw_int64_conversions, (d,)),
                ("raw mad_sat/add_sat/mul_hi/... (int, long)", raw_int64_arith, (d,)),
                ("raw work_group_reduce_add of a uniform value", raw_uniform_reduce, (d,)),
                ("raw vload16/vstore16 64-bit", raw_vload16, (d,)),
                ("clpy float->int sat", clpy_conversions, (dev, "float")),
                ("clpy double->int sat", clpy_conversions, (dev, "double")),
            ]
            report[name] = {}
            for what, fn, args in checks:
                if "double" in what and not fp64:
                    continue
                try:
                    wrong = fn(*args)
                except Exception as e:  # a build failure is a finding too
                    wrong = [f"failed: {type(e).__name__}: {' '.join(str(e).split())[:200]}"]
                report[name][what] = wrong
                head = "; ".join(wrong[:4])
                print(f"{name} | {what}: {len(wrong)} wrong{': ' + head if wrong else ''}")
                sys.stdout.flush()
    if a.out:
        with open(a.out, "w") as f:
            json.dump(report, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
