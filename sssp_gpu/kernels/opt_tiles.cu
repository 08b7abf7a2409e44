// opt -tile N (issue 26, item 1): tile fixpoints in shared memory, for latency-bound graphs.
//
// The host (sssp_gpu/methods/tiles.py) renumbers the vertices for locality and cuts them into
// tiles of consecutive ids (tile_ptr), at most tile_cap vertices each; every edge is either
// intra-tile (in_ptr/in_head/in_w: heads as 16-bit offsets inside the tile) or boundary
// (out_ptr/out_head/out_w: heads as global ids of another tile).
//
// One persistent cooperative kernel runs the solve in rounds, two phases each, a grid barrier
// after each phase:
//   A (tiles)    every tile queued for round r is taken by one block: its distances go to
//                shared memory; its dirty vertices below the threshold T start a worklist;
//                steps (one __syncthreads each) relax the worklist's intra-tile edges with
//                shared atomicMin until nothing improves below T (at most max_steps; what is
//                left stays dirty and the tile is queued again); distances are written back,
//                improvements at or above T stay dirty (the far side of near-far), and every
//                vertex expanded here with boundary edges goes to the out queue. During phase A
//                a tile's vertices are written by its block only (nobody else writes dist).
//   B (boundary) the out queue's vertices relax their boundary edges into global dist with
//                atomicMin; an improved head becomes dirty, lowers its tile's tpend, and (below
//                T) queues its tile for round r + 1 (each tile once per round: tstamp).
// When round r's tile queue is empty the threshold moves (a split): every block finds
// min(tpend) over all tiles (tpend[t] <= every dirty distance in tile t), T = min + delta, and
// the tiles with tpend below T are queued for round r. min(tpend) infinite: done.
//
// Mutable global data is read with __ldcg (L2: the grid barrier orders it; L1 is not coherent);
// the graph (never written) with __ldg.
#include "opt_phases.cuh"

// Dynamic shared memory per block (the host sizes it: methods/opt.py, tile_shared_memory):
// tile_cap distances, tile_cap step stamps (int), then the staged intra-tile edges (tile_cap + 1
// offsets, edge_cap weights, edge_cap 16-bit heads), then tile_cap "pending" and tile_cap
// "expanded" bytes. A tile whose intra edges fit edge_cap steps from shared memory alone; a
// larger one reads them from global memory (edge_cap 0: never staged).
//
// Steps. A vertex is expanded in step k when its stamp is k; an improvement below T stamps the
// head k + 1 (atomicExch: the one thread that changes the stamp also appends the head to step
// k + 1's list, so a list holds each vertex once; past LIST_MAX entries only the stamps count).
// A step whose list holds at most LIST_MAX vertices is run by warp 0 alone, a lane a vertex, with
// __syncwarp between steps: Nsight Compute found 85% of a block step's stall cycles at its
// __syncthreads of 32 warps while one or two worked (BENCHMARKS.md). A larger step is run by the
// whole block, each thread testing its vertices' stamps. A vertex improved in the step that
// expands it is stamped again and expanded again in the next (any value read is a path length).
#define LIST_MAX 32

__device__ __forceinline__ void queue_tile(int t, int round, int* tstamp, int* q, long long* count) {
    if (atomicMax(&tstamp[t], round) < round) {
        const unsigned long long at = atomicAdd((unsigned long long*)count, 1ull);
        q[at] = t;
    }
}

#define TILE_PARAMS                                                                              \
    const int *__restrict__ tile_ptr, const int *__restrict__ tile_of, int tiles,                 \
        const int *__restrict__ in_ptr, const unsigned short *__restrict__ in_head,               \
        const int *__restrict__ in_w, const int *__restrict__ out_ptr,                            \
        const int *__restrict__ out_head, const int *__restrict__ out_w, D *dist, int *dirty,     \
        long long *tpend, int *tstamp, int *tq0, int *tq1, int *outq, long long *ctrl,            \
        long long delta, int tile_cap, int max_steps, int max_rounds, int edge_cap

