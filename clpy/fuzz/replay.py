"""Re-running a written reproducer: ``python DIR/seedN/kernel.py [device ...]``."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

import clpy
from clpy.fuzz.compare import differences
from clpy.fuzz.runner import Outcome


def replay(
    file: str, name: str, gsize: tuple[int, ...], lsize: tuple[int, ...], devices: list[str]
) -> None:
    """Launch kernel ``name`` of the module ``file`` on each device with the saved inputs and
    print how each differs from the first."""
    path = Path(file)
    mod = sys.modules["__main__"]
    k = getattr(mod, name)
    saved = np.load(path.with_name(f"{path.stem}_inputs.npz"))
    params = [n for n in k.param_names if n in saved]
    outs: list[Outcome] = []
    for dev in devices:
        args = [saved[n].copy() for n in params]
        o = Outcome(dev)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                target: Any = "sim" if dev.startswith("sim") else clpy.get_device(dev)
                k[gsize, lsize](*args, device=target)
            o.outputs = {n: a for n, a in zip(params, args) if not n.startswith("in_")}
        except Exception as e:
            o.error = f"{type(e).__name__}: {e}"
        outs.append(o)
        print(f"{dev}: {o.error or 'ran'}")
    ok = [o for o in outs if o.outputs is not None]
    for o in ok[1:]:
        for line in differences(ok[0], o) or [f"{o.device}: same as {ok[0].device}"]:
            print(line)
