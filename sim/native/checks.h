/* clpy native engine: the checkers' detectors (sim/native/checks.py). Each detector finds
   every launch on which the NumPy engine's checker could report something (false alarms are
   allowed, misses are not): it sets a bit of the thread's status word, clpy_run returns it,
   and the runner then runs the whole launch again on the NumPy engine from the untouched
   inputs, which decides and reports. After a detection the kernel goes on safely (an index
   out of bounds is element 0, a zero divisor 1: the NumPy engine's values); groups not yet
   started are skipped. The text is pasted into the generated source (so it is part of the
   compiled kernel's cache key). */
#ifndef CLPY_NATIVE_CHECKS_H
#define CLPY_NATIVE_CHECKS_H

#define CLPY_CK_BOUNDS 1
#define CLPY_CK_DIV 2
#define CLPY_CK_BARRIER 4
#define CLPY_CK_UNINIT 8
#define CLPY_CK_RACE 16
#define CLPY_CK_PROGRESS 32
#define CLPY_CK_ASSERT 64
#define CLPY_CK_EPOCH 128 /* more barriers than a record's epoch field holds */

static __thread int clpy_ck_st;

/* ---- bounds: every element index (pointers, local and private arrays, each dimension)
   goes through clpy_ix; out of [0, n) is element 0 as before, and a detection */
static inline int64_t clpy_ixc(int64_t i, int64_t n) {
    if ((uint64_t)i < (uint64_t)n) return i;
    clpy_ck_st |= CLPY_CK_BOUNDS;
    return 0;
}

/* the kernel body's own: into a local status word of clpy_run (no thread-local store in
   its loops); device functions, compiled before it, use the thread's */
static inline int64_t clpy_ixl(int64_t i, int64_t n, int *st) {
    int ok = (uint64_t)i < (uint64_t)n;
    *st |= ok ? 0 : CLPY_CK_BOUNDS;
    return ok ? i : 0;
}

/* ---- integer division by zero (/, %, //, % of Python): the divisor passes through */
#define CLPY_CKZ(T)                                                                          \
    static inline T clpy_ckz_##T(T b) {                                                      \
        if (b == 0) clpy_ck_st |= CLPY_CK_DIV;                                               \
        return b;                                                                            \
    }
#define CLPY_CKZL(T)                                                                         \
    static inline T clpy_ckzl_##T(T b, int *st) {                                            \
        *st |= b == 0 ? CLPY_CK_DIV : 0;                                                     \
        return b;                                                                            \
    }
CLPY_CKZL(int8_t)
CLPY_CKZL(int16_t)
CLPY_CKZL(int32_t)
CLPY_CKZL(int64_t)
CLPY_CKZL(uint8_t)
CLPY_CKZL(uint16_t)
CLPY_CKZL(uint32_t)
CLPY_CKZL(uint64_t)
CLPY_CKZ(int8_t)
CLPY_CKZ(int16_t)
CLPY_CKZ(int32_t)
CLPY_CKZ(int64_t)
CLPY_CKZ(uint8_t)
CLPY_CKZ(uint16_t)
CLPY_CKZ(uint32_t)
CLPY_CKZ(uint64_t)

/* ---- shadow records. One int64 per element for its last writer and one for its readers;
   zero: none. A single work-item: (id + 1) << 24 | epoch (id: the local id in local memory,
   whose records are per group; the global linear id in global memory). Several readers:
   local memory (CLPY_SEVERAL + 1) << 24 | epoch; global memory -((group + 1) << 24 | epoch)
   for several of one group, CLPY_MULTI for readers in several groups. The epoch counts the
   group's barriers: records of an earlier epoch of the same group are ordered before every
   access (stale); any two accesses of different groups are concurrent (sim/races.py). */
#define CLPY_EM ((int64_t)0xFFFFFF)
#define CLPY_SEVERAL ((int64_t)0x3FFFFFFF)
#define CLPY_MULTI INT64_MIN

static inline int clpy_ck_barrier(const unsigned char *m, int64_t n, int64_t *ep) {
    /* a barrier: every work-item of the group must be here (the mask of the construct) */
    int all = 1;
    for (int64_t i = 0; i < n; i++) all &= m[i] != 0;
    if (++*ep >= CLPY_EM) clpy_ck_st |= CLPY_CK_EPOCH;
    return all;
}

/* local memory: read and write of element k by local id wi in epoch ep */
static inline void clpy_ck_lr(int64_t *w, int64_t *r, int64_t k, int64_t wi, int64_t ep,
                              int uninit, int races, int *st) {
    int64_t x = w[k];
    int other = x != 0 && (x & CLPY_EM) == ep && (x >> 24) != wi + 1;
    /* uninit: never written, or written in this interval by another work-item only (the
       NumPy engine runs the group in lockstep: that write may come after this read) */
    if (other) *st |= races ? CLPY_CK_RACE : CLPY_CK_UNINIT;
    if (uninit && x == 0) *st |= CLPY_CK_UNINIT;
    if (races) {
        int64_t y = r[k];
        int64_t me = ((wi + 1) << 24) | ep;
        if (y == 0 || (y & CLPY_EM) != ep || (y >> 24) == wi + 1)
            r[k] = me;
        else
            r[k] = ((CLPY_SEVERAL + 1) << 24) | ep;
    }
}

/* a read of local memory in a barrier interval in which nothing writes that memory (the
   generator proved it: sim/native/checks.py ``_isolated``): no writer of this interval, and no
   later write to conflict with; only the uninitialised-read test */
static inline void clpy_ck_lro(const int64_t *w, int64_t k, int uninit, int *st) {
    if (uninit) *st |= w[k] == 0 ? CLPY_CK_UNINIT : 0;
}

/* whether every element of a local memory was written in this group (its shadow's writer
   records all set): then reads in an interval that writes it no more need no test */
