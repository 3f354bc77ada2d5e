// All-pairs n-body step, hand-written in the style of the AMD APP SDK sample NBody
// (NBody_Kernels.cl, nbody_sim): one body per work-item, bodies staged a work-group's worth at
// a time in __local localPos (sized by the host, NBody.cpp), float4 positions with the mass
// in .w, softening epsSqr.
__kernel void nbody_sim(__global float4 *pos, __global float4 *vel, int numBodies,
                        float deltaTime, float epsSqr, __local float4 *localPos,
                        __global float4 *newPosition, __global float4 *newVelocity)
{
    unsigned int tid = get_local_id(0);
    unsigned int gid = get_global_id(0);
    unsigned int localSize = get_local_size(0);
    unsigned int numTiles = numBodies / localSize;
    float4 myPos = pos[gid];
    float4 acc = (float4)(0.0f);

    for (unsigned int i = 0; i < numTiles; ++i) {
        localPos[tid] = pos[i * localSize + tid];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (unsigned int j = 0; j < localSize; ++j) {
            float4 r = localPos[j] - myPos;
            float distSqr = r.x * r.x + r.y * r.y + r.z * r.z;
            float invDist = 1.0f / sqrt(distSqr + epsSqr);
            float invDistCube = invDist * invDist * invDist;
            float s = localPos[j].w * invDistCube;
            acc += s * r;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    float4 oldVel = vel[gid];
    float4 newPos = myPos + oldVel * deltaTime + acc * 0.5f * deltaTime * deltaTime;
    newPos.w = myPos.w;
    newPosition[gid] = newPos;
    newVelocity[gid] = oldVel + acc * deltaTime;
}
