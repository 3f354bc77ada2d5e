"""The built-in registry: each OpenCL built-in is declared once, here or in a family module.

A declaration carries the clpy name, the OpenCL spelling, the overloads (gentype expansion done
by the family module), the type rule (overload resolution by default), where its simulator
implementation lives, how the emitter lowers it on targets that lack it, and the docstring.
The type checker, the emitter and the simulator all read the same ``Builtin`` object:

    declare("fma", family="math", doc="a*b+c rounded once.",
            overloads=[Overload((t, t, t), t) for t in floatn()])

Typed descriptors say what the emitter and the simulator need to know beyond the signature:
``Lowering`` (which entry of clpy/emit/lowering.py's table replaces the call, and when),
``Collective`` (scope, mode, operator), ``AtomicSpec``, ``Conversion``, ``VectorAccess``.
The registry never imports the emitter or the simulator: a lowering is named by ``kind`` (the
emitter's table maps it to code) and the simulator implementation by module (``sim``, by
default the family's entry in ``SIM_MODULES``), resolved lazily on first use
(``Builtin.sim_impl()``): the module's ``IMPLS`` maps the built-in's name to its function.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from clpy.types import catalog as C
from clpy.types.core import AddressSpace, PointerType, ScalarType, Type, VectorType

if TYPE_CHECKING:
    from clpy.builtins.constants import NamedConstant


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
FoldType = Callable[["Builtin", Type], int]

# The simulator module implementing each family (its ``IMPLS`` is keyed by built-in name).
SIM_MODULES: dict[str, str] = {
    "math": "clpy_sim.builtins.math",
    "integer": "clpy_sim.builtins.integer",
    "common": "clpy_sim.builtins.common",
    "integer/common": "clpy_sim.builtins.common",
    "geometric": "clpy_sim.builtins.geometric",
    "relational": "clpy_sim.builtins.relational",
    "conversions": "clpy_sim.builtins.conversions",
    "vload/vstore": "clpy_sim.builtins.vector",
    "misc-vector": "clpy_sim.builtins.vector",
    "address-space": "clpy_sim.builtins.vector",
    "work-item": "clpy_sim.builtins.workitem",
    "synchronization": "clpy_sim.builtins.sync",
    "work-group": "clpy_sim.collectives",
    "sub-group": "clpy_sim.collectives",
    "atomics": "clpy_sim.atomics",
    "pipes": "clpy_sim.pipes",
    "images": "clpy_sim.images",
    "enqueue": "clpy_sim.enqueue",
}


@dataclass(frozen=True)
class Lowering:
    """How the emitter replaces a call where the target lacks the built-in: ``kind`` names an
    entry of ``clpy/emit/lowering.py``'s ``LOWERINGS`` table. Used when the target lacks one of
    the built-in's ``features``, is older than ``min_version``, or always with ``always``."""

    kind: str
    min_version: tuple[int, int] = (0, 0)
    always: bool = False


@dataclass(frozen=True)
class Collective:
    """A work-group or sub-group function. ``scope``: ``"wg"`` or ``"sg"``; ``mode``: ``all
    any broadcast reduce scan_inclusive scan_exclusive`` (or ``info``/``barrier`` for the
    sub-group work-item functions and barrier); ``op``: a reduction operator name of
    clpy/ir/operators.py (``add`` ... ``max``), ``"user"`` for a ``@clpy.reduction`` (the call
    carries the combiner: ``CallBuiltin.combiner``), or ``""``."""

    scope: str
    mode: str
    op: str = ""


@dataclass(frozen=True)
class AtomicSpec:
    """What an atomic built-in does: ``op`` (add sub xchg inc dec cmpxchg min max and or xor
    load store init cas_strong cas_weak flag_set flag_clear fence), ``nvals`` value arguments,
    ``ret`` ("old", "void", "bool"), allowed value types, trailing order/scope ints."""

    op: str
    nvals: int
    ret: str
    types: tuple[ScalarType, ...]
    c11: bool = False
    explicit: int = 0  # number of trailing memory_order/memory_scope arguments


@dataclass(frozen=True)
class Conversion:
    """``convert_T[_sat][_rtX]`` (``reinterpret`` False) or ``as_T`` (True) to ``dest``;
    ``rounding`` is ``rte rtz rtp rtn`` or None for the default."""

    dest: Type
    reinterpret: bool = False
    sat: bool = False
    rounding: str | None = None


@dataclass(frozen=True)
class VectorAccess:
    """A vload/vstore: ``lanes`` moved, the element ``stride`` of ``offset``, ``half`` data
    converted to/from float, and the rounding of a half store (None: to nearest even)."""

    lanes: int
    stride: int
    store: bool
    half: bool = False
    rounding: str | None = None


