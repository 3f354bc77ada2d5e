"""Reductions and scans with any operator (OpenMP 5.1 §2.21.5), and user-defined reductions.

    s = clpy.work_group_reduce(x, "*")
    p = clpy.sub_group_scan_inclusive(v, "max")

    @clpy.reduction(identity=ValIdx(-np.inf, 2**31 - 1))    # like `declare reduction`
    def argmax(a: ValIdx, b: ValIdx) -> ValIdx:
        return a if a.val > b.val or (a.val == b.val and a.idx < b.idx) else b

    best = clpy.work_group_reduce(ValIdx(x, i), argmax)

``op`` is a compile-time constant: one of ``"+" "-" "*" "&" "|" "^" "&&" "||" "min" "max"``
(``"-"`` combines like ``"+"`` as OpenMP says; identities per OpenMP table 2.11, with +INF/-INF
for floating-point min/max as in OpenCL), or a ``@clpy.reduction``. ``"+"``, ``"min"`` and
``"max"`` on the spec's collective types become the native built-ins (lowered where the target
lacks them); everything else is always lowered to a local-memory tree/scan using the combiner.

Combination order: the lowered code and the simulator combine in a fixed left-to-right tree
(lower_helpers.py) so they agree bit for bit, but the spec and OpenMP leave the order
unspecified; native devices may differ for floating point. A user combiner should be
associative (and commutative for reductions); ``argmax`` above breaks ties toward the lowest
index, which makes it both.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from clpy.builtins.registry import (
    REGISTRY,
    ArgInfo,
    Builtin,
    Collective,
    Lowering,
    NoMatch,
    Overload,
    declare,
)
from clpy.builtins.workgroup import COLLECTIVE_TYPES
from clpy.ir.nodes import CallBuiltin, Const, Expr, Loc, StructCons, VectorCons
from clpy.ir.operators import REDUCTIONS
from clpy.pickling import reduce_object
from clpy.types import catalog as C
from clpy.types.core import ScalarType, Type, VectorType
from clpy.types.structs import StructType

_SCOPES = {"wg": ("work_group", "work-group"), "sg": ("sub_group", "sub-group")}
_MODES = ("reduce", "scan_inclusive", "scan_exclusive")
_WHAT = {
    "reduce": "Reduction",
    "scan_inclusive": "Inclusive scan",
    "scan_exclusive": "Exclusive scan",
}


def _op_rule(b: Builtin, args: Sequence[ArgInfo]) -> Overload:
    """Any number or vector of numbers (``&``, ``|``, ``^``: integers; ``&&``, ``||``:
    scalars); a bool reduces as int, a weak literal as int or float."""
    assert b.collective is not None
    op = b.collective.op
    if len(args) != 1:
        raise NoMatch(f"{b.name} takes a value and an operator")
    t = args[0].type
    if isinstance(t, ScalarType) and t.is_bool:
        t = C.int_
    elem = t.elem if isinstance(t, VectorType) else t
    if not isinstance(elem, ScalarType) or elem.kind.value in ("void", "bool"):
        raise NoMatch(
            f"{b.name} reduces scalars and vectors of numbers, not {t} (use a "
            "@clpy.reduction for structs)"
        )
    if op in ("and", "or", "xor") and not elem.is_int:
        raise NoMatch(f"operator {op!r} needs an integer type, not {t}")
    if op.startswith("logical") and isinstance(t, VectorType):
        raise NoMatch(f"operators '&&' and '||' reduce scalars, not {t}")
    if args[0].weak and isinstance(t, ScalarType):
        t = C.float_ if t.is_float else C.int_
    return Overload((t,), t)


def _user_rule(b: Builtin, args: Sequence[ArgInfo]) -> Overload:
    if len(args) != 2 or args[0].type is not args[1].type:
        raise NoMatch(
            f"{b.name}(x, identity) takes a value and the identity of its type; it "
            f"is what clpy.{b.name.rsplit('_', 1)[0]}(x, r) compiles to for a "
            "@clpy.reduction r"
        )
    t = args[0].type
    return Overload((t, t), t)


def _declare_operator_forms() -> dict[tuple[str, str, str], Builtin]:
    """For each scope, mode and operator OpenCL lacks (or for types it lacks): an
    always-lowered built-in. ``work_group_reduce_mul`` ... carry the operator's name;
    ``add``/``min``/``max`` on types without a native built-in are ``..._add_lowered``."""
    out: dict[tuple[str, str, str], Builtin] = {}
    for scope, (prefix, unit) in _SCOPES.items():
        for mode in _MODES:
            for red in REDUCTIONS.values():
                name = f"{prefix}_{mode}_{red.name}" + ("_lowered" if red.native else "")
                if (scope, mode, red.name) in out:
                    continue  # "-" combines like "+"
                types = "any number type" if not red.op.int_only else "any integer type"
                note = (
                    f"; clpy.{prefix}_{mode}(x, {red.ident!r}) on the types OpenCL has "
                    f"{prefix}_{mode}_{red.name} for uses the native built-in"
                    if red.native
                    else ""
                )
                out[(scope, mode, red.name)] = declare(
                    name,
                    family=unit,
                    uniform=True,
                    rule=_op_rule,
                    collective=Collective(scope, mode, red.name),
                    lowering=Lowering("collective", always=True),
                    signature=f"{name}(x: T) -> T  (T: {types}"
                    + (", scalars only)" if red.op.logical else ")"),
                    doc=f"{_WHAT[mode]} over the {unit} with operator {red.ident!r} "
                    f"(``clpy.{prefix}_{mode}(x, {red.ident!r})``) for {types}, always "
                    f"lowered to local-memory code{note}.",
                )
            name = f"{prefix}_{mode}_user"
            out[(scope, mode, "user")] = declare(
                name,
                family=unit,
                uniform=True,
                rule=_user_rule,
                collective=Collective(scope, mode, "user"),
                lowering=Lowering("collective", always=True),
                signature=f"{name}(x: T, identity: T) -> T  (the call carries the combiner)",
                doc=f"{_WHAT[mode]} over the {unit} with a @clpy.reduction: what "
                f"``clpy.{prefix}_{mode}(x, r)`` compiles to (the call carries r's "
                "combiner, the identity is an argument); always lowered.",
            )
    return out


OPERATOR_FORMS = _declare_operator_forms()


class Reduction:
    """A user-defined reduction: a ``@clpy.func`` combiner ``(a, b) -> T`` and its identity
    (``@clpy.reduction(identity=...)``, declared in clpy/kernel.py next to ``clpy.func``)."""

    def __init__(self, combiner: Any, identity: Any) -> None:
        self.func = combiner
        self.identity = identity
        self.__name__ = self.func.__name__
        self.__doc__ = self.func.__doc__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(
            f"reduction {self.__name__} is used as the operator of "
            "clpy.work_group_reduce(x, op) and friends inside kernels"
        )

    def __repr__(self) -> str:
        return f"<clpy.reduction {self.__name__}>"

    def __reduce__(self) -> Any:
        """By module reference when importable, else rebuilt once per process
        (clpy/pickling.py), so kernels cached per reduction are reused."""
        return reduce_object(self, self.func.py_function, Reduction, (self.func, self.identity))


class CollectiveWithOp:
    """``clpy.work_group_reduce(x, op)`` and friends: ``op`` is chosen at compile time."""

    __clpy_accepts_keywords__ = False

    def __init__(self, scope: str, mode: str) -> None:
        prefix, unit = _SCOPES[scope]
        self.scope = scope
        self.mode = mode
        self.__name__ = f"{prefix}_{mode}"
        self.__doc__ = (
            f"``clpy.{self.__name__}(x, op)``: {mode.replace('_', ' ')} of ``x`` "
            f"over the {unit} with ``op`` one of "
            f"{' '.join(repr(o) for o in REDUCTIONS)} or a @clpy.reduction."
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"clpy.{self.__name__} can only be called inside a @clpy.kernel")

    def __repr__(self) -> str:
        return f"clpy.{self.__name__}"

    def __clpy_call__(self, builder: Any, node: ast.Call) -> Any:
        st = builder.state
        if len(node.args) != 2:
            st.fail(node, f"clpy.{self.__name__}(x, op) takes 2 arguments, got {len(node.args)}")
        x = builder.expr(node.args[0])
        opv = builder.value(node.args[1])
        op = None if isinstance(opv, Expr) else opv.value  # a compile-time Python value
        if isinstance(op, Reduction):
            return self._user(builder, node, x, op)
        if not isinstance(op, str) or op not in REDUCTIONS:
            st.fail(
                node.args[1],
                f"the operator of clpy.{self.__name__} must be a constant "
                f"string among {' '.join(repr(o) for o in REDUCTIONS)} or a "
                f"@clpy.reduction, not {ast.unparse(node.args[1])}",
            )
        assert isinstance(op, str)
        red = REDUCTIONS[op]
        if red.native and x.type in COLLECTIVE_TYPES:
            prefix = _SCOPES[self.scope][0]
            return builder.call_builtin(REGISTRY[f"{prefix}_{self.mode}_{red.name}"], [x], node)
        b = OPERATOR_FORMS[(self.scope, self.mode, red.name)]
        return builder.call_builtin(b, [x], node)

    def _user(self, builder: Any, node: ast.Call, x: Any, red: Reduction) -> Any:
        st = builder.state
        t = x.type
        anns = red.func.annotations()
        names = red.func.param_names
        if len(names) != 2:
            st.fail(node, f"reduction {red.__name__} must take two arguments (a, b)")
        types = tuple((n, anns.get(n) or t) for n in names)
        fn = red.func.build_for(types, st.session, st.loc(node))
        if fn.params[0].type is not fn.params[1].type or fn.ret is not fn.params[0].type:
            st.fail(
                node,
                f"reduction {red.__name__} must have type (T, T) -> T, got "
                f"({fn.params[0].type}, {fn.params[1].type}) -> {fn.ret}",
            )
        t = fn.ret
        for f in (*fn.callees, fn):
            if f not in st.callees:
                st.callees.append(f)
        try:
            ident = identity_expr(red.identity, t, st.loc(node))
        except (TypeError, ValueError) as e:
            st.fail(node, f"identity of reduction {red.__name__}: {e}")
        b = OPERATOR_FORMS[(self.scope, self.mode, "user")]
        call = builder.call_builtin(b, [builder.coerce(x, t, node), ident], node)
        assert isinstance(call, CallBuiltin)
        return replace(call, combiner=fn)


def identity_expr(value: Any, t: Type, loc: Loc) -> Expr:
    """A constant IR expression of type ``t`` for a host value (scalar, lanes, struct)."""
    if isinstance(t, ScalarType):
        v = np.asarray(value).astype(t.dtype).item() if not t.is_bool else bool(value)
        return Const(t, loc, v)
    if isinstance(t, VectorType):
        lanes = (
            np.broadcast_to(np.asarray(value, dtype=t.elem.dtype).ravel(), (t.n,))
            if np.size(value) in (1, t.n)
            else None
        )
        if lanes is None:
            raise ValueError(f"needs 1 or {t.n} components for {t}")
        return VectorCons(t, loc, tuple(Const(t.elem, loc, v.item()) for v in lanes))
    if isinstance(t, StructType):
        names = [n for n, _ in t.fields]
        if isinstance(value, np.void):
            vals = [value[n] for n in names]
        elif isinstance(value, dict):
            vals = [value[n] for n in names]
        else:
            vals = list(value)
        if len(vals) != len(names):
            raise ValueError(f"{t.name} has {len(names)} fields, got {len(vals)} values")
        return StructCons(
            t, loc, tuple(identity_expr(v, ft, loc) for v, (_, ft) in zip(vals, t.fields))
        )
    raise TypeError(f"cannot build a constant of type {t}")


work_group_reduce = CollectiveWithOp("wg", "reduce")
work_group_scan_inclusive = CollectiveWithOp("wg", "scan_inclusive")
work_group_scan_exclusive = CollectiveWithOp("wg", "scan_exclusive")
sub_group_reduce = CollectiveWithOp("sg", "reduce")
sub_group_scan_inclusive = CollectiveWithOp("sg", "scan_inclusive")
sub_group_scan_exclusive = CollectiveWithOp("sg", "scan_exclusive")

API: dict[str, Any] = {
    "work_group_reduce": work_group_reduce,
    "work_group_scan_inclusive": work_group_scan_inclusive,
    "work_group_scan_exclusive": work_group_scan_exclusive,
    "sub_group_reduce": sub_group_reduce,
    "sub_group_scan_inclusive": sub_group_scan_inclusive,
    "sub_group_scan_exclusive": sub_group_scan_exclusive,
}
