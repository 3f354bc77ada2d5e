// JDS sparse matrix-vector product, hand-written in the style of Parboil 2.5
// benchmarks/spmv/src/opencl_nvidia/kernel.cl (spmv_jds): one work-item per (sorted) row,
// the element loads of diagonal k prefetched while diagonal k-2 is multiplied, __constant
// diagonal starts and per-warp (32-row) diagonal counts.
#define WARP_BITS 5

__kernel void spmv_jds(__global float *dst_vector, __global float *d_data,
                       __global int *d_index, __global int *d_perm, __global float *x_vec,
                       const int dim, __constant int *jds_ptr_int, __constant int *sh_zcnt_int)
{
    int ix = get_global_id(0);
    int warp_id = ix >> WARP_BITS;
    if (ix < dim) {
        float sum = 0.0f;
        int bound = sh_zcnt_int[warp_id];
        int j = jds_ptr_int[0] + ix;
        float d = d_data[j];
        int i = d_index[j];
        float t = x_vec[i];
        if (bound > 1) {
            j = jds_ptr_int[1] + ix;
            i = d_index[j];
            int in;
            float dn, tn;
            for (int k = 2; k < bound; k++) {
                dn = d_data[j];
                j = jds_ptr_int[k] + ix;
                in = d_index[j];
                tn = x_vec[i];
                sum += d * t;
                i = in;
                d = dn;
                t = tn;
            }
            dn = d_data[j];
            tn = x_vec[i];
            sum += d * t;
            d = dn;
            t = tn;
        }
        sum += d * t;
        dst_vector[d_perm[ix]] = sum;
    }
}
