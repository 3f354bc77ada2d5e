// 7-point 3-D stencil, hand-written in the style of Parboil 2.5
// benchmarks/stencil/src/opencl_nvidia/kernel.cl (block2D_hybrid_coarsen_x): work-groups of
// lx x ly items each own a 2*lx x ly tile of the x-y plane (two points per item), march along z
// with the current plane in __local sh_A0 (sized by the host, main.c) and the planes below and
// above in registers.
#define IDX3(nx, ny, x, y, z) ((x) + (nx) * ((y) + (ny) * (z)))

__kernel void block2D_hybrid_coarsen_x(float c0, float c1, __global float *A0,
                                       __global float *Anext, int nx, int ny, int nz,
                                       __local float *sh_A0)
{
    const int lsx = get_local_size(0), lsy = get_local_size(1);
    const int lx = get_local_id(0), ly = get_local_id(1);
    const int i = get_group_id(0) * lsx * 2 + lx;
    const int i2 = i + lsx;
    const int j = get_group_id(1) * lsy + ly;
    const int s1 = lx + ly * lsx * 2;
    const int s2 = s1 + lsx;

    sh_A0[s1] = 0.0f;
    sh_A0[s2] = 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);

    const bool in1 = i > 0 && j > 0 && i < nx - 1 && j < ny - 1;
    const bool in2 = j > 0 && i2 < nx - 1 && j < ny - 1;
    const bool xlo = (lx == 0), xhi = (lx == lsx - 1);
    const bool ylo = (ly == 0), yhi = (ly == lsy - 1);

    float bottom = 0.0f, bottom2 = 0.0f, top = 0.0f, top2 = 0.0f;
    if (i < nx && j < ny) {
        bottom = A0[IDX3(nx, ny, i, j, 0)];
        sh_A0[s1] = A0[IDX3(nx, ny, i, j, 1)];
    }
    if (i2 < nx && j < ny) {
        bottom2 = A0[IDX3(nx, ny, i2, j, 0)];
        sh_A0[s2] = A0[IDX3(nx, ny, i2, j, 1)];
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);

    for (int k = 1; k < nz - 1; k++) {
        float up, down, side;
        if (i < nx && j < ny)
            top = A0[IDX3(nx, ny, i, j, k + 1)];
        if (in1) {
            up = yhi ? A0[IDX3(nx, ny, i, j + 1, k)] : sh_A0[s1 + 2 * lsx];
            down = ylo ? A0[IDX3(nx, ny, i, j - 1, k)] : sh_A0[s1 - 2 * lsx];
            side = xlo ? A0[IDX3(nx, ny, i - 1, j, k)] : sh_A0[s1 - 1];
            Anext[IDX3(nx, ny, i, j, k)] =
                (top + bottom + up + down + sh_A0[s1 + 1] + side) * c1 - sh_A0[s1] * c0;
        }
        if (i2 < nx && j < ny)
            top2 = A0[IDX3(nx, ny, i2, j, k + 1)];
        if (in2) {
            up = yhi ? A0[IDX3(nx, ny, i2, j + 1, k)] : sh_A0[s2 + 2 * lsx];
            down = ylo ? A0[IDX3(nx, ny, i2, j - 1, k)] : sh_A0[s2 - 2 * lsx];
            side = xhi ? A0[IDX3(nx, ny, i2 + 1, j, k)] : sh_A0[s2 + 1];
            Anext[IDX3(nx, ny, i2, j, k)] =
                (top2 + bottom2 + up + down + side + sh_A0[s2 - 1]) * c1 - sh_A0[s2] * c0;
        }
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        bottom = sh_A0[s1];
        sh_A0[s1] = top;
        bottom2 = sh_A0[s2];
        sh_A0[s2] = top2;
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    }
}
