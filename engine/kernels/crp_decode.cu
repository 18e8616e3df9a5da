// Metric decoders (engine/crp/metric/costs.py): one interpreter thread per arc turns the
// arc's attributes into an integral cost, one thread per turn adds the turn cost.
// The program is two small arrays (ints, floats) laid out as in engine/crp/metric/program.py. Every
// floating-point step uses the round-to-nearest intrinsics (__dadd_rn, __dmul_rn,
// __ddiv_rn) so that no multiply-add is fused: the Numba twin gets the same bits.

#define FORBIDDEN 2147483647
#define NUM_CLASSES 10
#define NUM_TURN_TYPES 8
#define I_KIND 0
#define I_CLASSES 1
#define I_FLAGS 2
#define I_METRIC 3
#define I_NCODE 4
#define I_TURN 5
#define I_CODE (I_TURN + NUM_TURN_TYPES)
#define D_CAP 0
#define D_SCALE 1
#define D_SPEED 2
#define D_MULT (D_SPEED + NUM_CLASSES)
#define D_CONST (D_MULT + NUM_CLASSES)
#define F_TOLL 1
#define F_MAXSPEED 2
#define F_EXPR 4
#define F_LENGTH 8
#define F_CLASS 16
#define F_SPEED 32
#define F_LANES 64
#define F_FLAGS 128
#define BIT_TOLL 1
#define BIT_ONEWAY 2
#define BIT_ROUNDABOUT 4
#define ERR_NAN (-1)
#define ERR_NEGATIVE (-2)
#define ERR_TOO_LARGE (-3)
#define METRIC_SLOT0 9
#define MAX_STACK 16

__device__ __forceinline__ double binary_op(int op, double x, double y) {
    switch (op) {
        case 2: return __dadd_rn(x, y);
        case 3: return __dsub_rn(x, y);
        case 4: return __dmul_rn(x, y);
        case 5: return __ddiv_rn(x, y);
        case 7: return x < y ? 1.0 : 0.0;
        case 8: return x <= y ? 1.0 : 0.0;
        case 9: return x > y ? 1.0 : 0.0;
        case 10: return x >= y ? 1.0 : 0.0;
        case 11: return x == y ? 1.0 : 0.0;
        case 12: return x != y ? 1.0 : 0.0;
        case 13: return (x != 0.0 && y != 0.0) ? 1.0 : 0.0;
        case 14: return (x != 0.0 || y != 0.0) ? 1.0 : 0.0;
        case 16: return x < y ? x : y;
        default: return x > y ? x : y;        // 17: max
    }
}

// The postfix program on one arc (twin of engine/crp/metric/interpreter.py's _run).
__device__ double run_program(const int* __restrict__ ints, const double* __restrict__ floats,
                              const double* base, const int* __restrict__ metrics,
                              long long m, long long a) {
    double stack[MAX_STACK];
    int sp = 0;
    int n = ints[I_NCODE];
    for (int i = 0; i < n; ++i) {
        int word = ints[I_CODE + i];
        int op = word & 0xFF, arg = word >> 8;
        if (op == 0) {
            stack[sp++] = floats[D_CONST + arg];
        } else if (op == 1) {
            stack[sp++] = arg < METRIC_SLOT0 ? base[arg]
                                             : (double)metrics[(arg - METRIC_SLOT0) * m + a];
        } else if (op == 6) {
            stack[sp - 1] = -stack[sp - 1];
        } else if (op == 15) {
            stack[sp - 1] = stack[sp - 1] == 0.0 ? 1.0 : 0.0;
        } else if (op >= 18) {
            double x = stack[sp - 3], y = stack[sp - 2], z = stack[sp - 1], r;
            if (op == 18) {
                r = x != 0.0 ? y : z;
            } else {                          // clamp(x, lo, hi) = min(max(x, lo), hi)
                r = x > y ? x : y;
                r = r < z ? r : z;
            }
            sp -= 2;
            stack[sp - 1] = r;
        } else {
            stack[sp - 2] = binary_op(op, stack[sp - 2], stack[sp - 1]);
            sp -= 1;
        }
    }
    return stack[0];
}

__device__ __forceinline__ int rounded(double cost) {
    if (cost != cost) return ERR_NAN;
    if (cost < 0.0) return ERR_NEGATIVE;
    double r = rint(cost);
    if (r >= 2147483647.0) return ERR_TOO_LARGE;
    return r >= 1.0 ? (int)r : 1;
}

extern "C" __global__ void crp_arc_costs(const int* __restrict__ ints,
                                         const double* __restrict__ floats,
                                         const float* __restrict__ length,
                                         const signed char* __restrict__ cls,
                                         const float* __restrict__ speed,
                                         const signed char* __restrict__ lanes,
                                         const unsigned char* __restrict__ flags,
                                         const int* __restrict__ metrics,
                                         long long m, int* __restrict__ out) {
    long long a = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (a >= m) return;
    int kind = ints[I_KIND], mask = ints[I_CLASSES], f = ints[I_FLAGS];
    int c = (f & F_CLASS) ? cls[a] : 0;
    int bits = (f & F_FLAGS) ? flags[a] : 0;
    if (((mask >> c) & 1) || ((f & F_TOLL) && (bits & BIT_TOLL))) {
        out[a] = FORBIDDEN;
        return;
    }
    double s = floats[D_SPEED + c];
    if ((f & F_MAXSPEED) && speed[a] > 0.0f) s = (double)speed[a];
    s = s < floats[D_CAP] ? s : floats[D_CAP];
    double len = (f & F_LENGTH) ? (double)length[a] : 0.0;
    double time_s = __ddiv_rn(len, __ddiv_rn(s, 3.6));
    double mult = floats[D_MULT + c];
    double cost;
    if (kind == 0) {
        cost = __dmul_rn(__dmul_rn(time_s, 10.0), mult);
    } else if (kind == 1) {
        cost = __dmul_rn(len, mult);
    } else {
        double v = (double)metrics[(long long)ints[I_METRIC] * m + a];
        cost = __dmul_rn(__dmul_rn(v, floats[D_SCALE]), mult);
    }
    if (f & F_EXPR) {
        double base[METRIC_SLOT0] = {
            len, s, (f & F_LANES) ? (double)lanes[a] : 0.0, (double)c,
            (double)(bits & BIT_TOLL), (double)((bits & BIT_ONEWAY) >> 1),
            (double)((bits & BIT_ROUNDABOUT) >> 2), time_s, cost};
        cost = run_program(ints, floats, base, metrics, m, a);
    }
    out[a] = rounded(cost);
}

// turn weight = turn cost of its type + cost of the arc it enters; FORBIDDEN if
// either is; ERR_TOO_LARGE where the finite sum reaches FORBIDDEN.
extern "C" __global__ void crp_turn_weights(const int* __restrict__ ints,
                                            const int* __restrict__ to_arc,
                                            const signed char* __restrict__ turn_type,
                                            const int* __restrict__ arc_cost,
                                            long long num_turns, int* __restrict__ out) {
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= num_turns) return;
    int tc = ints[I_TURN + turn_type[t]];
    int ac = arc_cost[to_arc[t]];
    if (tc == FORBIDDEN || ac == FORBIDDEN) {
        out[t] = FORBIDDEN;
        return;
    }
    long long w = (long long)tc + (long long)ac;
    out[t] = w >= FORBIDDEN ? ERR_TOO_LARGE : (int)w;
}
