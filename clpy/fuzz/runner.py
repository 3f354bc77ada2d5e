"""Running one generated program on the simulator and on OpenCL devices.

The program's source is written to a module file and executed, so clpy's frontend reads it
like any user kernel (``inspect``/``linecache``: clpy/frontend/source.py). Each device gets
copies of the same random inputs; outputs are the arrays the kernel wrote, the atomic
counters and the printed lines.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
import time
import traceback
import types
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import clpy
from clpy.fuzz.nodes import Program
from clpy.fuzz.types import SCALARS, random_values


@dataclass
class Outcome:
    """What one device did with one program: outputs by parameter name (``None`` after an
    error), the printed lines, the error text, the OpenCL C the device got."""

    device: str
    outputs: dict[str, np.ndarray] | None = None
    prints: list[str] = field(default_factory=list)
    error: str | None = None
    source: str | None = None


@dataclass
class Loaded:
    program: Program
    text: str
    path: Path
    module: dict[str, Any]

    @property
    def kernel(self) -> Any:
        return self.module[self.program.name]


_COUNTER = [0]


def load(
    program: Program, directory: Path, transform: Callable[[str], str] | None = None
) -> Loaded:
    """Write the program's module to a fresh file under ``directory`` and execute it."""
    text = program.render()
    if transform is not None:
        text = transform(text)
    _COUNTER[0] += 1
    path = directory / f"{program.name}_{os.getpid()}_{_COUNTER[0]}.py"
    path.write_text(text)
    # A real module: @clpy.struct resolves its annotations through sys.modules[__module__].
    mod = types.ModuleType(f"clpy_fuzz_{path.stem}")
    mod.__file__ = str(path)
    sys.modules[mod.__name__] = mod
    try:
        exec(compile(text, str(path), "exec"), mod.__dict__)
    finally:
        sys.modules.pop(mod.__name__, None)
    return Loaded(program, text, path, mod.__dict__)


def make_inputs(loaded: Loaded, seed: int) -> dict[str, np.ndarray]:
    """Arguments by parameter name: random inputs, zeroed outputs and counters."""
    program = loaded.program
    rng = np.random.default_rng([seed, zlib.crc32(b"inputs")])
    args: dict[str, np.ndarray] = {}
    for p in program.params:
        if p.role == "in" and p.dtype_key in SCALARS:
            args[p.name] = random_values(rng, SCALARS[p.dtype_key], p.length)
        elif p.role == "in":
            args[p.name] = _random_records(rng, loaded.module[p.dtype_key].dtype, p.length)
        elif p.role == "out":
            args[p.name] = np.zeros(p.length * program.items, SCALARS[p.dtype_key].dtype)
        else:  # atomic counters: start from values that make min/max/and/or meaningful
            dt = SCALARS[p.dtype_key].dtype
            start = [0, 0, 2**30, -(2**30), -1, 0, 0x5A5A5A5A, 0]
            args[p.name] = np.array(start[: p.length], np.int64).astype(dt)
    return args


def _random_records(rng: np.random.Generator, dt: np.dtype, n: int) -> np.ndarray:
    arr = np.zeros(n, dt)
    assert dt.names is not None and dt.fields is not None
    for name in dt.names:
        ft = next(t for t in SCALARS.values() if t.dtype == dt.fields[name][0])
        arr[name] = random_values(rng, ft, n)
    return arr


_MARK = "@@clpy-fuzz-mark"
_MARKERS: dict[int, Any] = {}


def _marker(dev: Any) -> Any:
    """A one-line kernel that prints ``_MARK``: drivers write printf output when they get to
    it (PoCL after the command completes, from its own thread), so the capture lasts until
    this kernel's line, queued behind the fuzzed one, has come out."""
    import pyopencl as cl

    k = _MARKERS.get(id(dev))
    if k is None:
        src = f'__kernel void clpy_fuzz_mark(int t) {{ printf("{_MARK} %d\\n", t); }}'
        k = cl.Kernel(cl.Program(dev.context, src).build(), "clpy_fuzz_mark")
        _MARKERS[id(dev)] = k
    return k


@contextlib.contextmanager
def _capture_fd1(dev: Any) -> Iterator[list[str]]:
    """The text a driver's printf writes to file descriptor 1 (C stdio, not sys.stdout)."""
    import numpy as _np

    lines: list[str] = []
    sys.stdout.flush()
    saved = os.dup(1)
    token = _COUNTER[0]
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 1)
        try:
            yield lines
            _marker(dev)(dev.queue, (1,), (1,), _np.int32(token))
            dev.queue.finish()
            want = f"{_MARK} {token}".encode()
            deadline = time.monotonic() + 20.0
            while time.monotonic() < deadline:
                tmp.seek(0)
                if want in tmp.read():
                    break
                time.sleep(0.005)
        finally:
            os.dup2(saved, 1)
            os.close(saved)
            tmp.seek(0)
            text = tmp.read().decode(errors="replace")
            lines.extend(x for x in text.splitlines() if not x.startswith(_MARK))


def run_on(
    loaded: Loaded,
    device: str,
    inputs: dict[str, np.ndarray],
    sim_config: dict[str, Any] | None = None,
) -> Outcome:
    """Launch on ``device`` (``"sim"`` or an OpenCL selector) with copies of ``inputs``."""
    prog = loaded.program
    out = Outcome(device)
    params = prog.used_params()
    args = [inputs[p.name].copy() for p in params]
    try:
        k = loaded.kernel
        if device.startswith("sim"):  # "sim", or a test's fake device "sim:<name>"
            buf = io.StringIO()
            with clpy.sim.config(**(sim_config or {})), contextlib.redirect_stdout(buf):
                k[prog.global_size, prog.local_size](*args, device="sim")
            out.prints = buf.getvalue().splitlines()
        else:
            dev = clpy.get_device(device)
            with _capture_fd1(dev) as lines:
                k[prog.global_size, prog.local_size](*args, device=dev)
            out.prints = lines
    except Exception as e:  # every failure is a finding: report it, keep fuzzing
        out.error = f"{type(e).__name__}: {e}\n" + "".join(
            traceback.format_exception(type(e), e, e.__traceback__)[-6:]
        )
        return out
    out.outputs = {p.name: a for p, a in zip(params, args) if p.role != "in"}
    return out


def emitted_source(loaded: Loaded, device: str) -> str:
    """The OpenCL C clpy emits for ``device`` (the simulator: the generic 2.0 text)."""
    k = loaded.kernel
    try:
        if device.startswith("sim"):
            return str(k.source)
        return str(k.source_for(clpy.get_device(device).target))
    except Exception as e:
        return f"// no source: {type(e).__name__}: {e}\n"
