/*
 * Rare long pauses told apart from a wait in every step. Idle time charged to the input
 * pipeline is kept by the length of its stretch (log scale, 8 steps an octave, fixed
 * memory); once the step time is known, stretches of pause_steps median steps or more
 * (evaluation, checkpoint saving, an epoch's DataLoader restart) are pauses, the rest the
 * per-step wait the DataLoader advice is for.
 */
#ifndef GPUWATCH_ANALYZE_PAUSES_H
#define GPUWATCH_ANALYZE_PAUSES_H

#include <stdint.h>

#include "model.h"

/* One stretch of input-pipeline idle time of `ns` from `start`; kept with its start when
 * long_ns or longer (pause_min_ns: any pause). */
void an_pauses_add(struct an_idle_lengths *lengths, uint64_t start, uint64_t ns,
                   uint64_t long_ns);
/* The shortest stretch that is a pause: pause_steps median steps, at least pause_min_ns;
 * 0 (none is) when the run has no steps. */
uint64_t an_pause_threshold(const struct an_model *m);
/* Input-pipeline idle time in pauses over the whole run (the timeline the model reports:
 * GPU records or host evidence) and how many there were; 0 when none, or when they come
 * more often than every pause_every_min steps. Exact to one bucket (a stretch up to 8 %
 * longer than the threshold may not count). */
uint64_t an_pause_ns(const struct an_model *m, uint64_t *count);
/* The part of an_pause_ns in pauses that began in the steady state (what the per-step
 * input wait leaves out), and how many; the rest were in the warm-up or after the last
 * step. The whole run's when more long stretches came than were kept. */
uint64_t an_pause_steady_ns(const struct an_model *m, uint64_t *count);

#endif
