/* test_engine.c — the simulation engine (sim/) against independent references.
 *
 * Every expected value is worked out here: by hand (written in the comment
 * next to it), from a closed form, from a statistical table, or by a
 * brute-force reference implemented in this file (qsort of (t, seq) for the
 * event list, a sorted copy for quantiles, a direct two-pass MSER). None is
 * copied from the output of the code under test. Random inputs come from
 * GSL's MT19937 with fixed seeds, so every run checks the same cases. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "sim/ev.h"
#include "sim/hist.h"
#include "sim/jsonw.h"
#include "sim/mser.h"
#include "sim/out.h"
#include "sim/rep.h"
#include "sim/rng.h"
#include "sim/stats.h"
#include "sim/tw.h"
#include "tests/kit_files.h"

static gsl_rng *test_rng(unsigned long seed)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    cr_assert_not_null(r);
    gsl_rng_set(r, seed);
    return r;
}

/* ======================================================================
 * ev — binary heap ordered by (t, insertion order)
 * ====================================================================== */

typedef struct {
    double t;
    uint64_t seq;      /* insertion number, counted by the test */
    uint32_t kind, a;
    uint64_t b;
} ref_ev;

static int ref_ev_cmp(const void *x, const void *y)
{
    const ref_ev *p = x, *q = y;
    if (p->t < q->t) return -1;
    if (p->t > q->t) return 1;
    return p->seq < q->seq ? -1 : p->seq > q->seq;
}

/* A timestamp with many ties: mostly one of 50 integers, sometimes a
 * fraction, sometimes 0. */
static double tie_heavy_time(gsl_rng *r)
{
    unsigned long u = gsl_rng_uniform_int(r, 10);
    if (u < 7)
        return (double)gsl_rng_uniform_int(r, 50);
    if (u < 9)
        return gsl_rng_uniform(r) * 50.0;
    return 0.0;
}

static void assert_ev_eq(const ev_t *got, const ref_ev *want, size_t i)
{
    cr_assert(got->t == want->t && got->seq == want->seq && got->kind == want->kind &&
              got->a == want->a && got->b == want->b,
              "pop %zu: got (t=%.17g seq=%llu kind=%u a=%u b=%llu), want (t=%.17g seq=%llu "
              "kind=%u a=%u b=%llu)", i, got->t, (unsigned long long)got->seq, got->kind,
              got->a, (unsigned long long)got->b, want->t, (unsigned long long)want->seq,
              want->kind, want->a, (unsigned long long)want->b);
}

Test(ev, random_pushes_pop_in_t_then_insertion_order)
{
    enum { N = 5000 };
    ref_ev *ref = malloc(N * sizeof *ref);
    cr_assert_not_null(ref);
    gsl_rng *r = test_rng(101);
    ev_queue q;
    cr_assert_eq(ev_init(&q, 16), 0);
    for (size_t i = 0; i < N; i++) {
        double t = tie_heavy_time(r);
        uint32_t kind = (uint32_t)(i % 7), a = (uint32_t)(i * 3u);
        uint64_t b = (uint64_t)i * 0x9e3779b97f4a7c15ULL;
        ref[i] = (ref_ev){ t, i, kind, a, b };
        cr_assert_eq(ev_push(&q, t, kind, a, b), 0);
        cr_assert_eq(ev_len(&q), i + 1);
    }
    qsort(ref, N, sizeof *ref, ref_ev_cmp);
    for (size_t i = 0; i < N; i++) {
        const ev_t *pk = ev_peek(&q);
        cr_assert_not_null(pk);
        ev_t peeked = *pk, e;
        cr_assert_eq(ev_pop(&q, &e), 0);
        assert_ev_eq(&e, &ref[i], i);
        cr_assert(memcmp(&peeked, &e, sizeof e) == 0, "peek differs from pop at %zu", i);
        cr_assert_eq(ev_len(&q), N - 1 - i);
    }
    ev_t e;
    cr_assert_eq(ev_pop(&q, &e), -1, "pop on an empty queue must fail");
    cr_assert_null(ev_peek(&q));
    ev_free(&q);
    gsl_rng_free(r);
    free(ref);
}

/* Reference: an unsorted array; pop = linear scan for the (t, seq) minimum. */
Test(ev, interleaved_push_pop_matches_linear_scan)
{
    enum { OPS = 12000 };
    ref_ev *ref = malloc(OPS * sizeof *ref);
    cr_assert_not_null(ref);
    size_t nref = 0;
    uint64_t seq = 0;
    double now = 0.0;                 /* DES-style: new events are never in the past */
    gsl_rng *r = test_rng(202);
    ev_queue q;
    cr_assert_eq(ev_init(&q, 1), 0);
    for (size_t op = 0; op < OPS; op++) {
        int push = nref == 0 || gsl_rng_uniform(r) < 0.55;
        if (push) {
            double t = now + (double)gsl_rng_uniform_int(r, 4) * 0.5;  /* many ties */
            uint32_t kind = (uint32_t)gsl_rng_uniform_int(r, 5);
            ref[nref++] = (ref_ev){ t, seq, kind, (uint32_t)op, seq ^ 0xabcdefULL };
            cr_assert_eq(ev_push(&q, t, kind, (uint32_t)op, seq ^ 0xabcdefULL), 0);
            seq++;
        } else {
            size_t best = 0;
            for (size_t i = 1; i < nref; i++)
                if (ref_ev_cmp(&ref[i], &ref[best]) < 0)
                    best = i;
            ev_t e;
            cr_assert_eq(ev_pop(&q, &e), 0);
            assert_ev_eq(&e, &ref[best], op);
            cr_assert(e.t >= now, "time went backwards: %g < %g", e.t, now);
            now = e.t;
            ref[best] = ref[--nref];
        }
        cr_assert_eq(ev_len(&q), nref);
    }
    /* Drain the rest. */
    while (nref) {
        size_t best = 0;
        for (size_t i = 1; i < nref; i++)
            if (ref_ev_cmp(&ref[i], &ref[best]) < 0)
                best = i;
        ev_t e;
        cr_assert_eq(ev_pop(&q, &e), 0);
        assert_ev_eq(&e, &ref[best], OPS + nref);
        ref[best] = ref[--nref];
    }
    cr_assert_eq(ev_len(&q), 0);
    ev_free(&q);
    gsl_rng_free(r);
    free(ref);
}

Test(ev, grows_past_initial_capacity_one)
{
    for (size_t cap0 = 0; cap0 <= 1; cap0++) {   /* 0 is documented as "at least 1" */
        ev_queue q;
        cr_assert_eq(ev_init(&q, cap0), 0);
        cr_assert_geq(q.cap, 1);
        /* Descending times: every push sifts to the root. */
        for (uint32_t i = 0; i < 1000; i++) {
            cr_assert_eq(ev_push(&q, 1000.0 - i, 1, i, i), 0);
            cr_assert_geq(q.cap, q.n);
        }
        for (uint32_t i = 0; i < 1000; i++) {
            ev_t e;
            cr_assert_eq(ev_pop(&q, &e), 0);
            cr_assert_eq(e.t, (double)(i + 1));       /* 1, 2, ..., 1000 */
            cr_assert_eq(e.a, 999 - i);
            cr_assert_eq(e.seq, 999 - i);
        }
        ev_free(&q);
    }
}

Test(ev, all_equal_times_pop_fifo)
{
    ev_queue q;
    cr_assert_eq(ev_init(&q, 1), 0);
    for (uint32_t i = 0; i < 3000; i++)
        cr_assert_eq(ev_push(&q, 7.25, 0, i, 0), 0);
    for (uint32_t i = 0; i < 3000; i++) {
        ev_t e;
        cr_assert_eq(ev_pop(&q, &e), 0);
        cr_assert_eq(e.a, i, "FIFO among ties: pop %u gave a=%u", i, e.a);
    }
    ev_free(&q);
}

Test(ev, clear_resets_tie_break)
{
    ev_queue q;
    cr_assert_eq(ev_init(&q, 2), 0);
    for (uint32_t i = 0; i < 10; i++)
        cr_assert_eq(ev_push(&q, 1.0, 0, i, 0), 0);
    ev_t e;
    cr_assert_eq(ev_pop(&q, &e), 0);
    ev_clear(&q);
    cr_assert_eq(ev_len(&q), 0);
    cr_assert_null(ev_peek(&q));
    cr_assert_eq(ev_pop(&q, &e), -1);
    /* After clear, numbering restarts at 0 and ties pop in the new insertion order. */
    cr_assert_eq(ev_push(&q, 2.0, 9, 100, 0), 0);
    cr_assert_eq(ev_push(&q, 1.0, 9, 101, 0), 0);
    cr_assert_eq(ev_push(&q, 2.0, 9, 102, 0), 0);
    cr_assert_eq(ev_push(&q, 1.0, 9, 103, 0), 0);
    const uint32_t want_a[] = { 101, 103, 100, 102 };
    const uint64_t want_seq[] = { 1, 3, 0, 2 };
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(ev_pop(&q, &e), 0);
        cr_assert_eq(e.a, want_a[i], "pop %d: a=%u want %u", i, e.a, want_a[i]);
        cr_assert_eq(e.seq, want_seq[i], "pop %d: seq=%llu want %llu", i,
                     (unsigned long long)e.seq, (unsigned long long)want_seq[i]);
    }
    ev_free(&q);
}

