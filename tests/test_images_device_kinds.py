"""Images beyond the 2D ones (1D, 3D, 1D and 2D arrays), the image queries and read_write
images: the simulator against an OpenCL device on the same images and coordinates, checked as
tests/test_images_device.py says (through tests/image_checks.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import clpy
from clpy import Global, float2, float4, int2, int32
from clpy.runtime.api import get_device
from tests.image_checks import (
    SAMPLERS,
    H,
    W,
    assert_ulp,
    candidates,
    check_linear,
    check_nearest,
    data,
    image,
    need,
    pinned,
    quantum,
    run,
    texel_values,
)


@pytest.fixture(scope="module")
def dev(cl_device: Any) -> Any:
    return get_device(cl_device)


@clpy.kernel
def read_1d(img: clpy.Image1D, smp: clpy.Sampler, c: Global[float], out: Global[float4]):
    i = clpy.get_global_id(0)
    out[i] = clpy.read_imagef(img, smp, c[i])


@clpy.kernel
def read_3d(img: clpy.Image3D, smp: clpy.Sampler, c: Global[float4], out: Global[float4]):
    i = clpy.get_global_id(0)
    out[i] = clpy.read_imagef(img, smp, c[i])


@clpy.kernel
def read_1d_array(
    img: clpy.Image1DArray, smp: clpy.Sampler, c: Global[float2], out: Global[float4]
):
    i = clpy.get_global_id(0)
    out[i] = clpy.read_imagef(img, smp, c[i])


@clpy.kernel
def read_2d_array(
    img: clpy.Image2DArray, smp: clpy.Sampler, c: Global[float4], out: Global[float4]
):
    i = clpy.get_global_id(0)
    out[i] = clpy.read_imagef(img, smp, c[i])


_KINDS = [
    # kernel, mem type, array shape (slowest axis first), coordinate lanes, sizes of x y z
    (read_1d, "IMAGE1D", (9, 4), 1, (9,)),
    (read_1d_array, "IMAGE1D_ARRAY", (3, 9, 4), 2, (9, 3)),
    (read_2d_array, "IMAGE2D_ARRAY", (3, 5, 6, 4), 4, (6, 5, 3)),
    (read_3d, "IMAGE3D", (4, 5, 6, 4), 4, (6, 5, 4)),
]


@pytest.mark.parametrize("ctype", ["FLOAT", "UNORM_INT8"])
@pytest.mark.parametrize("case", range(len(_KINDS)), ids=[k[1] for k in _KINDS])
def test_1d_3d_and_array_reads_match_the_device(dev: Any, case: int, ctype: str) -> None:
    k, mem, shape, lanes, sizes = _KINDS[case]
    need(dev, "RGBA", ctype, mem)
    rng = np.random.default_rng(case)
    a = data(ctype, shape, rng)
    img = image(a, ctype)
    arrayed = "ARRAY" in mem
    tex = texel_values(a, ctype, 4)
    dims = len(sizes) - arrayed
    for smp in SAMPLERS:
        if smp.address == "NONE":
            continue
        n = 50
        sz = np.array(sizes, np.float32)
        c = rng.uniform(-0.7 * sz, 1.7 * sz, (n, len(sizes))).astype(np.float32)
        if smp.normalized:
            c /= sz
            if arrayed:
                # The layer coordinate is never normalized (spec §3.1); PoCL scales it by the
                # layer count. Layer 0 reads the same either way: the simulator's layer
                # selection with normalized samplers is tested in test_images_sim.py.
                c[:, -1] = 0
        if lanes == 4 and c.shape[1] == 3:
            c = np.concatenate([c, np.zeros((n, 1), np.float32)], 1)
        cc = c[:, 0].copy() if lanes == 1 else c
        out = np.zeros((n, 4), np.float32)
        s, d = run(k, dev, n, img, smp, cc, out)
        if pinned(smp):
            assert_ulp(s, d, 1.5 if "NORM" in ctype else 0, repr(smp))
            continue
        layer = None
        if arrayed:  # rint, clamped to the layers (§3.4); never normalized (§3.1)
            layer = np.clip(np.rint(c[:, dims].astype(np.float64)), 0, shape[0] - 1)
            layer = layer.astype(np.int64)
        cand = candidates(tex, c[:, :dims], smp, np.zeros(4), layer)
        if smp.filter == "LINEAR":
            check_linear(s, d, cand, dims, repr(smp), quantum(ctype))
        else:
            check_nearest(s, d, cand, "NORM" in ctype, repr(smp))


@clpy.kernel
def queries(a: clpy.Image2DArray, b: clpy.Image3D, out: Global[int32]):
    out[0] = clpy.get_image_width(a)
    out[1] = clpy.get_image_height(a)
    out[2] = int32(clpy.get_image_array_size(a))
    out[3] = clpy.get_image_depth(b)
    d = clpy.get_image_dim(b)
    out[4] = d.x * 100 + d.y * 10 + d.z
    out[5] = clpy.get_image_channel_order(a)
    out[6] = clpy.get_image_channel_data_type(a)
    out[7] = clpy.get_image_channel_data_type(b)
    out[8] = clpy.get_image_dim(a).y


def test_queries_match_the_device(dev: Any) -> None:
    need(dev, "RGBA", "UNORM_INT8", "IMAGE2D_ARRAY")
    need(dev, "R", "FLOAT", "IMAGE3D")
    a = clpy.Image(np.zeros((3, 5, 7, 4), np.uint8), normalized=True)
    b = np.zeros((2, 3, 4), np.float32)
    s, d = run(queries, dev, 1, a, b, np.zeros(9, np.int32))
    assert s.tolist() == d.tolist() == [7, 5, 3, 2, 432, 0x10B5, 0x10D2, 0x10DE, 5]


@clpy.kernel
def rw_invert(img: clpy.ReadWrite[clpy.Image2D]):
    p = int2(clpy.get_global_id(0), clpy.get_global_id(1))
    c = clpy.read_imagef(img, p)
    clpy.write_imagef(img, p, float4(1.0) - c)


def test_read_write_image_matches_the_device(dev: Any) -> None:
    if not dev.target.has("__opencl_c_read_write_images"):
        pytest.skip(f"{dev} has no read_write images (__opencl_c_read_write_images)")
    a = np.random.default_rng(1).integers(0, 256, (H, W, 4)).astype(np.uint8)
    outs = []
    for d in ("sim", dev):
        x = a.copy()
        rw_invert[(W, H), (1, 1)](clpy.Image(x, normalized=True), device=d)
        outs.append(x)
    assert np.array_equal(outs[0], outs[1])
    assert np.array_equal(outs[0], 255 - a)
