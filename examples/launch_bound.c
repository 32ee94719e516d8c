/*
 * launch_bound: planted waste = many tiny kernels. Each step launches 2000 kernels that
 * run 20 ns each (on a real GPU: the shortest a kernel takes), one after the other, as an
 * unfused model of small ops does; the host cannot issue them as fast as the GPU runs
 * them. The loop is otherwise healthy (pinned memory, no per-step drain).
 * --fixed: the step's launches are captured once in a CUDA graph and replayed each step
 * (torch.compile(mode="reduce-overhead")).
 */
#include <string.h>

#include "common.h"

#define LAUNCHES_PER_STEP 2000

static const char *const kernels[] = {"tiny_20ns"};

int main(int argc, char **argv)
{
    long steps = ex_steps(argc, argv, "example_launch_bound", 200,
                          "Planted waste: 2000 tiny kernel launches per step.");
    struct ex_ctx ex;
    ex_init(&ex, "example_launch_bound", kernels, 1);
    CUdeviceptr acts;
    float *loss;
    CUevent done[2];
    EX_CK(&ex, cuMemAlloc(&acts, 1u << 20));
    EX_CK(&ex, cuMemHostAlloc((void **)&loss, 2 * sizeof *loss, 0));
    for (int b = 0; b < 2; b++)
        EX_CK(&ex, cuEventCreate(&done[b], CU_EVENT_DISABLE_TIMING));
    CUgraphExec step_graph = NULL;
    if (ex_fixed()) {
        CUgraph graph;
        EX_CK(&ex, cuStreamBeginCapture(ex.stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
        for (int i = 0; i < LAUNCHES_PER_STEP; i++)
            ex_launch(&ex, 0);
        EX_CK(&ex, cuStreamEndCapture(ex.stream, &graph));
        EX_CK(&ex, cuGraphInstantiate(&step_graph, graph, 0));
        EX_CK(&ex, cuGraphDestroy(graph));
    }
    for (long s = 0; s < steps; s++) {
        int b = (int)(s & 1);
        if (s >= 2)
            EX_CK(&ex, cuEventSynchronize(done[b]));
        if (step_graph)
            EX_CK(&ex, cuGraphLaunch(step_graph, ex.stream));
        else
            for (int i = 0; i < LAUNCHES_PER_STEP; i++)
                ex_launch(&ex, 0);
        EX_CK(&ex, cuMemcpyDtoHAsync(&loss[b], acts, sizeof *loss, ex.stream));
        EX_CK(&ex, cuEventRecord(done[b], ex.stream));
    }
    EX_CK(&ex, cuStreamSynchronize(ex.stream));
    if (step_graph)
        EX_CK(&ex, cuGraphExecDestroy(step_graph));
    for (int b = 0; b < 2; b++)
        EX_CK(&ex, cuEventDestroy(done[b]));
    EX_CK(&ex, cuMemFreeHost(loss));
    EX_CK(&ex, cuMemFree(acts));
    ex_finish(&ex, steps);
    return 0;
}