Test(ev, negative_and_tiny_times_order)
{
    /* Hand-ordered: -1e300 < -1 < -0.5 < 0 (two ties: 0.0 then -0.0, equal) < 5e-324 < 1 < 1e300 */
    const double ts[] = { 1.0, 0.0, -1.0, 1e300, 5e-324, -0.0, -1e300, -0.5 };
    const uint32_t want[] = { 6, 2, 7, 1, 5, 4, 0, 3 };   /* indices into ts */
    ev_queue q;
    cr_assert_eq(ev_init(&q, 1), 0);
    for (uint32_t i = 0; i < 8; i++)
        cr_assert_eq(ev_push(&q, ts[i], 0, i, 0), 0);
    for (int i = 0; i < 8; i++) {
        ev_t e;
        cr_assert_eq(ev_pop(&q, &e), 0);
        cr_assert_eq(e.a, want[i], "pop %d: got index %u, want %u", i, e.a, want[i]);
    }
    ev_free(&q);
}

/* ======================================================================
 * hist — log-linear histogram
 * ====================================================================== */

static int dbl_cmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* True nearest-rank quantile of a sorted array: rank = ceil(q n), 1-based. */
static double nearest_rank(const double *sorted, size_t n, double q)
{
    if (q <= 0.0)
        return sorted[0];
    size_t rank = (size_t)ceil(q * (double)n);
    if (rank < 1) rank = 1;
    if (rank > n) rank = n;
    return sorted[rank - 1];
}

/* 0.05 % of the true value plus a tiny absolute slack. */
static void assert_quantile_ok(const hist_t *h, const double *sorted, size_t n, double q)
{
    double want = nearest_rank(sorted, n, q);
    double got = hist_quantile(h, q);
    cr_assert(fabs(got - want) <= 5e-4 * fabs(want) + 1e-300,
              "q=%.6g (n=%zu): got %.17g, want %.17g (rel err %.3g)", q, n, got, want,
              want ? fabs(got - want) / want : 0.0);
}

static const double QS[] = { 0.0, 1e-6, 1e-4, 0.001, 0.01, 0.05, 0.1, 0.25, 0.333, 0.5, 0.6,
                             0.75, 0.9, 0.95, 0.99, 0.995, 0.999, 0.9999, 0.99999, 1.0 };

Test(hist, quantiles_within_0_05_percent_over_many_decades)
{
    enum { N = 100000 };
    double *v = malloc(N * sizeof *v);
    cr_assert_not_null(v);
    gsl_rng *r = test_rng(303);
    hist_t h;
    cr_assert_eq(hist_init(&h), 0);
    double sum = 0.0, mn = INFINITY, mx = -INFINITY;
    for (size_t i = 0; i < N; i++) {
        double x;
        if (i % 10 == 0) {
            /* exact edges: powers of two and neighbours of sub-bucket edges */
            int e = (int)gsl_rng_uniform_int(r, 64) - 20;              /* -20 .. 43 */
            double j = (double)gsl_rng_uniform_int(r, 1024);
            x = ldexp(1.0 + j / 1024.0, e);
            if (i % 30 == 10) x = nextafter(x, INFINITY);
            if (i % 30 == 20 && e > -20) x = nextafter(x, 0.0);
        } else {
            x = exp2(-19.9 + 63.8 * gsl_rng_uniform(r));           /* log-uniform */
        }
        v[i] = x;
        hist_record(&h, x);
        sum += x;
        if (x < mn) mn = x;
        if (x > mx) mx = x;
    }
    cr_assert_eq(h.n, N);
    cr_assert_eq(h.n_low, 0);
    cr_assert_eq(h.n_high, 0);
    cr_assert_eq(h.min, mn);
    cr_assert_eq(h.max, mx);
    cr_assert_eq(h.sum, sum);                      /* same additions in the same order */
    cr_assert_eq(hist_mean(&h), sum / N);
    qsort(v, N, sizeof *v, dbl_cmp);
    for (size_t k = 0; k < sizeof QS / sizeof QS[0]; k++)
        assert_quantile_ok(&h, v, N, QS[k]);
    for (int k = 0; k < 2000; k++)
        assert_quantile_ok(&h, v, N, gsl_rng_uniform(r));
    /* q = 1/n, 2/n, ..., around each rank boundary */
    for (size_t k = 1; k <= 50; k++)
        assert_quantile_ok(&h, v, N, (double)k / N);
    cr_assert_eq(hist_quantile(&h, 0.0), mn);
    cr_assert_eq(hist_quantile(&h, 1.0), mx);
    hist_free(&h);
    gsl_rng_free(r);
    free(v);
}

Test(hist, quantiles_of_a_narrow_heavy_tailed_sample)
{
    /* Many repeated values (ties across ranks) and a long tail. */
    enum { N = 20000 };
    double *v = malloc(N * sizeof *v);
    cr_assert_not_null(v);
    gsl_rng *r = test_rng(304);
    hist_t h;
    cr_assert_eq(hist_init(&h), 0);
    for (size_t i = 0; i < N; i++) {
        double u = gsl_rng_uniform_pos(r);
        double x = i % 3 ? 12.5 + floor(8.0 * u) : 3.0 / pow(u, 0.7);   /* Pareto-ish tail */
        v[i] = x;
        hist_record(&h, x);
    }
    qsort(v, N, sizeof *v, dbl_cmp);
    for (size_t k = 0; k < sizeof QS / sizeof QS[0]; k++)
        assert_quantile_ok(&h, v, N, QS[k]);
    for (int k = 0; k < 1000; k++)
        assert_quantile_ok(&h, v, N, gsl_rng_uniform(r));
    hist_free(&h);
    gsl_rng_free(r);
    free(v);
}

Test(hist, small_samples_every_rank)
{
    /* n = 1..40: every q = k/n and the midpoints between them. */
    gsl_rng *r = test_rng(305);
    hist_t h;
    cr_assert_eq(hist_init(&h), 0);
    double v[40];
    for (size_t n = 1; n <= 40; n++) {
        hist_reset(&h);
        for (size_t i = 0; i < n; i++) {
            v[i] = exp2(-5.0 + 20.0 * gsl_rng_uniform(r));
            hist_record(&h, v[i]);
        }
        qsort(v, n, sizeof *v, dbl_cmp);
        for (size_t k = 0; k <= 2 * n; k++)
            assert_quantile_ok(&h, v, n, (double)k / (double)(2 * n));
    }
    hist_free(&h);
    gsl_rng_free(r);
}

Test(hist, single_value_is_reported_exactly)
{
    /* The bucket midpoint is clamped to [min, max] = [v, v]. */
    const double vals[] = { 1.0, 3.14159, 0x1p-20, 0x1.fffffffffffffp43, 1e-3, 123456.789 };
    hist_t h;
    cr_assert_eq(hist_init(&h), 0);
    for (size_t k = 0; k < sizeof vals / sizeof vals[0]; k++) {
        hist_reset(&h);
        hist_record(&h, vals[k]);
        for (size_t j = 0; j < sizeof QS / sizeof QS[0]; j++)
            cr_assert_eq(hist_quantile(&h, QS[j]), vals[k], "v=%a q=%g: got %a", vals[k],
                         QS[j], hist_quantile(&h, QS[j]));
        cr_assert_eq(hist_mean(&h), vals[k]);
    }
    hist_free(&h);
}

Test(hist, powers_of_two_and_sub_bucket_edges_land_in_the_right_bucket)
{
    hist_t h;
    cr_assert_eq(hist_init(&h), 0);
    for (int e = HIST_EXP_MIN; e < HIST_EXP_MAX; e++) {
        for (uint32_t j = 0; j < 1024; j += 73) {
            /* Bucket of 2^e (1 + j/1024) is (e + 20) * 1024 + j, by the layout in hist.h. */
            uint32_t want = (uint32_t)(e - HIST_EXP_MIN) * 1024u + j;
            double x = ldexp(1.0 + j / 1024.0, e);
            hist_reset(&h);
            hist_record(&h, x);
            cr_assert_eq(h.lo, want, "x=%a: bucket %u, want %u", x, h.lo, want);
            cr_assert_eq(h.hi, want);
            cr_assert_eq(h.counts[want], 1);
            cr_assert(hist_bucket_lower(want) <= x && x < hist_bucket_upper(want),
                      "x=%a outside its bucket [%a, %a)", x, hist_bucket_lower(want),
                      hist_bucket_upper(want));
            cr_assert_eq(hist_bucket_lower(want), x);   /* x is the bucket's lower edge */
            /* The largest double below x belongs to the previous bucket. */
            if (want > 0) {
                double y = nextafter(x, 0.0);
                hist_reset(&h);
                hist_record(&h, y);
                cr_assert_eq(h.lo, want - 1, "x=%a: bucket %u, want %u", y, h.lo, want - 1);
            }
        }
    }
    hist_free(&h);
}

