// Reading a shortest-path tree that stays on the device: the path to one node.
//
// One thread walks parent arcs from the target up to the source and writes the arcs
// (target first); only those arcs are copied to the host, not the tree. The walk is
// sequential by nature (each step needs the last), a few hundred ns per step.
// count: the number of arcs; -1 when a parent arc is missing (a broken tree or an
// unreached node), -2 when the path has more than max_arcs arcs (call again with room).
extern "C" __global__ void tree_walk(const int* __restrict__ parent_arc,
                                     const int* __restrict__ tail, int source, int target,
                                     int max_arcs, int* arcs, int* count) {
    if (blockIdx.x * blockDim.x + threadIdx.x != 0) return;
    int v = target, k = 0;
    while (v != source) {
        int a = parent_arc[v];
        if (a < 0) { *count = -1; return; }
        if (k >= max_arcs) { *count = -2; return; }
        arcs[k++] = a;
        v = tail[a];
    }
    *count = k;
}
