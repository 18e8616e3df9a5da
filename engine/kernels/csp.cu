// Cost-budgeted paths on the GPU: Vine's parallel labeling (Lu et al., PVLDB 14(4))
// with RouteLab's exact bounds. The CPU twin of every kernel is in engine/csp/.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

typedef long long i64;
typedef unsigned long long u64;
#define INF64 0x7fffffffffffffffLL
#define U64_INF 0xffffffffffffffffULL

// ------------------------------------------------------------------ control block
// One int64 array shared by the host and every block (engine/csp/labeling/gpu.py names).
enum {
    STATUS, NEAR_N, CUR, COUNT, INCUMBENT, THRESHOLD, KT, ITER, NEXT_NEAR, FAR_N, FCUR, MODE,
    FBASE, FWIDTH, POOL, WITNESS, SRC_LB_L, SRC_LB_C, SRC_COST_ALONG, SRC_LEN_ALONG, FAR_MAX,
    NEXT_FAR, SPLITS,
    IT = 24,          // this iteration's counters (NSTAT of them), zeroed by the control step
    TOTAL = 40,       // their sums over the run
    CTL_SIZE = 56
};
enum { EXPAND, SPLIT };
enum { S_EXPANDED, S_CREATED, S_PRUNED_COST, S_PRUNED_LENGTH, S_PRUNED_HASH, S_PRUNED_LIST,
       S_DEAD, S_DROPPED, S_PRUNED_LAGRANGE, NSTAT };
enum { RUNNING, DONE, OUT_OF_LABELS, OUT_OF_LISTS, UNREACHABLE, OVER_BUDGET, BY_BOUNDS,
       ITERATION_LIMIT };
// flags
#define COMPLETE 1     // evaluate completions along the two bound trees (not Pareto, not Vine)
#define PARETO 2       // keep every non-dominated target label
#define ADAPTIVE 4     // K_t from the AR(6) forecast, else K_t = k_min

#define NBINS 2048     // key histogram of the next frontier (K_t selection)
#define HS 1024        // hash-pruning table entries per block (shared memory)
#define PROBES 8       // linear probing window
#define CH 8           // label ids per chunk of a vertex's non-dominated list
#define AR_P 6         // the AR model's order
#define AR_RING 64     // stored growth / pruning ratios
#define HCOLS 12       // history columns (engine/csp/labeling/gpu.py GPU_HISTORY)

// Loads of state that other blocks write during a pass bypass L1 (not coherent).
__device__ __forceinline__ i64 ld(const i64* p) { return __ldcg(p); }
__device__ __forceinline__ int ld(const int* p) { return __ldcg(p); }

__device__ __forceinline__ u64 globaltimer() {
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// ------------------------------------------------------------------ bounds trees
// From exact distances to the target (PHAST on the reversed graph, uint64, U64_INF
// unreached): lb as int64 (INF64 none), each node's first arc on a tight path to the
// target (a positive-weight tight arc first, then the least id), and the start of
// pointer jumping: ptr = that arc's head, along = the other metric on that arc.
extern "C" __global__ void csp_tree(const int* __restrict__ first_out,
                                    const int* __restrict__ head, const int* __restrict__ w,
                                    const int* __restrict__ other, const u64* __restrict__ d,
                                    int n, const int* target_at, i64* lb, int* next_arc,
                                    int* ptr, i64* along) {
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n) return;
    int target = *target_at;
    u64 dv = d[v];
    int best = -1;
    bool best_positive = false;
    if (dv != U64_INF && v != target) {
        for (int a = first_out[v]; a < first_out[v + 1]; ++a) {
            u64 du = d[head[a]];
            if (du == U64_INF || du + (u64)w[a] != dv) continue;
            bool positive = w[a] > 0;
            if (best < 0 || (positive && !best_positive)) { best = a; best_positive = positive; }
        }
    }
    lb[v] = dv == U64_INF ? INF64 : (i64)dv;
    next_arc[v] = best;
    ptr[v] = v == target ? target : (best >= 0 ? head[best] : -1);
    along[v] = v == target ? 0 : (best >= 0 ? (i64)other[best] : INF64);
}

// One round of pointer jumping: along(v) += along(ptr(v)), ptr(v) = ptr(ptr(v)). After
// ceil(log2 n) rounds every node whose tree path reaches the target points at it; a
// node on a cycle of zero-weight tight arcs never does and gets INF64 in csp_jump_end.
extern "C" __global__ void csp_jump(int n, const int* __restrict__ ptr_in,
                                    const i64* __restrict__ along_in, int* ptr_out,
                                    i64* along_out) {
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n) return;
    int p = ptr_in[v];
    i64 a = along_in[v];
    if (p < 0 || a == INF64) { ptr_out[v] = -1; along_out[v] = INF64; return; }
    int q = ptr_in[p];
    i64 b = along_in[p];
    ptr_out[v] = q;
    along_out[v] = (q < 0 || b == INF64) ? INF64 : a + b;
}

extern "C" __global__ void csp_jump_end(int n, const int* target_at,
                                        const int* __restrict__ ptr, i64* along) {
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v < n && ptr[v] != *target_at) along[v] = INF64;
}

