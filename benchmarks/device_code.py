"""What the driver made of a clpy kernel, for benchmarks/algorithms.py: the default scan
tile kernel's device code (PTX on NVIDIA) with counts of the instructions that matter, and
ptxas's account of a launched kernel (registers, spills, shared memory)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from clpy.algorithms import scans
from clpy.algorithms._core import resolve_op, tuning
from clpy.types import catalog as C


def ptx_report(dev: Any, out: Path) -> dict[str, Any]:
    """The default float32 scan tile kernel as the driver built it (PTX on NVIDIA) into
    out/scan_tiles.ptx, with counts of the instructions that matter (vector accesses,
    spills to local memory, barriers, atomics) and the kernel's private/local memory."""
    import pyopencl as cl

    tn = tuning(dev)
    k = scans.tile_kernel(C.float_, resolve_op("+", C.float_), C.int_, tn, True, True)
    plans = [p for p in k.launches.plans.values() if hasattr(p, "kernel")]
    if not plans:
        print("  ptx: the default scan kernel was not launched", flush=True)
        return {}
    knl = plans[0].kernel
    text = knl.program.get_info(cl.program_info.BINARIES)[0].decode(errors="replace")
    out.mkdir(parents=True, exist_ok=True)
    (out / "scan_tiles.ptx").write_text(text)
    pats = (
        "ld.global.nc.v4",
        "st.global.v4",
        "ld.global.f32",
        "st.global.f32",
        "ld.local",
        "st.local",
        "bar.sync",
        "atom.",
        "shfl",
        "ld.shared",
        "st.shared",
    )
    rep: dict[str, Any] = {p: text.count(p) for p in pats}
    info = cl.kernel_work_group_info
    for name in ("PRIVATE_MEM_SIZE", "LOCAL_MEM_SIZE"):
        try:
            rep[name] = int(knl.get_work_group_info(getattr(info, name), dev.cl_device))
        except Exception as e:  # noqa: BLE001 - a query the driver does not answer
            rep[name] = repr(e)[:80]
    rep.update(nv_build_report(dev, k, tn.scan_maxreg))
    print(f"  ptx of the default scan kernel ({tn}): {rep}", flush=True)
    return rep


def nv_build_report(dev: Any, k: Any, maxreg: int = 0) -> dict[str, Any]:
    """ptxas's account of a launched clpy kernel on NVIDIA (registers per work-item, spills,
    shared memory: they set how many groups stay resident), from a rebuild of the plan's
    source with ``-cl-nv-verbose``; {} elsewhere or when the driver says nothing."""
    if "nvidia" not in dev.name.lower():
        return {}
    import pyopencl as cl

    cap = f"-cl-nv-maxrregcount={maxreg}"
    plans = [
        p
        for p in k.launches.plans.values()
        if hasattr(p, "options") and (cap in p.options) == (maxreg > 0)
    ]
    if not plans:
        return {}
    p = plans[0]
    try:
        prg = cl.Program(dev.context, p.source).build(
            options=f"{p.options} -cl-nv-verbose", devices=[dev.cl_device]
        )
        log = prg.get_build_info(dev.cl_device, cl.program_build_info.LOG)
    except Exception as e:  # noqa: BLE001 - a diagnostic only
        return {"ptxas": f"{type(e).__name__}: {str(e)[:120]}"}
    m = re.search(r"Used (\d+) registers", log)
    return {"registers": int(m.group(1)) if m else None, "ptxas": " ".join(log.split())[-240:]}
