"""C source of the helper functions that lowered collectives call.

A helper is named by a ``kind`` string and a type (the emitter's helper set holds
``(kind, type)`` pairs, emitted once per program):

- ``lower:reduce:<op>``, ``lower:scan_inclusive:<op>``, ``lower:scan_exclusive:<op>`` with
  ``<op>`` one of ``add mul and or xor logical_and logical_or min max`` or ``user=<combiner>``;
- ``lower:broadcast:``.

The algorithms keep the combination order fixed and left-to-right in linear local id order
(the simulator uses the same trees, so floating-point results agree bit for bit):

- reduce: a pairwise tree; at step ``d = 1, 2, 4 ...`` slot ``i`` (a multiple of ``2d``)
  becomes ``op(s[i], s[i + d])``;
- inclusive scan: Hillis–Steele; at step ``d`` item ``i >= d`` becomes ``op(s[i - d], v)``;
- exclusive scan: the inclusive scan shifted by one, the identity at item 0.
"""

from __future__ import annotations

from clpy.types.core import ScalarType, Type, VectorType

LID = ("((get_local_id(2) * get_local_size(1) + get_local_id(1)) * get_local_size(0) + "
       "get_local_id(0))")
NITEMS = "(get_local_size(0) * get_local_size(1) * get_local_size(2))"
_BARRIER = "barrier(CLK_LOCAL_MEM_FENCE);"


def helper_name(mode: str, op: str, t: Type) -> str:
    op = op.split("=", 1)[1] if op.startswith("user=") else op
    return f"clpy_{mode}{'_' + op if op else ''}_{t.cl_name}"


def combine_text(op: str, t: Type, a: str, b: str) -> str:
    """C text combining ``a`` (earlier items) with ``b`` (later items) by ``op``."""
    if op.startswith("user="):
        return f"{op[5:]}({a}, {b})"
    if op == "add":
        return f"{a} + {b}"
    if op == "mul":
        return f"{a} * {b}"
    if op in ("and", "or", "xor"):
        return f"{a} {dict(zip(('and', 'or', 'xor'), '&|^'))[op]} {b}"
    if op in ("logical_and", "logical_or"):
        c = "&&" if op == "logical_and" else "||"
        return f"({t.cl_name})({a} {c} {b})"
    if op in ("min", "max"):
        # OpenCL's common/integer min and max: min(x, y) is y < x ? y : x (spec §1.13.4).
        return f"{op}({a}, {b})"
    raise ValueError(f"unknown reduction operator {op!r}")


def lowered_helper_source(kind: str, t: Type) -> str:
    _, mode, op = kind.split(":", 2)
    if mode == "broadcast":
        return _broadcast(t)
    if mode in ("reduce", "scan_inclusive", "scan_exclusive"):
        return _reduce_scan(mode, op, t)
    if mode.startswith("atomic"):
        from clpy.emit.lower_atomics import atomic_helper_source

        return atomic_helper_source(mode, op, t)
    raise ValueError(f"unknown lowered helper {kind!r}")


def _prototype(op: str, t: Type) -> str:
    if not op.startswith("user="):
        return ""
    tn = t.cl_name
    return f"{tn} {op[5:]}({tn} a, {tn} b);\n"


def _reduce_scan(mode: str, op: str, t: Type) -> str:
    tn = t.cl_name
    name = helper_name(mode, op, t)
    head = f"{_prototype(op, t)}{tn} {name}({tn} x, "
    if mode == "reduce":
        comb = combine_text(op, t, "s[lid]", "s[lid + d]")
        return (f"{head}__local {tn}* s) {{\n"
                f"    const size_t n = {NITEMS};\n"
                f"    const size_t lid = {LID};\n"
                "    s[lid] = x;\n"
                f"    {_BARRIER}\n"
                "    for (size_t d = 1; d < n; d <<= 1) {\n"
                "        if ((lid & (2 * d - 1)) == 0 && lid + d < n)\n"
                f"            s[lid] = {comb};\n"
                f"        {_BARRIER}\n"
                "    }\n"
                f"    const {tn} r = s[0];\n"
                f"    {_BARRIER}\n"
                "    return r;\n"
                "}")
    comb = combine_text(op, t, "s[lid - d]", "v")
    exclusive = mode == "scan_exclusive"
    params = f"{tn} e, __local {tn}* s" if exclusive else f"__local {tn}* s"
    result = "lid > 0 ? s[lid - 1] : e" if exclusive else "v"
    return (f"{head}{params}) {{\n"
            f"    const size_t n = {NITEMS};\n"
            f"    const size_t lid = {LID};\n"
            f"    {tn} v = x;\n"
            "    s[lid] = v;\n"
            f"    {_BARRIER}\n"
            "    for (size_t d = 1; d < n; d <<= 1) {\n"
            "        if (lid >= d)\n"
            f"            v = {comb};\n"
            f"        {_BARRIER}\n"
            "        s[lid] = v;\n"
            f"        {_BARRIER}\n"
            "    }\n"
            f"    const {tn} r = {result};\n"
            f"    {_BARRIER}\n"
            "    return r;\n"
            "}")


def _broadcast(t: Type) -> str:
    tn = t.cl_name
    return (f"{tn} {helper_name('broadcast', '', t)}({tn} a, size_t id, __local {tn}* s) {{\n"
            f"    if ({LID} == id)\n"
            "        s[0] = a;\n"
            f"    {_BARRIER}\n"
            f"    const {tn} r = s[0];\n"
            f"    {_BARRIER}\n"
            "    return r;\n"
            "}")


def is_integer_type(t: Type) -> bool:
    e = t.elem if isinstance(t, VectorType) else t
    return isinstance(e, ScalarType) and e.is_int
