"""Statements: if/elif/else, for (1-3 args, negative and dynamic steps), while, break,
continue, return, ternary, short-circuit and/or/not, chained comparisons."""

from __future__ import annotations

import clpy
from clpy import Global, float32, int32

from . import case


@clpy.kernel
def ctl_if_chain(x: Global[int32], out: Global[int32]):
    i = clpy.get_global_id(0)
    v = x[i]
    if v < 0:
        r = -1
    elif v == 0:
        r = 0
    elif v < 10:
        r = 1
    else:
        r = 2
        if v > 100:
            r = 3
    out[i] = r


@clpy.kernel
def ctl_for_ranges(out: Global[int32], n: int32, step: int32):
    i = clpy.get_global_id(0)
    acc = 0
    for a in range(n):
        acc += a
    for b in range(2, n):
        acc += b
    for c in range(n, 0, -1):
        acc -= c
    for d in range(10, -10, -3):
        acc += d
    for e in range(0, n, step):
        acc += e
    for f in range(0, 100, 4):
        if f > n:
            break
        if f % 8 == 0:
            continue
        acc += f
    out[i] = acc + f


@clpy.kernel
def ctl_while(x: Global[int32]):
    i = clpy.get_global_id(0)
    v = x[i]
    steps = 0
    while v != 1 and steps < 1000:
        if v % 2 == 0:
            v = v // 2
        else:
            v = 3 * v + 1
        steps += 1
    x[i] = steps


@clpy.kernel
def ctl_logic(x: Global[float32], flags: Global[int32], n: int32):
    i = clpy.get_global_id(0)
    if not (0 <= i < n):
        return
    a = x[i]
    ok = a > 0.0 and a < 1.0 or a == 2.0
    inside = 0.0 <= a <= 1.0 < 2.0
    if ok and not inside:
        flags[i] = 1
    flags[i] = 2 if inside else flags[i]
    x[i] = a if a > 0.5 else -a


@clpy.func
def clamp_index(i: int32, n: int32) -> int32:
    if i < 0:
        return 0
    if i >= n:
        return n - 1
    return i


@clpy.kernel
def ctl_return(x: Global[float32], n: int32):
    i = clpy.get_global_id(0)
    j = clamp_index(int32(i) - 1, n)
    if j == 0:
        return
    x[i] = x[j]


@clpy.kernel
def ctl_hoist(x: Global[float32], n: int32):
    i = clpy.get_global_id(0)
    if i < n:
        y = x[i] * 2.0
        z = 1
    else:
        y = 0.0
        z = 2
    for k in range(3):
        w = y + k
    x[i] = y + z + w + k


@case("ctl_if_chain")
def _if() -> object:
    return ctl_if_chain


@case("ctl_for_ranges")
def _for() -> object:
    return ctl_for_ranges


@case("ctl_while")
def _while() -> object:
    return ctl_while


@case("ctl_logic")
def _logic() -> object:
    return ctl_logic


@case("ctl_return")
def _ret() -> object:
    return ctl_return


@case("ctl_hoist")
def _hoist() -> object:
    return ctl_hoist


@clpy.struct
class Counter:
    n: int32
    scale: float32


@clpy.kernel
def ctl_loop_bounds(x: Global[int32], c: Counter, step: int32):
    t = c
    for i in range(t.n):
        t.n -= 1
        x[i] = t.n
    for j in range(x[0], 0, -1):
        x[j] = 0
    m = 4
    for q in range(0, m, step):  # noqa: B007
        m = 2
        step += 1
    for r in range(10):
        r = r * 2
        x[r] = r


@case("ctl_loop_bounds")
def _bounds() -> object:
    return ctl_loop_bounds


@clpy.kernel
def ctl_loop_carried(x: Global[float32], out: Global[float32], n: int32):
    # range(4), not range(n): with n <= 0, out[i] = acc would read acc unassigned, a compile
    # error (clpy/frontend/definite.py); acc + x[k] reads the value of an earlier iteration
    for i in range(2):
        for k in range(4):
            if k == 0 and i == 0:
                acc = x[0]
            else:
                acc = acc + x[k]
        out[i] = acc
    for j in range(n):
        t = x[j] * 2.0
        out[j + 2] = t


@case("ctl_loop_carried")
def _carried() -> object:
    return ctl_loop_carried


@clpy.kernel
def ctl_count_down(x: Global[int32]):
    n = clpy.get_global_size(0)
    for i in range(n - 1, -1, -1):
        x[i] = int32(n - i)


@case("ctl_count_down")
def _down() -> object:
    return ctl_count_down