Test(hist, zeros_and_underflow_report_min)
{
    hist_t h;
    cr_assert_eq(hist_init(&h), 0);
    /* 10 zeros, 5 values below 2^-20 (~9.54e-7), 5 ones: n = 20. */
    for (int i = 0; i < 10; i++) hist_record(&h, 0.0);
    for (int i = 0; i < 5; i++) hist_record(&h, 1e-7 * (i + 1));
    hist_record(&h, 0x1.fffffffffffffp-21);     /* just below 2^-20: underflow */
    for (int i = 0; i < 4; i++) hist_record(&h, 1.0);
    cr_assert_eq(h.n, 20);
    cr_assert_eq(h.n_low, 16);
    cr_assert_eq(h.n_high, 0);
    cr_assert_eq(h.min, 0.0);
    cr_assert_eq(h.max, 1.0);
    /* ranks 1..16 fall in the underflow bucket: quantile returns min (= 0) */
    cr_assert_eq(hist_quantile(&h, 0.05), 0.0);  /* rank 1 */
    cr_assert_eq(hist_quantile(&h, 0.5), 0.0);   /* rank 10 */
    cr_assert_eq(hist_quantile(&h, 0.8), 0.0);   /* rank 16 */
    /* rank 17..20: the bucket [1, 1 + 1/1024), midpoint clamped to max 1.0 */
    cr_assert_eq(hist_quantile(&h, 0.81), 1.0);
    cr_assert_eq(hist_quantile(&h, 1.0), 1.0);
    /* 2^-20 exactly is the first in-range value */
    hist_reset(&h);
    hist_record(&h, 0x1p-20);
    cr_assert_eq(h.n_low, 0);
    cr_assert_eq(h.lo, 0);
    cr_assert_eq(h.counts[0], 1);
    hist_free(&h);
}

Test(hist, underflow_only)
{
    hist_t h;
    cr_assert_eq(hist_init(&h), 0);
    hist_record(&h, 0.0);
    hist_record(&h, 5e-324);                   /* subnormal */
    hist_record(&h, 1e-10);
    cr_assert_eq(h.n_low, 3);
    cr_assert_eq(hist_quantile(&h, 0.5), 0.0);
    cr_assert_eq(hist_quantile(&h, 0.99), 0.0);
    cr_assert_eq(hist_quantile(&h, 1.0), 1e-10);
    cr_assert_eq(h.max, 1e-10);
    hist_free(&h);
}

Test(hist, overflow_at_and_above_2_pow_44)
{
    hist_t h;
    cr_assert_eq(hist_init(&h), 0);
    const double big = 0x1p44;                  /* 17592186044416 */
    hist_record(&h, 1.0);
    hist_record(&h, 0x1.fffffffffffffp43);      /* largest in-range value: last bucket */
    hist_record(&h, big);
    hist_record(&h, big);
    cr_assert_eq(h.n, 4);
    cr_assert_eq(h.n_high, 2);
    cr_assert_eq(h.hi, HIST_NBUCKETS - 1);
    cr_assert_eq(h.counts[HIST_NBUCKETS - 1], 1);
    cr_assert_eq(h.max, big);
    cr_assert_eq(h.sum, 1.0 + 0x1.fffffffffffffp43 + 2 * big);
    /* ranks 3 and 4 are overflow values, all equal to 2^44 = max */
    cr_assert_eq(hist_quantile(&h, 0.75), big);
    cr_assert_eq(hist_quantile(&h, 1.0), big);
    /* rank 2: last bucket, within 0.05 % */
    double q2 = hist_quantile(&h, 0.5);
    cr_assert(fabs(q2 - 0x1.fffffffffffffp43) <= 5e-4 * 0x1p44, "got %a", q2);
    /* only overflow values */
    hist_reset(&h);
    hist_record(&h, 1e20);
    hist_record(&h, INFINITY);
    cr_assert_eq(h.n_high, 2);
    cr_assert_eq(hist_quantile(&h, 0.5), INFINITY);  /* max */
    cr_assert_eq(hist_quantile(&h, 0.0), 1e20);      /* min */
    hist_free(&h);
}

Test(hist, empty)
{
    hist_t h;
    cr_assert_eq(hist_init(&h), 0);
    cr_assert_eq(h.n, 0);
    cr_assert_eq(hist_quantile(&h, 0.5), 0.0);
    cr_assert_eq(hist_quantile(&h, 0.0), 0.0);
    cr_assert_eq(hist_quantile(&h, 1.0), 0.0);
    cr_assert_eq(hist_mean(&h), 0.0);
    hist_free(&h);
}

Test(hist, min_max_sum_mean_exact_on_integers)
{
    hist_t h;
    cr_assert_eq(hist_init(&h), 0);
    for (int i = 1000; i >= 1; i--)            /* 1..1000 */
        hist_record(&h, (double)i);
    cr_assert_eq(h.min, 1.0);
    cr_assert_eq(h.max, 1000.0);
    cr_assert_eq(h.sum, 500500.0);             /* n (n + 1) / 2 */
    cr_assert_eq(hist_mean(&h), 500.5);
    /* nearest rank of 1..1000: q = 0.5 -> 500, 0.9 -> 900, 0.999 -> 999, 0.001 -> 1 */
    const double q[] = { 0.5, 0.9, 0.999, 0.001, 0.25 };
    const double want[] = { 500, 900, 999, 1, 250 };
    for (int k = 0; k < 5; k++) {
        double got = hist_quantile(&h, q[k]);
        cr_assert(fabs(got - want[k]) <= 5e-4 * want[k], "q=%g got %.17g want %g", q[k], got,
                  want[k]);
    }
    hist_free(&h);
}

static void assert_hist_same(const hist_t *a, const hist_t *b)
{
    cr_assert_eq(a->n, b->n);
    cr_assert_eq(a->n_low, b->n_low);
    cr_assert_eq(a->n_high, b->n_high);
    cr_assert_eq(a->min, b->min);
    cr_assert_eq(a->max, b->max);
    cr_assert(fabs(a->sum - b->sum) <= 1e-12 * fabs(b->sum), "sum %.17g vs %.17g", a->sum,
              b->sum);
    cr_assert(memcmp(a->counts, b->counts, HIST_NBUCKETS * sizeof *a->counts) == 0,
              "bucket counts differ");
    if (b->n > b->n_low + b->n_high) {
        cr_assert_eq(a->lo, b->lo);
        cr_assert_eq(a->hi, b->hi);
    }
    for (size_t k = 0; k < sizeof QS / sizeof QS[0]; k++)
        cr_assert_eq(hist_quantile(a, QS[k]), hist_quantile(b, QS[k]), "q=%g", QS[k]);
}

Test(hist, merge_equals_recording_the_union)
{
    gsl_rng *r = test_rng(306);
    hist_t a, b, u, e;
    cr_assert_eq(hist_init(&a), 0);
    cr_assert_eq(hist_init(&b), 0);
    cr_assert_eq(hist_init(&u), 0);
    cr_assert_eq(hist_init(&e), 0);
    for (int i = 0; i < 5000; i++) {               /* A: small values, some zeros */
        double x = i % 50 ? exp2(-10.0 + 12.0 * gsl_rng_uniform(r)) : 0.0;
        hist_record(&a, x);
        hist_record(&u, x);
    }
    for (int i = 0; i < 7000; i++) {               /* B: large values, some overflow */
        double x = i % 100 ? exp2(5.0 + 38.0 * gsl_rng_uniform(r)) : 1e15;
        hist_record(&b, x);
        hist_record(&u, x);
    }
    hist_merge(&a, &b);
    assert_hist_same(&a, &u);
    /* merging an empty histogram changes nothing; merging into an empty one copies */
    hist_merge(&a, &e);
    assert_hist_same(&a, &u);
    hist_merge(&e, &u);
    assert_hist_same(&e, &u);
    hist_free(&a);
    hist_free(&b);
    hist_free(&u);
    hist_free(&e);
    gsl_rng_free(r);
}

Test(hist, merge_of_overflow_only_and_underflow_only)
{
    hist_t a, b, u;
    cr_assert_eq(hist_init(&a), 0);
    cr_assert_eq(hist_init(&b), 0);
    cr_assert_eq(hist_init(&u), 0);
    hist_record(&a, 0.0);  hist_record(&u, 0.0);
    hist_record(&b, 1e16); hist_record(&u, 1e16);
    hist_merge(&a, &b);
    assert_hist_same(&a, &u);
    cr_assert_eq(hist_quantile(&a, 0.5), 0.0);
    cr_assert_eq(hist_quantile(&a, 1.0), 1e16);
    /* then in-range values on top */
    hist_record(&a, 2.0);
    hist_record(&u, 2.0);
    assert_hist_same(&a, &u);
    hist_free(&a);
    hist_free(&b);
    hist_free(&u);
}

Test(hist, reset_forgets)
{
    hist_t h, fresh;
    cr_assert_eq(hist_init(&h), 0);
    cr_assert_eq(hist_init(&fresh), 0);
    for (int i = 0; i < 1000; i++)
        hist_record(&h, exp2(-20.0 + 64.5 * i / 1000.0));   /* in range and overflow */
    hist_record(&h, 0.0);
    hist_reset(&h);
    cr_assert_eq(h.n, 0);
    cr_assert_eq(h.n_low, 0);
    cr_assert_eq(h.n_high, 0);
    cr_assert_eq(h.sum, 0.0);
    cr_assert_eq(hist_quantile(&h, 0.5), 0.0);
    for (uint32_t i = 0; i < HIST_NBUCKETS; i++)
        cr_assert_eq(h.counts[i], 0, "bucket %u not cleared", i);
    hist_record(&h, 5.0);
    hist_record(&h, 7.0);
    hist_record(&fresh, 5.0);
    hist_record(&fresh, 7.0);
    assert_hist_same(&h, &fresh);
    cr_assert_eq(h.min, 5.0);
    cr_assert_eq(h.max, 7.0);
    cr_assert_eq(hist_mean(&h), 6.0);
    hist_free(&h);
    hist_free(&fresh);
}

