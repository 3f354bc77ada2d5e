"""Pipes (OpenCL C 2.0 §1.13.16): ``read_only``/``write_only pipe`` parameters, the packet
pointer forms (``buf + i`` and ``buf, i`` → ``&buf[i]``), reservations at work-item,
work-group and sub-group scope. PoCL here has no pipe support (``CL_DEVICE_PIPE_SUPPORT`` is
false and clang rejects the ``pipe`` qualifier), so the build check is skipped there
(``needs=("pipes",)``) and only the emitted text is compared."""

from __future__ import annotations

import clpy
from clpy import Global, float32, int32

from . import case


@clpy.kernel
def pipe_copy(src: clpy.Pipe[float32], dst: clpy.WritePipe[float32], tmp: Global[float32],
              status: Global[int32]):
    i = clpy.get_global_id(0)
    status[i] = clpy.read_pipe(src, tmp, i)
    if status[i] == 0:
        clpy.write_pipe(dst, tmp + i)


@clpy.kernel
def pipe_reserve(src: clpy.Pipe[int32], dst: clpy.WritePipe[int32], buf: Global[int32],
                 n: Global[int32]):
    i = clpy.get_global_id(0)
    rid = clpy.reserve_read_pipe(src, 2)
    if clpy.is_valid_reserve_id(rid):
        clpy.read_pipe(src, rid, 0, buf, 2 * i)
        clpy.read_pipe(src, rid, 1, buf + 2 * i + 1)
        clpy.commit_read_pipe(src, rid)
    wid = clpy.work_group_reserve_write_pipe(dst, clpy.get_local_size(0))
    if clpy.is_valid_reserve_id(wid):
        clpy.write_pipe(dst, wid, clpy.get_local_id(0), buf, i)
    clpy.work_group_commit_write_pipe(dst, wid)
    sid = clpy.sub_group_reserve_write_pipe(dst, clpy.get_sub_group_size())
    if clpy.is_valid_reserve_id(sid):
        clpy.write_pipe(dst, sid, clpy.get_sub_group_local_id(), buf, i)
    clpy.sub_group_commit_write_pipe(dst, sid)
    if i == 0:
        n[0] = clpy.get_pipe_num_packets(src) + clpy.get_pipe_max_packets(dst)


@case("pipe_copy", needs=("pipes",))
def _copy() -> object:
    return pipe_copy


@case("pipe_reserve", needs=("pipes",))
def _reserve() -> object:
    return pipe_reserve
