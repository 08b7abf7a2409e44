// opt: work-efficient SSSP. Near-far piles (delta-stepping with one far pile), a vertex
// frontier expanded through a CSR (by source) with warp-level load balancing, hub vertices
// cut into chunks that the whole grid shares, pushes aggregated per warp, distances
// relaxed in place with atomicMin.
//
// Two drivers share the same phases and the same state machine:
//   opt_persistent  : one cooperative launch runs the whole solve; phases are separated
//                     by a grid barrier (a monotonic counter); every thread keeps the
//                     state (round, threshold, far pile in use) in registers, each
//                     deciding identically from counters read after the barrier.
//   opt_expand_k / opt_after_expand_k / opt_split_k : one launch per phase (kernel boundaries
//                     are the barriers; the state lives in ctrl, advanced by the last block).
//
// Queues: near[2] (the frontier of this round and of the next), far[2] (the far pile and
// the one a split writes), chunks (hub work of this round). Each vertex is at most once in
// a near queue (stamp[v] = the round that will expand it) and at most once in the far pile
// (in_far[v]), so every queue fits in n entries.
#include "opt_phases.cuh"

template <typename D>
__global__ void __launch_bounds__(1024) opt_persistent(CTX_PARAMS, int max_rounds, int fuse_iterations) {
    const Ctx<D> c = CTX_INIT;
    __shared__ int fuse_queue[2][FUSE_CAP];
    __shared__ int fuse_count[2];
    if (threadIdx.x == 0) fuse_count[0] = fuse_count[1] = 0;
    __syncthreads();
    Local fuse;
    if (fuse_iterations > 0) {
        fuse.q = fuse_queue[0];
        fuse.count = &fuse_count[0];
        fuse.cap = FUSE_CAP;
    }
    const bool leader = blockIdx.x == 0 && threadIdx.x == 0;
    unsigned long long target = 0;
    long long edges = 0, scanned = 0, barriers = 0, splits = 0, split_ns = 0;
    int r = 0, fcur = 0, mode = MODE_EXPAND;
    long long S = 1;  // size of round r's near queue (the source)
    long long S_prev = 0;
    D T = threshold_after<D>(0, delta);
    while (mode != MODE_DONE) {
        if (mode == MODE_SPLIT) {
            // Every thread decided from counters the split will change: wait until all have
            // read them.
            grid_barrier(c.ctrl, target);
            ++barriers;
        }
        if (mode == MODE_EXPAND) {
            if (leader) {  // slots nobody reads until after the next barrier
                c.ctrl[C_NEAR + (r + 2) % 3] = 0;
                c.ctrl[C_CHUNK + (r + 1) % 3] = 0;
                c.ctrl[C_FMIN + (r + 1) % 3] = 0x7fffffffffffffffLL;
            }
            if (pull_round(c, S, S_prev)) {  // every thread decides alike from S and S_prev
                mark_phase(c, r, S);
                grid_barrier(c.ctrl, target);
                pull_phase(c, r, edges);
                barriers += 2;
                if (leader) ++c.ctrl[C_PULLS];
                grid_barrier(c.ctrl, target);
                ++r;
                S_prev = S;
                S = ldcg64(&c.ctrl[C_NEAR + r % 3]);
                mode = next_mode(c.ctrl, r, fcur);
                if (r > max_rounds) {
                    if (leader) c.ctrl[C_ERROR] = 1;
                    break;
                }
                continue;
            }
            // Fusion only for rounds that leave the grid mostly idle (a few vertices per warp):
            // a high-diameter graph's thin wavefront, not a power-law graph's wide frontier,
            // where block-local steps relax out of order (R-MAT: 1.7 -> 3.4 relaxations per edge).
            const bool fuse_now = fuse_iterations > 0 && S <= FUSE_MAX_PER_WARP * ((long long)gridDim.x * blockDim.x / 32);
            expand_phase(c, r, fcur, T, S, edges, Team::grid(), nullptr, fuse_now ? fuse : Local());
            if (fuse_now)
                fuse_block(c, r, fcur, T, edges, fuse_queue[0], fuse_queue[1], fuse_count, FUSE_CAP, fuse_iterations);
            grid_barrier(c.ctrl, target);
            ++barriers;
            const long long H = ldcg64(&c.ctrl[C_CHUNK + r % 3]);
            if (H > 0) {
                hub_phase(c, r, fcur, T, H, edges);
                grid_barrier(c.ctrl, target);
                ++barriers;
            }
            ++r;
            S_prev = S;
        } else {
            const long long t0 = leader ? global_ns() : 0;
            const D T_new = threshold_after<D>(ldcg64(&c.ctrl[C_FARMIN + fcur]), delta);
            split_phase(c, r, fcur, T, T_new, scanned);
            grid_barrier(c.ctrl, target);
            ++barriers;
            if (leader) split_ns += global_ns() - t0;
            if (leader) {
                c.ctrl[C_FAR + fcur] = 0;
                c.ctrl[C_FARMIN + fcur] = 0x7fffffffffffffffLL;
            }
            T = T_new;
            fcur ^= 1;
            ++splits;
        }
        S = ldcg64(&c.ctrl[C_NEAR + r % 3]);
        mode = next_mode(c.ctrl, r, fcur);
        if (r > max_rounds) {
            if (leader) c.ctrl[C_ERROR] = 1;
            break;
        }
    }
    flush_stats(c.ctrl, edges, scanned);
    if (leader) {
        c.ctrl[C_ROUNDS] = r;
        c.ctrl[C_SPLITS] = splits;
        c.ctrl[C_BARRIERS] = barriers;
        c.ctrl[C_T] = (long long)T;
        c.ctrl[C_SPLIT_NS] = split_ns;
    }
}

