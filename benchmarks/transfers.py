"""Host<->device transfers of NumPy arguments, against the link and the host's memory (issue 18).

Measures, on one OpenCL device, in one run (median of ``--reps`` after warm-up), per size:

- the link: ``enqueue_copy`` host->device and device->host from pageable NumPy memory and from
  pinned ``ALLOC_HOST_PTR`` memory; the old per-launch path (a fresh ``Buffer(COPY_HOST_PTR)``);
- clpy launches whose NumPy arguments are copied in and out: ``touch`` reads ``x`` and writes
  ``y`` (2·size over the link), ``mix3`` reads three arrays and writes two (5·size), with NumPy
  arguments and with ``clpy.pinned_empty`` arrays; ``touch`` over 8 chunks, launch after
  launch or all enqueued at once (``wait=False``: the copy back of one chunk overlaps the
  staging of the next); the staging knobs (threads x chunk size);
- what bounds a NumPy-argument transfer: the host's memory copy rate with 1..16 threads
  (NumPy ``copyto`` pageable->pageable, pageable->pinned and pinned->pageable, the copies
  clpy's staging makes, and pinned->a new array, as ``DeviceArray.get()`` does), and the link
  both ways at once (pinned upload on one queue while a
  pinned download runs on another; a staged upload while a staged download runs);
- the split path of ``clpy/runtime/transfers.py`` (``DIRECT_SHARE``: part of each copy goes
  by the driver's own pageable path on a second queue while clpy stages the rest), for both
  launches, against the all-staged path and the unstaged one;
- DeviceArray traffic: ``to_device``, ``get``, one-element reads ``d[i]``.

    python -m benchmarks.transfers [--platform nvidia] [--mib 16,256] [--reps 20] [--out DIR]
        [--parts link,launch,sweep,host,duplex,split,resident,paths]

The measurements are in benchmarks/transfer_parts.py (one size, part by part) and
benchmarks/transfer_paths.py (the "paths" part), the kernels and staging settings they vary
in benchmarks/transfer_setup.py, the tables and notes in benchmarks/transfer_report.py.
"""

from __future__ import annotations

import argparse
import json
import os
import warnings
from pathlib import Path
from typing import Any

import clpy
from benchmarks.transfer_parts import measure_size
from benchmarks.transfer_report import bound_note, print_paths, print_table
from clpy.runtime import transfers

PARTS = ("link", "launch", "sweep", "host", "duplex", "split", "resident", "paths")


def run(
    platform: str, sizes_mib: list[int], reps: int, parts: set[str], out: Path | None = None
) -> dict[str, Any]:
    """Measure every size; with ``out``, the JSON is rewritten after each size (a run cut
    short by a time limit keeps what it measured)."""
    import pyopencl as cl

    dev = [d for p in cl.get_platforms() if platform in p.name.lower() for d in p.get_devices()][0]
    cdev = clpy.get_device(dev)
    res: dict[str, Any] = {
        "device": dev.name,
        "driver": dev.driver_version,
        "cpus": os.cpu_count(),
        "mem_base_addr_align_bytes": dev.mem_base_addr_align // 8,
        "parts": sorted(parts),
        "rows": [],
    }
    for mib in sizes_mib:
        res["rows"].append(measure_size(cl, cdev, mib << 20, reps, parts))
        print(bound_note(res["rows"][-1]), flush=True)
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
            (out / _file_name(res["device"])).write_text(json.dumps(res, indent=1))
    return res


def _file_name(device: str) -> str:
    return "transfers_" + device.split()[1 if "NVIDIA" in device else 0].lower() + ".json"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--platform", default=os.environ.get("CLPY_TEST_PLATFORM", "portable"))
    ap.add_argument("--mib", default="16,64,256")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--parts", default=",".join(PARTS), help="comma-separated: " + ",".join(PARTS))
    ap.add_argument("--out", default=os.environ.get("OUT", "benchmarks/results"))
    a = ap.parse_args()
    parts = set(a.parts.split(","))
    if parts - set(PARTS):
        ap.error(f"unknown parts {sorted(parts - set(PARTS))}; choose from {PARTS}")
    with warnings.catch_warnings():  # the repeated-upload hint is what this measures
        warnings.simplefilter("ignore", transfers.PerformanceHint)
        sizes = [int(s) for s in a.mib.split(",")]
        res = run(a.platform.lower(), sizes, a.reps, parts, Path(a.out))
    print_table(res)
    print_paths(res["rows"])


if __name__ == "__main__":
    main()
