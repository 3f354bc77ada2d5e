"""Definite assignment (clpy/frontend/definite.py): a local read where some path reaches it
unassigned is a compile error at the read, naming the variable and the lines that assign it.
The kernels whose every path assigns before reading (they compile, and run with Python's
values) are in tests/test_definite_assignment_accepted.py."""

# ruff: noqa: F821 - kernels that read unassigned names on purpose

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

import pytest

import clpy
from clpy import Global, float32, int32
from clpy.errors import UndefinedNameError

HINT_TAIL = (
    "; Python would raise UnboundLocalError on a path that skips the assignment, and a device "
    "would read an undefined value"
)


@clpy.struct
class Pair:
    a: float32
    b: int32


# ----------------------------------------------------------------------------- rejected


@clpy.kernel
def if_without_else(x: Global[float32], out: Global[float32]):
    i = clpy.get_global_id(0)
    if x[i] > 0:  # construct
        y = x[i]  # assign
    out[i] = y  # read


@clpy.kernel
def elif_without_else(x: Global[float32], out: Global[float32]):
    i = clpy.get_global_id(0)
    if x[i] > 0:  # construct
        y = 1.0  # assign
    elif x[i] < 0:
        y = -1.0  # assign
    out[i] = y  # read


@clpy.kernel
def nested_if(x: Global[float32], out: Global[float32]):
    i = clpy.get_global_id(0)
    if x[i] > 0:  # construct
        if x[i] > 1:
            y = 2.0  # assign
        else:
            pass
    else:
        y = 0.0  # assign
    out[i] = y  # read


@clpy.kernel
def for_may_not_run(x: Global[float32], out: Global[float32], n: int32):
    for k in range(n):  # construct
        y = x[k]  # assign
    out[0] = y  # read


@clpy.kernel
def while_may_not_run(x: Global[float32], out: Global[float32], n: int32):
    k = 0
    while k < n:  # construct
        y = x[k]  # assign
        k += 1
    out[0] = y  # read


@clpy.kernel
def loop_variable_after_dynamic_range(out: Global[int32], n: int32):
    for k in range(n):  # construct assign
        out[k] = 0
    out[0] = k  # read


@clpy.kernel
def loop_variable_after_empty_range(out: Global[int32]):
    for k in range(5, 0):  # construct assign
        out[k] = 0
    out[0] = k  # read


@clpy.kernel
def break_before_assignment(x: Global[float32], out: Global[float32]):
    for k in range(4):  # construct
        if x[k] < 0:
            break
        y = x[k]  # assign
    out[0] = y  # read


@clpy.kernel
def continue_before_assignment(x: Global[float32], out: Global[float32]):
    for k in range(4):  # construct
        if x[k] < 0:
            continue
        y = x[k]  # assign
    out[0] = y  # read


@clpy.kernel
def while_true_break_before_assignment(x: Global[float32], out: Global[float32]):
    k = 0
    while True:  # construct
        if x[k] < 0:
            break
        y = x[k]  # assign
        break
    out[0] = y  # read


@clpy.kernel
def augmented_on_unassigned(x: Global[float32], out: Global[float32]):
    i = clpy.get_global_id(0)
    if x[i] > 0:  # construct
        s = x[i]  # assign
    s += 1.0  # read
    out[i] = s


@clpy.kernel
def ternary_reads_it(x: Global[float32], out: Global[float32]):
    i = clpy.get_global_id(0)
    if x[i] > 0:  # construct
        y = x[i]  # assign
    out[i] = y if i > 0 else 0.0  # read


@clpy.kernel
def short_circuit_reads_it(x: Global[float32], out: Global[float32]):
    i = clpy.get_global_id(0)
    if x[i] > 0:  # construct
        y = x[i]  # assign
    if i > 0 and y > 1.0:  # read
        out[i] = 1.0


@clpy.kernel
def print_reads_it(x: Global[float32]):
    i = clpy.get_global_id(0)
    if x[i] > 0:  # construct
        y = x[i]  # assign
    print(y)  # read


@clpy.kernel
def later_iteration_test_is_not_first(x: Global[float32], out: Global[float32]):
    for k in range(4):  # construct
        if k == 1:
            acc = x[0]  # assign
        else:
            acc = acc + x[k]  # assign read
    out[0] = acc


@clpy.kernel
def first_iteration_needs_constant_step(x: Global[float32], out: Global[float32], s: int32):
    for k in range(0, 8, s):  # construct
        if k == 0:
            acc = x[0]  # assign
        else:
            acc = acc + x[k]  # assign read
    out[0] = 1.0


