// All pairs shortest paths on a dense N x N matrix (row = source), N a multiple of TILE.
// Unreachable is Half<D>::inf, half the type's range, so the sum of two entries never
// overflows and no saturating add is needed: entries never exceed their initial value
// (<= inf), a sum never exceeds 2 * inf, and the host maps anything >= inf to unreachable.
//
// - apsp_fw_k: Floyd-Warshall, one launch per k (Hochberg, seed 002; Bodra's super naive);
// - apsp_fw_diagonal + apsp_minplus_tiles: the three-phase blocked Floyd-Warshall (Bodra's
//   tiled with shared memory). Phase 1 closes the diagonal tile K; phase 2 multiplies the
//   row and column panels by that closure (the closure has a zero diagonal, so the product
//   alone is the panel's FW update: a path's last (first) vertex in K splits it); phase 3
//   is a min-plus product of the panels into every other tile. Phases 2 and 3 are the
//   same kernel: C[I][J] = min(C[I][J], A[I][k] + B[k][J]) over k in [kbegin, kend);
// - apsp_minplus_tiles over all k: one min-plus squaring (An, seed 001);
// - apsp_batch_relax: a batch of sources' rows relaxed frontier by frontier (sssp-all).
#include "common.cuh"

#define TILE 128       // output tile edge; 256 threads, each 8 x 8 entries
#define KC 16          // k-chunk staged in shared memory per step
#define SUB 8          // TILE / 16
typedef unsigned long long Index;  // matrix offsets: n^2 passes 2^31 at n = 46,341

template <typename D> struct Half;
template <> struct Half<short> { static constexpr short inf = 0x3fff; };
template <> struct Half<int> { static constexpr int inf = 0x3fffffff; };
template <> struct Half<long long> { static constexpr long long inf = 0x3fffffffffffffffLL; };

template <typename D>
__device__ __forceinline__ D add_min(D a, D b, D c) {
    const D s = (D)(a + b);  // short: both <= 0x3fff, so the sum fits
    return s < c ? s : c;
}
#if defined(__CUDACC_VER_MAJOR__) && __CUDACC_VER_MAJOR__ >= 12 && !defined(APSP_PLAIN_ADD_MIN)
// Hopper's fused add-then-min (VIADDMNMX; emulated on older GPUs).
template <>
__device__ __forceinline__ int add_min<int>(int a, int b, int c) { return __viaddmin_s32(a, b, c); }
#endif

template <typename D>
__global__ void apsp_fw_k(D* d, int N, int n, int k) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= n || j >= n) return;
    const Index row = (Index)i * N;
    const D dik = d[row + k];
    if (dik >= Half<D>::inf) return;
    d[row + j] = add_min(dik, d[(Index)k * N + j], d[row + j]);
}

