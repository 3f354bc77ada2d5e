"""Device-side enqueue (OpenCL C 2.0 spec §1.13.17, feature ``__opencl_c_device_enqueue``) and
the kernel queries (Table 32; the two ``*_for_ndrange`` queries of cl_khr_subgroups).

clpy writes the block: the child is a ``@clpy.kernel`` or ``@clpy.func`` followed by its
arguments, captured when the block is made (spec §1.12.3); ``clpy.local_bytes(n)`` in the
argument list passes a ``local void *`` block argument of ``n`` bytes to a ``Local[T]``
parameter of the child::

    @clpy.kernel
    def walk(x: Global[int32], lo: int32, hi: int32):
        if hi - lo > 1:
            mid = (lo + hi) // 2
            q = clpy.get_default_queue()
            clpy.enqueue_kernel(q, clpy.CLK_ENQUEUE_FLAGS_WAIT_KERNEL, clpy.ndrange_1D(1),
                                walk, x, lo, mid)     # ^{walk(x, lo, mid);}

The event forms follow the spec's argument order: ``enqueue_kernel(q, flags, nd,
num_events, wait_list, event_ret, child, ...)`` where ``wait_list`` is a private array of
``clk_event_t`` (or ``None``) and ``event_ret`` a pointer to one (``evs + 1``, an array, or
``None``). ``ndrange_2D``/``ndrange_3D`` take tuples: ``clpy.ndrange_2D((gx, gy), (lx, ly))``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from clpy.builtins.constants import NamedConstant, _const
from clpy.builtins.registry import ArgInfo, Builtin, NoMatch, Overload, declare
from clpy.types import catalog as C
from clpy.types.core import AddressSpace, ArrayType, PointerType, ScalarType, Type
from clpy.types.enqueue import BlockType, clk_event_t, ndrange_t, queue_t

ENQUEUE = frozenset({"__opencl_c_device_enqueue"})

# kernel_enqueue_flags_t, return codes, event states, clk_profiling_info (clang's
# opencl-c-base.h values; spec Table 31, §1.13.17).
ENQUEUE_CONSTANTS: dict[str, NamedConstant] = {
    c.name: c
    for c in (
        _const("CLK_ENQUEUE_FLAGS_NO_WAIT", 0, C.int_),
        _const("CLK_ENQUEUE_FLAGS_WAIT_KERNEL", 1, C.int_),
        _const("CLK_ENQUEUE_FLAGS_WAIT_WORK_GROUP", 2, C.int_),
        _const("CLK_SUCCESS", 0, C.int_),
        _const("CLK_ENQUEUE_FAILURE", -101, C.int_),
        _const("CLK_INVALID_QUEUE", -102, C.int_),
        _const("CLK_INVALID_NDRANGE", -160, C.int_),
        _const("CLK_INVALID_EVENT_WAIT_LIST", -57, C.int_),
        _const("CLK_DEVICE_QUEUE_FULL", -161, C.int_),
        _const("CLK_INVALID_ARG_SIZE", -51, C.int_),
        _const("CLK_EVENT_ALLOCATION_FAILURE", -100, C.int_),
        _const("CLK_OUT_OF_RESOURCES", -5, C.int_),
        _const("CL_COMPLETE", 0, C.int_),
        _const("CL_RUNNING", 1, C.int_),
        _const("CL_SUBMITTED", 2, C.int_),
        _const("CL_QUEUED", 3, C.int_),
        _const("CLK_PROFILING_COMMAND_EXEC_TIME", 1, C.int_),
    )
}


def _is_int(t: Type) -> bool:
    return isinstance(t, ScalarType) and t.is_int


def _event_list(b: Builtin, a: ArgInfo, what: str) -> Type:
    """A ``clk_event_t *`` argument: a pointer to or an array of events, or NULL (``None``)."""
    t = a.type
    if isinstance(t, (PointerType, ArrayType)) and t.elem is clk_event_t:
        return t
    if t is C.int_ and a.value == 0:  # None in kernel code: NULL
        return t
    raise NoMatch(
        f"{b.name}: {what} must be a private array of clk_event_t, a pointer into one "
        f"(evs + i) or None, not {t}"
    )


def _block(b: Builtin, a: ArgInfo) -> BlockType:
    if not isinstance(a.type, BlockType):
        raise NoMatch(
            f"{b.name} takes a block: a @clpy.kernel or @clpy.func followed by its arguments"
        )
    return a.type


def _enqueue_rule(b: Builtin, args: Sequence[ArgInfo]) -> Overload:
    at = next((i for i, a in enumerate(args) if isinstance(a.type, BlockType)), None)
    if at not in (3, 6):
        raise NoMatch(
            "enqueue_kernel(queue, flags, ndrange, child, args...) or enqueue_kernel(queue, "
            "flags, ndrange, num_events, wait_list, event_ret, child, args...)"
        )
    head: list[Type] = [queue_t, C.int_, ndrange_t]
    for a, want in zip(args[:3], head):
        ok = a.type is want or (want is C.int_ and _is_int(a.type))
        if not ok:
            raise NoMatch(f"{b.name}: expected {want} for {a.type} (queue, flags, ndrange)")
    if at == 6:
        if not _is_int(args[3].type):
            raise NoMatch(f"{b.name}: num_events must be an integer, not {args[3].type}")
        head += [C.uint, _event_list(b, args[4], "wait_list"), _event_list(b, args[5], "event_ret")]
    blk = _block(b, args[at])
    sizes = args[at + 1 :]
    if len(sizes) != blk.locals or not all(_is_int(s.type) for s in sizes):
        raise NoMatch(
            f"{b.name}: the block has {blk.locals} local-memory argument(s); give each its "
            "size in bytes with clpy.local_bytes(n) among the child's arguments"
        )
    return Overload((*head, blk, *[C.uint] * blk.locals), C.int_)


def _query_rule(with_ndrange: bool) -> Any:
    def rule(b: Builtin, args: Sequence[ArgInfo]) -> Overload:
        n = 2 if with_ndrange else 1
        if len(args) != n:
            raise NoMatch(f"{b.name} takes {b.signature}")
        if with_ndrange and args[0].type is not ndrange_t:
            raise NoMatch(f"{b.name}: the first argument must be an ndrange_t")
        blk = _block(b, args[-1])
        return Overload(((ndrange_t,) if with_ndrange else ()) + (blk,), C.uint)

    return rule


def _marker_rule(b: Builtin, args: Sequence[ArgInfo]) -> Overload:
    if len(args) != 4 or args[0].type is not queue_t or not _is_int(args[1].type):
        raise NoMatch(f"{b.name} takes {b.signature}")
    wl = _event_list(b, args[2], "wait_list")
    ret = _event_list(b, args[3], "event_ret")
    return Overload((queue_t, C.uint, wl, ret), C.int_)


def _decl(name: str, doc: str, **kwargs: Any) -> Builtin:
    kwargs.setdefault("features", ENQUEUE)
    return declare(name, family="enqueue", doc=doc, **kwargs)


_decl(
    "enqueue_kernel",
    "Enqueue a child: ``enqueue_kernel(queue, flags, ndrange, child, args...)`` runs "
    "``child(args...)`` (a @clpy.kernel or @clpy.func, its arguments captured now) over "
    "``ndrange``; the event form takes ``num_events, wait_list, event_ret`` before the child. "
    "Returns CLK_SUCCESS or an error code (spec §1.13.17, Table 30).",
    signature="(queue: queue_t, flags: int, ndrange: ndrange_t, [num_events: "
    "uint, wait_list: clk_event_t[], event_ret: clk_event_t*,] child, *args) -> int",
    rule=_enqueue_rule,
    frontend="block",
    emit="enqueue",
    writes_args=frozenset({5}),
)
_decl(
    "get_default_queue",
    "The default device queue, or CLK_NULL_QUEUE (0) when the host created none (spec Table 35).",
    overloads=[Overload((), queue_t)],
)
for _d in (1, 2, 3):
    _forms = [Overload((C.size_t,) * (_d * k), ndrange_t) for k in (1, 2, 3)]
    _args = "(global_size)" if _d == 1 else f"((g0, ...{_d}), [(l0, ...)])"
    _decl(
        f"ndrange_{_d}D",
        f"A {_d}-D ND-range descriptor: ``ndrange_{_d}D(global)``, ``(global, local)`` or "
        f"``(offset, global, local)``"
        + ("" if _d == 1 else f", each a tuple of {_d} sizes")
        + " (spec Table 35).",
        overloads=_forms,
        frontend="" if _d == 1 else "ndrange",
        emit="" if _d == 1 else "ndrange",
    )
_decl(
    "enqueue_marker",
    "Enqueue a marker that completes when the ``num_events`` events of ``wait_list`` have; "
    "its event goes to ``event_ret`` (spec Table 33).",
    signature="(queue: queue_t, num_events: uint, wait_list: clk_event_t[], "
    "event_ret: clk_event_t*) -> int",
    rule=_marker_rule,
    writes_args=frozenset({3}),
)
_decl(
    "retain_event",
    "Increment an event's reference count (spec Table 34).",
    overloads=[Overload((clk_event_t,), C.void)],
)
_decl(
    "release_event",
    "Decrement an event's reference count; it is deleted once released, complete and no "
    "longer waited for (spec Table 34).",
    overloads=[Overload((clk_event_t,), C.void)],
)
_decl(
    "create_user_event",
    "A new user event in state CL_SUBMITTED (spec Table 34).",
    overloads=[Overload((), clk_event_t)],
)
_decl(
    "is_valid_event",
    "True if the event is valid (not CLK_NULL_EVENT, not released) (spec Table 34).",
    overloads=[Overload((clk_event_t,), C.bool_)],
)
_decl(
    "set_user_event_status",
    "Set a user event's status: CL_COMPLETE or a negative error (spec Table 34).",
    overloads=[Overload((clk_event_t, C.int_), C.void)],
)
_decl(
    "capture_event_profiling_info",
    "Write the profiling information ``name`` (CLK_PROFILING_COMMAND_EXEC_TIME: two 64-bit "
    "times in ns) of an enqueue_kernel event to ``value`` (spec Table 34).",
    overloads=[
        Overload((clk_event_t, C.int_, PointerType(t, AddressSpace.GLOBAL)), C.void)
        for t in (C.ulong, C.long)
    ],
    writes_args=frozenset({2}),
)
_decl(
    "get_kernel_work_group_size",
    "The largest work-group size the block's kernel can be enqueued with on this device "
    "(spec Table 32).",
    signature="(child, *args) -> uint",
    rule=_query_rule(False),
    frontend="block",
)
_decl(
    "get_kernel_preferred_work_group_size_multiple",
    "The preferred multiple of the work-group size for the block's kernel (a performance "
    "hint; spec Table 32).",
    signature="(child, *args) -> uint",
    rule=_query_rule(False),
    frontend="block",
)
for _name, _what in (
    ("get_kernel_max_sub_group_size_for_ndrange", "The largest sub-group size"),
    ("get_kernel_sub_group_count_for_ndrange", "The number of sub-groups per work-group"),
):
    _decl(
        _name,
        f"{_what} of the block's kernel enqueued over ``ndrange`` (cl_khr_subgroups; the "
        "simulator answers from clpy.sim.config(sub_group_size=...)).",
        signature="(ndrange: ndrange_t, child, *args) -> uint",
        rule=_query_rule(True),
        frontend="block",
    )


class _LocalBytes:
    """``clpy.local_bytes(n)`` among a child's arguments in ``enqueue_kernel``: a ``local
    void *`` block argument of ``n`` bytes, for a ``Local[T]`` parameter of the child (spec
    §1.13.17). Built by the frontend (clpy/frontend/blocks.py)."""

    __clpy_local_bytes__ = True
    __name__ = "local_bytes"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("clpy.local_bytes is an argument of clpy.enqueue_kernel in kernels")

    def __repr__(self) -> str:
        return "clpy.local_bytes"


local_bytes = _LocalBytes()
