"""Pipes (OpenCL C 2.0 §1.13.16): types, built-ins, emission, host ``clpy.Pipe`` objects and
the simulator's FIFO (packets kept between launches, work-item order within a launch).

PoCL here reports no pipe support, so pipe kernels are checked as text (tests/golden/pipe_*.cl)
and on the simulator; an OpenCL launch on PoCL must fail with a clear FeatureError."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Global, int32
from clpy.runtime.api import get_device

sys.path.insert(0, str(Path(__file__).parent))
from golden_kernels.pipes import pipe_copy, pipe_reserve  # noqa: E402
from oclgrind_kernels import build_on_oclgrind  # noqa: E402


@clpy.kernel
def produce(out: clpy.WritePipe[int32], x: Global[int32], st: Global[int32]):
    i = clpy.get_global_id(0)
    st[i] = clpy.write_pipe(out, x, i)


@clpy.kernel
def consume(inp: clpy.Pipe[int32], y: Global[int32], st: Global[int32]):
    i = clpy.get_global_id(0)
    st[i] = clpy.read_pipe(inp, y + i)


@clpy.kernel
def count(inp: clpy.Pipe[int32], n: Global[clpy.uint32]):
    if clpy.get_global_id(0) == 0:
        n[0] = clpy.get_pipe_num_packets(inp)
        n[1] = clpy.get_pipe_max_packets(inp)


@clpy.kernel
def produce_reserved(out: clpy.WritePipe[int32], x: Global[int32], ok: Global[int32]):
    i = clpy.get_global_id(0)
    rid = clpy.reserve_write_pipe(out, 2)
    ok[i] = 0
    if clpy.is_valid_reserve_id(rid):
        # written in reverse: the reservation fixes the order, not the write order
        clpy.write_pipe(out, rid, 1, x + 2 * i + 1)
        clpy.write_pipe(out, rid, 0, x, 2 * i)
        clpy.commit_write_pipe(out, rid)
        ok[i] = 1


@clpy.kernel
def consume_reserved(inp: clpy.Pipe[int32], y: Global[int32], ok: Global[int32]):
    i = clpy.get_global_id(0)
    rid = clpy.reserve_read_pipe(inp, 2)
    ok[i] = 0
    if clpy.is_valid_reserve_id(rid):
        clpy.read_pipe(inp, rid, 0, y, 2 * i)
        clpy.read_pipe(inp, rid, 1, y + 2 * i + 1)
        clpy.commit_read_pipe(inp, rid)
        ok[i] = 1


@clpy.kernel
def produce_groups(out: clpy.WritePipe[int32], x: Global[int32], ok: Global[int32]):
    i = clpy.get_global_id(0)
    rid = clpy.work_group_reserve_write_pipe(out, clpy.get_local_size(0))
    ok[i] = 0
    if clpy.is_valid_reserve_id(rid):
        clpy.write_pipe(out, rid, clpy.get_local_id(0), x, i)
        ok[i] = 1
    clpy.work_group_commit_write_pipe(out, rid)


@clpy.kernel
def produce_sub_groups(out: clpy.WritePipe[int32], x: Global[int32], ok: Global[int32]):
    i = clpy.get_global_id(0)
    rid = clpy.sub_group_reserve_write_pipe(out, clpy.get_sub_group_size())
    ok[i] = 0
    if clpy.is_valid_reserve_id(rid):
        clpy.write_pipe(out, rid, clpy.get_sub_group_local_id(), x, i)
        ok[i] = 1
    clpy.sub_group_commit_write_pipe(out, rid)


@clpy.kernel
def consume_sub_groups(inp: clpy.Pipe[int32], y: Global[int32]):
    i = clpy.get_global_id(0)
    rid = clpy.sub_group_reserve_read_pipe(inp, clpy.get_sub_group_size())
    if clpy.is_valid_reserve_id(rid):
        clpy.read_pipe(inp, rid, clpy.get_sub_group_local_id(), y, i)
    clpy.sub_group_commit_read_pipe(inp, rid)


@clpy.kernel
def writes_read_only(p: clpy.Pipe[int32], x: Global[int32]):
    clpy.write_pipe(p, x, clpy.get_global_id(0))


@clpy.kernel
def wrong_packet(p: clpy.Pipe[int32], x: Global[clpy.float32]):
    clpy.read_pipe(p, x, clpy.get_global_id(0))


@clpy.func
def put(p: clpy.WritePipe[int32], v: int32) -> int32:
    tmp = clpy.private_array(int32, 1)
    tmp[0] = v
    return clpy.write_pipe(p, tmp)


@clpy.kernel
def produce_via_func(p: clpy.WritePipe[int32], st: Global[int32]):
    i = clpy.get_global_id(0)
    st[i] = put(p, i * 10)


@clpy.kernel
def consume_into_local(p: clpy.Pipe[int32], y: Global[int32]):
    t = clpy.local_array(int32, 4)
    lid = clpy.get_local_id(0)
    clpy.read_pipe(p, t, lid)
    clpy.barrier()
    y[clpy.get_global_id(0)] = t[3 - lid]


@clpy.kernel
def bad_index(p: clpy.Pipe[int32], y: Global[int32]):
    rid = clpy.reserve_read_pipe(p, 1)
    clpy.read_pipe(p, rid, 1, y, 0)


@clpy.kernel
def vec_produce(p: clpy.WritePipe[clpy.float3], x: Global[clpy.float3]):
    clpy.write_pipe(p, x, clpy.get_global_id(0))


@clpy.kernel
def vec_consume(p: clpy.Pipe[clpy.float3], x: Global[clpy.float3]):
    i = clpy.get_global_id(0)
    rid = clpy.reserve_read_pipe(p, 1)
    if clpy.is_valid_reserve_id(rid):
        clpy.read_pipe(p, rid, 0, x + i)


@clpy.struct
class Particle:
    pos: clpy.float3
    id: int32


@clpy.kernel
def struct_produce(p: clpy.WritePipe[Particle], x: Global[Particle]):
    clpy.write_pipe(p, x, clpy.get_global_id(0))


@clpy.kernel
def struct_consume(p: clpy.Pipe[Particle], x: Global[Particle]):
    clpy.read_pipe(p, x, clpy.get_global_id(0))


@clpy.kernel
def uneven_group_counts(out: clpy.WritePipe[int32], ok: Global[int32]):
    rid = clpy.work_group_reserve_write_pipe(out, clpy.get_local_id(0))
    ok[clpy.get_global_id(0)] = clpy.is_valid_reserve_id(rid)


@clpy.kernel
def reserve_counts(out: clpy.WritePipe[int32], n: Global[clpy.uint32], ok: Global[int32]):
    i = clpy.get_global_id(0)
    ok[i] = clpy.is_valid_reserve_id(clpy.reserve_write_pipe(out, n[i]))


def _sim(k: Any, g: int, l_: int, *args: Any) -> None:
    k[(g,), (l_,)](*args, device="sim")


# ----------------------------------------------------------------------------- types, text


def test_pipe_types_and_spelling() -> None:
    t = clpy.Pipe[int32]
    assert t is clpy.Pipe[np.int32] and t.cl_name == "read_only pipe int"
    assert clpy.WritePipe[clpy.float4].cl_name == "write_only pipe float4"
    assert repr(clpy.WritePipe[int32]) == "clpy.WritePipe[clpy.int]"
    assert clpy.reserve_id_t.cl_name == "reserve_id_t"
    with pytest.raises(TypeError, match="packets are scalars, vectors or structs"):
        clpy.Pipe[Global[int32]]


def test_emitted_parameters_and_pointer_forms() -> None:
    src = produce.source
    assert "write_only pipe int out" in src
    assert "write_pipe(out, &x[i])" in src
    assert "read_pipe(inp, y + i)" in consume.source
    src = produce_reserved.source
    assert "reserve_id_t rid = reserve_write_pipe(out, 2);" in src
    assert "write_pipe(out, rid, 0, &x[2 * i]);" in src
    assert "commit_write_pipe(out, rid);" in src


def test_sub_group_reservations_native_or_work_group() -> None:
    # Without sub-groups a work-group is one sub-group (as for the other sub-group functions).
    assert "work_group_reserve_write_pipe(out" in produce_sub_groups.source
    native = produce_sub_groups.source_for(
        "opencl-c-3.0+__opencl_c_pipes+__opencl_c_subgroups+cl_khr_subgroups")
    assert "sub_group_reserve_write_pipe(out, get_sub_group_size())" in native
    assert "sub_group_commit_write_pipe(out, rid);" in native


def test_pipes_need_opencl_c_2() -> None:
    with pytest.raises(clpy.FeatureError, match="__opencl_c_pipes") as e:
        produce.source_for("opencl-c-1.2")
    assert "test_pipes.py" in str(e.value)
    with pytest.raises(clpy.FeatureError, match="__opencl_c_pipes"):
        consume.source_for("opencl-c-3.0")


def test_type_errors() -> None:
    with pytest.raises(clpy.KernelTypeError, match=r"write_pipe needs a clpy.WritePipe\[T\]"):
        _ = writes_read_only.source
    with pytest.raises(clpy.KernelTypeError, match="must point to int"):
        _ = wrong_packet.source


# ----------------------------------------------------------------------------- host objects


def test_host_pipe_checks() -> None:
    p = clpy.Pipe(np.int32, 4)
    assert repr(p) == "clpy.Pipe(clpy.int, 4)" and p.num_packets == 0
    with pytest.raises(ValueError, match="max_packets must be a positive int"):
        clpy.Pipe(int32, 0)
    x = np.zeros(4, np.int32)
    st = np.zeros(4, np.int32)
    with pytest.raises(TypeError, match="'out'.*clpy.Pipe"):
        _sim(produce, 4, 4, x, x, st)
    with pytest.raises(TypeError, match="carries float packets"):
        _sim(produce, 4, 4, clpy.Pipe(clpy.float32, 4), x, st)


def test_opencl_device_without_pipes_is_a_clear_error(cl_device: Any) -> None:
    dev = get_device(cl_device)
    if getattr(cl_device, "pipe_support", False):  # pragma: no cover - not PoCL here
        pytest.skip("this device supports pipes")
    x = np.zeros(4, np.int32)
    with pytest.raises(clpy.FeatureError, match="__opencl_c_pipes"):
        produce[(4,), (4,)](clpy.Pipe(int32, 4), x, x.copy(), device=dev)
    with pytest.raises(RuntimeError, match="CL_DEVICE_PIPE_SUPPORT"):
        clpy.Pipe(int32, 4).cl_pipe(dev.context)


# ----------------------------------------------------------------------------- simulator


def test_producer_then_consumer_in_work_item_order() -> None:
    p = clpy.Pipe(int32, 8)
    x = np.arange(100, 116, dtype=np.int32)
    st = np.full(16, 7, np.int32)
    _sim(produce, 16, 4, p, x, st)
    # capacity 8: the first 8 work-items get in, the rest find the pipe full
    np.testing.assert_array_equal(st, [0] * 8 + [-1] * 8)
    n = np.zeros(2, np.uint32)
    _sim(count, 1, 1, p, n)
    np.testing.assert_array_equal(n, [8, 8])
    y = np.full(12, -9, np.int32)
    st = np.full(12, 7, np.int32)
    _sim(consume, 12, 4, p, y, st)
    np.testing.assert_array_equal(st, [0] * 8 + [-1] * 4)   # empty: negative, y untouched
    np.testing.assert_array_equal(y, list(range(100, 108)) + [-9] * 4)
    assert p.num_packets == 0
    # the ring wraps: a second round goes through the same 8 slots
    _sim(produce, 4, 4, p, x[8:12], np.zeros(4, np.int32))
    y = np.zeros(4, np.int32)
    _sim(consume, 4, 2, p, y, np.zeros(4, np.int32))
    np.testing.assert_array_equal(y, x[8:12])


def test_reserved_forms() -> None:
    p = clpy.Pipe(int32, 7)
    x = np.arange(10, dtype=np.int32) * 3
    ok = np.full(5, 9, np.int32)
    _sim(produce_reserved, 5, 5, p, x, ok)
    np.testing.assert_array_equal(ok, [1, 1, 1, 0, 0])  # 3 reservations of 2 fit in 7
    assert p.num_packets == 6
    y = np.full(10, -1, np.int32)
    ok = np.full(5, 9, np.int32)
    _sim(consume_reserved, 5, 1, p, y, ok)
    np.testing.assert_array_equal(ok, [1, 1, 1, 0, 0])
    np.testing.assert_array_equal(y, list(x[:6]) + [-1] * 4)


def test_work_group_reservations() -> None:
    p = clpy.Pipe(int32, 10)
    x = np.arange(12, dtype=np.int32)
    ok = np.zeros(12, np.int32)
    _sim(produce_groups, 12, 4, p, x, ok)
    np.testing.assert_array_equal(ok, [1] * 8 + [0] * 4)  # 2 groups of 4 fit in 10
    y = np.full(8, -1, np.int32)
    _sim(consume, 8, 8, p, y, np.zeros(8, np.int32))
    np.testing.assert_array_equal(y, x[:8])


@pytest.mark.parametrize("sg", [2, 3, 8])
def test_sub_group_reservations(sg: int) -> None:
    p = clpy.Pipe(int32, 16)
    x = np.arange(100, 112, dtype=np.int32)
    ok = np.zeros(12, np.int32)
    with clpy.sim.config(sub_group_size=sg):
        _sim(produce_sub_groups, 12, 6, p, x, ok)
        np.testing.assert_array_equal(ok, 1)
        y = np.full(12, -1, np.int32)
        _sim(consume_sub_groups, 12, 6, p, y)
    np.testing.assert_array_equal(y, x)
    assert p.num_packets == 0


def test_sub_group_reservation_that_does_not_fit() -> None:
    p = clpy.Pipe(int32, 5)
    x = np.arange(8, dtype=np.int32)
    ok = np.zeros(8, np.int32)
    with clpy.sim.config(sub_group_size=2):
        _sim(produce_sub_groups, 8, 8, p, x, ok)
    np.testing.assert_array_equal(ok, [1, 1, 1, 1, 0, 0, 0, 0])
    assert p.num_packets == 4


def test_device_function_private_and_local_packet_pointers() -> None:
    assert "int put(write_only pipe int p, int v)" in produce_via_func.source
    assert "return write_pipe(p, &tmp[0]);" in produce_via_func.source
    p = clpy.Pipe(int32, 8)
    st = np.full(4, 5, np.int32)
    _sim(produce_via_func, 4, 4, p, st)
    np.testing.assert_array_equal(st, 0)
    np.testing.assert_array_equal(p.slots[:4], [0, 10, 20, 30])
    y = np.zeros(4, np.int32)
    _sim(consume_into_local, 4, 4, p, y)
    np.testing.assert_array_equal(y, [30, 20, 10, 0])


def test_vector_packets() -> None:
    p = clpy.Pipe(clpy.float3, 4)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)  # float3 is padded to 4 lanes
    _sim(vec_produce, 3, 3, p, x)
    y = np.full((4, 4), -1, np.float32)
    _sim(vec_consume, 4, 2, p, y)
    np.testing.assert_array_equal(y[:3, :3], x[:, :3])
    np.testing.assert_array_equal(y[3], -1)


def test_failing_launch_leaves_the_pipe_untouched() -> None:
    p = clpy.Pipe(int32, 4)
    _sim(produce, 3, 3, p, np.arange(3, dtype=np.int32), np.zeros(3, np.int32))
    before = p.slots.copy()
    with pytest.raises(clpy.sim.SimulationError, match="out of the reservation's range"):
        _sim(bad_index, 1, 1, p, np.zeros(1, np.int32))
    assert p.num_packets == 3
    np.testing.assert_array_equal(p.slots, before)


def test_struct_packets() -> None:
    assert "write_only pipe Particle p" in struct_produce.source
    p = clpy.Pipe(Particle, 4)
    x = np.zeros(3, Particle.dtype)
    x["pos"][:, :3] = np.arange(9, dtype=np.float32).reshape(3, 3)
    x["id"] = [7, 8, 9]
    _sim(struct_produce, 3, 3, p, x)
    y = np.zeros(4, Particle.dtype)
    _sim(struct_consume, 4, 4, p, y)
    np.testing.assert_array_equal(y["id"], [7, 8, 9, 0])
    np.testing.assert_array_equal(y["pos"][:3, :3], x["pos"][:, :3])


def test_pipe_sources_build_with_an_opencl_c_2_compiler(tmp_path: Path) -> None:
    """PoCL rejects the ``pipe`` qualifier; Oclgrind's Clang (OpenCL C 2.0 front end) builds
    the emitted pipe code, sub-group reservations included (its runtime has no clCreatePipe,
    so nothing runs there)."""
    native_sg = "opencl-c-2.0+__opencl_c_subgroups+cl_khr_subgroups"
    sources = [produce.source, consume.source, produce_reserved.source,
               consume_reserved.source, produce_groups.source, produce_sub_groups.source,
               produce_sub_groups.source_for(native_sg), consume_sub_groups.source_for(native_sg),
               produce_via_func.source, consume_into_local.source, struct_consume.source,
               vec_consume.source, pipe_copy.source, pipe_reserve.source]
    assert "sub_group_reserve_read_pipe" in sources[7]
    build_on_oclgrind(sources, tmp_path)


def test_reservation_counts() -> None:
    p = clpy.Pipe(int32, 6)
    ok = np.full(5, 9, np.int32)
    # 0 packets: invalid; 4 does not fit after 1 + 2, and ends the call's reservations
    _sim(reserve_counts, 5, 5, p, np.array([1, 0, 2, 4, 1], np.uint32), ok)
    np.testing.assert_array_equal(ok, [1, 0, 1, 0, 0])
    assert p.num_packets == 3
    with pytest.raises(clpy.sim.SimulationError, match="different packet counts"):
        _sim(uneven_group_counts, 4, 4, clpy.Pipe(int32, 8), np.zeros(4, np.int32))