// ------------------------------------------------------------------ start
// One thread: the answers the bounds settle, then label 0 (the source) in its list
// and in the near frontier.
extern "C" __global__ void csp_start(int n, int source, int target, i64 budget, int flags,
                                     const i64* __restrict__ exact_l, const i64* __restrict__ exact_c,
                                     const i64* __restrict__ cost_along,
                                     const i64* __restrict__ length_along,
                                     const i64* __restrict__ lb_l, int* lab_node, i64* lab_l,
                                     i64* lab_c, int* lab_parent, int* lab_arc, int* lab_dead,
                                     int* vhead, int* slots, i64* slot_l, i64* slot_c,
                                     int* chunk_next, int* near0,
                                     i64* ctl, i64 k_min, double mean_len) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    for (int i = 0; i < CTL_SIZE; ++i) ctl[i] = 0;
    ctl[SRC_LB_L] = exact_l[source];
    ctl[SRC_LB_C] = exact_c[source];
    ctl[SRC_COST_ALONG] = cost_along[source];
    ctl[SRC_LEN_ALONG] = length_along[source];
    ctl[WITNESS] = INF64;
    ctl[INCUMBENT] = INF64;
    ctl[KT] = k_min;
    if (exact_l[source] == INF64) { ctl[STATUS] = UNREACHABLE; return; }
    if (exact_c[source] > budget) { ctl[STATUS] = OVER_BUDGET; return; }
    if (!(flags & PARETO) && cost_along[source] <= budget) { ctl[STATUS] = BY_BOUNDS; return; }
    lab_node[0] = source; lab_l[0] = 0; lab_c[0] = 0; lab_parent[0] = -1; lab_arc[0] = -1;
    lab_dead[0] = 0;
    vhead[source] = source;                      // a vertex's first chunk is its own
    slots[source * CH] = 0; slot_l[source * CH] = 0; slot_c[source * CH] = 0;
    for (int j = 1; j < CH; ++j) slots[source * CH + j] = -1;
    chunk_next[source] = -1;
    ctl[POOL] = n;                               // later chunks come after the n first ones
    ctl[COUNT] = 1;
    if ((flags & COMPLETE) && length_along[source] != INF64) ctl[INCUMBENT] = length_along[source];
    if (source == target) {                      // only without completions: (0, 0) is it
        ctl[INCUMBENT] = 0;
        ctl[STATUS] = DONE;
        return;
    }
    near0[0] = 0;
    ctl[NEAR_N] = 1;
    ctl[MODE] = EXPAND;
    // the first bucket: labels as long as the source's key (reduced cost 0); the far
    // histogram spans the key range up to the incumbent (or a guess without one)
    i64 key = lb_l[source], inc = ctl[INCUMBENT];
    ctl[THRESHOLD] = key;
    ctl[FBASE] = key + 1;
    i64 span = inc != INF64 ? inc - key : (i64)(mean_len * NBINS / 8);
    ctl[FWIDTH] = span / NBINS + 1;
}

// ------------------------------------------------------------------ labeling
struct Graph {
    const int* first_out; const int* head; const int* len; const int* cost;
};
// With lag_q > 0 also the Lagrangian bound (engine/csp/bounds/lagrangian.py): lag_d the
// distances to the target under lag_q * length + lag_p * cost, lag_cut = lag_q * upper.
// by_arc: lb_l, lb_c, cost_along and length_along per arc, at its head (by_arc[k * m + a]
// is the k-th at head[a]), so that a relaxation loads them beside the arc, not after
// its head; lb_l per node for the labels' own keys.
struct Bounds {
    const i64* lb_l; const i64* lag_d; i64 lag_p, lag_q, lag_cut;
    const i64* by_arc; i64 m;
};
struct Labels {
    int* node; i64* l; i64* c; int* parent; int* arc; int* dead; int capacity;
    int limit;        // labels this run may create (<= capacity): the run stops past it
};
// A vertex's list: chunks of CH entries, each a label id with its (l, c) inline, so
// that a scan loads a whole chunk at once instead of chasing ids into the labels.
// Chunk v is vertex v's first (vhead[v] is v, or -1 while its list is empty); later
// chunks come from the pool above the n first ones.
struct Lists {
    int* vhead; int* lock; int* slots; i64* l; i64* c; int* chunk_next; int pool_capacity;
};
// Where a pass puts labels: the near bucket (key <= threshold, expanded next) or the
// far pile (binned by key for the next split).
struct Out {
    int* near; int* far; i64* far_count; int* hist; i64* far_max; i64 fbase, fwidth, threshold;
};

__device__ __forceinline__ void grid_barrier(cg::grid_group& grid) {
    if (gridDim.x == 1) __syncthreads(); else grid.sync();
}

__device__ __forceinline__ void fence() {
    if (gridDim.x == 1) __threadfence_block(); else __threadfence();
}

// Append x to a frontier: one atomic per group of active lanes, their offsets a
// prefix sum of ones within the group (Vine's prefix-sum assembly).
__device__ __forceinline__ void append(int* queue, i64* count, int x) {
    cg::coalesced_group g = cg::coalesced_threads();
    int at = 0;
    if (g.thread_rank() == 0) at = (int)atomicAdd((u64*)count, (u64)g.size());
    at = g.shfl(at, 0) + g.thread_rank();
    queue[at] = x;
}

__device__ __forceinline__ void push(const Out& o, i64* ctl, int x, i64 key) {
    if (key <= o.threshold) { append(o.near, ctl + NEXT_NEAR, x); return; }
    append(o.far, o.far_count, x);
    i64 bin = key < o.fbase ? 0 : (key - o.fbase) / o.fwidth;
    atomicAdd(o.hist + (bin >= NBINS ? NBINS - 1 : bin), 1);   // the block's, in shared memory
    atomicMax(o.far_max, key);
}

