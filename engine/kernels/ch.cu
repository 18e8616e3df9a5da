// CU-CH contraction steps on the GPU (engine/ch/*): fused kernels that compute
// exactly what the NumPy formulation of each step computes, without
// materialising the broken paths. The level graph is CSR: arcs sorted by (tail, head),
// at most one arc per pair, out_first[u]..out_first[u+1] the out-arcs of u.
#define I64_MAX 0x7fffffffffffffffll
#define I32_MAX 0x7fffffff
typedef long long i64;
typedef unsigned long long u64;

// Slots of a level graph's counters (engine.ch.level_graph.LevelGraph.counters), filled by
// the kernels of one level and read by the host in one copy where it needs sizes.
#define COUNT_CONTRACTED 0        // |U_l|
#define COUNT_MAX_OUT_DEGREE 1
#define COUNT_BROKEN_BOUND 2      // an upper bound of the broken paths
#define COUNT_FOUND 3             // broken paths without a 1- or 2-hop witness
#define COUNT_SEEN 4              // broken paths examined
#define COUNT_WORK 5              // arcs into contracted nodes (SHORTCUT's work list)
#define COUNT_GROUPS 6            // sources of the candidates (the witness search's work list)
#define FULL_MASK 0xffffffffu

// Position of arc u->v, or -1 (binary search in u's out-arcs, sorted by head).
__device__ __forceinline__ i64 find_arc(const i64* __restrict__ head,
                                        const i64* __restrict__ out_first, i64 u, i64 v) {
    i64 lo = out_first[u], end = out_first[u + 1], hi = end;
    while (lo < hi) {
        i64 mid = (lo + hi) >> 1;
        if (head[mid] < v) lo = mid + 1; else hi = mid;
    }
    return (lo < end && head[lo] == v) ? lo : -1;
}

// engine.ch.select.node_hash, bit for bit.
__device__ __forceinline__ u64 node_hash(u64 id, u64 salt) {
    u64 x = id ^ salt;
    x = (x ^ (x >> 33)) * 0xFF51AFD7ED558CCDull;
    x = (x ^ (x >> 33)) * 0xC4CEB9FE1A85EC53ull;
    return x ^ (x >> 33);
}

// ---- SCORE ----------------------------------------------------------------
// Per arc: in-degree and summed arc costs of both ends (the total cost comes
// from a reduction: one atomic counter for every arc serialises the launch).
extern "C" __global__ void ch_arc_sums(const i64* tail, const i64* head, const i64* weight,
                                       i64 m, u64* indeg, u64* wsum) {
    i64 a = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (a >= m) return;
    u64 w = (u64)weight[a];
    atomicAdd(indeg + head[a], 1ull);
    atomicAdd(wsum + tail[a], w);
    atomicAdd(wsum + head[a], w);
}

// Per arc (u, w): the broken paths (u, w, v) with no 1-hop witness, counted at w;
// and the largest neighbour degree of both ends.
extern "C" __global__ void ch_score_arcs(const i64* __restrict__ tail, const i64* __restrict__ head,
                                         const i64* __restrict__ weight,
                                         const i64* __restrict__ out_first,
                                         const u64* __restrict__ indeg, i64 m,
                                         u64* needed, u64* nb_degree) {
    i64 a = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (a >= m) return;
    i64 u = tail[a], w = head[a];
    u64 count = 0;
    for (i64 j = out_first[w]; j < out_first[w + 1]; ++j) {
        i64 v = head[j];
        if (v == u) continue;
        i64 len = weight[a] + weight[j];
        i64 k = find_arc(head, out_first, u, v);
        if (k < 0 || weight[k] > len) ++count;
    }
    if (count) atomicAdd(needed + w, count);
    u64 deg_u = indeg[u] + (u64)(out_first[u + 1] - out_first[u]);
    u64 deg_w = indeg[w] + (u64)(out_first[w + 1] - out_first[w]);
    atomicMax(nb_degree + u, deg_w);
    atomicMax(nb_degree + w, deg_u);
}