Test(hist, bucket_edges_are_consistent)
{
    cr_assert_eq(HIST_NBUCKETS, 64 * 1024);             /* 64 octaves 2^-20 .. 2^44 */
    cr_assert_eq(hist_bucket_lower(0), 0x1p-20);
    cr_assert_eq(hist_bucket_upper(HIST_NBUCKETS - 1), 0x1p44);
    for (uint32_t i = 0; i < HIST_NBUCKETS; i++) {
        double lo = hist_bucket_lower(i), hi = hist_bucket_upper(i);
        int e = (int)(i / 1024) - 20;
        double octave = ldexp(1.0, e);
        cr_assert(lo < hi, "bucket %u: [%a, %a)", i, lo, hi);
        cr_assert_eq(hi - lo, octave / 1024.0, "bucket %u width %a, want %a", i, hi - lo,
                     octave / 1024.0);
        cr_assert_eq(lo, octave * (1.0 + (double)(i % 1024) / 1024.0));
        if (i + 1 < HIST_NBUCKETS)
            cr_assert_eq(hi, hist_bucket_lower(i + 1), "upper(%u) != lower(%u)", i, i + 1);
        /* within 0.05 %: half a width is at most lower / 2048 */
        cr_assert_leq((hi - lo) / 2.0 / lo, 1.0 / 2048.0);
    }
}

/* ======================================================================
 * stats — Student-t intervals
 * ====================================================================== */

/* t quantiles from tables (e.g. Abramowitz & Stegun 26.10; NIST handbook 1.3.6.7.2). */
#define T_0975_1 12.70620474
#define T_0975_4 2.776445105
#define T_095_4  2.131846786
#define T_0975_9 2.262157163

static void assert_near(double got, double want, double tol, const char *what)
{
    cr_assert(fabs(got - want) <= tol, "%s: got %.17g, want %.17g (tol %g)", what, got, want,
              tol);
}

Test(stats, hand_worked_one_to_five)
{
    const double x[] = { 1, 2, 3, 4, 5 };
    /* mean 3; squared deviations 4+1+0+1+4 = 10; var 10/4 = 2.5; sd sqrt(2.5);
     * half-width t sd / sqrt(5) = t sqrt(0.5) */
    stats_ci c = stats_t_interval(x, 5, 0.95);
    cr_assert_eq(c.n, 5);
    assert_near(c.mean, 3.0, 1e-15, "mean");
    assert_near(c.sd, sqrt(2.5), 1e-14, "sd");
    double half = T_0975_4 * sqrt(2.5) / sqrt(5.0);
    assert_near(c.lo, 3.0 - half, 1e-8, "lo");
    assert_near(c.hi, 3.0 + half, 1e-8, "hi");
    /* 90 % */
    c = stats_t_interval(x, 5, 0.90);
    half = T_095_4 * sqrt(0.5);
    assert_near(c.lo, 3.0 - half, 1e-8, "lo 90%");
    assert_near(c.hi, 3.0 + half, 1e-8, "hi 90%");
}

Test(stats, two_points_and_ten_points)
{
    /* {0, 2}: mean 1, var (1+1)/1 = 2, sd sqrt 2, half = t_{.975,1} sqrt2/sqrt2 */
    const double x2[] = { 0, 2 };
    stats_ci c = stats_t_interval(x2, 2, 0.95);
    assert_near(c.mean, 1.0, 1e-15, "mean");
    assert_near(c.sd, sqrt(2.0), 1e-15, "sd");
    assert_near(c.lo, 1.0 - T_0975_1, 1e-7, "lo");
    assert_near(c.hi, 1.0 + T_0975_1, 1e-7, "hi");
    /* 1..10 scaled: x_i = 10 i: mean 55, var 100 * (10*11/12) = 100 * 9.1666.. (var of 1..n is n(n+1)/12) */
    double x10[10];
    for (int i = 0; i < 10; i++) x10[i] = 10.0 * (i + 1);
    c = stats_t_interval(x10, 10, 0.95);
    double sd = sqrt(100.0 * 10.0 * 11.0 / 12.0);
    assert_near(c.mean, 55.0, 1e-13, "mean10");
    assert_near(c.sd, sd, 1e-12, "sd10");
    assert_near(c.hi - c.mean, T_0975_9 * sd / sqrt(10.0), 1e-7, "half10");
    assert_near(c.mean - c.lo, T_0975_9 * sd / sqrt(10.0), 1e-7, "half10 lo");
}

Test(stats, single_replication_has_no_interval)
{
    const double x[] = { 42.5 };
    stats_ci c = stats_t_interval(x, 1, 0.95);
    cr_assert_eq(c.n, 1);
    cr_assert_eq(c.mean, 42.5);
    cr_assert(isnan(c.sd), "sd should be NaN, got %g", c.sd);
    cr_assert(isnan(c.lo) && isnan(c.hi), "lo/hi should be NaN, got %g %g", c.lo, c.hi);
    c = stats_t_interval(x, 0, 0.95);
    cr_assert_eq(c.n, 0);
    cr_assert(isnan(c.lo) && isnan(c.hi));
}

Test(stats, constant_sample_has_zero_width)
{
    const double x[] = { 7, 7, 7, 7 };
    stats_ci c = stats_t_interval(x, 4, 0.95);
    cr_assert_eq(c.mean, 7.0);
    cr_assert_eq(c.sd, 0.0);
    cr_assert_eq(c.lo, 7.0);
    cr_assert_eq(c.hi, 7.0);
}

Test(stats, strided_equals_unstrided_on_a_copied_column)
{
    enum { ROWS = 9, COLS = 4 };
    double table[ROWS * COLS], col[ROWS];
    gsl_rng *r = test_rng(404);
    for (int i = 0; i < ROWS * COLS; i++)
        table[i] = 100.0 * gsl_rng_uniform(r) - 30.0;
    for (int j = 0; j < COLS; j++) {
        for (int i = 0; i < ROWS; i++)
            col[i] = table[i * COLS + j];
        stats_ci a = stats_t_interval_strided(table + j, ROWS, COLS, 0.95);
        stats_ci b = stats_t_interval(col, ROWS, 0.95);
        cr_assert_eq(a.n, b.n);
        cr_assert_eq(a.mean, b.mean, "col %d mean %.17g vs %.17g", j, a.mean, b.mean);
        cr_assert_eq(a.sd, b.sd);
        cr_assert_eq(a.lo, b.lo);
        cr_assert_eq(a.hi, b.hi);
        /* and against a two-pass reference */
        double m = 0, ss = 0;
        for (int i = 0; i < ROWS; i++) m += col[i];
        m /= ROWS;
        for (int i = 0; i < ROWS; i++) ss += (col[i] - m) * (col[i] - m);
        double sd = sqrt(ss / (ROWS - 1));
        assert_near(a.mean, m, 1e-12, "mean");
        assert_near(a.sd, sd, 1e-12, "sd");
        assert_near(a.hi - a.lo, 2.0 * 2.306004135 * sd / 3.0, 1e-7, "width"); /* t_{.975,8} */
    }
    gsl_rng_free(r);
}

/* ======================================================================
 * tw — time-weighted level
 * ====================================================================== */

Test(tw, hand_computed_piecewise_constant)
{
    tw_t w = { 0 };
    tw_reset(&w, 0.0);
    cr_assert_eq(tw_mean(&w, 0.0), 0.0);             /* empty interval */
    tw_set(&w, 1.0, 2.0);                             /* 0 on [0,1) */
    tw_set(&w, 4.0, 1.0);                             /* 2 on [1,4): area 6 */
    /* at t=5: area 6 + 1*1 = 7 over 5 */
    cr_assert_eq(tw_mean(&w, 5.0), 7.0 / 5.0);
    tw_set(&w, 6.0, 0.0);                             /* 1 on [4,6): area 8 */
    cr_assert_eq(tw_mean(&w, 10.0), 0.8);             /* 8 / 10 */
    tw_set(&w, 10.0, 4.0);                            /* 0 on [6,10) */
    tw_set(&w, 10.0, 3.0);                            /* zero-length level 4 adds nothing */
    cr_assert_eq(tw_mean(&w, 12.0), (8.0 + 6.0) / 12.0);
}

Test(tw, reset_keeps_the_current_level)
{
    /* Warm-up: the queue is 3 long at the reset; statistics restart, the level does not. */
    tw_t w = { 0 };
    tw_reset(&w, 0.0);
    tw_set(&w, 2.0, 5.0);
    tw_set(&w, 5.0, 3.0);
    tw_reset(&w, 10.0);
    cr_assert_eq(tw_mean(&w, 10.0), 0.0);
    cr_assert_eq(tw_mean(&w, 20.0), 3.0);
    tw_set(&w, 14.0, 1.0);                            /* 3 on [10,14): 12; 1 on [14,18): 4 */
    cr_assert_eq(tw_mean(&w, 18.0), 2.0);             /* 16 / 8 */
}

/* ======================================================================
 * mser — MSER-5
 * ====================================================================== */

/* Brute force: MSER(d) over the stored batch means, two-pass, for d in [0, k/2]. */
static double mser_stat_ref(const double *y, size_t k, size_t d)
{
    size_t n = k - d;
    double m = 0;
    for (size_t i = d; i < k; i++) m += y[i];
    m /= (double)n;
    double ss = 0;
    for (size_t i = d; i < k; i++) ss += (y[i] - m) * (y[i] - m);
    return ss / ((double)n * (double)n);
}