// A vertex's lock, with acquire / release semantics on the operations themselves in
// place of a full fence on each side of a plain atomic (about 10 % of a NY query).
__device__ __forceinline__ bool lock_acquire(int* p) {
    int old, free_ = 0, held = 1;
    asm volatile("atom.acquire.gpu.global.cas.b32 %0, [%1], %2, %3;"
                 : "=r"(old) : "l"(p), "r"(free_), "r"(held) : "memory");
    return old == 0;
}

__device__ __forceinline__ void lock_release(int* p) {
    asm volatile("st.release.gpu.global.b32 [%0], %1;" :: "l"(p), "r"(0) : "memory");
}

// A candidate label against its vertex's non-dominated list, under the vertex's lock:
// dropped when a listed label dominates it (both l and c no larger); otherwise it is
// stored and the listed labels it dominates are marked dead and their slots reused
// (lazy: a dead label stays in the frontier and is skipped when reached).
// Returns the new label id, -1 if dominated, -2 if memory ran out.
__device__ int insert_label(const Labels& L, const Lists& S, i64* ctl, int w, i64 nl, i64 nc,
                            int parent, int arc, int flags) {
    // Outside Pareto mode every reader of a list holds its lock, so the lock's acquire
    // and release order it all; Pareto's unlocked target scan needs two fences more.
    const bool unlocked_readers = flags & PARETO;
    while (!lock_acquire(S.lock + w)) {}
    int result = -1, free_slot = -1, last = -1;
    bool dominated = false;
    // A vertex's first chunk is chunk w, so it loads beside the list's head (one round
    // trip, not two); with no head it is an earlier query's and is ignored.
    const int head = ld(S.vhead + w);
    for (int ch = w; ch >= 0 && !dominated;) {
        int id[CH];
        i64 el[CH], ec[CH];
        int base = ch * CH, next = ld(S.chunk_next + ch);
#pragma unroll
        for (int j = 0; j < CH; ++j) {
            id[j] = ld(S.slots + base + j); el[j] = ld(S.l + base + j); ec[j] = ld(S.c + base + j);
        }
        if (head < 0) break;
        last = ch;
#pragma unroll
        for (int j = 0; j < CH; ++j) {
            if (dominated) break;
            if (id[j] < 0) { if (free_slot < 0) free_slot = base + j; continue; }
            if (el[j] <= nl && ec[j] <= nc) { dominated = true; break; }
            if (nl <= el[j] && nc <= ec[j]) {
                L.dead[id[j]] = 1;
                S.slots[base + j] = -1;
                if (free_slot < 0) free_slot = base + j;
            }
        }
        ch = next;
    }
    if (!dominated) {
        int y = (int)atomicAdd((u64*)(ctl + COUNT), 1ULL);
        if (y >= L.limit) {
            ctl[STATUS] = OUT_OF_LABELS;
            result = -2;
        } else {
            if (free_slot < 0) {
                int ch = last < 0 ? w : (int)atomicAdd((u64*)(ctl + POOL), 1ULL);
                if (ch >= S.pool_capacity) {
                    ctl[STATUS] = OUT_OF_LISTS;
                    result = -2;
                } else {
                    // the pool is reused from query to query: every slot is cleared and
                    // visible before the chunk is linked, or Pareto's unlocked target
                    // scan could read an earlier query's label id there (and prune on it)
                    for (int j = 0; j < CH; ++j) S.slots[ch * CH + j] = -1;
                    S.chunk_next[ch] = -1;
                    if (unlocked_readers) fence();
                    if (last < 0) S.vhead[w] = ch; else S.chunk_next[last] = ch;
                    free_slot = ch * CH;
                }
            }
            if (result != -2) {
                L.node[y] = w; L.l[y] = nl; L.c[y] = nc; L.parent[y] = parent;
                L.arc[y] = arc; L.dead[y] = 0;
                S.l[free_slot] = nl; S.c[free_slot] = nc;
                if (unlocked_readers) fence(); // Pareto's unlocked target scan reads L by id
                S.slots[free_slot] = y;
                result = y;
            }
        }
    }
    lock_release(S.lock + w);
    return result;
}

// Pareto mode: is (l, c) + its bounds dominated by a stored target label? Any stored
// label is a real path, dead ones included, so a stale read only prunes less.
__device__ bool target_dominates(const Labels& L, const Lists& S, int target, i64 l, i64 c) {
    for (int ch = ld(S.vhead + target); ch >= 0; ch = ld(S.chunk_next + ch)) {
        for (int j = 0; j < CH; ++j) {
            int id = ld(S.slots + ch * CH + j);
            if (id >= 0 && ld(L.l + id) <= l && ld(L.c + id) <= c) return true;
        }
    }
    return false;
}

// The block's hash-pruning table (Vine's first level): bucket = vertex mod HS, linear
// probing over PROBES buckets. It holds labels this block stored in this pass, so a
// candidate that one of them dominates is dropped without touching global lists.
struct Table {
    int* node; i64* l; i64* c; int* used;
};

__device__ bool table_dominates(const Table& T, int w, i64 l, i64 c) {
    for (int p = 0; p < PROBES; ++p) {
        int s = (w + p) & (HS - 1);
        int v = ((volatile int*)T.node)[s];
        if (v < 0) return false;
        if (v == w && ((volatile i64*)T.l)[s] <= l && ((volatile i64*)T.c)[s] <= c) return true;
    }
    return false;
}

