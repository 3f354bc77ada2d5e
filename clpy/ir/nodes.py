"""The typed IR: small frozen dataclasses. Every node has a source location; every expression a
type. Nodes never hold OpenCL text: the emitter and the simulator are peers that read this IR.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from clpy.types.core import Type

if TYPE_CHECKING:
    from clpy.builtins.registry import Builtin, Overload


@dataclass(frozen=True)
class Loc:
    """A position in the user's Python file (absolute line, 0-based column)."""

    file: str
    line: int
    col: int = 0
    end_col: int | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col + 1}"


NOWHERE = Loc("<clpy>", 0, 0)


@dataclass(frozen=True, eq=False)
class Var:
    """A named storage location: parameter, local variable, or loop index.

    ``name`` is the user's name; the emitter renames only on a clash with C keywords. Variables
    compare by identity: two ``Var`` objects with the same name are different variables.
    """

    name: str
    type: Type
    loc: Loc = NOWHERE
    is_param: bool = False

    def __repr__(self) -> str:
        return f"Var({self.name}: {self.type})"


# ----------------------------------------------------------------------------- expressions


@dataclass(frozen=True)
class Expr:
    type: Type
    loc: Loc


@dataclass(frozen=True)
class Const(Expr):
    """A literal or folded constant. ``value`` is a Python int/float/bool (or tuple for
    vectors). ``weak`` marks an untyped Python literal, whose type adapts to the other operand
    (DESIGN.md "Literals are weakly typed")."""

    value: Any
    weak: bool = False


@dataclass(frozen=True)
class NamedConst(Expr):
    """A named OpenCL constant such as ``CLK_LOCAL_MEM_FENCE`` or ``memory_order_relaxed``,
    kept by name so the emitted source stays readable; ``value`` is what the simulator uses."""

    name: str
    value: int


@dataclass(frozen=True)
class VarRef(Expr):
    var: Var


@dataclass(frozen=True)
class Binary(Expr):
    """Arithmetic/bitwise on scalars, vectors or pointers (pointer ± int, pointer − pointer).

    ``op`` is one of ``+ - * / % << >> & | ^`` with C semantics, or ``floordiv``/``floormod``
    for Python's floor division and modulo on signed integers (DESIGN.md "Semantics").
    """

    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True)
class Unary(Expr):
    """``-x``, ``+x``, ``~x`` and ``!x`` (op ``not``: logical not, result ``bool``/int vector)."""

    op: str
    operand: Expr


@dataclass(frozen=True)
class Compare(Expr):
    """``== != < <= > >=``: ``bool`` for scalars, a signed int vector (-1/0) for vectors."""

    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True)
class Logical(Expr):
    """Short-circuit ``and``/``or`` on scalar conditions (result ``bool``)."""

    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True)
class Select(Expr):
    """``a if cond else b`` (C's ``?:``; only the chosen side is evaluated)."""

    cond: Expr
    if_true: Expr
    if_false: Expr


@dataclass(frozen=True)
class Cast(Expr):
    """A C conversion of a scalar (or vector broadcast of a scalar) to ``type``.

    Implicit conversions (usual arithmetic conversions, assignment) and explicit constructor
    casts like ``float32(i)`` both become ``Cast``.
    """

    value: Expr


@dataclass(frozen=True)
class CallBuiltin(Expr):
    """A call of a registered built-in, with the overload the type checker picked.

    ``combiner`` is the ``@clpy.reduction``'s combiner specialization for the user-defined
    reductions and scans (built-ins whose ``collective.op`` is ``"user"``), else None.
    """

    builtin: Builtin
    overload: Overload
    args: tuple[Expr, ...]
    combiner: Function | None = None


@dataclass(frozen=True)
class CallFunc(Expr):
    """A call of a ``@clpy.func`` device function specialization."""

    func: Function
    args: tuple[Expr, ...]


@dataclass(frozen=True)
class Index(Expr):
    """``base[index]`` where base is a pointer or a (local/private) array; an lvalue."""

    base: Expr
    index: Expr


@dataclass(frozen=True)
class Field(Expr):
    """``base.name`` on a struct value; an lvalue if base is."""

    base: Expr
    name: str


