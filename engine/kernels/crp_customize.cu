// CRP customization by Bellman-Ford (engine/crp/customization/gpu.py), after Delling,
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
// subcell's entries, engine.crp.customization.layout.dirty_groups; -1: always), which
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

// ------------------------------------------------------------------ min-plus variant
// Level l > 0 as min-plus products (engine.crp.customization.layout.minplus_layout). A
// cell's rows are its subcells' entries, slot by slot, then its exits; a row holds
// one distance per entry of the block's batch. In a round, every slot whose rows
// changed multiplies the rows that changed in the round before (a bit per row: rows
// unchanged since their last product add nothing, so the work follows the frontier,
// as in near-far, not rounds x rows) by its subcell's matrix in S_{l-1} (read in
// place: no mapping), and each column keeps the smaller value in the row it leads to.
// Each thread computes KT entries x TJ columns, so a loaded weight serves KT sums and
// a loaded distance TJ; it finds the changed rows 32 bits at a time and loads the
// weights of U of them before using any (block shapes: layout.minplus_shape).
// Sums are unsigned: two values <= 2^31-1
// never wrap, and a sum >= FORBIDDEN is "no way"; an overflow (a finite sum >=
// FORBIDDEN on the final rows) is ruled out by max row + max weight < FORBIDDEN,
// else checked exactly.

#define TJ 4

// stats[2] = the largest finite value of weights[0..n) (the level below's S)
extern "C" __global__ void finite_max(const int* __restrict__ weights, long long n,
                                      int* __restrict__ out) {
    int best = 0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        int w = weights[i];
        if (w != FORBIDDEN && w > best) best = w;
    }
    for (int o = 16; o > 0; o >>= 1) best = max(best, __shfl_xor_sync(0xffffffffu, best, o));
    if ((threadIdx.x & 31) == 0 && best > 0) atomicMax(out, best);
}

struct Slots {          // per slot of the block's cell, in shared memory
    long long* weights; // offset of the subcell's matrix in S_{l-1}
    int* row;           // first row
    int* nin;           // rows (the subcell's entries)
    int* nout;          // columns (its exits)
    int* exit;          // its first exit in the level below's exit list
    int* task_first;    // [slots + 1] tasks of this round
    unsigned* now;      // a bit per row: changed in the round before (read this round)
    unsigned* next;     // a bit per row: changed in this round
    int every_row;      // 1: multiply every row of a changed slot (the rule before)
};

// The first row in [row, end) whose bit is set (end if none): a task skips the rows
// that did not change 32 at a time.
__device__ __forceinline__ int next_row(const unsigned* bits, int row, int end) {
    while (row < end) {
        const unsigned w = bits[row >> 5] >> (row & 31);
        if (w) return min(row + __ffs(w) - 1, end);
        row = (row | 31) + 1;
    }
    return end;
}

