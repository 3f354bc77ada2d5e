"""Standalone reproducers: ``DIR/<id>/`` holds ``kernel.py`` (the clpy source, runnable on
its own: ``python kernel.py`` re-runs it on the devices it failed on), the OpenCL C clpy emitted
for each device, ``inputs.npz``, ``outputs_<device>.npz`` with the printed lines, and a
``README`` line saying what differed. The shrunk kernel goes next to the original as
``reduced.py`` (with its own emitted sources and outputs)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from clpy.fuzz.runner import Loaded, Outcome, emitted_source

_RUNNER = """

if __name__ == "__main__":  # re-run: python kernel.py [device ...]
    import sys

    from clpy.fuzz.replay import replay

    replay(__file__, {name!r}, {gsize!r}, {lsize!r}, sys.argv[1:] or {devices!r})
"""


def _slug(device: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", device).strip("_")


def write_case(
    folder: Path, stem: str, loaded: Loaded, inputs: dict[str, np.ndarray], outcomes: list[Outcome]
) -> None:
    """Write one program (original or reduced) with everything needed to reproduce it."""
    folder.mkdir(parents=True, exist_ok=True)
    prog = loaded.program
    devices = [o.device for o in outcomes]
    text = loaded.text + _RUNNER.format(
        name=prog.name, gsize=prog.global_size, lsize=prog.local_size, devices=devices
    )
    (folder / f"{stem}.py").write_text(text)
    used = {p.name for p in prog.used_params()}
    _save(folder / f"{stem}_inputs.npz", {k: v for k, v in inputs.items() if k in used})
    for o in outcomes:
        slug = _slug(o.device)
        (folder / f"{stem}_{slug}.cl").write_text(emitted_source(loaded, o.device))
        if o.outputs is not None:
            _save(folder / f"{stem}_outputs_{slug}.npz", o.outputs)
        (folder / f"{stem}_{slug}.txt").write_text(
            (o.error or "ok") + "\n--- printed ---\n" + "\n".join(o.prints) + "\n"
        )


def _save(path: Path, arrays: dict[str, np.ndarray]) -> None:
    np.savez(str(path), **arrays)  # type: ignore[arg-type]


def write_readme(folder: Path, seed: int, kind: str, summary: str, meta: dict[str, object]) -> None:
    (folder / "README").write_text(f"seed {seed}: {kind}: {summary}\n")
    (folder / "case.json").write_text(json.dumps(meta, indent=1, default=str) + "\n")