// ---- the graph driver: one launch per phase; state in ctrl, advanced by the last block ----

__device__ __forceinline__ bool last_block(long long* ctrl) {
    __shared__ bool last;
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        const unsigned long long ticket = atomicAdd((unsigned long long*)&ctrl[C_TICKET], 1ull);
        last = ticket == gridDim.x - 1;
        if (last) ctrl[C_TICKET] = 0;
        __threadfence();
    }
    __syncthreads();
    return last;
}

// Bucket fusion works per block, so this driver fuses thin rounds exactly as the persistent
// kernel does: it needs no grid barrier, only the block's shared queues.
template <typename D>
__global__ void __launch_bounds__(1024) opt_expand_k(CTX_PARAMS, int fuse_iterations) {
    const Ctx<D> c = CTX_INIT;
    if (ldcg64(&ctrl[C_MODE]) != MODE_EXPAND) return;
    __shared__ int fuse_queue[2][FUSE_CAP];
    __shared__ int fuse_count[2];
    const int r = (int)ldcg64(&ctrl[C_R]);
    const int fcur = (int)ldcg64(&ctrl[C_FCUR]);
    const D T = (D)ldcg64(&ctrl[C_T]);
    const long long S = ldcg64(&ctrl[C_NEAR + r % 3]);
    if (pull_round(c, S, ldcg64(&ctrl[C_SPREV]))) {  // opt_mark_k has stamped the queue
        long long edges = 0;
        pull_phase(c, r, edges);
        flush_stats(ctrl, edges, 0);
        return;
    }
    const bool fuse_now = fuse_iterations > 0 && S <= FUSE_MAX_PER_WARP * ((long long)gridDim.x * blockDim.x / 32);
    Local fuse;
    if (fuse_now) {
        if (threadIdx.x == 0) fuse_count[0] = fuse_count[1] = 0;
        __syncthreads();
        fuse.q = fuse_queue[0];
        fuse.count = &fuse_count[0];
        fuse.cap = FUSE_CAP;
    }
    long long edges = 0;
    expand_phase(c, r, fcur, T, S, edges, Team::grid(), nullptr, fuse);
    if (fuse_now) fuse_block(c, r, fcur, T, edges, fuse_queue[0], fuse_queue[1], fuse_count, FUSE_CAP, fuse_iterations);
    flush_stats(ctrl, edges, 0);
}