// Per node: importance in 1/64 units (engine.ch.score.importance); the largest
// out-degree goes to the level graph's counters (one atomic per warp).
extern "C" __global__ void ch_score_nodes(const i64* out_first, const u64* indeg, const u64* needed,
                                          const u64* nb_degree, const u64* wsum, const i64* total,
                                          i64 n, i64 m, i64* importance, u64* counters) {
    i64 v = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    u64 out_degree = 0;
    if (v < n) {
        out_degree = (u64)(out_first[v + 1] - out_first[v]);
        i64 degree = (i64)indeg[v] + (i64)out_degree;
        i64 mean_w = (i64)(*total) / (m > 1 ? m : 1);
        if (mean_w < 1) mean_w = 1;
        i64 edge_difference = (i64)needed[v] - degree;
        i64 avg_w_64 = (i64)wsum[v] * 32 / ((degree > 1 ? degree : 1) * mean_w);
        importance[v] = (4 * edge_difference + degree) * 64 + (i64)nb_degree[v] * 16 + avg_w_64;
    }
    for (int off = 16; off; off >>= 1)
        out_degree = max(out_degree, __shfl_xor_sync(0xffffffffu, out_degree, off));
    if ((threadIdx.x & 31) == 0 && out_degree) atomicMax(counters + COUNT_MAX_OUT_DEGREE, out_degree);
}

// ---- SELECT ---------------------------------------------------------------
// The sort key of every live node (engine.ch.select.independent_set): importance
// clamped to 32 bits, then the high half of the node's hash.
extern "C" __global__ void ch_select_key(const i64* importance, const i64* live_ids, i64 live,
                                         u64 salt, i64* key) {
    i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= live) return;
    i64 v = live_ids[i], imp = importance[v];
    imp = imp < -2147483648ll ? -2147483648ll : (imp > 2147483647ll ? 2147483647ll : imp);
    key[i] = imp * 4294967296ll + (i64)(node_hash((u64)v, salt) >> 32);
}

// The first `want` live nodes in key order are the candidates.
extern "C" __global__ void ch_candidates(const i64* live_ids, const i64* order, i64 want,
                                         bool* candidate) {
    i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < want) candidate[live_ids[order[i]]] = true;
}

// Luby rounds, three launches each. A node is still in play while it is a
// candidate, not yet chosen and no chosen node's neighbour; `loses` and
// `winner` hold the round (1, 2, ...) they were last set in, so nothing is
// cleared between rounds.
__device__ __forceinline__ bool in_play(const bool* candidate, const bool* chosen,
                                        const bool* blocked, i64 x) {
    return candidate[x] && !chosen[x] && !blocked[x];
}

extern "C" __global__ void ch_luby_lose(const i64* tail, const i64* head, i64 m, u64 salt,
                                        const bool* candidate, const bool* chosen,
                                        const bool* blocked, i64 round, unsigned char* loses) {
    i64 a = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (a >= m) return;
    i64 x = tail[a], y = head[a];
    if (!in_play(candidate, chosen, blocked, x) || !in_play(candidate, chosen, blocked, y)) return;
    u64 px = node_hash((u64)x, salt), py = node_hash((u64)y, salt);
    if (py < px) loses[x] = (unsigned char)round;
    if (px < py) loses[y] = (unsigned char)round;
}

// Winners join U_l; they are counted in the level graph's counters (one atomic per warp).
extern "C" __global__ void ch_luby_win(i64 n, const bool* candidate, const unsigned char* loses,
                                       const bool* blocked, i64 round, unsigned char* winner,
                                       bool* chosen, u64* counters) {
    i64 v = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    bool win = v < n && in_play(candidate, chosen, blocked, v) && loses[v] != (unsigned char)round;
    if (win) { winner[v] = (unsigned char)round; chosen[v] = true; }
    unsigned wins = __ballot_sync(0xffffffffu, win);
    if ((threadIdx.x & 31) == 0 && wins) atomicAdd(counters + COUNT_CONTRACTED, (u64)__popc(wins));
}

extern "C" __global__ void ch_luby_block(const i64* tail, const i64* head, i64 m,
                                         const unsigned char* winner, i64 round, bool* blocked) {
    i64 a = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (a >= m) return;
    if (winner[tail[a]] == (unsigned char)round) blocked[head[a]] = true;
    if (winner[head[a]] == (unsigned char)round) blocked[tail[a]] = true;
}

