"""What the GPU mode records beside the timings, per program: each kernel's
``CL_KERNEL_WORK_GROUP_SIZE`` as the driver reports it for clpy's build and for the original
kernel (issue 18: a work-group size the original runs at must not be refused for clpy's), and
the device binaries of both (PTX on NVIDIA) written to ``<out>/ptx/<program>/`` for
comparison."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

from benchmarks.programs.common import BUILT


def _clpy_plans(m: ModuleType, ctx: Any) -> list[tuple[str, Any]]:
    """(kernel name, launch plan) of the module's clpy kernels built in ``ctx``."""
    out = []
    for v in vars(m).values():
        launches = getattr(v, "launches", None)
        plans = getattr(launches, "plans", None)
        if not isinstance(plans, dict):
            continue
        for plan in list(plans.values()):
            if getattr(plan, "context", None) == ctx and hasattr(plan, "source"):
                out.append((getattr(v, "__name__", plan.name), plan))
    return out


def _binary(prg: Any) -> bytes | None:
    try:
        bins = prg.binaries
        return bytes(bins[0]) if bins else None
    except Exception:
        return None


def collect(m: ModuleType, ctx: Any, device: Any, out_dir: Path | None) -> dict[str, Any]:
    """Work-group limits of clpy's and the original kernels; binaries written under out_dir."""
    import pyopencl as cl

    info: dict[str, Any] = {"clpy": {}, "original": {}}
    wg_q = cl.kernel_work_group_info.WORK_GROUP_SIZE
    regs = getattr(cl.kernel_work_group_info, "PRIVATE_MEM_SIZE", None)
    ptx_dir = None if out_dir is None else out_dir / "ptx" / m.NAME
    if ptx_dir is not None:
        ptx_dir.mkdir(parents=True, exist_ok=True)
    try:
        for name, plan in _clpy_plans(m, ctx):
            k = plan.kernel
            rec: dict[str, Any] = {"work_group_size": int(k.get_work_group_info(wg_q, device))}
            if regs is not None:
                rec["private_mem_size"] = int(k.get_work_group_info(regs, device))
            info["clpy"][name] = rec
            if ptx_dir is not None:
                (ptx_dir / f"{name}_clpy.cl").write_text(plan.source)
                b = _binary(k.get_info(cl.kernel_info.PROGRAM))  # the build that ran
                if b is not None:
                    (ptx_dir / f"{name}_clpy.bin").write_bytes(b)
        prg = BUILT.get((int(ctx.int_ptr), m.CL_FILE))
        if prg is not None:
            for k in prg.all_kernels():
                rec = {"work_group_size": int(k.get_work_group_info(wg_q, device))}
                if regs is not None:
                    rec["private_mem_size"] = int(k.get_work_group_info(regs, device))
                info["original"][k.function_name] = rec
            b = _binary(prg)
            if ptx_dir is not None and b is not None:
                (ptx_dir / f"{m.NAME}_original.bin").write_bytes(b)
    except Exception as e:  # diagnostics never stop the suite
        info["error"] = f"{type(e).__name__}: {e}"
    return info


def markdown(rows: list[dict[str, Any]]) -> list[str]:
    lines = [
        "",
        "Kernel work-group limits (CL_KERNEL_WORK_GROUP_SIZE as the driver reports it):",
        "",
        "| program | clpy kernels | original kernels |",
        "|---|---|---|",
    ]
    for r in rows:
        d = r.get("diagnostics") or {}
        c = ", ".join(f"{k} {v['work_group_size']}" for k, v in d.get("clpy", {}).items())
        o = ", ".join(f"{k} {v['work_group_size']}" for k, v in d.get("original", {}).items())
        lines.append(f"| {r['program']} | {c or '-'} | {o or '-'} |")
    return lines
