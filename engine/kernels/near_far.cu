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
extern "C" __global__ void near_far(const int* __restrict__ first_out,
                                    const int* __restrict__ head,
                                    const unsigned int* __restrict__ w, int n,
                                    dist_t* d, int* near0, int* near1, int* far0,
                                    int* far1, int* count, int* near_stamp,
                                    int* far_stamp, dist_t delta, int source,
                                    int* iterations) {
    cg::grid_group grid = cg::this_grid();
    int* near_q[2] = {near0, near1};
    int* far_q[2] = {far0, far1};
    int tid = grid.thread_rank();
    int nthreads = grid.size();
    if (tid == 0) {
        near0[0] = source; count[0] = 1; count[1] = 0; count[2] = 0; count[3] = 0;
        near_stamp[source] = 1;
    }
    dist_t threshold = delta;
    int cur = 0, far_cur = 0, generation = 1, far_generation = 1, iter = 0;
    grid.sync();
    while (true) {
        int size = ((volatile int*)count)[cur];
        if (size == 0) {
            int far_size = ((volatile int*)count)[2 + far_cur];
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
                        near_q[cur][atomicAdd(count + cur, 1)] = v;
                } else if (atomicExch(far_stamp + v, far_generation) != far_generation) {
                    far_q[nxt][atomicAdd(count + 2 + nxt, 1)] = v;
                }
            }
            grid.sync();
            if (tid == 0) count[2 + far_cur] = 0;
            far_cur = nxt;
            grid.sync();
            continue;
        }
        ++generation;
        ++iter;
        int out = 1 - cur;
        for (int i = tid; i < size; i += nthreads) {
            int u = near_q[cur][i];
            dist_t du = d[u];
            for (int a = first_out[u]; a < first_out[u + 1]; ++a) {
                dist_t cand;
                if (!add_no_overflow(du, w[a], &cand)) continue;
                int v = head[a];
                if (cand < d[v] && cand < atomicMin(d + v, cand)) {
                    if (cand < threshold) {
                        if (atomicExch(near_stamp + v, generation) != generation)
                            near_q[out][atomicAdd(count + out, 1)] = v;
                    } else if (atomicExch(far_stamp + v, far_generation) != far_generation) {
                        far_q[far_cur][atomicAdd(count + 2 + far_cur, 1)] = v;
                    }
                }
            }
        }
        grid.sync();
        if (tid == 0) count[cur] = 0;
        cur = out;
        grid.sync();
    }
    if (tid == 0) *iterations = iter;
}

