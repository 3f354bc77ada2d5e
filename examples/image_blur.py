"""Images and samplers: a separable Gaussian blur and a bilinear resize of a generated RGBA
image, on the simulator and on the default device, checked against NumPy.

    .venv/bin/python examples/image_blur.py          # saves image_blur.png if matplotlib is there

The blur reads an 8-bit RGBA image (``clpy.Image(..., normalized=True)``: CL_UNORM_INT8, read
as floats in [0, 1]) with integer coordinates and a CLAMP_TO_EDGE sampler, one axis per pass,
writing a float image. The resize samples that image with normalized coordinates and a LINEAR
sampler: the hardware-style bilinear filter of the spec (§3.2).
"""

from __future__ import annotations

import sys

import numpy as np

import clpy
from clpy import float2, float4, int2

RADIUS = 3
WEIGHTS = np.exp(-0.5 * (np.arange(-RADIUS, RADIUS + 1) / 1.5) ** 2).astype(np.float32)
WEIGHTS /= WEIGHTS.sum()
W0, W1, W2, W3 = (float(w) for w in WEIGHTS[RADIUS:])  # compile-time constants

EDGE = clpy.sampler(normalized=False, address=clpy.CLAMP_TO_EDGE, filter=clpy.NEAREST)
BILINEAR = clpy.sampler(normalized=True, address=clpy.CLAMP_TO_EDGE, filter=clpy.LINEAR)


@clpy.func
def tap(src: clpy.Image2D, x: int, y: int, dx: int, dy: int, k: int) -> float4:
    a = clpy.read_imagef(src, EDGE, int2(x + k * dx, y + k * dy))
    b = clpy.read_imagef(src, EDGE, int2(x - k * dx, y - k * dy))
    return a + b


@clpy.kernel
def blur_pass(src: clpy.Image2D, dst: clpy.WriteOnly[clpy.Image2D], dx: int, dy: int):
    x = clpy.get_global_id(0)
    y = clpy.get_global_id(1)
    acc = clpy.read_imagef(src, EDGE, int2(x, y)) * W0
    acc += tap(src, x, y, dx, dy, 1) * W1
    acc += tap(src, x, y, dx, dy, 2) * W2
    acc += tap(src, x, y, dx, dy, 3) * W3
    clpy.write_imagef(dst, int2(x, y), acc)


@clpy.kernel
def resize(src: clpy.Image2D, dst: clpy.WriteOnly[clpy.Image2D]):
    x = clpy.get_global_id(0)
    y = clpy.get_global_id(1)
    w = clpy.get_image_width(dst)
    h = clpy.get_image_height(dst)
    uv = float2((x + 0.5) / w, (y + 0.5) / h)
    clpy.write_imagef(dst, int2(x, y), clpy.read_imagef(src, BILINEAR, uv))


def make_image(h: int = 96, w: int = 128) -> np.ndarray:
    """Rings, a checkerboard and a gradient: an RGBA uint8 picture with sharp edges."""
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    r = np.hypot(x - w / 2, y - h / 2)
    img = np.empty((h, w, 4), np.uint8)
    img[..., 0] = 255 * (np.sin(r / 3) > 0)
    img[..., 1] = 255 * (((x // 16) + (y // 16)) % 2)
    img[..., 2] = (255 * x / (w - 1)).astype(np.uint8)
    img[..., 3] = 255
    return img


def reference(img: np.ndarray, out_hw: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """NumPy: the same blur (edge-clamped taps, float32 sums in the kernel's order) and the
    spec's bilinear filter with CLAMP_TO_EDGE addressing."""
    f = img.astype(np.float32) / np.float32(255)

    def one_pass(a: np.ndarray, axis: int) -> np.ndarray:
        n = a.shape[axis]

        def shifted(k: int) -> np.ndarray:
            idx = np.clip(np.arange(n) + k, 0, n - 1)
            return np.take(a, idx, axis=axis)

        acc = a * WEIGHTS[RADIUS]
        for k in range(1, RADIUS + 1):
            acc = acc + (shifted(k) + shifted(-k)) * WEIGHTS[RADIUS + k]
        return acc

    blurred = one_pass(one_pass(f, 1), 0)
    h, w = blurred.shape[:2]
    oh, ow = out_hw
    u = (np.arange(ow, dtype=np.float32) + 0.5) / ow * w - 0.5
    v = (np.arange(oh, dtype=np.float32) + 0.5) / oh * h - 0.5
    i0 = np.floor(u).astype(int)
    j0 = np.floor(v).astype(int)
    a = (u - np.floor(u))[None, :, None]
    b = (v - np.floor(v))[:, None, None]

    def px(j: np.ndarray, i: np.ndarray) -> np.ndarray:
        return blurred[np.clip(j, 0, h - 1)][:, np.clip(i, 0, w - 1)]

    resized = (
        (1 - a) * (1 - b) * px(j0, i0)
        + a * (1 - b) * px(j0, i0 + 1)
        + (1 - a) * b * px(j0 + 1, i0)
        + a * b * px(j0 + 1, i0 + 1)
    )
    return blurred, resized


def run(device: str, img: np.ndarray, out_hw: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    h, w = img.shape[:2]
    tmp = np.zeros((h, w, 4), np.float32)
    blurred = np.zeros((h, w, 4), np.float32)
    src = clpy.Image(img, normalized=True)  # CL_RGBA / CL_UNORM_INT8
    blur_pass[(w, h), (8, 8)](src, tmp, 1, 0, device=device)
    blur_pass[(w, h), (8, 8)](tmp, blurred, 0, 1, device=device)
    resized = np.zeros((*out_hw, 4), np.float32)
    resize[(out_hw[1], out_hw[0]), (8, 8)](blurred, resized, device=device)
    return blurred, resized


def main() -> int:
    img = make_image()
    out_hw = (160, 200)
    want_blur, want_resize = reference(img, out_hw)
    devices = ["sim"]
    default = str(clpy.default_device())
    if default != "sim":
        devices.append(default)
    for dev in devices:
        blurred, resized = run(dev, img, out_hw)
        eb = float(np.abs(blurred - want_blur).max())
        er = float(np.abs(resized - want_resize).max())
        print(f"{dev}: blur max |error| {eb:.2e}, bilinear resize max |error| {er:.2e}")
        # the blur is exact up to float32 rounding; the spec leaves linear filtering's
        # precision to the device (GPUs use 8-bit weights): 1/256 of the range
        assert eb < 1e-5 and er < 1 / 256, (eb, er)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no PNG written")
        return 0
    fig, ax = plt.subplots(1, 3, figsize=(12, 4))
    for a, (title, pic) in zip(ax, [("input", img), ("blurred", blurred), ("resized", resized)]):
        a.imshow(np.clip(pic, 0, 255 if pic.dtype == np.uint8 else 1))
        a.set_title(title)
        a.axis("off")
    out = sys.argv[1] if len(sys.argv) > 1 else "image_blur.png"
    fig.savefig(out, dpi=80, bbox_inches="tight")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