static size_t mser_argmin_ref(const double *y, size_t k)
{
    size_t best = 0;
    double bs = mser_stat_ref(y, k, 0);
    for (size_t d = 1; d <= k / 2; d++) {
        double s = mser_stat_ref(y, k, d);
        if (s < bs) { bs = s; best = d; }
    }
    return best;
}

/* The code's d* is a minimiser of the brute-force statistic (to rounding). */
static void assert_mser_matches_ref(const mser_t *m, const mser_result *res)
{
    size_t dref = mser_argmin_ref(m->mean, m->k);
    double sref = mser_stat_ref(m->mean, m->k, dref);
    double sgot = mser_stat_ref(m->mean, m->k, res->d);
    cr_assert(res->d <= m->k / 2, "d*=%zu beyond k/2=%zu", res->d, m->k / 2);
    cr_assert(sgot <= sref * (1 + 1e-9) + 1e-300,
              "d*=%zu has MSER %.17g, brute force d=%zu has %.17g", res->d, sgot, dref, sref);
    cr_assert_eq(res->k, m->k);
    cr_assert_eq(res->batch, m->batch);
    if (res->d == 0)
        cr_assert_eq(res->t_trunc, 0.0);
    else
        cr_assert_eq(res->t_trunc, m->t_end[res->d - 1]);
}

Test(mser, transient_then_noise_truncates_at_end_of_transient)
{
    /* 500 observations at 10 (t = 1..500: batches 0..99), then 5000 of U(0, 2)
     * (mean 1). Keeping any transient batch costs (10 - 1)^2 per batch, far more
     * than the noise, so d* >= 100 always; MSER may drop a few extra noisy
     * batches, typically zero to two. Over ten seeds: all d* in [100, 125]
     * (125 batches = 2.3 % of the run), and most within two batches. */
    int close = 0;
    for (unsigned long seed = 1; seed <= 10; seed++) {
        gsl_rng *r = test_rng(500 + seed);
        mser_t m;
        cr_assert_eq(mser_init(&m, 4096), 0);
        for (int i = 1; i <= 5500; i++)
            mser_add(&m, (double)i, i <= 500 ? 10.0 : 2.0 * gsl_rng_uniform(r));
        cr_assert_eq(m.batch, 5);
        cr_assert_eq(m.k, 1100);
        cr_assert_eq(m.mean[0], 10.0);
        cr_assert_eq(m.mean[99], 10.0);
        cr_assert_eq(m.t_end[0], 5.0);
        cr_assert_eq(m.t_end[99], 500.0);
        cr_assert_eq(m.t_end[1099], 5500.0);
        mser_result res = mser_compute(&m);
        assert_mser_matches_ref(&m, &res);
        cr_assert(res.d >= 100 && res.d <= 125, "seed %lu: d*=%zu, t_trunc %g", seed, res.d,
                  res.t_trunc);
        cr_assert_eq(res.t_trunc, 5.0 * (double)res.d);
        close += res.d <= 102;
        cr_assert(res.settled);
        mser_free(&m);
        gsl_rng_free(r);
    }
    cr_assert_geq(close, 5, "only %d of 10 seeds truncated within two batches of t=500", close);
}

Test(mser, stationary_series_truncates_near_zero)
{
    /* Over several seeds: an i.i.d. series needs (almost) no truncation; MSER
     * may drop a few early batches that happen to be extreme (<= 2.5 %). */
    for (unsigned long seed = 1; seed <= 5; seed++) {
        gsl_rng *r = test_rng(600 + seed);
        mser_t m;
        cr_assert_eq(mser_init(&m, 4096), 0);
        for (int i = 1; i <= 5000; i++)
            mser_add(&m, 0.5 * i, 5.0 + gsl_ran_ugaussian(r));
        cr_assert_eq(m.k, 1000);
        mser_result res = mser_compute(&m);
        assert_mser_matches_ref(&m, &res);
        cr_assert(res.d <= 25, "seed %lu: d*=%zu of k=%zu", seed, res.d, m.k);
        cr_assert(res.settled);
        mser_free(&m);
        gsl_rng_free(r);
    }
}

Test(mser, too_few_batches_is_not_settled)
{
    mser_t m;
    cr_assert_eq(mser_init(&m, 16), 0);
    for (int i = 1; i <= 19; i++)               /* 3 full batches + 4 pending */
        mser_add(&m, i, 1.0);
    mser_result res = mser_compute(&m);
    cr_assert_eq(res.k, 3);
    cr_assert_eq(res.d, 0);
    cr_assert_eq(res.t_trunc, 0.0);
    cr_assert(!res.settled);
    mser_free(&m);
}

Test(mser, folding_keeps_working_when_the_store_overflows)
{
    enum { N = 20000 };
    mser_t m;
    cr_assert_eq(mser_init(&m, 8), 0);
    cr_assert_eq(m.cap, 8);
    gsl_rng *r = test_rng(707);
    /* transient over the first 20 % (linear decay 50 -> 0), then noise around 3;
     * observation times t_i = 0.25 i + 1 */
    for (int i = 0; i < N; i++) {
        double tr = i < N / 5 ? 50.0 * (1.0 - (double)i / (N / 5)) : 0.0;
        mser_add(&m, 0.25 * i + 1.0, 3.0 + tr + gsl_rng_uniform(r));
    }
    cr_assert_leq(m.k, 8);
    cr_assert_geq(m.k, 4);
    /* batch is 5 * 2^j, and large enough that 8 batches cover N */
    size_t b = m.batch;
    cr_assert_eq(b % 5, 0);
    size_t p = b / 5;
    cr_assert(p && (p & (p - 1)) == 0, "batch %zu is not 5 * 2^j", b);
    cr_assert_geq(b * 8, (size_t)N / 2, "batch %zu too small for %d observations", b, N);
    mser_result res = mser_compute(&m);
    assert_mser_matches_ref(&m, &res);
    cr_assert_gt(res.d, 0, "a transient of 20%% should be truncated");
    /* t_trunc is one of the observation times 0.25 i + 1 */
    double idx = (res.t_trunc - 1.0) / 0.25;
    cr_assert(idx >= 0 && idx < N && idx == floor(idx), "t_trunc %g is no observation time",
              res.t_trunc);
    /* stored t_end are increasing observation times */
    for (size_t i = 0; i < m.k; i++) {
        double ti = (m.t_end[i] - 1.0) / 0.25;
        cr_assert(ti == floor(ti) && ti < N, "t_end[%zu] = %g", i, m.t_end[i]);
        if (i) cr_assert_gt(m.t_end[i], m.t_end[i - 1]);
    }
    mser_free(&m);
    gsl_rng_free(r);
}

/* mser.h: "batch: observations per stored batch: 5 * 2^j" and "mean: per batch: mean
 * of its observations, t_end: time of its last one". Reference: with N observations
 * x_i = i at t_i = i, batch j must hold observations j*batch+1 .. (j+1)*batch. */
Test(mser, fold_keeps_every_stored_batch_at_batch_observations)
{
    char why[256] = "";
    for (int n = 1; n <= 400 && !why[0]; n++) {
        mser_t m;
        cr_assert_eq(mser_init(&m, 4), 0);
        for (int i = 1; i <= n; i++)
            mser_add(&m, (double)i, (double)i);
        size_t b = m.batch;
        if (m.k * b + m.acc_n != (size_t)n)
            snprintf(why, sizeof why, "n=%d: %zu stored batches of %zu + %zu pending != %d "
                     "observations", n, m.k, b, m.acc_n, n);
        for (size_t j = 0; j < m.k && !why[0]; j++) {
            double first = (double)(j * b + 1), last = (double)((j + 1) * b);
            if (m.t_end[j] != last || m.mean[j] != 0.5 * (first + last))
                snprintf(why, sizeof why, "n=%d batch %zu of %zu: t_end %g mean %g, want "
                         "t_end %g mean %g", n, j, b, m.t_end[j], m.mean[j], last,
                         0.5 * (first + last));
        }
        mser_free(&m);                  /* before asserting: no leak report on failure */
    }
    cr_assert(!why[0], "%s", why);
}

/* mser.h: settled is "false when there were too few batches or d* > k/2 - 1", and "a
 * minimum in the second half of the run means the run never settled". Batch means
 * 100, 200, 300, 1, 1, 1, 1, 1 (k = 8): MSER(3) = MSER(4) = 0, so d* = 3 (ties prefer
 * the smaller d) = k/2 - 1, in the first half: settled. */
Test(mser, settled_boundary_d_equals_half_k_minus_one)
{
    const double y[] = { 100, 200, 300, 1, 1, 1, 1, 1 };
    mser_t m;
    cr_assert_eq(mser_init(&m, 64), 0);
    for (int j = 0; j < 8; j++)
        for (int i = 0; i < 5; i++)
            mser_add(&m, 5.0 * j + i + 1, y[j]);
    mser_result res = mser_compute(&m);
    mser_free(&m);
    cr_assert_eq(res.k, 8);
    cr_assert_eq(res.d, 3);
    cr_assert_eq(res.t_trunc, 15.0);
    cr_assert(res.settled, "d* = 3 = k/2 - 1 is not > k/2 - 1: should be settled");
}

