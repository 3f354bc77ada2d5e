"""Operator semantics in one table: the constant folder, the simulator and the emitter's
lowering all read it.

``BINARY`` holds the C binary operators that combine two values of one type (``+ - * & | ^``,
``&& ||`` on numbers, and the ``min``/``max`` built-ins): their exact meaning on Python numbers
(``exact``, used by the folder before wrapping to the result type), their NumPy meaning on lanes
in the element dtype (``ufunc`` and ``lanes``: OpenCL semantics, so ``min(x, y)`` is
``y < x ? y : x`` and logical operators give 0/1), and the C spelling (``c_text``).

``REDUCTIONS`` maps the OpenMP 5.1 reduction identifiers (§2.21.5: ``"+" "-" "*" "&" "|" "^"
"&&" "||" "min" "max"``) to the operator that combines (``"-"`` combines like ``"+"``, as
OpenMP says) and its identity (OpenMP table 2.11; for floating-point ``min``/``max`` the
"maximal representable number" is +INF/-INF, as in OpenCL §1.13.15). ``native`` marks the
operators OpenCL C has work-group/sub-group built-ins for (``add min max``).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from clpy.types.core import ScalarType


def _lanes_min(a: Any, b: Any) -> Any:
    return np.where(b < a, b, a)  # OpenCL min(x, y) = y < x ? y : x (spec §1.13.4)


def _lanes_max(a: Any, b: Any) -> Any:
    return np.where(a < b, b, a)  # max(x, y) = x < y ? y : x


def _lanes_logical(f: np.ufunc) -> Callable[[Any, Any], Any]:
    def lanes(a: Any, b: Any) -> Any:
        return f(a != 0, b != 0).astype(np.asarray(a).dtype)

    return lanes


@dataclass(frozen=True)
class BinaryOp:
    """One combining operator. ``name`` is the OpenCL suffix (``work_group_reduce_add``)."""

    name: str
    symbol: str  # C operator token, or the built-in's name for min/max
    exact: Callable[[Any, Any], Any]  # on Python ints (and floats), before wrapping
    ufunc: np.ufunc  # on NumPy lanes of the element dtype (logical: on 0/1 values)
    lanes: Callable[[Any, Any], Any]  # OpenCL semantics on lanes (logical normalises to 0/1)
    int_only: bool = False  # & | ^: integer types only
    logical: bool = False  # && ||: the result is 0 or 1
    function: bool = False  # spelled as a call (min/max), not an infix operator

    def c_text(self, a: str, b: str, cl_type: str) -> str:
        """C text for ``a op b`` in a value of type ``cl_type``."""
        if self.function:
            return f"{self.symbol}({a}, {b})"
        if self.logical:
            return f"({cl_type})({a} {self.symbol} {b})"
        return f"{a} {self.symbol} {b}"


def _op(
    name: str, symbol: str, exact: Callable[[Any, Any], Any], ufunc: np.ufunc, **kw: Any
) -> BinaryOp:
    return BinaryOp(name, symbol, exact, ufunc, kw.pop("lanes", ufunc), **kw)


BINARY: dict[str, BinaryOp] = {
    op.name: op
    for op in (
        _op("add", "+", operator.add, np.add),
        _op("sub", "-", operator.sub, np.subtract),
        _op("mul", "*", operator.mul, np.multiply),
        _op("and", "&", operator.and_, np.bitwise_and, int_only=True),
        _op("or", "|", operator.or_, np.bitwise_or, int_only=True),
        _op("xor", "^", operator.xor, np.bitwise_xor, int_only=True),
        _op(
            "logical_and",
            "&&",
            lambda a, b: int(bool(a) and bool(b)),
            np.bitwise_and,
            lanes=_lanes_logical(np.logical_and),
            logical=True,
        ),
        _op(
            "logical_or",
            "||",
            lambda a, b: int(bool(a) or bool(b)),
            np.bitwise_or,
            lanes=_lanes_logical(np.logical_or),
            logical=True,
        ),
        _op("min", "min", min, np.minimum, lanes=_lanes_min, function=True),
        _op("max", "max", max, np.maximum, lanes=_lanes_max, function=True),
    )
}
# C infix token → operator (the IR's Binary ops that are plain combinations).
BY_SYMBOL: dict[str, BinaryOp] = {op.symbol: op for op in BINARY.values() if not op.function}


@dataclass(frozen=True)
class ReductionOp:
    """An OpenMP reduction identifier: the operator that combines and its identity."""

    ident: str
    op: BinaryOp
    native: bool = False  # OpenCL C 2.0 has work_group_reduce/scan_<name>

    @property
    def name(self) -> str:
        return self.op.name

    def identity(self, elem: ScalarType) -> int | float:
        return identity_value(self.op.name, elem)


REDUCTIONS: dict[str, ReductionOp] = {
    r.ident: r
    for r in (
        ReductionOp("+", BINARY["add"], native=True),
        ReductionOp("-", BINARY["add"], native=True),
        ReductionOp("*", BINARY["mul"]),
        ReductionOp("&", BINARY["and"]),
        ReductionOp("|", BINARY["or"]),
        ReductionOp("^", BINARY["xor"]),
        ReductionOp("&&", BINARY["logical_and"]),
        ReductionOp("||", BINARY["logical_or"]),
        ReductionOp("min", BINARY["min"], native=True),
        ReductionOp("max", BINARY["max"], native=True),
    )
}
# OpenCL suffix → reduction ("-" is an alias of "+", so "add" names "+").
REDUCTION_NAMES: dict[str, ReductionOp] = {}
for _r in REDUCTIONS.values():
    REDUCTION_NAMES.setdefault(_r.name, _r)


def identity_value(name: str, elem: ScalarType) -> int | float:
    """The identity of the reduction operator ``name`` (``add`` ... ``max``) for ``elem``."""
    if name in ("add", "or", "xor", "logical_or"):
        return 0
    if name in ("mul", "logical_and"):
        return 1
    if name == "and":
        return -1 if elem.is_signed else (1 << elem.bits) - 1
    if name in ("min", "max"):
        if elem.is_float:
            return math.inf if name == "min" else -math.inf
        if elem.is_signed:
            return (1 << (elem.bits - 1)) - 1 if name == "min" else -(1 << (elem.bits - 1))
        return (1 << elem.bits) - 1 if name == "min" else 0
    raise ValueError(f"unknown reduction operator {name!r}")
