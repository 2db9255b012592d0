/* test_decode.c — video decode timing (issue 4, "Decode stage";
 * calib/decode_time.h and `vlcalib decode`, calib/vlcalib_decode.c).
 * Criterion suite `decode`.
 *
 * Small clips (320x240, 60 frames, GOP 15) encoded with libx264 and decoded
 * in process: one I-frame per GOP, B-frames when allowed, counts adding up,
 * I-frames slower to decode than P-frames, bad parameters refused, and the
 * command's table and files. Timing claims are kept to what holds on a noisy
 * shared box: at this size an I-frame takes about 5x a P-frame (median), and
 * the test asks only for median(I) > 1.5 x median(P) and mean(I) > mean(P).
 * Files are written only under a fresh mkdtemp directory, removed after. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calib/decode_time.h"

static dect_params small_clip(int bframes)
{
    dect_params p;
    dect_params_default(&p);
    p.width = 320;
    p.height = 240;
    p.frames = 60;
    p.gop = 15;
    p.bframes = bframes;
    p.passes = 2;
    return p;
}

static void check_counts(const dect_params *p, const dect_result *r)
{
    int total = 0;
    for (int t = 0; t < DECT_NTYPES; t++)
        total += r->type[t].n;
    cr_assert_eq(r->frames, p->frames);
    cr_assert_eq(r->other, 0, "%d frames of another picture type", r->other);
    cr_assert_eq(total, p->frames * p->passes, "I %d + P %d + B %d != %d x %d", r->type[DECT_I].n,
                 r->type[DECT_P].n, r->type[DECT_B].n, p->frames, p->passes);
    /* exactly one I-frame per GOP: 60 / 15 = 4 per pass */
    cr_assert_eq(r->type[DECT_I].n, p->passes * (p->frames / p->gop), "I-frames: %d", r->type[DECT_I].n);
    cr_assert_gt(r->bytes, 0);
    cr_assert_str_eq(r->encoder, "libx264");
    for (int t = 0; t < DECT_NTYPES; t++) {
        const harness_result *h = &r->type[t];
        for (int i = 0; i < h->n; i++)
            cr_assert_gt(h->samples[i], 0.0);
        if (h->n) {
            cr_assert(h->min <= h->p50 && h->p50 <= h->p95 && h->p95 <= h->p99 && h->p99 <= h->max);
            cr_assert(h->min <= h->mean && h->mean <= h->max);
        }
    }
}

static void check_i_slower(const dect_result *r)
{
    const harness_result *I = &r->type[DECT_I], *P = &r->type[DECT_P];
    cr_assert_gt(P->n, 0);
    if (getenv("VL_TEST_VERBOSE"))
        fprintf(stderr, "decode 320x240: I p50 %.3f mean %.3f ms, P p50 %.3f mean %.3f ms\n", I->p50,
                I->mean, P->p50, P->mean);
    cr_assert_gt(I->p50, 1.5 * P->p50, "median I %.3f ms vs P %.3f ms", I->p50, P->p50);
    cr_assert_gt(I->mean, P->mean, "mean I %.3f ms vs P %.3f ms", I->mean, P->mean);
}

Test(decode, gop_without_bframes)
{
    dect_params p = small_clip(0);
    dect_result r;
    char err[256] = "";
    cr_assert_eq(dect_run(&p, &r, err, sizeof err), 0, "%s", err);
    check_counts(&p, &r);
    cr_assert_eq(r.type[DECT_B].n, 0);
    cr_assert_null(r.type[DECT_B].samples);
    cr_assert_eq(r.type[DECT_P].n, p.passes * (p.frames - p.frames / p.gop));
    check_i_slower(&r);
    dect_result_free(&r);
}

Test(decode, gop_with_bframes)
{
    dect_params p = small_clip(2);
    dect_result r;
    char err[256] = "";
    cr_assert_eq(dect_run(&p, &r, err, sizeof err), 0, "%s", err);
    check_counts(&p, &r);
    cr_assert_gt(r.type[DECT_B].n, 0, "no B-frames with bframes 2");
    cr_assert_eq(r.type[DECT_B].n % p.passes, 0);
    check_i_slower(&r);
    dect_result_free(&r);
}

Test(decode, all_intra)
{
    dect_params p = small_clip(0);
    p.frames = 8;
    p.gop = 1;
    p.passes = 1;
    dect_result r;
    char err[256] = "";
    cr_assert_eq(dect_run(&p, &r, err, sizeof err), 0, "%s", err);
    cr_assert_eq(r.type[DECT_I].n, 8);
    cr_assert_eq(r.type[DECT_P].n + r.type[DECT_B].n, 0);
    dect_result_free(&r);
}

