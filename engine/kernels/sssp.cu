// Direct single-source shortest paths on the GPU (no preprocessing): the
// round-based kernels, launched by the host once per round.
#include "sssp_common.cuh"

extern "C" __global__ void init_dist(dist_t* d, int n, int source) {
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v < n) d[v] = (v == source) ? 0 : INF;
}

// ---------------------------------------------------------------- Bellman-Ford
// One thread per arc. Arcs are ordered by the cache segment of their head, then of
// their tail, so a block's reads of d fall into few segments. d_read and d_write
// are the same array: reads go through the read-only cache (__ldg); a stale read
// only delays convergence, since distances never increase. An arc is relaxed only
// if its tail improved in the previous round (stamp), which skips most atomics.
extern "C" __global__ void bf_round(const int* __restrict__ arc_tail,
                                    const int* __restrict__ arc_head,
                                    const unsigned int* __restrict__ arc_w, int m,
                                    const dist_t* __restrict__ d_read, dist_t* d_write,
                                    int* improved_round, const int* round_base, int offset,
                                    int* last_change) {
    // The round number is read from the device so one captured CUDA graph of
    // CHECK_EVERY rounds can be replayed unchanged (round_base moves on after it).
    int a = blockIdx.x * blockDim.x + threadIdx.x;
    if (a >= m) return;
    int round = *round_base + offset;
    int u = __ldg(arc_tail + a);
    if (__ldg(improved_round + u) != round - 1) return;
    dist_t cand;
    if (!add_no_overflow(__ldg(d_read + u), __ldg(arc_w + a), &cand)) return;
    int v = __ldg(arc_head + a);
    if (cand < __ldg(d_read + v)) {
        dist_t old = atomicMin(d_write + v, cand);
        if (cand < old) {
            improved_round[v] = round;
            *last_change = round;
        }
    }
}

extern "C" __global__ void bf_start(int* improved_round, int n, int source, int* round_base,
                                    int* last_change) {
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v < n) improved_round[v] = (v == source) ? 0 : -2;
    if (v == 0) { *round_base = 0; *last_change = 0; }
}

extern "C" __global__ void bf_advance(int* round_base, int by) { *round_base += by; }

// ------------------------------------------------------- locality k-step relaxation
// Each thread owns two vertices. A flagged vertex starts a depth-first wave that
// relaxes up to K hops; vertices improved at depth K are flagged in the other
// array for the next round, so no flag is read and written in one round.
#define MAX_K 8
extern "C" __global__ void kstep_round(const int* __restrict__ first_out,
                                       const int* __restrict__ head,
                                       const unsigned int* __restrict__ w, int n,
                                       dist_t* d, unsigned char* flag_in,
                                       unsigned char* flag_out, int K,
                                       const int* round_base, int offset, int* last_change) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int round = *round_base + offset;
    int stack_node[MAX_K], stack_arc[MAX_K];
    for (int k = 0; k < 2; ++k) {
        int root = 2 * t + k;
        if (root >= n || !flag_in[root]) continue;
        flag_in[root] = 0;
        int depth = 0;
        stack_node[0] = root;
        stack_arc[0] = first_out[root];
        while (depth >= 0) {
            int x = stack_node[depth];
            if (stack_arc[depth] >= first_out[x + 1]) { --depth; continue; }
            int a = stack_arc[depth]++;
            dist_t cand;
            if (!add_no_overflow(d[x], w[a], &cand)) continue;
            int y = head[a];
            if (cand < d[y] && cand < atomicMin(d + y, cand)) {
                *last_change = round;
                if (depth + 1 < K) {
                    ++depth;
                    stack_node[depth] = y;
                    stack_arc[depth] = first_out[y];
                } else {
                    flag_out[y] = 1;
                }
            }
        }
    }
}

extern "C" __global__ void kstep_start(unsigned char* flag, int source, int* round_base,
                                       int* last_change) {
    flag[source] = 1;
    *round_base = 0;
    *last_change = 0;
}

// ------------------------------------------------------------------- parents
// Parent of v: the smallest arc id among tight arcs (d[u] + w == d[v]). With
// positive costs tight arcs point from smaller to larger distances, so any choice
// is a tree; the smallest id makes it the same tree as the CPU's. parent_arc starts
// at 0xFFFFFFFF: an unsigned minimum over arc ids (< 2^31) leaves -1 (as int32)
// where no arc is tight, so no pass afterwards has to mark those nodes.
extern "C" __global__ void tight_parent_arcs(const int* __restrict__ arc_tail,
                                             const int* __restrict__ head,
                                             const unsigned int* __restrict__ w, int m,
                                             const dist_t* __restrict__ d,
                                             unsigned int* parent_arc) {
    int a = blockIdx.x * blockDim.x + threadIdx.x;
    if (a >= m) return;
    dist_t cand;
    if (!add_no_overflow(d[arc_tail[a]], w[a], &cand)) return;
    int v = head[a];
    if (cand == d[v]) atomicMin(parent_arc + v, (unsigned int)a);
}
