// Image histogram with R replicated sub-histograms per work-group, hand-written in the style of
// Parboil 2.5 benchmarks/imghisto/src/opencl/kernel.cl (histo_R_per_block_kernel, J. Gomez-Luna):
// local atom_inc into copy (tid mod R) padded to BINS+1, warp-interleaved reads, merge of the
// copies with global atom_add. __local Hs is sized by the host (main.cc).
#pragma OPENCL EXTENSION cl_khr_local_int32_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_global_int32_base_atomics : enable
#define WARP_SIZE 32

__kernel void histo_R_per_block_kernel(__global unsigned int *histo, __global unsigned int *data,
                                       __local unsigned int *Hs, int size, int BINS, int BINSp,
                                       int R)
{
    const int bx = get_group_id(0);
    const int tx = get_local_id(0);
    const unsigned int warpid = tx >> 5;
    const unsigned int lane = tx & 31;
    const unsigned int off_rep = BINSp * (tx % R);
    const int warps_block = get_local_size(0) / WARP_SIZE;
    const int begin = (size / warps_block) * warpid + WARP_SIZE * bx + lane;
    const int end = (size / warps_block) * (warpid + 1);
    const int step = WARP_SIZE * (get_global_size(0) / get_local_size(0));

    for (int pos = tx; pos < BINSp * R; pos += get_local_size(0))
        Hs[pos] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = begin; i < end; i += step) {
        unsigned int d = data[i];
        atom_inc(&Hs[off_rep + ((d * BINS) >> 12)]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int pos = tx; pos < BINS; pos += get_local_size(0)) {
        unsigned int sum = 0;
        for (int base = 0; base < BINSp * R; base += BINSp)
            sum += Hs[base + pos];
        atom_add(histo + pos, sum);
    }
}
