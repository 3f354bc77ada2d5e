/* clpy native engine prelude (sim/native/builtins.py): OpenCL type names and built-ins in C.
 *
 * Every function here gives the NumPy engine's bits (sim/builtins/, sim/ops.py) for every input
 * it is used for; sim/native/builtins.py decides which calls use them and returns None (not
 * native) for the rest. Needs GCC or clang (vector_size, statement expressions), C11,
 * -fwrapv, -ffp-contract=off, no -ffast-math, and a signed plain char (-fsigned-char where it
 * is not the default): OpenCL's char, short, int, long, float and double are the C keywords.
 * No global state: everything is a static inline function or a type.
 */
#ifndef CLPY_NATIVE_PRELUDE_H
#define CLPY_NATIVE_PRELUDE_H
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#if CHAR_MIN == 0
#error "clpy prelude: OpenCL char is signed: compile with -fsigned-char"
#endif
_Static_assert(sizeof(long) == 8, "clpy prelude: OpenCL long is 64-bit");
_Static_assert(sizeof(bool) == 1, "clpy prelude: the simulator's bool is one byte (NumPy bool_)");

/* ------------------------------------------------------------------------ scalar types */
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;

/* ------------------------------------------------------------------------ vector types
 * A 3-component vector has the size and alignment of a 4-component one (OpenCL C 2.0 6.1.5,
 * clpy/types/core.py VectorType.size); its fourth lane is padding. */
#define CLPY_VECTORS(T, S)                                                                   \
    typedef T T##2 __attribute__((vector_size(2 * (S))));                                   \
    typedef T T##3 __attribute__((vector_size(4 * (S))));                                   \
    typedef T T##4 __attribute__((vector_size(4 * (S))));                                   \
    typedef T T##8 __attribute__((vector_size(8 * (S))));                                   \
    typedef T T##16 __attribute__((vector_size(16 * (S))));
typedef signed char clpy_schar;
typedef clpy_schar char2 __attribute__((vector_size(2)));
typedef clpy_schar char3 __attribute__((vector_size(4)));
typedef clpy_schar char4 __attribute__((vector_size(4)));
typedef clpy_schar char8 __attribute__((vector_size(8)));
typedef clpy_schar char16 __attribute__((vector_size(16)));
CLPY_VECTORS(uchar, 1)
CLPY_VECTORS(short, 2)
CLPY_VECTORS(ushort, 2)
CLPY_VECTORS(int, 4)
CLPY_VECTORS(uint, 4)
CLPY_VECTORS(long, 8)
CLPY_VECTORS(ulong, 8)
CLPY_VECTORS(float, 4)
CLPY_VECTORS(double, 8)
#undef CLPY_VECTORS

/* ------------------------------------------------------------------------ conversions
 * Float to integer as sim/ops.py float_to_int and sim/builtins/conversions.py int_from_float:
 * the value (rounded by the caller for convert_T_rtX; truncated by default) in double, NaN
 * gives 0, values at or beyond the type's range saturate (C leaves them undefined). */
#define CLPY_F2I(T, LO, HI)                                                                  \
    static inline T clpy_f2i_##T(double t) {                                                 \
        if (t != t) return 0;                                                                \
        if (t >= (double)(HI)) return (T)(HI);                                               \
        if (t <= (double)(LO)) return (T)(LO);                                               \
        return (T)t;                                                                         \
    }
CLPY_F2I(char, SCHAR_MIN, SCHAR_MAX)
CLPY_F2I(uchar, 0, UCHAR_MAX)
CLPY_F2I(short, SHRT_MIN, SHRT_MAX)
CLPY_F2I(ushort, 0, USHRT_MAX)
CLPY_F2I(int, INT_MIN, INT_MAX)
CLPY_F2I(uint, 0, UINT_MAX)
CLPY_F2I(long, LONG_MIN, LONG_MAX)
CLPY_F2I(ulong, 0, ULONG_MAX)
#undef CLPY_F2I

