"""Images on the simulator against values computed from the spec by hand (§3 addressing and
filtering, §3.3 conversions, §1.13.14 border colours), and the compile-time and checker errors
of issue 10."""

from __future__ import annotations

import numpy as np
import pytest

import clpy
from clpy import Global, float2, float4, int2, int4, uint4
from clpy.sim import SimulationError

NEAR = clpy.sampler(False, clpy.CLAMP_TO_EDGE, clpy.NEAREST)


@clpy.kernel
def sample(img: clpy.Image2D, smp: clpy.Sampler, c: Global[float2], out: Global[float4]):
    i = clpy.get_global_id(0)
    out[i] = clpy.read_imagef(img, smp, c[i])


def _sample(a, smp, coords) -> np.ndarray:
    c = np.asarray(coords, np.float32).reshape(-1, 2)
    out = np.zeros((len(c), 4), np.float32)
    sample[(len(c),), (1,)](a, smp, c, out, device="sim")
    return out


def test_nearest_addressing_modes_follow_section_3_2() -> None:
    a = np.arange(4, dtype=np.float32).reshape(1, 4) + 1  # one row: 1 2 3 4
    us = [-1.5, -0.2, 0.0, 0.99, 3.5, 4.0, 5.5]
    c = [(u, 0.5) for u in us]
    edge = _sample(a, clpy.sampler(False, "CLAMP_TO_EDGE"), c)[:, 0]
    assert edge.tolist() == [1, 1, 1, 1, 4, 4, 4]
    clamp = _sample(a, clpy.sampler(False, "CLAMP"), c)
    assert clamp[:, 0].tolist() == [0, 0, 1, 1, 4, 0, 0]
    assert clamp[:, 3].tolist() == [1, 1, 1, 1, 1, 1, 1]  # CL_R: border (0, 0, 0, 1)
    # normalized REPEAT: u = (s - floor(s)) * w; MIRRORED: flip at every integer
    s = [-0.1, 0.3, 1.3, 1.9, 2.6]
    rep = _sample(a, clpy.sampler(True, "REPEAT"), [(x, 0.5) for x in s])[:, 0]
    assert rep.tolist() == [4, 2, 2, 4, 3]
    mir = _sample(a, clpy.sampler(True, "MIRRORED_REPEAT"), [(x, 0.5) for x in s])[:, 0]
    assert mir.tolist() == [1, 2, 3, 1, 3]


def test_linear_weights_and_rgba_border() -> None:
    a = np.zeros((2, 2, 4), np.float32)
    a[..., 0] = [[0, 1], [2, 3]]
    a[..., 3] = 1
    r = _sample(a, clpy.sampler(False, "CLAMP_TO_EDGE", "LINEAR"), [(1.0, 1.0), (0.75, 1.25)])
    assert r[0, 0] == np.float32(1.5)  # the four texels, weight 1/4 each
    a0, b0 = np.float32(0.25), np.float32(0.75)  # frac(u - 0.5), frac(v - 0.5)
    want = (1 - a0) * (1 - b0) * 0 + a0 * (1 - b0) * 1 + (1 - a0) * b0 * 2 + a0 * b0 * 3
    assert r[1, 0] == np.float32(want)
    # CLAMP with RGBA: the border (0, 0, 0, 0) is blended in
    b = _sample(a, clpy.sampler(False, "CLAMP", "LINEAR"), [(0.0, 0.0)])
    assert b[0].tolist() == [0.0, 0.0, 0.0, 0.25]


def test_normalized_conversions_of_section_3_3_1() -> None:
    u8 = np.array([[0, 1, 128, 255]], np.uint8)
    got = _sample(clpy.Image(u8, normalized=True), NEAR, [(i, 0) for i in range(4)])[:, 0]
    assert got.tolist() == (u8[0].astype(np.float32) / np.float32(255)).tolist()
    s8 = np.array([[-128, -127, 0, 127]], np.int8)
    got = _sample(clpy.Image(s8, normalized=True), NEAR, [(i, 0) for i in range(4)])[:, 0]
    assert got.tolist() == [-1.0, -1.0, 0.0, 1.0]


