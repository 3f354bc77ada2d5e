"""The runs a fuzz regression compares (tests/test_fuzz_*.py): a clpy kernel on the simulator
and, through clpy, on an OpenCL device; and the driver's own result for raw OpenCL C. Also
a kernel made from generated Python source, for the tests that generate one per type."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np


def both(
    k: Any, gsize: Any, lsize: Any, *arrays: np.ndarray, cl_device: Any = None
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """``k`` launched on copies of ``arrays``, once on the simulator and once on ``cl_device``
    (its warnings silenced): the simulator's arrays and the device's."""
    import pyopencl as cl

    sim = [a.copy() for a in arrays]
    dev = [a.copy() for a in arrays]
    k[gsize, lsize](*sim, device="sim")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        k[gsize, lsize](*dev, device=cl.Context([cl_device]))
    return sim, dev


def run_raw(
    ctx: Any,
    queue: Any,
    source: str,
    name: str,
    gsize: tuple[int, ...],
    lsize: tuple[int, ...] | None,
    inputs: list[np.ndarray],
    outputs: list[np.ndarray],
) -> None:
    """Raw OpenCL C, without clpy: ``source`` built as it is (no options) and its kernel
    ``name`` launched with a read-only buffer per input, then a write-only buffer per
    output, in that order; each output array is filled from its buffer."""
    import pyopencl as cl

    prg = cl.Program(ctx, source).build()
    mf = cl.mem_flags
    ins = [cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a) for a in inputs]
    outs = [cl.Buffer(ctx, mf.WRITE_ONLY, o.nbytes) for o in outputs]
    getattr(prg, name)(queue, gsize, lsize, *ins, *outs)
    for o, b in zip(outputs, outs):
        cl.enqueue_copy(queue, o, b)


def kernel_from_source(src: str, tmp: Path, name: str) -> Any:
    """The kernel ``name`` defined by Python source text ``src``, executed through a real
    file in ``tmp`` (clpy reads kernels' source) as module ``clpy_test_<name>``."""
    path = tmp / f"{name}.py"
    path.write_text(src)
    mod: dict[str, Any] = {"__name__": f"clpy_test_{name}"}
    exec(compile(src, str(path), "exec"), mod)
    return mod[name]
