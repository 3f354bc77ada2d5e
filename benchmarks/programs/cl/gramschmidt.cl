// Gram-Schmidt QR, hand-written in the style of PolyBench/GPU 1.0 OpenCL/GRAMSCHM/gramschmidt.cl:
// per column k the host launches kernel1 (work-item 0 computes the norm serially), kernel2
// (one item per row: q = a / r[k][k]) and kernel3 (one item per column j > k: r[k][j]
// accumulated in global memory, then column j updated), work-groups of 256 (gramschmidt.c).
typedef float DATA_TYPE;

__kernel void gramschmidt_kernel1(__global DATA_TYPE *a, __global DATA_TYPE *r,
                                  __global DATA_TYPE *q, int k, int m, int n)
{
    int tid = get_global_id(0);
    if (tid == 0) {
        DATA_TYPE nrm = 0.0f;
        for (int i = 0; i < m; i++)
            nrm += a[i * n + k] * a[i * n + k];
        r[k * n + k] = sqrt(nrm);
    }
}

__kernel void gramschmidt_kernel2(__global DATA_TYPE *a, __global DATA_TYPE *r,
                                  __global DATA_TYPE *q, int k, int m, int n)
{
    int i = get_global_id(0);
    if (i < m)
        q[i * n + k] = a[i * n + k] / r[k * n + k];
}

__kernel void gramschmidt_kernel3(__global DATA_TYPE *a, __global DATA_TYPE *r,
                                  __global DATA_TYPE *q, int k, int m, int n)
{
    int j = get_global_id(0);
    if ((j > k) && (j < n)) {
        r[k * n + j] = 0.0f;
        for (int i = 0; i < m; i++)
            r[k * n + j] += q[i * n + k] * a[i * n + j];
        for (int i = 0; i < m; i++)
            a[i * n + j] -= q[i * n + k] * r[k * n + j];
    }
}