static void expect_bad(const dect_params *p, const char *needle)
{
    char err[256] = "";
    cr_assert_eq(dect_check(p, err, sizeof err), -1, "accepted; wanted \"%s\"", needle);
    cr_assert(strstr(err, needle), "message \"%s\" lacks \"%s\"", err, needle);
    dect_result r;
    err[0] = '\0';
    cr_assert_eq(dect_run(p, &r, err, sizeof err), -1);
    cr_assert(strstr(err, needle), "dect_run: \"%s\"", err);
    cr_assert_eq(r.type[DECT_I].n, 0);
    dect_result_free(&r);
}

Test(decode, bad_parameters)
{
    dect_params p = small_clip(0);
    p.width = 321;
    expect_bad(&p, "must be even");
    p = small_clip(0);
    p.height = 239;
    expect_bad(&p, "must be even");
    p = small_clip(0);
    p.gop = 0;
    expect_bad(&p, "gop 0: must be >= 1");
    p = small_clip(2);
    p.gop = 2;
    expect_bad(&p, "bframes 2: must be < gop");
    p = small_clip(0);
    snprintf(p.codec, sizeof p.codec, "vp9");
    expect_bad(&p, "must be h264 or mpeg4");
    p = small_clip(0);
    p.frames = 0;
    expect_bad(&p, "frames 0");
    p = small_clip(0);
    p.fps = 0;
    expect_bad(&p, "fps 0");
    p = small_clip(0);
    p.crf = 52;
    expect_bad(&p, "crf 52");
}

Test(decode, parse_resolution)
{
    int w = 0, h = 0;
    cr_assert_eq(dect_parse_resolution("1280x720", &w, &h), 0);
    cr_assert(w == 1280 && h == 720);
    cr_assert_eq(dect_parse_resolution("1920X1080", &w, &h), 0);
    cr_assert(w == 1920 && h == 1080);
    const char *bad[] = {"", "1280", "1280x", "x720", "1280x720p", "-2x4", "0x0", "99999x2", NULL};
    for (int i = 0; bad[i]; i++)
        cr_assert_eq(dect_parse_resolution(bad[i], &w, &h), -1, "accepted \"%s\"", bad[i]);
}

/* ---- the command ---- */

static int run_cmd(char **argv, int argc, char *outbuf, size_t outlen, char *errbuf, size_t errlen)
{
    FILE *o = fmemopen(outbuf, outlen, "w"), *e = fmemopen(errbuf, errlen, "w");
    cr_assert(o && e);
    int rc = vlcalib_decode_main(argc, argv, o, e);
    fclose(o);
    fclose(e);
    return rc;
}

static int count_values(const char *path)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s missing", path);
    char line[128];
    int n = 0;
    while (fgets(line, sizeof line, f))
        if (line[0] != '#' && line[0] != '\n') {
            cr_assert_gt(strtod(line, NULL), 0.0, "%s: %s", path, line);
            n++;
        }
    fclose(f);
    return n;
}

Test(decode, command_writes_table_and_files)
{
    char dir[] = "/tmp/vl-decode-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char yaml[128], ip[128], pp[128], bp[128];
    snprintf(yaml, sizeof yaml, "%s/d.yaml", dir);
    snprintf(ip, sizeof ip, "%s/d.I.samples", dir);
    snprintf(pp, sizeof pp, "%s/d.P.samples", dir);
    snprintf(bp, sizeof bp, "%s/d.B.samples", dir);
    char *argv[] = {"decode", "--codec", "h264", "--resolution", "320x240", "--fps", "25", "--gop", "15",
                    "--bframes", "2", "--frames", "30", "--out", yaml};
    int argc = (int)(sizeof argv / sizeof *argv);
    static char out[8192], err[2048];
    cr_assert_eq(run_cmd(argv, argc, out, sizeof out, err, sizeof err), 0, "%s", err);
    cr_assert(strstr(out, "decode h264 320x240, 25 fps, GOP 15, 2 B-frames"), "%s", out);
    cr_assert(strstr(out, "\nI         2 "), "%s", out);
    int ni = count_values(ip), np = count_values(pp), nb = count_values(bp);
    cr_assert_eq(ni, 2);
    cr_assert_eq(ni + np + nb, 30);

    FILE *f = fopen(yaml, "r");
    cr_assert_not_null(f);
    static char text[8192];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    /* the calibration file (calib/README.md): one op, a point per frame type */
    cr_assert(strstr(text, "  - op: decode_video\n"), "%s", text);
    cr_assert(strstr(text, "    codec: h264\n"));
    cr_assert(strstr(text, "    resolution: \"320x240\"\n"));
    cr_assert(strstr(text, "{frame_type: I, batch: 1, "));
    cr_assert(strstr(text, " n: 2, p50_ms: "));
    char csv[128];
    snprintf(csv, sizeof csv, "%s/d.samples.csv", dir);
    FILE *cf = fopen(csv, "r");
    cr_assert_not_null(cf, "%s missing", csv);
    char line[256];
    int rows = 0;
    while (fgets(line, sizeof line, cf))
        rows += strncmp(line, "decode_video,", 13) == 0;
    fclose(cf);
    cr_assert_eq(rows, 30, "one samples row per decoded frame");

    /* an existing output is refused without --force, before any work */
    cr_assert_eq(run_cmd(argv, argc, out, sizeof out, err, sizeof err), 2);
    cr_assert(strstr(err, "--force"), "%s", err);

    /* the clip's content: a factor per frame, and each type's draws beside it */
    char cp[128], rp[3][128];
    snprintf(cp, sizeof cp, "%s/d.content", dir);
    cr_expect_eq(count_values(cp), 30);
    const char *tn[] = {"I", "P", "B"};
    int want[] = {ni, np, nb};
    for (int t = 0; t < 3; t++) {
        snprintf(rp[t], sizeof rp[t], "%s/d.%s.resid.samples", dir, tn[t]);
        cr_expect_eq(count_values(rp[t]), want[t], "%s", rp[t]);
    }

    unlink(yaml);
    unlink(csv);
    unlink(ip);
    unlink(pp);
    unlink(bp);
    unlink(cp);
    for (int t = 0; t < 3; t++)
        unlink(rp[t]);
    cr_assert_eq(rmdir(dir), 0);
}