@clpy.kernel
def put(img: clpy.WriteOnly[clpy.Image2D], v: Global[float4]):
    i = clpy.get_global_id(0)
    clpy.write_imagef(img, int2(i, 0), v[i])


def test_write_conversions_saturate_and_round_to_nearest_even() -> None:
    v = np.array([[-1, 2, 0.5 / 255, 1.5 / 255], [np.nan, 1, 0.2, 0.7]], np.float32)
    img = np.zeros((1, 2, 4), np.uint8)
    put[(2,), (1,)](clpy.Image(img, normalized=True), v, device="sim")
    assert img[0, 0].tolist() == [0, 255, 0, 2]  # 0.5 → 0, 1.5 → 2 (ties to even)
    assert img[0, 1].tolist() == [0, 255, 51, 178]  # NaN → 0; 0.2*255 = 51; 0.7*255 = 178.5 → 178


def test_packed_565_and_srgb_formats() -> None:
    px = np.array([[(31 << 11) | (32 << 5) | 0]], np.uint16)
    img = clpy.Image(px, channel_type="UNORM_SHORT_565")
    r = _sample(img, NEAR, [(0, 0)])[0]
    assert r.tolist() == [1.0, np.float32(32) / np.float32(63), 0.0, 1.0]
    srgb = clpy.Image(
        np.array([[[255, 0, 188, 128]]], np.uint8), channel_order="sRGBA", normalized=True
    )
    r = _sample(srgb, NEAR, [(0, 0)])[0]
    c = 188 / 255
    assert r[0] == 1.0 and r[1] == 0.0 and abs(r[2] - ((c + 0.055) / 1.055) ** 2.4) < 1e-6
    assert r[3] == np.float32(128) / np.float32(255)  # alpha stays linear


@clpy.kernel
def layers(img: clpy.Image1DArray, smp: clpy.Sampler, c: Global[float2], out: Global[float4]):
    i = clpy.get_global_id(0)
    out[i] = clpy.read_imagef(img, smp, c[i])


def test_array_layer_is_unnormalized_and_rounded_then_clamped() -> None:
    a = np.zeros((3, 4, 4), np.float32)
    a[:, :, 0] = np.arange(3)[:, None]
    c = np.array([[0.5, 0.4], [0.5, 0.6], [0.5, 1.5], [0.5, 2.5], [0.5, 9], [0.5, -3]], np.float32)
    out = np.zeros((6, 4), np.float32)
    layers[(6,), (1,)](a, clpy.sampler(True, "REPEAT"), c, out, device="sim")
    assert out[:, 0].tolist() == [0, 1, 2, 2, 2, 0]  # rint: 0.4→0 0.6→1 1.5→2 2.5→2


@clpy.kernel
def read_none(img: clpy.Image2D, c: Global[int2], out: Global[float4]):
    i = clpy.get_global_id(0)
    out[i] = clpy.read_imagef(img, c[i])


def test_sampler_less_read_outside_is_a_checker_report() -> None:
    c = np.array([[0, 0], [5, 0]], np.int32)
    with pytest.raises(
        SimulationError, match=r"(?s)outside the image \(4x2\).*test_images_sim.py:\d+"
    ):
        read_none[(2,), (1,)](
            np.zeros((2, 4), np.float32), c, np.zeros((2, 4), np.float32), device="sim"
        )


def test_write_outside_is_a_checker_report_and_arrays_stay_untouched() -> None:
    img = np.full((1, 1, 4), 7, np.uint8)
    v = np.ones((2, 4), np.float32)
    with pytest.raises(SimulationError, match="write to image `img` outside"):
        put[(2,), (1,)](clpy.Image(img, normalized=True), v, device="sim")
    assert (img == 7).all()


@clpy.kernel
def racy(img: clpy.WriteOnly[clpy.Image2D], v: Global[float4]):
    clpy.write_imagef(img, int2(0, 0), v[clpy.get_global_id(0)])


def test_race_on_an_image_element_is_reported() -> None:
    with pytest.raises(SimulationError, match="data race on image `img`"):
        racy[(4,), (2,)](np.zeros((1, 1, 4), np.float32), np.ones((4, 4), np.float32), device="sim")


