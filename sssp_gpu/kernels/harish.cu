// Harish-Narayanan SSSP as Telang (seed 003) writes it: kernel 1 relaxes the out-edges of
// masked vertices into an updating-cost array, kernel 2 commits improvements and re-masks.
// The updating cost is a packed 64-bit key, cost << shift | (tail + 1), so one atomicMin
// keeps the cheapest candidate and the vertex it came from (ties: the smaller tail).
// The all-ones key means "no candidate yet"; the source's key is 0 (cost 0, no tail).
#include "common.cuh"

typedef unsigned long long Key;

template <typename D>
__global__ void harish_relax(int n, const int* __restrict__ row_ptr, const int2* __restrict__ adj,
                             const D* __restrict__ cost, Key* updating, unsigned char* mask, int shift,
                             unsigned long long* edges) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    unsigned long long relaxed = 0;
    for (long long u = (long long)blockIdx.x * blockDim.x + threadIdx.x; u < n; u += stride) {
        if (!mask[u]) continue;
        mask[u] = 0;
        // a masked vertex has a finite cost; the packing leaves room for cost + any weight
        const Key base = (Key)cost[u];
        const Key tail = (Key)u + 1;
        const int end = row_ptr[u + 1];
        relaxed += end - row_ptr[u];
        for (int e = row_ptr[u]; e < end; ++e) {
            const int2 vw = adj[e];
            const Key key = ((base + (Key)vw.y) << shift) | tail;
            if (key < updating[vw.x]) atomicMin(&updating[vw.x], key);
        }
    }
    if (relaxed) atomicAdd(edges, relaxed);
}

// Commit: a strictly cheaper candidate becomes the cost, its tail the predecessor, and the
// vertex is masked for the next round. Predecessors change only on a strict improvement,
// so each points at a vertex that reached its final cost in an earlier round (acyclic).
template <typename D>
__global__ void harish_commit(int n, D* cost, const Key* __restrict__ updating, int* pred,
                              unsigned char* mask, int* changed, int shift) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    const Key low = (1ull << shift) - 1ull;
    int any = 0;
    for (long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x; v < n; v += stride) {
        const Key key = updating[v];
        if (key == ~0ull) continue;
        // compared at 64 bits: a cost plus a weight may pass D's range (it then never wins)
        const Key candidate = key >> shift;
        if (candidate < (Key)cost[v]) {
            cost[v] = (D)candidate;
            pred[v] = (int)(key & low) - 1;
            mask[v] = 1;
            any = 1;
        }
    }
    if (any) *changed = 1;
}