@clpy.kernel
def constexpr_branch_not_taken(out: Global[float32], flag: clpy.constexpr):
    if flag:
        y = 1.0  # assign
    out[0] = y  # read


@clpy.kernel
def fence_flags_in_a_branch(x: Global[float32], n: int32):
    if n > 0:  # construct
        flags = clpy.CLK_LOCAL_MEM_FENCE  # assign
    clpy.barrier(flags)  # read
    x[0] = 1.0


@clpy.func
def sign_of(v: float32) -> float32:
    if v > 0:  # construct
        r = 1.0  # assign
    elif v < 0:
        r = -1.0  # assign
    return r  # read


@clpy.kernel
def calls_sign_of(x: Global[float32], out: Global[float32]):
    i = clpy.get_global_id(0)
    out[i] = sign_of(x[i])


@dataclass
class Rejected:
    kernel: Any
    name: str
    read: str  # the text at the read's column, on the line marked "# read"
    where: Any = None  # the function holding the markers (a @clpy.func), if not the kernel
    specialize: dict[str, Any] | None = None


REJECTED = [
    Rejected(if_without_else, "y", "y  # read"),
    Rejected(elif_without_else, "y", "y  # read"),
    Rejected(nested_if, "y", "y  # read"),
    Rejected(for_may_not_run, "y", "y  # read"),
    Rejected(while_may_not_run, "y", "y  # read"),
    Rejected(loop_variable_after_dynamic_range, "k", "k  # read"),
    Rejected(loop_variable_after_empty_range, "k", "k  # read"),
    Rejected(break_before_assignment, "y", "y  # read"),
    Rejected(continue_before_assignment, "y", "y  # read"),
    Rejected(while_true_break_before_assignment, "y", "y  # read"),
    Rejected(augmented_on_unassigned, "s", "s += 1.0"),
    Rejected(ternary_reads_it, "y", "y if i > 0"),
    Rejected(short_circuit_reads_it, "y", "y > 1.0"),
    Rejected(print_reads_it, "y", "y)"),
    Rejected(later_iteration_test_is_not_first, "acc", "acc + x[k]"),
    Rejected(first_iteration_needs_constant_step, "acc", "acc + x[k]"),
    Rejected(fence_flags_in_a_branch, "flags", "flags)"),
    Rejected(calls_sign_of, "r", "r  # read", where=sign_of),
]


def _lines(fn: Any) -> list[tuple[int, str]]:
    py = getattr(fn, "py_function", fn)
    text, first = inspect.getsourcelines(py)
    return [(first + i, t.rstrip("\n")) for i, t in enumerate(text)]


def _marked(fn: Any, marker: str) -> list[tuple[int, str]]:
    """The lines of ``fn`` whose trailing ``  # ...`` comment holds the word ``marker``."""
    return [
        (n, t) for n, t in _lines(fn) if "  # " in t and marker in t.split("  # ", 1)[1].split()
    ]


def _expected(case: Rejected) -> tuple[int, int, str]:
    fn = case.where or case.kernel
    ((read_line, read_text),) = _marked(fn, "read")
    assigned = [n for n, _ in _marked(fn, "assign")]
    construct = [(n, t) for n, t in _marked(fn, "construct")]
    where = "s" if len(assigned) > 1 else ""
    at = (
        (", ".join(map(str, assigned[:-1])) + f" and {assigned[-1]}") if where else str(assigned[0])
    )
    msg = (
        f"local variable {case.name!r} is read here, but it is not assigned on every path "
        f"that reaches this point (assigned at line{where} {at})"
    )
    if construct:
        ((c_line, c_text),) = construct
        kind = c_text.strip().split()[0]
        if kind == "if":
            why = f"the `if` at line {c_line} (not every branch of it assigns {case.name!r})"
        else:
            why = (
                f"the `{kind}` loop at line {c_line} (it may run zero times, or leave before "
                f"assigning {case.name!r})"
            )
        msg += f"\nhint: initialise {case.name!r} before {why}{HINT_TAIL}"
    col = read_text.index(case.read)
    return read_line, col, msg


@pytest.mark.parametrize("case", REJECTED, ids=[c.kernel.__name__ for c in REJECTED])
def test_rejected_at_the_read(case: Rejected) -> None:
    line, col, msg = _expected(case)
    with pytest.raises(UndefinedNameError) as info:
        _ = case.kernel.ir
    e = info.value
    assert e.loc is not None
    assert e.loc.file == inspect.getsourcefile((case.where or case.kernel).py_function)
    assert (e.loc.line, e.loc.col) == (line, col)
    assert e.message == msg


