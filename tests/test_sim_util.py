"""Helpers shared by the simulator tests: run one kernel on the simulator and on PoCL (raw
pyopencl on the ``cl_context`` fixture, source from ``emit_program``) and compare."""

from __future__ import annotations

from typing import Any

import numpy as np

import clpy_sim as sim
from clpy.emit.program import emit_program
from clpy.ir.nodes import Function
from clpy.runtime.info import query
from clpy.runtime.quirks import device_target, fp_build_options

TARGET = "opencl-c-1.2"


def run_sim(fn: Function, gsize: tuple[int, ...], lsize: tuple[int, ...], args: list[Any],
            **cfg: Any) -> list[Any]:
    out = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with sim.config(**cfg):
        sim.launch(fn, gsize, lsize, out)
    return out


_PROGRAMS: dict[tuple[int, str], Any] = {}


def run_cl(ctx: Any, fn: Function, gsize: tuple[int, ...], lsize: tuple[int, ...],
           args: list[Any], target: Any = None) -> list[Any]:
    import pyopencl as cl

    # The emitted C says FP_CONTRACT OFF; the options are the runtime's (correctly rounded
    # float / and sqrt where the device offers them), so sim and device give the same bits.
    src = emit_program(fn, target or TARGET)
    key = (id(ctx), src)
    prg = _PROGRAMS.get(key)
    if prg is None:
        prg = cl.Program(ctx, src).build(options=" ".join(fp_options(ctx)))
        _PROGRAMS[key] = prg
    q = cl.CommandQueue(ctx)
    out = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    kargs: list[Any] = []
    bufs: list[tuple[np.ndarray, Any]] = []
    for p, a in zip(fn.params, out):
        if isinstance(a, np.ndarray):
            buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                            hostbuf=a)
            bufs.append((a, buf))
            kargs.append(buf)
        elif hasattr(a, "count"):
            kargs.append(cl.LocalMemory(a.count * p.type.elem.size))
        else:
            kargs.append(a)
    cl.Kernel(prg, fn.name)(q, gsize, lsize, *kargs)
    for a, buf in bufs:
        cl.enqueue_copy(q, a, buf)
    q.finish()
    return out


def fp_options(ctx: Any) -> tuple[str, ...]:
    """The float build options clpy's runtime passes for the context's first device."""
    dev = ctx.devices[0]
    return fp_build_options(device_target(query(dev, f"opencl:{dev.platform.name}:{dev.name}")))


def ulp_diff(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance in units of the last place of the wider of the two (NaN == NaN, inf == inf)."""
    with np.errstate(all="ignore"):
        return _ulp_diff(a, b)


def _ulp_diff(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    both_nan = np.isnan(a64) & np.isnan(b64)
    same = (a64 == b64) | both_nan
    ref = np.maximum(np.abs(a64), np.abs(b64))
    sp = np.spacing(ref.astype(a.dtype)).astype(np.float64)
    sp = np.where(sp == 0, np.finfo(a.dtype).smallest_subnormal, sp)
    d = np.abs(a64 - b64) / sp
    return np.where(same, 0.0, np.where(np.isnan(d), np.inf, d))


def assert_same(got: list[Any], want: list[Any], ulps: float = 4.0,
                names: list[str] | None = None) -> None:
    for k, (g, w) in enumerate(zip(got, want)):
        if not isinstance(g, np.ndarray):
            continue
        name = names[k] if names else f"arg {k}"
        if g.dtype.fields is not None:
            for f in g.dtype.names or ():
                assert_same([g[f]], [w[f]], ulps, [f"{name}.{f}"])
            continue
        if g.dtype.kind == "f":
            d = ulp_diff(g, w)
            worst = float(d.max()) if d.size else 0.0
            assert worst <= ulps, (f"{name}: {worst} ulp apart at {int(d.argmax())}: sim "
                                   f"{g.ravel()[int(d.argmax())]!r} vs device "
                                   f"{w.ravel()[int(d.argmax())]!r}")
        else:
            bad = np.flatnonzero(g.ravel() != w.ravel())
            assert bad.size == 0, (f"{name}: {bad.size} integer mismatches, first at "
                                   f"{int(bad[0])}: sim {g.ravel()[bad[0]]} vs device "
                                   f"{w.ravel()[bad[0]]}")


def compare(ctx: Any, kernel: Any, gsize: tuple[int, ...], lsize: tuple[int, ...],
            args: list[Any], ulps: float = 4.0, **spec: Any) -> list[Any]:
    fn = kernel.specialize(**spec).function
    got = run_sim(fn, gsize, lsize, args)
    want = run_cl(ctx, fn, gsize, lsize, args)
    assert_same(got, want, ulps, [p.name for p in fn.params])
    return got
