/* rng.h — independent, reproducible random streams.
 *
 * Every source of randomness in a model (the arrivals, each stage's service
 * times, ...) owns one stream, identified by a small integer chosen by the
 * model. The stream's seed is a hash of (scenario seed, replication, stream
 * id), so a stream's draws depend on nothing else: changing one stage leaves
 * every other stage's draws untouched (common random numbers), and
 * replications are independent of how they are scheduled on threads.
 * The generator is GSL's MT19937. This module keeps no global state. */
#ifndef VL_RNG_H
#define VL_RNG_H

#include <stdint.h>
#include <gsl/gsl_rng.h>

/* The 64-bit seed for one stream (splitmix64 finaliser over the triple). */
uint64_t rng_stream_seed(uint64_t seed, uint32_t replication, uint32_t stream);
/* A new MT19937 generator seeded for that stream; NULL when out of memory. */
gsl_rng *rng_stream(uint64_t seed, uint32_t replication, uint32_t stream);

#endif
