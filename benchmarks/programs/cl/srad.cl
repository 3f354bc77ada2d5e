// SRAD v1 kernels, hand-written in the style of Rodinia 3.1
// opencl/srad/kernel/kernel_gpu_opencl.cl: one work-item per pixel of a column-major image in
// groups of NUMBER_THREADS; reduce_kernel is launched repeatedly by the host with a growing
// stride (kernel_gpu_opencl_wrapper.c). Departures from Rodinia: the last group's leftover
// partial sums are read with the pass's stride (d_mul), and constants are float.
#ifndef NUMBER_THREADS
#define NUMBER_THREADS 256
#endif
typedef float fp;

__kernel void extract_kernel(long d_Ne, __global fp *d_I)
{
    int ei = get_group_id(0) * NUMBER_THREADS + get_local_id(0);
    if (ei < d_Ne)
        d_I[ei] = exp(d_I[ei] / 255.0f);
}

__kernel void prepare_kernel(long d_Ne, __global fp *d_I, __global fp *d_sums,
                             __global fp *d_sums2)
{
    int ei = get_group_id(0) * NUMBER_THREADS + get_local_id(0);
    if (ei < d_Ne) {
        d_sums[ei] = d_I[ei];
        d_sums2[ei] = d_I[ei] * d_I[ei];
    }
}

__kernel void reduce_kernel(long d_Ne, long d_no, int d_mul, __global fp *d_sums,
                            __global fp *d_sums2, int gridDim)
{
    int bx = get_group_id(0);
    int tx = get_local_id(0);
    int ei = bx * NUMBER_THREADS + tx;
    int nf = NUMBER_THREADS - (gridDim * NUMBER_THREADS - d_no);
    int df = 0;
    __local fp d_psum[NUMBER_THREADS];
    __local fp d_psum2[NUMBER_THREADS];
    int i;

    if (ei < d_no) {
        d_psum[tx] = d_sums[ei * d_mul];
        d_psum2[tx] = d_sums2[ei * d_mul];
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    int cnt = (bx != gridDim - 1) ? NUMBER_THREADS : nf;
    for (df = 1; df * 2 <= cnt; df *= 2)
        ;
    for (i = 2; i <= df; i = 2 * i) {
        if ((tx + 1) % i == 0 && tx < df) {
            d_psum[tx] = d_psum[tx] + d_psum[tx - i / 2];
            d_psum2[tx] = d_psum2[tx] + d_psum2[tx - i / 2];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (tx == df - 1) {
        for (i = bx * NUMBER_THREADS + df; i < bx * NUMBER_THREADS + cnt; i++) {
            d_psum[tx] = d_psum[tx] + d_sums[i * d_mul];
            d_psum2[tx] = d_psum2[tx] + d_sums2[i * d_mul];
        }
        d_sums[bx * d_mul * NUMBER_THREADS] = d_psum[tx];
        d_sums2[bx * d_mul * NUMBER_THREADS] = d_psum2[tx];
    }
}

__kernel void srad_kernel(fp d_lambda, int d_Nr, int d_Nc, long d_Ne, __global int *d_iN,
                          __global int *d_iS, __global int *d_jE, __global int *d_jW,
                          __global fp *d_dN, __global fp *d_dS, __global fp *d_dE,
                          __global fp *d_dW, fp d_q0sqr, __global fp *d_c, __global fp *d_I)
{
    int ei = get_group_id(0) * NUMBER_THREADS + get_local_id(0);
    int row = (ei + 1) % d_Nr - 1;
    int col = (ei + 1) / d_Nr;
    if ((ei + 1) % d_Nr == 0) {
        row = d_Nr - 1;
        col = col - 1;
    }
    if (ei < d_Ne) {
        fp Jc = d_I[ei];
        fp dN = d_I[d_iN[row] + d_Nr * col] - Jc;
        fp dS = d_I[d_iS[row] + d_Nr * col] - Jc;
        fp dW = d_I[row + d_Nr * d_jW[col]] - Jc;
        fp dE = d_I[row + d_Nr * d_jE[col]] - Jc;
        fp G2 = (dN * dN + dS * dS + dW * dW + dE * dE) / (Jc * Jc);
        fp L = (dN + dS + dW + dE) / Jc;
        fp num = (0.5f * G2) - ((1.0f / 16.0f) * (L * L));
        fp den = 1 + (0.25f * L);
        fp qsqr = num / (den * den);
        den = (qsqr - d_q0sqr) / (d_q0sqr * (1 + d_q0sqr));
        fp c = 1.0f / (1.0f + den);
        if (c < 0)
            c = 0;
        else if (c > 1)
            c = 1;
        d_dN[ei] = dN;
        d_dS[ei] = dS;
        d_dW[ei] = dW;
        d_dE[ei] = dE;
        d_c[ei] = c;
    }
}

__kernel void srad2_kernel(fp d_lambda, int d_Nr, int d_Nc, long d_Ne, __global int *d_iN,
                           __global int *d_iS, __global int *d_jE, __global int *d_jW,
                           __global fp *d_dN, __global fp *d_dS, __global fp *d_dE,
                           __global fp *d_dW, __global fp *d_c, __global fp *d_I)
{
    int ei = get_group_id(0) * NUMBER_THREADS + get_local_id(0);
    int row = (ei + 1) % d_Nr - 1;
    int col = (ei + 1) / d_Nr;
    if ((ei + 1) % d_Nr == 0) {
        row = d_Nr - 1;
        col = col - 1;
    }
    if (ei < d_Ne) {
        fp cN = d_c[ei];
        fp cS = d_c[d_iS[row] + d_Nr * col];
        fp cW = d_c[ei];
        fp cE = d_c[row + d_Nr * d_jE[col]];
        fp D = cN * d_dN[ei] + cS * d_dS[ei] + cW * d_dW[ei] + cE * d_dE[ei];
        d_I[ei] = d_I[ei] + 0.25f * d_lambda * D;
    }
}

__kernel void compress_kernel(long d_Ne, __global fp *d_I)
{
    int ei = get_group_id(0) * NUMBER_THREADS + get_local_id(0);
    if (ei < d_Ne)
        d_I[ei] = log(d_I[ei]) * 255;
}