@dataclass(frozen=True)
class Swizzle(Expr):
    """Vector components ``v.xy``, ``v.s0F``, ``v.lo`` … as lane indices (spec §1.1.7)."""

    base: Expr
    lanes: tuple[int, ...]


@dataclass(frozen=True)
class VectorCons(Expr):
    """``float4(a, b.xy, c)`` or broadcast ``float4(x)``; parts are scalars or vectors."""

    parts: tuple[Expr, ...]


@dataclass(frozen=True)
class StructCons(Expr):
    """``ValIdx(v, i)``: a struct value from one expression per field, in order."""

    fields: tuple[Expr, ...]


# ----------------------------------------------------------------------------- statements


@dataclass(frozen=True)
class Stmt:
    loc: Loc


@dataclass(frozen=True)
class Declare(Stmt):
    """Introduce ``var`` (first assignment in Python), optionally initialised."""

    var: Var
    init: Expr | None


@dataclass(frozen=True)
class Assign(Stmt):
    """``target = value`` or ``target op= value`` (op is None for plain assignment).

    With ``op`` set the meaning is C's compound assignment (C99 6.5.16.2): ``target =
    (T)(target op value)`` where ``target op value`` uses the usual arithmetic conversions of
    the two operand types and ``T`` is the target's type; the target is evaluated once. The
    frontend only sets ``op`` to a C operator (never floordiv/floormod) when that equals the
    Python meaning, and ``value``'s type is the target's or (integers only) the promoted type
    of the operation, e.g. ``count += 1`` on a ``ushort`` (computed in ``int``, wraps back).
    """

    target: Expr
    value: Expr
    op: str | None = None


@dataclass(frozen=True)
class ExprStmt(Stmt):
    expr: Expr


@dataclass(frozen=True)
class If(Stmt):
    cond: Expr
    body: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...]


@dataclass(frozen=True)
class For(Stmt):
    """``for var in range(start, stop, step)``. ``step`` sign decides the comparison when it is a
    constant; otherwise the emitted test is ``step > 0 ? i < stop : i > stop``. ``stop`` and
    ``step`` are evaluated once, like Python's ``range``.
    """

    var: Var
    start: Expr
    stop: Expr
    step: Expr
    body: tuple[Stmt, ...]
    declares: bool = True  # the loop owns ``var`` (``for (int i = ...)``)
    ascending: bool = False  # ``step`` is provably positive (a size query): test ``i < stop``


@dataclass(frozen=True)
class While(Stmt):
    cond: Expr
    body: tuple[Stmt, ...]


@dataclass(frozen=True)
class Break(Stmt):
    pass


@dataclass(frozen=True)
class Continue(Stmt):
    pass


@dataclass(frozen=True)
class Return(Stmt):
    value: Expr | None


@dataclass(frozen=True)
class Print(Stmt):
    """``print(a, b)`` → one printf; ``sep``/``end`` as Python's."""

    args: tuple[Expr, ...]
    sep: str = " "
    end: str = "\n"


@dataclass(frozen=True)
class Assert(Stmt):
    cond: Expr
    message: str


# ----------------------------------------------------------------------------- functions


@dataclass(frozen=True, eq=False)
class Function:
    """A kernel or device function specialization: fully typed, ready to emit or simulate.

    ``written`` names the pointer parameters the body writes through (the emitter makes the
    others ``const``; the runtime copies back only these). ``callees`` lists device functions
    called, in dependency order. ``features`` are the optional OpenCL features it uses
    (``fp64``, ``fp16`` ...), for pragmas and target checks.
    """

    name: str
    params: tuple[Var, ...]
    ret: Type
    body: tuple[Stmt, ...]
    is_kernel: bool
    loc: Loc
    source_file: str
    written: frozenset[str] = frozenset()
    callees: tuple[Function, ...] = ()
    features: frozenset[str] = frozenset()
    structs: tuple[Type, ...] = ()
    attributes: dict[str, Any] = field(default_factory=dict)
    # pointer parameters the launcher saw point into memory no other argument reaches: the
    # emitter declares them ``restrict`` (C99 6.7.3.1). Empty in every IR the frontend builds.
    noalias: frozenset[str] = frozenset()

    def __repr__(self) -> str:
        kind = "kernel" if self.is_kernel else "func"
        return f"<{kind} {self.name}({', '.join(str(p.type) for p in self.params)})>"
