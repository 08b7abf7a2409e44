// Parallel Dijkstra (seed 000's per-source Dijkstra without a heap): each step one kernel
// finds the unsettled vertex of least distance by a grid-wide min-reduction over packed
// keys (distance << shift | vertex: ties go to the smaller vertex), and the last block to
// finish its share settles that vertex and relaxes its out-edges. Keys: SETTLED (all ones)
// for settled vertices, UNREACHED (all ones but the last bit) for unreached ones; a real
// key stays below 2^63, so a minimum at or above 2^63 means nothing reachable is left.
#include "common.cuh"

typedef unsigned long long Key;
#define SETTLED (~0ull)
#define UNREACHED (~0ull - 1ull)
#define DONE 0      // ctrl[DONE]: set once nothing is left
#define SETTLED_COUNT 1

__device__ __forceinline__ Key warp_min(Key value) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        const Key other = __shfl_down_sync(0xffffffffu, value, offset);
        value = other < value ? other : value;
    }
    return value;
}

template <typename D>
__global__ void dijkstra_step(int n, int shift, const int* __restrict__ row_ptr, const int2* __restrict__ adj,
                              Key* key, D* dist, int* pred, Key* best, unsigned int* arrived, int* ctrl) {
    __shared__ Key warp_best[32];
    __shared__ int last;
    if (*(volatile int*)&ctrl[DONE]) return;  // the same for every block: set by an earlier launch

    // 1. this block's least key; the loop bound is uniform per warp step, so every lane
    //    reaches the shuffles below
    Key local = SETTLED;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const Key k = key[i];
        local = k < local ? k : local;
    }
    local = warp_min(local);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) warp_best[warp] = local;
    __syncthreads();
    if (warp == 0) {
        local = lane < (blockDim.x >> 5) ? warp_best[lane] : SETTLED;
        local = warp_min(local);
        if (lane == 0) {
            atomicMin(best, local);
            __threadfence();
            last = atomicAdd(arrived, 1u) == gridDim.x - 1;
        }
    }
    __syncthreads();
    if (!last) return;

    // 2. the last block: every block's minimum is in *best
    __threadfence();
    const Key chosen = *(volatile Key*)best;
    __syncthreads();  // everyone has read best before thread 0 resets it
    if (chosen >= (1ull << 63)) {
        if (threadIdx.x == 0) { ctrl[DONE] = 1; *best = SETTLED; *arrived = 0u; }
        return;
    }
    const int u = (int)(chosen & ((1ull << shift) - 1ull));
    const D du = (D)(chosen >> shift);
    const int end = row_ptr[u + 1];
    for (int e = row_ptr[u] + threadIdx.x; e < end; e += blockDim.x) {
        const int2 vw = adj[e];
        if (vw.x == u || key[vw.x] == SETTLED) continue;
        const Key candidate = ((Key)du + (Key)vw.y) << shift | (Key)vw.x;
        if (atomicMin(&key[vw.x], candidate) > candidate) pred[vw.x] = u;  // every writer writes u
    }
    if (threadIdx.x == 0) {
        dist[u] = du;
        key[u] = SETTLED;
        ctrl[SETTLED_COUNT] += 1;
        *best = SETTLED;
        *arrived = 0u;
    }
}