// ---- SHORTCUT -------------------------------------------------------------
// Appends `flag`ged items to a list at counters[slot]: one atomic per warp, and
// every lane of the warp must call it.
__device__ __forceinline__ void warp_append(bool flag, i64 item, u64* counters, int slot, i64* list) {
    int lane = threadIdx.x & 31;
    unsigned mask = __ballot_sync(FULL_MASK, flag);
    u64 base = 0;
    if (lane == 0 && mask) base = atomicAdd(counters + slot, (u64)__popc(mask));
    base = __shfl_sync(FULL_MASK, base, 0);
    if (flag) list[base + __popc(mask & ((1u << lane) - 1))] = item;
}

// The arcs (u, w) into a contracted w, listed as SHORTCUT's work, and an upper
// bound of the broken paths: the sum of out-degree(w) over them.
extern "C" __global__ void ch_broken_path_bound(const i64* __restrict__ head,
                                                const i64* __restrict__ out_first,
                                                const bool* __restrict__ contracted, i64 m,
                                                u64* counters, i64* work) {
    i64 a = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    u64 c = 0;
    bool into = false;
    if (a < m) {
        i64 w = head[a];
        into = contracted[w];
        if (into) c = (u64)(out_first[w + 1] - out_first[w]);
    }
    warp_append(into, a, counters, COUNT_WORK, work);
    for (int off = 16; off; off >>= 1) c += __shfl_xor_sync(FULL_MASK, c, off);
    if ((threadIdx.x & 31) == 0 && c) atomicAdd(counters + COUNT_BROKEN_BOUND, c);
}

