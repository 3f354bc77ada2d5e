// One pass of a bitonic sorting network, hand-written in the style of the AMD APP SDK sample
// BitonicSort (BitonicSort_Kernels.cl, bitonicSort): n/2 work-items, each compares one pair
// pairDistance apart and writes it back in the direction of its block; the host loops over
// stages and passes (BitonicSort.cpp).
__kernel void bitonicSort(__global uint *theArray, const uint stage, const uint passOfStage,
                          const uint direction)
{
    uint sortIncreasing = direction;
    uint threadId = get_global_id(0);
    uint pairDistance = 1 << (stage - passOfStage);
    uint blockWidth = 2 * pairDistance;
    uint leftId = (threadId % pairDistance) + (threadId / pairDistance) * blockWidth;
    uint rightId = leftId + pairDistance;
    uint leftElement = theArray[leftId];
    uint rightElement = theArray[rightId];
    uint sameDirectionBlockWidth = 1 << stage;
    if ((threadId / sameDirectionBlockWidth) % 2 == 1)
        sortIncreasing = 1 - sortIncreasing;
    uint greater, lesser;
    if (leftElement > rightElement) {
        greater = leftElement;
        lesser = rightElement;
    } else {
        greater = rightElement;
        lesser = leftElement;
    }
    if (sortIncreasing) {
        theArray[leftId] = lesser;
        theArray[rightId] = greater;
    } else {
        theArray[leftId] = greater;
        theArray[rightId] = lesser;
    }
}