Test(decode, command_refuses_bad_parameters)
{
    static char out[1024], err[1024];
    char *odd[] = {"decode", "--resolution", "321x240", "--frames", "4"};
    cr_assert_eq(run_cmd(odd, 5, out, sizeof out, err, sizeof err), 2);
    cr_assert(strstr(err, "must be even"), "%s", err);
    char *gop[] = {"decode", "--gop", "0"};
    cr_assert_eq(run_cmd(gop, 3, out, sizeof out, err, sizeof err), 2);
    cr_assert(strstr(err, "gop 0: must be >= 1"), "%s", err);
    char *res[] = {"decode", "--resolution", "720p"};
    cr_assert_eq(run_cmd(res, 3, out, sizeof out, err, sizeof err), 2);
    cr_assert(strstr(err, "expected WxH"), "%s", err);
    char *num[] = {"decode", "--fps", "thirty"};
    cr_assert_eq(run_cmd(num, 3, out, sizeof out, err, sizeof err), 2);
    cr_assert(strstr(err, "not an integer"), "%s", err);
    char *unk[] = {"decode", "--bogus"};
    cr_assert_eq(run_cmd(unk, 2, out, sizeof out, err, sizeof err), 2);
    cr_assert(strstr(err, "unknown option --bogus"), "%s", err);
    char *help[] = {"decode", "--help"};
    cr_assert_eq(run_cmd(help, 2, out, sizeof out, err, sizeof err), 0);
    cr_assert(strstr(out, "usage: vlcalib decode"), "%s", out);
}

/* The clip's content by hand: 3 frames; I-frame 0 timed 6 and 10 ms, P-frame
 * 1 timed 2 and 4, P-frame 2 timed 1 and 3. P mean 2.5: frame 1's factor
 * 3 / 2.5 = 1.2, frame 2's 2 / 2.5 = 0.8; frame 0's 8 / 8 = 1. The draws
 * are the samples over their factors: 2 / 1.2, 4 / 1.2, 1 / 0.8, 3 / 0.8. A
 * frame out of the clip is refused and leaves r as it was. */
Test(decode, content_by_hand)
{
    double si[] = {6, 10}, sp[] = {2, 4, 1, 3};
    int ai[] = {0, 0}, ap[] = {1, 1, 2, 2}, bad[] = {1, 1, 3, 2};
    dect_result r;
    memset(&r, 0, sizeof r);
    r.frames = 3;
    r.type[DECT_I] = (harness_result){.n = 2, .samples = si, .mean = 8};
    r.type[DECT_P] = (harness_result){.n = 4, .samples = sp, .mean = 2.5};
    const int *off[DECT_NTYPES] = {ai, bad, NULL};
    cr_assert_eq(dect_content(&r, off), -1);
    cr_expect_null(r.content);
    const int *at[DECT_NTYPES] = {ai, ap, NULL};
    cr_assert_eq(dect_content(&r, at), 0);
    cr_expect_float_eq(r.content[0], 1.0, 1e-12);
    cr_expect_float_eq(r.content[1], 1.2, 1e-12);
    cr_expect_float_eq(r.content[2], 0.8, 1e-12);
    double want[] = {2 / 1.2, 4 / 1.2, 1 / 0.8, 3 / 0.8};
    for (int i = 0; i < 4; i++)
        cr_expect_float_eq(r.resid[DECT_P][i], want[i], 1e-12, "P draw %d", i);
    cr_expect_float_eq(r.resid[DECT_I][0], 6.0, 1e-12);
    cr_expect_float_eq(r.resid[DECT_I][1], 10.0, 1e-12);
    cr_expect_null(r.resid[DECT_B]);
    free(r.content);
    for (int t = 0; t < DECT_NTYPES; t++)
        free(r.resid[t]);
}
