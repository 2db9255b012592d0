/* fuzz_sandbox.h — keeps a fuzz target hermetic: the loaders open files
 * (calibration files, sample files) by paths the fuzzed input names, and a
 * fuzz target must never read arbitrary files of the machine it runs on.
 *
 * The fuzz build renames every call to fopen in the library under test to
 * sandbox_fopen (objcopy --redefine-sym, Makefile), so each lands here: a
 * path is reduced to its last component and opened only when that name is
 * one of the read-only fixtures in calib/data/ or tests/data/scenario/ of
 * the checkout the binary lies in (the nearest directory above it holding
 * calib/data), or the one memory file the target registers; anything else,
 * and any mode other than reading, fails with ENOENT or EACCES. libFuzzer's
 * own files are not affected. It never writes. */
#ifndef VL_FUZZ_SANDBOX_H
#define VL_FUZZ_SANDBOX_H

#include <stdio.h>

/* Find the fixtures (once; from the binary's own path, build/fuzz/NAME). */
void sandbox_init(void);
/* A path fopen may open as it is (a memfd's /proc/self/fd/N), or NULL. */
void sandbox_allow(const char *path);

FILE *sandbox_fopen(const char *path, const char *mode);

#endif
