"""``print(...)`` in kernels: formatted like the device's printf, emitted in work-item order.

Output is buffered for the whole launch and written when it ends (also when it fails), sorted
by global linear work-item id and, for one work-item, in program order. Formats follow the
emitter (clpy/emit/c_stmts.py ``printf_spec``): ``%g`` for scalars of floating type, ``%d``/
``%u``/``%ld``/``%lu`` for integers, ``%v<n>`` vectors as comma-separated ``%f``/``%d``.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from clpy.types.core import PointerType, ScalarType, Type, VectorType
from clpy_sim.frame import Frame
from clpy_sim.state import Launch, frame_wids


def _fmt_scalar(v: Any, t: ScalarType) -> str:
    if t.is_float:
        return format(float(v), "g")
    return format(int(v), "d")


def _fmt_vec_elem(v: Any, t: ScalarType) -> str:
    if t.is_float:
        return format(float(v), "f")
    return format(int(v), "d")


def format_print(fr: Frame, parts: list[tuple[Any, Any]], sep: str, end: str) -> None:
    launch = fr.batch.launch
    shape = fr.shape
    n = shape[0] * shape[1]
    columns: list[list[str]] = []
    for fn, t in parts:
        if fn is None:
            columns.append([str(t)] * n)
            continue
        v = fn(fr)
        columns.append(_format_column(v, t, shape))
    lines = [sep.join(row) + end for row in zip(*columns)] if columns else [end] * n
    wids = np.broadcast_to(frame_wids(fr), shape).ravel()
    # program order within a batch: a batch holds whole work-items (any thread count)
    batch = fr.batch
    launch.prints.append((launch.global_linear(wids), batch.print_seq, lines))
    batch.print_seq += 1


def _format_column(v: Any, t: Type, shape: tuple[int, int]) -> list[str]:
    if isinstance(t, VectorType):
        a = np.broadcast_to(np.asarray(v), (t.n, *shape)).reshape(t.n, -1)
        return [",".join(_fmt_vec_elem(x, t.elem) for x in a[:, k]) for k in range(a.shape[1])]
    if isinstance(t, PointerType):
        off = np.broadcast_to(np.asarray(v.off), shape).ravel()
        return [hex(int(o) * t.elem.size) for o in off]
    assert isinstance(t, ScalarType)
    flat = np.broadcast_to(np.asarray(v), shape).ravel()
    if t.is_bool:
        return ["1" if x else "0" for x in flat]
    return [_fmt_scalar(x, t) for x in flat]


def flush_prints(launch: Launch) -> None:
    """Write the buffered output in work-item order, then program order."""
    if not launch.prints:
        return
    wids = np.concatenate([w for w, _, _ in launch.prints])
    seqs = np.concatenate([np.full(len(w), s) for w, s, _ in launch.prints])
    lines: list[str] = []
    for _, _, ls in launch.prints:
        lines.extend(ls)
    order = np.lexsort((seqs, wids))
    out = sys.stdout
    out.write("".join(lines[i] for i in order))
    out.flush()
    launch.prints.clear()
