// PHAST-like queries on a contraction hierarchy: an upward search (one kernel),
// the core's distance matrix, then a downward sweep from the top level down.
// All arcs of one level are independent, so each level of the downward sweep is
// one kernel; gridDim.y runs several sources at once (row s of d is source s's).
//
// Every step exists for uint64 rows (INF 2^64-1) and, suffix _32, for uint32 rows
// (INF 2^32-1): half the bytes in the memory-bound sweep. A 32-bit step adds its
// candidates in 64 bits and drops one that does not fit below INF; a dropped one
// matters only while its node is still unreached (any smaller value, now or later,
// makes it moot), and then it sets *overflow, so the host redoes the query with
// 64-bit rows. Unset, the 32-bit rows hold exactly the 64-bit ones.
typedef unsigned long long u64;
typedef unsigned int u32;
#define INF 0xFFFFFFFFFFFFFFFFull
#define NO_PATH 0x7FFFFFFFFFFFFFFFll

template <typename D>
__device__ __forceinline__ D unreached() { return ~D(0); }

// Whether candidate c fits a row of D below INF (always for 64-bit rows).
template <typename D>
__device__ __forceinline__ bool fits(u64 c) {
    return sizeof(D) == 8 || c < (u64)unreached<D>();
}

template <typename D>
__device__ __forceinline__ void init(D* d, int n, const int* sources) {
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n) return;
    D* ds = d + (size_t)blockIdx.y * n;
    ds[v] = (v == sources[blockIdx.y]) ? 0 : unreached<D>();
}

extern "C" __global__ void phast_init(u64* d, int n, const int* sources) {
    init(d, n, sources);
}

// Also clears the overflow flag: it is the first kernel of the captured query.
extern "C" __global__ void phast_init_32(u32* d, int n, const int* sources, int* overflow) {
    if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0) *overflow = 0;
    init(d, n, sources);
}

// Relax arcs [begin, end) of one level: tails are final, heads are in other levels.
// The narrow form reads int32 ends and uint32 costs (12 bytes an arc, not 24: the
// sweep is bound by memory); the wide one serves hierarchies whose costs pass 2^32.
template <typename Node, typename Cost, typename D>
__device__ __forceinline__ void relax(const Node* __restrict__ tail,
                                      const Node* __restrict__ head,
                                      const Cost* __restrict__ w, int begin, int end,
                                      D* d, int n, int* overflow) {
    int a = begin + blockIdx.x * blockDim.x + threadIdx.x;
    if (a >= end) return;
    D* ds = d + (size_t)blockIdx.y * n;
    D du = ds[tail[a]];
    if (du == unreached<D>()) return;
    u64 cand = (u64)du + (u64)w[a];
    D now = ds[head[a]];
    if (cand < (u64)now) atomicMin(ds + head[a], (D)cand);   // below now <= INF: fits
    else if (!fits<D>(cand) && now == unreached<D>()) *overflow = 1;
}

extern "C" __global__ void phast_relax(const long long* __restrict__ tail,
                                       const long long* __restrict__ head,
                                       const long long* __restrict__ w, int begin, int end,
                                       u64* d, int n) {
    relax(tail, head, w, begin, end, d, n, nullptr);
}

extern "C" __global__ void phast_relax_narrow(const int* __restrict__ tail,
                                              const int* __restrict__ head,
                                              const unsigned* __restrict__ w, int begin,
                                              int end, u64* d, int n) {
    relax(tail, head, w, begin, end, d, n, nullptr);
}

extern "C" __global__ void phast_relax_32(const long long* __restrict__ tail,
                                          const long long* __restrict__ head,
                                          const long long* __restrict__ w, int begin, int end,
                                          u32* d, int n, int* overflow) {
    relax(tail, head, w, begin, end, d, n, overflow);
}

extern "C" __global__ void phast_relax_narrow_32(const int* __restrict__ tail,
                                                 const int* __restrict__ head,
                                                 const unsigned* __restrict__ w, int begin,
                                                 int end, u32* d, int n, int* overflow) {
    relax(tail, head, w, begin, end, d, n, overflow);
}

// The whole upward sweep as one block per source (grid (1, sources)). Only the
// nodes the upward search reaches take part: each is appended, when first
// reached, to the bucket of its level (bucket L is scratch[level_start[L] ..], with
// room for every node of level L), and buckets are processed lowest level first,
// a warp per node and its lanes over the node's up arcs. Every up arc goes to a
// higher level, so a node's distance is final when its level comes. Bucket
// `levels` ends up holding the core nodes reached, for phast_core_reached.
#define PHAST_UP_THREADS 1024
template <typename D>
__device__ __forceinline__ void up_search(
        const long long* __restrict__ up_begin, const long long* __restrict__ up_end,
        const long long* __restrict__ up_head, const long long* __restrict__ up_w,
        const int* __restrict__ node_level, int levels,
        const long long* __restrict__ level_start, int n, const int* sources, D* d,
        int* scratch, int* bucket_size, int* overflow) {
    const int s = blockIdx.y;
    D* ds = d + (size_t)s * n;
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
            const D dv = __ldcg(ds + v);     // set by atomics (L2); skip a stale L1 line
            for (long long a = up_begin[v] + lane; a < up_end[v]; a += 32) {
                const int h = (int)up_head[a];
                const u64 cand = (u64)dv + (u64)up_w[a];
                if (!fits<D>(cand)) {        // dropped: only an unreached head needs it
                    if (__ldcg(ds + h) == unreached<D>()) *overflow = 1;
                    continue;
                }
                if (atomicMin(ds + h, (D)cand) == unreached<D>()) {
                    const int lh = node_level[h];
                    bucket[level_start[lh] + atomicAdd(size + lh, 1)] = h;
                }
            }
        }
        __syncthreads();
    }
}

