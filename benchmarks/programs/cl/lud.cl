// Blocked LU decomposition, hand-written in the style of Rodinia 3.1 opencl/lud/lud_kernel.cl:
// lud_diagonal (one group of BLOCK_SIZE), lud_perimeter (groups of 2*BLOCK_SIZE: half for the
// block row, half for the block column), lud_internal (BLOCK_SIZE^2 groups); __local tiles are
// kernel arguments sized by the host (ocl/lud.cpp).
#ifndef BLOCK_SIZE
#define BLOCK_SIZE 16
#endif

__kernel void lud_diagonal(__global float *m, __local float *shadow, int dim, int offset)
{
    int tx = get_local_id(0);
    int base = offset * dim + offset;
    for (int i = 0; i < BLOCK_SIZE; i++)
        shadow[i * BLOCK_SIZE + tx] = m[base + i * dim + tx];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = 0; i < BLOCK_SIZE - 1; i++) {
        if (tx > i) {
            for (int j = 0; j < i; j++)
                shadow[tx * BLOCK_SIZE + i] -= shadow[tx * BLOCK_SIZE + j] * shadow[j * BLOCK_SIZE + i];
            shadow[tx * BLOCK_SIZE + i] /= shadow[i * BLOCK_SIZE + i];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (tx > i) {
            for (int j = 0; j < i + 1; j++)
                shadow[(i + 1) * BLOCK_SIZE + tx] -=
                    shadow[(i + 1) * BLOCK_SIZE + j] * shadow[j * BLOCK_SIZE + tx];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int i = 1; i < BLOCK_SIZE; i++)
        m[base + i * dim + tx] = shadow[i * BLOCK_SIZE + tx];
}

__kernel void lud_perimeter(__global float *m, __local float *dia, __local float *peri_row,
                            __local float *peri_col, int dim, int offset)
{
    int bx = get_group_id(0);
    int tx = get_local_id(0);
    int idx;
    if (tx < BLOCK_SIZE) {
        idx = tx;
        for (int i = 0; i < BLOCK_SIZE / 2; i++)
            dia[i * BLOCK_SIZE + idx] = m[(offset + i) * dim + offset + idx];
        for (int i = 0; i < BLOCK_SIZE; i++)
            peri_row[i * BLOCK_SIZE + idx] = m[(offset + i) * dim + offset + (bx + 1) * BLOCK_SIZE + idx];
    } else {
        idx = tx - BLOCK_SIZE;
        for (int i = BLOCK_SIZE / 2; i < BLOCK_SIZE; i++)
            dia[i * BLOCK_SIZE + idx] = m[(offset + i) * dim + offset + idx];
        for (int i = 0; i < BLOCK_SIZE; i++)
            peri_col[i * BLOCK_SIZE + idx] = m[(offset + (bx + 1) * BLOCK_SIZE + i) * dim + offset + idx];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (tx < BLOCK_SIZE) {
        idx = tx;
        for (int i = 1; i < BLOCK_SIZE; i++)
            for (int j = 0; j < i; j++)
                peri_row[i * BLOCK_SIZE + idx] -= dia[i * BLOCK_SIZE + j] * peri_row[j * BLOCK_SIZE + idx];
    } else {
        idx = tx - BLOCK_SIZE;
        for (int i = 0; i < BLOCK_SIZE; i++) {
            for (int j = 0; j < i; j++)
                peri_col[idx * BLOCK_SIZE + i] -= peri_col[idx * BLOCK_SIZE + j] * dia[j * BLOCK_SIZE + i];
            peri_col[idx * BLOCK_SIZE + i] /= dia[i * BLOCK_SIZE + i];
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (tx < BLOCK_SIZE) {
        idx = tx;
        for (int i = 1; i < BLOCK_SIZE; i++)
            m[(offset + i) * dim + offset + (bx + 1) * BLOCK_SIZE + idx] = peri_row[i * BLOCK_SIZE + idx];
    } else {
        idx = tx - BLOCK_SIZE;
        for (int i = 0; i < BLOCK_SIZE; i++)
            m[(offset + (bx + 1) * BLOCK_SIZE + i) * dim + offset + idx] = peri_col[i * BLOCK_SIZE + idx];
    }
}

__kernel void lud_internal(__global float *m, __local float *peri_row, __local float *peri_col,
                           int dim, int offset)
{
    int bx = get_group_id(0), by = get_group_id(1);
    int tx = get_local_id(0), ty = get_local_id(1);
    int row = offset + (by + 1) * BLOCK_SIZE;
    int col = offset + (bx + 1) * BLOCK_SIZE;
    peri_row[ty * BLOCK_SIZE + tx] = m[(offset + ty) * dim + col + tx];
    peri_col[ty * BLOCK_SIZE + tx] = m[(row + ty) * dim + offset + tx];
    barrier(CLK_LOCAL_MEM_FENCE);
    float sum = 0.0f;
    for (int i = 0; i < BLOCK_SIZE; i++)
        sum += peri_col[ty * BLOCK_SIZE + i] * peri_row[i * BLOCK_SIZE + tx];
    m[(row + ty) * dim + col + tx] -= sum;
}