/* ------------------------------------------------------------------------ float helpers */
#define CLPY_PI 0x1.921fb54442d18p+1 /* np.pi (M_PI is not C11) */
static inline uint32_t clpy_fbits(float x) { uint32_t u; memcpy(&u, &x, 4); return u; }
static inline uint64_t clpy_dbits(double x) { uint64_t u; memcpy(&u, &x, 8); return u; }
static inline float clpy_bitsf(uint32_t u) { float x; memcpy(&x, &u, 4); return x; }
static inline double clpy_bitsd(uint64_t u) { double x; memcpy(&x, &u, 8); return x; }

/* + - * / with NumPy's NaN bits: where two NaNs meet, NumPy's SIMD loops give the first
 * operand's NaN (quieted), while a C compiler may swap the operands of a commutative operation;
 * with one NaN, its own bits, while clang may compute a - b as a + (-b), flipping the sign of
 * b's NaN. So a NaN operand is returned (quieted) explicitly. */
#define CLPY_ORDERED(T, S)                                                                   \
    static inline T clpy_add_##S(T a, T b) { return a != a ? a + a : b != b ? b + b : a + b; } \
    static inline T clpy_sub_##S(T a, T b) { return a != a ? a + a : b != b ? b + b : a - b; } \
    static inline T clpy_mul_##S(T a, T b) { return a != a ? a + a : b != b ? b + b : a * b; } \
    static inline T clpy_div_##S(T a, T b) { return a != a ? a + a : b != b ? b + b : a / b; }
CLPY_ORDERED(float, f)
CLPY_ORDERED(double, d)
#undef CLPY_ORDERED
/* a float widened to double as NumPy's cast does it: a signalling NaN quieted (the compiler
 * may drop a conversion it sees as exact, e.g. (float)copysign((double)x, ...)) */
static inline double clpy_wf(float x) { return x != x ? (double)(x + x) : (double)x; }

/* NumPy's positive quiet NaN (np.nan), which the NumPy engine produces where it writes
 * np.where(..., np.nan, ...) and where NumPy's loops return their own NaN. */
static inline double clpy_qnan(void) { return clpy_bitsd(0x7ff8000000000000ull); }

/* sim/builtins/common.py fmin / fmax (OpenCL C 2.0 6.13.2): the other operand where one is
 * NaN, the first where both are, the second where they compare equal (fmin(+0, -0) is -0,
 * fmin(-0, +0) is +0, as PoCL gives). The NumPy engine says so with np.where, not NumPy's
 * fmin loops, whose scalar and SIMD versions choose differently. */
#define CLPY_FMINMAX(T, S)                                                                   \
    static inline T clpy_fmin_##S(T a, T b) {                                                \
        if (b != b) return a;                                                                \
        if (a != a) return b;                                                                \
        return a < b ? a : b;                                                                \
    }                                                                                        \
    static inline T clpy_fmax_##S(T a, T b) {                                                \
        if (b != b) return a;                                                                \
        if (a != a) return b;                                                                \
        return a > b ? a : b;                                                                \
    }
CLPY_FMINMAX(float, f)
CLPY_FMINMAX(double, d)
#undef CLPY_FMINMAX

/* ------------------------------------------------------------------------ math, in double
 * sim/builtins/math.py computes a float function in double and rounds once (the caller casts);
 * clpy_m_NAME is the NumPy float64 routine of NAME. The C library's routine is used where
 * NumPy calls the same one (sim/native/builtins_math.py checks that at run time); NaN results
 * are NumPy's. */
#define CLPY_LIBM1(NAME)                                                                     \
    static inline double clpy_m_##NAME(double x) { return NAME(x); }
