// Microinstructions of the lowest CRP level (engine/crp/customization/microcode_gpu.py): one block per
// packed group of cells, the slots M in shared memory. Mapping (gather the level
// below's weights, min over parallel edges), the layers (barrier between two), then
// collection into S. FORBIDDEN = 2^31-1 is "no way"; a finite sum >= FORBIDDEN sets
// *overflow and leaves the slot as it was (an assignment stores FORBIDDEN).

#define FORBIDDEN 0x7fffffff
#define NO_SLOT 0xffffu
#define ASSIGN 0x8000u

extern "C" __global__ void microcode_run(
    const int* __restrict__ block_slots, const long long* __restrict__ block_layer_first,
    const long long* __restrict__ layer_first, const unsigned short* __restrict__ instr_a,
    const unsigned short* __restrict__ instr_b, const unsigned short* __restrict__ instr_c,
    const long long* __restrict__ block_edge_first, const int* __restrict__ edge_weight,
    const unsigned short* __restrict__ edge_slot, const long long* __restrict__ block_out_first,
    const unsigned short* __restrict__ collect_slot, const int* __restrict__ weights,
    int* __restrict__ out, int* __restrict__ overflow)
{
    extern __shared__ int m[];
    const int g = blockIdx.x;
    for (int s = threadIdx.x; s < block_slots[g]; s += blockDim.x) m[s] = FORBIDDEN;
    __syncthreads();
    // mapping: parallel edges share a slot, so take the minimum
    for (long long e = block_edge_first[g] + threadIdx.x; e < block_edge_first[g + 1];
         e += blockDim.x) {
        const unsigned s = edge_slot[e];
        if (s != NO_SLOT) atomicMin(&m[s], __ldg(&weights[edge_weight[e]]));
    }
    __syncthreads();
    bool overflowed = false;
    for (long long k = block_layer_first[g]; k < block_layer_first[g + 1]; ++k) {
        for (long long i = layer_first[k] + threadIdx.x; i < layer_first[k + 1];
             i += blockDim.x) {
            const int va = m[instr_a[i]], vb = m[instr_b[i]];
            const unsigned c = instr_c[i];
            const unsigned slot = c & ~ASSIGN;
            const long long sum = (long long)va + vb;
            if (va == FORBIDDEN || vb == FORBIDDEN || sum >= FORBIDDEN) {
                overflowed |= va != FORBIDDEN && vb != FORBIDDEN;
                if (c & ASSIGN) m[slot] = FORBIDDEN;
            } else if (c & ASSIGN) {
                m[slot] = (int)sum;          // the layering keeps other writers away
            } else {
                atomicMin(&m[slot], (int)sum);   // writers of one slot in one layer
            }
        }
        __syncthreads();
    }
    const long long o0 = block_out_first[g];
    for (long long k = o0 + threadIdx.x; k < block_out_first[g + 1]; k += blockDim.x) {
        const unsigned s = collect_slot[k];
        out[k] = s == NO_SLOT ? FORBIDDEN : m[s];
    }
    if (overflowed) atomicOr(overflow, 1);
}
