"""Rodinia SRAD (v1): speckle-reducing anisotropic diffusion of an image. After a one-time
``extract`` (exponentiate), every iteration runs ``prepare`` (values and squares), a tree
``reduce`` over 256-item work-groups launched repeatedly with a growing stride until one sum is
left, a blocking read of the two sums by the host (mean and variance of the image), then
``srad`` (derivatives and diffusion coefficient) and ``srad2`` (divergence, update); a final
``compress`` takes the logarithm. Many short launches and a host round trip per iteration.

Ported from Rodinia 3.1 ``opencl/srad/kernel/kernel_gpu_opencl.cl`` and
``kernel_gpu_opencl_wrapper.c`` (NUMBER_THREADS 256, column-major image, clamped neighbour
index tables). Departures, in both versions: the reduction's tail reads its leftover partial
sums with the pass's stride (Rodinia reads them unstrided, which is wrong after the first
pass); the reduction is one barrier loop with a group-uniform trip count instead of Rodinia's
three branches with a barrier loop in each (PoCL 3.0-rc2 miscompiles that form: the tree of a
full group is never summed); the kernels' constants are ``float`` (Rodinia's unsuffixed
literals make some of the arithmetic double on devices with fp64).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import clpy
from benchmarks.programs.common import Host, OrigHost, f32, i32, open_gate
from clpy import Global, float32, int32, int64

NAME = "srad"
ORIGIN = "Rodinia 3.1 opencl/srad/kernel/kernel_gpu_opencl.cl, kernel_gpu_opencl_wrapper.c"
KIND = "diffusion: 5 kernels + strided tree reduction, host readback each iteration"
CL_FILE = "srad.cl"
SIZES = {
    "small": dict(nr=64, nc=40, niter=2),
    "bench": dict(nr=502, nc=458, niter=4),
    "gpu": dict(nr=1024, nc=1024, niter=20),
}
TOL = dict(rtol=2e-4, atol=2e-3)
BITWISE = False  # exp and log: within the spec's ULP bounds, not bit-identical across devices
NT = 256
LAMBDA = 0.5


@clpy.kernel
def extract_kernel(d_ne: int64, d_i: Global[float32]):
    ei = clpy.get_group_id(0) * NT + clpy.get_local_id(0)
    if ei < d_ne:
        d_i[ei] = clpy.exp(d_i[ei] / 255.0)


@clpy.kernel
def prepare_kernel(
    d_ne: int64, d_i: Global[float32], sums: Global[float32], sums2: Global[float32]
):
    ei = clpy.get_group_id(0) * NT + clpy.get_local_id(0)
    if ei < d_ne:
        sums[ei] = d_i[ei]
        sums2[ei] = d_i[ei] * d_i[ei]


@clpy.kernel
def reduce_kernel(
    d_ne: int64,
    d_no: int64,
    d_mul: int32,
    sums: Global[float32],
    sums2: Global[float32],
    grid_dim: int32,
):
    bx = clpy.get_group_id(0)
    tx = clpy.get_local_id(0)
    ei = bx * NT + tx
    nf = NT - (grid_dim * NT - d_no)  # elements of the last group
    psum = clpy.local_array(float32, NT)
    psum2 = clpy.local_array(float32, NT)
    if ei < d_no:
        psum[tx] = sums[ei * d_mul]
        psum2[tx] = sums2[ei * d_mul]
    clpy.barrier()
    # elements of this group, and the largest power of two not above them: the tree covers
    # that many, the last one adds the rest (Rodinia branches three ways here, a barrier loop in
    # each branch; PoCL 3.0 miscompiles that form, see the module docstring)
    cnt = NT if bx != grid_dim - 1 else nf
    df = 1
    while df * 2 <= cnt:
        df *= 2
    i = 2
    while i <= df:
        if (tx + 1) % i == 0 and tx < df:
            psum[tx] = psum[tx] + psum[tx - i // 2]
            psum2[tx] = psum2[tx] + psum2[tx - i // 2]
        clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
        i *= 2
    if tx == df - 1:
        for j in range(bx * NT + df, bx * NT + cnt):
            psum[tx] = psum[tx] + sums[j * d_mul]
            psum2[tx] = psum2[tx] + sums2[j * d_mul]
        sums[bx * d_mul * NT] = psum[tx]
        sums2[bx * d_mul * NT] = psum2[tx]


@clpy.func
def _row_col(ei: int32, nr: int32) -> clpy.int2:
    row = (ei + 1) % nr - 1
    col = (ei + 1) // nr
    if (ei + 1) % nr == 0:
        row = nr - 1
        col = col - 1
    return clpy.int2(row, col)


@clpy.kernel
def srad_kernel(
    d_lambda: float32,
    nr: int32,
    nc: int32,
    d_ne: int64,
    i_n: Global[int32],
    i_s: Global[int32],
    j_e: Global[int32],
    j_w: Global[int32],
    d_n: Global[float32],
    d_s: Global[float32],
    d_e: Global[float32],
    d_w: Global[float32],
    q0sqr: float32,
    d_c: Global[float32],
    d_i: Global[float32],
):
    ei = clpy.get_group_id(0) * NT + clpy.get_local_id(0)
    rc = _row_col(ei, nr)
    row = rc.x
    col = rc.y
    if ei < d_ne:
        jc = d_i[ei]
        dn = d_i[i_n[row] + nr * col] - jc
        ds = d_i[i_s[row] + nr * col] - jc
        dw = d_i[row + nr * j_w[col]] - jc
        de = d_i[row + nr * j_e[col]] - jc
        g2 = (dn * dn + ds * ds + dw * dw + de * de) / (jc * jc)
        lap = (dn + ds + dw + de) / jc
        num = 0.5 * g2 - (1.0 / 16.0) * (lap * lap)
        den = 1.0 + 0.25 * lap
        qsqr = num / (den * den)
        den = (qsqr - q0sqr) / (q0sqr * (1.0 + q0sqr))
        c = 1.0 / (1.0 + den)
        if c < 0.0:
            c = float32(0.0)
        elif c > 1.0:
            c = float32(1.0)
        d_n[ei] = dn
        d_s[ei] = ds
        d_w[ei] = dw
        d_e[ei] = de
        d_c[ei] = c


@clpy.kernel
def srad2_kernel(
    d_lambda: float32,
    nr: int32,
    nc: int32,
    d_ne: int64,
    i_n: Global[int32],
    i_s: Global[int32],
    j_e: Global[int32],
    j_w: Global[int32],
    d_n: Global[float32],
    d_s: Global[float32],
    d_e: Global[float32],
    d_w: Global[float32],
    d_c: Global[float32],
    d_i: Global[float32],
):
    ei = clpy.get_group_id(0) * NT + clpy.get_local_id(0)
    rc = _row_col(ei, nr)
    row = rc.x
    col = rc.y
    if ei < d_ne:
        cn = d_c[ei]
        cs = d_c[i_s[row] + nr * col]
        cw = d_c[ei]
        ce = d_c[row + nr * j_e[col]]
        dd = cn * d_n[ei] + cs * d_s[ei] + cw * d_w[ei] + ce * d_e[ei]
        d_i[ei] = d_i[ei] + 0.25 * d_lambda * dd


@clpy.kernel
def compress_kernel(d_ne: int64, d_i: Global[float32]):
    ei = clpy.get_group_id(0) * NT + clpy.get_local_id(0)
    if ei < d_ne:
        d_i[ei] = clpy.log(d_i[ei]) * 255.0


def make_inputs(size: str, seed: int = 0) -> dict[str, Any]:
    p = SIZES[size]
    rng = np.random.default_rng(seed)
    nr, nc = p["nr"], p["nc"]
    # a smooth picture plus speckle, stored column by column (element row + nr * col)
    y, x = np.mgrid[0:nc, 0:nr]
    base = 120 + 60 * np.sin(x / 23.0) * np.cos(y / 17.0)
    img = base * rng.gamma(8.0, 1 / 8.0, (nc, nr))
    return dict(img=np.clip(img, 1, 255).astype(np.float32), niter=p["niter"])


def _tables(nr: int, nc: int) -> dict[str, np.ndarray]:
    i_n = np.arange(nr, dtype=np.int32) - 1
    i_s = np.arange(nr, dtype=np.int32) + 1
    j_w = np.arange(nc, dtype=np.int32) - 1
    j_e = np.arange(nc, dtype=np.int32) + 1
    i_n[0], i_s[-1], j_w[0], j_e[-1] = 0, nr - 1, 0, nc - 1
    return dict(i_n=i_n, i_s=i_s, j_e=j_e, j_w=j_w)


def _q0sqr(total: float, total2: float, ne: int) -> float:
    mean = np.float32(total) / np.float32(ne)
    mean2 = mean * mean
    var = np.float32(total2) / np.float32(ne) - mean2
    return float(var / mean2)


def numpy_reference(inp: dict[str, Any]) -> np.ndarray:
    img = np.exp(inp["img"].astype(np.float64) / 255.0)  # [col, row]
    ne = img.size
    for _ in range(inp["niter"]):
        mean = img.sum() / ne
        q0 = (np.square(img).sum() / ne - mean * mean) / (mean * mean)
        p = np.pad(img, 1, mode="edge")
        dn = p[1:-1, :-2] - img  # row - 1
        ds = p[1:-1, 2:] - img
        dw = p[:-2, 1:-1] - img  # col - 1
        de = p[2:, 1:-1] - img
        g2 = (dn * dn + ds * ds + dw * dw + de * de) / (img * img)
        lap = (dn + ds + dw + de) / img
        num = 0.5 * g2 - (1.0 / 16.0) * lap * lap
        den = 1.0 + 0.25 * lap
        qsqr = num / (den * den)
        den = (qsqr - q0) / (q0 * (1.0 + q0))
        c = np.clip(1.0 / (1.0 + den), 0.0, 1.0)
        pc = np.pad(c, 1, mode="edge")
        cs = pc[1:-1, 2:]
        ce = pc[2:, 1:-1]
        img = img + 0.25 * LAMBDA * (c * dn + cs * ds + c * dw + ce * de)
    return (np.log(img) * 255.0).astype(np.float32)


def _reduce_passes(ne: int) -> list[tuple[int, int, int]]:
    """(groups, elements, stride) of each reduce launch, as the Rodinia host loops them."""
    blocks = -(-ne // NT)
    out = []
    no, mul = ne, 1
    while blocks != 0:
        out.append((blocks, no, mul))
        no = blocks
        if blocks == 1:
            blocks = 0
        else:
            mul *= NT
            blocks = -(-blocks // NT)
    return out


def run_clpy(inp: dict[str, Any], device: Any, *, resident: bool, events: Any = None) -> np.ndarray:
    h = Host(device, resident, events)
    nc, nr = inp["img"].shape
    ne = nr * nc
    g = (-(-ne // NT) * NT,)
    loc = (NT,)
    img = h.put(inp["img"].ravel())
    t = {k: h.put(v) for k, v in _tables(nr, nc).items()}
    tabs = (t["i_n"], t["i_s"], t["j_e"], t["j_w"])
    sums, sums2 = h.empty(ne, np.float32), h.empty(ne, np.float32)
    dn, ds, dw, de, c = (h.empty(ne, np.float32) for _ in range(5))
    h(extract_kernel, g, loc, ne, img)
    for _ in range(inp["niter"]):
        h(prepare_kernel, g, loc, ne, img, sums, sums2)
        for blocks, no, mul in _reduce_passes(ne):
            h(reduce_kernel, (blocks * NT,), loc, ne, no, mul, sums, sums2, blocks)
        # one element each (a DeviceArray reads just it; the original host's blocking reads)
        q0 = _q0sqr(float(sums[0]), float(sums2[0]), ne)
        h(srad_kernel, g, loc, LAMBDA, nr, nc, ne, *tabs, dn, ds, de, dw, q0, c, img)
        h(srad2_kernel, g, loc, LAMBDA, nr, nc, ne, *tabs, dn, ds, de, dw, c, img)
    h(compress_kernel, g, loc, ne, img)
    return h.get(img).reshape(nc, nr)


def run_original(inp: dict[str, Any], ctx: Any, queue: Any, events: Any = None) -> np.ndarray:
    o = OrigHost(ctx, queue, CL_FILE, f"-DNUMBER_THREADS={NT}", events)
    nc, nr = inp["img"].shape
    ne = nr * nc
    g = (-(-ne // NT) * NT,)
    loc = (NT,)
    lne = np.int64(ne)
    img = o.buf(inp["img"].ravel())
    t = {k: o.buf(v) for k, v in _tables(nr, nc).items()}
    tabs = (t["i_n"], t["i_s"], t["j_e"], t["j_w"])
    sums, sums2 = o.empty(4 * ne), o.empty(4 * ne)
    dn, ds, dw, de, c = (o.empty(4 * ne) for _ in range(5))
    one, one2 = np.zeros(1, np.float32), np.zeros(1, np.float32)
    o("extract_kernel", g, loc, lne, img)
    for _ in range(inp["niter"]):
        o("prepare_kernel", g, loc, lne, img, sums, sums2)
        for blocks, no, mul in _reduce_passes(ne):
            o(
                "reduce_kernel",
                (blocks * NT,),
                loc,
                lne,
                np.int64(no),
                i32(mul),
                sums,
                sums2,
                i32(blocks),
            )
        open_gate()
        o.cl.enqueue_copy(o.queue, one, sums)  # blocking reads of the two totals
        o.cl.enqueue_copy(o.queue, one2, sums2)
        q0 = _q0sqr(float(one[0]), float(one2[0]), ne)
        o(
            "srad_kernel",
            g,
            loc,
            f32(LAMBDA),
            i32(nr),
            i32(nc),
            lne,
            *tabs,
            dn,
            ds,
            de,
            dw,
            f32(q0),
            c,
            img,
        )
        o("srad2_kernel", g, loc, f32(LAMBDA), i32(nr), i32(nc), lne, *tabs, dn, ds, de, dw, c, img)
    o("compress_kernel", g, loc, lne, img)
    return o.read(img, (nc, nr), np.float32)