CLPY_LIBM1(acos)
CLPY_LIBM1(asin)
CLPY_LIBM1(atan)
CLPY_LIBM1(acosh)
CLPY_LIBM1(asinh)
CLPY_LIBM1(atanh)
CLPY_LIBM1(cbrt)
CLPY_LIBM1(cos)
CLPY_LIBM1(cosh)
CLPY_LIBM1(sin)
CLPY_LIBM1(sinh)
CLPY_LIBM1(tan)
CLPY_LIBM1(exp)
CLPY_LIBM1(exp2)
CLPY_LIBM1(expm1)
CLPY_LIBM1(log10)
CLPY_LIBM1(log1p)
CLPY_LIBM1(erf)
CLPY_LIBM1(erfc)
CLPY_LIBM1(fabs)
CLPY_LIBM1(sqrt)
#undef CLPY_LIBM1
/* NumPy's log and log2 give +NaN for negative arguments (the C library: -NaN) */
static inline double clpy_m_log(double x) { return x < 0 ? clpy_qnan() : log(x); }
static inline double clpy_m_log2(double x) { return x < 0 ? clpy_qnan() : log2(x); }
/* NumPy's rounding loops quiet a signalling NaN (the C library returns it unchanged) */
static inline double clpy_m_floor(double x) { return x != x ? x + x : floor(x); }
static inline double clpy_m_ceil(double x) { return x != x ? x + x : ceil(x); }
static inline double clpy_m_trunc(double x) { return x != x ? x + x : trunc(x); }
static inline double clpy_m_rint(double x) { return x != x ? x + x : rint(x); }
static inline double clpy_m_rsqrt(double x) { return 1.0 / clpy_m_sqrt(x); }
static inline double clpy_m_sign(double x) { return x != x ? 0.0 : x > 0 ? 1.0 : x < 0 ? -1.0 : x; }
/* math.py _round: halfway cases away from zero */
static inline double clpy_m_round(double x) {
    double t = clpy_m_trunc(x);
    return fabs(x - t) >= 0.5 ? t + clpy_m_sign(x) : t;
}
static inline double clpy_m_acospi(double x) { return clpy_m_acos(x) / CLPY_PI; }
static inline double clpy_m_asinpi(double x) { return clpy_m_asin(x) / CLPY_PI; }
static inline double clpy_m_atanpi(double x) { return clpy_m_atan(x) / CLPY_PI; }
static inline double clpy_m_pow(double x, double y);
static inline double clpy_m_exp10(double x) { return clpy_m_pow(10.0, x); }
/* math.py _reduce2, _sinpi, _cospi, _tanpi */
static inline double clpy_m_reduce2(double x) { return x - 2.0 * clpy_m_rint(x * 0.5); }
static inline double clpy_m_sinpi(double x) {
    if (isinf(x)) return clpy_qnan();
    double r = clpy_m_reduce2(x);
    if (r == clpy_m_trunc(r)) return copysign(0.0, x);
    return clpy_m_sin(CLPY_PI * r);
}
static inline double clpy_m_cospi(double x) {
    if (isinf(x)) return clpy_qnan();
    /* cos(pi * |NaN|): the NaN positive (a compiler folds cos(fabs(r)) to cos(r)) */
    if (x != x) return clpy_bitsd(clpy_dbits(x + x) & 0x7fffffffffffffffull);
    double r = fabs(clpy_m_reduce2(x));
    if (r == 0.0) return 1.0;
    if (r == 1.0) return -1.0;
    if (r == 0.5) return 0.0;
    return clpy_m_cos(CLPY_PI * r);
}
static inline double clpy_m_tanpi(double x) {
    if (isinf(x)) return clpy_qnan();
    double n = clpy_m_rint(x), r = x - n;
    double s = fmod(n, 2.0) == 0 ? 1.0 : -1.0;
    if (fabs(r) == 0.5) return copysign(INFINITY, r) * s;
    if (r == 0) return copysign(0.0, x) * s;
    return clpy_m_tan(CLPY_PI * r);
}
/* math.py _logb */
static inline double clpy_m_logb(double x) {
    if (x != x) return clpy_qnan();
    if (isinf(x)) return INFINITY;
    if (x == 0) return -INFINITY;
    int e;
    frexp(x, &e);
    return (double)(e - 1);
}

