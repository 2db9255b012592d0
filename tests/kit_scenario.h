/* kit_scenario.h — the loader-error check the scenario tests share (header
 * only, for the Criterion suites in tests/). Never used outside tests/. */
#ifndef VL_TEST_KIT_SCENARIO_H
#define VL_TEST_KIT_SCENARIO_H

#include <criterion/criterion.h>
#include <string.h>

#include "models/scenario.h"

/* len bytes of text, loaded as the scenario `name` with data files under
 * dir, must fail with one line starting "name:<where>" and holding gist,
 * and leave the config all zero. */
static inline void kit_scn_error(const char *text, size_t len, const char *name, const char *dir,
                                 const char *where, const char *gist)
{
    static const scenario_cfg zero;
    scenario_cfg c;
    char err[512], prefix[256];
    memset(&c, 0xab, sizeof c);
    int rc = scn_load_string(text, len, name, dir, &c, err, sizeof err);
    cr_assert_eq(rc, -1, "accepted a malformed scenario:\n%.400s", text);
    snprintf(prefix, sizeof prefix, "%s:%s", name, where);
    cr_expect(strncmp(err, prefix, strlen(prefix)) == 0, "want prefix '%s', got '%s'", prefix, err);
    cr_expect(strstr(err, gist) != NULL, "want '%s' in '%s'", gist, err);
    cr_expect(strchr(err, '\n') == NULL, "message is not one line: '%s'", err);
    cr_expect(memcmp(&c, &zero, sizeof c) == 0, "config not zeroed after an error");
}

#endif
