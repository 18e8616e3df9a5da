// PHAST-like queries on a contraction hierarchy: an upward sweep level by level,
// the core's distance matrix, then a downward sweep from the top level down.
// All nodes (arcs) of one level are independent, so each level is one kernel;
// gridDim.y runs several sources at once (row s of d belongs to source s).
typedef unsigned long long u64;
#define INF 0xFFFFFFFFFFFFFFFFull
#define NO_PATH 0x7FFFFFFFFFFFFFFFll

extern "C" __global__ void phast_init(u64* d, int n, const int* sources) {
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n) return;
    u64* ds = d + (size_t)blockIdx.y * n;
    ds[v] = (v == sources[blockIdx.y]) ? 0 : INF;
}

// Relax arcs [begin, end) of one level: tails are final, heads are in other levels.
extern "C" __global__ void phast_relax(const long long* __restrict__ tail,
                                       const long long* __restrict__ head,
                                       const long long* __restrict__ w, int begin, int end,
                                       u64* d, int n) {
    int a = begin + blockIdx.x * blockDim.x + threadIdx.x;
    if (a >= end) return;
    u64* ds = d + (size_t)blockIdx.y * n;
    u64 du = ds[tail[a]];
    if (du == INF) return;
    u64 cand = du + (u64)w[a];
    if (cand < ds[head[a]]) atomicMin(ds + head[a], cand);
}

extern "C" __global__ void phast_core_gather(const u64* d, int n, const long long* core, int k,
                                             u64* core_d) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < k) core_d[(size_t)blockIdx.y * k + i] = d[(size_t)blockIdx.y * n + core[i]];
}

// d[core[j]] = min_i core_d[i] + D[i][j]; threads of a warp read one row of D.
extern "C" __global__ void phast_core(u64* d, int n, const long long* core, int k,
                                      const u64* core_d, const long long* __restrict__ D) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= k) return;
    const u64* cd = core_d + (size_t)blockIdx.y * k;
    u64* ds = d + (size_t)blockIdx.y * n;
    u64 best = ds[core[j]];
    for (int i = 0; i < k; ++i) {
        u64 di = cd[i];
        long long dij = D[(size_t)i * k + j];
        if (di != INF && dij != NO_PATH && di + (u64)dij < best) best = di + (u64)dij;
    }
    ds[core[j]] = best;
}
