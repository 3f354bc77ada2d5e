"""``--mode sim``: each program end to end (all launches, device-resident data) on PoCL and on
the simulator with its checkers off and on; ratio = PoCL time / sim time (bigger is better)."""

from __future__ import annotations

import functools
import inspect
import os
import time
from pathlib import Path
from typing import Any

import clpy
from benchmarks.programs import load
from benchmarks.programs.report import (
    fmt_s,
    fmt_x,
    geomean,
    loud,
    machine,
    ratio,
    slug,
    timed,
    write,
)


def threads_setting(threads: str | None) -> int | None:
    """``--threads``: None (the simulator's default), an int, or ``all`` (every core); passed
    to ``clpy.sim.config(threads=...)`` where that setting exists."""
    if threads is None:
        return None
    n = (os.cpu_count() or 1) if threads == "all" else int(threads)
    if "threads" not in inspect.signature(clpy.sim.config).parameters:
        loud(f"clpy.sim.config has no threads= setting; --threads {threads} ignored")
        return None
    return n


def run(
    names: list[str],
    size: str,
    repeat: int,
    pocl: str,
    threads: str | None,
    seed: int,
    out_dir: Path | None,
    tag: str | None,
    engine: str = "default",
) -> int:
    if engine == "compare":
        return run_compare(names, size, repeat, pocl, threads_setting(threads), seed, out_dir)
    nthreads = threads_setting(threads)
    cfg_extra: dict[str, Any] = {} if nthreads is None else {"threads": nthreads}
    dev = str(clpy.get_device(pocl))
    info = machine()
    info.update(device=dev, size=size, repeat=repeat, sim_threads=nthreads)
    rows = []
    failed = False
    for name in names:
        r = _one(name, size, repeat, dev, seed, cfg_extra)
        failed |= any("error" in r[k] for k in ("pocl", "sim", "sim_checks"))
        rows.append(r)
        _write(info, rows, out_dir, tag, final=False)
    _write(info, rows, out_dir, tag, final=True)
    return 1 if failed else 0