__device__ void table_insert(const Table& T, int w, i64 l, i64 c) {
    for (int p = 0; p < PROBES; ++p) {
        int s = (w + p) & (HS - 1);
        if (atomicCAS(T.node + s, -1, w) == -1) {
            // an entry's l and c go from INF64 to their values: a reader that sees only
            // one of them finds no dominance, which is safe
            ((volatile i64*)T.c)[s] = c;
            __threadfence_block();
            ((volatile i64*)T.l)[s] = l;
            atomicAdd(T.used, 1);
            return;
        }
    }
}

__device__ void table_clear(const Table& T) {
    for (int s = threadIdx.x; s < HS; s += blockDim.x) { T.node[s] = -1; T.l[s] = INF64; T.c[s] = INF64; }
    if (threadIdx.x == 0) *T.used = 0;
}

// One arc of an expanded label (x at its node with l, c): the bounds, the incumbent,
// the block's hash table, then the vertex's list. Returns the new label when it is to be
// expanded further (its key in *key), -1 otherwise; -2 when memory ran out.
__device__ int relax(int a, int x, i64 l, i64 c, const Graph& G, const Bounds& B,
                     const Labels& L, const Lists& S, const Table& T, i64* ctl, int target,
                     i64 budget, int flags, int* st, i64* key, int* node, i64* nl_out,
                     i64* nc_out) {
    // the values the pruning tests need are loaded at once: a hop's latency is its chain
    // of dependent round trips, and these need only the arc's head
    int w = __ldg(G.head + a);
    i64 nl = l + __ldg(G.len + a), nc = c + __ldg(G.cost + a);
    i64 lbl = __ldg(B.by_arc + a), lbc = __ldg(B.by_arc + B.m + a);
    i64 ca = INF64, la = INF64;                                   // INF64: none known
    if (flags & COMPLETE) { ca = __ldg(B.by_arc + 2 * B.m + a); la = __ldg(B.by_arc + 3 * B.m + a); }
    i64 dw = B.lag_q ? __ldg(B.lag_d + w) : 0;
    i64 inc = ld(ctl + INCUMBENT);
    if (lbc == INF64 || lbl == INF64 || nc + lbc > budget) { st[S_PRUNED_COST]++; return -1; }
    i64 nkey = nl + lbl;
    if (nkey >= inc) { st[S_PRUNED_LENGTH]++; return -1; }
    if ((flags & PARETO) && target_dominates(L, S, target, nkey, nc + lbc)) {
        st[S_PRUNED_LENGTH]++;
        return -1;
    }
    if (B.lag_q) {       // q l + p c + d(w) - p budget: q times a lower bound on its length
        i64 cut = inc == INF64 ? B.lag_cut : min(B.lag_cut, B.lag_q * inc - 1);
        if (dw == INF64 || B.lag_q * nl + B.lag_p * nc + dw - B.lag_p * budget > cut) {
            st[S_PRUNED_LENGTH]++; st[S_PRUNED_LAGRANGE]++;
            return -1;
        }
    }
    if (table_dominates(T, w, nl, nc)) { st[S_PRUNED_HASH]++; return -1; }
    int y = insert_label(L, S, ctl, w, nl, nc, x, a, flags);
    if (y == -1) { st[S_PRUNED_LIST]++; return -1; }
    if (y < 0) return -2;
    st[S_CREATED]++;
    table_insert(T, w, nl, nc);
    if (flags & COMPLETE) {
        if (ca != INF64 && nc + ca <= budget) {          // its shortest completion fits:
            atomicMin(ctl + INCUMBENT, nkey);            // nothing it leads to is shorter
            return -1;
        }
        // its least-cost completion
        if (la != INF64 && nl + la < ld(ctl + INCUMBENT)) atomicMin(ctl + INCUMBENT, nl + la);
    } else if (w == target) {                            // target labels are not expanded
        if (!(flags & PARETO)) atomicMin(ctl + INCUMBENT, nl);
        return -1;
    }
    *key = nkey; *node = w; *nl_out = nl; *nc_out = nc;
    return y;
}

// Per warp, in shared memory: the near labels its run goes on with at the next hop
// (up to 32) and how many it made.
struct Next {
    int* id; int* node; i64* l; i64* c; int* count;
};

