"""Async copies between global and local memory (spec §1.13.10 in shared/spec, §6.13.10 of
OpenCL C 2.0): a tiled matmul and a 2-D convolution staging tiles with
``async_work_group_copy``/``async_work_group_strided_copy``, vectors, events shared and waited
in every form, on the simulator and on an OpenCL device (PoCL; CLPY_TEST_PLATFORM picks
another) against NumPy; the simulator's checks of what the spec leaves undefined; type
errors and the emitted C."""

from __future__ import annotations

import runpy
import warnings
from pathlib import Path

import numpy as np
import pytest

import clpy
from clpy import Global, float32, int32
from clpy.runtime.devices import Device
from clpy_sim import SimulationError

T = 8  # tile edge (work-group T x T)



# ----------------------------------------------------------------------------- kernels


@clpy.kernel
def matmul_async(a: Global[float32], b: Global[float32], c: Global[float32], n: int32):
    """C = A B with T x T tiles: rows of A with async_work_group_copy (one event shared by
    all copies of a tile), columns of B gathered transposed with the strided copy."""
    tx = clpy.get_local_id(0)
    ty = clpy.get_local_id(1)
    bx = clpy.get_group_id(0)
    by = clpy.get_group_id(1)
    ta = clpy.local_array(float32, T * T)
    tbt = clpy.local_array(float32, T * T)  # B tile, transposed
    acc = float32(0)
    for t0 in range(0, n, T):
        ev = clpy.async_work_group_copy(ta, a + by * T * n + t0, T, 0)
        for r in range(1, T):
            ev = clpy.async_work_group_copy(ta + r * T, a + (by * T + r) * n + t0, T, ev)
        for col in range(T):
            ev = clpy.async_work_group_strided_copy(
                tbt + col * T, b + t0 * n + bx * T + col, T, n, ev
            )
        clpy.wait_group_events(ev)
        for k in range(T):
            acc += ta[ty * T + k] * tbt[tx * T + k]
        clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)  # before the next tile overwrites them
    c[(by * T + ty) * n + bx * T + tx] = acc


KERNEL_3X3 = np.array([[1, 2, 1], [2, 4, 2], [1, 2, 1]], np.float32) / 16  # a module table


