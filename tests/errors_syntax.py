"""Malformed kernels, Python syntax kernels cannot have: cases of tests/test_errors.py (each
registered by ``@bad`` with the error it must raise at the marked line)."""

from __future__ import annotations

import clpy
from clpy import Global, float32, int32
from clpy.errors import KernelTypeError, UnsupportedSyntaxError
from tests.errors_corpus import bad

# ruff: noqa: F821, F841, B007, B018, E731, C416, UP034, RUF015


# ----------------------------------------------------------------------------- syntax


@bad(UnsupportedSyntaxError, "class Inner", "class definition is not supported")
@clpy.kernel
def class_in_kernel(x: Global[float32]):
    class Inner:
        pass


@bad(UnsupportedSyntaxError, "[v for v in", "list comprehension is not supported")
@clpy.kernel
def list_comprehension(x: Global[float32]):
    y = [v for v in range(3)]


@bad(UnsupportedSyntaxError, "(v for v", "generator expression is not supported")
@clpy.kernel
def generator_expression(x: Global[float32]):
    x[0] = clpy.sin(v for v in range(3))


@bad(UnsupportedSyntaxError, "try:", "try statement is not supported")
@clpy.kernel
def try_statement(x: Global[float32]):
    try:
        x[0] = 1.0
    except Exception:
        pass


@bad(UnsupportedSyntaxError, "with ctx", "with statement is not supported")
@clpy.kernel
def with_statement(x: Global[float32]):
    with ctx:
        x[0] = 1.0


@bad(UnsupportedSyntaxError, "= lambda", "lambda is not supported")
@clpy.kernel
def lambda_expression(x: Global[float32]):
    f = lambda v: v + 1
    x[0] = 1.0


@bad(UnsupportedSyntaxError, "*rest", "plain positional names")
@clpy.kernel
def star_args(x: Global[float32], *rest):
    x[0] = 1.0


@bad(UnsupportedSyntaxError, "clpy.sin(*", "*args and **kwargs are not supported")
@clpy.kernel
def star_call(x: Global[float32]):
    x[0] = clpy.sin(*x)


@bad(UnsupportedSyntaxError, "clpy.sin(x=", "keyword arguments are not supported in calls to sin")
@clpy.kernel
def keyword_to_builtin(x: Global[float32]):
    x[0] = clpy.sin(x=1.0)


@bad(UnsupportedSyntaxError, "a, b = ", "tuple unpacking is not supported")
@clpy.kernel
def tuple_unpacking(x: Global[float32]):
    a, b = 1.0, 2.0


@bad(UnsupportedSyntaxError, "x[1:3]", "slices are not supported")
@clpy.kernel
def slice_index(x: Global[float32]):
    x[0] = x[1:3]


@bad(UnsupportedSyntaxError, "a = b = ", "chained assignment")
@clpy.kernel
def chained_assignment(x: Global[float32]):
    a = b = 1.0


@bad(UnsupportedSyntaxError, 'f"', "f-string is not supported")
@clpy.kernel
def fstring(x: Global[float32]):
    print(f"{x[0]}")


@bad(UnsupportedSyntaxError, "{1: 2}", "dict display is not supported")
@clpy.kernel
def dict_display(x: Global[float32]):
    d = {1: 2}


@bad(UnsupportedSyntaxError, "is None", "operator 'is' is not supported")
@clpy.kernel
def is_operator(x: Global[float32], n: int32):
    if n is None:
        x[0] = 1.0


@bad(UnsupportedSyntaxError, "while n > 0:", "while ... else")
@clpy.kernel
def while_else(x: Global[float32], n: int32):
    while n > 0:
        n -= 1
    else:
        x[0] = 1.0


@bad(UnsupportedSyntaxError, "for k in range(3):", "for ... else")
@clpy.kernel
def for_else(x: Global[float32]):
    for k in range(3):
        x[k] = 1.0
    else:
        x[0] = 2.0


@bad(UnsupportedSyntaxError, "in (1, 2, 3)", "can only loop over range")
@clpy.kernel
def for_over_tuple(x: Global[float32]):
    for k in (1, 2, 3):
        x[k] = 1.0


@bad(UnsupportedSyntaxError, "sorted(x)", "'sorted' cannot be called in kernel code")
@clpy.kernel
def python_function_call(x: Global[float32]):
    x[0] = sorted(x)


@bad(KernelTypeError, "len(x)", "len() of a kernel value needs an array (its size is known)")
@clpy.kernel
def len_of_pointer(x: Global[float32]):
    x[0] = len(x)


@bad(UnsupportedSyntaxError, "y = print(", "print() is a statement")
@clpy.kernel
def print_as_value(x: Global[float32]):
    y = print(1)


@bad(UnsupportedSyntaxError, "import math", "import statement is not supported")
@clpy.kernel
def import_in_kernel(x: Global[float32]):
    import math  # noqa: F401


@bad(UnsupportedSyntaxError, "def inner", "nested function definition")
@clpy.kernel
def nested_def(x: Global[float32]):
    def inner():
        return 1


@bad(UnsupportedSyntaxError, "raise ", "raise statement is not supported")
@clpy.kernel
def raise_statement(x: Global[float32]):
    raise ValueError("no")


@bad(UnsupportedSyntaxError, "x[0] @ x[1]", "operator @ is not supported")
@clpy.kernel
def matmul_operator(x: Global[float32]):
    x[0] = x[0] @ x[1]


@bad(UnsupportedSyntaxError, "None", "constant None is not supported")
@clpy.kernel
def none_constant(x: Global[float32]):
    y = None


@bad(UnsupportedSyntaxError, "(y := 2)", "assignment expression")
@clpy.kernel
def walrus(x: Global[float32]):
    x[0] = (y := 2)


@bad(UnsupportedSyntaxError, "n=1.0", "default parameter values")
@clpy.kernel
def default_value(x: Global[float32], n=1.0):
    x[0] = n


@bad(UnsupportedSyntaxError, "sep=s", "constant string sep=")
@clpy.kernel
def print_dynamic_sep(x: Global[float32]):
    s = 1
    print(x[0], sep=s)