// A warp expands its lanes' near labels together: the arcs of all of them are spread
// over the 32 lanes (a warp prefix sum of the degrees), so a label costs about one arc's
// latency, not its degree's. The warp then goes on (up to chain times) with the new
// labels that are near too, whichever lanes made them: a run of near labels costs one
// pass, not one iteration each. A warp dealt `per` > 1 labels goes on with as many; one
// dealt a single label with up to 32 (a small pass then runs far down a corridor
// towards the target), but only after a hop of at most run_arcs arcs (32 on a road
// graph: one round): unbounded, wide runs made the slowest warp slower while the others
// waited at the barrier (2 M Q3 422 -> 472 ms). A hierarchy's core nodes have more
// arcs, so runs there may go wider (engine/csp/query/gpu.py). Every lane of the warp
// calls it (x < 0: none).
__device__ void expand(int x, const Graph& G, const Bounds& B, const Labels& L, const Lists& S,
                       const Table& T, const Out& o, const Next& nx, i64* ctl, int target,
                       i64 budget, int flags, int chain, int run_arcs, int per, int* st) {
    const unsigned FULL = 0xffffffffu;
    const int width = per == 1 ? 32 : per;
    int lane = threadIdx.x & 31;
    int v = 0, begin = 0, end = 0;
    i64 l = 0, c = 0;
    // loads that need only the label (then only its node) are issued together, before
    // the tests that use them: each group costs one round trip
    if (x >= 0) {
        int dead = ld(L.dead + x);
        v = ld(L.node + x); l = ld(L.l + x); c = ld(L.c + x);
        if (dead) { st[S_DEAD]++; st[S_DROPPED]++; x = -1; }
        else {
            i64 lbl = __ldg(B.lb_l + v), inc = ld(ctl + INCUMBENT);
            begin = __ldg(G.first_out + v); end = __ldg(G.first_out + v + 1);
            if (l + lbl >= inc) { st[S_PRUNED_LENGTH]++; st[S_DROPPED]++; x = -1; }
        }
    }
    for (int hop = 0; hop <= chain; ++hop) {
        if (!__any_sync(FULL, x >= 0)) return;
        int deg = 0;
        if (x >= 0) { st[S_EXPANDED]++; deg = end - begin; }
        int incl = deg;                                   // inclusive prefix sum of degrees
        for (int off = 1; off < 32; off <<= 1) {
            int y = __shfl_up_sync(FULL, incl, off);
            if (lane >= off) incl += y;
        }
        int total = __shfl_sync(FULL, incl, 31);
        if (lane == 0) *nx.count = 0;
        __syncwarp();
        bool more = hop < chain && (per > 1 || total <= run_arcs);
        for (int base = 0; base < total; base += 32) {
            int j = base + lane;
            int owner = 0;                                 // the lane whose arc j is
            for (int step = 16; step > 0; step >>= 1) {
                int probe = __shfl_sync(FULL, incl, owner + step - 1);
                if (probe <= j) owner += step;
            }
            int o_x = __shfl_sync(FULL, x, owner), o_begin = __shfl_sync(FULL, begin, owner);
            int o_excl = __shfl_sync(FULL, incl - deg, owner);
            i64 o_l = __shfl_sync(FULL, l, owner), o_c = __shfl_sync(FULL, c, owner);
            if (j >= total) continue;
            i64 key, yl, yc;
            int w;
            int y = relax(o_begin + (j - o_excl), o_x, o_l, o_c, G, B, L, S, T, ctl, target,
                          budget, flags, st, &key, &w, &yl, &yc);
            if (y < 0) continue;
            int at = more && key <= o.threshold ? atomicAdd(nx.count, 1) : width;
            if (at < width) {
                nx.id[at] = y; nx.node[at] = w; nx.l[at] = yl; nx.c[at] = yc;
            } else {
                push(o, ctl, y, key);
            }
        }
        __syncwarp();
        x = lane < min(*nx.count, width) ? nx.id[lane] : -1;
        if (x >= 0) {
            v = nx.node[lane]; l = nx.l[lane]; c = nx.c[lane];
            int dead = ld(L.dead + x);
            begin = __ldg(G.first_out + v); end = __ldg(G.first_out + v + 1);
            if (dead) { st[S_DEAD]++; st[S_DROPPED]++; x = -1; }
        }
        __syncwarp();
    }
}

// A split pass: a far label either joins the near bucket, stays far (binned again),
// or is dropped (dead, or no longer able to beat the incumbent).
__device__ void split(int x, const Bounds& B, const Labels& L, const Out& o, i64* ctl, int* st) {
    if (ld(L.dead + x)) { st[S_DEAD]++; st[S_DROPPED]++; return; }
    i64 key = ld(L.l + x) + B.lb_l[ld(L.node + x)];
    if (key >= ld(ctl + INCUMBENT)) { st[S_PRUNED_LENGTH]++; st[S_DROPPED]++; return; }
    push(o, ctl, x, key);
}

// AR(6) one-step forecast of the ratio series x[0..t) (a ring of AR_RING): the
// coefficients fit by least squares (ridge-regularised normal equations, Cholesky)
// over the last AR_P equations; fewer than 2 AR_P points: the last value.
// engine/csp/labeling/parallelism.py ar_forecast is the twin.
__device__ double ar_forecast(const double* x, int t) {
    if (t < 2 * AR_P) return t > 0 ? x[(t - 1) % AR_RING] : 0.0;
    double A[AR_P][AR_P], b[AR_P];
    for (int i = 0; i < AR_P; ++i) { b[i] = 0; for (int j = 0; j < AR_P; ++j) A[i][j] = 0; }
    for (int e = t - AR_P; e < t; ++e) {                      // equation: x[e] ~ x[e-1..e-6]
        double y = x[e % AR_RING], f[AR_P];
        for (int i = 0; i < AR_P; ++i) f[i] = x[(e - 1 - i) % AR_RING];
        for (int i = 0; i < AR_P; ++i) {
            b[i] += f[i] * y;
            for (int j = 0; j < AR_P; ++j) A[i][j] += f[i] * f[j];
        }
    }
    double trace = 0;
    for (int i = 0; i < AR_P; ++i) trace += A[i][i];
    double ridge = 1e-3 * trace / AR_P + 1e-12;
    for (int i = 0; i < AR_P; ++i) A[i][i] += ridge;
    for (int j = 0; j < AR_P; ++j) {                          // Cholesky, A = L L^T in place
        double s = A[j][j];
        for (int k = 0; k < j; ++k) s -= A[j][k] * A[j][k];
        A[j][j] = sqrt(s > 1e-300 ? s : 1e-300);
        for (int i = j + 1; i < AR_P; ++i) {
            double r = A[i][j];
            for (int k = 0; k < j; ++k) r -= A[i][k] * A[j][k];
            A[i][j] = r / A[j][j];
        }
    }
    double z[AR_P], a[AR_P];
    for (int i = 0; i < AR_P; ++i) {
        double s = b[i];
        for (int k = 0; k < i; ++k) s -= A[i][k] * z[k];
        z[i] = s / A[i][i];
    }
    for (int i = AR_P - 1; i >= 0; --i) {
        double s = z[i];
        for (int k = i + 1; k < AR_P; ++k) s -= A[k][i] * a[k];
        a[i] = s / A[i][i];
    }
    double forecast = 0;
    for (int i = 0; i < AR_P; ++i) forecast += a[i] * x[(t - 1 - i) % AR_RING];
    return forecast;
}