Test(mser, never_settling_run_is_flagged)
{
    /* A steady upward trend: the best truncation is at the k/2 limit. */
    mser_t m;
    cr_assert_eq(mser_init(&m, 4096), 0);
    for (int i = 1; i <= 1000; i++)
        mser_add(&m, i, (double)i);
    mser_result res = mser_compute(&m);
    /* Batch means y_j = 5j + 3, an arithmetic sequence: with n = k - d terms,
     * sum (y - mean)^2 = 25 n (n^2 - 1) / 12, so MSER(d) = 25 (n^2 - 1) / (12 n),
     * increasing in n: the minimum is at the largest allowed d, k/2 = 100. */
    cr_assert_eq(res.k, 200);
    cr_assert_eq(res.d, 100);
    cr_assert(!res.settled);
    mser_free(&m);
}

/* ======================================================================
 * jsonw — streaming JSON writer
 * ====================================================================== */

static void jw_capture_begin(FILE **f, size_t *len, char **buf)
{
    *buf = NULL;
    *f = open_memstream(buf, len);
    cr_assert_not_null(*f);
}

static void assert_text(char *buf, const char *want)
{
    cr_assert(strcmp(buf, want) == 0, "got:\n%s\nwant:\n%s", buf, want);
    free(buf);
}

Test(jsonw, nested_document_exact_text)
{
    FILE *f;
    size_t len;
    char *buf;
    jw_capture_begin(&f, &len, &buf);
    jw_t w;
    jw_init(&w, f);
    jw_obj_begin(&w, NULL);
    jw_str(&w, "name", "a\"b\\c\nd\x01" "e\tf\rg\x1fh");
    jw_str(&w, "k\"ey", "");
    jw_num(&w, "x", 1.5);
    jw_num(&w, "third", 1.0 / 3.0);
    jw_num(&w, "big", 1e20);
    jw_num(&w, "neg", -0.125);
    jw_num(&w, "nan", NAN);
    jw_num(&w, "inf", INFINITY);
    jw_num(&w, "minf", -INFINITY);
    jw_int(&w, "i", -42);
    jw_int(&w, "ll", 9007199254740993LL);
    jw_bool(&w, "t", true);
    jw_bool(&w, "f", false);
    jw_obj_begin(&w, "empty_obj");
    jw_obj_end(&w);
    jw_arr_begin(&w, "empty_arr");
    jw_arr_end(&w);
    jw_pair(&w, "ci", 0.25, NAN);
    jw_pair(&w, "ci2", -1, 2e-7);
    jw_arr_begin(&w, "list");
    jw_num(&w, NULL, 1);
    jw_obj_begin(&w, NULL);
    jw_int(&w, "k", 2);
    jw_arr_begin(&w, "deep");
    jw_bool(&w, NULL, false);
    jw_arr_end(&w);
    jw_obj_end(&w);
    jw_arr_begin(&w, NULL);
    jw_arr_end(&w);
    jw_obj_begin(&w, NULL);
    jw_obj_end(&w);
    jw_str(&w, NULL, "z");
    jw_pair(&w, NULL, 1, 2);
    jw_arr_end(&w);
    jw_obj_end(&w);
    jw_done(&w);
    fclose(f);
    assert_text(buf,
        "{\n"
        "  \"name\": \"a\\\"b\\\\c\\nd\\u0001e\\tf\\rg\\u001fh\",\n"
        "  \"k\\\"ey\": \"\",\n"
        "  \"x\": 1.5,\n"
        "  \"third\": 0.3333333333,\n"
        "  \"big\": 1e+20,\n"
        "  \"neg\": -0.125,\n"
        "  \"nan\": null,\n"
        "  \"inf\": null,\n"
        "  \"minf\": null,\n"
        "  \"i\": -42,\n"
        "  \"ll\": 9007199254740993,\n"
        "  \"t\": true,\n"
        "  \"f\": false,\n"
        "  \"empty_obj\": {},\n"
        "  \"empty_arr\": [],\n"
        "  \"ci\": [0.25, null],\n"
        "  \"ci2\": [-1, 2e-07],\n"
        "  \"list\": [\n"
        "    1,\n"
        "    {\n"
        "      \"k\": 2,\n"
        "      \"deep\": [\n"
        "        false\n"
        "      ]\n"
        "    },\n"
        "    [],\n"
        "    {},\n"
        "    \"z\",\n"
        "    [1, 2]\n"
        "  ]\n"
        "}\n");
}

Test(jsonw, top_level_scalars_and_empties)
{
    FILE *f;
    size_t len;
    char *buf;

    jw_capture_begin(&f, &len, &buf);
    jw_t w;
    jw_init(&w, f);
    jw_obj_begin(&w, NULL);
    jw_obj_end(&w);
    jw_done(&w);
    fclose(f);
    assert_text(buf, "{}\n");

    jw_capture_begin(&f, &len, &buf);
    jw_init(&w, f);
    jw_num(&w, NULL, 3);
    jw_done(&w);
    fclose(f);
    assert_text(buf, "3\n");

    jw_capture_begin(&f, &len, &buf);
    jw_init(&w, f);
    jw_arr_begin(&w, NULL);
    jw_num(&w, NULL, NAN);
    jw_str(&w, NULL, "\xc3\xa9");               /* UTF-8 passes through */
    jw_arr_end(&w);
    jw_done(&w);
    fclose(f);
    assert_text(buf, "[\n  null,\n  \"\xc3\xa9\"\n]\n");
}

Test(jsonw, numbers_use_ten_significant_digits)
{
    FILE *f;
    size_t len;
    char *buf;
    jw_capture_begin(&f, &len, &buf);
    jw_t w;
    jw_init(&w, f);
    jw_arr_begin(&w, NULL);
    jw_num(&w, NULL, 0.1);
    jw_num(&w, NULL, 123456789012.0);          /* 1.234567890e11 -> trailing 0 dropped */
    jw_num(&w, NULL, 0.0);
    jw_num(&w, NULL, 1e-5);
    jw_num(&w, NULL, 2.0 / 3.0);
    jw_num(&w, NULL, 1234567890.0);
    jw_arr_end(&w);
    jw_done(&w);
    fclose(f);
    assert_text(buf,
        "[\n  0.1,\n  1.23456789e+11,\n  0,\n  1e-05,\n  0.6666666667,\n  1234567890\n]\n");
}

/* ======================================================================
 * out — atomic output files
 * ====================================================================== */

static char *make_tmpdir(void)
{
    char *d = strdup("/tmp/vlsim_test_engine_XXXXXX");
    cr_assert_not_null(d);
    cr_assert_not_null(mkdtemp(d), "mkdtemp: %s", strerror(errno));
    return d;
}

/* Number of entries in dir other than . and .. */
static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

static void assert_file_is(const char *path, const char *want)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s: %s", path, strerror(errno));
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    cr_assert(strcmp(buf, want) == 0, "%s holds \"%s\", want \"%s\"", path, buf, want);
}

static void rm_tree(char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char p[8192];
        while ((e = readdir(d)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            if (rmdir(p) != 0)
                unlink(p);
        }
        closedir(d);
    }
    rmdir(dir);
    free(dir);
}

Test(out, check_refuses_existing_without_force_and_bad_targets)
{
    char *dir = make_tmpdir();
    char path[4200], err[512];
    snprintf(path, sizeof path, "%s/res.json", dir);

    err[0] = 0;
    cr_assert_eq(out_check(path, false, err, sizeof err), 0, "new file refused: %s", err);
    kit_write_file(path, "old");
    err[0] = 0;
    cr_assert_eq(out_check(path, false, err, sizeof err), -1);
    cr_assert(strstr(err, "exists") != NULL, "message: %s", err);
    cr_assert_eq(out_check(path, true, err, sizeof err), 0, "force refused: %s", err);

    /* a missing directory */
    char missing[4200];
    snprintf(missing, sizeof missing, "%s/nope/res.json", dir);
    err[0] = 0;
    cr_assert_eq(out_check(missing, false, err, sizeof err), -1);
    cr_assert_eq(out_check(missing, true, err, sizeof err), -1);
    cr_assert_neq(err[0], 0);

    /* a "directory" that is a regular file */
    char under_file[4300];
    snprintf(under_file, sizeof under_file, "%s/x", path);
    cr_assert_eq(out_check(under_file, true, err, sizeof err), -1);

    /* the target is a directory, with or without force */
    char sub[4200];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    cr_assert_eq(mkdir(sub, 0755), 0);
    err[0] = 0;
    cr_assert_eq(out_check(sub, false, err, sizeof err), -1);
    cr_assert(strstr(err, "directory") != NULL, "message: %s", err);
    cr_assert_eq(out_check(sub, true, err, sizeof err), -1);
    cr_assert_eq(out_check(dir, true, err, sizeof err), -1);

    /* "-" and the empty name */
    cr_assert_eq(out_check("-", false, err, sizeof err), 0);
    cr_assert_eq(out_check("", true, err, sizeof err), -1);

    /* nothing was created by checking */
    assert_file_is(path, "old");
    cr_assert_eq(count_entries(dir), 2);          /* res.json and sub */
    rm_tree(dir);
}

Test(out, check_relative_path_in_cwd)
{
    char *dir = make_tmpdir();
    char old[4096], err[512];
    cr_assert_not_null(getcwd(old, sizeof old));
    cr_assert_eq(chdir(dir), 0);
    cr_assert_eq(out_check("plain.json", false, err, sizeof err), 0, "%s", err);
    cr_assert_eq(out_check("nope/plain.json", false, err, sizeof err), -1);
    cr_assert_eq(chdir(old), 0);
    rm_tree(dir);
}

