// PHAST-like queries on a contraction hierarchy: an upward search (one kernel),
// the core's distance matrix, then a downward sweep from the top level down.
// All arcs of one level are independent, so each level of the downward sweep is
// one kernel; gridDim.y runs several sources at once (row s of d is source s's).
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
// The narrow form reads int32 ends and uint32 costs (12 bytes an arc, not 24: the
// sweep is bound by memory); the wide one serves hierarchies whose costs pass 2^32.
template <typename Node, typename Cost>
__device__ __forceinline__ void relax(const Node* __restrict__ tail,
                                      const Node* __restrict__ head,
                                      const Cost* __restrict__ w, int begin, int end,
                                      u64* d, int n) {
    int a = begin + blockIdx.x * blockDim.x + threadIdx.x;
    if (a >= end) return;
    u64* ds = d + (size_t)blockIdx.y * n;
    u64 du = ds[tail[a]];
    if (du == INF) return;
    u64 cand = du + (u64)w[a];
    if (cand < ds[head[a]]) atomicMin(ds + head[a], cand);
}

extern "C" __global__ void phast_relax(const long long* __restrict__ tail,
                                       const long long* __restrict__ head,
                                       const long long* __restrict__ w, int begin, int end,
                                       u64* d, int n) {
    relax(tail, head, w, begin, end, d, n);
}

extern "C" __global__ void phast_relax_narrow(const int* __restrict__ tail,
                                              const int* __restrict__ head,
                                              const unsigned* __restrict__ w, int begin,
                                              int end, u64* d, int n) {
    relax(tail, head, w, begin, end, d, n);
}

// The whole upward sweep as one block per source (grid (1, sources)). Only the
// nodes the upward search reaches take part: each is appended, when first
// reached, to the bucket of its level (bucket L is scratch[level_start[L] ..], with
// room for every node of level L), and buckets are processed lowest level first,
// a warp per node and its lanes over the node's up arcs. Every up arc goes to a
// higher level, so a node's distance is final when its level comes. Bucket
// `levels` ends up holding the core nodes reached, for phast_core_reached.
#define PHAST_UP_THREADS 1024
extern "C" __global__ void __launch_bounds__(PHAST_UP_THREADS)
phast_up_search(const long long* __restrict__ up_begin, const long long* __restrict__ up_end,
                const long long* __restrict__ up_head, const long long* __restrict__ up_w,
                const int* __restrict__ node_level, int levels,
                const long long* __restrict__ level_start, int n, const int* sources, u64* d,
                int* scratch, int* bucket_size) {
    const int s = blockIdx.y;
    u64* ds = d + (size_t)s * n;
    int* bucket = scratch + (size_t)s * n;
    int* size = bucket_size + (size_t)s * (levels + 1);
    const int source = sources[s];
    for (int l = threadIdx.x; l <= levels; l += blockDim.x) size[l] = 0;
    __syncthreads();
    if (threadIdx.x == 0) {
        bucket[level_start[node_level[source]]] = source;
        size[node_level[source]] = 1;
    }
    __syncthreads();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    for (int level = node_level[source]; level < levels; ++level) {
        const int known = size[level];
        const int* nodes = bucket + level_start[level];
        for (int i = warp; i < known; i += warps) {
            const int v = nodes[i];
            const u64 dv = __ldcg(ds + v);   // set by atomics (L2); skip a stale L1 line
            for (long long a = up_begin[v] + lane; a < up_end[v]; a += 32) {
                const int h = (int)up_head[a];
                if (atomicMin(ds + h, dv + (u64)up_w[a]) == INF) {
                    const int lh = node_level[h];
                    bucket[level_start[lh] + atomicAdd(size + lh, 1)] = h;
                }
            }
        }
        __syncthreads();
    }
}

// d[core[j]] = min over the reached core nodes v of d[v] + D[index(v)][j]. A value
// another thread lowers meanwhile is still a path length and D is closed under
// concatenation, so reading it early or late gives the same minimum. The block first
// stages the reached nodes' (row, distance) in shared memory, so the loop over them
// issues one independent load of D per node rather than a chain of four.
#define PHAST_CORE_TILE 512
extern "C" __global__ void phast_core_reached(u64* d, int n, const long long* core, int k,
                                              const int* core_index, const int* scratch,
                                              long long core_start, const int* bucket_size,
                                              int levels, const long long* __restrict__ D) {
    __shared__ int row[PHAST_CORE_TILE];
    __shared__ u64 dist[PHAST_CORE_TILE];
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const int s = blockIdx.y;
    u64* ds = d + (size_t)s * n;
    const int* nodes = scratch + (size_t)s * n + core_start;
    const int found = bucket_size[(size_t)s * (levels + 1) + levels];
    u64 best = j < k ? ds[core[j]] : INF;
    for (int c0 = 0; c0 < found; c0 += PHAST_CORE_TILE) {
        const int tile = min(PHAST_CORE_TILE, found - c0);
        __syncthreads();
        for (int c = threadIdx.x; c < tile; c += blockDim.x) {
            const int v = nodes[c0 + c];
            row[c] = core_index[v];
            dist[c] = ds[v];
        }
        __syncthreads();
        if (j < k)
            for (int c = 0; c < tile; ++c) {
                const long long dij = D[(size_t)row[c] * k + j];
                if (dij != NO_PATH && dist[c] + (u64)dij < best) best = dist[c] + (u64)dij;
            }
    }
    if (j < k) ds[core[j]] = best;
}
