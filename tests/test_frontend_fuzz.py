"""Property tests of the frontend: random kernel bodies compile, or fail with a
``clpy.CompileError`` whose location lies inside the generated kernel. Never an internal
``AttributeError``/``KeyError``/``AssertionError``/``RecursionError``.

Two generators: Python ASTs built from the whole expression and statement grammar
(tests/frontend_fuzz_gen.py; most stop at an unsupported construct or an undefined name), and
mostly well-typed kernels that get through typing into emission, OpenCL C 2.0 and 1.2 with its
lowerings, with a few values of the wrong kind mixed in (tests/frontend_fuzz_typed.py).
Each generated module is registered in ``linecache`` under a fake file name, so
``inspect``/clpy read its source as from a file.
Also: deeply nested expressions and a 10,000-line kernel.
"""

from __future__ import annotations

import ast
import itertools
import linecache
import sys
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from clpy.errors import CompileError

sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
import frontend_fuzz_gen as gen  # noqa: E402
import frontend_fuzz_typed as typed  # noqa: E402

_counter = itertools.count()
_SETTINGS = settings(
    max_examples=120,
    deadline=None,
    derandomize=True,  # the same programs on every run (CI); raise max_examples to explore
    database=None,
    suppress_health_check=list(HealthCheck),
)


def load(text: str, kernel: str = "fuzzed") -> tuple[Any, str, int]:
    """Exec ``text`` as a module file; its kernel, fake file name and line count."""
    fname = f"<frontend-fuzz-{next(_counter)}>"
    lines = text.splitlines(True)
    linecache.cache[fname] = (len(text), None, lines, fname)
    ns = gen.namespace()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)  # `1[x]` is legal, if odd, Python
        exec(compile(text, fname, "exec"), ns)  # noqa: S102
    return ns[kernel], fname, len(lines)


