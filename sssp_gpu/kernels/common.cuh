// Shared by every kernel: distance types, INF, the saturating add, warp geometry.
#pragma once

template <typename D> struct Limits;
template <> struct Limits<int> { static constexpr int inf = 0x7fffffff; };
template <> struct Limits<long long> { static constexpr long long inf = 0x7fffffffffffffffLL; };

// du + w, clamped at INF (w >= 0 is checked when the graph is loaded). Callers skip du == INF.
template <typename D>
__device__ __forceinline__ D saturating_add(D du, int w) {
    return du > Limits<D>::inf - (D)w ? Limits<D>::inf : du + (D)w;
}

struct WarpRange {
    long long beg, end;  // this warp's slice of the list, Listing 2 lines 3-5
    int lane, warp;
};

// Listing 2: the list is split evenly among all warps of the grid (load rounded up).
__device__ __forceinline__ WarpRange warp_range(long long length) {
    WarpRange r;
    const long long thread = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long warps = ((long long)gridDim.x * blockDim.x) >> 5;
    r.warp = (int)(thread >> 5);
    r.lane = (int)(thread & 31);
    const long long load = (length + warps - 1) / warps;
    r.beg = load * r.warp;
    r.end = min(length, r.beg + load);
    return r;
}

__device__ __forceinline__ unsigned lanes_below(int lane) { return (1u << lane) - 1u; }
