"""Pickling kernels, device functions and reductions, so they travel to process workers
(``multiprocessing``, Dask) and across the network.

Two ways, chosen per object when it is pickled:

- **by reference**: an object reachable as ``<module>.<qualname>`` from an importable module
  (not ``__main__``) pickles as that name; the receiver imports the module and gets the very
  object it holds there, with its specializations and built programs.
- **by source**: everything else (kernels defined in a script's ``__main__``, in a notebook
  cell, or inside a function: ``def make(T): @clpy.kernel def k(...)``) pickles as its source
  lines, file name and first line, and the values of the global and closure names the source
  mentions. The receiver puts the lines back into ``linecache`` at their file and line, so
  compile errors, simulator reports and build logs raised there name the same file, line and
  column, with the source line, as they would on the sender. A module registered with
  ``cloudpickle.register_pickle_by_value`` is pickled by source too (its workers need not
  have it installed).

Objects pickled by source carry a token made once per object; a process keeps what it
rebuilt per token, so a kernel sent with every Dask task is parsed, specialized and built
once per worker process, not once per task.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import linecache
import sys
import textwrap
import threading
import types
import uuid
from typing import Any

# token -> the object (rebuilt here, or pickled from here); kept for the process's life, so
# repeated unpickling of one kernel reuses its caches.
_BY_TOKEN: dict[str, Any] = {}
_LOCK = threading.Lock()


class ModuleRef:
    """A module among a kernel's globals (``clpy``, ``np``, ``math``), pickled by name."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __reduce__(self) -> Any:
        return (ModuleRef, (self.name,))

    def load(self) -> types.ModuleType:
        return importlib.import_module(self.name)


def reference(obj: Any, fn: Any) -> tuple[str, str] | None:
    """``(module, qualname)`` if ``obj`` is what that name holds in an importable module
    (and the module is not registered for pickling by value); else None."""
    module = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", "")
    if not module or module == "__main__" or "<locals>" in qualname:
        return None
    if module in sys.modules and _by_value(module):
        return None
    try:
        found: Any = importlib.import_module(module)
        for part in qualname.split("."):
            found = getattr(found, part)
    except Exception:  # noqa: BLE001 - not importable as written: send the source
        return None
    return (module, qualname) if found is obj else None


def _by_value(module: str) -> bool:
    """Whether cloudpickle was told to pickle ``module`` by value (only if it is loaded)."""
    cp = sys.modules.get("cloudpickle")
    listing = getattr(cp, "list_registry_pickle_by_value", None)
    if listing is None:
        return False
    registered = listing()
    return any(module == m or module.startswith(m + ".") for m in registered)


def load_reference(module: str, qualname: str) -> Any:
    """The receiving end of a by-reference pickle."""
    found: Any = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    return found


def token(obj: Any) -> str:
    """The object's pickling token (made on first use); the object is registered under it so
    that unpickling in this same process gives the object back."""
    tok = obj.__dict__.get("_pickle_token")
    if tok is None:
        with _LOCK:
            tok = obj.__dict__.get("_pickle_token")
            if tok is None:
                tok = obj.__dict__["_pickle_token"] = uuid.uuid4().hex
                _BY_TOKEN[tok] = obj
    return tok


def reduce_callable(obj: Any) -> Any:
    """``__reduce__`` of a ``Kernel`` or ``Func`` (clpy/kernel.py): by reference when
    importable, else by source (see the module docstring)."""
    fn = obj.py_function
    ref = reference(obj, fn)
    if ref is not None:
        return (load_reference, ref)
    try:
        lines, first = inspect.getsourcelines(fn)
        file = inspect.getsourcefile(fn) or inspect.getfile(fn)
    except (OSError, TypeError) as e:
        raise TypeError(
            f"cannot pickle {obj!r}: its source is unavailable ({e}); define it in a file, "
            "a notebook cell or an importable module"
        ) from None
    names = _names_in("".join(lines))
    closure: dict[str, Any] = {}
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                closure[name] = cell.cell_contents
            except ValueError:  # an empty cell
                pass
    env: dict[str, Any] = {}
    for name in names:
        if name in closure:
            env[name] = _portable(closure[name])
        elif name in fn.__globals__:
            env[name] = _portable(fn.__globals__[name])
    def_locals = {n: _portable(v) for n, v in obj._def_locals.items() if n in names}
    extra = {"fp_contract": obj.fp_contract} if hasattr(obj, "fp_contract") else {}
    header = (type(obj), token(obj), fn.__name__, fn.__module__, file, first, tuple(lines), extra)
    return (rebuild_callable, header, (env, def_locals), None, None, set_callable_state)


