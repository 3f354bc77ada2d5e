"""Rodinia Backprop: one training step of a 3-layer perceptron (``in`` inputs, 16 hidden
units, 1 output). ``bpnn_layerforward_ocl`` multiplies the input→hidden weights by the inputs
in 16×16 work-groups and reduces each 16-row column in local memory (a barrier per level),
giving per-group partial sums; the host finishes the hidden layer, the output layer and the
error terms (as Rodinia's host does, in ``bpnn_train_kernel``), then
``bpnn_adjust_weights_ocl`` updates every input→hidden weight with momentum.

Ported from Rodinia 3.1 ``opencl/backprop/backprop_kernel.cl`` and ``backprop_ocl.cpp``
(work-groups 16×16, grid 16 × in, the same launch and upload sequence). The reduction uses
the powers 2, 4, 8, 16 of Rodinia's CUDA kernel; the OpenCL kernel's loop starts at 1 and so
doubles every partial sum.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import clpy
from benchmarks.programs.common import Host, OrigHost, i32
from clpy import Global, float32, int32

NAME = "backprop"
ORIGIN = "Rodinia 3.1 opencl/backprop/backprop_kernel.cl, backprop_ocl.cpp"
KIND = "NN layer: 16x16 groups, local column reduction; weight update"
CL_FILE = "backprop.cl"
SIZES = {"small": dict(n=1024), "bench": dict(n=65536), "gpu": dict(n=1 << 21)}
TOL = dict(rtol=2e-4, atol=1e-6)

WIDTH = 16
HEIGHT = 16
HID = 16
ETA = 0.3
MOMENTUM = 0.3


@clpy.kernel
def bpnn_layerforward(
    input_units: Global[float32],
    input_hidden: Global[float32],
    partial_sum: Global[float32],
    hid: int32,
):
    input_node = clpy.local_array(float32, HEIGHT)
    wm = clpy.local_array(float32, HEIGHT * WIDTH)
    by = clpy.get_group_id(1)
    tx = clpy.get_local_id(0)
    ty = clpy.get_local_id(1)
    index = (hid + 1) * HEIGHT * by + (hid + 1) * ty + tx + 1 + (hid + 1)
    index_in = HEIGHT * by + ty + 1
    if tx == 0:
        input_node[ty] = input_units[index_in]
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    wm[ty * WIDTH + tx] = input_hidden[index]
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    wm[ty * WIDTH + tx] = wm[ty * WIDTH + tx] * input_node[ty]
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    power_two = 2
    while power_two <= HEIGHT:
        if ty % power_two == 0:
            wm[ty * WIDTH + tx] = wm[ty * WIDTH + tx] + wm[(ty + power_two // 2) * WIDTH + tx]
        clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
        power_two *= 2
    input_hidden[index] = wm[ty * WIDTH + tx]
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    if tx == 0:
        partial_sum[by * hid + ty] = wm[tx * WIDTH + ty]


# fp_contract: the original is OpenCL C with FP_CONTRACT at its default, ON (spec 6.10), so
# its compiler may fuse ETA * delta * ly + MOMENTUM * oldw into an fma; so may this port.
@clpy.kernel(fp_contract=True)
def bpnn_adjust_weights(
    delta: Global[float32],
    hid: int32,
    ly: Global[float32],
    w: Global[float32],
    oldw: Global[float32],
):
    by = clpy.get_group_id(1)
    tx = clpy.get_local_id(0)
    ty = clpy.get_local_id(1)
    index = (hid + 1) * HEIGHT * by + (hid + 1) * ty + tx + 1 + (hid + 1)
    index_y = HEIGHT * by + ty + 1
    index_x = tx + 1
    w[index] += ETA * delta[index_x] * ly[index_y] + MOMENTUM * oldw[index]
    oldw[index] = ETA * delta[index_x] * ly[index_y] + MOMENTUM * oldw[index]
    clpy.barrier(clpy.CLK_LOCAL_MEM_FENCE)
    if ty == 0 and by == 0:
        w[index_x] += ETA * delta[index_x] + MOMENTUM * oldw[index_x]
        oldw[index_x] = ETA * delta[index_x] + MOMENTUM * oldw[index_x]


def make_inputs(size: str, seed: int = 0) -> dict[str, Any]:
    n = SIZES[size]["n"]
    rng = np.random.default_rng(seed)
    f32 = np.float32
    return dict(
        input_units=rng.random(n + 1).astype(f32),
        input_weights=(rng.uniform(-1, 1, (n + 1, HID + 1)) / np.sqrt(n)).astype(f32),
        input_prev=(rng.uniform(-1, 1, (n + 1, HID + 1)) * 1e-3).astype(f32),
        hidden_weights=rng.uniform(-1, 1, (HID + 1, 2)).astype(f32),
        target=f32(0.1),
    )


def _sigmoid(x: Any) -> Any:
    return np.float32(1.0) / (np.float32(1.0) + np.exp(-x))


def hidden_delta(inp: dict[str, Any], sums: np.ndarray) -> np.ndarray:
    """The host's part between the kernels: hidden units from the column sums (``sums[j-1]``
    for hidden unit j, plus the bias weight), output unit, output and hidden error terms."""
    f32 = np.float32
    hidden = np.ones(HID + 1, f32)
    hidden[1:] = _sigmoid((sums + inp["input_weights"][0, 1:]).astype(f32))
    hw = inp["hidden_weights"]
    out = _sigmoid(f32(hidden @ hw[:, 1]))
    delta_o = out * (f32(1) - out) * (inp["target"] - out)
    delta_h = np.zeros(HID + 1, f32)
    delta_h[1:] = hidden[1:] * (f32(1) - hidden[1:]) * (delta_o * hw[1:, 1])
    return delta_h.astype(f32)


def _adjust(inp: dict[str, Any], delta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    f32 = np.float32
    ly = inp["input_units"]
    w = inp["input_weights"].copy()
    old = inp["input_prev"].copy()
    upd = f32(ETA) * delta[None, 1:] * ly[1:, None] + f32(MOMENTUM) * old[1:, 1:]
    w[1:, 1:] += upd
    old[1:, 1:] = upd
    b = f32(ETA) * delta[1:] + f32(MOMENTUM) * old[0, 1:]
    w[0, 1:] += b
    old[0, 1:] = b
    return w, old


def numpy_reference(inp: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    x = inp["input_units"].astype(np.float64)
    sums = (x[1:, None] * inp["input_weights"][1:, 1:]).sum(axis=0).astype(np.float32)
    return _adjust(inp, hidden_delta(inp, sums))


def _sums(partial: np.ndarray, blocks: int) -> np.ndarray:
    return partial.reshape(blocks, HID).sum(axis=0, dtype=np.float32)


def run_clpy(
    inp: dict[str, Any], device: Any, *, resident: bool, events: Any = None
) -> tuple[np.ndarray, np.ndarray]:
    h = Host(device, resident, events)
    n = inp["input_units"].size - 1
    blocks = n // HEIGHT
    geo = ((WIDTH, HEIGHT * blocks), (WIDTH, HEIGHT))
    units = h.put(inp["input_units"])
    weights = h.put(inp["input_weights"])
    partial = h.empty(blocks * HID, np.float32)
    h(bpnn_layerforward, *geo, units, weights, partial, HID)
    delta = hidden_delta(inp, _sums(h.get(partial), blocks))
    # as Rodinia's host: upload the error terms and the previous weights, and write the
    # original weights again into the weights' buffer (not a new one)
    d_delta = h.put(delta)
    old = h.put(inp["input_prev"])
    h.set(weights, inp["input_weights"])
    h(bpnn_adjust_weights, *geo, d_delta, HID, units, weights, old)
    return h.get(weights), h.get(old)


def run_original(
    inp: dict[str, Any], ctx: Any, queue: Any, events: Any = None
) -> tuple[np.ndarray, np.ndarray]:
    o = OrigHost(ctx, queue, CL_FILE, "", events)
    n = inp["input_units"].size - 1
    blocks = n // HEIGHT
    geo = ((WIDTH, HEIGHT * blocks), (WIDTH, HEIGHT))
    units = o.buf(inp["input_units"])
    weights = o.buf(inp["input_weights"])
    hidden_out = o.empty(4 * (HID + 1))
    partial = o.empty(4 * blocks * HID)
    o(
        "bpnn_layerforward_ocl",
        *geo,
        units,
        hidden_out,
        weights,
        partial,
        o.local(4 * HEIGHT),
        o.local(4 * HEIGHT * WIDTH),
        i32(n),
        i32(HID),
    )
    delta = hidden_delta(inp, _sums(o.read(partial, blocks * HID, np.float32), blocks))
    d_delta = o.buf(delta)
    old = o.buf(inp["input_prev"])
    o.write(weights, inp["input_weights"])
    o("bpnn_adjust_weights_ocl", *geo, d_delta, i32(HID), units, i32(n), weights, old)
    shape = inp["input_weights"].shape
    return o.read(weights, shape, np.float32), o.read(old, shape, np.float32)