// Vine's bound on the next K_t: the frontier after it, (N - K)(1 - theta) + K * growth,
// must fit MaxFtr = free label memory / iterations left. engine/csp/labeling/parallelism.py
// next_k is the twin.
__device__ i64 next_k(double growth, double theta, i64 n, i64 free_labels, double left,
                      i64 k_min, i64 k_max) {
    growth = fmin(fmax(growth, 0.0), 64.0);
    theta = fmin(fmax(theta, 0.0), 1.0);
    double max_frontier = (double)free_labels / fmax(left, 1.0);
    double room = max_frontier - (double)n * (1.0 - theta);
    double denom = growth - 1.0 + theta;
    double k = denom > 1e-9 ? room / denom : (double)k_max;    // a shrinking frontier
    if (!(k >= (double)k_min)) k = (double)k_min;
    if (k > (double)k_max) k = (double)k_max;
    return (i64)k;
}

// Block 0 between the two barriers of an iteration, on a shared copy of the control
// block: the history row, the ratio series, totals, and what the next pass does. When
// the near bucket is empty, the next pass is a split: K_t (AR(6) + Vine's bound) and
// the far histogram give the threshold that lets about K_t far labels in.
__device__ void control(i64* ctl, int* hist, double* ratios, i64* history, int history_rows,
                        int flags, i64 k_min, i64 k_max, int label_capacity, double mean_len,
                        i64* c, i64* scan) {
    __shared__ i64 s_k;
    __shared__ int s_split;
    int tid = threadIdx.x;
    for (int i = tid; i < CTL_SIZE; i += blockDim.x) c[i] = ld(ctl + i);
    __syncthreads();
    if (tid == 0) {
        i64 it = c[ITER], frontier = c[NEAR_N] + c[FAR_N], expanded = c[IT + S_EXPANDED];
        if (it < history_rows) {
            i64* row = history + it * HCOLS;
            row[0] = it; row[1] = frontier; row[2] = c[KT]; row[3] = expanded;
            row[4] = c[IT + S_CREATED]; row[5] = c[IT + S_PRUNED_COST];
            row[6] = c[IT + S_PRUNED_LENGTH]; row[7] = c[IT + S_PRUNED_HASH];
            row[8] = c[IT + S_PRUNED_LIST]; row[9] = c[IT + S_DEAD];
            row[10] = c[MODE]; row[11] = (i64)globaltimer();     // the pass just ended
        }
        int slot = (int)(it % AR_RING);
        ratios[slot] = expanded > 0 ? (double)c[IT + S_CREATED] / expanded
                                    : ratios[(slot + AR_RING - 1) % AR_RING];
        ratios[AR_RING + slot] = frontier > 0 ? (double)c[IT + S_DROPPED] / frontier : 0.0;
        for (int s = 0; s < NSTAT; ++s) { c[TOTAL + s] += c[IT + s]; c[IT + s] = 0; }
        c[ITER] = it + 1;
        if (c[MODE] == SPLIT) { c[FAR_N] = c[NEXT_FAR]; c[FCUR] ^= 1; c[NEXT_FAR] = 0; }
        s_split = 0;
        if (c[STATUS] != RUNNING) {
        } else if (c[NEXT_NEAR] > 0) {
            c[MODE] = EXPAND; c[NEAR_N] = c[NEXT_NEAR]; c[CUR] ^= 1; c[NEXT_NEAR] = 0;
        } else if (c[FAR_N] == 0) {
            c[STATUS] = DONE;
        } else {
            s_split = 1;
            c[MODE] = SPLIT; c[NEAR_N] = 0; c[SPLITS] += 1;
        }
    }
    __syncthreads();
    if (s_split) {
        if ((flags & ADAPTIVE) && (tid == 0 || tid == 32)) {    // two warps, one series each
            int t = (int)c[ITER];
            double f = ar_forecast(ratios + (tid == 0 ? 0 : AR_RING), t);
            ((double*)scan)[tid == 0 ? 0 : 1] = f;
        }
        __syncthreads();
        if (tid == 0) {
            i64 k = k_min;
            if (flags & ADAPTIVE) {
                // iterations left: the key range still to cover over the mean arc length
                // (Vine's budget / least arc cost pins K_t at its floor on road graphs)
                i64 inc = c[INCUMBENT], top = c[FAR_MAX] < inc ? c[FAR_MAX] : inc;
                double left = top > c[FBASE] ? (double)(top - c[FBASE]) / fmax(mean_len, 1.0) : 1.0;
                k = next_k(((double*)scan)[0], ((double*)scan)[1], c[FAR_N],
                           (i64)label_capacity - c[COUNT], left, k_min, k_max);
            }
            s_k = k;
        }
        __syncthreads();
        // threshold: the smallest bin edge with at least K_t far labels at or below it
        i64 k = s_k;
        int per = NBINS / blockDim.x;
        i64 mine = 0;
        for (int j = 0; j < per; ++j) mine += hist[tid * per + j];
        scan[tid] = mine;
        __syncthreads();
        for (int off = 1; off < blockDim.x; off <<= 1) {       // inclusive scan (Hillis-Steele)
            i64 add = tid >= off ? scan[tid - off] : 0;
            __syncthreads();
            scan[tid] += add;
            __syncthreads();
        }
        i64 before = tid > 0 ? scan[tid - 1] : 0;
        if (before < k && scan[tid] >= k) {                   // the crossing is in my bins
            i64 run = before;
            int j = 0;
            for (; j < per; ++j) { run += hist[tid * per + j]; if (run >= k) break; }
            int bin = tid * per + j;
            // the last bin also holds every key above its edge: those stay far and are
            // binned again over the new range
            c[THRESHOLD] = c[FBASE] + (i64)(bin + 1) * c[FWIDTH] - 1;
        }
        if (tid == blockDim.x - 1 && scan[tid] < k)              // all of them
            c[THRESHOLD] = c[FAR_MAX] > c[FBASE] ? c[FAR_MAX] : c[FBASE];
        __syncthreads();
        for (int j = tid; j < NBINS; j += blockDim.x) hist[j] = 0;   // rebuilt by the split
        if (tid == 0) {
            // the next histogram spans the far keys left (or, when none is, up to the
            // incumbent); with neither known it keeps its bin width
            c[KT] = k;
            i64 inc = c[INCUMBENT], base = c[THRESHOLD] + 1;
            i64 top = c[FAR_MAX] > base && c[FAR_MAX] < inc ? c[FAR_MAX] : inc;
            c[FBASE] = base;
            if (top != INF64 && top > base) c[FWIDTH] = (top - base) / NBINS + 1;
            c[FAR_MAX] = 0;
        }
    }
    __syncthreads();
    for (int i = tid; i < CTL_SIZE; i += blockDim.x)
        if (i != COUNT && i != POOL && i != INCUMBENT) ctl[i] = c[i];
}