def rebuild_callable(
    cls: type,
    tok: str,
    name: str,
    module: str,
    file: str,
    first: int,
    lines: tuple[str, ...],
    extra: dict[str, Any],
) -> Any:
    """The receiving end of a by-source pickle: the object this process already has for the
    token, or a new one from the source (its globals are filled by ``set_callable_state``)."""
    with _LOCK:
        known = _BY_TOKEN.get(tok)
        if known is not None:
            return known
        _remember_lines(file, first, lines)
        ns: dict[str, Any] = {"__name__": module, "__builtins__": builtins}
        exec(compile(_def_only(lines, first), file, "exec"), ns)  # noqa: S102 - its own source
        obj = cls(ns[name], **extra)
        obj._def_locals = {}  # the constructor looked at this frame; the state sets them
        obj.__dict__["_pickle_token"] = tok
        obj.__dict__["_pickle_pending"] = True
        _BY_TOKEN[tok] = obj
        return obj


def set_callable_state(obj: Any, state: tuple[dict[str, Any], dict[str, Any]]) -> None:
    """Globals, closure values and the defining function's locals, once per rebuilt object."""
    with _LOCK:
        if not obj.__dict__.pop("_pickle_pending", False):
            return
        env, def_locals = state
        obj.py_function.__globals__.update({k: _restore(v) for k, v in env.items()})
        obj._def_locals = {k: _restore(v) for k, v in def_locals.items()}


def reduce_object(obj: Any, fn: Any, cls: type, args: tuple[Any, ...]) -> Any:
    """``__reduce__`` for an object built as ``cls(*args)`` (a ``Reduction``): by reference
    when importable, else rebuilt once per process and token."""
    ref = reference(obj, fn)
    if ref is not None:
        return (load_reference, ref)
    return (rebuild_object, (token(obj), cls, args))


def rebuild_object(tok: str, cls: type, args: tuple[Any, ...]) -> Any:
    with _LOCK:
        known = _BY_TOKEN.get(tok)
        if known is None:
            known = cls(*args)
            known.__dict__["_pickle_token"] = tok
            _BY_TOKEN[tok] = known
        return known


def _names_in(source: str) -> set[str]:
    """The free names of the source: those it reads (body, annotations, decorators) minus
    the function's parameters and the names it assigns (a kernel's ``x`` is not the ``x``
    that may be lying around in ``__main__``)."""
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return set()
    loads: set[str] = set()
    local: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            (loads if isinstance(n.ctx, ast.Load) else local).add(n.id)
        elif isinstance(n, ast.arg):
            local.add(n.arg)
    return loads - local


def _portable(value: Any) -> Any:
    return ModuleRef(value.__name__) if isinstance(value, types.ModuleType) else value


def _restore(value: Any) -> Any:
    return value.load() if isinstance(value, ModuleRef) else value


def _remember_lines(file: str, first: int, lines: tuple[str, ...]) -> None:
    """Put the function's lines at their place in ``linecache`` for ``file`` (kept with
    other functions' lines from the same file; ``mtime`` None so ``checkcache`` keeps it).
    A file that exists here with the same lines is left to linecache."""
    have = linecache.getlines(file)
    end = first - 1 + len(lines)
    if have[first - 1 : end] == list(lines):
        return
    merged = list(have) + ["\n"] * max(0, end - len(have))
    merged[first - 1 : end] = lines
    linecache.cache[file] = (sum(map(len, merged)), None, merged, file)


def _def_only(lines: tuple[str, ...], first: int) -> str:
    """Source text whose ``def`` sits at its original line and column, decorators dropped
    (the receiver wraps the function itself): blank lines in front, and an ``if True:``
    just above an indented ``def``."""
    text = "".join(lines)
    tree = ast.parse(textwrap.dedent(text))
    fdef = tree.body[0]
    skip = fdef.lineno - 1  # decorator lines before the def
    body = lines[skip:]
    line = first + skip
    indented = body[0][: len(body[0]) - len(body[0].lstrip())] != ""
    if indented:
        return "\n" * (line - 2) + "if True:\n" + "".join(body)
    return "\n" * (line - 1) + "".join(body)
