// Backprop layer kernels, hand-written in the style of Rodinia 3.1
// opencl/backprop/backprop_kernel.cl: WIDTH x HEIGHT (16x16) work-groups over a grid of
// 16 x in items; __local input_node / weight_matrix passed by the host (backprop_ocl.cpp).
// The column reduction uses the powers 2..16 of Rodinia's CUDA kernel (the OpenCL kernel's
// loop starts at 1, which doubles each partial sum).
#define WIDTH 16
#define HEIGHT 16
#define ETA 0.3f
#define MOMENTUM 0.3f
#define WM(i, j) weight_matrix[(j) + (i) * WIDTH]

__kernel void bpnn_layerforward_ocl(__global float *input_cuda, __global float *output_hidden_cuda,
                                    __global float *input_hidden_cuda,
                                    __global float *hidden_partial_sum,
                                    __local float *input_node, __local float *weight_matrix,
                                    int in, int hid)
{
    int by = get_group_id(1);
    int tx = get_local_id(0), ty = get_local_id(1);
    int index = (hid + 1) * HEIGHT * by + (hid + 1) * ty + tx + 1 + (hid + 1);
    int index_in = HEIGHT * by + ty + 1;

    if (tx == 0)
        input_node[ty] = input_cuda[index_in];
    barrier(CLK_LOCAL_MEM_FENCE);
    WM(ty, tx) = input_hidden_cuda[index];
    barrier(CLK_LOCAL_MEM_FENCE);
    WM(ty, tx) = WM(ty, tx) * input_node[ty];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int power_two = 2; power_two <= HEIGHT; power_two *= 2) {
        if (ty % power_two == 0)
            WM(ty, tx) = WM(ty, tx) + WM(ty + power_two / 2, tx);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    input_hidden_cuda[index] = WM(ty, tx);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (tx == 0)
        hidden_partial_sum[by * hid + ty] = WM(tx, ty);
}

__kernel void bpnn_adjust_weights_ocl(__global float *delta, int hid, __global float *ly,
                                      int in, __global float *w, __global float *oldw)
{
    int by = get_group_id(1);
    int tx = get_local_id(0), ty = get_local_id(1);
    int index = (hid + 1) * HEIGHT * by + (hid + 1) * ty + tx + 1 + (hid + 1);
    int index_y = HEIGHT * by + ty + 1;
    int index_x = tx + 1;

    w[index] += ((ETA * delta[index_x] * ly[index_y]) + (MOMENTUM * oldw[index]));
    oldw[index] = ((ETA * delta[index_x] * ly[index_y]) + (MOMENTUM * oldw[index]));
    barrier(CLK_LOCAL_MEM_FENCE);
    if (ty == 0 && by == 0) {
        w[index_x] += ((ETA * delta[index_x]) + (MOMENTUM * oldw[index_x]));
        oldw[index_x] = ((ETA * delta[index_x]) + (MOMENTUM * oldw[index_x]));
    }
}