// The labeling loop: up to max_iterations passes in one cooperative launch (the host
// relaunches while the status says running). A pass expands the near bucket (labels
// with key l + lb_l <= THRESHOLD) or splits the far pile; a grid barrier; block 0
// runs the control step; a grid barrier.
extern "C" __global__ void __launch_bounds__(512) csp_labeling(
        const int* first_out, const int* head, const int* len, const int* cost,
        const i64* lb_l, const i64* lag_d, i64 lag_p, i64 lag_q, i64 lag_cut,
        const i64* by_arc, i64 m,
        int* lab_node, i64* lab_l, i64* lab_c, int* lab_parent, int* lab_arc, int* lab_dead,
        int label_capacity, int label_limit, int* vhead, int* lock, int* slots, i64* slot_l,
        i64* slot_c, int* chunk_next,
        int pool_capacity, int* near0, int* near1, int* far0, int* far1, i64* ctl, int* hist,
        double* ratios, i64* history, int history_rows, int target, i64 budget, int flags,
        i64 k_min, i64 k_max, double mean_len, int chain, int run_arcs, int max_iterations) {
    cg::grid_group grid = cg::this_grid();
    __shared__ int t_node[HS];
    __shared__ i64 t_l[HS], t_c[HS];
    __shared__ int t_used;
    __shared__ i64 s_stats[NSTAT];
    __shared__ i64 s_ctl[CTL_SIZE];
    __shared__ i64 scan[512];
    __shared__ int n_id[512], n_node[512], n_count[16];
    __shared__ int s_hist[NBINS];             // this pass's far keys, added to hist at its end
    __shared__ i64 s_far_max;
    __shared__ i64 n_l[512], n_c[512];
    const Graph G{first_out, head, len, cost};
    const Bounds B{lb_l, lag_d, lag_p, lag_q, lag_cut, by_arc, m};
    const Labels L{lab_node, lab_l, lab_c, lab_parent, lab_arc, lab_dead, label_capacity,
                   label_limit};
    const Lists S{vhead, lock, slots, slot_l, slot_c, chunk_next, pool_capacity};
    const Table T{t_node, t_l, t_c, &t_used};
    const int warp0 = threadIdx.x & ~31;
    const Next nx{n_id + warp0, n_node + warp0, n_l + warp0, n_c + warp0, n_count + (warp0 >> 5)};
    for (int round = 0; round < max_iterations; ++round) {
        if (ld(ctl + STATUS) != RUNNING) break;                 // the same for every block
        int mode = (int)ld(ctl + MODE), cur = (int)ld(ctl + CUR), fcur = (int)ld(ctl + FCUR);
        i64 n = mode == EXPAND ? ld(ctl + NEAR_N) : ld(ctl + FAR_N);
        const int* in = mode == EXPAND ? (cur ? near1 : near0) : (fcur ? far1 : far0);
        // an expand pass appends to the far pile in place; a split rebuilds it
        Out o{cur ? near0 : near1, mode == EXPAND ? (fcur ? far1 : far0) : (fcur ? far0 : far1),
              ctl + (mode == EXPAND ? FAR_N : NEXT_FAR), s_hist, &s_far_max, ld(ctl + FBASE),
              ld(ctl + FWIDTH),
              ld(ctl + THRESHOLD)};
        if (mode == EXPAND) table_clear(T);
        if (threadIdx.x < NSTAT) s_stats[threadIdx.x] = 0;
        for (int j = threadIdx.x; j < NBINS; j += blockDim.x) s_hist[j] = 0;
        if (threadIdx.x == 0) s_far_max = 0;
        int st[NSTAT];
        for (int s = 0; s < NSTAT; ++s) st[s] = 0;
        __syncthreads();
        if (mode == EXPAND) {
            // The near labels are spread over every warp of the grid, `per` (<= 32) to a
            // warp: a pass of a few thousand labels then keeps every multiprocessor busy
            // (dealt out block by block it would keep the first few, each warp expanding
            // 32 labels' arcs in turn). Rounds are the same for all, for the barriers.
            const int warps_per_block = blockDim.x >> 5, lane = threadIdx.x & 31;
            const i64 warps = (i64)gridDim.x * warps_per_block;
            const i64 first = (i64)blockIdx.x * warps_per_block + (threadIdx.x >> 5);
            i64 per = (n + warps - 1) / warps;
            per = per < 1 ? 1 : (per > 32 ? 32 : per);
            const i64 mine = first * per + lane;
            for (i64 start = 0; start < n; start += warps * per) {
                i64 i = start + mine;
                bool take = lane < per && i < n;
                expand(take ? ld(in + i) : -1, G, B, L, S, T, o, nx, ctl, target, budget,
                       flags, chain, run_arcs, (int)per, st);   // every lane: warp-wide
                __syncthreads();
                if (t_used > HS / 2) {                          // nearly full: dump it
                    __syncthreads();
                    table_clear(T);
                    __syncthreads();
                }
            }
        } else {
            for (i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x; i < n;
                 i += (i64)gridDim.x * blockDim.x)
                split(ld(in + i), B, L, o, ctl, st);
        }
        for (int s = 0; s < NSTAT; ++s) if (st[s]) atomicAdd((u64*)(s_stats + s), (u64)st[s]);
        __syncthreads();
        for (int j = threadIdx.x; j < NBINS; j += blockDim.x)
            if (s_hist[j]) atomicAdd(hist + j, s_hist[j]);
        if (threadIdx.x == 0 && s_far_max) atomicMax(ctl + FAR_MAX, s_far_max);
        if (threadIdx.x < NSTAT && s_stats[threadIdx.x])
            atomicAdd((u64*)(ctl + IT + threadIdx.x), (u64)s_stats[threadIdx.x]);
        grid_barrier(grid);
        if (blockIdx.x == 0)
            control(ctl, hist, ratios, history, history_rows, flags, k_min, k_max,
                    label_capacity, mean_len, s_ctl, scan);
        grid_barrier(grid);
    }
}

