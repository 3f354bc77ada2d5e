"""``@clpy.kernel`` and ``@clpy.func``: lazily parsed, specialized per signature."""

from __future__ import annotations

import ast
import dataclasses
import functools
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from clpy.abi import Param, kernel_params
from clpy.builtins.reductions import Reduction
from clpy.emit.lower_uniform import check_uniform
from clpy.emit.program import emit_program
from clpy.errors import CompileError, KernelTypeError, RecursionNotAllowedError
from clpy.frontend.blocks import rebuilt_kernel
from clpy.frontend.build import build_function, check_signature
from clpy.frontend.context import CompileSession, PyValue
from clpy.frontend.source import ParsedFunction, parse_function
from clpy.ir.contract import contract_function
from clpy.ir.nesting import deepest_ast, deepest_ir, nesting_guard
from clpy.ir.nodes import CallFunc, Expr, Function
from clpy.notebook import kernel_html, kernel_markdown
from clpy.pickling import reduce_callable
from clpy.runtime.launch import KernelLaunches, Launcher, arg_type
from clpy.runtime.subgroup_info import sub_group_info
from clpy.types import catalog as C
from clpy.types.annotations import _Constexpr, const_key, constexpr, resolve_annotation
from clpy.types.core import AddressSpace, ArrayType, PointerType, ScalarType, Type, VectorType
from clpy.types.structs import StructType

_UNSET = object()


class _Callable:
    """Shared parts of kernels and device functions: lazy parse, annotations, cache."""

    def __init__(self, fn: Callable[..., Any], is_kernel: bool) -> None:
        self.py_function = fn
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn
        self.is_kernel = is_kernel
        self._parsed: ParsedFunction | None = None
        self._annotations: dict[str, Any] | None = None
        self._lock = threading.Lock()
        # Kernel factories (def make(T): @clpy.kernel def k(x: Global[T])): Python does not
        # close over names used only in annotations, so the defining scope is kept here.
        self._def_locals = _defining_locals()

    @property
    def parsed(self) -> ParsedFunction:
        if self._parsed is None:
            parsed = parse_function(self.py_function)
            if self._def_locals:
                closure = {**self._def_locals, **parsed.closure}
                parsed = dataclasses.replace(parsed, closure=closure)
            check_signature(parsed)
            self._parsed = parsed
        return self._parsed

    @property
    def param_names(self) -> list[str]:
        return [a.arg for a in self.parsed.tree.args.args]

    def annotations(self) -> dict[str, Any]:
        """Parameter annotations resolved to clpy types (or ``constexpr``); missing = absent."""
        if self._annotations is None:
            parsed = self.parsed
            out: dict[str, Any] = {}
            raw = getattr(self.py_function, "__annotations__", {})
            for a in parsed.tree.args.args:
                if a.annotation is None:
                    continue
                ann = raw.get(a.arg, _UNSET)
                if isinstance(ann, str) or ann is _UNSET:
                    ann = self._eval_annotation(a.annotation)
                out[a.arg] = self._resolve(ann, a)
            if parsed.tree.returns is not None:
                ann = raw.get("return", _UNSET)
                if isinstance(ann, str) or ann is _UNSET:
                    ann = self._eval_annotation(parsed.tree.returns)
                out["return"] = self._resolve(ann, parsed.tree.returns)
            self._annotations = out
        return self._annotations

    def _deepest(self) -> tuple[int, Any]:
        depth, node = deepest_ast(self.parsed.tree)
        return depth, self.parsed.loc(node)

    def _eval_annotation(self, node: ast.expr) -> Any:
        parsed = self.parsed
        simple = _eval_simple(node, parsed.closure, parsed.globals)
        if simple is not _UNSET:
            return simple
        env = {**parsed.globals, **parsed.closure}
        try:
            return eval(compile(ast.Expression(node), parsed.file, "eval"), env)  # noqa: S307
        except Exception as e:
            raise KernelTypeError(
                f"cannot evaluate annotation {ast.unparse(node)!r}: {e}", parsed.loc(node)
            ) from None

    def _resolve(self, ann: Any, node: ast.AST) -> Any:
        if isinstance(ann, _Constexpr):
            return ann
        try:
            return resolve_annotation(ann)
        except TypeError as e:
            raise KernelTypeError(str(e), self.parsed.loc(node)) from None