// Phase 1: the 128 x 128 tile (kb, kb) closed by 128 FW steps, kept in registers; each step
// the owners of row k and column k publish them through shared memory. Thread (ty, tx)
// owns rows ty + 16 r and columns tx + 16 c.
template <typename D>
__global__ void __launch_bounds__(256) apsp_fw_diagonal(D* d, int N, int kb) {
    __shared__ D row_k[TILE], col_k[TILE];
    const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
    D* base = d + (Index)kb * TILE * N + (Index)kb * TILE;
    D a[SUB][SUB];
#pragma unroll
    for (int r = 0; r < SUB; ++r)
#pragma unroll
        for (int c = 0; c < SUB; ++c) a[r][c] = base[(Index)(ty + 16 * r) * N + tx + 16 * c];
    for (int k = 0; k < TILE; ++k) {
        const int kr = k >> 4, ko = k & 15;
#pragma unroll
        for (int r = 0; r < SUB; ++r)
#pragma unroll
            for (int c = 0; c < SUB; ++c) {
                if (r == kr && ty == ko) row_k[tx + 16 * c] = a[r][c];
                if (c == kr && tx == ko) col_k[ty + 16 * r] = a[r][c];
            }
        __syncthreads();
#pragma unroll
        for (int r = 0; r < SUB; ++r) {
            const D left = col_k[ty + 16 * r];
#pragma unroll
            for (int c = 0; c < SUB; ++c) a[r][c] = add_min(left, row_k[tx + 16 * c], a[r][c]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int r = 0; r < SUB; ++r)
#pragma unroll
        for (int c = 0; c < SUB; ++c) base[(Index)(ty + 16 * r) * N + tx + 16 * c] = a[r][c];
}

// C[I][J] = min(init[I][J], min over k in [kbegin, kend) of A[I][k] + B[k][J]) for one
// 128 x 128 tile per block. mode 0: blockIdx (t, 0) is the row panel (kb, t) and (t, 1)
// the column panel (t, kb), t != kb; mode 1: tile (blockIdx.y, blockIdx.x) unless in row
// or column kb; mode 2: every tile. Each block reads all its A and B entries before it
// writes C, and no other block reads its C tile, so C may be A or B (phase 2 in place).
// changed: set (mode 2 only) when some entry ends below init (a squaring that helped).
template <typename D>
__global__ void __launch_bounds__(256) apsp_minplus_tiles(D* C, const D* A, const D* B, const D* init, int N,
                                                          int kbegin, int kend, int mode, int kb, int* changed) {
    __shared__ D As[KC][TILE + 1];  // A's chunk transposed: As[k][row]
    __shared__ D Bs[KC][TILE];
    int I, J;
    if (mode == 0) {
        if ((int)blockIdx.x == kb) return;
        I = blockIdx.y == 0 ? kb : (int)blockIdx.x;
        J = blockIdx.y == 0 ? (int)blockIdx.x : kb;
    } else {
        I = blockIdx.y;
        J = blockIdx.x;
        if (mode == 1 && (I == kb || J == kb)) return;
    }
    const int t = threadIdx.x, tx = t & 15, ty = t >> 4;
    const Index row0 = (Index)I * TILE, col0 = (Index)J * TILE;
    D acc[SUB][SUB];
#pragma unroll
    for (int r = 0; r < SUB; ++r)
#pragma unroll
        for (int c = 0; c < SUB; ++c) acc[r][c] = init[(row0 + ty + 16 * r) * N + col0 + tx + 16 * c];
    // Each thread stages LOADS entries of A's and of B's chunk; the next chunk's are loaded
    // into registers while this one is computed (one block per SM: nothing else would hide
    // the global loads' latency).
    constexpr int LOADS = TILE * KC / 256;
    D next_a[LOADS], next_b[LOADS];
#pragma unroll
    for (int i = 0; i < LOADS; ++i) {
        const int e = t + 256 * i;
        next_a[i] = A[(row0 + e / KC) * N + kbegin + e % KC];           // 16 consecutive k of a row
        next_b[i] = B[(Index)(kbegin + e / TILE) * N + col0 + e % TILE];  // a row of 128 columns
    }
    for (int k0 = kbegin; k0 < kend; k0 += KC) {
#pragma unroll
        for (int i = 0; i < LOADS; ++i) {
            const int e = t + 256 * i;
            As[e % KC][e / KC] = next_a[i];
            Bs[e / TILE][e % TILE] = next_b[i];
        }
        __syncthreads();
        if (k0 + KC < kend) {
#pragma unroll
            for (int i = 0; i < LOADS; ++i) {
                const int e = t + 256 * i;
                next_a[i] = A[(row0 + e / KC) * N + k0 + KC + e % KC];
                next_b[i] = B[(Index)(k0 + KC + e / TILE) * N + col0 + e % TILE];
            }
        }
#pragma unroll
        for (int k = 0; k < KC; ++k) {
            D a[SUB], b[SUB];
#pragma unroll
            for (int r = 0; r < SUB; ++r) a[r] = As[k][ty + 16 * r];
#pragma unroll
            for (int c = 0; c < SUB; ++c) b[c] = Bs[k][tx + 16 * c];
#pragma unroll
            for (int r = 0; r < SUB; ++r)
#pragma unroll
                for (int c = 0; c < SUB; ++c) acc[r][c] = add_min(a[r], b[c], acc[r][c]);
        }
        __syncthreads();
    }
    int any = 0;
#pragma unroll
    for (int r = 0; r < SUB; ++r)
#pragma unroll
        for (int c = 0; c < SUB; ++c) {
            const Index at = (row0 + ty + 16 * r) * N + col0 + tx + 16 * c;
            if (mode == 2 && acc[r][c] < init[at]) any = 1;
            C[at] = acc[r][c];
        }
    if (any) *changed = 1;
}

// sssp-all: rows [first, first + batch) of the matrix, each a source's distances, relaxed
// from the vertices that improved in the last round (vbf-flag over many sources at once).
// mask and next_mask are batch x n; pair p = (source p / n, vertex p % n).
template <typename D>
__global__ void apsp_batch_relax(D* d, int N, int n, int first, long long pairs, const int* __restrict__ row_ptr,
                                 const int2* __restrict__ adj, unsigned char* mask, unsigned char* next_mask,
                                 int* changed) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    int any = 0;
    for (long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x; p < pairs; p += stride) {
        if (!mask[p]) continue;
        mask[p] = 0;
        const long long s = p / n;
        const int u = (int)(p - s * n);
        D* row = d + (Index)(first + s) * N;
        const D du = row[u];
        const int end = row_ptr[u + 1];
        for (int e = row_ptr[u]; e < end; ++e) {
            const int2 vw = adj[e];
            const D candidate = du + (D)vw.y;
            if (candidate < row[vw.x] && atomicMin(&row[vw.x], candidate) > candidate) {
                next_mask[s * n + vw.x] = 1;
                any = 1;
            }
        }
    }
    if (any) *changed = 1;
}

// apsp_minplus_tiles on int16 entries, two per 32-bit word, with Hopper's DPX add-min on both
// halves at once (VIADDMNMX.S16x2): half the instructions of the int32 product per entry.
// Same tiles, modes and in-place rule as apsp_minplus_tiles; 128 threads per 128 x 128 tile,
// thread (ty, tx) = (t / 8, t % 8) owns rows 8 ty .. 8 ty + 7 and columns 16 tx .. 16 tx + 15
// (8 words), so each k costs 4 vector shared loads for 64 add-mins. A is staged transposed with
// each entry doubled into both halves of a word (the row's value meets two columns at once).
// Entries are <= Half<short>::inf = 0x3fff, so a sum fits a signed half (no wrap-around).
__device__ __forceinline__ unsigned doubled(unsigned short v) { return (unsigned)v | ((unsigned)v << 16); }

__device__ __forceinline__ unsigned add_min2(unsigned a, unsigned b, unsigned c) {
#if defined(__CUDACC_VER_MAJOR__) && __CUDACC_VER_MAJOR__ >= 12
    return __viaddmin_s16x2(a, b, c);
#else
    return __vmins2(__vadd2(a, b), c);
#endif
}

__global__ void __launch_bounds__(128) apsp_minplus_s16x2(short* C, const short* A, const short* B,
                                                         const short* init, int N, int kbegin, int kend, int mode,
                                                         int kb, int* changed) {
    __shared__ __align__(16) unsigned As[KC][TILE];      // As[k][row] = A[row][k] doubled
    __shared__ __align__(16) unsigned Bs[KC][TILE / 2];  // Bs[k][pair] = B[k][2 pair .. 2 pair + 1]
    int I, J;
    if (mode == 0) {
        if ((int)blockIdx.x == kb) return;
        I = blockIdx.y == 0 ? kb : (int)blockIdx.x;
        J = blockIdx.y == 0 ? (int)blockIdx.x : kb;
    } else {
        I = blockIdx.y;
        J = blockIdx.x;
        if (mode == 1 && (I == kb || J == kb)) return;
    }
    const int t = threadIdx.x, tx = t & 7, ty = t >> 3;
    const Index row0 = (Index)I * TILE, col0 = (Index)J * TILE;
    // 16 shorts = 2 uint4 per row segment; N and the tile origins are multiples of 128, so aligned
    unsigned acc[8][8];
#pragma unroll
    for (int r = 0; r < 8; ++r) {
        const uint4* at = reinterpret_cast<const uint4*>(init + (row0 + 8 * ty + r) * N + col0 + 16 * tx);
        const uint4 lo = at[0], hi = at[1];
        acc[r][0] = lo.x; acc[r][1] = lo.y; acc[r][2] = lo.z; acc[r][3] = lo.w;
        acc[r][4] = hi.x; acc[r][5] = hi.y; acc[r][6] = hi.z; acc[r][7] = hi.w;
    }
    // staging: thread t brings row t's KC = 16 k's of A (32 bytes) and a 16-column piece of B's
    // row k = t / 8 (32 bytes); the next chunk's are loaded while this one is computed
    uint4 next_a[2], next_b[2];
    {
        const uint4* a = reinterpret_cast<const uint4*>(A + (row0 + t) * N + kbegin);
        const uint4* b = reinterpret_cast<const uint4*>(B + (Index)(kbegin + (t >> 3)) * N + col0 + 16 * (t & 7));
        next_a[0] = a[0]; next_a[1] = a[1];
        next_b[0] = b[0]; next_b[1] = b[1];
    }
    for (int k0 = kbegin; k0 < kend; k0 += KC) {
        {
            const unsigned words[8] = {next_a[0].x, next_a[0].y, next_a[0].z, next_a[0].w,
                                       next_a[1].x, next_a[1].y, next_a[1].z, next_a[1].w};
#pragma unroll
            for (int w = 0; w < 8; ++w) {
                As[2 * w][t] = doubled((unsigned short)(words[w] & 0xffffu));
                As[2 * w + 1][t] = doubled((unsigned short)(words[w] >> 16));
            }
            uint4* b = reinterpret_cast<uint4*>(&Bs[t >> 3][8 * (t & 7)]);
            b[0] = next_b[0];
            b[1] = next_b[1];
        }
        __syncthreads();
        if (k0 + KC < kend) {
            const uint4* a = reinterpret_cast<const uint4*>(A + (row0 + t) * N + k0 + KC);
            const uint4* b =
                reinterpret_cast<const uint4*>(B + (Index)(k0 + KC + (t >> 3)) * N + col0 + 16 * (t & 7));
            next_a[0] = a[0]; next_a[1] = a[1];
            next_b[0] = b[0]; next_b[1] = b[1];
        }
#pragma unroll
        for (int k = 0; k < KC; ++k) {
            const uint4 a0 = *reinterpret_cast<const uint4*>(&As[k][8 * ty]);
            const uint4 a1 = *reinterpret_cast<const uint4*>(&As[k][8 * ty + 4]);
            const uint4 b0 = *reinterpret_cast<const uint4*>(&Bs[k][8 * tx]);
            const uint4 b1 = *reinterpret_cast<const uint4*>(&Bs[k][8 * tx + 4]);
            const unsigned a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            const unsigned b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
            for (int r = 0; r < 8; ++r)
#pragma unroll
                for (int w = 0; w < 8; ++w) acc[r][w] = add_min2(a[r], b[w], acc[r][w]);
        }
        __syncthreads();
    }
    int any = 0;
#pragma unroll
    for (int r = 0; r < 8; ++r) {
        const Index at = (row0 + 8 * ty + r) * N + col0 + 16 * tx;
        if (mode == 2) {
            const uint4* before = reinterpret_cast<const uint4*>(init + at);
            const uint4 lo = before[0], hi = before[1];
            const unsigned old[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
#pragma unroll
            for (int w = 0; w < 8; ++w) any |= __vcmpgts2(old[w], acc[r][w]) != 0;  // a half went down
        }
        uint4* out = reinterpret_cast<uint4*>(C + at);
        out[0] = make_uint4(acc[r][0], acc[r][1], acc[r][2], acc[r][3]);
        out[1] = make_uint4(acc[r][4], acc[r][5], acc[r][6], acc[r][7]);
    }
    if (any) *changed = 1;
}