/* ------------------------------------------------------------------------ integer built-ins
 * sim/builtins/integer.py: exact values, saturated or wrapped to the type; __int128 holds
 * every intermediate (GCC and clang on 64-bit targets). T: the type, U: its unsigned twin,
 * B: its width in bits. */
#define CLPY_INT(T, U, B, LO, HI)                                                            \
    static inline T clpy_clz_##T(T x) {                                                      \
        return (T)((U)x == 0 ? (B) : __builtin_clzll((unsigned long long)(U)x) - (64 - (B))); \
    }                                                                                        \
    static inline T clpy_ctz_##T(T x) {                                                      \
        return (T)((U)x == 0 ? (B) : __builtin_ctzll((unsigned long long)(U)x));             \
    }                                                                                        \
    static inline T clpy_popcount_##T(T x) {                                                 \
        return (T)__builtin_popcountll((unsigned long long)(U)x);                            \
    }                                                                                        \
    static inline T clpy_sat_##T(__int128 r) {                                               \
        return r < (__int128)(LO) ? (T)(LO) : r > (__int128)(HI) ? (T)(HI) : (T)r;           \
    }                                                                                        \
    static inline T clpy_add_sat_##T(T a, T b) { return clpy_sat_##T((__int128)a + b); }    \
    static inline T clpy_sub_sat_##T(T a, T b) { return clpy_sat_##T((__int128)a - b); }    \
    static inline T clpy_hadd_##T(T a, T b) { return (T)(((__int128)a + b) >> 1); }         \
    static inline T clpy_rhadd_##T(T a, T b) { return (T)(((__int128)a + b + 1) >> 1); }    \
    static inline T clpy_mul_hi_##T(T a, T b) { return (T)(((__int128)a * b) >> (B)); }     \
    static inline T clpy_mad_hi_##T(T a, T b, T c) { return (T)(clpy_mul_hi_##T(a, b) + c); } \
    static inline T clpy_rotate_##T(T a, T b) {                                              \
        U u = (U)a, s = (U)((U)b & (U)((B) - 1));                                            \
        return s == 0 ? a : (T)(U)((U)(u << s) | (U)(u >> ((B) - s)));                      \
    }                                                                                        \
    static inline U clpy_abs_##T(T x) { return x < 0 ? (U)((U)0 - (U)x) : (U)x; }            \
    static inline U clpy_abs_diff_##T(T a, T b) {                                            \
        return a > b ? (U)((U)a - (U)b) : (U)((U)b - (U)a);                                 \
    }                                                                                        \
    static inline T clpy_min_##T(T a, T b) { return a < b ? a : b; }                         \
    static inline T clpy_max_##T(T a, T b) { return a > b ? a : b; }                         \
    static inline T clpy_clamp_##T(T x, T lo, T hi) {                                        \
        return clpy_min_##T(clpy_max_##T(x, lo), hi);                                        \
    }
