"""``--mode sim``: each program end to end (all launches, device-resident data) on PoCL and on
the simulator with its checkers off and on; ratio = PoCL time / sim time (bigger is better)."""

from __future__ import annotations

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
) -> int:
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
