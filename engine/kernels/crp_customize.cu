// CRP customization by Bellman-Ford (engine/crp/customize_gpu.py), after Delling,
// Kobitzsch and Werneck, "Customizing Driving Directions with GPUs".
// A level is costed in phases: mapping (gather each in-edge's cost from the level
// below), injection (entry r at 0, all else FORBIDDEN), search (pull rounds until no
// distance changes) and collection (exit distances into S_l).
// Pull: d[v][r] = min over in-edges (u, w) of d[u][r] + w, one writer per distance.
// Sums are 64-bit; a finite sum >= FORBIDDEN is an overflow (as the CPU Dijkstra
// says), judged in the last round only, when every distance is final.

#define FORBIDDEN 2147483647


// Mapping: cost[i] = weights[index[i]] (the level's in-edges, contiguous). A negative
// weight is a decoder's error code, checked only after the run: it is read as "no
// way", so Bellman-Ford never meets a negative cycle and always ends.
extern "C" __global__ void gather_costs(const int* __restrict__ weights,
                                        const int* __restrict__ index,
                                        int* __restrict__ cost, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) {
        int w = weights[index[i]];
        cost[i] = w < 0 ? FORBIDDEN : w;
    }
}

// The best of ``cur`` and every in-edge of one vertex for entry column k of a
// [vertex][stride] distance matrix; ovf is set for a finite sum >= FORBIDDEN.
template <typename Dist>
__device__ __forceinline__ int pull(Dist dist, int stride, int k, int begin, int end,
                                    const int* __restrict__ in_from,
                                    const int* __restrict__ in_cost, int cur, int& ovf) {
    int best = cur;
    for (int i = begin; i < end; ++i) {
        int w = in_cost[i];
        int du = dist[in_from[i] * stride + k];     // a cell's matrix: < 2^31
        if (w == FORBIDDEN || du == FORBIDDEN) continue;
        long long nd = (long long)du + w;
        if (nd >= FORBIDDEN) { ovf = 1; continue; }
        if (nd < best) best = (int)nd;
    }
    return best;
}

// Local variant: one block per (cell, batch of entries), distances [vertex][entry]
// in shared memory, rounds inside the block until no thread changed anything.
// A vertex re-pulls only if the group it watches changed in the round before (a
// subcell's entries, engine.crp.customize_layout.dirty_groups; -1: always), which
// skips the settled parts of a cell. stats[0] |= overflow, stats[1] = max rounds.
// Collection writes the exits' rows.
extern "C" __global__ void bf_local(const int* __restrict__ block_cell,
                                    const int* __restrict__ block_entry,
                                    const int* __restrict__ vertex_first,
                                    const int* __restrict__ entry_first,
                                    const int* __restrict__ exit_first,
                                    const int* __restrict__ in_first,
                                    const int* __restrict__ in_from,
                                    const int* __restrict__ in_cost,
                                    const signed char* __restrict__ watch,
                                    const signed char* __restrict__ mark,
                                    const long long* __restrict__ clique_first,
                                    int batch, int* __restrict__ S, int* stats) {
    extern __shared__ int dist[];       // [vertex][entry of the batch], sized at launch
    __shared__ unsigned long long dirty, dirty_next;
    const int c = block_cell[blockIdx.x], e0 = block_entry[blockIdx.x];
    const int v0 = vertex_first[c], nv = vertex_first[c + 1] - v0;
    const int ne = entry_first[c + 1] - entry_first[c], nx = exit_first[c + 1] - exit_first[c];
    const int nb = min(batch, ne - e0), pairs = nv * nb;
    for (int p = threadIdx.x; p < pairs; p += blockDim.x) {        // injection
        int v = p / nb;
        dist[p] = (v == e0 + p - v * nb) ? 0 : FORBIDDEN;
    }
    if (threadIdx.x == 0) { dirty = ~0ULL; dirty_next = 0; }
    __syncthreads();
    const int* first = in_first + v0;
    int rounds = 0, ovf = 0, changed;
    do {                                                             // search
        changed = 0;
        unsigned long long marks = 0;
        for (int p = threadIdx.x; p < pairs; p += blockDim.x) {
            int v = p / nb, k = p - v * nb, g = watch[v0 + v];
            if (g >= 0 && !((dirty >> g) & 1ULL)) continue;
            int cur = dist[p];
            int best = pull(dist, nb, k, first[v], first[v + 1], in_from, in_cost, cur, ovf);
            if (best < cur) {
                dist[p] = best;
                changed = 1;
                int h = mark[v0 + v];
                if (h >= 0) marks |= 1ULL << h;
            }
        }
        if (marks) atomicOr(&dirty_next, marks);
        changed = __syncthreads_or(changed);
        if (threadIdx.x == 0) { dirty = dirty_next; dirty_next = 0; }
        __syncthreads();
        ++rounds;
    } while (changed);
    if (__syncthreads_or(ovf)) {        // rare: overflow counts only on the final distances
        ovf = 0;
        for (int p = threadIdx.x; p < pairs; p += blockDim.x) {
            int v = p / nb;
            pull(dist, nb, p - v * nb, first[v], first[v + 1], in_from, in_cost, dist[p], ovf);
        }
        if (ovf) atomicOr(stats, 1);
    }
    if (threadIdx.x == 0) atomicMax(stats + 1, rounds);
    const long long base = clique_first[c] + (long long)e0 * nx;   // collection
    for (int q = threadIdx.x; q < nb * nx; q += blockDim.x) {
        int k = q / nx, j = q - k * nx;
        S[base + q] = dist[(nv - nx + j) * nb + k];
    }
}