// ------------------------------------------------------------------ the answer
// Which stored label realises the incumbent, and how its path ends: 0 at the target,
// 1 + the shortest path from its node, 2 + the least-cost path. ctl[WITNESS] gets the
// least (how << 40 | label id).
extern "C" __global__ void csp_witness(const int* __restrict__ lab_node,
                                       const i64* __restrict__ lab_l, const i64* __restrict__ lab_c,
                                       const i64* __restrict__ lb_l, const i64* __restrict__ lb_c,
                                       const i64* __restrict__ cost_along,
                                       const i64* __restrict__ length_along, int target,
                                       i64 budget, int flags, i64* ctl) {
    i64 count = ctl[COUNT], inc = ctl[INCUMBENT];
    if (ctl[STATUS] != DONE || inc == INF64) return;
    for (i64 y = (i64)blockIdx.x * blockDim.x + threadIdx.x; y < count;
         y += (i64)gridDim.x * blockDim.x) {
        int v = lab_node[y];
        i64 l = lab_l[y], c = lab_c[y];
        i64 how = -1;
        if (v == target && l == inc && c <= budget) how = 0;
        else if ((flags & COMPLETE) && cost_along[v] != INF64 && l + lb_l[v] == inc &&
                 c + cost_along[v] <= budget) how = 1;
        else if ((flags & COMPLETE) && length_along[v] != INF64 && l + length_along[v] == inc &&
                 c + lb_c[v] <= budget) how = 2;
        if (how >= 0) atomicMin(ctl + WITNESS, (how << 40) | y);
    }
}

// ------------------------------------------------------------------ twin check
// For the parity test with engine/csp/labeling/parallelism.py: out[0] = the AR(6) forecast of
// series[0..t) (t <= AR_RING), out[1] = next_k(p[0..6]).
extern "C" __global__ void csp_parallelism_check(const double* series, int t, const double* p,
                                                 double* out) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    out[0] = ar_forecast(series, t);
    out[1] = (double)next_k(p[0], p[1], (i64)p[2], (i64)p[3], p[4], (i64)p[5], (i64)p[6]);
}

// A per-node array of the graph for the nodes of a bi-criteria hierarchy's layered
// graph (engine/csp/hierarchy/layered.py): node i < n is the graph's node i, node n + v its down
// copy, which keeps v's value only when it can reach the target (down[v]), else INF.
extern "C" __global__ void csp_lift(const i64* __restrict__ values,
                                    const unsigned char* __restrict__ down, int n,
                                    i64* __restrict__ out) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < 2 * n; i += gridDim.x * blockDim.x) {
        int v = i < n ? i : i - n;
        out[i] = (i < n || down[v]) ? values[v] : INF64;
    }
}
