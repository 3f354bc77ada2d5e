"""Async copies between global and local memory, and prefetch (spec §1.13.10 in shared/spec,
§6.13.10 of the OpenCL C 2.0 specification).

A work-group stages a tile into local memory with one call that every work-item reaches with
the same arguments, and waits for it before reading the tile::

    tile = clpy.local_array(float32, 256)
    ev = clpy.async_work_group_copy(tile, a + base, 256, 0)   # local <- global
    clpy.wait_group_events(ev)
    ... tile[lid] ...
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)                      # before the next copy

``dst``/``src`` are pointers (an array stands for its first element, ``tile[r]`` for row r);
one is local and the other global, with the same gentype (scalars and vectors of
char..double; 3-component vectors copy 4-component slots, footnote 41). The last argument is
an earlier ``event_t`` to share, or ``0``; it may be left out (``0``). ``wait_group_events``
takes the spec's ``(num_events, event_list)`` with a private array of events, or the events
themselves: ``wait_group_events(ev)``, ``wait_group_events(e1, e2)``,
``wait_group_events([e1, e2])``. ``prefetch(p, n)`` is a hint with no functional effect.

The simulator (sim/async_copy.py) copies at the call and checks what the spec leaves
undefined: a call reached by part of a work-group or with arguments that differ within it,
the destination read or written (or the source written) before ``wait_group_events``, and a
copy of elements other work-items accessed in the same barrier interval.
"""

from __future__ import annotations

from collections.abc import Sequence

from clpy.builtins.registry import ArgInfo, Builtin, NoMatch, Overload, declare
from clpy.types import catalog as C
from clpy.types.core import AddressSpace, ArrayType, PointerType, ScalarType, Type, VectorType

SIM = "clpy_sim.async_copy"
FAMILY = "async-copy"

# the spec's gentype for the async copies and prefetch (Table 18): no half, no bool
ELEMENTS: tuple[ScalarType, ...] = (*C.INTEGER_SCALARS, C.float_, C.double)


def _elem_ok(t: Type) -> bool:
    e = t.elem if isinstance(t, VectorType) else t
    return isinstance(e, ScalarType) and e in ELEMENTS


def _pointer(b: Builtin, a: ArgInfo, what: str) -> PointerType:
    t = a.type
    if isinstance(t, ArrayType):  # an array stands for its first element (coerce decays it)
        if len(t.shape) != 1:
            raise NoMatch(
                f"{b.name}: {what} is the {len(t.shape)}-dimensional array {t}; pass a "
                "pointer to its first element (index down to a row: tile[r])"
            )
        t = PointerType(t.elem, t.space)
    if not isinstance(t, PointerType):
        raise NoMatch(f"{b.name}: {what} must be a local or global pointer, not {t}")
    if not _elem_ok(t.elem):
        raise NoMatch(
            f"{b.name}: {what} points to {t.elem}; the async copies move the spec's "
            "gentypes (char ... double scalars and vectors)"
        )
    return t


def _size(b: Builtin, a: ArgInfo, what: str) -> None:
    if not (isinstance(a.type, ScalarType) and (a.type.is_int or a.type.is_bool)):
        raise NoMatch(f"{b.name}: {what} must be an integer, not {a.type}")


def _event(b: Builtin, a: ArgInfo) -> Type:
    """``event_t``, or the literal 0 (spec: '0 can be implicitly cast to event_t')."""
    if a.type is C.event_t:
        return C.event_t
    if isinstance(a.type, ScalarType) and a.type.is_int and a.value == 0:
        return C.int_
    raise NoMatch(f"{b.name}: the event must be an event_t or 0, not {a.type}")


def _copy_rule(b: Builtin, args: Sequence[ArgInfo]) -> Overload:
    strided = b.name == "async_work_group_strided_copy"
    n = 4 if strided else 3
    if len(args) not in (n, n + 1):
        raise NoMatch(f"{b.name} takes {n} or {n + 1} arguments: {b.signature}")
    dst = _pointer(b, args[0], "dst")
    src = _pointer(b, args[1], "src")
    spaces = {dst.space, src.space}
    if spaces != {AddressSpace.LOCAL, AddressSpace.GLOBAL}:
        raise NoMatch(
            f"{b.name} copies global -> local or local -> global; got dst {dst} and src {src}"
            + (
                " (a Constant[T] source: declare the parameter Global[T])"
                if src.space is AddressSpace.CONSTANT
                else ""
            )
        )
    if dst.elem is not src.elem:
        raise NoMatch(f"{b.name}: dst points to {dst.elem} but src to {src.elem}")
    if dst.const:
        raise NoMatch(f"{b.name}: dst {dst} is const")
    _size(b, args[2], "num_gentypes")
    params: list[Type] = [dst, src, C.size_t]
    if strided:
        _size(b, args[3], "the stride")
        params.append(C.size_t)
    if len(args) == n + 1:
        params.append(_event(b, args[n]))
    return Overload(tuple(params), C.event_t)