@clpy.kernel
def ints(img: clpy.Image2D, out: Global[int4], uout: Global[uint4]):
    out[0] = clpy.read_imagei(img, int2(0, 0))
    uout[0] = uint4(clpy.get_image_width(img), clpy.get_image_height(img), 0, 0)


def test_integer_reads_return_stored_values_with_alpha_one() -> None:
    out = np.zeros((1, 4), np.int32)
    uout = np.zeros((1, 4), np.uint32)
    ints[(1,), (1,)](np.array([[-5, 3, 1]], np.int16), out, uout, device="sim")
    assert out[0].tolist() == [-5, 0, 0, 1]
    assert uout[0].tolist() == [3, 1, 0, 0]


# ----------------------------------------------------------------------------- compile errors


def k_write_read_only(img: clpy.Image2D):
    clpy.write_imagef(img, int2(0, 0), float4(0.0))


def k_read_write_only(img: clpy.WriteOnly[clpy.Image2D], out: Global[float4]):
    out[0] = clpy.read_imagef(img, int2(0, 0))


def k_sampler_on_read_write(img: clpy.ReadWrite[clpy.Image2D], out: Global[float4]):
    out[0] = clpy.read_imagef(img, NEAR, int2(0, 0))


def k_image_in_variable(img: clpy.Image2D, out: Global[float4]):
    im2 = img
    out[0] = clpy.read_imagef(im2, int2(0, 0))


@pytest.mark.parametrize(
    ("fn", "line", "message"),
    [
        (k_write_read_only, "clpy.write_imagef", "this image is read_only"),
        (k_read_write_only, "out[0] = clpy.read_imagef", "this image is write_only"),
        (
            k_sampler_on_read_write,
            "out[0] = clpy.read_imagef",
            "sampler cannot be used with a read_write",
        ),
        (k_image_in_variable, "im2 = img", "cannot be stored in a variable"),
    ],
)
def test_misuse_is_a_compile_error_at_the_python_line(fn, line: str, message: str) -> None:
    with pytest.raises(clpy.CompileError) as e:
        _ = clpy.kernel(fn).source
    text = str(e.value)
    assert message in text and line in text and "test_images_sim.py" in text


def test_image_in_a_struct_is_rejected() -> None:
    with pytest.raises(TypeError):

        @clpy.struct
        class Holder:
            img: clpy.Image2D  # type: ignore[valid-type]


def test_repeat_needs_normalized_coordinates() -> None:
    with pytest.raises(ValueError, match="normalized=True"):
        clpy.sampler(False, clpy.REPEAT)


def test_bad_host_arrays_name_the_parameter() -> None:
    with pytest.raises(ValueError, match=r"read_none\(\): parameter 'img'.*has 3 channels"):
        read_none[(1,), (1,)](
            np.zeros((2, 2, 3), np.float32),
            np.zeros((1, 2), np.int32),
            np.zeros((1, 4), np.float32),
            device="sim",
        )
    with pytest.raises(TypeError, match="parameter 'img'.*float64"):
        read_none[(1,), (1,)](
            np.zeros((2, 2)), np.zeros((1, 2), np.int32), np.zeros((1, 4), np.float32), device="sim"
        )


@clpy.kernel
def const_smp(img: clpy.Image2D, out: Global[float4]):
    smp = clpy.sampler(normalized=True, address=clpy.MIRRORED_REPEAT, filter=clpy.LINEAR)
    out[0] = clpy.read_imagef(img, smp, float2(0.3, 0.6)) + clpy.read_imagef(img, NEAR, int2(0, 0))


def test_emitted_source_declares_samplers_and_access_qualifiers() -> None:
    assert "read_only image2d_t img" in sample.source and "sampler_t smp" in sample.source
    assert "write_only image2d_t img" in put.source
    assert "read_only image1d_array_t img" in layers.source_for("opencl-c-1.2")
    src = const_smp.source
    assert (
        "__constant sampler_t clpy_sampler_norm_mirrored_repeat_linear = "
        "CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_MIRRORED_REPEAT | CLK_FILTER_LINEAR;" in src
    )
    assert "read_imagef(img, clpy_sampler_unnorm_clamp_to_edge_nearest, (int2)(0, 0))" in src