// The cell whose range [first[c], first[c+1]) holds x (last of equal offsets).
__device__ __forceinline__ int find_cell(const long long* __restrict__ first, int cells,
                                         long long x) {
    int lo = 0, hi = cells - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) >> 1;
        if (first[mid] <= x) lo = mid; else hi = mid - 1;
    }
    return lo;
}

// Global variant: one thread per distance of a [vertex][entry] matrix per cell in
// global memory (pair_first: offsets), one launch per round.
extern "C" __global__ void bf_global_init(const long long* __restrict__ pair_first, int cells,
                                          const int* __restrict__ entry_first,
                                          int* __restrict__ dist, long long pairs) {
    long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (t >= pairs) return;
    int c = find_cell(pair_first, cells, t);
    int ne = entry_first[c + 1] - entry_first[c];
    long long local = t - pair_first[c];
    dist[t] = (local / ne == local % ne) ? 0 : FORBIDDEN;
}

// Round ``round`` (flags[2 round] = changed, flags[2 round + 1] = overflow); a round
// after one that changed nothing returns at once, so the host launches rounds in
// batches and reads the flags once per batch.
extern "C" __global__ void bf_global_round(int round, const long long* __restrict__ pair_first,
                                           int cells, const int* __restrict__ vertex_first,
                                           const int* __restrict__ entry_first,
                                           const int* __restrict__ in_first,
                                           const int* __restrict__ in_from,
                                           const int* __restrict__ in_cost,
                                           int* dist, long long pairs,
                                           int* __restrict__ flags) {
    if (round > 0 && flags[2 * (round - 1)] == 0) return;
    long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (t >= pairs) return;
    int c = find_cell(pair_first, cells, t);
    int ne = entry_first[c + 1] - entry_first[c];
    long long base = pair_first[c];
    int local = (int)(t - base), v = local / ne, k = local - v * ne;
    int vg = vertex_first[c] + v, ovf = 0, cur = dist[t];
    // Other threads write during the round; any value read is a true upper bound,
    // so a stale read only delays convergence.
    const int* d = dist + base;
    int best = pull(d, ne, k, in_first[vg], in_first[vg + 1], in_from, in_cost, cur, ovf);
    if (best < cur) {
        dist[t] = best;
        if (flags[2 * round] == 0) flags[2 * round] = 1;
    }
    if (ovf && flags[2 * round + 1] == 0) flags[2 * round + 1] = 1;
}

// Collection: S[c][r][j] = distance of exit j (the cell's last nx vertices) for entry r.
extern "C" __global__ void bf_global_collect(const long long* __restrict__ clique_first,
                                             int cells, const long long* __restrict__ pair_first,
                                             const int* __restrict__ vertex_first,
                                             const int* __restrict__ entry_first,
                                             const int* __restrict__ exit_first,
                                             const int* __restrict__ dist,
                                             int* __restrict__ S, long long n) {
    long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (t >= n) return;
    int c = find_cell(clique_first, cells, t);
    int ne = entry_first[c + 1] - entry_first[c], nx = exit_first[c + 1] - exit_first[c];
    int nv = vertex_first[c + 1] - vertex_first[c];
    int q = (int)(t - clique_first[c]), r = q / nx, j = q - r * nx;
    S[t] = dist[pair_first[c] + (long long)(nv - nx + j) * ne + r];
}
