// To-process-edge filtering (spec section 2). Each round:
//   filtering: (1) tpe_count   every warp counts the edges of its contiguous range whose
//                              source changed last round (__ballot_sync + __popc);
//              (2) tpe_scan    one block turns the warp counts into offsets y[] (exclusive
//                              scan) and the length of T;
//              (3) tpe_gather  every warp writes its edges' ids to T[y[warp] ...], in order.
//   computation: tpe_relax_*   T divided evenly among the warps, relaxed as in bmf.
#include "common.cuh"

// (1) Ballots use the full mask: the loop bound is the warp's, so no lane has left.
// Four 32-edge steps are loaded before any is voted on (memory-level parallelism).
#define FILTER_UNROLL 4
__global__ void tpe_count(const int* __restrict__ src, int num_edges,
                          const unsigned char* __restrict__ changed, int* warp_count) {
    const WarpRange r = warp_range(num_edges);
    int count = 0;
    for (long long base = r.beg; base < r.end; base += 32 * FILTER_UNROLL) {
        int u[FILTER_UNROLL];
        bool to_process[FILTER_UNROLL];
#pragma unroll
        for (int k = 0; k < FILTER_UNROLL; ++k) {
            const long long i = base + 32 * k + r.lane;
            u[k] = i < r.end ? src[i] : -1;
        }
#pragma unroll
        for (int k = 0; k < FILTER_UNROLL; ++k) to_process[k] = u[k] >= 0 && changed[u[k]];
#pragma unroll
        for (int k = 0; k < FILTER_UNROLL; ++k) count += __popc(__ballot_sync(0xffffffffu, to_process[k]));
    }
    if (r.lane == 0) warp_count[r.warp] = count;
}

// (2) One block; each thread first sums a run of consecutive counts, so any number of
// warps works (the spec's 64 and any grid the command line accepts). warp_offset gets
// num_warps + 1 entries; status[1] = |T|.
__global__ void tpe_scan(const int* __restrict__ warp_count, int num_warps,
                         int* warp_offset, int* status) {
    __shared__ int partial[32];
    const int t = threadIdx.x, lane = t & 31, wid = t >> 5;
    const int per = (num_warps + blockDim.x - 1) / blockDim.x;
    const int first = min(num_warps, t * per), last = min(num_warps, first + per);
    int sum = 0;
    for (int k = first; k < last; ++k) sum += warp_count[k];
    // inclusive scan of the thread sums: within warps by shuffles, then across warps
    int inclusive = sum;
    for (int d = 1; d < 32; d <<= 1) {
        const int up = __shfl_up_sync(0xffffffffu, inclusive, d);
        if (lane >= d) inclusive += up;
    }
    if (lane == 31) partial[wid] = inclusive;
    __syncthreads();
    if (wid == 0) {
        const int nw = (blockDim.x + 31) >> 5;
        int p = lane < nw ? partial[lane] : 0;
        for (int d = 1; d < 32; d <<= 1) {
            const int up = __shfl_up_sync(0xffffffffu, p, d);
            if (lane >= d) p += up;
        }
        partial[lane] = p;
    }
    __syncthreads();
    int offset = inclusive - sum + (wid > 0 ? partial[wid - 1] : 0);
    for (int k = first; k < last; ++k) { warp_offset[k] = offset; offset += warp_count[k]; }
    if (t == blockDim.x - 1) { warp_offset[num_warps] = offset; status[1] = offset; }
}

// (3) The spec's snippet, with lanes_below() in place of `mask << (32 - lane)` (undefined
// for lane 0). Keeps the edges' relative order: warp by warp, step by step, lane by lane.
__global__ void tpe_gather(const int* __restrict__ src, int num_edges,
                           const unsigned char* __restrict__ changed,
                           const int* __restrict__ warp_offset, int* T) {
    const WarpRange r = warp_range(num_edges);
    int cur_offset = warp_offset[r.warp];
    if (warp_offset[r.warp + 1] == cur_offset) return;  // nothing to gather: the whole warp leaves
    for (long long base = r.beg; base < r.end; base += 32) {
        const long long i = base + r.lane;
        const bool to_process = i < r.end && changed[src[i]];
        const unsigned mask = __ballot_sync(0xffffffffu, to_process);
        if (to_process) T[cur_offset + __popc(mask & lanes_below(r.lane))] = (int)i;
        cur_offset += __popc(mask);
    }
}

// Computation over the edges named by T; a vertex whose distance drops is marked for the
// next round's filter. Out-of-core reads distance_prev and lowers distance_cur (as
// bmf_outcore); in-core reads and lowers one array and marks only the lane whose atomicMin
// actually lowered it.
template <typename D, bool INCORE>
__device__ __forceinline__ void tpe_relax(const int* __restrict__ T, const int* __restrict__ status,
                                          const int* __restrict__ src, const int* __restrict__ dst,
                                          const int* __restrict__ weight, const D* read, D* write,
                                          unsigned char* changed_next, int* changed) {
    const WarpRange r = warp_range(status[1]);
    int any = 0;
    for (long long i = r.beg + r.lane; i < r.end; i += 32) {
        const int e = T[i];
        const D du = read[src[e]];
        if (du == Limits<D>::inf) continue;
        const int v = dst[e];
        const D candidate = saturating_add(du, weight[e]);
        if (candidate < read[v]) {
            const D old = atomicMin(&write[v], candidate);
            if (!INCORE || old > candidate) {
                changed_next[v] = 1;
                any = 1;
            }
        }
    }
    if (__any_sync(0xffffffffu, any) && r.lane == 0) *changed = 1;
}

template <typename D>
__global__ void tpe_relax_outcore(const int* __restrict__ T, const int* __restrict__ status,
                                  const int* __restrict__ src, const int* __restrict__ dst,
                                  const int* __restrict__ weight,
                                  const D* __restrict__ distance_prev, D* distance_cur,
                                  unsigned char* changed_next, int* changed) {
    tpe_relax<D, false>(T, status, src, dst, weight, distance_prev, distance_cur, changed_next, changed);
}

template <typename D>
__global__ void tpe_relax_incore(const int* __restrict__ T, const int* __restrict__ status,
                                 const int* __restrict__ src, const int* __restrict__ dst,
                                 const int* __restrict__ weight, D* distance,
                                 unsigned char* changed_next, int* changed) {
    tpe_relax<D, true>(T, status, src, dst, weight, distance, distance, changed_next, changed);
}
