"""One fuzzing step: generate the program of a seed, run it on every device, compare, and for
a failure shrink it and write the reproducers. ``check(seed, ...)`` is what the command line
runs for each kernel (in worker processes with ``--jobs``)."""

from __future__ import annotations

import shutil
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import clpy
from clpy.fuzz import features as F
from clpy.fuzz.compare import differences
from clpy.fuzz.crash import shrink_crash
from clpy.fuzz.generator import generate
from clpy.fuzz.limits import unsupported_on
from clpy.fuzz.mutants import MUTANTS
from clpy.fuzz.nodes import Program
from clpy.fuzz.report import write_case, write_readme
from clpy.fuzz.runner import Loaded, Outcome, load, make_inputs, run_on
from clpy.fuzz.shrink import Shrinker

# Device bugs the fuzzer found and tests/test_fuzz_*.py document, that clpy does not
# avoid: not generated for these devices, so large runs look for new ones. (NaN in saturating
# conversions, F.NAN_SAT, and in rounding functions, F.NAN_ROUND, are generated everywhere: clpy
# spells those out for the devices that get them wrong, clpy/emit/lower_convert.py, lower_nan.py;
# so is a barrier after a divergent loop, F.LOOP_BARRIER: clpy declares the loop's variables
# volatile for PoCL, clpy/emit/lower_uniform.py loop_barrier_vars; and abs/abs_diff of a signed
# INT_MIN, F.SIGNED_ABS: clpy computes them in the unsigned type there, clpy/emit/lower_abs.py.)
KNOWN_POCL_BUGS: frozenset[str] = frozenset()
# Device failures that are the device's own and that clpy does not avoid, by device name and
# the first line of the error: such a kernel counts as "known" (not an error) when every other
# device ran it and they agree. Oclgrind 21.10 dies creating a kernel whose optimized IR holds
# an integer constant of 3 bytes ("OCLGRIND FATAL ERROR ... Unsupported constant int size: 3
# bytes" on stderr, then INVALID_KERNEL_NAME; seed 500255: a struct {float; uchar; short}
# whose uchar fills lanes of a uchar16 in a loop and whose short is updated after a call;
# tests/test_fuzz_oclgrind.py has the raw OpenCL C). It is an interpreter limitation in
# valid LLVM IR, so no lowering.
KNOWN_DEVICE_ERRORS: dict[str, tuple[str, ...]] = {
    "oclgrind": ("clCreateKernel failed: INVALID_KERNEL_NAME",),
}


@dataclass
class Result:
    """``status``: ``ok``, ``mismatch``, ``error`` or ``known`` (only a device bug listed in
    ``KNOWN_DEVICE_ERRORS`` failed); ``summary`` the first difference or
    error line; ``folder`` where the reproducer went (with ``--out``)."""

    seed: int
    status: str
    summary: str = ""
    seconds: float = 0.0
    folder: str | None = None
    reduced_lines: int | None = None
    details: list[str] = field(default_factory=list)


def device_features(devices: list[str], wanted: frozenset[str]) -> frozenset[str]:
    """Drop what some listed device cannot compare exactly: float ``/`` and ``sqrt`` without
    CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT, doubles without fp64."""
    out = set(wanted)
    for name in devices:
        if name.startswith("sim"):
            continue
        tgt = clpy.get_device(name).target
        assert tgt is not None
        if not tgt.info.get("correctly_rounded_divide_sqrt"):
            out.discard(F.FDIV)
        if not tgt.has("__opencl_c_fp64") and "cl_khr_fp64" not in tgt.extensions:
            out.discard(F.DOUBLE)
        if "portable computing language" in str(clpy.get_device(name)).lower():
            out -= KNOWN_POCL_BUGS
    return frozenset(out)


def device_limits(devices: list[str]) -> frozenset[str]:
    """The collective constructs some listed OpenCL device's target cannot emit (probed on
    its clpy target, clpy.fuzz.limits): the generator leaves them out."""
    targets = []
    for name in devices:
        if name.startswith("sim"):
            continue
        tgt = clpy.get_device(name).target
        assert tgt is not None
        targets.append(tgt)
    return unsupported_on(targets)


