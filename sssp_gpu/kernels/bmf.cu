// Bellman-Ford, Listing 2 of the spec: every edge every round, the edge list divided
// evenly among warps, lanes striding by 32. Edges are structure-of-arrays (coalesced).
// Each thread loads UNROLL edges before using any: with only the spec's 2048 threads on a
// large GPU, memory latency, not bandwidth, bounds a round, so the more loads a thread has
// in flight the shorter the round. __launch_bounds__(1024) lets every accepted block size
// launch, and with it the compiler schedules the 8 loads ahead as intended (fewer, or no
// bounds, measured slower; 16 no longer fits 1024-thread blocks: BENCHMARKS.md, bmf).
#include "common.cuh"

#define UNROLL_OUTCORE 8
#define UNROLL_INCORE 8

// A lane's next N edges (base, base + 32, ...), all loads issued before any is used.
template <int N>
__device__ __forceinline__ void load_edges(const int* __restrict__ src, const int* __restrict__ dst,
                                           const int* __restrict__ weight, long long base, long long end,
                                           int (&u)[N], int (&v)[N], int (&w)[N]) {
#pragma unroll
    for (int k = 0; k < N; ++k) {
        const long long i = base + 32 * k;
        if (i < end) { u[k] = src[i]; v[k] = dst[i]; w[k] = weight[i]; }
    }
}

// Out-of-core: read distance_prev, write distance_cur (a copy of distance_prev made
// before the launch), so updates become visible only in the next round.
template <typename D>
__global__ void __launch_bounds__(1024) bmf_outcore(const int* __restrict__ src, const int* __restrict__ dst,
                            const int* __restrict__ weight, int num_edges,
                            const D* __restrict__ distance_prev, D* distance_cur,
                            int* changed) {
    const WarpRange r = warp_range(num_edges);
    int any = 0;
    for (long long base = r.beg + r.lane; base < r.end; base += 32 * UNROLL_OUTCORE) {
        int u[UNROLL_OUTCORE], v[UNROLL_OUTCORE], w[UNROLL_OUTCORE];
        load_edges<UNROLL_OUTCORE>(src, dst, weight, base, r.end, u, v, w);
        D du[UNROLL_OUTCORE], dv[UNROLL_OUTCORE];
#pragma unroll
        for (int k = 0; k < UNROLL_OUTCORE; ++k) {
            if (base + 32 * k < r.end) { du[k] = distance_prev[u[k]]; dv[k] = distance_prev[v[k]]; }
        }
#pragma unroll
        for (int k = 0; k < UNROLL_OUTCORE; ++k) {
            if (base + 32 * k < r.end && du[k] != Limits<D>::inf) {
                const D candidate = saturating_add(du[k], w[k]);
                if (candidate < dv[k]) {
                    atomicMin(&distance_cur[v[k]], candidate);
                    any = 1;
                }
            }
        }
    }
    if (__any_sync(0xffffffffu, any) && r.lane == 0) *changed = 1;
}

// In-core: one distance array; a thread sees what others wrote earlier in the round.
template <typename D>
__global__ void __launch_bounds__(1024) bmf_incore(const int* __restrict__ src, const int* __restrict__ dst,
                           const int* __restrict__ weight, int num_edges,
                           D* distance, int* changed) {
    const WarpRange r = warp_range(num_edges);
    int any = 0;
    for (long long base = r.beg + r.lane; base < r.end; base += 32 * UNROLL_INCORE) {
        int u[UNROLL_INCORE], v[UNROLL_INCORE], w[UNROLL_INCORE];
        load_edges<UNROLL_INCORE>(src, dst, weight, base, r.end, u, v, w);
        D du[UNROLL_INCORE];
#pragma unroll
        for (int k = 0; k < UNROLL_INCORE; ++k) {
            if (base + 32 * k < r.end) du[k] = distance[u[k]];
        }
#pragma unroll
        for (int k = 0; k < UNROLL_INCORE; ++k) {
            if (base + 32 * k < r.end && du[k] != Limits<D>::inf) {
                const D temp_dist = saturating_add(du[k], w[k]);
                if (temp_dist < distance[v[k]] && atomicMin(&distance[v[k]], temp_dist) > temp_dist) any = 1;
            }
        }
    }
    if (__any_sync(0xffffffffu, any) && r.lane == 0) *changed = 1;
}

// Segmented scan (spec, "Using shared memory"): on a destination-sorted list the lanes of
// a warp that share a destination form a segment; a min-scan over the warp's 32 candidates
// in shared memory leaves each segment's minimum in its last lane, which alone does the
// atomicMin. Out-of-core only, as the spec asks.
template <typename D>
__global__ void bmf_segscan(const int* __restrict__ src, const int* __restrict__ dst,
                            const int* __restrict__ weight, int num_edges,
                            const D* __restrict__ distance_prev, D* distance_cur,
                            int* changed) {
    __shared__ D value[1024];
    __shared__ int key[1024];
    const WarpRange r = warp_range(num_edges);
    const int t = threadIdx.x;
    int any = 0;
    // The loop bound is the warp's, not the lane's: every lane runs every step, so the
    // __syncwarp()s below are reached by the full warp.
    for (long long base = r.beg; base < r.end; base += 32) {
        const long long i = base + r.lane;
        const bool mine = i < r.end;
        const int v = mine ? dst[i] : -1;
        D candidate = Limits<D>::inf;
        if (mine) {
            const D du = distance_prev[src[i]];
            if (du != Limits<D>::inf) candidate = saturating_add(du, weight[i]);
        }
        value[t] = candidate;
        key[t] = v;
        __syncwarp();
        for (int offset = 1; offset < 32; offset <<= 1) {
            D other = Limits<D>::inf;
            if (r.lane >= offset && key[t - offset] == v) other = value[t - offset];
            __syncwarp();
            if (other < candidate) candidate = other;
            value[t] = candidate;
            __syncwarp();
        }
        const bool segment_end = mine && (r.lane == 31 || i + 1 >= r.end || key[t + 1] != v);
        if (segment_end && candidate < distance_prev[v]) {
            atomicMin(&distance_cur[v], candidate);
            any = 1;
        }
        __syncwarp();
    }
    if (__any_sync(0xffffffffu, any) && r.lane == 0) *changed = 1;
}
