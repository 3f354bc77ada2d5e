"""Pipe built-ins of OpenCL C 2.0 (spec §1.13.16.4 – §1.13.16.6) and the sub-group
reservations of cl_khr_subgroups. They need ``__opencl_c_pipes`` (OpenCL C 2.0 devices).

Python has no ``&``: the packet pointer is a pointer expression (``buf + i``, ``tmp``) or a
pointer and an element index, meaning ``&buf[i]``, as for the atomics::

    @clpy.kernel
    def produce(out: clpy.WritePipe[int32], x: Global[int32]):
        i = clpy.get_global_id(0)
        clpy.write_pipe(out, x, i)                    # write_pipe(out, &x[i])
        rid = clpy.reserve_write_pipe(out, 2)         # reserve_id_t
        if clpy.is_valid_reserve_id(rid):
            clpy.write_pipe(out, rid, 0, x, i)        # write_pipe(out, rid, 0, &x[i])
            clpy.write_pipe(out, rid, 1, x + i)
            clpy.commit_write_pipe(out, rid)

``read_pipe``/``write_pipe`` return 0 on success and a negative value when the pipe is empty
(full). The ``work_group_*`` and ``sub_group_*`` reservations are called by every work-item of
the group with the same packet count and return one reservation for the group.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from clpy.builtins.registry import ArgInfo, Builtin, Lowering, NoMatch, Overload, declare
from clpy.builtins.subgroup import SG_FEATURE
from clpy.types import catalog as C
from clpy.types.core import AddressSpace, ArrayType, PointerType, ScalarType, Type
from clpy.types.pipes import PipeType, reserve_id_t

PIPES = frozenset({"__opencl_c_pipes"})


def _pipe(b: Builtin, a: ArgInfo, access: str | None) -> PipeType:
    t = a.type
    if not isinstance(t, PipeType):
        raise NoMatch(
            f"the first argument of {b.name} must be a pipe parameter "
            f"(clpy.Pipe[T] or clpy.WritePipe[T]), not {t}"
        )
    if access is not None and t.access != access:
        want = (
            "clpy.Pipe[T] (read_only)"
            if access == "read_only"
            else "clpy.WritePipe[T] (write_only)"
        )
        raise NoMatch(f"{b.name} needs a {want} pipe; this pipe is {t.cl_name}")
    return t


def _packet_ptr(b: Builtin, args: Sequence[ArgInfo], pt: PipeType) -> list[Type]:
    """``ptr`` or ``buf, i`` (meaning ``&buf[i]``) pointing to a packet of ``pt``."""
    p = args[0].type
    if isinstance(p, ArrayType) and len(p.shape) == 1:
        p = PointerType(p.elem, p.space)
    if not isinstance(p, PointerType) or p.elem is not pt.elem:
        raise NoMatch(
            f"{b.name}: the packet pointer must point to {pt.elem} (the pipe's "
            f"packet type), not {args[0].type}"
        )
    if p.space is AddressSpace.CONSTANT and b.name == "read_pipe":
        raise NoMatch(f"{b.name} cannot store a packet into {p}: Constant memory is read-only")
    out: list[Type] = [args[0].type]
    if len(args) == 2:
        it = args[1].type
        if not (isinstance(it, ScalarType) and it.is_int):
            raise NoMatch(f"the element index of {b.name} must be an integer, not {it}")
        out.append(it)
    return out


def _rw_rule(b: Builtin, args: Sequence[ArgInfo]) -> Overload:
    access = "read_only" if b.name == "read_pipe" else "write_only"
    if not 2 <= len(args) <= 5:
        raise NoMatch(
            f"{b.name} takes (pipe, ptr), (pipe, buf, i), (pipe, rid, index, ptr) "
            f"or (pipe, rid, index, buf, i); got {len(args)} arguments"
        )
    pt = _pipe(b, args[0], access)
    if len(args) >= 4 or args[1].type is reserve_id_t:
        if len(args) < 4 or args[1].type is not reserve_id_t:
            raise NoMatch(
                f"the reserved form is {b.name}(pipe, rid: reserve_id_t, index: "
                "uint, ptr) or (pipe, rid, index, buf, i)"
            )
        rest = _packet_ptr(b, args[3:], pt)
        return Overload((pt, reserve_id_t, C.uint, *rest), C.int_)
    return Overload((pt, *_packet_ptr(b, args[1:], pt)), C.int_)


def _simple_rule(access: str | None, extra: tuple[Type, ...], ret: Type) -> Any:
    def rule(b: Builtin, args: Sequence[ArgInfo]) -> Overload:
        if len(args) != 1 + len(extra):
            raise NoMatch(f"{b.name} takes {1 + len(extra)} argument(s): {b.signature}")
        pt = _pipe(b, args[0], access)
        for a, want in zip(args[1:], extra):
            t = a.type
            if want is reserve_id_t and t is not reserve_id_t:
                raise NoMatch(f"{b.name}: the reservation must be a reserve_id_t, not {t}")
            if want is C.uint and not (isinstance(t, ScalarType) and t.is_int):
                raise NoMatch(f"{b.name}: the packet count must be an integer, not {t}")
        return Overload((pt, *extra), ret)

    return rule


def _decl(name: str, doc: str, signature: str, **kwargs: Any) -> Builtin:
    kwargs.setdefault("features", PIPES)
    return declare(name, family="pipes", doc=doc, signature=signature, **kwargs)


_decl(
    "read_pipe",
    "Read one packet into ``*ptr``: ``read_pipe(p, ptr)``, ``read_pipe(p, buf, i)`` "
    "(``&buf[i]``), or from a reservation ``read_pipe(p, rid, index, ptr)``; returns 0 on "
    "success, a negative value if the pipe is empty (spec §1.13.16.4).",
    "(p: Pipe[T], ptr | buf, i) -> int; read_pipe(p, rid, index, ptr | buf, i)",
    rule=_rw_rule,
    writes_args=frozenset({1, 3}),
    emit="pipe_packet",
)
_decl(
    "write_pipe",
    "Write the packet ``*ptr``: ``write_pipe(p, ptr)``, ``write_pipe(p, buf, i)`` "
    "(``&buf[i]``), or into a reservation ``write_pipe(p, rid, index, ptr)``; returns 0 on "
    "success, a negative value if the pipe is full (spec §1.13.16.4).",
    "(p: WritePipe[T], ptr | buf, i) -> int; write_pipe(p, rid, index, ptr | buf, i)",
    rule=_rw_rule,
    emit="pipe_packet",
)

_SCOPES = {"": ("", False), "work_group_": ("work-group", True), "sub_group_": ("sub-group", True)}
for _pre, (_scope, _uniform) in _SCOPES.items():
    for _dir, _acc in (("read", "read_only"), ("write", "write_only")):
        _kind = "Pipe" if _dir == "read" else "WritePipe"
        _features = PIPES | ({SG_FEATURE} if _pre == "sub_group_" else set())
        _lowering = Lowering("sub_group_pipe") if _pre == "sub_group_" else None
        who = (
            f"one reservation for the whole {_scope}, called by all its work-items with "
            "the same count"
            if _scope
            else "a reservation for this work-item"
        )
        _decl(
            f"{_pre}reserve_{_dir}_pipe",
            f"Reserve ``num_packets`` packets to {_dir}: {who}; returns a reserve_id_t "
            "(check it with is_valid_reserve_id) (spec §1.13.16.4, §1.13.16.5"
            + (", cl_khr_subgroups" if _pre == "sub_group_" else "")
            + ").",
            f"{_pre}reserve_{_dir}_pipe(p: {_kind}[T], num_packets: uint) -> reserve_id_t",
            rule=_simple_rule(_acc, (C.uint,), reserve_id_t),
            uniform=_uniform,
            features=_features,
            lowering=_lowering,
        )
        _decl(
            f"{_pre}commit_{_dir}_pipe",
            f"Commit the {_dir} reservation ``rid`` ({_scope or 'work-item'} scope); the "
            "reserved packets are then read or written (spec §1.13.16.4, §1.13.16.5).",
            f"{_pre}commit_{_dir}_pipe(p: {_kind}[T], rid: reserve_id_t) -> void",
            rule=_simple_rule(_acc, (reserve_id_t,), C.void),
            uniform=_uniform,
            features=_features,
            lowering=_lowering,
        )

declare(
    "is_valid_reserve_id",
    family="pipes",
    features=PIPES,
    doc="True if ``rid`` is a valid reservation (the reserve call succeeded) (spec §1.13.16.4).",
    overloads=[Overload((reserve_id_t,), C.bool_)],
    signature="is_valid_reserve_id(rid: reserve_id_t) -> bool",
)
_decl(
    "get_pipe_num_packets",
    "The number of packets in the pipe (spec §1.13.16.6; a snapshot while kernels run).",
    "get_pipe_num_packets(p: Pipe[T] | WritePipe[T]) -> uint",
    rule=_simple_rule(None, (), C.uint),
)
_decl(
    "get_pipe_max_packets",
    "The pipe's capacity in packets, as created on the host (spec §1.13.16.6).",
    "get_pipe_max_packets(p: Pipe[T] | WritePipe[T]) -> uint",
    rule=_simple_rule(None, (), C.uint),
)
