/* tome.h — the round schedule of ToMe token reduction, shared by the CPU
 * and CUDA paths (the reference spells it out on its own).
 *
 * To go from n_in to n_out tokens, rounds of bipartite soft matching each
 * merge r = min(remaining, n / 2) tokens, as ToMe limits r to half the
 * tokens per step; 729 -> 64 takes four rounds, merging 364, 182, 91, 28.
 * Only the schedule lives here: it must never hold the matching itself. */
#ifndef VL_CALIB_TOME_H
#define VL_CALIB_TOME_H

/* Tokens merged by the next round, with n tokens now and n_out wanted. */
static inline int tome_round_r(int n, int n_out)
{
    return n - n_out < n / 2 ? n - n_out : n / 2;
}

#endif