def _sub_group_size(loaded: Loaded, device: str) -> int | None:
    """The simulator's sub-group size that matches ``device`` for this launch."""
    if "sub_group" not in loaded.text or device.startswith("sim"):
        return None
    size, _ = loaded.kernel.sub_group_info(device, loaded.program.local_size)
    return int(size)


def run_all(
    loaded: Loaded,
    devices: list[str],
    inputs: dict[str, Any],
    fakes: dict[str, Loaded] | None = None,
) -> tuple[list[Outcome], list[tuple[Outcome, Outcome]]]:
    """Outcomes on every device, and the (reference, other) pairs to compare: the simulator
    (run with each OpenCL device's sub-group size) against each device, or the first device
    against the others when the simulator is not listed."""
    outs: list[Outcome] = []
    pairs: list[tuple[Outcome, Outcome]] = []
    sims: dict[int | None, Outcome] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cl = [d for d in devices if d != "sim"]
        for d in cl:
            outs.append(run_on((fakes or {}).get(d, loaded), d, inputs))
        if "sim" in devices:
            sizes = [_safe_sg(loaded, d) for d in cl] or [None]
            for sg in dict.fromkeys(sizes):
                cfg = {"checks": True} if sg is None else {"checks": True, "sub_group_size": sg}
                o = run_on(loaded, "sim", inputs, cfg)
                if sg is not None and len(set(sizes)) > 1:
                    o.device = f"sim(sub_group_size={sg})"
                sims[sg] = o
            outs[:0] = list(sims.values())
            pairs = [(sims[sg], o) for sg, o in zip(sizes, outs[len(sims) :])]
        elif outs:
            pairs = [(outs[0], o) for o in outs[1:]]
    return outs, pairs


def _safe_sg(loaded: Loaded, device: str) -> int | None:
    try:
        return _sub_group_size(loaded, device)
    except Exception:
        return None


def known_error(o: Outcome) -> bool:
    """``o`` failed in a way KNOWN_DEVICE_ERRORS lists for its device."""
    if not o.error:
        return False
    first = o.error.splitlines()[0]
    return any(
        dev in o.device.lower() and any(m in first for m in marks)
        for dev, marks in KNOWN_DEVICE_ERRORS.items()
    )


def verdict(outs: list[Outcome], pairs: list[tuple[Outcome, Outcome]]) -> tuple[str, list[str]]:
    """``ok``, ``mismatch``, ``error``, or ``known``: only a listed device bug failed, and the
    devices that ran agree."""
    known = [f"{o.device}: {(o.error or '').splitlines()[0]}" for o in outs if known_error(o)]
    errs = [f"{o.device}: {o.error.splitlines()[0]}" for o in outs if o.error]
    if len(errs) > len(known):
        return "error", errs
    diffs = [d for a, b in pairs if not (a.error or b.error) for d in differences(a, b)]
    if diffs:
        return "mismatch", diffs
    return ("known", known) if known else ("ok", [])


def signature(status: str, outs: list[Outcome]) -> tuple[str, ...]:
    """What "still failing the same way" means for the shrinker."""
    if status == "error":
        return ("error",) + tuple(f"{o.device}:{o.error.split(':', 1)[0]}" for o in outs if o.error)
    return (status,)


def evaluate(
    program: Program,
    devices: list[str],
    seed: int,
    workdir: Path,
    fakes: dict[str, Callable[[str], str]] | None = None,
) -> tuple[str, list[str], Loaded | None, Any, list[Outcome]]:
    """Run ``program`` everywhere. ``fakes``: devices (named ``"sim:<anything>"``) that are
    the simulator running a transformed source, a deliberately wrong device for tests."""
    try:
        loaded = load(program, workdir)
        fake_loaded = {d: load(program, workdir, f) for d, f in (fakes or {}).items()}
    except Exception as e:
        return "error", [f"load: {type(e).__name__}: {e}"], None, None, []
    inputs = make_inputs(loaded, seed)
    outs, pairs = run_all(loaded, devices, inputs, fake_loaded)
    status, details = verdict(outs, pairs)
    return status, details, loaded, inputs, outs