static inline int clpy_ck_allinit(const int64_t *w, int64_t n) {
    int all = 1;
    for (int64_t i = 0; i < n; i++) all &= w[i] != 0;
    return all;
}

static inline void clpy_ck_lw(int64_t *w, int64_t *r, int64_t k, int64_t wi, int64_t ep,
                              int races, int *st) {
    if (races) {
        int64_t x = w[k], y = r[k];
        if ((x != 0 && (x & CLPY_EM) == ep && (x >> 24) != wi + 1) ||
            (y != 0 && (y & CLPY_EM) == ep && (y >> 24) != wi + 1))
            *st |= CLPY_CK_RACE;
    }
    w[k] = ((wi + 1) << 24) | ep;
}

/* global memory: whether the single record x (> 0) is concurrent with work-item wid1 - 1 of
   group grp in epoch ep */
static inline int clpy_ck_conc(int64_t x, int64_t wid1, int64_t grp, int64_t ep, int64_t wg) {
    int64_t o = x >> 24;
    if (o == wid1) return 0;
    if ((o - 1) / wg != grp) return 1;
    return (x & CLPY_EM) == ep;
}

static inline void clpy_ck_gr(int64_t *w, int64_t *r, int64_t k, int64_t grp, int64_t wi,
                              int64_t wg, int64_t ep, int *st) {
    int64_t wid1 = grp * wg + wi + 1, me = (wid1 << 24) | ep;
    int64_t x = w[k];
    if (x != 0 && x != me && clpy_ck_conc(x, wid1, grp, ep, wg)) *st |= CLPY_CK_RACE;
    int64_t y = r[k];
    if (y == me) return;
    if (y == 0) {
        r[k] = me;
    } else if (y > 0) {
        int64_t o = y >> 24;
        if (o == wid1)
            r[k] = me;
        else if ((o - 1) / wg == grp)
            r[k] = (y & CLPY_EM) != ep ? me : -(((grp + 1) << 24) | ep);
        else
            r[k] = CLPY_MULTI;
    } else if (y != CLPY_MULTI) {
        int64_t g1 = (-y) >> 24;
        if (g1 - 1 != grp)
            r[k] = CLPY_MULTI;
        else if (((-y) & CLPY_EM) != ep)
            r[k] = me;
    }
}

static inline void clpy_ck_gw(int64_t *w, int64_t *r, int64_t k, int64_t grp, int64_t wi,
                              int64_t wg, int64_t ep, int *st) {
    int64_t wid1 = grp * wg + wi + 1, me = (wid1 << 24) | ep;
    int64_t x = w[k];
    if (x != 0 && x != me && clpy_ck_conc(x, wid1, grp, ep, wg)) *st |= CLPY_CK_RACE;
    int64_t y = r[k];
    if (y > 0) {
        if (y != me && clpy_ck_conc(y, wid1, grp, ep, wg)) *st |= CLPY_CK_RACE;
    } else if (y < 0) {
        if (y == CLPY_MULTI || ((-y) >> 24) - 1 != grp || ((-y) & CLPY_EM) == ep)
            *st |= CLPY_CK_RACE;
    }
    w[k] = me;
}

/* memories reached through pointers the generator cannot trace (pointer variables, device
   functions' pointer parameters): found by their base address in the thread's table of the
   launch's shadowed memories, which the kernel keeps up to date (group, epoch) */
#define CLPY_CK_MAXMEM 32
typedef struct {
    int64_t grp, ep, wg;
    int n;
    const void *base[CLPY_CK_MAXMEM];
    int64_t *w[CLPY_CK_MAXMEM], *r[CLPY_CK_MAXMEM];
    char global[CLPY_CK_MAXMEM];
} clpy_ck_ctx;
static __thread clpy_ck_ctx clpy_ckx;

static inline void clpy_ck_dyn(const void *base, int64_t k, int64_t wi, int write) {
    clpy_ck_ctx *c = &clpy_ckx;
    for (int i = 0; i < c->n; i++) {
        if (c->base[i] != base) continue;
        if (c->global[i]) {
            if (write)
                clpy_ck_gw(c->w[i], c->r[i], k, c->grp, wi, c->wg, c->ep, &clpy_ck_st);
            else
                clpy_ck_gr(c->w[i], c->r[i], k, c->grp, wi, c->wg, c->ep, &clpy_ck_st);
        } else if (write) {
            clpy_ck_lw(c->w[i], c->r[i], k, wi, c->ep, CLPY_CK_RACES_ON, &clpy_ck_st);
        } else {
            clpy_ck_lr(c->w[i], c->r[i], k, wi, c->ep, CLPY_CK_UNINIT_ON, CLPY_CK_RACES_ON,
                       &clpy_ck_st);
        }
        return;
    }
}

/* groups run on several threads, each with its own global shadows: any two of them are of
   different groups, so an element that two threads accessed, one at least writing, is a race
   (within a thread the shadows found the rest) */
int clpy_ck_cross(int64_t *const *sh, int nt, int64_t n) {
    for (int64_t k = 0; k < n; k++) {
        int acc = 0, wr = 0;
        for (int t = 0; t < nt; t++) {
            int64_t w = sh[t][k], r = sh[t][n + k];
            acc += (w | r) != 0;
            wr |= w != 0;
        }
        if (acc >= 2 && wr) return CLPY_CK_RACE;
    }
    return 0;
}

/* ---- progress: a while loop's trips, counted per work-item (or per group for a loop run
   once per group); past the bound, a detection and the loop ends */
static inline int clpy_ck_trip(int64_t *n, int64_t bound) {
    if (++*n <= bound) return 1;
    clpy_ck_st |= CLPY_CK_PROGRESS;
    return 0;
}

#endif
