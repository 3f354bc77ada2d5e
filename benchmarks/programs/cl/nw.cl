// Needleman-Wunsch, hand-written in the style of Rodinia 3.1 opencl/nw/nw.cl: one work-group
// of BLOCK_SIZE items per 16x16 block of the score matrix, blocks of one anti-diagonal per
// launch (nw_kernel1: upper-left half, nw_kernel2: lower-right half; host loop in nw.c),
// __local score tile (BLOCK_SIZE+1)^2 and reference tile BLOCK_SIZE^2 passed by the host.
#ifndef BLOCK_SIZE
#define BLOCK_SIZE 16
#endif
#define SC(i, j) score_l[(j) + (i) * (BLOCK_SIZE + 1)]
#define RF(i, j) ref_l[(j) + (i) * BLOCK_SIZE]

int max3(int a, int b, int c)
{
    int k = (a <= b) ? b : a;
    return (k <= c) ? c : k;
}

static void nw_tile(__global int *reference_d, __global int *items_d, __local int *score_l,
                    __local int *ref_l, int cols, int penalty, int b_x, int b_y)
{
    int tx = get_local_id(0);
    int corner = cols * BLOCK_SIZE * b_y + BLOCK_SIZE * b_x;
    int index = corner + tx + cols + 1;
    if (tx == 0)
        SC(0, 0) = items_d[corner];
    for (int ty = 0; ty < BLOCK_SIZE; ty++)
        RF(ty, tx) = reference_d[index + cols * ty];
    barrier(CLK_LOCAL_MEM_FENCE);
    SC(tx + 1, 0) = items_d[corner + cols + cols * tx];
    SC(0, tx + 1) = items_d[corner + tx + 1];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int m = 0; m < BLOCK_SIZE; m++) {
        if (tx <= m) {
            int x = tx + 1, y = m - tx + 1;
            SC(y, x) = max3(SC(y - 1, x - 1) + RF(y - 1, x - 1), SC(y, x - 1) - penalty,
                            SC(y - 1, x) - penalty);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int m = BLOCK_SIZE - 2; m >= 0; m--) {
        if (tx <= m) {
            int x = tx + BLOCK_SIZE - m, y = BLOCK_SIZE - tx;
            SC(y, x) = max3(SC(y - 1, x - 1) + RF(y - 1, x - 1), SC(y, x - 1) - penalty,
                            SC(y - 1, x) - penalty);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int ty = 0; ty < BLOCK_SIZE; ty++)
        items_d[index + cols * ty] = SC(ty + 1, tx + 1);
}

__kernel void nw_kernel1(__global int *reference_d, __global int *items_d,
                         __global int *output_d, __local int *score_l, __local int *ref_l,
                         int cols, int penalty, int blk, int block_width, int worksize,
                         int offset_r, int offset_c)
{
    int bx = get_group_id(0);
    nw_tile(reference_d, items_d + offset_r * cols + offset_c, score_l, ref_l, cols, penalty,
            bx, blk - 1 - bx);
}

__kernel void nw_kernel2(__global int *reference_d, __global int *items_d,
                         __global int *output_d, __local int *score_l, __local int *ref_l,
                         int cols, int penalty, int blk, int block_width, int worksize,
                         int offset_r, int offset_c)
{
    int bx = get_group_id(0);
    nw_tile(reference_d, items_d + offset_r * cols + offset_c, score_l, ref_l, cols, penalty,
            bx + block_width - blk, block_width - bx - 1);
}
