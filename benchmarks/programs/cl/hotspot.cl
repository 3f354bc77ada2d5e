// HotSpot transient thermal step, hand-written in the style of Rodinia 3.1
// opencl/hotspot/hotspot_kernel.cl (kernel `hotspot`): BLOCK_SIZE x BLOCK_SIZE work-groups,
// `iteration` time steps per launch on a local tile whose valid region shrinks by one cell per
// step (the "pyramid"); the host ping-pongs temp_src/temp_dst (hotspot.c, compute_tran_temp).
#ifndef BLOCK_SIZE
#define BLOCK_SIZE 16
#endif
#define IN_RANGE(x, lo, hi) ((x) >= (lo) && (x) <= (hi))

__kernel void hotspot(int iteration, __global float *power, __global float *temp_src,
                      __global float *temp_dst, int grid_cols, int grid_rows,
                      int border_cols, int border_rows, float Cap, float Rx, float Ry,
                      float Rz, float step)
{
    __local float tile_temp[BLOCK_SIZE][BLOCK_SIZE];
    __local float tile_power[BLOCK_SIZE][BLOCK_SIZE];
    __local float tile_next[BLOCK_SIZE][BLOCK_SIZE];

    const float amb_temp = 80.0f;
    int bx = get_group_id(0), by = get_group_id(1);
    int tx = get_local_id(0), ty = get_local_id(1);
    float sdc = step / Cap;
    float rx1 = 1 / Rx, ry1 = 1 / Ry, rz1 = 1 / Rz;

    int small_block = BLOCK_SIZE - iteration * 2;
    int y0 = small_block * by - border_rows;
    int x0 = small_block * bx - border_cols;
    int y1 = y0 + BLOCK_SIZE - 1;
    int x1 = x0 + BLOCK_SIZE - 1;
    int gy = y0 + ty, gx = x0 + tx;
    int index = grid_cols * gy + gx;

    if (IN_RANGE(gy, 0, grid_rows - 1) && IN_RANGE(gx, 0, grid_cols - 1)) {
        tile_temp[ty][tx] = temp_src[index];
        tile_power[ty][tx] = power[index];
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    int vymin = (y0 < 0) ? -y0 : 0;
    int vymax = (y1 > grid_rows - 1) ? BLOCK_SIZE - 1 - (y1 - grid_rows + 1) : BLOCK_SIZE - 1;
    int vxmin = (x0 < 0) ? -x0 : 0;
    int vxmax = (x1 > grid_cols - 1) ? BLOCK_SIZE - 1 - (x1 - grid_cols + 1) : BLOCK_SIZE - 1;
    int N = ty - 1, S = ty + 1, W = tx - 1, E = tx + 1;
    N = (N < vymin) ? vymin : N;
    S = (S > vymax) ? vymax : S;
    W = (W < vxmin) ? vxmin : W;
    E = (E > vxmax) ? vxmax : E;

    bool computed = false;
    for (int i = 0; i < iteration; i++) {
        computed = false;
        if (IN_RANGE(tx, i + 1, BLOCK_SIZE - i - 2) && IN_RANGE(ty, i + 1, BLOCK_SIZE - i - 2) &&
            IN_RANGE(tx, vxmin, vxmax) && IN_RANGE(ty, vymin, vymax)) {
            computed = true;
            float t = tile_temp[ty][tx];
            tile_next[ty][tx] = t + sdc * (tile_power[ty][tx] +
                (tile_temp[S][tx] + tile_temp[N][tx] - 2.0f * t) * ry1 +
                (tile_temp[ty][E] + tile_temp[ty][W] - 2.0f * t) * rx1 +
                (amb_temp - t) * rz1);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (i == iteration - 1)
            break;
        if (computed)
            tile_temp[ty][tx] = tile_next[ty][tx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (computed)
        temp_dst[index] = tile_next[ty][tx];
}
