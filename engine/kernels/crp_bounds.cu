// The CRP query's top-level bound tables on the GPU (engine/crp/query/bounds_gpu.py):
// bounds.py's Dijkstras over the top level, all tables at once, as Bellman-Ford pulls.
// D[y][k] (int32, FORBIDDEN: none) is table k's cost at top arc y. A round: every top
// arc y pulls over its cell's list (a "to" table: the exits of the cell y enters, cost
// its row; a "from" table: the entries of the cell y leaves, cost its column),
// D[y][k] = min over x of D[x][k] + S[start[y] + j * step[y]], but only from the x
// whose row changed in the round before (a bit per arc; a value read early is still
// a path's cost, so in-place reads only speed convergence). One writer per (y, tile).

#define FORBIDDEN 2147483647u

extern "C" __global__ void bound_round(const int* __restrict__ cell_of,
                                       const long long* __restrict__ start,
                                       const int* __restrict__ step,
                                       const int* __restrict__ list_first,
                                       const int* __restrict__ list_q,
                                       const int* __restrict__ S, int btop, int cols,
                                       int* D, const unsigned* __restrict__ now,
                                       unsigned* next, int* flags, int round) {
    if (round > 0 && flags[round - 1] == 0) return;   // converged: the batch's rest idles
    const int tiles = (cols + 3) >> 2;
    const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (t >= (long long)btop * tiles) return;
    const int y = (int)(t / tiles), k0 = (int)(t - (long long)y * tiles) * 4;
    const int c = cell_of[y], lo = list_first[c], n = list_first[c + 1] - lo;
    const long long s0 = start[y];
    const int st = step[y];
    int* dy = D + (long long)y * cols + k0;
    const int kn = min(4, cols - k0);
    unsigned best[4];
#pragma unroll
    for (int a = 0; a < 4; ++a) best[a] = a < kn ? (unsigned)dy[a] : FORBIDDEN;
    for (int j = 0; j < n; ++j) {
        const int x = list_q[lo + j];
        if (!((now[x >> 5] >> (x & 31)) & 1u)) continue;
        const unsigned w = (unsigned)S[s0 + (long long)j * st];
        if (w >= FORBIDDEN) continue;
        const int* dx = D + (long long)x * cols + k0;
#pragma unroll
        for (int a = 0; a < 4; ++a)
            if (a < kn) best[a] = min(best[a], (unsigned)dx[a] + w);   // < 2^32: no wrap
    }
    bool improved = false;
#pragma unroll
    for (int a = 0; a < 4; ++a) {
        const unsigned b = min(best[a], FORBIDDEN);
        if (a < kn && b < (unsigned)dy[a]) {
            dy[a] = (int)b;
            improved = true;
        }
    }
    if (improved) {
        atomicOr(next + (y >> 5), 1u << (y & 31));
        if (flags[round] == 0) flags[round] = 1;
    }
}