// Stamps round r's near queue when opt_expand_k will run it bottom-up (the launch boundary
// is the barrier pull_phase needs after mark_phase).
template <typename D>
__global__ void __launch_bounds__(1024) opt_mark_k(CTX_PARAMS) {
    const Ctx<D> c = CTX_INIT;
    if (ldcg64(&ctrl[C_MODE]) != MODE_EXPAND) return;
    const int r = (int)ldcg64(&ctrl[C_R]);
    const long long S = ldcg64(&ctrl[C_NEAR + r % 3]);
    if (pull_round(c, S, ldcg64(&ctrl[C_SPREV]))) mark_phase(c, r, S);
}

template <typename D>
__global__ void __launch_bounds__(1024) opt_after_expand_k(CTX_PARAMS, int max_rounds) {
    const Ctx<D> c = CTX_INIT;
    if (ldcg64(&ctrl[C_MODE]) != MODE_EXPAND) return;
    const int r = (int)ldcg64(&ctrl[C_R]);
    const int fcur = (int)ldcg64(&ctrl[C_FCUR]);
    const long long H = ldcg64(&ctrl[C_CHUNK + r % 3]);
    long long edges = 0;
    if (H > 0) hub_phase(c, r, fcur, (D)ldcg64(&ctrl[C_T]), H, edges);
    flush_stats(ctrl, edges, 0);
    if (last_block(ctrl) && threadIdx.x == 0) {
        if (pull_round(c, ctrl[C_NEAR + r % 3], ctrl[C_SPREV])) ctrl[C_PULLS] += 1;
        ctrl[C_SPREV] = ctrl[C_NEAR + r % 3];
        ctrl[C_NEAR + (r + 2) % 3] = 0;
        ctrl[C_CHUNK + (r + 1) % 3] = 0;
        ctrl[C_FMIN + (r + 1) % 3] = 0x7fffffffffffffffLL;
        ctrl[C_R] = r + 1;
        ctrl[C_ROUNDS] = r + 1;
        ctrl[C_BARRIERS] += H > 0 ? 2 : 1;
        int mode = next_mode(ctrl, r + 1, fcur);
        if (r + 1 > max_rounds) { ctrl[C_ERROR] = 1; mode = MODE_DONE; }
        ctrl[C_MODE] = mode;
        ctrl[C_TSTAMP] = global_ns();
    }
}

template <typename D>
__global__ void __launch_bounds__(1024) opt_split_k(CTX_PARAMS) {
    const Ctx<D> c = CTX_INIT;
    if (ldcg64(&ctrl[C_MODE]) != MODE_SPLIT) return;
    const int r = (int)ldcg64(&ctrl[C_R]);
    const int fcur = (int)ldcg64(&ctrl[C_FCUR]);
    const D T = (D)ldcg64(&ctrl[C_T]);
    const D T_new = threshold_after<D>(ldcg64(&ctrl[C_FARMIN + fcur]), delta);
    long long scanned = 0;
    split_phase(c, r, fcur, T, T_new, scanned);
    flush_stats(ctrl, 0, scanned);
    if (last_block(ctrl) && threadIdx.x == 0) {
        ctrl[C_FAR + fcur] = 0;
        ctrl[C_FARMIN + fcur] = 0x7fffffffffffffffLL;
        ctrl[C_T] = (long long)T_new;
        ctrl[C_FCUR] = fcur ^ 1;
        ctrl[C_SPLITS] += 1;
        ctrl[C_BARRIERS] += 1;
        ctrl[C_MODE] = next_mode(ctrl, r, fcur ^ 1);
        const long long now = global_ns();
        ctrl[C_SPLIT_NS] += now - ctrl[C_TSTAMP];
        ctrl[C_TSTAMP] = now;
    }
}