def check(
    seed: int,
    devices: list[str],
    features: frozenset[str],
    out_dir: str | None = None,
    shrink: bool = True,
    shrink_budget_s: float = 300.0,
    fakes: dict[str, Callable[[str], str]] | None = None,
    avoid: frozenset[str] | None = None,
) -> Result:
    """Generate, run, compare one kernel; on failure shrink it and write the reproducer.
    ``avoid``: constructs not to generate (default: what some device cannot emit,
    ``device_limits``)."""
    t0 = time.perf_counter()
    if fakes is None:
        fakes = {d: MUTANTS[d] for d in devices if d in MUTANTS}
    if avoid is None:
        avoid = device_limits(devices)
    work = Path(tempfile.mkdtemp(prefix=f"clpy-fuzz-{seed}-"))
    try:
        program = generate(seed, features, avoid)
        status, details, loaded, inputs, outs = evaluate(program, devices, seed, work, fakes)
        res = Result(seed, status, details[0] if details else "", details=details)
        if status not in ("ok", "known") and out_dir is not None and loaded is not None:
            folder = Path(out_dir) / f"seed{seed}"
            write_case(folder, "kernel", loaded, inputs, outs)
            res.folder = str(folder)
            if shrink:
                want = signature(status, outs)

                def still(p: Program) -> bool:
                    st, _, _, _, o = evaluate(p, devices, seed, work, fakes)
                    return st != "ok" and signature(st, o) == want

                small = Shrinker(still, budget_s=shrink_budget_s).shrink(program)
                st, det, sl, sin, souts = evaluate(small, devices, seed, work, fakes)
                if sl is not None:
                    write_case(folder, "reduced", sl, sin, souts)
                    res.reduced_lines = sl.text.count("\n") + 1
            write_readme(
                folder,
                seed,
                status,
                res.summary,
                {
                    "seed": seed,
                    "devices": devices,
                    "features": sorted(features),
                    "avoided": sorted(avoid),
                    "status": status,
                    "details": details,
                    "global_size": program.global_size,
                    "local_size": program.local_size,
                    "reduced_lines": res.reduced_lines,
                },
            )
        res.seconds = time.perf_counter() - t0
        return res
    finally:
        shutil.rmtree(work, ignore_errors=True)


def write_crash(
    seed: int,
    devices: list[str],
    features: frozenset[str],
    out_dir: str,
    avoid: frozenset[str],
    shrink_budget_s: float = 0.0,
) -> str | None:
    """The reproducer of a kernel whose worker process died (twice), written from the parent:
    the program, its inputs and the OpenCL C per device (``python kernel.py <device>`` in the
    folder shows which device dies), and with a budget ``reduced.py``, shrunk by running each
    candidate in a child process (clpy.fuzz.crash)."""
    work = Path(tempfile.mkdtemp(prefix=f"clpy-fuzz-{seed}-"))
    try:
        program = generate(seed, features, avoid)
        loaded = load(program, work)
        folder = Path(out_dir) / f"seed{seed}"
        outs = [Outcome(d, error="the worker process died") for d in devices]
        write_case(folder, "kernel", loaded, make_inputs(loaded, seed), outs)
        if shrink_budget_s > 0:
            small = load(shrink_crash(program, seed, devices, shrink_budget_s), work)
            write_case(folder, "reduced", small, make_inputs(small, seed), outs)
        meta = {"seed": seed, "devices": devices, "features": sorted(features),
                "avoided": sorted(avoid), "status": "error",
                "global_size": program.global_size, "local_size": program.local_size}  # fmt: skip
        write_readme(folder, seed, "error", "the worker process died running this kernel", meta)
        return str(folder)
    except Exception:  # the reproducer is a courtesy: never let it end the run
        return None
    finally:
        shutil.rmtree(work, ignore_errors=True)