// Task t of slot s: entries [k0, k0 + KT) x exits [j0, j0 + TJ). It takes the rows
// that changed in the round before U at a time and loads the weights of all U before
// using any, so it waits for one memory round trip per U rows, not per row.
template <int KT, int U>
__device__ __forceinline__ void minplus_task(int t, int s, const Slots& sl, int* D, int stride,
                                             int nb, const int* __restrict__ W,
                                             const int* __restrict__ exit_row,
                                             const signed char* __restrict__ exit_slot,
                                             int& changed, unsigned long long& marks) {
    const int nout = sl.nout[s], ntj = (nout + TJ - 1) / TJ, local = t - sl.task_first[s];
    const int kt = local / ntj, j0 = (local - kt * ntj) * TJ, k0 = kt * KT;
    const int nin = sl.nin[s], jn = min(TJ, nout - j0);
    const int* w = W + sl.weights[s] + j0;
    const int row0 = sl.row[s], end = row0 + nin;
    const int* d = D + k0;
    unsigned acc[KT][TJ];
#pragma unroll
    for (int a = 0; a < KT; ++a)
#pragma unroll
        for (int b = 0; b < TJ; ++b) acc[a][b] = FORBIDDEN;
    int r = sl.every_row ? row0 : next_row(sl.now, row0, end);
    while (r < end) {
        int rows[U];
        bool live[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {      // the next U changed rows, if reached
            rows[u] = r;
            live[u] = r < end;
            if (live[u]) {
                unsigned all = FORBIDDEN;
#pragma unroll
                for (int a = 0; a < KT; a += 4) {
                    int4 q = *reinterpret_cast<const int4*>(d + r * stride + a);
                    all &= (unsigned)q.x & (unsigned)q.y & (unsigned)q.z & (unsigned)q.w;
                }
                live[u] = all != FORBIDDEN;
                r = sl.every_row ? r + 1 : next_row(sl.now, r + 1, end);
            }
        }
        unsigned wv[U][TJ];
#pragma unroll
        for (int u = 0; u < U; ++u)
#pragma unroll
            for (int b = 0; b < TJ; ++b)
                wv[u][b] = live[u] && b < jn
                    ? (unsigned)__ldg(w + (long long)(rows[u] - row0) * nout + b) : FORBIDDEN;
#pragma unroll
        for (int u = 0; u < U; ++u) {
            if (!live[u]) continue;
            unsigned dv[KT];
#pragma unroll
            for (int a = 0; a < KT; a += 4) {
                int4 q = *reinterpret_cast<const int4*>(d + rows[u] * stride + a);
                dv[a] = q.x; dv[a + 1] = q.y; dv[a + 2] = q.z; dv[a + 3] = q.w;
            }
#pragma unroll
            for (int a = 0; a < KT; ++a)
#pragma unroll
                for (int b = 0; b < TJ; ++b) acc[a][b] = min(acc[a][b], dv[a] + wv[u][b]);
        }
    }
    const int x0 = sl.exit[s] + j0;
#pragma unroll
    for (int b = 0; b < TJ; ++b) {
        if (b >= jn) break;
        const int r = exit_row[x0 + b];
        int* dst = D + r * stride + k0;
        const int g = exit_slot[x0 + b];
        bool improved = false;
#pragma unroll
        for (int a = 0; a < KT; ++a) {
            unsigned v = min(acc[a][b], (unsigned)FORBIDDEN);
            if (k0 + a < nb && v < (unsigned)dst[a]) {
                dst[a] = (int)v;
                improved = true;
            }
        }
        if (improved) {
            changed = 1;
            if (g >= 0) marks |= 1ULL << g;
            atomicOr(sl.next + (r >> 5), 1u << (r & 31));
        }
    }
}

// Exact overflow test on the final rows (rare: only when the bound above fails).
__device__ int minplus_overflow(int ns, const Slots& sl, const int* D, int stride, int nb,
                                const int* __restrict__ W) {
    int ovf = 0;
    for (int s = 0; s < ns; ++s) {
        const int nin = sl.nin[s], nout = sl.nout[s];
        const long long n = (long long)nin * nout * nb;
        for (long long q = threadIdx.x; q < n; q += blockDim.x) {
            int k = (int)(q % nb), ij = (int)(q / nb), i = ij / nout, j = ij - i * nout;
            int du = D[(sl.row[s] + i) * stride + k], w = W[sl.weights[s] + ij];
            if (du != FORBIDDEN && w != FORBIDDEN && (long long)du + w >= FORBIDDEN) ovf = 1;
        }
    }
    return ovf;
}

template <int KT, int U>
__device__ void bf_minplus(const int* __restrict__ block_cell, const int* __restrict__ block_entry,
                           const int* __restrict__ vertex_first, const int* __restrict__ entry_first,
                           const int* __restrict__ exit_first,
                           const long long* __restrict__ clique_first,
                           const int* __restrict__ slot_first, const int* __restrict__ slot_cell,
                           const int* __restrict__ slot_row,
                           const int* __restrict__ below_entry_first,
                           const int* __restrict__ below_exit_first,
                           const long long* __restrict__ below_clique_first,
                           const int* __restrict__ exit_row,
                           const signed char* __restrict__ exit_slot,
                           const int* __restrict__ entry_row,
                           const signed char* __restrict__ entry_slot,
                           int batch, int stride, int max_slots, int every_row,
                           const int* __restrict__ W, int* __restrict__ S, int* stats) {
    extern __shared__ __align__(16) int smem[];
    __shared__ unsigned long long dirty;
    __shared__ unsigned row_max;
    const int c = block_cell[blockIdx.x], e0 = block_entry[blockIdx.x];
    const int nv = vertex_first[c + 1] - vertex_first[c];
    const int ne = entry_first[c + 1] - entry_first[c], nx = exit_first[c + 1] - exit_first[c];
    const int nb = min(batch, ne - e0), s0 = slot_first[c], ns = slot_first[c + 1] - s0;
    int* D = smem;                                                   // [nv][stride]
    Slots sl;
    sl.weights = reinterpret_cast<long long*>(smem + nv * stride);  // 16-byte aligned
    sl.row = reinterpret_cast<int*>(sl.weights + max_slots);
    sl.nin = sl.row + max_slots;
    sl.nout = sl.nin + max_slots;
    sl.exit = sl.nout + max_slots;
    sl.task_first = sl.exit + max_slots;
    const int words = (nv + 31) >> 5;
    sl.now = reinterpret_cast<unsigned*>(sl.task_first + max_slots + 1);
    sl.next = sl.now + words;
    sl.every_row = every_row;
    for (int p = threadIdx.x; p < nv * stride; p += blockDim.x) D[p] = FORBIDDEN;
    for (int p = threadIdx.x; p < 2 * words; p += blockDim.x) sl.now[p] = 0;
    for (int s = threadIdx.x; s < ns; s += blockDim.x) {
        const int a = slot_cell[s0 + s];
        sl.weights[s] = below_clique_first[a];
        sl.row[s] = slot_row[s0 + s];
        sl.nin[s] = below_entry_first[a + 1] - below_entry_first[a];
        sl.nout[s] = below_exit_first[a + 1] - below_exit_first[a];
        sl.exit[s] = below_exit_first[a];
    }
    if (threadIdx.x == 0) { dirty = 0; row_max = 0; }
    __syncthreads();
    for (int k = threadIdx.x; k < nb; k += blockDim.x) {             // injection
        const int x = entry_first[c] + e0 + k, g = entry_slot[x], r = entry_row[x];
        D[r * stride + k] = 0;
        atomicOr(sl.now + (r >> 5), 1u << (r & 31));
        if (g >= 0) atomicOr(&dirty, 1ULL << g);
    }
    __syncthreads();
    const int ktiles = (nb + KT - 1) / KT;
    int rounds = 0, changed;
    do {                                                             // search
        if (threadIdx.x == 0) {     // this round's tasks: the slots whose rows changed
            const unsigned long long m = dirty;
            dirty = 0;
            int n = 0;
            for (int s = 0; s < ns; ++s) {
                sl.task_first[s] = n;
                if (s >= 64 || ((m >> s) & 1ULL)) n += ktiles * ((sl.nout[s] + TJ - 1) / TJ);
            }
            sl.task_first[ns] = n;
        }
        __syncthreads();
        changed = 0;
        unsigned long long marks = 0;
        const int total = sl.task_first[ns];
        for (int t = threadIdx.x; t < total; t += blockDim.x) {
            int lo = 0, hi = ns - 1;                 // the slot of task t
            while (lo < hi) {
                int mid = (lo + hi + 1) >> 1;
                if (sl.task_first[mid] <= t) lo = mid; else hi = mid - 1;
            }
            minplus_task<KT, U>(t, lo, sl, D, stride, nb, W, exit_row, exit_slot, changed, marks);
        }
        if (marks) atomicOr(&dirty, marks);
        changed = __syncthreads_or(changed);
        for (int p = threadIdx.x; p < words; p += blockDim.x) {   // next round's rows
            sl.now[p] = sl.next[p];
            sl.next[p] = 0;
        }
        __syncthreads();
        ++rounds;
    } while (changed);
    unsigned mx = 0;                 // overflow: bound first, exact test if it fails
    for (int p = threadIdx.x; p < nv * stride; p += blockDim.x)
        if (D[p] != FORBIDDEN) mx = max(mx, (unsigned)D[p]);
    if (mx) atomicMax(&row_max, mx);
    __syncthreads();
    if ((long long)row_max + stats[2] >= FORBIDDEN &&
        __syncthreads_or(minplus_overflow(ns, sl, D, stride, nb, W)) && threadIdx.x == 0)
        atomicOr(stats, 1);
    if (threadIdx.x == 0) atomicMax(stats + 1, rounds);
    const long long base = clique_first[c] + (long long)e0 * nx;    // collection
    for (int q = threadIdx.x; q < nb * nx; q += blockDim.x) {
        int k = q / nx, j = q - k * nx;
        S[base + q] = D[(nv - nx + j) * stride + k];
    }
}

#define MINPLUS_ENTRY(NAME, KT, U)                                                           \
extern "C" __global__ void NAME(                                                             \
        const int* block_cell, const int* block_entry, const int* vertex_first,              \
        const int* entry_first, const int* exit_first, const long long* clique_first,       \
        const int* slot_first, const int* slot_cell, const int* slot_row,                    \
        const int* below_entry_first, const int* below_exit_first,                           \
        const long long* below_clique_first, const int* exit_row,                            \
        const signed char* exit_slot, const int* entry_row, const signed char* entry_slot,   \
        int batch, int stride, int max_slots, int every_row, const int* W, int* S,           \
        int* stats) {                                                                        \
    bf_minplus<KT, U>(block_cell, block_entry, vertex_first, entry_first, exit_first,        \
                      clique_first, slot_first, slot_cell, slot_row, below_entry_first,      \
                      below_exit_first, below_clique_first, exit_row, exit_slot, entry_row,  \
                      entry_slot, batch, stride, max_slots, every_row, W, S, stats);         \
}
MINPLUS_ENTRY(bf_minplus_k4, 4, 1)
MINPLUS_ENTRY(bf_minplus_k8, 8, 1)
MINPLUS_ENTRY(bf_minplus_k4_u4, 4, 4)
MINPLUS_ENTRY(bf_minplus_k8_u4, 8, 4)
MINPLUS_ENTRY(bf_minplus_k8_u8, 8, 8)
MINPLUS_ENTRY(bf_minplus_k4_u8, 4, 8)