def _wait_rule(b: Builtin, args: Sequence[ArgInfo]) -> Overload:
    if not args:
        raise NoMatch(f"{b.name} takes events: {b.signature}")
    if all(a.type is C.event_t for a in args):
        return Overload(tuple(C.event_t for _ in args), C.void)
    if len(args) == 2 and isinstance(args[0].type, ScalarType) and args[0].type.is_int:
        t = args[1].type
        if isinstance(t, PointerType) and t.elem is C.event_t:
            return Overload((C.int_, t), C.void)
        if isinstance(t, ArrayType) and len(t.shape) == 1 and t.elem is C.event_t:
            return Overload((C.int_, PointerType(C.event_t, t.space)), C.void)
    got = ", ".join(str(a.type) for a in args)
    raise NoMatch(
        f"{b.name} takes event_t values, a list of them, or (num_events, events) with a "
        f"private array of event_t; got ({got})"
    )


def _prefetch_rule(b: Builtin, args: Sequence[ArgInfo]) -> Overload:
    if len(args) != 2:
        raise NoMatch(f"{b.name} takes 2 arguments: {b.signature}")
    p = _pointer(b, args[0], "p")
    if p.space is not AddressSpace.GLOBAL:
        raise NoMatch(f"{b.name}: p must point to global memory, not {p}")
    _size(b, args[1], "num_gentypes")
    return Overload((p, C.size_t), C.void)


declare(
    "async_work_group_copy",
    family=FAMILY,
    sim=SIM,
    doc="Copy ``num_gentypes`` elements from ``src`` to ``dst`` (global -> local or local -> "
    "global), done by the whole work-group: every work-item reaches the call with the same "
    "arguments. Returns an ``event_t`` for ``wait_group_events``; the last argument is an "
    "earlier event to share, or 0 (spec §1.13.10). No implicit barrier before the copy.",
    signature="async_work_group_copy(dst: Local[T] | Global[T], src: Global[T] | Local[T], "
    "num_gentypes: size_t, event: event_t | 0 = 0) -> event_t",
    rule=_copy_rule,
    writes_args=frozenset({0}),
    uniform=True,
    emit="async_copy",
)
declare(
    "async_work_group_strided_copy",
    family=FAMILY,
    sim=SIM,
    doc="The strided async copy: a gather ``dst[i] = src[i * stride]`` (global -> local) or a "
    "scatter ``dst[i * stride] = src[i]`` (local -> global) of ``num_gentypes`` elements, "
    "done by the whole work-group like async_work_group_copy (spec §1.13.10).",
    signature="async_work_group_strided_copy(dst, src, num_gentypes: size_t, stride: size_t, "
    "event: event_t | 0 = 0) -> event_t",
    rule=_copy_rule,
    writes_args=frozenset({0}),
    uniform=True,
    emit="async_copy",
)
declare(
    "wait_group_events",
    family=FAMILY,
    sim=SIM,
    doc="Wait for async copies to complete: ``wait_group_events(ev)``, ``(e1, e2, ...)``, a "
    "list ``([e1, e2])``, or the spec's ``(num_events, event_list)`` with a private array of "
    "event_t. Reached by every work-item of the work-group with the same events "
    "(spec §1.13.10).",
    signature="wait_group_events(*events: event_t) | wait_group_events(num_events: int, "
    "event_list: Private[event_t]) -> void",
    rule=_wait_rule,
    uniform=True,
    spread_sequences=True,
    emit="wait_events",
)
declare(
    "prefetch",
    family=FAMILY,
    sim=SIM,
    doc="Hint: prefetch ``num_gentypes`` elements at ``p`` into the global cache; no "
    "functional effect (spec §1.13.10).",
    signature="prefetch(p: Global[T], num_gentypes: size_t) -> void",
    rule=_prefetch_rule,
)

__all__ = ["ELEMENTS"]
