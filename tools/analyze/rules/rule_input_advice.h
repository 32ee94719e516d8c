/*
 * The change of the input_pipeline finding (rule_input_pipeline.c): from the CPU samples
 * when the trace has them, else from the driver calls alone.
 */
#ifndef GPUWATCH_ANALYZE_RULE_INPUT_ADVICE_H
#define GPUWATCH_ANALYZE_RULE_INPUT_ADVICE_H

#include "rules.h"

/* workers: the num_workers to suggest (0 when the CPU count is unknown). */
void an_input_cpu_advice(const struct an_model *m, const struct an_rule_ctx *ctx,
                         unsigned workers, struct an_finding *f);
/* graphs_per_step: CUDA graphs each steady step replays (0: none, or no steps). */
void an_input_blind_advice(const struct an_model *m, const struct an_rule_ctx *ctx,
                           unsigned workers, double graphs_per_step, struct an_finding *f);

#endif
