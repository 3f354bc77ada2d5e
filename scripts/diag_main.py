"""The command line the scripts/gpu_*_diag.py case runners share: pick the platform, run every
case on each of its devices, write the results as JSON, print a count (by spelling, the first
``depth`` parts of a case's ``a/b/c`` label, when asked)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any


def diag_main(doc: str, run_device: Callable[[Any], list[dict[str, Any]]], depth: int = 0) -> int:
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--platform", default="", help="substring of the platform name")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    import pyopencl as cl

    results: list[dict[str, Any]] = []
    for plat in cl.get_platforms():
        if a.platform.lower() not in plat.name.lower():
            continue
        for dev in plat.get_devices():
            results += run_device(dev)
    if a.out:  # one case per line
        a.out.write_text("[\n" + ",\n".join(json.dumps(r) for r in results) + "\n]\n")
    wrong = [r for r in results if r.get("wrong") or r.get("error")]
    line = f"{len(results)} cases, {len(wrong)} wrong or failed"
    if depth:
        by: dict[str, int] = {}
        for r in wrong:
            key = "/".join(r["case"].split("/")[:depth])
            by[key] = by.get(key, 0) + 1
        line += f"; by spelling: {by}"
    print(line)
    return 0
