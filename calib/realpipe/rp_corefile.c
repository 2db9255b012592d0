/* rp_corefile.c — corecal's file, written and read back. See rp_corefile.h.
 * It must never guess a round it cannot read: a file short of a line, or
 * with rounds lines of different lengths, is an error. */
#include "calib/realpipe/rp_corefile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib/realpipe/rp_flow.h"

char *rp_corefile_text(const rp_cores_result *r, const char *comment)
{
    char *text = NULL;
    size_t cap = 0;
    FILE *m = open_memstream(&text, &cap);
    if (!m)
        return NULL;
    fprintf(m, "# %s\n# min..max of the rounds' units(k) / units(1):", comment);
    for (int k = 0; k < r->threads; k++)
        fprintf(m, " %.3f..%.3f", r->lo[k], r->hi[k]);
    fprintf(m, "\ncpus: %d\nunits_per_s: [", r->cpus);
    for (int k = 0; k < r->threads; k++)
        fprintf(m, "%s%.2f", k ? ", " : "", r->units[k]);
    fprintf(m, "]\nspeedup: [");
    for (int k = 0; k < r->threads; k++)
        fprintf(m, "%s%.4f", k ? ", " : "", r->speedup[k]);
    fprintf(m, "]\n");
    for (int k = 0; k < r->threads; k++) {
        fprintf(m, "rounds_k%d: ", k + 1);
        rp_flow_write(m, r->round_units[k], r->rounds);
        fprintf(m, "\n");
    }
    if (fclose(m) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

int rp_corefile_read(const char *path, rp_cores_result *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "cannot open %s (%s)", path, strerror(errno));
        return -1;
    }
    char line[8192];
    int lineno = 0, rc = 0;
    r->rounds = -1;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        int k, at = 0;
        if (!strncmp(line, "cpus:", 5)) {
            if (sscanf(line + 5, "%d", &r->cpus) != 1 || r->cpus < 1) {
                snprintf(err, errlen, "%s:%d: cpus: expected a whole number >= 1", path, lineno);
                rc = -1;
            }
        } else if (sscanf(line, "rounds_k%d: %n", &k, &at) == 1 && at > 0) {
            const char *s = line + at;
            double x[RP_CORES_ROUNDS];
            int nr = rp_flow_read(&s, x, RP_CORES_ROUNDS);
            if (k != r->threads + 1 || k > RP_CORES_MAX) {
                snprintf(err, errlen, "%s:%d: rounds_k%d: expected rounds_k%d (k = 1..%d in order)",
                         path, lineno, k, r->threads + 1, RP_CORES_MAX);
                rc = -1;
            } else if (nr < 1 || (r->rounds >= 0 && nr != r->rounds)) {
                snprintf(err, errlen, "%s:%d: rounds_k%d: expected a list of %s numbers", path,
                         lineno, k, r->rounds >= 0 ? "as many" : "1 to 100");
                rc = -1;
            } else {
                for (int rd = 0; rd < nr; rd++)
                    if (x[rd] < 0) {
                        snprintf(err, errlen, "%s:%d: rounds_k%d: a count below 0 (%g)", path,
                                 lineno, k, x[rd]);
                        rc = -1;
                    }
                memcpy(r->round_units[k - 1], x, (size_t)nr * sizeof *x);
                r->rounds = nr;
                r->threads = k;
            }
        }
    }
    fclose(f);
    if (rc == 0 && (r->threads == 0 || r->cpus == 0)) {
        snprintf(err, errlen, "%s: no %s line (expected vlrealpipe corecal --out output, "
                 "since 2026-12-04: an older file cannot be pooled, calibrate again)", path,
                 r->cpus == 0 ? "\"cpus: C\"" : "\"rounds_k1: [...]\"");
        rc = -1;
    }
    if (rc)
        return -1;
    rp_cores_summarise(r);
    return 0;
}
