"""Program-scope variables in the emitted program (clpy/ir/program_vars.py, spec §6.5):
``__constant`` tables and ``__global`` variables, declared once per program before the
functions, named after the Python variable (``COEFFS``; ``COEFFS_`` where that would clash
with a keyword, a built-in, a function or another table of the same name).

    __constant float COEFFS[3] = {0.25f, 0.5f, 0.25f};
    __global int HITS[1] = {0};

A ``__global`` one needs ``__opencl_c_program_scope_global_variables`` (OpenCL C 2.0): on
other targets a ``FeatureError`` names the variable. Each table must fit the device's
``CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE`` (``Target.info["max_constant_buffer_size"]`` when the
target comes from a device), and so must all of them together.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from clpy.builtins.registry import REGISTRY
from clpy.emit.names import RESERVED
from clpy.emit.targets import Target
from clpy.errors import FeatureError
from clpy.ir.nodes import Function, VarRef
from clpy.ir.program_vars import ProgramVar
from clpy.ir.walk import walk
from clpy.types import catalog as C
from clpy.types.core import AddressSpace, ArrayType, ScalarType, Type, VectorType

FEATURE = "__opencl_c_program_scope_global_variables"
_PER_LINE = 8


def collect(fns: Sequence[Function]) -> list[ProgramVar]:
    """Every program-scope variable the functions read or write, first use first."""
    out: list[ProgramVar] = []
    for fn in fns:
        for n in walk(fn.body):
            if isinstance(n, VarRef) and isinstance(n.var, ProgramVar):
                out.append(n.var)
    return out


def require(pvars: Sequence[ProgramVar], need: dict[str, Any]) -> None:
    """The features the program's variables need (for the build standard and the checks)."""
    for pv in pvars:
        if pv.space is AddressSpace.GLOBAL:
            need.setdefault(FEATURE, pv.loc)


def check(pvars: Sequence[ProgramVar], tgt: Target) -> None:
    """``FeatureError`` naming the variable: a global variable on a target without them, or
    tables larger than the device's constant buffer."""
    for pv in pvars:
        if pv.space is AddressSpace.GLOBAL and not tgt.has(FEATURE):
            raise FeatureError(
                f"{pv.label}: program-scope __global variables need an OpenCL C 2.0 target "
                f"({FEATURE}); target {tgt} lacks them",
                pv.loc,
            )
    limit = tgt.info.get("max_constant_buffer_size")
    if not limit:
        return
    tables = [pv for pv in _unique(pvars) if pv.space is AddressSpace.CONSTANT]
    for pv in tables:
        if pv.source.nbytes > limit:
            raise FeatureError(
                f"{pv.label} is {pv.source.nbytes} bytes: more than the "
                f"{limit} bytes of constant memory of {tgt} (CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE)",
                pv.loc,
            )
    total = sum(pv.source.nbytes for pv in tables)
    if total > limit:
        big = max(tables, key=lambda pv: pv.source.nbytes)
        raise FeatureError(
            f"the program's __constant tables take {total} bytes together, more than the "
            f"{limit} bytes of constant memory of {tgt} (CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE); "
            f"the largest is {big.label} ({big.source.nbytes} bytes)",
            big.loc,
        )


def _unique(pvars: Sequence[ProgramVar]) -> list[ProgramVar]:
    seen: set[Any] = set()
    out: list[ProgramVar] = []
    for pv in pvars:
        if pv.key not in seen:
            seen.add(pv.key)
            out.append(pv)
    return out


def c_names(pvars: Sequence[ProgramVar], taken: frozenset[str]) -> dict[Any, str]:
    """One C name per distinct variable (by ``key``)."""
    out: dict[Any, str] = {}
    used: set[str] = set()
    for pv in _unique(pvars):
        base = name = pv.name
        n = 0
        while (
            name in RESERVED
            or name in REGISTRY
            or name in taken
            or name in used
            or name.startswith("clpy_")
        ):
            n += 1
            name = f"{base}_" if n == 1 else f"{base}_{n}"
        used.add(name)
        out[pv.key] = name
    return out


def declarations(pvars: Sequence[ProgramVar], names: dict[Any, str]) -> list[str]:
    """The C declarations, one per distinct variable."""
    lines: list[str] = []
    for pv in _unique(pvars):
        t = pv.type
        assert isinstance(t, ArrayType)
        dims = "".join(f"[{d}]" for d in t.shape)
        values = pv.source.values()
        init = _initializer(values, t.elem, t.shape)
        lines.append(f"{pv.space.value} {t.elem.cl_name} {names[pv.key]}{dims} = {init};")
    return lines


def _initializer(values: np.ndarray, elem: Type, shape: tuple[int, ...]) -> str:
    if not np.frombuffer(np.ascontiguousarray(values).tobytes(), np.uint8).any():
        return "{0}"  # all bits zero (a -0.0 is not)
    if isinstance(elem, VectorType):
        rows = values.reshape(math.prod(shape), -1)
        return _nest([_vector(v, elem) for v in rows], shape)
    return _nest([_scalar(v, elem) for v in values.reshape(-1)], shape)


def _nest(items: list[str], shape: tuple[int, ...]) -> str:
    if len(shape) > 1:
        step = math.prod(shape[1:])
        rows = [_nest(items[i : i + step], shape[1:]) for i in range(0, len(items), step)]
        return "{" + ", ".join(rows) + "}"
    if len(items) <= _PER_LINE:
        return "{" + ", ".join(items) + "}"
    chunks = [", ".join(items[i : i + _PER_LINE]) for i in range(0, len(items), _PER_LINE)]
    return "{\n    " + ",\n    ".join(chunks) + "\n}"


def _vector(v: np.ndarray, t: VectorType) -> str:
    return f"({t.cl_name})({', '.join(_scalar(x, t.elem) for x in v[: t.n])})"


def _scalar(x: Any, t: Type) -> str:
    """``x`` as an exact C literal of type ``t``."""
    assert isinstance(t, ScalarType)
    if t.is_float:
        f = float(x)
        if math.isnan(f):
            return "NAN" if t.bits == 32 else f"({t.cl_name})NAN"
        if math.isinf(f):
            s = "INFINITY" if t.bits == 32 else f"({t.cl_name})INFINITY"
            return s if f > 0 else f"-{s}"
        if t.bits == 64:
            return repr(f) if "e" in repr(f) or "." in repr(f) else repr(f) + ".0"
        if t.bits == 16:
            return f"(half){_scalar(x, C.float_)}"
        text = f"{np.float32(x).item()!r}"
        # the shortest decimal that reads back as the same float32
        for digits in range(6, 10):
            cand = f"{float(np.float32(x)):.{digits}g}"
            if np.float32(cand) == np.float32(x):
                text = cand
                break
        if "." not in text and "e" not in text and "inf" not in text:
            text += ".0"
        return text + "f"
    v = int(x)
    suffix = {"uint": "u", "long": "L", "ulong": "UL"}.get(t.name, "")
    if t.is_signed and v == -(1 << (t.bits - 1)):
        return f"(-{-(v + 1)}{suffix} - 1)"
    if t.name in ("char", "uchar", "short", "ushort") or not suffix:
        return str(v)
    return f"{v}{suffix}"


__all__ = ["FEATURE", "collect", "require", "check", "c_names", "declarations"]