def _write(
    info: dict[str, Any],
    rows: list[dict[str, Any]],
    out_dir: Path | None,
    tag: str | None,
    final: bool,
) -> None:
    """Write the results so far (after each program, so a run cut short keeps them)."""
    try:
        info["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        pass
    g = geomean([r["ratio"] for r in rows])
    gc = geomean([r["ratio_checks"] for r in rows])
    data = {"machine": info, "programs": rows, "geomean": g, "geomean_checks": gc}
    md = _markdown(info, rows, g, gc)
    stem = f"real_programs_{slug(tag or info['host'])}"
    paths = write(stem, data, md, out_dir)
    if final:
        print("\n" + md)
        for p in paths:
            print(f"wrote {p}")


def _one(
    name: str, size: str, repeat: int, dev: str, seed: int, cfg_extra: dict[str, Any]
) -> dict[str, Any]:
    m = load(name)
    inp = m.make_inputs(size, seed)
    ref = m.numpy_reference(inp)
    t0 = time.perf_counter()
    r: dict[str, Any] = {"program": name, "origin": m.ORIGIN, "kind": m.KIND}
    r["pocl"] = timed(m, "PoCL", ref, repeat, lambda: m.run_clpy(inp, dev, resident=True))
    with clpy.sim.config(checks=False, **cfg_extra):
        r["sim"] = timed(m, "sim", ref, repeat, lambda: m.run_clpy(inp, "sim", resident=True))
    with clpy.sim.config(checks=True, **cfg_extra):
        r["sim_checks"] = timed(
            m, "sim+checks", ref, repeat, lambda: m.run_clpy(inp, "sim", resident=True)
        )
    r["ratio"] = ratio(r["pocl"], r["sim"])
    r["ratio_checks"] = ratio(r["pocl"], r["sim_checks"])
    print(
        f"{name:12s} PoCL {fmt_s(r['pocl']):>9s}  sim {fmt_s(r['sim']):>9s} "
        f"({fmt_x(r['ratio'])})  sim+checks {fmt_s(r['sim_checks']):>9s} "
        f"({fmt_x(r['ratio_checks'])})  [{time.perf_counter() - t0:.0f} s]",
        flush=True,
    )
    return r


def _markdown(info: dict[str, Any], rows: list[dict[str, Any]], g: Any, gc: Any) -> str:
    lines = [
        "# Real programs: simulator vs PoCL",
        "",
        f"Host {info['host']} ({info['machine']}, {info['cpus']} CPUs), {info['date_utc']} UTC; "
        f"PoCL device: {info['device']}; size `{info['size']}`; median of {info['repeat']} runs "
        f"after a checked warm-up; simulator threads: {info['sim_threads'] or 'default'}; "
        f"load average at start {info.get('loadavg_start')}, end {info.get('loadavg_end')}.",
        "Whole program (every launch, data kept in `clpy.DeviceArray`s, one read-back). "
        "Ratio = PoCL time / simulator time (bigger is better).",
        "",
        "| program | kind | PoCL | sim | sim, all checks | ratio | ratio, checks |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['program']} | {r['kind']} | {fmt_s(r['pocl'])} | {fmt_s(r['sim'])} | "
            f"{fmt_s(r['sim_checks'])} | {fmt_x(r['ratio'])} | {fmt_x(r['ratio_checks'])} |"
        )
    lines.append(f"| **geomean** | | | | | **{fmt_x(g)}** | **{fmt_x(gc)}** |")
    lines.append("")
    lines.append("Sources:")
    for r in rows:
        lines.append(f"- {r['program']}: {r['origin']}")
    return "\n".join(lines) + "\n"


def _arrays(out: Any) -> list[Any]:
    import numpy as np

    if isinstance(out, dict):
        return [np.asarray(v) for _, v in sorted(out.items())]
    if isinstance(out, (list, tuple)):
        return [np.asarray(v) for v in out]
    return [np.asarray(out)]


def run_compare(
    names: list[str],
    size: str,
    repeat: int,
    pocl: str,
    nthreads: int | None,
    seed: int,
    out_dir: Path | None,
) -> int:
    """``--engine compare``: PoCL, the NumPy engine and the native engine (checks off), each
    program's outputs compared byte for byte between the engines; ratio = PoCL / engine."""
    extra: dict[str, Any] = {} if nthreads is None else {"threads": nthreads}
    dev = str(clpy.get_device(pocl))
    info = machine()
    info.update(device=dev, size=size, repeat=repeat, sim_threads=nthreads)
    rows = []
    failed = False
    from clpy_sim.native.runner import why_not

    for name in names:
        m = load(name)
        inp = m.make_inputs(size, seed)
        ref = m.numpy_reference(inp)
        r: dict[str, Any] = {"program": name, "kind": m.KIND}
        pocl_run = functools.partial(m.run_clpy, inp, dev, resident=True)
        r["pocl"] = timed(m, "PoCL", ref, repeat, pocl_run)
        sim_run = functools.partial(m.run_clpy, inp, "sim", resident=True)
        outs = {}
        # the native column is engine="auto": a kernel the native engine does not take on
        # this machine (e.g. exp where NumPy's float64 loop is not the C library's) runs on
        # NumPy, and is listed under the table
        for eng in ("numpy", "native"):
            with clpy.sim.config(checks=False, engine="auto" if eng == "native" else eng, **extra):
                outs[eng] = _arrays(sim_run())
                r[eng] = timed(m, eng, ref, repeat, sim_run)
        r["same"] = all(a.tobytes() == b.tobytes() for a, b in zip(outs["numpy"], outs["native"]))
        r["fallback"] = sorted(
            f"{k}: {why_not(v)}"
            for k, v in vars(m).items()
            if type(v).__name__ == "Kernel" and why_not(v) is not None
        )
        r["ratio_numpy"] = ratio(r["pocl"], r["numpy"])
        r["ratio_native"] = ratio(r["pocl"], r["native"])
        failed |= not r["same"] or any("error" in r[k] for k in ("pocl", "numpy", "native"))
        print(
            f"{name:12s} PoCL {fmt_s(r['pocl']):>9s}  numpy {fmt_s(r['numpy']):>9s} "
            f"({fmt_x(r['ratio_numpy'])})  native {fmt_s(r['native']):>9s} "
            f"({fmt_x(r['ratio_native'])})  same={r['same']}",
            flush=True,
        )
        rows.append(r)
    g_np = geomean([r["ratio_numpy"] for r in rows])
    g_nat = geomean([r["ratio_native"] for r in rows])
    lines = [
        "# Real programs: the simulator's NumPy and native engines vs PoCL (checks off)",
        "",
        f"Host {info['host']} ({info['machine']}, {info['cpus']} CPUs), {info['date_utc']} UTC; "
        f"PoCL device: {info['device']}; size `{size}`; median of {repeat} runs after a "
        f"warm-up (which compiles); simulator threads: {nthreads or 'default'}; load average "
        f"at start {info.get('loadavg_start')}.",
        "Whole program (every launch, data kept in `clpy.DeviceArray`s, one read-back), every "
        "checker off. Ratio = PoCL time / simulator time (bigger is better). `same`: the two "
        "engines' outputs are byte-identical.",
        "",
        "| program | PoCL | NumPy engine | native engine | ratio NumPy | ratio native | same |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['program']} | {fmt_s(r['pocl'])} | {fmt_s(r['numpy'])} | "
            f"{fmt_s(r['native'])} | {fmt_x(r['ratio_numpy'])} | {fmt_x(r['ratio_native'])} | "
            f"{'yes' if r['same'] else 'NO'} |"
        )
    lines.append(f"| **geomean** | | | | **{fmt_x(g_np)}** | **{fmt_x(g_nat)}** | |")
    fb = [f"- {r['program']}: {x}" for r in rows for x in r["fallback"]]
    lines += ["", "Kernels run on the NumPy engine under engine='auto':", *(fb or ["- none"])]
    md = "\n".join(lines) + "\n"
    data = {"machine": info, "programs": rows, "geomean_numpy": g_np, "geomean_native": g_nat}
    paths = write("real_programs_native_vm", data, md, out_dir)
    print("\n" + md)
    for p in paths:
        print(f"wrote {p}")
    return 1 if failed else 0