// A warp per listed arc (u, w) into a contracted w, its lanes over the out-arcs
// (w, v): late level graphs are dense and have few contracted nodes, so a thread
// per arc would leave most of the GPU idle behind a few long loops. Every broken
// path (u, w, v) without a witness (1-hop: u->v no longer; 2-hop: u->x->v
// shorter, or as short through a surviving x) is appended at an atomic cursor
// with its pair key u * n + v; the caller sorts them by key.
extern "C" __global__ void ch_shortcuts(const i64* __restrict__ tail, const i64* __restrict__ head,
                                        const i64* __restrict__ weight,
                                        const i64* __restrict__ out_first,
                                        const bool* __restrict__ contracted,
                                        const i64* __restrict__ work, i64 items, i64 n,
                                        i64 capacity, u64* counters,
                                        i64* out_key, i64* out_len, i64* out_w,
                                        i64* out_in, i64* out_out) {
    i64 item = ((i64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (item >= items) return;
    i64 a = work[item], w = head[a], u = tail[a];
    u64 seen = 0;
    for (i64 j = out_first[w] + lane; j < out_first[w + 1]; j += 32) {
        i64 v = head[j];
        if (v == u) continue;
        ++seen;
        i64 len = weight[a] + weight[j];
        i64 k = find_arc(head, out_first, u, v);
        if (k >= 0 && weight[k] <= len) continue;
        bool witnessed = false;
        for (i64 f = out_first[u]; f < out_first[u + 1] && !witnessed; ++f) {
            i64 x = head[f];
            if (x == w || x == v) continue;
            i64 s = find_arc(head, out_first, x, v);
            if (s < 0) continue;
            i64 via = weight[f] + weight[s];
            witnessed = via < len || (via == len && !contracted[x]);
        }
        if (witnessed) continue;
        i64 slot = (i64)atomicAdd(counters + COUNT_FOUND, 1ull);
        if (slot >= capacity) continue;   // cannot happen: capacity bounds every broken path
        out_key[slot] = u * n + v; out_len[slot] = len; out_w[slot] = w;
        out_in[slot] = a; out_out[slot] = j;
    }
    if (seen) atomicAdd(counters + COUNT_SEEN, seen);
}

// The candidates in key order (`order`): the first row of each pair (u, v)
// names the pair's cheapest candidate, least middle node on ties (`win`, its
// length in `wlen`); the pair's other rows get wlen = -1. Every row gets its
// key; the first row of each source u is listed as the witness search's work.
extern "C" __global__ void ch_pair_winner(const i64* __restrict__ order, const i64* __restrict__ key,
                                          const i64* __restrict__ len, const i64* __restrict__ w,
                                          i64 rows, i64 n, i64* skey, i64* wlen, i64* win,
                                          u64* counters, i64* groups) {
    i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    bool group_start = false;
    if (i < rows) {
        i64 o = order[i], k = key[o];
        skey[i] = k;
        i64 previous = i > 0 ? key[order[i - 1]] : -1;
        group_start = i == 0 || previous / n != k / n;
        if (previous == k) {
            wlen[i] = -1;
        } else {
            i64 best = o, bl = len[o], bw = w[o];
            for (i64 j = i + 1; j < rows; ++j) {
                i64 q = order[j];
                if (key[q] != k) break;
                if (len[q] < bl || (len[q] == bl && w[q] < bw)) { best = q; bl = len[q]; bw = w[q]; }
            }
            wlen[i] = bl;
            win[i] = best;
        }
    }
    warp_append(group_start, i, counters, COUNT_GROUPS, groups);
}

// Kept rows (keep[1 + r]; `rank`, the cumsum of keep, counts the kept rows
// before r) become the level's k shortcuts in key order: columns of tail, head,
// weight, middle, in-arc, out-arc and key, k apart in `out`.
extern "C" __global__ void ch_emit_shortcuts(const i64* skey, const i64* win, const i64* keep,
                                             const i64* rank, i64 rows, i64 k, i64 n,
                                             const i64* len, const i64* w, const i64* in_arc,
                                             const i64* out_arc, i64* out) {
    i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= rows || !keep[i + 1]) return;
    i64 r = rank[i], o = win[i], key = skey[i];
    out[r] = key / n; out[k + r] = key % n; out[2 * k + r] = len[o];
    out[3 * k + r] = w[o]; out[4 * k + r] = in_arc[o]; out[5 * k + r] = out_arc[o];
    out[6 * k + r] = key;
}

// ---- local witness search (engine/ch/witness.py, the same steps as _search) --
// A warp per source u, from the list of the first rows of each source's group
// in the rows sorted by key u * n + v. Rows with wlen >= 0 are asked.
// Labels and their hash index live in shared memory; lanes scan the labels for
// the least (distance, node) and relax the settled node's out-arcs 32 at a time.
// New labels take their list position from a ballot in CSR order, so the list,
// and what a full list leaves out, is the serial search's exactly. The answer
// for every row r of the group goes to keep[1 + r]: asked and not witnessed.
#define WITNESS_WARPS 4
#define WITNESS_TABLE 256   // >= witness.TABLE_SIZE
#define WITNESS_HASH 512    // >= witness.HASH_SIZE

__device__ __forceinline__ int witness_slot(const int* slots, const int* label_node,
                                            int hash_size, i64 y) {
    int s = (int)(((y * 0x9E3779B1ll) >> 7) & (hash_size - 1));
    while (slots[s] >= 0 && label_node[slots[s]] != y) s = (s + 1) & (hash_size - 1);
    return s;
}

// One source's search by one warp: rows r0.. of the source u = skey[r0] / n.
__device__ void witness_group(const i64* __restrict__ head, const i64* __restrict__ weight,
                              const i64* __restrict__ out_first, const bool* __restrict__ contracted,
                              const i64* __restrict__ skey, const i64* __restrict__ wlen,
                              i64 rows, i64 n, i64 r0, i64 settle_limit, int cap, int hs,
                              int* label_node, i64* label_dist, int* slots, i64* keep) {
    int lane = threadIdx.x & 31;
    i64 source = skey[r0] / n;
    i64 r1 = rows;                                   // the group's end
    for (i64 base = r0 + 1; base < rows; base += 32) {
        i64 r = base + lane;
        unsigned other = __ballot_sync(FULL_MASK, r < rows && skey[r] / n != source);
        if (other) { r1 = base + __ffs(other) - 1; break; }
        if (base + 32 >= rows) break;
    }
    i64 bound = 0;
    for (i64 r = r0 + lane; r < r1; r += 32) bound = max(bound, wlen[r]);
    for (int off = 16; off; off >>= 1) bound = max(bound, __shfl_xor_sync(FULL_MASK, bound, off));
    for (int s = lane; s < hs; s += 32) slots[s] = -1;
    __syncwarp();
    if (lane == 0) {
        label_node[0] = (int)source;
        label_dist[0] = 0;
        slots[witness_slot(slots, label_node, hs, source)] = 0;
    }
    __syncwarp();
    int labels = 1;
    for (i64 step = 0; step < settle_limit; ++step) {
        i64 bd = I64_MAX; int bn = I32_MAX, bi = -1;
        for (int i = lane; i < labels; i += 32) {
            i64 d = label_dist[i];
            if (d >= 0 && (d < bd || (d == bd && label_node[i] < bn))) { bd = d; bn = label_node[i]; bi = i; }
        }
        for (int off = 16; off; off >>= 1) {
            i64 od = __shfl_xor_sync(FULL_MASK, bd, off);
            int on = __shfl_xor_sync(FULL_MASK, bn, off), oi = __shfl_xor_sync(FULL_MASK, bi, off);
            if (od < bd || (od == bd && on < bn)) { bd = od; bn = on; bi = oi; }
        }
        if (bi < 0 || bd > bound) break;
        __syncwarp();
        if (lane == 0) label_dist[bi] = -bd - 1;
        __syncwarp();
        i64 end = out_first[bn + 1];
        for (i64 base = out_first[bn]; base < end; base += 32) {
            i64 a = base + lane, y = 0, dy = 0;
            int s = -1, i = -1;
            bool ok = a < end;
            if (ok) {
                y = head[a];
                dy = bd + weight[a];
                ok = !contracted[y] && dy <= bound;
            }
            if (ok) {
                s = witness_slot(slots, label_node, hs, y);
                i = slots[s];
                if (i >= 0 && label_dist[i] >= 0 && dy < label_dist[i]) label_dist[i] = dy;
            }
            bool fresh = ok && i < 0;
            unsigned mask = __ballot_sync(FULL_MASK, fresh);
            int idx = labels + __popc(mask & ((1u << lane) - 1));
            if (fresh && idx < cap) {
                label_node[idx] = (int)y;
                label_dist[idx] = dy;
                while (atomicCAS(slots + s, -1, idx) != -1) s = (s + 1) & (hs - 1);
            }
            labels = min(labels + __popc(mask), cap);
            __syncwarp();
        }
    }
    for (i64 r = r0 + lane; r < r1; r += 32) {
        bool witnessed = false;
        if (wlen[r] >= 0) {
            int i = slots[witness_slot(slots, label_node, hs, skey[r] % n)];
            if (i >= 0) {
                i64 d = label_dist[i];
                if (d < 0) d = -d - 1;
                witnessed = d <= wlen[r];
            }
        }
        keep[1 + r] = wlen[r] >= 0 && !witnessed;
    }
}

extern "C" __global__ void ch_witness(const i64* __restrict__ head, const i64* __restrict__ weight,
                                      const i64* __restrict__ out_first,
                                      const bool* __restrict__ contracted,
                                      const i64* __restrict__ skey, const i64* __restrict__ wlen,
                                      i64 rows, i64 n, const i64* __restrict__ groups,
                                      const u64* counters, i64 settle_limit, i64 table_size,
                                      i64 hash_size, i64* keep) {
    __shared__ int s_node[WITNESS_WARPS][WITNESS_TABLE];
    __shared__ i64 s_dist[WITNESS_WARPS][WITNESS_TABLE];
    __shared__ int s_slot[WITNESS_WARPS][WITNESS_HASH];
    int warp = threadIdx.x >> 5;
    if (blockIdx.x == 0 && threadIdx.x == 0) keep[0] = 0;
    i64 total = (i64)counters[COUNT_GROUPS], warps = (i64)gridDim.x * WITNESS_WARPS;
    for (i64 g = (i64)blockIdx.x * WITNESS_WARPS + warp; g < total; g += warps) {
        witness_group(head, weight, out_first, contracted, skey, wlen, rows, n, groups[g],
                      settle_limit, (int)table_size, (int)hash_size, s_node[warp], s_dist[warp],
                      s_slot[warp], keep);
        __syncwarp();
    }
}

// ---- UPDATE ---------------------------------------------------------------
// Arcs of G_l with a contracted end leave the level graph at this level.
extern "C" __global__ void ch_leave(const i64* tail, const i64* head, const i64* harc,
                                    const bool* contracted, i64 m, int level, int* leave) {
    i64 a = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (a < m && (contracted[tail[a]] || contracted[head[a]])) leave[harc[a]] = level;
}

// ---- EXTRACT (engine/ch/extract.py: G_{l+1} as the merge of two sorted lists) --
// Pass 1, per arc of G_l: does it survive, and does a new shortcut have its key
// (then the shortcut replaces it)? Flags go to [1 + a] of two rows of m + 1, so
// one cumsum gives the exclusive counts at [a] and the totals at [m].
extern "C" __global__ void ch_extract_mark(const i64* __restrict__ tail, const i64* __restrict__ head,
                                           const bool* __restrict__ contracted,
                                           const i64* __restrict__ new_key, i64 k, i64 n, i64 m,
                                           i64* flags, i64* shortcuts_before) {
    i64 a = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (a == 0) flags[0] = flags[m + 1] = 0;
    if (a >= m) return;
    i64 u = tail[a], v = head[a], key = u * n + v;
    bool kept = !contracted[u] && !contracted[v];
    i64 lo = 0, hi = k;
    while (lo < hi) {
        i64 mid = (lo + hi) >> 1;
        if (new_key[mid] < key) lo = mid + 1; else hi = mid;
    }
    flags[a + 1] = kept;
    flags[m + 1 + a + 1] = kept && lo < k && new_key[lo] == key;
    shortcuts_before[a] = lo;
}

// Pass 2, per surviving arc not replaced: its rank in the union.
extern "C" __global__ void ch_extract_old(const i64* tail, const i64* head, const i64* weight,
                                          const i64* harc, const i64* flags, const i64* before,
                                          const i64* shortcuts_before, i64 m,
                                          i64* out_tail, i64* out_head, i64* out_weight, i64* out_harc) {
    i64 a = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (a >= m || !flags[a + 1] || flags[m + 1 + a + 1]) return;
    i64 r = before[a] + shortcuts_before[a] - before[m + 1 + a];
    out_tail[r] = tail[a]; out_head[r] = head[a]; out_weight[r] = weight[a]; out_harc[r] = harc[a];
}

// Pass 2, per new shortcut: its rank, from the surviving and replaced arcs before
// the first arc of G_l whose key is not below it.
extern "C" __global__ void ch_extract_new(const i64* sc_tail, const i64* sc_head, const i64* sc_weight,
                                          const i64* sc_harc, i64 k, const i64* __restrict__ head,
                                          const i64* __restrict__ out_first, const i64* before, i64 m,
                                          i64* out_tail, i64* out_head, i64* out_weight, i64* out_harc) {
    i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= k) return;
    i64 u = sc_tail[i], v = sc_head[i];
    i64 lo = out_first[u], hi = out_first[u + 1];
    while (lo < hi) {
        i64 mid = (lo + hi) >> 1;
        if (head[mid] < v) lo = mid + 1; else hi = mid;
    }
    i64 r = i + before[lo] - before[m + 1 + lo];
    out_tail[r] = u; out_head[r] = v; out_weight[r] = sc_weight[i]; out_harc[r] = sc_harc[i];
}

