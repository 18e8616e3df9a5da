#pragma once
// Shared by the SSSP kernels: the distance type and overflow-safe addition.
//
// dist_t is 32-bit unless DIST64 is defined; INF marks unreached nodes. A candidate
// d[u] + w that overflows is dropped: the host checks afterwards that no true
// distance came near INF and reruns with 64 bits if one did.
#ifdef DIST64
typedef unsigned long long dist_t;
#define INF 0xFFFFFFFFFFFFFFFFull
#else
typedef unsigned int dist_t;
#define INF 0xFFFFFFFFu
#endif

__device__ __forceinline__ bool add_no_overflow(dist_t a, unsigned int w, dist_t* out) {
    dist_t s = a + (dist_t)w;
    *out = s;
    return a != INF && s >= a && s != INF;
}