Test(out, open_commit_creates_the_file_and_no_temporary)
{
    char *dir = make_tmpdir();
    char path[4200], err[512];
    snprintf(path, sizeof path, "%s/out.csv", dir);
    out_file o;
    cr_assert_eq(out_open(&o, path, err, sizeof err), 0, "%s", err);
    cr_assert_not_null(o.f);
    cr_assert(!o.is_stdout);
    fputs("a,b\n1,2\n", o.f);
    /* before commit the destination does not exist yet */
    struct stat st;
    cr_assert_neq(stat(path, &st), 0, "destination appeared before commit");
    cr_assert_eq(out_commit(&o, err, sizeof err), 0, "%s", err);
    assert_file_is(path, "a,b\n1,2\n");
    cr_assert_eq(count_entries(dir), 1, "a temporary was left behind");
    out_abort(&o);                                  /* harmless after commit */
    assert_file_is(path, "a,b\n1,2\n");

    /* replacing an existing file (the caller checked --force) */
    cr_assert_eq(out_open(&o, path, err, sizeof err), 0, "%s", err);
    fputs("new", o.f);
    cr_assert_eq(out_commit(&o, err, sizeof err), 0, "%s", err);
    assert_file_is(path, "new");
    cr_assert_eq(count_entries(dir), 1);
    rm_tree(dir);
}

Test(out, open_abort_leaves_destination_untouched)
{
    char *dir = make_tmpdir();
    char path[4200], fresh[4200], err[512];
    snprintf(path, sizeof path, "%s/keep.json", dir);
    snprintf(fresh, sizeof fresh, "%s/fresh.json", dir);
    kit_write_file(path, "precious");
    out_file o;
    cr_assert_eq(out_open(&o, path, err, sizeof err), 0, "%s", err);
    fputs("half-written garbage", o.f);
    fflush(o.f);
    cr_assert_eq(count_entries(dir), 2);            /* keep.json + its temporary */
    out_abort(&o);
    assert_file_is(path, "precious");
    cr_assert_eq(count_entries(dir), 1, "the temporary was not removed");
    out_abort(&o);                                  /* twice is harmless */

    cr_assert_eq(out_open(&o, fresh, err, sizeof err), 0, "%s", err);
    fputs("x", o.f);
    out_abort(&o);
    struct stat st;
    cr_assert_neq(stat(fresh, &st), 0, "aborted file exists");
    cr_assert_eq(count_entries(dir), 1);
    rm_tree(dir);
}

Test(out, open_in_missing_directory_fails_and_abort_is_safe)
{
    char *dir = make_tmpdir();
    char path[4200], err[512];
    snprintf(path, sizeof path, "%s/missing/x.json", dir);
    out_file o;
    err[0] = 0;
    cr_assert_eq(out_open(&o, path, err, sizeof err), -1);
    cr_assert_neq(err[0], 0);
    out_abort(&o);                                  /* "safe on a file never opened" */
    static out_file z;                              /* zero-initialised, never opened */
    out_abort(&z);
    cr_assert_eq(count_entries(dir), 0);
    rm_tree(dir);
}

Test(out, dash_is_stdout)
{
    out_file o;
    char err[256];
    cr_assert_eq(out_open(&o, "-", err, sizeof err), 0);
    cr_assert(o.is_stdout);
    cr_assert_eq(o.f, stdout);
    cr_assert_eq(out_commit(&o, err, sizeof err), 0, "%s", err);
    /* stdout is still usable: commit must not have closed it */
    cr_assert_eq(fflush(stdout), 0);
    cr_assert_neq(fcntl(STDOUT_FILENO, F_GETFD), -1, "stdout was closed");
    out_abort(&o);                                  /* never closes stdout either */
    cr_assert_neq(fcntl(STDOUT_FILENO, F_GETFD), -1, "stdout was closed by abort");
}

/* ======================================================================
 * rep — replications on a thread pool
 * ====================================================================== */

enum { REP_MAX = 1000 };

typedef struct {
    uint64_t slot[REP_MAX];
    atomic_int calls[REP_MAX];
    int fail_at[4], fail_code[4], nfail;
    int progress_calls, progress_last_total;
    int progress_done[REP_MAX + 1];
} rep_ctx;

/* f(r): a 64-bit mix of r, computed here independently of any thread. */
static uint64_t rep_f(int r)
{
    uint64_t z = (uint64_t)r * 0x9e3779b97f4a7c15ULL + 12345;
    z ^= z >> 29;
    z *= 0xbf58476d1ce4e5b9ULL;
    return z ^ (z >> 32);
}

static int rep_body(void *ctx, int r)
{
    rep_ctx *c = ctx;
    atomic_fetch_add(&c->calls[r], 1);
    /* a little uneven work so that threads interleave */
    volatile uint64_t spin = 0;
    for (int i = 0; i < (r % 13) * 200; i++)
        spin += (uint64_t)i;
    c->slot[r] = rep_f(r);
    for (int k = 0; k < c->nfail; k++)
        if (c->fail_at[k] == r)
            return c->fail_code[k];
    return 0;
}

static void rep_progress(void *pctx, int done, int total)
{
    rep_ctx *c = pctx;                 /* runs under the pool's lock */
    if (c->progress_calls <= REP_MAX)
        c->progress_done[c->progress_calls] = done;
    c->progress_calls++;
    c->progress_last_total = total;
}

static rep_ctx *rep_ctx_new(void)
{
    rep_ctx *c = calloc(1, sizeof *c);
    cr_assert_not_null(c);
    for (int i = 0; i < REP_MAX; i++)
        atomic_init(&c->calls[i], 0);
    return c;
}

Test(rep, same_slots_for_any_number_of_threads)
{
    const int threads[] = { 1, 2, 7, 0, -3, 64 };
    for (size_t k = 0; k < sizeof threads / sizeof threads[0]; k++) {
        int nrep = REP_MAX;
        rep_ctx *c = rep_ctx_new();
        int rc = rep_run_all(nrep, threads[k], rep_body, c, rep_progress, c);
        cr_assert_eq(rc, 0, "threads=%d: rc %d", threads[k], rc);
        for (int r = 0; r < nrep; r++) {
            cr_assert_eq(c->slot[r], rep_f(r), "threads=%d: slot %d", threads[k], r);
            cr_assert_eq(atomic_load(&c->calls[r]), 1, "threads=%d: rep %d ran %d times",
                         threads[k], r, atomic_load(&c->calls[r]));
        }
        /* progress: once per replication, done = 1, 2, ..., total */
        cr_assert_eq(c->progress_calls, nrep);
        cr_assert_eq(c->progress_last_total, nrep);
        for (int i = 0; i < nrep; i++)
            cr_assert_eq(c->progress_done[i], i + 1, "threads=%d: progress call %d said %d",
                         threads[k], i, c->progress_done[i]);
        free(c);
    }
}

Test(rep, more_threads_than_replications_and_no_progress_callback)
{
    for (int nrep = 1; nrep <= 5; nrep++) {
        rep_ctx *c = rep_ctx_new();
        cr_assert_eq(rep_run_all(nrep, 7, rep_body, c, NULL, NULL), 0);
        for (int r = 0; r < nrep; r++)
            cr_assert_eq(atomic_load(&c->calls[r]), 1);
        for (int r = nrep; r < REP_MAX; r++)
            cr_assert_eq(atomic_load(&c->calls[r]), 0, "rep %d beyond nrep ran", r);
        free(c);
    }
}

Test(rep, zero_replications_call_nothing)
{
    rep_ctx *c = rep_ctx_new();
    cr_assert_eq(rep_run_all(0, 4, rep_body, c, rep_progress, c), 0);
    cr_assert_eq(rep_run_all(-5, 1, rep_body, c, rep_progress, c), 0);
    cr_assert_eq(c->progress_calls, 0);
    for (int r = 0; r < REP_MAX; r++)
        cr_assert_eq(atomic_load(&c->calls[r]), 0);
    free(c);
}

Test(rep, smallest_failing_index_code_is_returned)
{
    const int threads[] = { 1, 2, 7 };
    for (size_t k = 0; k < 3; k++) {
        rep_ctx *c = rep_ctx_new();
        c->nfail = 3;
        c->fail_at[0] = 55; c->fail_code[0] = 555;
        c->fail_at[1] = 30; c->fail_code[1] = 333;
        c->fail_at[2] = 31; c->fail_code[2] = -7;
        int rc = rep_run_all(200, threads[k], rep_body, c, rep_progress, c);
        cr_assert_eq(rc, 333, "threads=%d: rc %d, want 333", threads[k], rc);
        /* every replication before the first failure ran, each at most once */
        for (int r = 0; r <= 30; r++)
            cr_assert_eq(atomic_load(&c->calls[r]), 1, "threads=%d rep %d", threads[k], r);
        for (int r = 0; r < 200; r++)
            cr_assert_leq(atomic_load(&c->calls[r]), 1);
        if (threads[k] == 1)          /* in this thread, in order: stops at the failure */
            for (int r = 31; r < 200; r++)
                cr_assert_eq(atomic_load(&c->calls[r]), 0, "serial run went on to %d", r);
        free(c);
    }
}

Test(rep, failure_in_the_last_replication)
{
    const int threads[] = { 1, 2, 7 };
    for (size_t k = 0; k < 3; k++) {
        rep_ctx *c = rep_ctx_new();
        c->nfail = 1;
        c->fail_at[0] = 99;
        c->fail_code[0] = 12;
        cr_assert_eq(rep_run_all(100, threads[k], rep_body, c, rep_progress, c), 12);
        cr_assert_eq(c->progress_calls, 100);        /* all ran, failure was last */
        free(c);
    }
}

