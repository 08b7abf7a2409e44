// Vertex-centric Bellman-Ford (Bodra, seed 000; An, seed 001): one thread per vertex of a
// CSR by source, each relaxing its out-edges with atomicMin (push). Both kernels use a
// grid-stride loop; vbf's naive launch gives every vertex its own thread, so the loop runs
// once. dist_read == dist_write is the in-core (in-place) mode; distinct arrays are the
// papers' prevDistance/distance pair (out-of-core).
#include "common.cuh"

template <typename D>
__device__ __forceinline__ int relax_out_edges(int u, D du, const int* __restrict__ row_ptr,
                                               const int2* __restrict__ adj, D* dist_write,
                                               unsigned char* next_mask) {
    int any = 0;
    const int end = row_ptr[u + 1];
    for (int e = row_ptr[u]; e < end; ++e) {
        const int2 vw = adj[e];
        const D candidate = saturating_add(du, vw.y);
        if (candidate < dist_write[vw.x] && atomicMin(&dist_write[vw.x], candidate) > candidate) {
            any = 1;
            if (next_mask) next_mask[vw.x] = 1;
        }
    }
    return any;
}

// vbf and vbf-stride: every vertex with a finite distance relaxes, every round.
template <typename D>
__global__ void vbf_relax(int n, const int* __restrict__ row_ptr, const int2* __restrict__ adj,
                          const D* dist_read, D* dist_write, int* changed, unsigned long long* edges) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    int any = 0;
    unsigned long long relaxed = 0;
    for (long long u = (long long)blockIdx.x * blockDim.x + threadIdx.x; u < n; u += stride) {
        const D du = dist_read[u];
        if (du == Limits<D>::inf) continue;
        any |= relax_out_edges<D>((int)u, du, row_ptr, adj, dist_write, nullptr);
        relaxed += row_ptr[u + 1] - row_ptr[u];
    }
    if (any) *changed = 1;  // every writer writes 1: no ordering needed
    if (relaxed) atomicAdd(edges, relaxed);
}

// vbf-flag (An's mask/mask1/flag): only vertices improved in the last round relax; each
// clears its own mask entry as it takes it, so the mask is all zero when the kernel ends
// and the host only swaps the two masks.
template <typename D>
__global__ void vbf_flag_relax(int n, const int* __restrict__ row_ptr, const int2* __restrict__ adj,
                               const D* dist_read, D* dist_write, unsigned char* mask,
                               unsigned char* next_mask, int* changed, unsigned long long* edges) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    int any = 0;
    unsigned long long relaxed = 0;
    for (long long u = (long long)blockIdx.x * blockDim.x + threadIdx.x; u < n; u += stride) {
        if (!mask[u]) continue;
        mask[u] = 0;
        any |= relax_out_edges<D>((int)u, dist_read[u], row_ptr, adj, dist_write, next_mask);
        relaxed += row_ptr[u + 1] - row_ptr[u];
    }
    if (any) *changed = 1;
    if (relaxed) atomicAdd(edges, relaxed);
}

// Out-of-core with flags: after a round only the improved vertices differ between the two
// arrays, so only they are copied forward (the papers' update kernel, restricted to the mask).
template <typename D>
__global__ void vbf_flag_forward(int n, const unsigned char* __restrict__ next_mask,
                                 const D* __restrict__ dist_cur, D* dist_prev) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x; v < n; v += stride) {
        if (next_mask[v]) dist_prev[v] = dist_cur[v];
    }
}