CLPY_INT(char, uchar, 8, SCHAR_MIN, SCHAR_MAX)
CLPY_INT(uchar, uchar, 8, 0, UCHAR_MAX)
CLPY_INT(short, ushort, 16, SHRT_MIN, SHRT_MAX)
CLPY_INT(ushort, ushort, 16, 0, USHRT_MAX)
CLPY_INT(int, uint, 32, INT_MIN, INT_MAX)
CLPY_INT(uint, uint, 32, 0, UINT_MAX)
CLPY_INT(long, ulong, 64, LONG_MIN, LONG_MAX)
#undef CLPY_INT
/* ulong needs the unsigned 128-bit type for its products and its saturation */
static inline ulong clpy_clz_ulong(ulong x) { return x == 0 ? 64 : (ulong)__builtin_clzll(x); }
static inline ulong clpy_ctz_ulong(ulong x) { return x == 0 ? 64 : (ulong)__builtin_ctzll(x); }
static inline ulong clpy_popcount_ulong(ulong x) { return (ulong)__builtin_popcountll(x); }
static inline ulong clpy_add_sat_ulong(ulong a, ulong b) { ulong r = a + b; return r < a ? ULONG_MAX : r; }
static inline ulong clpy_sub_sat_ulong(ulong a, ulong b) { return a < b ? 0 : a - b; }
static inline ulong clpy_hadd_ulong(ulong a, ulong b) { return (a >> 1) + (b >> 1) + (a & b & 1); }
static inline ulong clpy_rhadd_ulong(ulong a, ulong b) { return (a >> 1) + (b >> 1) + ((a | b) & 1); }
static inline ulong clpy_mul_hi_ulong(ulong a, ulong b) {
    return (ulong)(((unsigned __int128)a * b) >> 64);
}
static inline ulong clpy_mad_hi_ulong(ulong a, ulong b, ulong c) { return clpy_mul_hi_ulong(a, b) + c; }
static inline ulong clpy_rotate_ulong(ulong a, ulong b) {
    ulong s = b & 63;
    return s == 0 ? a : (a << s) | (a >> (64 - s));
}
static inline ulong clpy_abs_ulong(ulong x) { return x; }
static inline ulong clpy_abs_diff_ulong(ulong a, ulong b) { return a > b ? a - b : b - a; }
static inline ulong clpy_min_ulong(ulong a, ulong b) { return a < b ? a : b; }
static inline ulong clpy_max_ulong(ulong a, ulong b) { return a > b ? a : b; }
static inline ulong clpy_clamp_ulong(ulong x, ulong lo, ulong hi) {
    return clpy_min_ulong(clpy_max_ulong(x, lo), hi);
}
/* mad_sat: the exact a*b + c saturated */
#define CLPY_MAD_SAT(T)                                                                      \
    static inline T clpy_mad_sat_##T(T a, T b, T c) {                                        \
        return clpy_sat_##T((__int128)a * b + c);                                            \
    }
CLPY_MAD_SAT(char)
CLPY_MAD_SAT(uchar)
CLPY_MAD_SAT(short)
CLPY_MAD_SAT(ushort)
CLPY_MAD_SAT(int)
CLPY_MAD_SAT(uint)
CLPY_MAD_SAT(long)
#undef CLPY_MAD_SAT
static inline ulong clpy_mad_sat_ulong(ulong a, ulong b, ulong c) {
    unsigned __int128 r = (unsigned __int128)a * b + c;
    return r > ULONG_MAX ? ULONG_MAX : (ulong)r;
}

/* ------------------------------------------------------------------------ float built-ins
 * Functions NumPy computes in the argument's own precision (not through double). */
static inline float clpy_mad_f(float a, float b, float c) { return clpy_add_f(clpy_mul_f(a, b), c); }
static inline double clpy_mad_d(double a, double b, double c) { return clpy_add_d(clpy_mul_d(a, b), c); }
/* sim/fpexact.py fma: the correctly rounded value (the C library's fma is correctly
 * rounded too) where a*b + c in double is finite; NumPy's a*b + c otherwise, except that finite
 * a, b with an infinite c give c in double precision */
static inline float clpy_fma_f(float a, float b, float c) {
    double s = clpy_add_d(clpy_mul_d(clpy_wf(a), clpy_wf(b)), clpy_wf(c));
    return isfinite(s) ? fmaf(a, b, c) : (float)s;
}
static inline double clpy_fma_d(double a, double b, double c) {
    if (isfinite(a) && isfinite(b)) {
        if (isfinite(c)) return fma(a, b, c);
        if (isinf(c)) return c;
    }
    return clpy_add_d(clpy_mul_d(a, b), c);
}
static inline float clpy_mix_f(float x, float y, float a) {
    return clpy_add_f(x, clpy_mul_f(clpy_sub_f(y, x), a));
}
static inline double clpy_mix_d(double x, double y, double a) {
    return clpy_add_d(x, clpy_mul_d(clpy_sub_d(y, x), a));
}

