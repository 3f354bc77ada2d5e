/* clpy native engine: helpers of the generated kernels (sim/native/cgen.py). Every helper
   gives the NumPy engine's result with every checker off (sim/ops.py, sim/exprs.py). */
#ifndef CLPY_NATIVE_ENGINE_H
#define CLPY_NATIVE_ENGINE_H
#include <stdint.h>
#include <string.h>
#include <math.h>
#include <setjmp.h>

/* Cancellation (Ctrl-C inside a native launch, sim/native/runner.py). The runner sets this
   library's flag (its address: clpy_cancel_ptr()) and the kernel stops at its next poll:
   CLPY_BACKEDGE() at the group loop's and the user's loops' back-edges (a relaxed load and a
   branch predicted not taken). A poll that finds the flag set jumps back to clpy_enter, which
   returns CLPY_CANCELLED; the runner then restores the launch's written buffers from their
   snapshot. Python calls clpy_enter, never clpy_run directly. */
#define CLPY_CANCELLED (1 << 30)
static volatile int32_t clpy_cancel_flag;
int32_t *clpy_cancel_ptr(void) { return (int32_t *)&clpy_cancel_flag; }
static __thread jmp_buf *clpy_cancel_jb; /* this thread's clpy_enter (none: keep running) */
__attribute__((cold, noinline)) static void clpy_cancelled(void) {
    if (clpy_cancel_jb) longjmp(*clpy_cancel_jb, 1);
}
#define CLPY_BACKEDGE()                                                                      \
    do {                                                                                     \
        if (__builtin_expect(__atomic_load_n(&clpy_cancel_flag, __ATOMIC_RELAXED), 0))       \
            clpy_cancelled();                                                                \
    } while (0)
int clpy_run(void **A, const int64_t *N, int64_t g0, int64_t g1);
/* clpy_run(A, N, g0, g1) with a landing place for a cancelled poll */
int clpy_enter(void **A, const int64_t *N, int64_t g0, int64_t g1) {
    jmp_buf jb;
    jmp_buf *volatile prev = clpy_cancel_jb;
    if (setjmp(jb)) {
        clpy_cancel_jb = prev;
        return CLPY_CANCELLED;
    }
    clpy_cancel_jb = &jb;
    int st = clpy_run(A, N, g0, g1);
    clpy_cancel_jb = prev;
    return st;
}

/* an element index out of [0, n) is made 0, as the NumPy engine does with checks off */
static inline int64_t clpy_ix(int64_t i, int64_t n) { return (uint64_t)i < (uint64_t)n ? i : 0; }

/* integer division and remainder: a zero divisor is taken as 1 (the NumPy engine with the
   div_zero check off); MIN / -1 wraps to MIN and MIN % -1 is 0 (never a SIGFPE) */
#define CLPY_SDIV(T, UT)                                                                     \
    static inline T clpy_div_##T(T a, T b) {                                                 \
        if (b == 0) return a;                                                                \
        if (b == -1) return (T)(UT)(0u - (UT)a);                                             \
        return (T)(a / b);                                                                   \
    }                                                                                        \
    static inline T clpy_rem_##T(T a, T b) {                                                 \
        if (b == 0 || b == -1) return 0;                                                     \
        return (T)(a % b);                                                                   \
    }                                                                                        \
    static inline T clpy_fdiv_##T(T a, T b) {                                                \
        if (b == 0) return a;                                                                \
        if (b == -1) return (T)(UT)(0u - (UT)a);                                             \
        T q = (T)(a / b);                                                                    \
        if ((T)(a % b) != 0 && ((a < 0) != (b < 0))) q = (T)(q - 1);                         \
        return q;                                                                            \
    }                                                                                        \
    static inline T clpy_fmod_##T(T a, T b) {                                                \
        if (b == 0 || b == -1) return 0;                                                     \
        T r = (T)(a % b);                                                                    \
        if (r != 0 && ((r < 0) != (b < 0))) r = (T)(r + b);                                  \
        return r;                                                                            \
    }
#define CLPY_UDIV(T)                                                                         \
    static inline T clpy_div_##T(T a, T b) { return b == 0 ? a : (T)(a / b); }               \
    static inline T clpy_rem_##T(T a, T b) { return b == 0 ? 0 : (T)(a % b); }               \
    static inline T clpy_fdiv_##T(T a, T b) { return b == 0 ? a : (T)(a / b); }              \
    static inline T clpy_fmod_##T(T a, T b) { return b == 0 ? 0 : (T)(a % b); }
CLPY_SDIV(int8_t, uint8_t)
CLPY_SDIV(int16_t, uint16_t)
CLPY_SDIV(int32_t, uint32_t)
CLPY_SDIV(int64_t, uint64_t)
CLPY_UDIV(uint8_t)
CLPY_UDIV(uint16_t)
CLPY_UDIV(uint32_t)
CLPY_UDIV(uint64_t)

/* Python's float // and % (sim/ops.py float_binary) */
static inline float clpy_ffloordiv_float(float a, float b) { return floorf(a / b); }
static inline double clpy_ffloordiv_double(double a, double b) { return floor(a / b); }
static inline float clpy_ffloormod_float(float a, float b) {
    float r = fmodf(a, b);
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
static inline double clpy_ffloormod_double(double a, double b) {
    double r = fmod(a, b);
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

/* a float value the optimizer cannot see: GCC rewrites x - C as x + (-C), which flips the
   sign bit of a NaN constant C (the subtraction keeps it) */
#if defined(__x86_64__) || defined(__i386__)
#define CLPY_OPAQUE(v) __asm__("" : "+x"(v))
#else
#define CLPY_OPAQUE(v) __asm__("" : "+g"(v))
#endif
static inline float clpy_opq_float(float x) { CLPY_OPAQUE(x); return x; }
static inline double clpy_opq_double(double x) { CLPY_OPAQUE(x); return x; }

/* float -> integer: truncation toward zero, NaN -> 0, saturation (sim/ops.py float_to_int) */
#define CLPY_F2I(T, LO, HI)                                                                  \
    static inline T clpy_f2i_##T(double v) {                                                 \
        if (v != v) return 0;                                                                \
        double t = trunc(v);                                                                 \
        if (t >= (double)(HI)) return (T)(HI);                                               \
        if (t <= (double)(LO)) return (T)(LO);                                               \
        return (T)t;                                                                         \
    }
CLPY_F2I(int8_t, INT8_MIN, INT8_MAX)
CLPY_F2I(int16_t, INT16_MIN, INT16_MAX)
CLPY_F2I(int32_t, INT32_MIN, INT32_MAX)
CLPY_F2I(int64_t, INT64_MIN, INT64_MAX)
CLPY_F2I(uint8_t, 0, UINT8_MAX)
CLPY_F2I(uint16_t, 0, UINT16_MAX)
CLPY_F2I(uint32_t, 0, UINT32_MAX)
CLPY_F2I(uint64_t, 0, UINT64_MAX)

#endif
