// Work-efficient frontier SSSP in one persistent cooperative kernel.
#include <cooperative_groups.h>
#include "sssp_common.cuh"
namespace cg = cooperative_groups;

// ------------------------------------------------------------------- near-far
// Work-efficient frontier SSSP (Davidson et al., IPDPS'14) in one persistent
// cooperative kernel: no host round trip between iterations, only grid barriers.
// The near queue holds nodes below the threshold; improved nodes at or above it
// go to the far queue. When near empties, the threshold grows by delta and far is
// split. stamp[] keeps a node once per queue generation.
#define ARC_GROUP 4

// Append v to a queue with one atomic per group of active lanes, not per lane.
__device__ __forceinline__ void push(int* queue, int* count, int v) {
    cg::coalesced_group active = cg::coalesced_threads();
    int base = 0;
    if (active.thread_rank() == 0) base = atomicAdd(count, (int)active.size());
    base = active.shfl(base, 0);
    queue[base + active.thread_rank()] = v;
}

extern "C" __global__ void near_far(const int* __restrict__ first_out,
                                    const int* __restrict__ head,
                                    const unsigned int* __restrict__ w, int n,
                                    dist_t* d, int* near0, int* near1, int* near2,
                                    int* far0, int* far1, int* count, int* near_stamp,
                                    int* far_stamp, dist_t delta, int source,
                                    int* iterations) {
    // Three near queues rotate so that one grid barrier per iteration suffices:
    // the queue read in iteration i-1 has its counter cleared in iteration i and
    // is written in iteration i+1. count[0..2] are near sizes, count[3..4] far.
    cg::grid_group grid = cg::this_grid();
    int* near_q[3] = {near0, near1, near2};
    int* far_q[2] = {far0, far1};
    volatile int* vcount = count;
    int tid = grid.thread_rank();
    int nthreads = grid.size();
    if (tid == 0) {
        near0[0] = source;
        count[0] = 1; count[1] = 0; count[2] = 0; count[3] = 0; count[4] = 0;
        near_stamp[source] = 1;
    }
    dist_t threshold = delta;
    int cur = 0, far_cur = 0, generation = 1, far_generation = 1, iter = 0;
    grid.sync();
    while (true) {
        int size = vcount[cur];
        if (size == 0) {
            int far_size = vcount[3 + far_cur];
            if (far_size == 0) break;
            // Split far: nodes now below the new threshold move to near.
            dist_t old_threshold = threshold;
            threshold = (threshold > INF - delta) ? INF : threshold + delta;
            ++generation;
            ++far_generation;
            int nxt = 1 - far_cur;
            for (int i = tid; i < far_size; i += nthreads) {
                int v = far_q[far_cur][i];
                dist_t dv = d[v];
                if (dv < old_threshold) continue;  // expanded when it dropped below
                if (dv < threshold) {
                    if (atomicExch(near_stamp + v, generation) != generation)
                        push(near_q[cur], count + cur, v);
                } else if (atomicExch(far_stamp + v, far_generation) != far_generation) {
                    push(far_q[nxt], count + 3 + nxt, v);
                }
            }
            grid.sync();
            if (tid == 0) count[3 + far_cur] = 0;
            far_cur = nxt;
            grid.sync();
            continue;
        }
        ++generation;
        ++iter;
        int out = cur == 2 ? 0 : cur + 1;
        if (tid == 0) count[out == 2 ? 0 : out + 1] = 0;   // the queue read last iteration
        for (int i = tid; i < size; i += nthreads) {
            int u = near_q[cur][i];
            dist_t du = d[u];
            int end = __ldg(first_out + u + 1);
            // Arcs in groups of ARC_GROUP: all loads of a group are issued before
            // any atomic, so one node costs a few memory latencies, not one per arc.
            for (int a0 = __ldg(first_out + u); a0 < end; a0 += ARC_GROUP) {
                int v[ARC_GROUP];
                dist_t cand[ARC_GROUP], dv[ARC_GROUP];
                bool ok[ARC_GROUP];
#pragma unroll
                for (int j = 0; j < ARC_GROUP; ++j) {
                    ok[j] = a0 + j < end;
                    if (ok[j]) {
                        v[j] = __ldg(head + a0 + j);
                        ok[j] = add_no_overflow(du, __ldg(w + a0 + j), &cand[j]);
                    }
                }
#pragma unroll
                for (int j = 0; j < ARC_GROUP; ++j)
                    if (ok[j]) dv[j] = d[v[j]];
#pragma unroll
                for (int j = 0; j < ARC_GROUP; ++j) {
                    if (!ok[j] || cand[j] >= dv[j] || cand[j] >= atomicMin(d + v[j], cand[j]))
                        continue;
                    if (cand[j] < threshold) {
                        if (atomicExch(near_stamp + v[j], generation) != generation)
                            push(near_q[out], count + out, v[j]);
                    } else if (atomicExch(far_stamp + v[j], far_generation) != far_generation) {
                        push(far_q[far_cur], count + 3 + far_cur, v[j]);
                    }
                }
            }
        }
        cur = out;
        grid.sync();
    }
    if (tid == 0) *iterations = iter;
}