/* binary math in double (sim/builtins/math.py) */
static inline double clpy_m_atan2(double y, double x) { return atan2(y, x); }
static inline double clpy_m_atan2pi(double y, double x) { return clpy_m_atan2(y, x) / CLPY_PI; }
static inline double clpy_m_copysign(double x, double y) { return copysign(x, y); }
static inline double clpy_m_fmod(double x, double y) { return fmod(x, y); }
static inline double clpy_m_hypot(double x, double y) { return hypot(x, y); }
/* math.py _pow: pow(x, +-0) and pow(+1, y) are 1 even for a NaN (C99 F.9.4.4; the C library
 * gives NaN for a signalling one), else a NaN argument quieted, x's before y's */
static inline double clpy_m_pow(double x, double y) {
    if (y == 0 || x == 1) return 1.0;
    if (x != x) return x + x;
    if (y != y) return y + y;
    return pow(x, y);
}
static inline double clpy_m_fmin(double x, double y) { return clpy_fmin_d(x, y); }
static inline double clpy_m_fmax(double x, double y) { return clpy_fmax_d(x, y); }
static inline double clpy_m_divide(double x, double y) { return x / y; }
static inline double clpy_m_recip(double x) { return 1.0 / x; }
static inline double clpy_m_fdim(double x, double y) {
    if (x != x || y != y) return clpy_qnan();
    return x > y ? x - y : 0.0;
}
static inline double clpy_m_maxmag(double x, double y) {
    double ax = fabs(x), ay = fabs(y);
    return ax > ay ? x : ay > ax ? y : clpy_fmax_d(x, y);
}
static inline double clpy_m_minmag(double x, double y) {
    double ax = fabs(x), ay = fabs(y);
    return ax < ay ? x : ay < ax ? y : clpy_fmin_d(x, y);
}
/* math.py _remainder */
static inline double clpy_m_remainder(double x, double y) {
    double ay = fabs(y);
    if (ay == 0 || isinf(x) || x != x || y != y) return clpy_qnan();
    if (isinf(ay)) return x;
    double r = fmod(x, 2.0 * ay), ar = fabs(r);
    bool odd = ar >= ay;
    if (odd) ar = ar - ay;
    bool flip = (2.0 * ar > ay) || ((2.0 * ar == ay) && odd);
    double res = flip ? ar - ay : ar;
    if (x < 0) res = -res;
    if (res == 0) res = copysign(0.0, x);
    return res;
}
/* math.py _powr */
static inline double clpy_m_powr(double x, double y) {
    if ((x < 0) || (x == 0 && y == 0) || (isinf(x) && y == 0) || (x == 1 && isinf(y)) ||
        x != x || y != y)
        return clpy_qnan();
    return clpy_m_pow(x == 0 ? fabs(x) : x, y);
}
static inline double clpy_m_pown(double x, int n) { return clpy_m_pow(x, (double)n); }
/* math.py _ilogb */
static inline int clpy_m_ilogb(double x) {
    if (x != x || x == 0) return INT_MIN;
    if (isinf(x)) return INT_MAX;
    int e;
    frexp(x, &e);
    return e - 1;
}
/* common.py _smoothstep: np.clip keeps NaN and -0 */
static inline double clpy_m_smoothstep(double e0, double e1, double x) {
    double t = clpy_div_d(clpy_sub_d(x, e0), clpy_sub_d(e1, e0));
    if (t != t) return t; /* NumPy's t*t*(3 - 2t) keeps t's NaN; clang may flip its sign */
    t = t < 0.0 ? 0.0 : t > 1.0 ? 1.0 : t;
    return t * t * (3.0 - 2.0 * t);
}
static inline double clpy_m_degrees(double r) { return r * (180.0 / CLPY_PI); }
static inline double clpy_m_radians(double d) { return d * (CLPY_PI / 180.0); }
static inline ulong clpy_sat_ulong(__int128 r) {
    return r < 0 ? 0 : r > (__int128)ULONG_MAX ? ULONG_MAX : (ulong)r;
}