extern "C" __global__ void __launch_bounds__(PHAST_UP_THREADS)
phast_up_search(const long long* __restrict__ up_begin, const long long* __restrict__ up_end,
                const long long* __restrict__ up_head, const long long* __restrict__ up_w,
                const int* __restrict__ node_level, int levels,
                const long long* __restrict__ level_start, int n, const int* sources, u64* d,
                int* scratch, int* bucket_size) {
    up_search(up_begin, up_end, up_head, up_w, node_level, levels, level_start, n, sources,
              d, scratch, bucket_size, nullptr);
}

extern "C" __global__ void __launch_bounds__(PHAST_UP_THREADS)
phast_up_search_32(const long long* __restrict__ up_begin, const long long* __restrict__ up_end,
                   const long long* __restrict__ up_head, const long long* __restrict__ up_w,
                   const int* __restrict__ node_level, int levels,
                   const long long* __restrict__ level_start, int n, const int* sources, u32* d,
                   int* scratch, int* bucket_size, int* overflow) {
    up_search(up_begin, up_end, up_head, up_w, node_level, levels, level_start, n, sources,
              d, scratch, bucket_size, overflow);
}

// d[core[j]] = min over the reached core nodes v of d[v] + D[index(v)][j]. A value
// another thread lowers meanwhile is still a path length and D is closed under
// concatenation, so reading it early or late gives the same minimum. The block first
// stages the reached nodes' (row, distance) in shared memory, so the loop over them
// issues one independent load of D per node rather than a chain of four. A 32-bit
// thread flags only when its node ends unreached after dropping a candidate.
#define PHAST_CORE_TILE 512
template <typename D>
__device__ __forceinline__ void core_reached(D* d, int n, const long long* core, int k,
                                             const int* core_index, const int* scratch,
                                             long long core_start, const int* bucket_size,
                                             int levels, const long long* __restrict__ Dm,
                                             int* overflow) {
    __shared__ int row[PHAST_CORE_TILE];
    __shared__ D dist[PHAST_CORE_TILE];
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const int s = blockIdx.y;
    D* ds = d + (size_t)s * n;
    const int* nodes = scratch + (size_t)s * n + core_start;
    const int found = bucket_size[(size_t)s * (levels + 1) + levels];
    D best = j < k ? ds[core[j]] : unreached<D>();
    bool dropped = false;
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
                const long long dij = Dm[(size_t)row[c] * k + j];
                if (dij == NO_PATH) continue;
                const u64 cand = (u64)dist[c] + (u64)dij;
                if (cand < (u64)best) best = (D)cand;      // below best <= INF: fits
                else dropped |= !fits<D>(cand);
            }
    }
    if (j < k) {
        ds[core[j]] = best;
        if (dropped && best == unreached<D>()) *overflow = 1;
    }
}

extern "C" __global__ void phast_core_reached(u64* d, int n, const long long* core, int k,
                                              const int* core_index, const int* scratch,
                                              long long core_start, const int* bucket_size,
                                              int levels, const long long* __restrict__ D) {
    core_reached(d, n, core, k, core_index, scratch, core_start, bucket_size, levels, D,
                 nullptr);
}

extern "C" __global__ void phast_core_reached_32(u32* d, int n, const long long* core, int k,
                                                 const int* core_index, const int* scratch,
                                                 long long core_start, const int* bucket_size,
                                                 int levels, const long long* __restrict__ D,
                                                 int* overflow) {
    core_reached(d, n, core, k, core_index, scratch, core_start, bucket_size, levels, D,
                 overflow);
}

// One tree's 32-bit rows (numbered by level) back to node order, widened in the same
// pass: out[s][v] = d[s][rank[v]], -1 where unreached (PhastTree's int64 distances).
extern "C" __global__ void phast_gather_32(const u32* __restrict__ d,
                                           const int* __restrict__ rank, int n,
                                           long long* __restrict__ out) {
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n) return;
    const u32 dv = d[(size_t)blockIdx.y * n + rank[v]];
    out[(size_t)blockIdx.y * n + v] = dv == unreached<u32>() ? -1ll : (long long)dv;
}