@dataclass(eq=False)
class Builtin:
    """A built-in function callable from kernels as ``clpy.<name>``.

    ``spelling`` gives the OpenCL name for an overload when it is not ``cl_name`` (e.g. the
    sub-group or lowered forms). ``features`` lists optional OpenCL features the call needs.
    ``const_args`` are indices of parameters that must be compile-time constants.
    ``writes_args`` are indices of pointer parameters the built-in writes through.
    ``defaults`` are trailing arguments supplied when a call leaves them out (``barrier()``).
    ``lowering`` says how the emitter replaces the call on targets without it; ``emit`` names
    a custom emission form (clpy/emit/c_exprs.py ``CUSTOM_EMIT``) used on every target.
    ``fold_type`` folds a call to a constant from its operand's type (``vec_step``).
    ``signature`` documents rule-only built-ins in text. ``sim`` names the simulator module
    whose ``IMPLS[name]`` implements the built-in (``sim_impl()`` resolves and caches it).
    """

    name: str
    family: str
    doc: str
    overloads: tuple[Overload, ...] = ()
    cl_name: str = ""
    rule: TypeRule | None = None
    spelling: Spelling | None = None
    sim: str = ""
    features: frozenset[str] = frozenset()
    const_args: frozenset[int] = frozenset()
    writes_args: frozenset[int] = frozenset()
    uniform: bool = False  # must be reached by all work-items of a group (barriers, collectives)
    defaults: tuple[NamedConstant, ...] = ()
    lowering: Lowering | None = None
    emit: str = ""
    fold_type: FoldType | None = None
    signature: str = ""
    collective: Collective | None = None
    atomic: AtomicSpec | None = None
    conversion: Conversion | None = None
    vector_access: VectorAccess | None = None
    space: AddressSpace | None = None  # to_global/to_local/to_private: the target space
    # A work-item query (ids, sizes, offsets, sub-group ids): ``int`` in kernel code unless the
    # call names another integer type (clpy/builtins/workitem.py, "Index types").
    index: bool = False
    # A list or tuple display argument passes its elements as separate arguments
    # (``wait_group_events([e1, e2])``).
    spread_sequences: bool = False
    # A call the frontend builds in its own way: ``"block"`` (a @clpy.kernel/@clpy.func and
    # its arguments become a block literal: device-side enqueue, kernel queries) or
    # ``"ndrange"`` (tuples of sizes); clpy/frontend/blocks.py.
    frontend: str = ""
    _sim_impl: SimImpl | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if not self.cl_name:
            self.cl_name = self.name
        if not self.sim:
            self.sim = SIM_MODULES.get(self.family, "")
        self.__doc__ = self.doc

    def sim_impl(self) -> SimImpl:
        """The simulator implementation: ``IMPLS[name]`` of the module ``sim`` names, imported
        on first use (the simulator depends on clpy, never the reverse). Raises
        ``LookupError`` naming the module when there is none."""
        impl = self._sim_impl
        if impl is None:
            if not self.sim:
                raise LookupError(
                    f"built-in {self.name} names no simulator module "
                    f"(family {self.family!r} has no SIM_MODULES entry)"
                )
            impls = getattr(importlib.import_module(self.sim), "IMPLS", {})
            impl = impls.get(self.name)
            if impl is None:
                raise LookupError(
                    f"the simulator module {self.sim} has no implementation of "
                    f"built-in {self.name} (IMPLS[{self.name!r}])"
                )
            self._sim_impl = impl
        return impl

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
            f"clpy.{self.name} can only be called inside a @clpy.kernel or @clpy.func"
        )

    def __repr__(self) -> str:
        return f"<clpy built-in {self.name}>"


REGISTRY: dict[str, Builtin] = {}


def declare(
    name: str, *, family: str, doc: str, overloads: Iterable[Overload] = (), **kwargs: Any
) -> Builtin:
    """Register a built-in. A second declaration of the same name is a programming error."""
    if name in REGISTRY:
        raise ValueError(f"built-in {name!r} declared twice")
    b = Builtin(name=name, family=family, doc=doc, overloads=tuple(overloads), **kwargs)
    REGISTRY[name] = b
    return b


# ----------------------------------------------------------------------------- gentypes


def gentypes(
    scalars: Iterable[ScalarType], sizes: Iterable[int] = (1, 2, 3, 4, 8, 16)
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
        raise NoMatch(
            f"no signature of {b.name} takes ({got}); valid signatures:\n{b.signatures_text()}"
        )
    return best