@dataclass(frozen=True, eq=False)
class Specialization:
    """A kernel compiled for one signature: its typed IR and emitted sources."""

    kernel: Kernel
    function: Function
    constexprs: tuple[tuple[str, Any], ...]
    _sources: dict[tuple[Any, ...], str] = field(default_factory=dict, repr=False)

    @property
    def ir(self) -> Function:
        return self.function

    @property
    def source(self) -> str:
        return self.source_for("opencl-c-2.0")

    def source_for(
        self, target: Any, line_directives: bool = True, noalias: frozenset[str] = frozenset()
    ) -> str:
        """The program for ``target``; ``noalias`` names pointer parameters to declare
        ``restrict`` (the launcher's, when it saw they reach memory no other argument does)."""
        key = (target, line_directives, noalias)  # a Target (info included) is hashable
        text = self._sources.get(key)
        if text is None:
            fn = dataclasses.replace(self.function, noalias=noalias) if noalias else self.function
            fns = [fn, *fn.callees]
            with nesting_guard(lambda: deepest_ir(fns)):
                text = emit_program(fn, target, line_directives=line_directives)
            self._sources[key] = text
        return text

    @functools.cached_property
    def abi(self) -> tuple[Param, ...]:
        """The parameter ABI (``clpy.abi``): one object per compiled kernel parameter, with
        its index among the launch arguments."""
        return kernel_params(self.function, self.kernel.param_names, self.kernel.__name__)


class Kernel(_Callable):
    """A ``@clpy.kernel``. ``k.source`` is its OpenCL C; ``k[gsize, lsize](*args)`` runs it."""

    def __init__(self, fn: Callable[..., Any], fp_contract: bool | None = None) -> None:
        super().__init__(fn, True)
        # Fuse `a*b + c` into fma (clpy/ir/contract.py); None: CLPY_FP_CONTRACT, else off.
        self.fp_contract = _fp_contract_default() if fp_contract is None else bool(fp_contract)
        self._cache: dict[tuple[Any, ...], Specialization] = {}
        self._default_spec: Specialization | None = None  # specialize() with no arguments
        # Launch plans and the signature facts the launch fast path needs, owned by the
        # runtime (clpy/runtime/launch.py).
        self.launches = KernelLaunches(self)

    def specialize(self, **kwargs: Any) -> Specialization:
        """The specialization for the given parameter types (and ``constexpr`` values).

        Annotated parameters need not be given. ``k.specialize(x=Global[float32], n=int32)``
        """
        return self.specialize_with(kwargs, None)

    def specialize_with(self, kwargs: dict[str, Any], fp_contract: bool | None) -> Specialization:
        """``specialize(**kwargs)`` with contraction on or off for this specialization
        (``None``: the kernel's ``fp_contract``)."""
        contract = self.fp_contract if fp_contract is None else bool(fp_contract)
        anns = self.annotations()
        names = self.param_names
        unknown = set(kwargs) - set(names)
        if unknown:
            raise TypeError(
                f"{self.__name__}.specialize(): no parameter named "
                f"{sorted(unknown)[0]!r}; parameters are {', '.join(names)}"
            )
        types: list[tuple[str, Type]] = []
        consts: list[tuple[str, Any]] = []
        for name in names:
            ann = anns.get(name)
            if isinstance(ann, _Constexpr):
                if name not in kwargs:
                    raise TypeError(
                        f"{self.__name__}: constexpr parameter {name!r} needs a "
                        "value: pass it to specialize() or at launch"
                    )
                consts.append((name, _constexpr_value(name, kwargs[name])))
                continue
            given = kwargs.get(name, ann)
            if given is None:
                raise TypeError(
                    f"{self.__name__}: parameter {name!r} has no annotation; give "
                    f"its type: {self.__name__}.specialize({name}=...) or launch it "
                    "with arguments"
                )
            try:
                t = resolve_annotation(given)
            except TypeError as e:
                raise TypeError(f"{self.__name__}: parameter {name!r}: {e}") from None
            if ann is not None and name in kwargs and ann is not t:
                raise TypeError(f"{self.__name__}: parameter {name!r} is annotated {ann}, not {t}")
            try:
                types.append((name, _check_param_type(self.__name__, name, t)))
            except TypeError as e:
                node = next(a for a in self.parsed.tree.args.args if a.arg == name)
                raise KernelTypeError(str(e), self.parsed.loc(node)) from None
        return self._specialization(tuple(types), tuple(consts), contract)

    def _specialization(
        self,
        types: tuple[tuple[str, Type], ...],
        consts: tuple[tuple[str, Any], ...],
        contract: bool = False,
    ) -> Specialization:
        key = (types, tuple((n, const_key(v)) for n, v in consts), contract)
        spec = self._cache.get(key)
        if spec is None:
            with self._lock:
                spec = self._cache.get(key)
                if spec is None:
                    session = CompileSession()
                    with nesting_guard(self._deepest):
                        fn = build_function(self.parsed, types, dict(consts), True, session)
                        check_uniform(fn, self.parsed.globals)  # errors; warnings once per line
                    if contract:
                        old, fn = fn, contract_function(fn)
                        rebuilt_kernel(session, self.parsed, types, old, fn)
                    spec = Specialization(self, fn, consts)
                    self._cache[key] = spec
        return spec

    def _default(self) -> Specialization:
        spec = self._default_spec
        if spec is None:
            spec = self._default_spec = self.specialize()
        return spec

    @property
    def source(self) -> str:
        """OpenCL C 2.0 source of a fully annotated kernel."""
        return self._default().source

    def source_for(self, target: Any, line_directives: bool = True) -> str:
        """Source for another target: ``"opencl-c-1.2"``, ``"opencl-c-3.0"``, a ``Target``."""
        return self._default().source_for(target, line_directives)

    @property
    def ir(self) -> Function:
        return self._default().function

    def sub_group_info(self, device: Any, local_size: Any, **types: Any) -> tuple[int, int]:
        """``(max sub-group size, sub-group count)`` for a launch with ``local_size``."""
        return sub_group_info(self, device, local_size, **types)

    def build_for(
        self, types: tuple[tuple[str, Type], ...], session: CompileSession, loc: Any
    ) -> Function:
        """The kernel's IR for ``types``, built in ``session`` as the child of a device-side
        enqueue (clpy/frontend/blocks.py); not cached: each compile session builds its own."""
        del loc  # errors point into the child's own source
        return build_function(self.parsed, types, {}, True, session)

    def clear_cache(self) -> None:
        self._cache.clear()
        self._default_spec = None
        self.launches.clear()

    def __getitem__(self, sizes: Any) -> Launcher:
        return Launcher(self, sizes)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(
            f"kernel {self.__name__} is launched with sizes: "
            f"{self.__name__}[global_size, local_size](...)"
        )

    def __repr__(self) -> str:
        return f"<clpy.kernel {self.__name__}>"

    def _repr_html_(self) -> str:
        """Jupyter: signature, specializations and the highlighted OpenCL C."""
        return kernel_html(self)

    def _repr_markdown_(self) -> str:
        return kernel_markdown(self)

    def __reduce__(self) -> Any:
        """By module reference when importable, else by source (clpy/pickling.py)."""
        return reduce_callable(self)


