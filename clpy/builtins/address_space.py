"""Address space qualifier functions (spec §1.13.9, table 17): ``to_global``, ``to_local``,
``to_private`` and ``get_fence``.

They take a pointer into the generic address space (any global, local or private pointer
converts to one) to any type, and need ``__opencl_c_generic_address_space``. When the argument's
address space is known statically (a ``Global``/``Local``/``Private`` pointer or a 1-D local or
private array), the answer is known too: on a target without the generic address space the call
is folded (``to_global(global_ptr)`` is the pointer itself, ``to_local(global_ptr)`` is a null
``__local`` pointer, ``get_fence(local_ptr)`` is ``CLK_LOCAL_MEM_FENCE``).
"""

from __future__ import annotations

from collections.abc import Sequence

from clpy.builtins.registry import ArgInfo, Builtin, Lowering, NoMatch, Overload, declare
from clpy.types import catalog as C
from clpy.types.core import AddressSpace, ArrayType, PointerType, Type

_GENERIC = frozenset({"__opencl_c_generic_address_space"})
_S = AddressSpace


def _pointer_arg(b: Builtin, args: Sequence[ArgInfo]) -> tuple[Type, AddressSpace, bool]:
    """(element type, static address space, const) of the single pointer argument."""
    if len(args) != 1:
        raise NoMatch(f"{b.name} takes one pointer argument, got {len(args)}")
    t = args[0].type
    if isinstance(t, ArrayType) and len(t.shape) == 1:
        return t.elem, t.space, False
    if isinstance(t, PointerType):
        if t.space is _S.CONSTANT:
            raise NoMatch(
                f"{b.name}: a Constant pointer is not in the generic address space "
                "(spec §1.5); only global, local and private pointers are"
            )
        return t.elem, t.space, t.const
    raise NoMatch(f"{b.name} takes a pointer (Ptr[T], Global[T], Local[T], Private[T]), got {t}")


def _to_space_rule(b: Builtin, args: Sequence[ArgInfo]) -> Overload:
    elem, _, const = _pointer_arg(b, args)
    space = b.space
    assert space is not None
    return Overload((args[0].type,), PointerType(elem, space, const))


def _get_fence_rule(b: Builtin, args: Sequence[ArgInfo]) -> Overload:
    _pointer_arg(b, args)
    return Overload((args[0].type,), C.uint)


_SIG = "(Ptr[T]) -> {}[T] (any global, local or private pointer)"
for _name, _space in (("to_global", _S.GLOBAL), ("to_local", _S.LOCAL), ("to_private", _S.PRIVATE)):
    declare(
        _name,
        family="address-space",
        rule=_to_space_rule,
        features=_GENERIC,
        space=_space,
        lowering=Lowering("to_space"),
        signature=_SIG.format(_space.title),
        doc=f"The pointer as a {_space.title}[T] pointer if it points into "
        f"{_space.value.strip('_')} memory, otherwise a null pointer (spec §1.13.9).",
    )
declare(
    "get_fence",
    family="address-space",
    rule=_get_fence_rule,
    features=_GENERIC,
    lowering=Lowering("get_fence"),
    signature="(Ptr[T]) -> uint (cl_mem_fence_flags)",
    doc="A memory fence flag valid for the memory the pointer points into: "
    "CLK_LOCAL_MEM_FENCE for local memory, CLK_GLOBAL_MEM_FENCE otherwise "
    "(spec §1.13.9).",
)