Test(rep, default_threads_positive)
{
    cr_assert_geq(rep_default_threads(), 1);
}

/* ======================================================================
 * rng — stream seeding
 * ====================================================================== */

static int u64_cmp(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

Test(rng, stream_seed_deterministic_and_collision_free)
{
    const uint64_t seeds[] = { 0, 1, 2, 42, 0x8000000000000000ULL, UINT64_MAX };
    const uint32_t streams[] = { 0, 1, 2, 3, 4, 7, 31, 32, 0x80000000u, 0x80000001u,
                                 0xdeadbeefu, UINT32_MAX };
    enum { NSEED = 6, NREP = 50, NSTREAM = 12, N = NSEED * NREP * NSTREAM };
    uint64_t *h = malloc(N * sizeof *h);
    uint64_t *first = malloc(N * sizeof *first);
    cr_assert(h && first);
    size_t n = 0;
    for (int i = 0; i < NSEED; i++)
        for (uint32_t r = 0; r < NREP; r++)
            for (int s = 0; s < NSTREAM; s++) {
                uint64_t v = rng_stream_seed(seeds[i], r, streams[s]);
                cr_assert_eq(v, rng_stream_seed(seeds[i], r, streams[s]), "not deterministic");
                h[n] = v;
                /* the generator's first two draws, as one 64-bit word */
                gsl_rng *g = rng_stream(seeds[i], r, streams[s]);
                cr_assert_not_null(g);
                uint64_t a = gsl_rng_get(g), b = gsl_rng_get(g);
                first[n] = a << 32 | b;
                gsl_rng_free(g);
                n++;
            }
    qsort(h, N, sizeof *h, u64_cmp);
    qsort(first, N, sizeof *first, u64_cmp);
    for (size_t i = 1; i < N; i++) {
        cr_assert_neq(h[i], h[i - 1], "two triples share the seed %#llx",
                      (unsigned long long)h[i]);
        cr_assert_neq(first[i], first[i - 1], "two triples start with the same draws");
    }
    free(h);
    free(first);
}

Test(rng, same_triple_same_sequence)
{
    gsl_rng *a = rng_stream(2024, 3, 0x80001234u);
    gsl_rng *b = rng_stream(2024, 3, 0x80001234u);
    cr_assert(a && b);
    cr_assert_eq(a->type, rng_xoshiro256pp);
    for (int i = 0; i < 5000; i++)
        cr_assert_eq(gsl_rng_get(a), gsl_rng_get(b), "draw %d differs", i);
    gsl_rng_free(a);
    gsl_rng_free(b);
}

/* Two sequences of 32-bit draws agree at a position with probability 2^-32. */
static int same_draws(gsl_rng *a, gsl_rng *b, int n)
{
    int same = 0;
    for (int i = 0; i < n; i++)
        same += gsl_rng_get(a) == gsl_rng_get(b);
    return same;
}

Test(rng, different_streams_reps_seeds_differ)
{
    const uint64_t base_seed = 7;
    struct { uint64_t seed; uint32_t rep, stream; } other[] = {
        { base_seed, 0, 1 }, { base_seed, 1, 0 }, { base_seed + 1, 0, 0 },
        { base_seed, 0, 0x80000000u }, { 0, 0, 0 }, { base_seed, 1, 1 },
    };
    for (size_t k = 0; k < sizeof other / sizeof other[0]; k++) {
        gsl_rng *ref = rng_stream(base_seed, 0, 0);
        gsl_rng *g = rng_stream(other[k].seed, other[k].rep, other[k].stream);
        cr_assert(ref && g);
        int same = same_draws(ref, g, 1000);
        cr_assert_leq(same, 2, "case %zu: %d of 1000 draws equal", k, same);
        gsl_rng_free(g);
        gsl_rng_free(ref);
    }
}

/* rng.h: "replications are independent". (seed 42, rep 2534, stream 11) and
 * (seed 42, rep 2536, stream 6) are distinct triples; they must not yield the
 * same stream. Regression: when streams were MT19937 seeded with the 64-bit hash
 * folded to 32 bits, these two (found by a birthday search over the 2^20 triples
 * rep < 65536, stream < 16, which held 130 such pairs) gave identical draws. */
Test(rng, distinct_triples_found_by_birthday_search_differ)
{
    cr_assert_neq(rng_stream_seed(42, 2534, 11), rng_stream_seed(42, 2536, 6));
    gsl_rng *a = rng_stream(42, 2534, 11), *b = rng_stream(42, 2536, 6);
    cr_assert(a && b);
    int same = same_draws(a, b, 1000);
    cr_assert_leq(same, 2, "%d of 1000 draws are equal: the two streams are identical", same);
    gsl_rng_free(a);
    gsl_rng_free(b);
}

/* Reference splitmix64 (Vigna, prng.di.unimi.it/splitmix64.c), checked against
 * its published outputs for state 0. */
static uint64_t ref_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* rng.h: "256 bits of state seeded from the full 64-bit hash" by splitmix64. */
Test(rng, state_is_the_splitmix64_expansion_of_the_stream_seed)
{
    const uint64_t published[4] = { 0xe220a8397b1dcdafULL, 0x6e789e6aa1b965f4ULL,
                                    0x06c45d188009454fULL, 0xf88bb8a8724c81ecULL };
    uint64_t x = 0;
    for (int k = 0; k < 4; k++)
        cr_assert_eq(ref_splitmix64(&x), published[k], "reference splitmix64 is wrong");
    gsl_rng *g = gsl_rng_alloc(rng_xoshiro256pp);
    cr_assert_not_null(g);
    gsl_rng_set(g, 0);
    const rng_state *st = g->state;
    for (int k = 0; k < 4; k++)
        cr_assert_eq(st->s[k], published[k], "s[%d] = %#llx", k, (unsigned long long)st->s[k]);
    gsl_rng_free(g);
    /* every stream: splitmix64 of rng_stream_seed, all 64 bits used */
    const uint64_t seeds[] = { 0, 1, 0xffffffff00000000ULL, UINT64_MAX };
    for (int i = 0; i < 4; i++)
        for (uint32_t rep = 0; rep < 3; rep++)
            for (uint32_t stream = 0; stream < 3; stream++) {
                gsl_rng *r = rng_stream(seeds[i], rep, stream);
                cr_assert_not_null(r);
                uint64_t z = rng_stream_seed(seeds[i], rep, stream);
                const rng_state *s = r->state;
                for (int k = 0; k < 4; k++)
                    cr_assert_eq(s->s[k], ref_splitmix64(&z));
                gsl_rng_free(r);
            }
}

/* Reference xoshiro256++ step (Blackman & Vigna, prng.di.unimi.it/xoshiro256plusplus.c). */
static uint64_t ref_rotl(uint64_t v, int k) { return (v << k) | (v >> (64 - k)); }
static uint64_t ref_xoshiro(uint64_t s[4])
{
    uint64_t out = ref_rotl(s[0] + s[3], 23) + s[0], t = s[1] << 17;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3];
    s[2] ^= t;
    s[3] = ref_rotl(s[3], 45);
    return out;
}

Test(rng, gsl_interface_follows_the_64_bit_output)
{
    /* gsl_rng_get: the high 32 bits; gsl_rng_uniform: the high 53 bits / 2^53. */
    gsl_rng *a = rng_stream(99, 1, 2);
    cr_assert_not_null(a);
    uint64_t s[4];
    memcpy(s, ((rng_state *)a->state)->s, sizeof s);
    for (int i = 0; i < 3000; i++) {
        uint64_t o = ref_xoshiro(s);
        switch (i % 3) {
        case 0: cr_assert_eq(rng_next64(a), o, "draw %d", i); break;
        case 1: cr_assert_eq(gsl_rng_get(a), (unsigned long)(o >> 32), "draw %d", i); break;
        default: cr_assert_eq(gsl_rng_uniform(a), (double)(o >> 11) / 9007199254740992.0,
                              "draw %d", i);
        }
    }
    cr_assert_eq(gsl_rng_max(a), 0xffffffffUL);
    cr_assert_eq(gsl_rng_min(a), 0UL);
    gsl_rng_free(a);
}

/* rng.h: rng_uniform_pos is "uniform on (0, 1), 53 random bits; never 0 or 1".
 * State {0, 1, 2, 2^64 - 1} makes the next output rotl(0 + (2^64 - 1), 23) + 0
 * = 2^64 - 1 (all ones), the largest possible; state {0, 1, 0, 0} makes it 0. */
Test(rng, uniform_pos_never_returns_0_or_1_at_the_extremes)
{
    gsl_rng *g = gsl_rng_alloc(rng_xoshiro256pp);
    cr_assert_not_null(g);
    rng_state *st = g->state;
    st->s[0] = 0; st->s[1] = 1; st->s[2] = 0; st->s[3] = 0;
    double lo = rng_uniform_pos(g);
    cr_assert(lo > 0.0 && lo < 1e-15, "smallest draw %a", lo);
    st->s[0] = 0; st->s[1] = 1; st->s[2] = 2; st->s[3] = UINT64_MAX;
    double hi = rng_uniform_pos(g);
    gsl_rng_free(g);
    cr_assert(hi < 1.0, "largest draw is %a (1.0): -log(u) = 0, log(1 - u) = -inf", hi);
    cr_assert(hi > 1.0 - 1e-15, "largest draw %a", hi);
}