def compile_or_clean_error(text: str) -> str:
    """Compile the module's kernel for two targets; the outcome ("ok" or the error class).
    Anything but a located ``CompileError`` fails the test with the program."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            compile(text, "<check>", "exec")
    except SyntaxError:
        return "syntax"  # ast.unparse can write what the parser refuses (e.g. `31.x`)
    k, fname, nlines = load(text)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # uniformity warnings are fine here
            _ = k.source
            k.source_for("opencl-c-1.2")
    except CompileError as e:
        loc = e.loc
        assert loc is not None, f"CompileError without a location:\n{e}\n--- program:\n{text}"
        assert loc.file == fname and 1 <= loc.line <= nlines, (
            f"CompileError located outside the kernel ({loc}):\n{e}\n--- program:\n{text}"
        )
        return type(e).__name__
    except Exception as e:  # noqa: BLE001 - the property under test
        raise AssertionError(
            f"internal {type(e).__name__} escaped the frontend: {e}\n--- program:\n{text}"
        ) from e
    return "ok"


@_SETTINGS
@given(gen.statements())
def test_random_ast_bodies_compile_or_fail_cleanly(body: list[ast.stmt]) -> None:
    compile_or_clean_error(gen.module_text(body))


@_SETTINGS
@given(typed.typed_kernels(wrong_rate=4))
def test_typed_kernels_compile_or_fail_cleanly(text: str) -> None:
    compile_or_clean_error(text)


@_SETTINGS
@given(typed.typed_kernels(wrong_rate=20))
def test_mistyped_kernels_compile_or_fail_cleanly(text: str) -> None:
    compile_or_clean_error(text)


def test_typed_generator_reaches_emission() -> None:
    """The typed generator is only useful if most of its kernels compile: check that it is so
    for a fixed sample (guards against the grammar drifting into always-wrong programs)."""
    outcomes: list[str] = []

    @settings(_SETTINGS, max_examples=40)
    @given(typed.typed_kernels(wrong_rate=0))
    def sample(text: str) -> None:
        outcomes.append(compile_or_clean_error(text))

    sample()
    assert outcomes.count("ok") >= len(outcomes) // 3, outcomes


# ---------------------------------------------------------------------------- deep and long

HEAD = "@clpy.kernel\ndef fuzzed(x: Global[float32], n: int32):\n    i = clpy.get_global_id(0)\n"
SHAPES = {
    "sum": lambda d: "    x[i] = x[i]" + " + 1.0" * d,
    "negation": lambda d: "    x[i] = " + "-" * d + "x[i]",
    "not": lambda d: "    x[i] = 1.0 if " + "not " * d + "(i < n) else 0.0",
    "ternary": lambda d: (
        "    x[i] = " + "".join(f"{j}.0 if i == {j} else " for j in range(d)) + "0.0"
    ),
    "and": lambda d: (
        "    x[i] = 1.0 if " + " and ".join(f"i != {j}" for j in range(d)) + " else 0.0"
    ),
    "chain": lambda d: "    x[i] = 1.0 if " + " < ".join(["i"] * d) + " else 0.0",
    "calls": lambda d: "    x[i] = " + "clpy.fabs(" * d + "x[i]" + ")" * d,
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("depth", [60, 900])
def test_deep_expressions_compile_or_fail_cleanly(shape: str, depth: int) -> None:
    """Depth 60 compiles; 900 (CPython compiles it: no brackets) either compiles or is one
    CompileError at the expression saying to split it."""
    text = HEAD + SHAPES[shape](depth) + "\n"
    try:
        compile(text, "<check>", "exec")
    except (SyntaxError, RecursionError, MemoryError):
        pytest.skip("CPython itself refuses this nesting")  # e.g. nested calls: brackets
    outcome = compile_or_clean_error(text)
    if depth == 60:
        assert outcome == "ok"


def test_deep_expression_error_names_line_and_fix() -> None:
    k, fname, _ = load(HEAD + SHAPES["sum"](1000) + "\n")
    with pytest.raises(CompileError, match="nested too deeply.*split it") as info:
        _ = k.source
    assert info.value.loc is not None and info.value.loc.file == fname
    assert info.value.loc.line == 4


def test_deep_expression_on_the_simulator_is_a_compile_error() -> None:
    """A flat ``and`` of 600 terms is shallow in Python's AST but 600 levels deep in the IR:
    the simulator's compiler reports it like the emitter, and the array is untouched."""
    k, fname, _ = load(HEAD + SHAPES["and"](600) + "\n")
    x = np.arange(8, dtype=np.float32)
    before = x.copy()
    with pytest.raises(CompileError, match="nested too deeply") as info:
        k[(8,), (8,)](x, 8, device="sim")
    assert info.value.loc is not None and info.value.loc.file == fname
    assert np.array_equal(x, before)


def test_ten_thousand_line_kernel_compiles() -> None:
    body = "".join(f"    a{j} = x[i] * {j % 7}.0 + n\n    x[i] = a{j} - n\n" for j in range(5000))
    k, _, nlines = load(HEAD + body)
    assert nlines > 10_000
    src = k.source
    assert "a4999" in src


def test_long_kernel_runs_on_the_simulator() -> None:
    """4,000 statements (the simulator's block compiler was quadratic in them: minutes)."""
    body = "".join(f"    a{j} = x[i] * {j % 7}.0 + n\n    x[i] = a{j} - n\n" for j in range(2000))
    k, _, _ = load(HEAD + body)
    x = np.ones(4, dtype=np.float32)
    k[(4,), (4,)](x, 3, device="sim")
    # x = x * (j % 7) for every j: a 0 factor comes first (j = 0), so all zero.
    assert np.array_equal(x, np.zeros(4, np.float32))


def test_ten_thousand_line_kernel_with_an_error_at_the_end() -> None:
    body = "".join(f"    a{j} = x[i] + {j}.0\n" for j in range(10_000))
    k, fname, nlines = load(HEAD + body + "    x[i] = a9999 + undefined_thing\n")
    with pytest.raises(CompileError, match="undefined_thing") as info:
        _ = k.source
    assert info.value.loc is not None and info.value.loc.line == nlines
    assert fname in str(info.value)
