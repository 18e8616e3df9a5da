// Work-efficient frontier SSSP in one persistent cooperative kernel.
#include <cooperative_groups.h>
#include "sssp_common.cuh"
namespace cg = cooperative_groups;

// ------------------------------------------------------------------- near-far
// Work-efficient frontier SSSP (Davidson et al., IPDPS'14) in one persistent
// cooperative kernel: no host round trip between iterations, only grid barriers.
// The near queue holds nodes below the threshold; improved nodes at or above it
// go to the far queue. When near empties, the threshold grows by delta and far is
// split.
//
// Queue entries are (distance, node) pairs with no deduplication: an iteration is a
// chain of dependent memory operations ending at a grid barrier, and a stamp per node
// (one more atomic in that chain) cost more than the duplicates it saved. An entry
// whose node has since improved is stale and skipped. A node is in a queue at most
// once per successful atomicMin, so a near queue never holds more than the arcs; the
// host sizes the queues smaller and reruns with larger ones if a count passes them.
#define ARC_GROUP 4

#ifdef DIST64
struct __align__(16) item_t { dist_t c; int v; };
#else
struct __align__(8) item_t { dist_t c; int v; };
#endif

// Append an entry with one atomic per group of active lanes, not per lane; entries
// past the capacity are dropped (the count still grows, so the run sees it).
__device__ __forceinline__ void push(item_t* queue, int* count, int cap, item_t item) {
    cg::coalesced_group active = cg::coalesced_threads();
    int base = 0;
    if (active.thread_rank() == 0) base = atomicAdd(count, (int)active.size());
    base = active.shfl(base, 0) + active.thread_rank();
    if (base < cap) queue[base] = item;
}

extern "C" __global__ void near_far(const int* __restrict__ first_out,
                                    const int* __restrict__ head,
                                    const unsigned int* __restrict__ w,
                                    dist_t* d, item_t* near0, item_t* near1, item_t* near2,
                                    item_t* far0, item_t* far1, int cap, int* count,
                                    dist_t delta, int source, int* status) {
    // Three near queues rotate so that one grid barrier per iteration suffices:
    // the queue read in iteration i-1 has its counter cleared in iteration i and
    // is written in iteration i+1. count[0..2] are near sizes, count[3..4] far.
    // A count is read only while nobody writes it, so every thread sees the same
    // sizes and takes the same branches. status: [iterations, queues overflowed,
    // a candidate dropped because its distance did not fit dist_t] (the host reruns
    // with 64 bits then, so that no separate pass has to look for it).
    cg::grid_group grid = cg::this_grid();
    item_t* near_q[3] = {near0, near1, near2};
    item_t* far_q[2] = {far0, far1};
    volatile int* vcount = count;
    int tid = grid.thread_rank();
    int nthreads = grid.size();
    if (tid == 0) {
        near0[0] = item_t{0, source};
        status[2] = 0;
        count[0] = 1; count[1] = 0; count[2] = 0; count[3] = 0; count[4] = 0;
    }
    dist_t threshold = delta;
    int cur = 0, far_cur = 0, iter = 0;
    bool overflowed = false;
    grid.sync();
    while (true) {
        int size = vcount[cur];
        if (size > cap) { overflowed = true; break; }
        if (size == 0) {
            int far_size = vcount[3 + far_cur];
            if (far_size > cap) { overflowed = true; break; }
            if (far_size == 0) break;
            // Split far: entries now below the new threshold move to near.
            threshold = (threshold > INF - delta) ? INF : threshold + delta;
            int nxt = 1 - far_cur;
            for (int i = tid; i < far_size; i += nthreads) {
                item_t item = far_q[far_cur][i];
                if (d[item.v] < item.c) continue;      // stale: a better entry exists
                if (item.c < threshold) push(near_q[cur], count + cur, cap, item);
                else push(far_q[nxt], count + 3 + nxt, cap, item);
            }
            grid.sync();
            if (tid == 0) count[3 + far_cur] = 0;
            far_cur = nxt;
            grid.sync();
            continue;
        }
        ++iter;
        int out = cur == 2 ? 0 : cur + 1;
        if (tid == 0) count[out == 2 ? 0 : out + 1] = 0;   // the queue read last iteration
        for (int i = tid; i < size; i += nthreads) {
            item_t item = near_q[cur][i];
            int u = item.v;
            dist_t du = item.c;
            int begin = __ldg(first_out + u), end = __ldg(first_out + u + 1);
            if (__ldcg(d + u) < du) continue;          // stale
            // Arcs in groups of ARC_GROUP: all loads of a group are issued before
            // any atomic, so one node costs a few memory latencies, not one per arc.
            for (int a0 = begin; a0 < end; a0 += ARC_GROUP) {
                int v[ARC_GROUP];
                dist_t cand[ARC_GROUP], dv[ARC_GROUP];
                bool ok[ARC_GROUP];
#pragma unroll
                for (int j = 0; j < ARC_GROUP; ++j) {
                    ok[j] = a0 + j < end;
                    if (ok[j]) {
                        v[j] = __ldg(head + a0 + j);
                        ok[j] = add_no_overflow(du, __ldg(w + a0 + j), &cand[j]);
                        if (!ok[j]) status[2] = 1;             // du is finite here
                    }
                }
#pragma unroll
                for (int j = 0; j < ARC_GROUP; ++j)
                    if (ok[j]) dv[j] = __ldcg(d + v[j]);
#pragma unroll
                for (int j = 0; j < ARC_GROUP; ++j) {
                    if (!ok[j] || cand[j] >= dv[j] || cand[j] >= atomicMin(d + v[j], cand[j]))
                        continue;
                    item_t next{cand[j], v[j]};
                    if (cand[j] < threshold) push(near_q[out], count + out, cap, next);
                    else push(far_q[far_cur], count + 3 + far_cur, cap, next);
                }
            }
        }
        cur = out;
        grid.sync();
    }
    if (tid == 0) { status[0] = iter; status[1] = overflowed; }
}
