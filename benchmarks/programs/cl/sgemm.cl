// Register-tiled SGEMM (C = alpha * A * B^T + beta * C, column-major), hand-written in the
// style of Parboil 2.5 benchmarks/sgemm/src/opencl_nvidia/kernel.cl (mysgemmNT, after
// V. Volkov): TILE_N x TILE_TB_HEIGHT work-groups, TILE_N private accumulators per item, a
// TILE_TB_HEIGHT x TILE_N slab of B in local memory per k step. Sizes come from the host's
// -D options (main.cc).
#ifndef TILE_N
#define TILE_N 32
#endif
#ifndef TILE_TB_HEIGHT
#define TILE_TB_HEIGHT 16
#endif
#ifndef TILE_M
#define TILE_M (TILE_N * TILE_TB_HEIGHT)
#endif

__kernel void mysgemmNT(__global const float *A, int lda, __global const float *B, int ldb,
                        __global float *C, int ldc, int k, float alpha, float beta)
{
    float acc[TILE_N];
    for (int i = 0; i < TILE_N; i++)
        acc[i] = 0.0f;
    int mid = get_local_id(1) * get_local_size(0) + get_local_id(0);
    int m = get_group_id(0) * TILE_M + mid;
    int n = get_group_id(1) * TILE_N + get_local_id(0);
    __local float b_s[TILE_TB_HEIGHT * TILE_N];

    for (int i = 0; i < k; i += TILE_TB_HEIGHT) {
        b_s[get_local_id(0) + get_local_id(1) * TILE_N] = B[n + (i + get_local_id(1)) * ldb];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int j = 0; j < TILE_TB_HEIGHT; j++) {
            float a = A[m + (i + j) * lda];
            for (int kk = 0; kk < TILE_N; kk++)
                acc[kk] += a * b_s[j * TILE_N + kk];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    int t = ldc * get_group_id(1) * TILE_N + m;
    for (int i = 0; i < TILE_N; i++)
        C[t + i * ldc] = C[t + i * ldc] * beta + alpha * acc[i];
}
