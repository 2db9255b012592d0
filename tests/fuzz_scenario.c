/* fuzz_scenario.c — libFuzzer target for the scenario loader
 * (models/scenario.c): any bytes are either a scenario or one clear error,
 * never a crash, a hang, a leak or undefined behaviour.
 *
 * The input is the text of a scenario. When it starts with lines
 * "#= KEY=VALUE" (YAML comments, at most 4) those are also applied as
 * overrides (scn_load_ex, as vlsim run --set does), through a memory file;
 * otherwise it is loaded with scn_load_string. What the loader promises is
 * checked on every input: an error is one non-empty line naming the file
 * (or an override) and leaves the config all zero; a success has at least
 * one stage and stays inside the loader's bounds. Files the scenario names
 * (calibration and sample files) come only from the sandbox
 * (fuzz_sandbox.h).
 *   make fuzz            both targets briefly; see README "Fuzzing" */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "models/scenario.h"
#include "tests/fuzz_sandbox.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NAME "fuzz.yaml"
#define MAX_OV 4

static int memfd = -1;
static char memfd_path[64];

static bool verbose;          /* FUZZ_VERBOSE set: print each outcome to stderr */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    sandbox_init();
    verbose = getenv("FUZZ_VERBOSE") != NULL;
    memfd = memfd_create("fuzz-scenario", 0);
    if (memfd >= 0) {
        snprintf(memfd_path, sizeof memfd_path, "/proc/self/fd/%d", memfd);
        sandbox_allow(memfd_path);
    }
    return 0;
}

/* The "#= KEY=VALUE" lines at the start of text: copies in keys/values. */
static size_t parse_overrides(const char *text, size_t len, char bufs[MAX_OV][2][128],
                              scn_override *ov)
{
    size_t n = 0, at = 0;
    while (n < MAX_OV && at + 2 < len && text[at] == '#' && text[at + 1] == '=') {
        const char *line = text + at + 2, *end = text + len;
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        const char *stop = nl ? nl : end;
        while (line < stop && *line == ' ')
            line++;
        size_t ll = (size_t)(stop - line);
        const char *eq = memchr(line, '=', ll);
        if (eq && !memchr(line, 0, ll)) {
            size_t kl = (size_t)(eq - line), vl = ll - kl - 1;
            if (kl < 128 && vl < 128) {
                memcpy(bufs[n][0], line, kl);
                bufs[n][0][kl] = '\0';
                memcpy(bufs[n][1], eq + 1, vl);
                bufs[n][1][vl] = '\0';
                ov[n].key = bufs[n][0];
                ov[n].value = bufs[n][1];
                n++;
            }
        }
        if (!nl)
            break;
        at = (size_t)(nl - text) + 1;
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const scenario_cfg zero;
    const char *text = (const char *)data;
    char err[512], bufs[MAX_OV][2][128];
    scn_override ov[MAX_OV];
    scenario_cfg c;
    memset(&c, 0xab, sizeof c);
    memset(err, 'X', sizeof err);
    size_t nov = parse_overrides(text, size, bufs, ov);
    int rc;
    const char *name = NAME;
    if (nov && memfd >= 0) {
        if (ftruncate(memfd, 0) || pwrite(memfd, data, size, 0) != (ssize_t)size)
            abort();
        name = memfd_path;
        rc = scn_load_ex(memfd_path, ov, nov, &c, err, sizeof err);
    } else {
        rc = scn_load_string(text, size, NAME, "sandbox", &c, err, sizeof err);
    }
    if (verbose)
        fprintf(stderr, "fuzz_scenario: %s\n", rc == 0 ? "loaded" : err);
    if (rc == 0) {
        /* the loader's bounds (README "Hostile inputs") hold for whatever loads */
        const workload_cfg *w = &c.workload;
        if (c.nstages < 1 || !c.stages || !(c.duration_s > 0) || c.duration_s > 1e9
            || !(c.warmup_s >= 0) || c.warmup_s > 1e9 || c.replications > 100000
            || c.cluster.gpus > 65536 || (long long)w->streams + w->surge_streams > 1000000
            || w->fps > 1000 || w->rate_hz > 1e6 || !(c.degrade.interval_s >= 0.001))
            abort();
        for (int s = 0; s < c.nstages; s++)
            if (c.stages[s].max_batch > 65536)
                abort();
        cfg_free(&c);
        return 0;
    }
    if (rc != -1 || !memchr(err, '\0', sizeof err) || !err[0] || strchr(err, '\n')
        || (strncmp(err, name, strlen(name)) != 0 && strncmp(err, "override ", 9) != 0))
        abort();
    if (memcmp(&c, &zero, sizeof c) != 0)
        abort();
    return 0;
}
