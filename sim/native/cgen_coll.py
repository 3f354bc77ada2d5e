"""Work-group functions in the native engine's generated C (sim/native/cgen.py): a statement
``v = work_group_<f>(x ...)`` is a region boundary. A region stores each work-item's operand,
the group combines them once, and the next region gives each work-item its result.

The combination is the NumPy engine's (sim/collectives.py ``chunked``): the ``n`` items are cut
into ``c`` chunks of ``k = ceil(sqrt(n))``, each folded in local id order, and the chunk totals
folded in order; scans combine a chunk's prefix with the totals before it. So float sums round
exactly as there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from clpy.ir.nodes import CallBuiltin, Loc, Var
from clpy.ir.operators import identity_value
from clpy.types.core import ScalarType
from clpy_sim.native.ctypes_c import Unsupported, c_type, scalar_literal

if TYPE_CHECKING:
    from clpy_sim.native.cgen_group import GroupGen

_INT_OPS = {"add", "mul", "min", "max", "and", "or", "xor"}
_FLOAT_OPS = {"add", "mul"}  # (min/max: NumPy's signed-zero and NaN choices are its loops')
_SYM = {"add": "+", "mul": "*", "and": "&", "or": "|", "xor": "^"}


def is_collective(e: object) -> bool:
    """A work-group function the native engine runs (as a statement's whole value)."""
    if not isinstance(e, CallBuiltin):
        return False
    c = e.builtin.collective
    return c is not None and c.scope == "wg" and c.op != "user"


def _isqrt_ceil(n: int) -> int:
    k = 1
    while k * k < n:
        k += 1
    return k


def _combine(op: str, t: ScalarType, a: str, b: str) -> str:
    ct = c_type(t)
    if op in ("min", "max"):
        cmp = "<" if op == "min" else ">"
        return f"(({a}) {cmp} ({b}) ? ({a}) : ({b}))"
    if t.is_int and t.bits >= 32 and op in ("add", "mul"):
        ut = "uint64_t" if t.bits == 64 else "uint32_t"
        return f"(({ct})(({ut})({a}) {_SYM[op]} ({ut})({b})))"
    return f"(({ct})(({a}) {_SYM[op]} ({b})))"


def emit(gen: GroupGen, call: CallBuiltin, target: Var, loc: Loc) -> None:
    """``target = call`` at group level, every work-item of the group active."""
    coll = call.builtin.collective
    assert coll is not None
    if not (len(gen.masks) == 1 and gen.root_full):
        raise Unsupported(
            f"{call.builtin.name} under control flow not every work-item takes", call.loc
        )
    mode, op = coll.mode, coll.op
    t = call.overload.params[0]
    rt = call.type
    if not isinstance(t, ScalarType) or not isinstance(rt, ScalarType):
        raise Unsupported(f"{call.builtin.name} of {t}", call.loc)
    if mode in ("all", "any"):
        op = "and" if mode == "all" else "or"
        mode = "reduce"
    elif mode in ("reduce", "scan_inclusive", "scan_exclusive"):
        ok = _FLOAT_OPS if t.is_float else _INT_OPS | {"logical_and", "logical_or"}
        if op not in ok or t.is_bool:
            raise Unsupported(f"{call.builtin.name} ({op} on {t})", call.loc)
    elif mode != "broadcast":
        raise Unsupported(f"{call.builtin.name}", call.loc)
    ct, rct = c_type(t, call.loc), c_type(rt, call.loc)
    n = gen.geom.wg
    x, r = gen.fresh("cx"), gen.fresh("cr")
    gen.group_array(ct, x, n, 8)
    gen.group_array(rct, r, n, 8)
    w = gen.w
    arg = call.args[0]
    gen.open_region()
    v = gen.expr(arg)
    if arg.type != t:
        v = gen.convert(v, arg.type, t, arg)
    logical = coll.mode in ("all", "any") or op.startswith("logical_")
    if logical:
        v = f"(({v}) != 0)"  # (operands normalised to 0/1 first, as sim/collectives.py does)
    w(f"{x}[wi] = ({ct})({v});")
    if mode == "broadcast":
        pos = gen.fresh("pos")
        gen.group_array("int64_t", pos, n, 8)
        ids = [f"(int64_t)({gen.expr(a)})" for a in call.args[1:]]
        L0, L1 = gen.geom.local[0], gen.geom.local[1]
        lin = ids[0]
        if len(ids) == 2:
            lin = f"({ids[1]} * {L0} + {ids[0]})"
        elif len(ids) == 3:
            lin = f"(({ids[2]} * {L1} + {ids[1]}) * {L0} + {ids[0]})"
        w(f"{pos}[wi] = {lin};")
    gen.close_region()
    w("{")
    w.ind += 1
    if mode == "broadcast":
        w(f"int64_t p = {pos}[0] < 0 ? 0 : {pos}[0] > {n - 1} ? {n - 1} : {pos}[0];")
        w(f"for (int64_t i = 0; i < WG; i++) {r}[i] = ({rct}){x}[p];")
    else:
        ident = scalar_literal(identity_value(op, t), t)
        op = {"logical_and": "and", "logical_or": "or"}.get(op, op)
        k = _isqrt_ceil(n)
        c = -(-n // k)
        comb = _combine
        w(f"{ct} pre[WG], tot[{c}];")
        w(f"for (int64_t ch = 0; ch < {c}; ch++) {{")
        w(f"    int64_t s = ch * {k}, e = s + {k} < WG ? s + {k} : WG;")
        w(f"    {ct} acc = {x}[s]; pre[s] = acc;")
        w(f"    for (int64_t j = s + 1; j < e; j++) {{ acc = {comb(op, t, 'acc', f'{x}[j]')};"
          " pre[j] = acc; }")  # fmt: skip
        w("    tot[ch] = acc;")
        w("}")
        fold = comb(op, t, "tot[ch - 1]", "tot[ch]")
        w(f"for (int64_t ch = 1; ch < {c}; ch++) tot[ch] = {fold};")
        w("for (int64_t i = 0; i < WG; i++) {")
        w(f"    int64_t ch = i / {k};")
        if mode == "reduce":
            w(f"    {r}[i] = ({rct})tot[{c - 1}];")
        elif mode == "scan_inclusive":
            w(f"    {r}[i] = ({rct})(ch == 0 ? pre[i] : {comb(op, t, 'tot[ch - 1]', 'pre[i]')});")
        else:
            w(f"    if (i % {k} == 0) {r}[i] = ({rct})(ch == 0 ? {ident} : tot[ch - 1]);")
            w(f"    else {r}[i] = ({rct})(ch == 0 ? pre[i - 1] : "
              f"{comb(op, t, 'tot[ch - 1]', 'pre[i - 1]')});")  # fmt: skip
        w("}")
    w.ind -= 1
    w("}")
    gen.open_region()
    val = f"{r}[wi]"
    if rt != target.type:
        val = gen.convert(val, rt, target.type, call)
    w(f"{gen.var(target, loc)} = {val};")
    gen.close_region()
