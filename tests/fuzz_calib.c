/* fuzz_calib.c — libFuzzer target for the calibration-file reader
 * (models/calib_read.c): any bytes are either a calibration file or one
 * clear error, never a crash, a hang, a leak or undefined behaviour.
 *
 * The input is the text of a calibration file, read with calf_read_mem.
 * Checked on every input: an error is one non-empty line naming the file
 * and leaves the calf_file zeroed; a file that reads has its op count and
 * points as promised, and every op is then turned into a batch table
 * (calf_table, as a scenario's calib: key does) under the selections a
 * scenario may give, each either a table or a one-line error. A line
 * "#samples" splits the input: what follows is the raw-samples CSV beside
 * the file (calf_samples, calf_empirical_ratios), read from a memory file;
 * every other open fails (the fopen sandbox, fuzz_sandbox.h).
 *   make fuzz            both targets briefly; see README "Fuzzing" */
#define _GNU_SOURCE
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "models/calib_read.h"
#include "tests/fuzz_sandbox.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NAME "fuzz.yaml"

#define MARK "\n#samples\n"

static int memfd = -1;
static char memfd_path[64];
static bool verbose;          /* FUZZ_VERBOSE set: print each outcome to stderr */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    sandbox_init();
    verbose = getenv("FUZZ_VERBOSE") != NULL;
    memfd = memfd_create("fuzz-calib-samples", 0);
    if (memfd >= 0) {
        snprintf(memfd_path, sizeof memfd_path, "/proc/self/fd/%d", memfd);
        sandbox_allow(memfd_path);
    }
    return 0;
}

static void one_error(const char *err, size_t size)
{
    if (!memchr(err, '\0', size) || !err[0] || strchr(err, '\n'))
        abort();
}

/* Each op's samples from the CSV in the memory file: all or nothing. */
static void check_samples(const calf_file *f)
{
    char err[512];
    for (int i = 0; i < f->nops; i++) {
        const calf_op *o = &f->ops[i];
        double **vals = calloc((size_t)o->npoints, sizeof *vals);
        size_t *counts = calloc((size_t)o->npoints, sizeof *counts);
        if (!vals || !counts)
            abort();
        memset(err, 'X', sizeof err);
        int rc = calf_samples(memfd_path, o, vals, counts, err, sizeof err);
        if (verbose)
            fprintf(stderr, "fuzz_calib: ops[%d] samples: %s\n", i, rc ? err : "read");
        for (int k = 0; k < o->npoints; k++) {
            if (rc ? vals[k] || counts[k] : !vals[k] != !counts[k])
                abort();
            for (size_t j = 0; j < counts[k]; j++)
                if (!(vals[k][j] > 0) || !isfinite(vals[k][j]))
                    abort();
            free(vals[k]);
        }
        if (rc)
            one_error(err, sizeof err);
        free(vals);
        free(counts);
        double *ratios = NULL;
        size_t nr = 0;
        calf_select any = {-1, -1, -1, false};
        memset(err, 'X', sizeof err);
        rc = calf_empirical_ratios(memfd_path, o, &any, &ratios, &nr, err, sizeof err);
        if (rc ? ratios || nr : !ratios || !nr)
            abort();
        if (rc)
            one_error(err, sizeof err);
        free(ratios);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const calf_file zero;
    char err[512];
    calf_file f;
    memset(&f, 0xab, sizeof f);
    memset(err, 'X', sizeof err);
    const char *text = (const char *)data;
    const char *mark = memmem(text, size, MARK, strlen(MARK));
    size_t ylen = mark ? (size_t)(mark - text) + 1 : size;
    int rc = calf_read_mem(text, ylen, NAME, &f, err, sizeof err);
    if (verbose)
        fprintf(stderr, "fuzz_calib: %s\n", rc == 0 ? "read" : err);
    if (rc != 0) {
        one_error(err, sizeof err);
        if (strncmp(err, NAME, strlen(NAME)) != 0 || memcmp(&f, &zero, sizeof f) != 0)
            abort();
        return 0;
    }
    if (f.version != CALF_VERSION || f.nops < 0 || (f.nops && !f.ops))
        abort();
    for (int i = 0; i < f.nops; i++) {
        const calf_op *o = &f.ops[i];
        if (o->npoints < 1 || !o->points || calf_find(&f, o->op, o->model) == NULL)
            abort();
        const calf_point *p0 = &o->points[0];
        const calf_select sels[] = {
            {-1, -1, -1, false}, {-1, -1, -1, true},
            {p0->tokens_in, p0->tokens_out, p0->cache_len, false}};
        for (size_t s = 0; s < sizeof sels / sizeof sels[0]; s++) {
            batch_table t;
            int raised = -1;
            double srms = -1;
            memset(err, 'X', sizeof err);
            if (calf_table(o, &sels[s], &t, &raised, &srms, err, sizeof err) != 0) {
                if (verbose)
                    fprintf(stderr, "fuzz_calib: ops[%d] table: %s\n", i, err);
                one_error(err, sizeof err);
                continue;
            }
            if (t.n < 1 || t.n > CFG_MAX_TABLE || raised < 0 || !(srms >= 0))
                abort();
            for (int k = 1; k < t.n; k++)
                if (!(t.batch[k] > t.batch[k - 1]) || t.ms[k] < t.ms[k - 1])
                    abort();
        }
    }
    if (mark && memfd >= 0) {
        const char *csv = mark + strlen(MARK);
        size_t clen = size - (size_t)(csv - text);
        if (ftruncate(memfd, 0) || pwrite(memfd, csv, clen, 0) != (ssize_t)clen)
            abort();
        check_samples(&f);
    }
    calf_free(&f);
    return 0;
}