// ---- APSP -----------------------------------------------------------------
// Blocked Floyd-Warshall over a P x P matrix (P a multiple of FW_TILE, padding
// rows without arcs): round b relaxes every pair through the pivots of tile b,
// first in the diagonal tile, then in the tiles of its row and column, then in
// all others, three launches a round instead of one per pivot. At pivot p the
// row and column of p cannot improve (d[p][p] = 0, costs are non-negative), so
// updating a tile in place between barriers reads no value being written.
// pred[i][j] is the predecessor of j on the best path from i found so far.
#define FW_TILE 32

// The in-place pivot steps of one tile d (with pr): d[i][j] against left[i][p] +
// right[p][j] for the tile's 32 pivots, the predecessor taken from right_pr[p][j].
__device__ __forceinline__ void fw_tile_pivots(i64 (*d)[FW_TILE], int (*pr)[FW_TILE],
                                               i64 (*left)[FW_TILE], i64 (*right)[FW_TILE],
                                               int (*right_pr)[FW_TILE]) {
    int ty = threadIdx.y, tx = threadIdx.x;
    for (int p = 0; p < FW_TILE; ++p) {
        i64 through = left[ty][p] + right[p][tx];
        if (through < d[ty][tx]) { d[ty][tx] = through; pr[ty][tx] = right_pr[p][tx]; }
        __syncthreads();
    }
}