@clpy.kernel
def conv2d_async(src: Global[float32], out: Global[float32], w: int32):
    """3x3 convolution of a padded (h+2) x (w+2) image: each work-group copies its
    (T+2) x (T+2) halo tile row by row, waits on the events of two halves (a list), then
    reads the filter from the module-level table KERNEL_3X3."""
    tx = clpy.get_local_id(0)
    ty = clpy.get_local_id(1)
    gx0 = clpy.get_group_id(0) * T
    gy0 = clpy.get_group_id(1) * T
    tile = clpy.local_array(float32, (T + 2) * (T + 2))
    wp = w + 2
    e1 = clpy.async_work_group_copy(tile, src + gy0 * wp + gx0, T + 2)
    for r in range(1, (T + 2) // 2):
        e1 = clpy.async_work_group_copy(tile + r * (T + 2), src + (gy0 + r) * wp + gx0, T + 2, e1)
    e2 = clpy.async_work_group_copy(
        tile + (T + 2) // 2 * (T + 2), src + (gy0 + (T + 2) // 2) * wp + gx0, T + 2
    )
    for r in range((T + 2) // 2 + 1, T + 2):
        e2 = clpy.async_work_group_copy(tile + r * (T + 2), src + (gy0 + r) * wp + gx0, T + 2, e2)
    clpy.wait_group_events([e1, e2])
    acc = float32(0)
    for dy in range(3):
        for dx in range(3):
            acc += KERNEL_3X3[dy][dx] * tile[(ty + dy) * (T + 2) + tx + dx]
    out[(gy0 + ty) * w + gx0 + tx] = acc


@clpy.kernel
def scatter_back(a: Global[float32], out: Global[float32], groups: int32):
    """Global -> local, compute in local memory, local -> global with the strided scatter:
    out[j * groups + g] = 2 * a[g * 16 + j]; the events live in a private array."""
    g = clpy.get_group_id(0)
    lid = clpy.get_local_id(0)
    tile = clpy.local_array(float32, 16)
    evs = clpy.private_array(clpy.event_t, 1)
    evs[0] = clpy.async_work_group_copy(tile, a + g * 16, 16, 0)
    clpy.wait_group_events(1, evs)
    tile[lid] = tile[lid] * 2
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    e = clpy.async_work_group_strided_copy(out + g, tile, 16, groups, 0)
    clpy.wait_group_events(e)


@clpy.kernel
def copy_vec4(a: Global[clpy.float4], out: Global[clpy.float4]):
    g = clpy.get_group_id(0)
    lid = clpy.get_local_id(0)
    tile = clpy.local_array(clpy.float4, 8)
    clpy.prefetch(a + g * 8, 8)
    e = clpy.async_work_group_copy(tile, a + g * 8, 8, 0)
    clpy.wait_group_events(e)
    out[g * 8 + lid] = tile[7 - lid] + clpy.float4(1, 2, 3, 4)


@clpy.kernel
def copy_uchar(a: Global[clpy.uchar], out: Global[clpy.uchar]):
    g = clpy.get_group_id(0)
    lid = clpy.get_local_id(0)
    tile = clpy.local_array(clpy.uchar, 32)
    e1 = clpy.async_work_group_copy(tile, a + g * 32, 16, 0)
    e2 = clpy.async_work_group_copy(tile + 16, a + g * 32 + 16, 16, 0)
    clpy.wait_group_events(e1, e2)
    out[g * 32 + lid] = tile[31 - lid] + 1


# ----------------------------------------------------------------------------- results


def test_tiled_matmul(dev: Device) -> None:
    n = 32
    rng = np.random.default_rng(1)
    a = rng.integers(-4, 5, (n, n)).astype(np.float32)
    b = rng.integers(-4, 5, (n, n)).astype(np.float32)
    c = np.zeros((n, n), np.float32)
    matmul_async[(n, n), (T, T)](a, b, c, n, device=dev)
    np.testing.assert_array_equal(c, a @ b)  # small integers: exact in any order


def test_conv2d_with_halo_tiles(dev: Device) -> None:
    h, w = 16, 24
    rng = np.random.default_rng(2)
    img = rng.random((h, w)).astype(np.float32)
    padded = np.pad(img, 1)
    out = np.zeros((h, w), np.float32)
    conv2d_async[(w, h), (T, T)](padded, out, w, device=dev)
    ref = np.zeros((h, w), np.float64)
    for dy in range(3):
        for dx in range(3):
            ref += KERNEL_3X3[dy, dx] * padded[dy : dy + h, dx : dx + w]
    np.testing.assert_allclose(out, ref, rtol=1e-6, atol=1e-6)


def test_strided_scatter_and_event_array(dev: Device) -> None:
    groups = 4
    a = np.arange(16 * groups, dtype=np.float32)
    out = np.zeros(16 * groups, np.float32)
    scatter_back[(16 * groups,), (16,)](a, out, groups, device=dev)
    np.testing.assert_array_equal(out, (2 * a).reshape(groups, 16).T.ravel())


def test_vector_and_small_types(dev: Device) -> None:
    a = np.arange(32 * 4, dtype=np.float32).reshape(32, 4)
    out = np.zeros_like(a)
    copy_vec4[(32,), (8,)](a, out, device=dev)
    np.testing.assert_array_equal(out, a.reshape(4, 8, 4)[:, ::-1].reshape(32, 4) + [1, 2, 3, 4])
    u = np.arange(64, dtype=np.uint8)
    uo = np.zeros_like(u)
    copy_uchar[(64,), (32,)](u, uo, device=dev)
    np.testing.assert_array_equal(uo, u.reshape(2, 32)[:, ::-1].ravel() + 1)


# ----------------------------------------------------------------------------- emitted C


def test_emitted_natively_on_1_2_and_2_0() -> None:
    for target in ("opencl-c-1.2", "opencl-c-2.0"):
        src = scatter_back.source_for(target, line_directives=False)
        assert "evs[0] = async_work_group_copy(tile, a + g * 16, 16, 0);" in src
        assert "wait_group_events(1, evs);" in src
        assert "async_work_group_strided_copy(out + g, tile, 16, (size_t)groups, 0)" in src
        assert "void clpy_wait_events1(event_t e0)" in src
    src = copy_uchar.source_for("opencl-c-2.0", line_directives=False)
    assert "clpy_wait_events2(e1, e2);" in src
    assert "event_t list[2] = {e0, e1};" in src
    assert "prefetch(a + g * 8, 8);" in copy_vec4.source_for("opencl-c-2.0")


# ----------------------------------------------------------------------------- type errors


def _compile(
    tmp_path: Path, body: str, params: str = "a: Global[float32], out: Global[float32]"
) -> None:
    src = (
        "import clpy\nfrom clpy import Constant, Global, float32, int32\n\n"
        f"@clpy.kernel\ndef bad({params}):\n    tile = clpy.local_array(float32, 8)\n"
        f"    lid = clpy.get_local_id(0)\n    {body}\n"
    )
    path = tmp_path / "bad_kernel.py"
    path.write_text(src)
    runpy.run_path(str(path))["bad"].source_for("opencl-c-2.0")


@pytest.mark.parametrize(
    ("body", "params", "message"),
    [
        ("e = clpy.async_work_group_copy(tile, a, 8, 0)",
         "a: Constant[float32], out: Global[float32]", "Constant"),
        ("e = clpy.async_work_group_copy(out, a, 8, 0)", None, "global -> local"),
        ("e = clpy.async_work_group_copy(tile, clpy.int32(0), 8, 0)", None, "pointer"),
        ("e = clpy.async_work_group_copy(tile, a, 8, 1)", None, "event_t or 0"),
        ("e = clpy.async_work_group_copy(tile, a, 8.5, 0)", None, "integer"),
        ("clpy.wait_group_events(lid)", None, "event_t"),
        ("clpy.prefetch(tile, 8)", None, "global"),
    ],
)
def test_type_errors(tmp_path: Path, body: str, params: str | None, message: str) -> None:
    with pytest.raises(clpy.CompileError, match=message):
        if params:
            _compile(tmp_path, body, params)
        else:
            _compile(tmp_path, body)


def test_mismatched_element_types(tmp_path: Path) -> None:
    with pytest.raises(clpy.CompileError, match="dst points to float but src to int"):
        _compile(
            tmp_path,
            "e = clpy.async_work_group_copy(tile, a, 8, 0)",
            "a: Global[int32], out: Global[float32]",
        )


# ----------------------------------------------------------------------------- sim checks


@clpy.kernel
def read_before_wait(a: Global[float32], out: Global[float32]):
    lid = clpy.get_local_id(0)
    tile = clpy.local_array(float32, 16)
    e = clpy.async_work_group_copy(tile, a, 16, 0)
    x = tile[lid]
    clpy.wait_group_events(e)
    out[lid] = x


@clpy.kernel
def no_barrier_before_copy_out(out: Global[float32]):
    lid = clpy.get_local_id(0)
    tile = clpy.local_array(float32, 16)
    tile[lid] = float32(lid)
    e = clpy.async_work_group_copy(out, tile, 16, 0)
    clpy.wait_group_events(e)


@clpy.kernel
def source_written_in_flight(out: Global[float32]):
    lid = clpy.get_local_id(0)
    tile = clpy.local_array(float32, 16)
    tile[lid] = float32(lid)
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    e = clpy.async_work_group_copy(out, tile, 16, 0)
    tile[lid] = float32(0)
    clpy.wait_group_events(e)


@clpy.kernel
def src_differs(a: Global[float32], out: Global[float32]):
    lid = clpy.get_local_id(0)
    tile = clpy.local_array(float32, 16)
    e = clpy.async_work_group_copy(tile, a + lid, 4, 0)
    clpy.wait_group_events(e)
    out[lid] = tile[0]


@clpy.kernel
def copy_too_long(a: Global[float32], out: Global[float32]):
    lid = clpy.get_local_id(0)
    tile = clpy.local_array(float32, 16)
    e = clpy.async_work_group_copy(tile, a, 32, 0)
    clpy.wait_group_events(e)
    out[lid] = tile[lid]


@clpy.kernel
def part_of_group(a: Global[float32], out: Global[float32]):
    lid = clpy.get_local_id(0)
    tile = clpy.local_array(float32, 16)
    if a[lid] > 0:
        e = clpy.async_work_group_copy(tile, a, 16, 0)
        clpy.wait_group_events(e)
    out[lid] = 1


@clpy.kernel
def copy_then_wait_ok(a: Global[float32], out: Global[float32]):
    lid = clpy.get_local_id(0)
    tile = clpy.local_array(float32, 16)
    e = clpy.async_work_group_copy(tile, a, 16, 0)
    clpy.wait_group_events(e)
    out[lid] = tile[15 - lid]  # no barrier needed after the wait


@pytest.mark.parametrize(
    ("kernel", "kind", "message"),
    [
        (read_before_wait, "data-race", "in flight"),
        (no_barrier_before_copy_out, "data-race", "no implicit barrier"),
        (source_written_in_flight, "data-race", "as source is in flight"),
        (src_differs, "barrier-divergence", "src differs"),
        (copy_too_long, "out-of-bounds", "outside local memory `tile`"),
        (part_of_group, "barrier-divergence", "reached by 8 of the 16"),
    ],
)
def test_simulator_reports(kernel: clpy.Kernel, kind: str, message: str) -> None:
    nparams = len(kernel.param_names)
    a = np.where(np.arange(64) % 2 == 0, 1.0, -1.0).astype(np.float32)
    args = (a, np.zeros(16, np.float32)) if nparams == 2 else (np.zeros(16, np.float32),)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", clpy.UniformityWarning)
        with pytest.raises(SimulationError) as e:
            kernel[(16,), (16,)](*args, device="sim")
    r = e.value.reports[0]
    assert r.kind == kind, r
    assert message in r.message, r.message


def test_wait_makes_the_tile_readable_by_every_work_item() -> None:
    a = np.arange(16, dtype=np.float32)
    out = np.zeros(16, np.float32)
    copy_then_wait_ok[(16,), (16,)](a, out, device="sim")
    np.testing.assert_array_equal(out, a[::-1])