def test_rejected_branch_of_a_constexpr() -> None:
    """The frontend folds ``if flag``: with flag false no path assigns ``y``."""
    ((line, text),) = _marked(constexpr_branch_not_taken, "read")
    ((assigned, _),) = _marked(constexpr_branch_not_taken, "assign")
    with pytest.raises(UndefinedNameError) as info:
        constexpr_branch_not_taken.specialize(out=Global[float32], flag=False)
    e = info.value
    assert e.loc is not None and (e.loc.line, e.loc.col) == (line, text.index("y  # read"))
    assert e.message == (
        "local variable 'y' is read here, but it is not assigned on every path that reaches "
        f"this point (its assignment at line {assigned} is in a branch that a compile-time "
        f"condition removes)\nhint: initialise 'y' first{HINT_TAIL}"
    )
    # with flag true the assignment is the kernel's
    assert (
        "y = 1.0f;" in constexpr_branch_not_taken.specialize(out=Global[float32], flag=True).source
    )


@clpy.kernel
def annotated_never_assigned(out: Global[float32]):
    y: float32
    out[0] = y  # read


@clpy.kernel
def annotated_assigned_in_branch(x: Global[float32], out: Global[float32]):
    i = clpy.get_global_id(0)
    y: float32  # declared
    if x[i] > 0:  # construct
        y = x[i]  # assign
    out[i] = y  # read


@clpy.kernel
def vector_lane_of_unassigned(out: Global[float32]):
    v: clpy.float4
    v.x = 1.0  # read
    out[0] = v.x


@clpy.kernel
def struct_field_of_unassigned(out: Global[float32]):
    p: Pair
    p.a = 1.0  # read
    out[0] = p.a


def test_annotation_without_value_declares_unassigned() -> None:
    """``y: float32`` declares ``y`` without a value, as in Python (no ``y`` until assigned)."""
    ((line, text),) = _marked(annotated_never_assigned, "read")
    with pytest.raises(UndefinedNameError) as info:
        _ = annotated_never_assigned.ir
    e = info.value
    assert e.loc is not None and (e.loc.line, e.loc.col) == (line, text.index("y  # read"))
    assert e.message == (
        f"local variable 'y' is read here, but it is never assigned a value (declared without "
        f"a value at line {line - 1} (y: float))\nhint: give it a value where it is declared: "
        "y: float = ..."
    )


def test_annotation_then_branch_names_both() -> None:
    ((line, text),) = _marked(annotated_assigned_in_branch, "read")
    ((decl, _),) = _marked(annotated_assigned_in_branch, "declared")
    ((assigned, _),) = _marked(annotated_assigned_in_branch, "assign")
    ((construct, _),) = _marked(annotated_assigned_in_branch, "construct")
    with pytest.raises(UndefinedNameError) as info:
        _ = annotated_assigned_in_branch.ir
    e = info.value
    assert e.loc is not None and (e.loc.line, e.loc.col) == (line, text.index("y  # read"))
    assert e.message == (
        "local variable 'y' is read here, but it is not assigned on every path that reaches "
        f"this point (assigned at line {assigned}; declared without a value at line {decl} "
        f"(y: float))\nhint: initialise 'y' before the `if` at line {construct} (not every "
        f"branch of it assigns 'y'){HINT_TAIL}"
    )


@pytest.mark.parametrize(
    "kernel,name,t",
    [(vector_lane_of_unassigned, "v", "float4"), (struct_field_of_unassigned, "p", "Pair")],
)
def test_part_of_an_unassigned_variable(kernel: Any, name: str, t: str) -> None:
    """``v.x = 1.0`` changes part of ``v``: Python looks ``v`` up first, C keeps the other
    lanes (fields) undefined."""
    ((line, text),) = _marked(kernel, "read")
    with pytest.raises(UndefinedNameError) as info:
        _ = kernel.ir
    e = info.value
    assert e.loc is not None and (e.loc.line, e.loc.col) == (line, text.index(name))
    assert e.message == (
        f"part of local variable {name!r} is assigned here, but {name!r} itself is never "
        f"assigned a value (declared without a value at line {line - 1} ({name}: {t}))\n"
        f"hint: give it a value where it is declared: {name}: {t} = ..."
    )