extern "C" __global__ void ch_fw_diagonal(i64* dist, int* pred, i64 P, i64 b) {
    __shared__ i64 d[FW_TILE][FW_TILE];
    __shared__ int pr[FW_TILE][FW_TILE];
    int ty = threadIdx.y, tx = threadIdx.x;
    i64 at = (b * FW_TILE + ty) * P + b * FW_TILE + tx;
    d[ty][tx] = dist[at]; pr[ty][tx] = pred[at];
    __syncthreads();
    fw_tile_pivots(d, pr, d, d, pr);
    dist[at] = d[ty][tx]; pred[at] = pr[ty][tx];
}

// blockIdx.y == 0: the tiles (b, J) of b's row; 1: the tiles (J, b) of its column.
extern "C" __global__ void ch_fw_cross(i64* dist, int* pred, i64 P, i64 b) {
    __shared__ i64 diag[FW_TILE][FW_TILE], d[FW_TILE][FW_TILE];
    __shared__ int diag_pr[FW_TILE][FW_TILE], pr[FW_TILE][FW_TILE];
    i64 J = blockIdx.x;
    if (J == b) return;
    int ty = threadIdx.y, tx = threadIdx.x;
    bool row = blockIdx.y == 0;
    i64 at_diag = (b * FW_TILE + ty) * P + b * FW_TILE + tx;
    i64 at = row ? (b * FW_TILE + ty) * P + J * FW_TILE + tx : (J * FW_TILE + ty) * P + b * FW_TILE + tx;
    diag[ty][tx] = dist[at_diag]; diag_pr[ty][tx] = pred[at_diag];
    d[ty][tx] = dist[at]; pr[ty][tx] = pred[at];
    __syncthreads();
    if (row) fw_tile_pivots(d, pr, diag, d, pr);       // through the diagonal, then along the row
    else fw_tile_pivots(d, pr, d, diag, diag_pr);      // along the column, then the diagonal
    dist[at] = d[ty][tx]; pred[at] = pr[ty][tx];
}

// Every tile (I, J) off b's row and column, through the finished tiles (I, b), (b, J).
extern "C" __global__ void ch_fw_rest(i64* dist, int* pred, i64 P, i64 b) {
    __shared__ i64 col[FW_TILE][FW_TILE], row[FW_TILE][FW_TILE];
    __shared__ int row_pr[FW_TILE][FW_TILE];
    i64 I = blockIdx.y, J = blockIdx.x;
    if (I == b || J == b) return;
    int ty = threadIdx.y, tx = threadIdx.x;
    i64 at_col = (I * FW_TILE + ty) * P + b * FW_TILE + tx;
    i64 at_row = (b * FW_TILE + ty) * P + J * FW_TILE + tx;
    col[ty][tx] = dist[at_col];
    row[ty][tx] = dist[at_row]; row_pr[ty][tx] = pred[at_row];
    __syncthreads();
    i64 at = (I * FW_TILE + ty) * P + J * FW_TILE + tx;
    i64 best = dist[at];
    int best_pr = pred[at];
    for (int p = 0; p < FW_TILE; ++p) {
        i64 through = col[ty][p] + row[p][tx];
        if (through < best) { best = through; best_pr = row_pr[p][tx]; }
    }
    dist[at] = best; pred[at] = best_pr;
}
