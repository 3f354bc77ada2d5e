"""C source of the helper functions that lowered collectives call.

A helper is named by a ``kind`` string and a type (the emitter's helper set holds
``(kind, type)`` pairs, emitted once per program):

- ``lower:reduce:<op>``, ``lower:scan_inclusive:<op>``, ``lower:scan_exclusive:<op>`` with
  ``<op>`` one of ``add mul and or xor logical_and logical_or min max`` or ``user=<combiner>``;
- ``lower:broadcast:``.

The algorithms keep the combination order fixed and left-to-right in linear local id order
(the simulator uses the same trees, so floating-point results agree bit for bit):

- the ``n`` items (linear local id order) are cut into ``c`` chunks of ``k`` items, ``k`` the
  smallest integer with ``k * k >= n``; chunk leaders combine their chunk sequentially
  (``acc = op(acc, s[i])``), then item 0 combines the chunk totals sequentially;
- reduce: the combined totals; inclusive scan of item ``i`` in chunk ``ch``:
  ``op(total[0..ch-1], prefix_in_chunk[i])``; exclusive: the same for item ``i - 1`` (the
  identity at item 0, the chunk prefix alone at a chunk's first item).

Only four barriers and no barrier inside a loop: PoCL's compiler handles barriers in loops by
replicating work-item loops, which made the classic log-step trees compile very slowly.
Scratch: ``n + c + 1`` slots (``SCRATCH_EXTRA`` beyond the work-group size).
"""

from __future__ import annotations

from clpy.emit.lower_atomics import atomic_helper_source
from clpy.ir.operators import BINARY
from clpy.types.core import ScalarType, Type, VectorType

LID = (
    "((get_local_id(2) * get_local_size(1) + get_local_id(1)) * get_local_size(0) + "
    "get_local_id(0))"
)
NITEMS = "(get_local_size(0) * get_local_size(1) * get_local_size(2))"
_BARRIER = "barrier(CLK_LOCAL_MEM_FENCE);"


def scratch_slots(max_group: int) -> int:
    """Scratch slots the helpers need for work-groups of up to ``max_group`` items."""
    k = 1
    while k * k < max_group:
        k += 1
    return max_group + k + 1


def helper_name(mode: str, op: str, t: Type) -> str:
    op = op.split("=", 1)[1] if op.startswith("user=") else op
    return f"clpy_{mode}{'_' + op if op else ''}_{t.cl_name}"


def combine_text(op: str, t: Type, a: str, b: str) -> str:
    """C text combining ``a`` (earlier items) with ``b`` (later items) by ``op``."""
    if op.startswith("user="):
        return f"{op[5:]}({a}, {b})"
    red = BINARY.get(op)
    if red is not None:
        return red.c_text(a, b, t.cl_name)
    raise ValueError(f"unknown reduction operator {op!r}")


def lowered_helper_source(kind: str, t: Type) -> str:
    _, mode, op = kind.split(":", 2)
    if mode == "broadcast":
        return _broadcast(t)
    if mode in ("reduce", "scan_inclusive", "scan_exclusive"):
        return _reduce_scan(mode, op, t)
    if mode.startswith(("atomic", "0")):
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
    exclusive = mode == "scan_exclusive"
    params = f"{tn} e, __local {tn}* s" if exclusive else f"__local {tn}* s"
    lines = [
        f"{head}{params}) {{",
        f"    const size_t n = {NITEMS};",
        f"    const size_t lid = {LID};",
        "    size_t k = 1;",
        "    while (k * k < n) ++k;  // chunk size ~ sqrt(n); c chunks",
        "    const size_t c = (n + k - 1) / k;",
        f"    s[lid] = {f'({tn})(x != 0)' if op.startswith('logical') else 'x'};",
        f"    {_BARRIER}",
        "    if (lid < c) {  // chunk leaders: sequential within the chunk",
        "        const size_t lo = lid * k;",
        "        const size_t hi = min(lo + k, n);",
        f"        {tn} acc = s[lo];",
        "        for (size_t i = lo + 1; i < hi; ++i) {",
        f"            acc = {combine_text(op, t, 'acc', 's[i]')};",
    ]
    if mode != "reduce":
        lines.append("            s[i] = acc;")
    lines += [
        "        }",
        "        s[n + lid] = acc;",
        "    }",
        f"    {_BARRIER}",
        "    if (lid == 0) {  // combine the chunk totals in order",
        f"        {tn} acc = s[n];",
        "        for (size_t i = 1; i < c; ++i) {",
        f"            acc = {combine_text(op, t, 'acc', 's[n + i]')};",
    ]
    if mode != "reduce":
        lines.append("            s[n + i] = acc;")
    lines.append("        }")
    if mode == "reduce":
        lines.append("        s[n + c] = acc;")
    lines += ["    }", f"    {_BARRIER}"]
    if mode == "reduce":
        lines.append(f"    const {tn} r = s[n + c];")
    elif mode == "scan_inclusive":
        lines.append("    const size_t ch = lid / k;")
        lines.append(
            f"    const {tn} r = ch > 0 ? {combine_text(op, t, 's[n + ch - 1]', 's[lid]')}"
            " : s[lid];"
        )
    else:
        lines += [
            "    const size_t ch = lid / k;",
            f"    {tn} r = e;",
            "    if (lid % k != 0)",
            f"        r = ch > 0 ? {combine_text(op, t, 's[n + ch - 1]', 's[lid - 1]')}"
            " : s[lid - 1];",
            "    else if (ch > 0)",
            "        r = s[n + ch - 1];",
        ]
    lines += [f"    {_BARRIER}", "    return r;", "}"]
    return "\n".join(lines)


def _broadcast(t: Type) -> str:
    tn = t.cl_name
    return (
        f"{tn} {helper_name('broadcast', '', t)}({tn} a, size_t id, __local {tn}* s) {{\n"
        f"    if ({LID} == id)\n"
        "        s[0] = a;\n"
        f"    {_BARRIER}\n"
        f"    const {tn} r = s[0];\n"
        f"    {_BARRIER}\n"
        "    return r;\n"
        "}"
    )


def is_integer_type(t: Type) -> bool:
    e = t.elem if isinstance(t, VectorType) else t
    return isinstance(e, ScalarType) and e.is_int
