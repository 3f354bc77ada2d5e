"""The built-in registry: each OpenCL built-in is declared once, here or in a family module.

A declaration carries the clpy name, the OpenCL spelling, the overloads (gentype expansion done
by the family module), the type rule (overload resolution by default), the simulator
implementation and the docstring. The type checker, the emitter and the simulator all read the
same ``Builtin`` object.

    declare("fma", family="math", doc="a*b+c rounded once.",
            overloads=[Overload((t, t, t), t) for t in floatn()], sim=_fma)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from clpy.types import catalog as C
from clpy.types.core import PointerType, ScalarType, Type, VectorType


@dataclass(frozen=True)
class Overload:
    """One concrete signature of a built-in: parameter types and return type."""

    params: tuple[Type, ...]
    ret: Type

    def __str__(self) -> str:
        return f"({', '.join(str(p) for p in self.params)}) -> {self.ret}"


@dataclass(frozen=True)
class ArgInfo:
    """What the type rule knows about one argument: its type, whether it is a weakly typed
    literal (``2``, ``1.5``), and its constant value if it is one."""

    type: Type
    weak: bool = False
    value: Any = None


class NoMatch(Exception):
    """Raised by a type rule; the frontend turns it into a located ``KernelTypeError``."""


TypeRule = Callable[["Builtin", Sequence[ArgInfo]], Overload]
SimImpl = Callable[..., Any]
Spelling = Callable[[Overload], str]


@dataclass(eq=False)
class Builtin:
    """A built-in function callable from kernels as ``clpy.<name>``.

    ``spelling`` gives the OpenCL name for an overload when it is not ``cl_name`` (e.g. the
    sub-group or lowered forms). ``features`` lists optional OpenCL features the call needs.
    ``sim`` is filled by the simulator for every family (sim/ registers it lazily).
    ``const_args`` are indices of parameters that must be compile-time constants.
    ``writes_args`` are indices of pointer parameters the built-in writes through.
    """

    name: str
    family: str
    doc: str
    overloads: tuple[Overload, ...] = ()
    cl_name: str = ""
    rule: TypeRule | None = None
    spelling: Spelling | None = None
    sim: SimImpl | None = None
    features: frozenset[str] = frozenset()
    const_args: frozenset[int] = frozenset()
    writes_args: frozenset[int] = frozenset()
    uniform: bool = False  # must be reached by all work-items of a group (barriers, collectives)
    attrs: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.cl_name:
            self.cl_name = self.name
        self.__doc__ = self.doc

    def resolve(self, args: Sequence[ArgInfo]) -> Overload:
        if self.rule is not None:
            return self.rule(self, args)
        return resolve_overload(self, args)

    def spell(self, ov: Overload) -> str:
        return self.spelling(ov) if self.spelling else self.cl_name

    def signatures_text(self, limit: int = 12) -> str:
        shown = [f"  {self.name}{ov}" for ov in self.overloads[:limit]]
        if len(self.overloads) > limit:
            shown.append(f"  ... and {len(self.overloads) - limit} more")
        return "\n".join(shown)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            f"clpy.{self.name} can only be called inside a @clpy.kernel or @clpy.func")

    def __repr__(self) -> str:
        return f"<clpy built-in {self.name}>"


REGISTRY: dict[str, Builtin] = {}


def declare(name: str, *, family: str, doc: str, overloads: Iterable[Overload] = (),
            **kwargs: Any) -> Builtin:
    """Register a built-in. A second declaration of the same name is a programming error."""
    if name in REGISTRY:
        raise ValueError(f"built-in {name!r} declared twice")
    b = Builtin(name=name, family=family, doc=doc, overloads=tuple(overloads), **kwargs)
    REGISTRY[name] = b
    return b


# ----------------------------------------------------------------------------- gentypes


def gentypes(scalars: Iterable[ScalarType], sizes: Iterable[int] = (1, 2, 3, 4, 8, 16)
             ) -> list[Type]:
    """Scalars and their vectors: the spec's ``gentype`` for the given element types."""
    out: list[Type] = []
    sizes = tuple(sizes)
    for s in scalars:
        for n in sizes:
            out.append(s if n == 1 else VectorType(s, n))
    return out


def floatn(scalars: Iterable[ScalarType] = C.FLOAT_SCALARS) -> list[Type]:
    """The spec's ``gentype`` for math functions: float, double, half and their vectors."""
    return gentypes((C.float_, C.double, C.half) if scalars is C.FLOAT_SCALARS else scalars)


def like(t: Type, elem: ScalarType) -> Type:
    """``elem`` with the vector width of ``t`` (``intn`` for ``floatn`` and so on)."""
    return VectorType(elem, t.n) if isinstance(t, VectorType) else elem


# ----------------------------------------------------------------------------- resolution


def conversion_cost(arg: ArgInfo, param: Type) -> int | None:
    """How much an implicit conversion from ``arg`` to ``param`` costs (None: not allowed).

    OpenCL C's overload resolution is strict (an ``int`` argument to ``sqrt`` is ambiguous);
    clpy is friendlier for scalars: a weak literal adopts the parameter's type, and a typed
    scalar converts like C when exactly one cheapest overload remains. Vectors never convert
    implicitly (spec §1.2.1).
    """
    t = arg.type
    if t is param:
        return 0
    if isinstance(param, PointerType) and isinstance(t, PointerType):
        if param.elem is t.elem and (param.space is t.space or param.space.value == ""):
            return 0 if param.space is t.space else 1
        return None
    if not (isinstance(t, ScalarType) and isinstance(param, ScalarType)):
        return None
    if t.is_bool or param.is_bool:
        return 8 if not param.is_bool else None
    if arg.weak:
        if t.is_float and not param.is_float:
            return None
        return 1 if t.is_float == param.is_float else 2
    if t.is_float and not param.is_float:
        return None  # float → int in a call is almost always a bug; use int(...)
    if not t.is_float and param.is_float:
        return 4 + (0 if param is C.float_ else 1)
    if param.bits > t.bits:
        return 3
    if param.bits == t.bits:
        return 5
    return None


def resolve_overload(b: Builtin, args: Sequence[ArgInfo]) -> Overload:
    """Pick the cheapest overload; raise ``NoMatch`` listing the valid signatures."""
    best: Overload | None = None
    best_cost = 1 << 30
    for ov in b.overloads:
        if len(ov.params) != len(args):
            continue
        cost = 0
        for a, p in zip(args, ov.params):
            c = conversion_cost(a, p)
            if c is None:
                break
            cost += c
        else:
            if cost < best_cost:
                best, best_cost = ov, cost
    if best is None:
        got = ", ".join(str(a.type) for a in args)
        raise NoMatch(f"no signature of {b.name} takes ({got}); valid signatures:\n"
                      f"{b.signatures_text()}")
    return best