// Phase A for tile t of round r (the whole block calls it; it begins and ends block-uniform).
template <typename D>
__device__ __forceinline__ void tile_fixpoint(const int* __restrict__ tile_ptr, const int* __restrict__ in_ptr,
                              const unsigned short* __restrict__ in_head, const int* __restrict__ in_w,
                              const int* __restrict__ out_ptr, D* dist, int* dirty, long long* tpend,
                              int* tstamp, int* tq_next, int* outq, long long* ctrl, int t, int r, D T,
                              int max_steps, D* sd, int* mark, unsigned char* pend, unsigned char* expd,
                              int* s_ptr, int* s_w, unsigned short* s_head, int edge_cap, long long* s_min,
                              int* s_left, int* s_cnt, int (*s_list)[LIST_MAX], int* s_mode,
                              long long& edges, long long& steps) {
    const int lane = threadIdx.x & 31;
    const int base = __ldg(&tile_ptr[t]);
    const int len = __ldg(&tile_ptr[t + 1]) - base;
    // pend: improved at or above T, not expanded since; expd: expanded in this activation
    bool mine = false;
    for (int i = threadIdx.x; i < len; i += blockDim.x) {
        const D d = __ldcg(&dist[base + i]);
        const int dv = __ldcg(&dirty[base + i]);
        const bool now = dv != 0 && d < T;
        sd[i] = d;
        mark[i] = now ? 0 : -1;
        pend[i] = dv != 0 && !now;
        expd[i] = 0;
        if (dv) dirty[base + i] = 0;
        mine |= now;
    }
    // Stage the tile's intra edges (block-uniform: every thread computes the same count).
    const int e0 = __ldg(&in_ptr[base]);
    const int staged_edges = __ldg(&in_ptr[base + len]) - e0;
    const bool staged = staged_edges <= edge_cap;
    const int* ptr = in_ptr + base;      // offsets into head/wgt: global ...
    const unsigned short* head = in_head;
    const int* wgt = in_w;
    if (staged) {                        // ... or shared, from 0
        for (int i = threadIdx.x; i <= len; i += blockDim.x) s_ptr[i] = __ldg(&in_ptr[base + i]) - e0;
        for (int k = threadIdx.x; k < staged_edges; k += blockDim.x) {
            s_head[k] = __ldg(&in_head[e0 + k]);
            s_w[k] = __ldg(&in_w[e0 + k]);
        }
        ptr = s_ptr;
        head = s_head;
        wgt = s_w;
    }
    if (threadIdx.x == 0) {
        *s_min = 0x7fffffffffffffffLL;
        *s_left = 0;
        s_cnt[0] = s_cnt[1] = s_cnt[2] = 0;
    }
    // a barrier (every load above done) and "does any vertex need expanding?"
    const int work = __syncthreads_or(mine);
    // Step k appends to slot (k + 1) % 3 and clears slot (k + 2) % 3, which step k - 1 read
    // before the barrier (or __syncwarp) that ended it; its next writers come after this step's.
    int step = 0;
    int count = work ? 0x7fffffff : 0;  // step 0's list size is not known: a block step first
    // Relax u's intra edges from du; improvements below T stamped and listed for step k + 1.
    auto expand = [&](int u, D du, int k) {
        const int end = ptr[u + 1];  // shared (staged) or global: never written in the kernel
        for (int e = ptr[u]; e < end; ++e) {
            const int h = head[e];
            const D nd = saturating_add(du, wgt[e]);
            ++edges;
            if (nd < atomicMin(&sd[h], nd)) {
                if (nd < T) {
                    if (atomicExch(&mark[h], k + 1) != k + 1) {
                        const int at = atomicAdd(&s_cnt[(k + 1) % 3], 1);
                        if (at < LIST_MAX) s_list[(k + 1) % 3][at] = h;
                    }
                } else {
                    pend[h] = 1;  // h's stamp is not k: stamped vertices hold values below T
                }
            }
        }
    };
    while (count > 0 && step < max_steps) {  // block-uniform: count and step are
        if (count <= LIST_MAX) {
            if (threadIdx.x < 32) {  // warp 0 alone, a lane a listed vertex, while lists stay small
                int k = step, n = count;
                while (n > 0 && n <= LIST_MAX && k < max_steps) {
                    if (lane == 0) s_cnt[(k + 2) % 3] = 0;
                    if (lane < n) {
                        const int u = s_list[k % 3][lane];
                        if (mark[u] == k) {  // else stamped k + 1 meanwhile: expanded next step
                            expd[u] = 1;
                            pend[u] = 0;
                            expand(u, sd[u], k);
                        }
                    }
                    __syncwarp();
                    n = *(volatile int*)&s_cnt[(k + 1) % 3];
                    ++k;
                    __syncwarp();  // every lane read n before lane 0 clears the next slot
                }
                if (lane == 0) {
                    s_mode[0] = k;
                    s_mode[1] = n;
                }
            }
            __syncthreads();
            step = s_mode[0];
            count = s_mode[1];
            continue;  // the next phase is a block step or the end: s_mode is not written before
                       // another __syncthreads
        }
        if (threadIdx.x == 0) s_cnt[(step + 2) % 3] = 0;
        for (int i = threadIdx.x; i < len; i += blockDim.x) {
            if (mark[i] != step) continue;
            expd[i] = 1;
            pend[i] = 0;
            expand(i, sd[i], step);
        }
        __syncthreads();  // the step's relaxations and appends are done
        count = s_cnt[(step + 1) % 3];
        ++step;
    }
    // write back; dirty what is left (step cap) or pending; boundary work to the out queue
    long long least = 0x7fffffffffffffffLL;
    bool left_any = false;
    for (int i0 = 0; i0 < len; i0 += blockDim.x) {  // block-uniform bounds: warp_push needs every lane
        const int i = i0 + threadIdx.x;
        bool push = false;
        if (i < len) {
            const int v = base + i;
            const D d = sd[i];
            dist[v] = d;
            const bool left = mark[i] == step;  // stamped for a step the cap did not let run
            if (left || pend[i]) {
                dirty[v] = 1;
                least = min(least, (long long)d);
            }
            left_any |= left;
            push = expd[i] && __ldg(&out_ptr[v + 1]) > __ldg(&out_ptr[v]);
        }
        warp_push(push, base + i, outq, &ctrl[C_OUTQ + r % 3], lane);
    }
    if (least < 0x7fffffffffffffffLL) atomicMin(s_min, least);
    if (left_any) *s_left = 1;
    __syncthreads();
    if (threadIdx.x == 0) {
        tpend[t] = *s_min;  // phase A: only this block writes tpend[t]
        if (*s_left) queue_tile(t, r + 1, tstamp, tq_next, &ctrl[C_NEAR + (r + 1) % 3]);
        steps += step;
    }
    __syncthreads();  // shared memory is reused by the block's next tile
}

