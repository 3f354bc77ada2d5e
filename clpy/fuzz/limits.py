"""Which of the generator's collective constructs clpy can emit for a device's target.

A construct is named by ``key(scope, mode, op)``: ``"sub_group_reduce:*"``,
``"work_group_broadcast"``, ``"work_group_scan_inclusive:user"`` ... Some cannot be emitted
for some targets: on a target with real sub-groups (PoCL on an AVX-512 host,
``__opencl_c_subgroups``), sub-group collectives with operators other than ``+ - min max``
have no native built-in and clpy's lowering assumes one sub-group per work-group, so emitting
them is a ``FeatureError`` (clpy/emit/lower_collectives.py).

Rather than restate those rules (or match device names), ``unsupported(target)`` asks the
emitter: it emits one small probe kernel per construct, calling it on each integer type the
generator uses, for the target and records the constructs that raise ``FeatureError``. The
generator then leaves them out (``Generator(avoid=...)``), so every generated kernel builds
on every listed device.
"""

from __future__ import annotations

import functools
import os
import sys
import tempfile
import types
from collections.abc import Iterable
from pathlib import Path

from clpy.emit.targets import Target
from clpy.errors import FeatureError

COLLECTIVE_OPS = ("+", "-", "*", "&", "|", "^", "&&", "||", "min", "max")
SCOPES = ("work_group", "sub_group")
MODES = ("reduce", "scan_inclusive", "scan_exclusive")
_TYPES = ("int32", "uint32", "int64", "uint64")  # what the generator's collectives reduce


def key(scope: str, mode: str, op: str | None = None) -> str:
    """The name of one construct: ``key("sub_group", "reduce", "*")``."""
    return f"{scope}_{mode}" + (f":{op}" if op is not None else "")


def _call(scope: str, mode: str, op: str | None, x: str) -> str:
    if op == "user":
        return f"clpy.{scope}_{mode}(RedPair({x}, 1), redpair_op).hi"
    if op is not None:
        return f'clpy.{scope}_{mode}({x}, "{op}")'
    if mode == "broadcast":
        return f"clpy.{scope}_broadcast({x}, 0)"
    return f"clpy.{scope}_{mode}({x} > 0)"  # all, any


def constructs() -> list[tuple[str, str, str | None]]:
    """Every (scope, mode, op) the generator may use."""
    out: list[tuple[str, str, str | None]] = []
    for scope in SCOPES:
        out += [(scope, m, op) for m in MODES for op in COLLECTIVE_OPS]
        out += [(scope, m, None) for m in ("broadcast", "all", "any")]
    out += [("work_group", m, "user") for m in MODES]
    return out


def _probe_source() -> str:
    lines = [
        "import clpy",
        "from clpy import Global, int32, int64, uint32, uint64",
        "",
        "",
        "@clpy.struct",
        "class RedPair:",
        "    hi: int32",
        "    acc: uint32",
        "",
        "",
        "@clpy.reduction(identity=RedPair(-2147483648, 0))",
        "def redpair_op(a: RedPair, b: RedPair) -> RedPair:",
        "    return RedPair(max(a.hi, b.hi), a.acc + b.acc)",
        "",
    ]
    params = ", ".join(f"x{j}: Global[{t}]" for j, t in enumerate(_TYPES))
    for n, (scope, mode, op) in enumerate(constructs()):
        lines += ["", "@clpy.kernel", f"def probe_{n}({params}):", "    i = clpy.get_global_id(0)"]
        kinds = range(1) if op == "user" else range(len(_TYPES))
        for j in kinds:
            lines.append(f"    x{j}[i] = {_call(scope, mode, op, f'x{j}[i]')}")
    return "\n".join(lines) + "\n"


@functools.lru_cache(maxsize=1)
def _probes() -> dict[str, object]:
    """The probe module, executed from a real file (clpy reads kernels' source)."""
    folder = Path(tempfile.mkdtemp(prefix="clpy-fuzz-probe-"))
    path = folder / f"clpy_fuzz_probe_{os.getpid()}.py"
    text = _probe_source()
    path.write_text(text)
    mod = types.ModuleType(path.stem)
    mod.__file__ = str(path)
    sys.modules[mod.__name__] = mod  # @clpy.struct resolves annotations through its module
    exec(compile(text, str(path), "exec"), mod.__dict__)
    return mod.__dict__


@functools.lru_cache(maxsize=16)
def unsupported(target: Target) -> frozenset[str]:
    """The constructs (``key`` names) clpy cannot emit for ``target``."""
    mod = _probes()
    out = set()
    for n, (scope, mode, op) in enumerate(constructs()):
        kern = mod[f"probe_{n}"]
        try:
            kern.source_for(target, line_directives=False)  # type: ignore[attr-defined]
        except FeatureError:
            out.add(key(scope, mode, op))
    return frozenset(out)


def unsupported_on(targets: Iterable[Target]) -> frozenset[str]:
    """The constructs some listed target cannot emit."""
    out: frozenset[str] = frozenset()
    for t in targets:
        out |= unsupported(t)
    return out
