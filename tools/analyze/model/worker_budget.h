/*
 * How many DataLoader workers the input_workers world starts, and how fast each loads, from
 * what the CPU samples say the threads used (cpu_use.h) and what the replay took as batch
 * loads. Workers that load on the CPU share the CPUs with the training thread's own work
 * (spinning in its waits for the GPU, where CUDA spins), with the process's other threads
 * and with other processes (half of what they use: the scheduler splits a CPU between
 * sessions): the loads get the CPUs the rest leaves, and workers beyond what those run only slow the training
 * thread down. The advice names that many workers, the saving is what they can load.
 */
#ifndef GPUWATCH_ANALYZE_WORKER_BUDGET_H
#define GPUWATCH_ANALYZE_WORKER_BUDGET_H

struct an_model;

struct an_worker_budget {
    unsigned workers;        /* the count to start: as many as the CPUs left can run; 0
                                when the CPUs are full of the process's own loading (its
                                loader threads or workers): more would not help */
    unsigned replayed;       /* the workers replayed (the same) */
    double speed;            /* each one's share of the thread's loading speed, (0, 1] */
    double load_share;       /* of the loop, the training thread's batch loads */
    double load_cpu;         /* the share of a load the thread spent on a CPU */
    double train_need;       /* CPUs the thread needs once it no longer loads */
    double process_others;   /* CPUs the process's other threads use */
    double others;           /* CPUs other processes use (0 when not recorded) */
    double others_keep;      /* of those, what they keep once the workers want CPUs too */
    /* the loads' CPUs the model's workers world leaves them, in loads at the thread's
     * speed (workers x speed, where the budget replays it): where the next replay's world
     * waits otherwise, that moves (run_analysis.c) */
    double loading;
};

/* 1 with *out filled when the samples and the replay say enough (CPU samples over the
 * steady state, batch loads replayed); 0 otherwise (the replay's cpus - 1 stands). */
int an_worker_budget(const struct an_model *m, unsigned cpus, struct an_worker_budget *out);
/* b (filled by an_worker_budget) made to replay `loading` instead: its workers, their
 * speed, and the thread's need what the CPUs leave; nothing where its loads wait off the
 * CPU, or no worker is named. */
void an_worker_budget_at(struct an_worker_budget *b, unsigned cpus, double loading);
/* The loading the next pass replays, from what n passes so far replayed (x[i]: workers x
 * speed) and what their workers worlds left the loads (y[i], an_worker_budget's loading).
 * The faster the workers, the longer a world whose GPU they outrun waits on it, spinning,
 * and the less it leaves them: y falls as x grows, and the budget is where they meet. The
 * latest y alone swings past it (random draw 207: the first world left 1.9 CPUs, the
 * second, its workers outrunning the GPU, 1.2, where they loaded at 1.6): between the
 * nearest passes on either side of it, where the line through them meets x = y; the latest
 * y while all lie on one side. */
double an_worker_loading_next(const double *x, const double *y, int n);
/* Before any event: the replay's workers world starts b's workers at b's speed, and the
 * model keeps b (an_model.budget) for the findings to name. -1 out of memory. */
int an_model_set_workers(struct an_model *m, const struct an_worker_budget *b);

#endif