class Func(_Callable):
    """A ``@clpy.func`` device function, emitted once per signature it is called with."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        super().__init__(fn, False)
        self._cache: dict[tuple[Type, ...], Function] = {}

    def __clpy_call__(self, builder: Any, node: ast.Call) -> Expr:
        st = builder.state
        args: list[Expr] = []
        for a in node.args:
            v = builder.value(a)
            if isinstance(v, PyValue):
                st.fail(a, f"cannot pass {v.value!r} to device function {self.__name__}")
            args.append(v)
        names = self.param_names
        if len(args) != len(names):
            st.fail(node, f"{self.__name__}() takes {len(names)} argument(s), got {len(args)}")
        anns = self.annotations()
        types: list[tuple[str, Type]] = []
        for name, arg in zip(names, args):
            ann = anns.get(name)
            if isinstance(ann, _Constexpr):
                st.fail(node, "constexpr parameters are only for kernels")
            types.append((name, ann if ann is not None else arg.type))
        fn = self.build_for(tuple(types), st.session, st.loc(node))
        cargs = tuple(builder.coerce(a, t, node) for a, (_, t) in zip(args, types))
        for p, a in zip(fn.params, cargs):
            if p.name in fn.written:
                builder.note_write(a, node)
        for f in (fn, *fn.callees):
            if f not in st.callees:
                st.callees.append(f)
        return CallFunc(fn.ret, st.loc(node), fn, cargs)

    def build_for(
        self, types: tuple[tuple[str, Type], ...], session: CompileSession, loc: Any
    ) -> Function:
        key = tuple(t for _, t in types)
        fn = self._cache.get(key)
        if fn is not None:
            return fn
        if self in session.stack:
            chain = " → ".join(f.__name__ for f in (*session.stack, self))
            raise RecursionNotAllowedError(
                f"recursive call {chain}: OpenCL C does not allow recursion (spec §1.9)", loc
            )
        session.stack.append(self)
        try:
            ret = self.annotations().get("return")
            # Specializations share the user's name; the emitter makes C names unique.
            with nesting_guard(self._deepest):
                fn = build_function(self.parsed, types, {}, False, session, ret, name=self.__name__)
        finally:
            session.stack.pop()
        self._cache[key] = fn
        return fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"@clpy.func {self.__name__} can only be called from kernel code")

    def __repr__(self) -> str:
        return f"<clpy.func {self.__name__}>"

    def __reduce__(self) -> Any:
        """By module reference when importable, else by source (clpy/pickling.py)."""
        return reduce_callable(self)


def kernel(fn: Callable[..., Any] | None = None, *, fp_contract: bool | None = None) -> Any:
    """Declare an OpenCL kernel written in Python.

    >>> @clpy.kernel
    ... def scale(x: Global[float32], a: float32):
    ...     x[clpy.get_global_id(0)] *= a

    ``@clpy.kernel(fp_contract=True)`` fuses ``a*b + c`` into ``fma(a, b, c)`` by the rule of
    ``clpy.ir.contract`` (one rounding instead of two, on every device and the simulator
    alike); the default is off (``CLPY_FP_CONTRACT=1`` in the environment turns it on for
    kernels that do not say), and a launch can override it: ``k[g, l](..., fp_contract=True)``.
    """
    if fn is None:
        return lambda f: kernel(f, fp_contract=fp_contract)
    if not callable(fn):
        raise TypeError("@clpy.kernel decorates a function")
    return Kernel(fn, fp_contract)


def reduction(identity: Any) -> Callable[[Callable[..., Any]], Reduction]:
    """Declare a user-defined reduction (like OpenMP's ``declare reduction``) on a combiner
    ``(a: T, b: T) -> T``; ``identity`` is a host value of ``T`` (number, vector lanes, or a
    struct value such as ``ValIdx(-np.inf, 0)``)."""

    def wrap(fn: Callable[..., Any]) -> Reduction:
        return Reduction(fn if isinstance(fn, Func) else Func(fn), identity)

    return wrap


def func(fn: Callable[..., Any]) -> Func:
    """Declare a device function callable from kernels and other device functions."""
    if not callable(fn):
        raise TypeError("@clpy.func decorates a function")
    return Func(fn)


def _defining_locals() -> dict[str, Any]:
    """A snapshot of the local names of the function that defines a kernel (the first frame
    outside this module), or {} at module level, where the globals serve."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename == __file__:
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None or frame.f_locals is frame.f_globals:
        return {}
    return dict(frame.f_locals)


def _eval_simple(node: ast.expr, closure: dict[str, Any], globs: dict[str, Any]) -> Any:
    """Evaluate the common annotation shapes (``float32``, ``clpy.float4``,
    ``Global[float32]``) without compiling; ``_UNSET`` for anything else."""
    import builtins

    if isinstance(node, ast.Name):
        for ns in (closure, globs, vars(builtins)):
            if node.id in ns:
                return ns[node.id]
        return _UNSET
    if isinstance(node, ast.Attribute):
        base = _eval_simple(node.value, closure, globs)
        if base is _UNSET:
            return _UNSET
        return getattr(base, node.attr, _UNSET)
    if isinstance(node, ast.Subscript) and not isinstance(node.slice, (ast.Tuple, ast.Slice)):
        base = _eval_simple(node.value, closure, globs)
        index = _eval_simple(node.slice, closure, globs)
        if base is _UNSET or index is _UNSET:
            return _UNSET
        try:
            return base[index]
        except Exception:
            return _UNSET
    return _UNSET


def _fp_contract_default() -> bool:
    v = os.environ.get("CLPY_FP_CONTRACT", "").strip().lower()
    if v in ("", "0", "off", "false", "no"):
        return False
    if v in ("1", "on", "true", "yes"):
        return True
    raise ValueError(f"CLPY_FP_CONTRACT={v!r}: use 1 or 0")


def _check_param_type(kname: str, name: str, t: Type) -> Type:
    if t is C.void:
        raise TypeError(f"{kname}: parameter {name!r}: void is not a parameter type")
    if isinstance(t, PointerType) and isinstance(t.elem, PointerType):
        raise TypeError(
            f"{kname}: parameter {name!r}: kernel parameters cannot be pointers "
            "to pointers (spec §1.9)"
        )
    if isinstance(t, ArrayType):
        raise TypeError(
            f"{kname}: parameter {name!r}: arrays are not parameters; pass a pointer (Global[...])"
        )
    if isinstance(t, PointerType) and t.space is AddressSpace.PRIVATE:
        raise TypeError(
            f"{kname}: parameter {name!r}: kernel pointer parameters must be "
            "Global, Constant or Local (spec §1.5)"
        )
    if isinstance(t, ScalarType) and t is C.bool_:
        raise TypeError(
            f"{kname}: parameter {name!r}: bool kernel parameters are not allowed "
            "(spec §1.9); use int"
        )
    if isinstance(t, ScalarType) and t in C.SIZE_SCALARS:
        raise TypeError(
            f"{kname}: parameter {name!r}: {t} kernel parameters are not allowed "
            "(spec §1.9); use long or ulong"
        )
    return t


def _constexpr_value(name: str, v: Any) -> Any:
    if isinstance(v, (bool, int, float, np.generic, ScalarType, VectorType, StructType)):
        return v
    raise TypeError(f"constexpr parameter {name!r}: {v!r} is not a number or a clpy type")


__all__ = [
    "Kernel",
    "Func",
    "Specialization",
    "kernel",
    "func",
    "constexpr",
    "arg_type",
    "CompileError",
]
