"""Importing a user's Python file and finding its kernels and device functions."""

from __future__ import annotations

import ast
import importlib.util
import os
import sys
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import clpy
from clpy.kernel import Func, Kernel, Specialization
from clpy.types.annotations import _Constexpr


class UsageError(Exception):
    """Bad command-line input: printed as ``clpy: error: ...`` with exit status 2."""


@dataclass
class Module:
    """A user file imported for the command line, and the clpy objects it defines."""

    path: str
    name: str
    module: ModuleType
    kernels: list[Kernel]
    funcs: list[Func]


def load_module(path: str) -> Module:
    """Import ``path`` as a module named after the file (its folder goes on ``sys.path`` so
    its own imports work). Kernels and functions it merely imports are not its own."""
    if not os.path.isfile(path):
        raise UsageError(f"{path}: no such file")
    full = os.path.abspath(path)
    name = os.path.splitext(os.path.basename(full))[0]
    folder = os.path.dirname(full)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(name, full)
    if spec is None or spec.loader is None:
        raise UsageError(f"{path}: not a Python file")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # @clpy.struct resolves string annotations through it
    spec.loader.exec_module(mod)
    kernels: list[Kernel] = []
    funcs: list[Func] = []
    for value in vars(mod).values():
        if getattr(getattr(value, "py_function", None), "__module__", None) != name:
            continue
        if isinstance(value, Kernel) and value not in kernels:
            kernels.append(value)
        elif isinstance(value, Func) and value not in funcs:
            funcs.append(value)
    return Module(path, name, mod, kernels, funcs)


def namespace(mod: Module) -> dict[str, Any]:
    """Names a ``--sig`` string may use: clpy's types and constants, then the module's."""
    ns = {k: v for k, v in vars(clpy).items() if not k.startswith("_")}
    ns["clpy"] = clpy
    ns.update(vars(mod.module))
    return ns


def parse_sigs(sigs: list[str], kernels: list[str]) -> dict[str, str]:
    """``--sig`` values by kernel: ``"KERNEL: x=Global[float32], n=int32"``, or without the
    ``KERNEL:`` prefix when exactly one ``-k`` names the kernel."""
    out: dict[str, str] = {}
    for s in sigs:
        head, sep, rest = s.partition(":")
        if sep and head.strip().isidentifier() and "[" not in head and "=" not in head:
            out[head.strip()] = rest
        elif len(kernels) == 1:
            out[kernels[0]] = s
        else:
            raise UsageError(
                f"--sig {s!r}: say which kernel it is for ('KERNEL: x=Global[float32], ...') "
                "or name exactly one kernel with -k"
            )
    return out


def sig_kwargs(mod: Module, kernel: Kernel, sig: str) -> dict[str, Any]:
    """``"x=Global[float32], n=int32, BLOCK=256"`` → keyword arguments of ``specialize``."""
    try:
        call = ast.parse(f"f({sig})", mode="eval").body
    except SyntaxError as e:
        raise UsageError(f"--sig for {kernel.__name__}: {e.msg}: {sig!r}") from None
    assert isinstance(call, ast.Call)
    if call.args or any(k.arg is None for k in call.keywords):
        raise UsageError(
            f"--sig for {kernel.__name__}: write name=type pairs, e.g. "
            f"'x=Global[float32], n=int32', got {sig!r}"
        )
    ns = namespace(mod)
    out: dict[str, Any] = {}
    for kw in call.keywords:
        assert kw.arg is not None
        try:
            out[kw.arg] = eval(compile(ast.Expression(kw.value), "<--sig>", "eval"), ns)  # noqa: S307
        except Exception as e:
            raise UsageError(
                f"--sig for {kernel.__name__}: {kw.arg}={ast.unparse(kw.value)}: {e}"
            ) from None
    return out


def is_generic(kernel: Kernel) -> bool:
    """Some parameter has no annotation, or is a constexpr: it needs ``--sig``."""
    anns = kernel.annotations()
    return any(
        anns.get(n) is None or isinstance(anns.get(n), _Constexpr) for n in kernel.param_names
    )


def specialization(mod: Module, kernel: Kernel, sig: str | None) -> Specialization:
    """The kernel's specialization for ``sig`` (or its annotations)."""
    if sig is None:
        return kernel.specialize()
    kwargs = sig_kwargs(mod, kernel, sig)
    try:
        return kernel.specialize(**kwargs)
    except TypeError as e:
        raise UsageError(f"--sig for {kernel.__name__}: {e}") from None


def select(mod: Module, names: list[str] | None) -> list[Kernel]:
    """The module's kernels, or those named with ``-k`` (in that order)."""
    if not names:
        return list(mod.kernels)
    by_name = {k.__name__: k for k in mod.kernels}
    out = []
    for n in names:
        k = by_name.get(n)
        if k is None:
            known = ", ".join(sorted(by_name)) or "none"
            raise UsageError(f"{mod.path}: no kernel named {n!r} (kernels: {known})")
        out.append(k)
    return out


def rel(path: str) -> str:
    """``path`` relative to the current directory (``#line`` names, diagnostics)."""
    if path.startswith("<"):
        return path
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return path
