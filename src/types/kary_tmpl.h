/*
 * kary_tmpl.h — template of the portable k-ary reduction loop.  Included by the scalar
 * kernel files once per element type, with KT (the C element type) and KN(x) (a name
 * suffixer, e.g. x##_u32) defined; both are undefined again at the end.
 *
 * KN(kary)(dst, srcs, n, count, op, fin) computes dst[i] = fin(((s0 ∘ s1) ∘ s2) ∘ …)
 * block by block: the running values live in a local block (so dst may be identical to
 * any source, and the fixed-length inner loops vectorise), each source is read once.
 * fin == NULL means identity.
 */
#ifndef KT
#error "define KT and KN before including kary_tmpl.h"
#endif

#define KBLK (4096 / sizeof(KT))

static inline __attribute__((always_inline)) void KN(block)(KT *restrict acc,
        const KT *const *p, int n, size_t len, KT (*op)(KT, KT)) {
    for (size_t i = 0; i < len; i++)
        acc[i] = op(p[0][i], p[1][i]);
    for (int k = 2; k < n; k++) {
        const KT *s = p[k];
        for (size_t i = 0; i < len; i++)
            acc[i] = op(acc[i], s[i]);
    }
}

static inline __attribute__((always_inline)) void KN(store)(KT *d, const KT *restrict acc,
        size_t len, KT (*fin)(KT)) {
    if (!fin) {
        memcpy(d, acc, len * sizeof(KT));
        return;
    }
    for (size_t i = 0; i < len; i++)
        d[i] = fin(acc[i]);
}

static inline __attribute__((always_inline)) void KN(kary)(void *dst, const void *const *srcs,
        int n, size_t count, KT (*op)(KT, KT), KT (*fin)(KT)) {
    KT acc[KBLK];
    const KT *p[COLLIE_KARY_MAX];
    KT *d = dst;
    for (size_t off = 0; off < count; off += KBLK) {
        size_t len = count - off < KBLK ? count - off : KBLK;
        for (int k = 0; k < n; k++)
            p[k] = (const KT *)srcs[k] + off;
        if (len == KBLK) {   /* constant trip counts: the loops vectorise at -O2 */
            KN(block)(acc, p, n, KBLK, op);
            KN(store)(d + off, acc, KBLK, fin);
        } else {
            KN(block)(acc, p, n, len, op);
            KN(store)(d + off, acc, len, fin);
        }
    }
}

#undef KBLK
#undef KT
#undef KN