/* ------------------------------------------------------------------------ convert_T_rtX
 * sim/builtins/conversions.py directed_float: double to float rounded to nearest, then one
 * step toward the mode's direction where that passed the value */
static inline float clpy_d2f_rtz(double x) {
    float f = (float)x;
    return fabs((double)f) > fabs(x) ? nextafterf(f, 0.0f) : f;
}
static inline float clpy_d2f_rtp(double x) {
    float f = (float)x;
    return (double)f < x ? nextafterf(f, INFINITY) : f;
}
static inline float clpy_d2f_rtn(double x) {
    float f = (float)x;
    return (double)f > x ? nextafterf(f, -INFINITY) : f;
}
/* conversions.py float_from_int: the nearest float F, compared exactly with the integer
 * (gt: F is above it, lt: below), one step toward the mode's direction */
#define CLPY_I2F(F, S, NEXT, T, W, TOP)                                                      \
    static inline int clpy_i2##S##_cmp_##T(T x, F f) {                                       \
        double fd = (double)f;                                                               \
        if (fd >= (TOP)) return 1;                                                           \
        W fi = (W)fd;                                                                        \
        return fi > (W)x ? 1 : fi < (W)x ? -1 : 0;                                           \
    }                                                                                        \
    static inline F clpy_i2##S##_rtz_##T(T x) {                                              \
        F f = (F)x;                                                                          \
        int c = clpy_i2##S##_cmp_##T(x, f);                                                  \
        return (c > 0 && x >= 0) || (c < 0 && x < 0) ? NEXT(f, (F)0) : f;                   \
    }                                                                                        \
    static inline F clpy_i2##S##_rtp_##T(T x) {                                              \
        F f = (F)x;                                                                          \
        return clpy_i2##S##_cmp_##T(x, f) < 0 ? NEXT(f, (F)INFINITY) : f;                   \
    }                                                                                        \
    static inline F clpy_i2##S##_rtn_##T(T x) {                                              \
        F f = (F)x;                                                                          \
        return clpy_i2##S##_cmp_##T(x, f) > 0 ? NEXT(f, -(F)INFINITY) : f;                  \
    }
CLPY_I2F(float, f, nextafterf, int, long, 9223372036854775808.0)
CLPY_I2F(float, f, nextafterf, uint, ulong, 18446744073709551616.0)
CLPY_I2F(float, f, nextafterf, long, long, 9223372036854775808.0)
CLPY_I2F(float, f, nextafterf, ulong, ulong, 18446744073709551616.0)
CLPY_I2F(double, d, nextafter, long, long, 9223372036854775808.0)
CLPY_I2F(double, d, nextafter, ulong, ulong, 18446744073709551616.0)
#undef CLPY_I2F

/* math.py _rootn: |x| to the power 1/n in long double (NumPy's longdouble power is the C
 * library's powl), rounded to double, then the sign and zero rules */
static inline double clpy_m_rootn(double x, int n) {
    if (n == 0) return clpy_qnan();
    bool odd = (n & 1) != 0;
    if (x == 0 && n < 0) return odd ? copysign(INFINITY, x) : INFINITY;
    if (x == 0 && n > 0) return odd ? x : 0.0;
    double mag = (double)powl(fabsl((long double)x), 1.0L / (long double)n);
    if (x < 0) return odd ? -mag : clpy_qnan();
    return mag;
}

#endif
