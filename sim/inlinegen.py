"""Device function calls made inline in generated expressions (``sim/exprgen.py``).

A call runs the callee's plan in a new scope (``plan.func_call``: a ``Frame``, its variables,
the body's block and one closure per statement): about ten Python calls for NW's ``maximum``
(two ``?:`` blends), every trip of its anti-diagonal loops. ``emit_call`` evaluates such a body
in place when it is declarations and a ``return`` of expressions the generator makes inline:
the arguments in order, each declaration, the returned value, the callee's variables held in
temporaries (``ExprGen.bound``). Anything else keeps the call's closure: a statement of another
kind, an integer declaration of a sum or conversion (``affine.value_fn`` keeps those exact), and
any node that would be a closure (a load, a pointer, a built-in call), since a closure would
read the callee's variables from a frame that inlining does not make (``NoInline``, raised by
the generator while ``bound`` is set, undoes what was emitted).
"""

from __future__ import annotations

from typing import Any

from clpy.ir.nodes import Binary, CallFunc, Cast, Declare, Return
from clpy.types.core import ScalarType


class NoInline(Exception):
    """A device function body that ``emit_call`` cannot make inline."""


def _is_int(t: Any) -> bool:
    return isinstance(t, ScalarType) and not t.is_float and not t.is_bool


def emit_call(g: Any, e: CallFunc, operand: bool) -> str:
    """Emit ``e`` into ExprGen ``g`` (see the module docstring); returns the value's name."""
    fb = g.exprs.expr(e)  # (compiles the callee's plan: ``func_call``'s bookkeeping)
    body = e.func.body
    if not (
        body
        and isinstance(body[-1], Return)
        and body[-1].value is not None
        and len(e.args) == len(e.func.params)
        and all(
            isinstance(st, Declare)
            and st.init is not None
            and isinstance(st.var.type, ScalarType)
            and not (_is_int(st.var.type) and isinstance(st.init, (Binary, Cast)))
            for st in body[:-1]
        )
    ):
        return g.closure(e, operand)
    mark = (len(g.lines), g.k, g.inline, g.saved, dict(g.ns))
    try:
        args = [g.expr(a, False) for a in e.args]
        bound = dict(zip(e.func.params, args))
        g.bound = bound
        for st in body[:-1]:
            assert isinstance(st, Declare) and st.init is not None
            v = g.expr(st.init, False)
            bound[st.var] = v
        ret = body[-1]
        assert isinstance(ret, Return) and ret.value is not None
        r = g.expr(ret.value, False)
    except NoInline:
        g.bound = None
        del g.lines[mark[0] :]
        g.k, g.inline, g.saved, g.ns = mark[1], mark[2], mark[3], mark[4]
        t = g.tmp()
        g.emit(f"{t} = {g.name('_C', fb)}(fr)")
        return t
    g.bound = None
    g.inline += 1
    g.saved += 4
    return r


__all__ = ["NoInline", "emit_call"]