template <typename D>
__global__ void __launch_bounds__(1024, 1) opt_tiles_persistent(TILE_PARAMS) {
    extern __shared__ long long tile_smem[];  // dynamic: the layout at the top of this file
    D* sd = reinterpret_cast<D*>(tile_smem);
    int* mark = reinterpret_cast<int*>(sd + tile_cap);
    int* s_ptr = mark + tile_cap;
    int* s_w = s_ptr + tile_cap + 1;
    unsigned short* s_head = reinterpret_cast<unsigned short*>(s_w + edge_cap);
    unsigned char* pend = reinterpret_cast<unsigned char*>(s_head + edge_cap);
    unsigned char* expd = pend + tile_cap;
    __shared__ long long s_min, s_split;
    __shared__ int s_left, s_cnt[3], s_mode[2];
    __shared__ int s_list[3][LIST_MAX];
    const bool leader = blockIdx.x == 0 && threadIdx.x == 0;
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long nthreads = (long long)gridDim.x * blockDim.x;
    unsigned long long target = 0;
    long long edges = 0, scanned = 0, barriers = 0, splits = 0, split_ns = 0, steps = 0, activations = 0;
    int r = 0;
    D T = threshold_after<D>(0, delta);
    while (true) {
        int* tq = (r & 1) ? tq1 : tq0;
        int* tq_next = (r & 1) ? tq0 : tq1;
        const long long S = ldcg64(&ctrl[C_NEAR + r % 3]);
        if (S == 0) {  // a split: every block reads the same tpend[] (nobody writes it now)
            const long long t0 = leader ? global_ns() : 0;
            long long least = 0x7fffffffffffffffLL;
            for (int t = threadIdx.x; t < tiles; t += blockDim.x) least = min(least, __ldcg(&tpend[t]));
            if (threadIdx.x == 0) s_split = 0x7fffffffffffffffLL;
            __syncthreads();
            if (least < 0x7fffffffffffffffLL) atomicMin(&s_split, least);
            __syncthreads();
            const long long low = s_split;
            __syncthreads();
            if (low == 0x7fffffffffffffffLL) break;  // grid-uniform: nothing dirty anywhere
            // Every thread decided "split" from the count the queueing below changes: wait until
            // all have read it (else a late block would see the new count and skip the split).
            grid_barrier(ctrl, target);
            T = threshold_after<D>(low, delta);
            for (long long t = tid; t < tiles; t += nthreads)
                if (__ldcg(&tpend[t]) < (long long)T) queue_tile((int)t, r, tstamp, tq, &ctrl[C_NEAR + r % 3]);
            grid_barrier(ctrl, target);
            barriers += 2;
            ++splits;
            scanned += leader ? tiles : 0;
            if (leader) split_ns += global_ns() - t0;
            continue;
        }
        if (leader) {  // slots nobody reads until after the next barrier
            ctrl[C_NEAR + (r + 2) % 3] = 0;
            ctrl[C_OUTQ + (r + 1) % 3] = 0;
        }
        for (long long i = blockIdx.x; i < S; i += gridDim.x) {
            const int t = __ldcg(&tq[i]);
            tile_fixpoint<D>(tile_ptr, in_ptr, in_head, in_w, out_ptr, dist, dirty, tpend, tstamp, tq_next, outq,
                             ctrl, t, r, T, max_steps, sd, mark, pend, expd, s_ptr, s_w, s_head, edge_cap,
                             &s_min, &s_left, s_cnt, s_list, s_mode, edges, steps);
        }
        if (leader) activations += S;
        grid_barrier(ctrl, target);
        // phase B: the boundary edges of the vertices expanded in phase A
        const long long Q = ldcg64(&ctrl[C_OUTQ + r % 3]);
        for (long long i = tid; i < Q; i += nthreads) {
            const int u = __ldcg(&outq[i]);
            const D du = __ldcg(&dist[u]);
            const int end = __ldg(&out_ptr[u + 1]);
            for (int e = __ldg(&out_ptr[u]); e < end; ++e) {
                const int v = __ldg(&out_head[e]);
                const D nd = saturating_add(du, __ldg(&out_w[e]));
                ++edges;
                if (nd < atomicMin(&dist[v], nd)) {
                    const int tv = __ldg(&tile_of[v]);
                    dirty[v] = 1;
                    atomicMin(&tpend[tv], (long long)nd);
                    if (nd < T) queue_tile(tv, r + 1, tstamp, tq_next, &ctrl[C_NEAR + (r + 1) % 3]);
                }
            }
        }
        grid_barrier(ctrl, target);
        barriers += 2;
        ++r;
        if (r > max_rounds) {
            if (leader) ctrl[C_ERROR] = 1;
            break;  // grid-uniform: every thread counts the same rounds
        }
    }
    flush_stats(ctrl, edges, scanned);
    if (threadIdx.x == 0 && steps) atomicAdd((unsigned long long*)&ctrl[C_TSTEPS], (unsigned long long)steps);
    if (leader) {
        ctrl[C_ROUNDS] = r;
        ctrl[C_SPLITS] = splits;
        ctrl[C_BARRIERS] = barriers;
        ctrl[C_T] = (long long)T;
        ctrl[C_SPLIT_NS] = split_ns;
        ctrl[C_TACTIVE] = activations;
    }
}
