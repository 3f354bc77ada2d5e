"""Timing, checking and writing results for the real-program suite's modes."""

from __future__ import annotations

import json
import math
import os
import platform
import re
import statistics
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from benchmarks.programs.common import Mismatch, check

RESULTS = Path(__file__).resolve().parent.parent / "results"


def slug(text: str) -> str:
    """A file-name part: lower case, runs of other characters as one underscore."""
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_") or "unknown"


def geomean(xs: list[float]) -> float | None:
    xs = [x for x in xs if x and x > 0 and math.isfinite(x)]
    if not xs:
        return None
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def timed(
    m: ModuleType,
    what: str,
    ref: Any,
    repeat: int,
    fn: Callable[[], Any],
    cap_s: float = 1e9,
    warmup: bool = True,
) -> dict[str, Any]:
    """Run ``fn`` once to warm up and check, then ``repeat`` times (each result checked),
    stopping early once the runs so far took ``cap_s``. The median and all runs, or the error.
    ``warmup=False``: the first run is also the first measurement (for runs whose kernels
    another measurement built already)."""
    try:
        t0 = time.perf_counter()
        check(m.NAME, what, fn(), ref, m.TOL)
        first = time.perf_counter() - t0
        times: list[float] = []
        if not warmup:
            times.append(first)
            repeat -= 1
        if first < cap_s:
            for _ in range(max(repeat, 0)):
                t0 = time.perf_counter()
                out = fn()
                times.append(time.perf_counter() - t0)
                check(m.NAME, what, out, ref, m.TOL)
                if sum(times) > cap_s:
                    break
        elif warmup:
            times = [first]
        return {"median_s": statistics.median(times), "runs_s": times, "warmup_s": first}
    except Mismatch as e:
        loud(f"MISMATCH {e}")
        return {"error": f"mismatch: {e}"}
    except Exception as e:  # a refused launch, a build error: recorded, the suite goes on
        loud(f"ERROR {m.NAME} [{what}]: {type(e).__name__}: {e}")
        traceback.print_exc(limit=3)
        return {"error": f"{type(e).__name__}: {e}"}


def loud(msg: str) -> None:
    bar = "!" * 78
    print(f"\n{bar}\n{msg}\n{bar}", file=sys.stderr, flush=True)


def machine() -> dict[str, Any]:
    info: dict[str, Any] = {
        "host": platform.node(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "date_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
    }
    try:
        info["loadavg_start"] = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        pass
    return info


def write(stem: str, data: dict[str, Any], markdown: str, out_dir: Path | None) -> list[Path]:
    d = out_dir or RESULTS
    d.mkdir(parents=True, exist_ok=True)
    js, md = d / f"{stem}.json", d / f"{stem}.md"
    js.write_text(json.dumps(data, indent=1) + "\n")
    md.write_text(markdown)
    return [js, md]


def fmt_s(r: dict[str, Any]) -> str:
    if "error" in r:
        return "ERROR"
    v = r["median_s"]
    return f"{v * 1e3:.1f} ms" if v < 1 else f"{v:.2f} s"


def fmt_x(v: float | None) -> str:
    return "-" if v is None else f"{v:.3g}x"


def ratio(a: dict[str, Any], b: dict[str, Any]) -> float | None:
    """a's time / b's time (None if either failed)."""
    if "error" in a or "error" in b or not b["median_s"]:
        return None
    return float(a["median_s"] / b["median_s"])
