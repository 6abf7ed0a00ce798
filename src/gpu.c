/*
 * gpu.c - the GPU runtime of ramp.h section 9.1 and 9.3: devices, memory,
 * streams, events, graphs, modules and launches, over the driver API loaded
 * by cuda_loader.c.
 *
 * A ramp_gpu holds the device's primary context (the one the CUDA runtime
 * and PyTorch use), so pointers and streams are interchangeable with theirs.
 * Every entry point makes that context current on the calling thread first
 * (cheap when it already is), so handles can be used from any thread.
 * Functions that queue work check their arguments (stream, shape, sizes)
 * before anything reaches the driver.
 */
#include "cuda_loader.h"
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ramp_gpu {
    const ramp_cuda_api *cu;
    CUdevice dev;
    CUcontext ctx;
    ramp_gpu_info info;
};

struct ramp_kernel {
    ramp_module *module;
    CUfunction fn;
    char name[128];
    int max_dynamic_smem;
    ramp_kernel *next;
};

struct ramp_module {
    ramp_gpu *gpu;
    CUmodule mod;
    ramp_kernel *kernels;
};

struct ramp_event {
    ramp_gpu *gpu;
    CUevent ev;
};

struct ramp_graph {
    ramp_gpu *gpu;
    CUgraph graph;
    CUgraphExec exec;
};

static ramp_status bind_ctx(const ramp_gpu *g) {
    CUcontext cur = NULL;
    RAMP_CU(g->cu->CtxGetCurrent(&cur));
    if (cur != g->ctx) RAMP_CU(g->cu->CtxSetCurrent(g->ctx));
    return RAMP_OK;
}

#define GPU_ARG(g)                                                        \
    do {                                                                  \
        RAMP_CHECK((g) != NULL, RAMP_ERR_INVALID_ARGUMENT,                \
                   "%s: NULL gpu", __func__);                             \
        RAMP_TRY(bind_ctx(g));                                            \
    } while (0)

#define STREAM_ARG(s)                                                     \
    RAMP_CHECK((s) != NULL, RAMP_ERR_INVALID_ARGUMENT,                    \
               "%s: NULL stream; create one with ramp_stream_create (the " \
               "legacy default stream cannot be captured into a graph)",  \
               __func__)

ramp_status ramp_gpu_count(int *count) {
    RAMP_CHECK(count, RAMP_ERR_INVALID_ARGUMENT, "ramp_gpu_count: NULL count");
    const ramp_cuda_api *cu;
    RAMP_TRY(ramp_cuda_load(&cu));
    int n = 0;
    RAMP_CU(cu->DeviceGetCount(&n));
    RAMP_CHECK(n > 0, RAMP_ERR_NO_GPU, "the CUDA driver sees no GPU");
    *count = n;
    return RAMP_OK;
}

static ramp_status read_info(ramp_gpu *g) {
    const ramp_cuda_api *cu = g->cu;
    ramp_gpu_info *in = &g->info;
    ramp_device_limits *l = &in->limits;
    char name[256] = "";
    RAMP_CU(cu->DeviceGetName(name, (int)sizeof name, g->dev));
    snprintf(l->name, sizeof l->name, "%s", name);
#define ATTR(dst, a) RAMP_CU(cu->DeviceGetAttribute(&(dst), (a), g->dev))
    ATTR(l->sms, RAMP_CU_ATTR_MULTIPROCESSOR_COUNT);
    ATTR(l->smem_per_block, RAMP_CU_ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    ATTR(l->smem_per_sm, RAMP_CU_ATTR_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
    ATTR(l->regs_per_sm, RAMP_CU_ATTR_MAX_REGISTERS_PER_MULTIPROCESSOR);
    ATTR(l->max_threads_per_sm, RAMP_CU_ATTR_MAX_THREADS_PER_MULTIPROCESSOR);
    ATTR(l->max_blocks_per_sm, RAMP_CU_ATTR_MAX_BLOCKS_PER_MULTIPROCESSOR);
    ATTR(in->cc_major, RAMP_CU_ATTR_COMPUTE_CAPABILITY_MAJOR);
    ATTR(in->cc_minor, RAMP_CU_ATTR_COMPUTE_CAPABILITY_MINOR);
    ATTR(in->l2_bytes, RAMP_CU_ATTR_L2_CACHE_SIZE);
    ATTR(in->max_threads_per_block, RAMP_CU_ATTR_MAX_THREADS_PER_BLOCK);
#undef ATTR
    /* The clock attribute is deprecated in newer drivers: informational. */
    if (cu->DeviceGetAttribute(&in->clock_khz, RAMP_CU_ATTR_CLOCK_RATE, g->dev) != 0)
        in->clock_khz = 0;
    RAMP_CU(cu->DeviceTotalMem(&in->global_bytes, g->dev));
    RAMP_CU(cu->DriverGetVersion(&in->driver_version));
    return RAMP_OK;
}

ramp_status ramp_gpu_open(int ordinal, ramp_gpu **out) {
    RAMP_CHECK(out, RAMP_ERR_INVALID_ARGUMENT, "ramp_gpu_open: NULL out");
    int count = 0;
    RAMP_TRY(ramp_gpu_count(&count));
    RAMP_CHECK(ordinal >= 0 && ordinal < count, RAMP_ERR_NO_GPU,
               "GPU %d requested, the driver sees %d (0..%d)", ordinal, count,
               count - 1);
    const ramp_cuda_api *cu;
    RAMP_TRY(ramp_cuda_load(&cu));
    ramp_gpu *g = ramp_calloc(1, sizeof *g);
    if (!g) return RAMP_ERR_OUT_OF_MEMORY;
    g->cu = cu;
    g->info.ordinal = ordinal;
    ramp_status s = RAMP_OK;
    CUresult r = cu->DeviceGet(&g->dev, ordinal);
    if (r == 0) r = cu->DevicePrimaryCtxRetain(&g->ctx, g->dev);
    if (r != 0) {
        s = ramp_cu_fail(r, "cuDevicePrimaryCtxRetain", __FILE__, __LINE__);
        free(g);
        return s;
    }
    s = bind_ctx(g);
    if (s == RAMP_OK) s = read_info(g);
    if (s != RAMP_OK) {
        cu->DevicePrimaryCtxRelease(g->dev);
        free(g);
        return s;
    }
    *out = g;
    return RAMP_OK;
}

void ramp_gpu_close(ramp_gpu *gpu) {
    if (!gpu) return;
    gpu->cu->DevicePrimaryCtxRelease(gpu->dev);
    free(gpu);
}

ramp_status ramp_gpu_get_info(const ramp_gpu *gpu, ramp_gpu_info *out) {
    RAMP_CHECK(gpu && out, RAMP_ERR_INVALID_ARGUMENT, "ramp_gpu_get_info: NULL argument");
    *out = gpu->info;
    return RAMP_OK;
}

ramp_status ramp_gpu_sync(ramp_gpu *gpu) {
    GPU_ARG(gpu);
    RAMP_CU(gpu->cu->CtxSynchronize());
    return RAMP_OK;
}

/* ------------------------------------------------------------ memory */

ramp_status ramp_gpu_alloc(ramp_gpu *gpu, size_t bytes, ramp_devptr *out) {
    GPU_ARG(gpu);
    RAMP_CHECK(out, RAMP_ERR_INVALID_ARGUMENT, "ramp_gpu_alloc: NULL out");
    RAMP_CHECK(bytes > 0, RAMP_ERR_INVALID_ARGUMENT, "ramp_gpu_alloc: 0 bytes");
    CUdeviceptr p = 0;
    CUresult r = gpu->cu->MemAlloc(&p, bytes);
    if (r != 0) {
        ramp_cu_fail(r, "cuMemAlloc", __FILE__, __LINE__);
        RAMP_FAIL(r == 2 ? RAMP_ERR_OUT_OF_MEMORY : RAMP_ERR_CUDA,
                  "cannot allocate %zu bytes on GPU %d: %s", bytes,
                  gpu->info.ordinal, ramp_cu_error_name(r));
    }
    *out = p;
    return RAMP_OK;
}

ramp_status ramp_gpu_free(ramp_gpu *gpu, ramp_devptr ptr) {
    if (!ptr) return RAMP_OK;
    GPU_ARG(gpu);
    RAMP_CU(gpu->cu->MemFree(ptr));
    return RAMP_OK;
}

#define COPY_ARGS(dev, host)                                              \
    do {                                                                  \
        GPU_ARG(gpu);                                                     \
        RAMP_CHECK(bytes == 0 || ((dev) && (host)), RAMP_ERR_INVALID_ARGUMENT, \
                   "%s: NULL pointer for %zu bytes", __func__, bytes);    \
    } while (0)

ramp_status ramp_gpu_upload(ramp_gpu *gpu, ramp_devptr dst, const void *src,
                            size_t bytes) {
    COPY_ARGS(dst, src);
    if (!bytes) return RAMP_OK;
    RAMP_CU(gpu->cu->MemcpyHtoD(dst, src, bytes));
    /* From pageable memory cuMemcpyHtoD returns once the data is staged,
     * before the DMA lands, and work on our non-blocking streams does not
     * wait for it: a kernel launched next could read the old bytes (seen:
     * test_gpu_moe, 2026-11-30, an output that equalled its base). */
    RAMP_CU(gpu->cu->CtxSynchronize());
    return RAMP_OK;
}

ramp_status ramp_gpu_download(ramp_gpu *gpu, void *dst, ramp_devptr src,
                              size_t bytes) {
    COPY_ARGS(src, dst);
    if (!bytes) return RAMP_OK;
    /* the legacy-stream copy does not wait for our non-blocking streams */
    RAMP_CU(gpu->cu->CtxSynchronize());
    RAMP_CU(gpu->cu->MemcpyDtoH(dst, src, bytes));
    return RAMP_OK;
}

ramp_status ramp_gpu_upload_async(ramp_gpu *gpu, ramp_devptr dst,
                                  const void *src, size_t bytes,
                                  ramp_stream stream) {
    COPY_ARGS(dst, src);
    STREAM_ARG(stream);
    if (bytes) RAMP_CU(gpu->cu->MemcpyHtoDAsync(dst, src, bytes, (CUstream)stream));
    return RAMP_OK;
}

ramp_status ramp_gpu_download_async(ramp_gpu *gpu, void *dst, ramp_devptr src,
                                    size_t bytes, ramp_stream stream) {
    COPY_ARGS(src, dst);
    STREAM_ARG(stream);
    if (bytes) RAMP_CU(gpu->cu->MemcpyDtoHAsync(dst, src, bytes, (CUstream)stream));
    return RAMP_OK;
}

ramp_status ramp_gpu_fill32_async(ramp_gpu *gpu, ramp_devptr dst,
                                  uint32_t value, size_t count,
                                  ramp_stream stream) {
    GPU_ARG(gpu);
    STREAM_ARG(stream);
    RAMP_CHECK(count == 0 || (dst && dst % 4 == 0), RAMP_ERR_INVALID_ARGUMENT,
               "ramp_gpu_fill32_async: address 0x%llx is NULL or not 4-byte "
               "aligned", (unsigned long long)dst);
    if (count) RAMP_CU(gpu->cu->MemsetD32Async(dst, value, count, (CUstream)stream));
    return RAMP_OK;
}

/* ------------------------------------------------------------ streams */

ramp_status ramp_stream_create(ramp_gpu *gpu, ramp_stream *out) {
    GPU_ARG(gpu);
    RAMP_CHECK(out, RAMP_ERR_INVALID_ARGUMENT, "ramp_stream_create: NULL out");
    CUstream s = NULL;
    RAMP_CU(gpu->cu->StreamCreate(&s, RAMP_CU_STREAM_NON_BLOCKING));
    *out = s;
    return RAMP_OK;
}

ramp_status ramp_stream_destroy(ramp_gpu *gpu, ramp_stream stream) {
    if (!stream) return RAMP_OK;
    GPU_ARG(gpu);
    RAMP_CU(gpu->cu->StreamDestroy((CUstream)stream));
    return RAMP_OK;
}

ramp_status ramp_stream_sync(ramp_gpu *gpu, ramp_stream stream) {
    GPU_ARG(gpu);
    STREAM_ARG(stream);
    RAMP_CU(gpu->cu->StreamSynchronize((CUstream)stream));
    return RAMP_OK;
}

/* ------------------------------------------------------------ events */

ramp_status ramp_event_create(ramp_gpu *gpu, ramp_event **out) {
    GPU_ARG(gpu);
    RAMP_CHECK(out, RAMP_ERR_INVALID_ARGUMENT, "ramp_event_create: NULL out");
    ramp_event *e = ramp_calloc(1, sizeof *e);
    if (!e) return RAMP_ERR_OUT_OF_MEMORY;
    e->gpu = gpu;
    CUresult r = gpu->cu->EventCreate(&e->ev, RAMP_CU_EVENT_DEFAULT);
    if (r != 0) {
        free(e);
        return ramp_cu_fail(r, "cuEventCreate", __FILE__, __LINE__);
    }
    *out = e;
    return RAMP_OK;
}

ramp_status ramp_event_record(ramp_event *ev, ramp_stream stream) {
    RAMP_CHECK(ev, RAMP_ERR_INVALID_ARGUMENT, "ramp_event_record: NULL event");
    GPU_ARG(ev->gpu);
    STREAM_ARG(stream);
    RAMP_CU(ev->gpu->cu->EventRecord(ev->ev, (CUstream)stream));
    return RAMP_OK;
}

ramp_status ramp_event_elapsed_us(ramp_event *start, ramp_event *end,
                                  double *us) {
    RAMP_CHECK(start && end && us, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_event_elapsed_us: NULL argument");
    GPU_ARG(end->gpu);
    RAMP_CU(end->gpu->cu->EventSynchronize(end->ev));
    float ms = 0;
    RAMP_CU(end->gpu->cu->EventElapsedTime(&ms, start->ev, end->ev));
    *us = (double)ms * 1000.0;
    return RAMP_OK;
}

void ramp_event_free(ramp_event *ev) {
    if (!ev) return;
    if (bind_ctx(ev->gpu) == RAMP_OK) ev->gpu->cu->EventDestroy(ev->ev);
    free(ev);
}

/* ------------------------------------------------------------ graphs */

ramp_status ramp_graph_capture_begin(ramp_gpu *gpu, ramp_stream stream) {
    GPU_ARG(gpu);
    STREAM_ARG(stream);
    RAMP_CU(gpu->cu->StreamBeginCapture((CUstream)stream,
                                        RAMP_CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    return RAMP_OK;
}

ramp_status ramp_graph_capture_end(ramp_gpu *gpu, ramp_stream stream,
                                   ramp_graph **out) {
    GPU_ARG(gpu);
    STREAM_ARG(stream);
    RAMP_CHECK(out, RAMP_ERR_INVALID_ARGUMENT, "ramp_graph_capture_end: NULL out");
    CUgraph graph = NULL;
    RAMP_CU(gpu->cu->StreamEndCapture((CUstream)stream, &graph));
    RAMP_CHECK(graph, RAMP_ERR_CUDA, "stream capture produced no graph");
    ramp_graph *g = ramp_calloc(1, sizeof *g);
    if (!g) {
        gpu->cu->GraphDestroy(graph);
        return RAMP_ERR_OUT_OF_MEMORY;
    }
    g->gpu = gpu;
    g->graph = graph;
    CUresult r = gpu->cu->GraphInstantiateWithFlags(&g->exec, graph, 0);
    if (r != 0) {
        gpu->cu->GraphDestroy(graph);
        free(g);
        return ramp_cu_fail(r, "cuGraphInstantiateWithFlags", __FILE__, __LINE__);
    }
    *out = g;
    return RAMP_OK;
}

ramp_status ramp_graph_replay(ramp_graph *graph, ramp_stream stream) {
    RAMP_CHECK(graph, RAMP_ERR_INVALID_ARGUMENT, "ramp_graph_replay: NULL graph");
    GPU_ARG(graph->gpu);
    STREAM_ARG(stream);
    RAMP_CU(graph->gpu->cu->GraphLaunch(graph->exec, (CUstream)stream));
    return RAMP_OK;
}

void ramp_graph_free(ramp_graph *graph) {
    if (!graph) return;
    if (bind_ctx(graph->gpu) == RAMP_OK) {
        graph->gpu->cu->GraphExecDestroy(graph->exec);
        graph->gpu->cu->GraphDestroy(graph->graph);
    }
    free(graph);
}

/* ------------------------------------------------------ switch nodes */

#define SWITCH_API(gpu)                                                           \
    RAMP_CHECK((gpu)->cu->StreamGetCaptureInfo && (gpu)->cu->GraphAddNode &&      \
                   (gpu)->cu->GraphConditionalHandleCreate &&                     \
                   (gpu)->cu->StreamUpdateCaptureDependencies &&                  \
                   (gpu)->cu->StreamBeginCaptureToGraph,                          \
               RAMP_ERR_UNSUPPORTED,                                              \
               "%s: graph conditional nodes need a CUDA 12.8+ driver", __func__)

ramp_status ramp_stream_capturing(ramp_gpu *gpu, ramp_stream stream, int *capturing) {
    GPU_ARG(gpu);
    STREAM_ARG(stream);
    RAMP_CHECK(capturing, RAMP_ERR_INVALID_ARGUMENT, "ramp_stream_capturing: NULL out");
    SWITCH_API(gpu);
    int status = 0;
    RAMP_CU(gpu->cu->StreamGetCaptureInfo((CUstream)stream, &status, NULL, NULL, NULL, NULL,
                                          NULL));
    *capturing = status == RAMP_CU_STREAM_CAPTURE_STATUS_ACTIVE;
    return RAMP_OK;
}

/* The graph `stream` is capturing into, and its open dependencies. */
static ramp_status capture_state(ramp_gpu *gpu, ramp_stream stream, CUgraph *graph,
                                 const CUgraphNode **deps, const CUgraphEdgeData **edges,
                                 size_t *ndeps) {
    int status = 0;
    RAMP_CU(gpu->cu->StreamGetCaptureInfo((CUstream)stream, &status, NULL, graph, deps, edges,
                                          ndeps));
    RAMP_CHECK(status == RAMP_CU_STREAM_CAPTURE_STATUS_ACTIVE && *graph,
               RAMP_ERR_INVALID_ARGUMENT,
               "a switch node is built during a capture of the stream (ramp_graph_capture_begin)");
    return RAMP_OK;
}

ramp_status ramp_switch_handle(ramp_gpu *gpu, ramp_stream stream, unsigned bodies,
                               ramp_switch *sw) {
    GPU_ARG(gpu);
    STREAM_ARG(stream);
    RAMP_CHECK(sw && bodies >= 1, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_switch_handle: NULL out or no bodies");
    SWITCH_API(gpu);
    CUgraph graph = NULL;
    const CUgraphNode *deps = NULL;
    const CUgraphEdgeData *edges = NULL;
    size_t ndeps = 0;
    RAMP_TRY(capture_state(gpu, stream, &graph, &deps, &edges, &ndeps));
    memset(sw, 0, sizeof *sw);
    sw->bodies = bodies;
    /* the kernel that sets the value runs on every launch, so it is not
     * reset to its default at each launch: the reset cost the layer 2-3 us
     * (bench/results/s23-run2). RAMP_SWITCH_ASSIGN_DEFAULT=1 (an experiment)
     * resets it to `bodies` (no body) at every launch. */
    const char *env = getenv("RAMP_SWITCH_ASSIGN_DEFAULT");
    const unsigned flags = env && env[0] == '1' ? RAMP_CU_GRAPH_COND_ASSIGN_DEFAULT : 0;
    RAMP_CU(gpu->cu->GraphConditionalHandleCreate(&sw->handle, graph, gpu->ctx, bodies, flags));
    return RAMP_OK;
}

ramp_status ramp_switch_add(ramp_gpu *gpu, ramp_stream stream, ramp_switch *sw) {
    GPU_ARG(gpu);
    STREAM_ARG(stream);
    RAMP_CHECK(sw && sw->handle && sw->bodies >= 1, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_switch_add: no handle (ramp_switch_handle first)");
    CUgraph graph = NULL;
    const CUgraphNode *deps = NULL;
    const CUgraphEdgeData *edges = NULL;
    size_t ndeps = 0;
    RAMP_TRY(capture_state(gpu, stream, &graph, &deps, &edges, &ndeps));
    CUgraphNodeParams prm;
    memset(&prm, 0, sizeof prm);
    prm.type = RAMP_CU_GRAPH_NODE_TYPE_CONDITIONAL;
    prm.u.conditional.handle = sw->handle;
    prm.u.conditional.type = RAMP_CU_GRAPH_COND_TYPE_SWITCH;
    prm.u.conditional.size = sw->bodies;
    prm.u.conditional.ctx = gpu->ctx;
    CUgraphNode node = NULL;
    RAMP_CU(gpu->cu->GraphAddNode(&node, graph, deps, edges, ndeps, &prm));
    RAMP_CHECK(prm.u.conditional.bodies, RAMP_ERR_CUDA, "the switch node came without bodies");
    sw->body_graphs = (void **)prm.u.conditional.bodies;
    /* what the stream queues next runs after the switch */
    RAMP_CU(gpu->cu->StreamUpdateCaptureDependencies((CUstream)stream, &node, NULL, 1,
                                                     RAMP_CU_STREAM_SET_CAPTURE_DEPENDENCIES));
    return RAMP_OK;
}

ramp_status ramp_switch_body_begin(ramp_gpu *gpu, const ramp_switch *sw, unsigned body,
                                   ramp_stream body_stream) {
    GPU_ARG(gpu);
    STREAM_ARG(body_stream);
    RAMP_CHECK(sw && sw->body_graphs && body < sw->bodies, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_switch_body_begin: body %u of a switch of %u (ramp_switch_add first)", body,
               sw ? sw->bodies : 0);
    RAMP_CU(gpu->cu->StreamBeginCaptureToGraph((CUstream)body_stream,
                                               (CUgraph)sw->body_graphs[body], NULL, NULL, 0,
                                               RAMP_CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    return RAMP_OK;
}

ramp_status ramp_switch_body_end(ramp_gpu *gpu, ramp_stream body_stream) {
    GPU_ARG(gpu);
    STREAM_ARG(body_stream);
    CUgraph graph = NULL;
    RAMP_CU(gpu->cu->StreamEndCapture((CUstream)body_stream, &graph));
    return RAMP_OK;
}

/* ------------------------------------------------------------ modules */

ramp_status ramp_module_load(ramp_gpu *gpu, const void *cubin, size_t size,
                             ramp_module **out) {
    GPU_ARG(gpu);
    RAMP_CHECK(cubin && size > 0 && out, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_module_load: NULL or empty cubin");
    ramp_module *m = ramp_calloc(1, sizeof *m);
    if (!m) return RAMP_ERR_OUT_OF_MEMORY;
    m->gpu = gpu;
    CUresult r = gpu->cu->ModuleLoadData(&m->mod, cubin);
    if (r != 0) {
        free(m);
        return ramp_cu_fail(r, "cuModuleLoadData", __FILE__, __LINE__);
    }
    *out = m;
    return RAMP_OK;
}

void ramp_module_free(ramp_module *m) {
    if (!m) return;
    for (ramp_kernel *k = m->kernels; k;) {
        ramp_kernel *next = k->next;
        free(k);
        k = next;
    }
    if (bind_ctx(m->gpu) == RAMP_OK) m->gpu->cu->ModuleUnload(m->mod);
    free(m);
}

ramp_status ramp_module_kernel(ramp_module *m, const char *name,
                               int max_dynamic_smem, ramp_kernel **out) {
    RAMP_CHECK(m && name && out, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_module_kernel: NULL argument");
    GPU_ARG(m->gpu);
    const ramp_device_limits *lim = &m->gpu->info.limits;
    CUfunction fn = NULL;
    CUresult r = m->gpu->cu->ModuleGetFunction(&fn, m->mod, name);
    if (r != 0) {
        ramp_cu_fail(r, "cuModuleGetFunction", __FILE__, __LINE__);
        RAMP_FAIL(RAMP_ERR_NOT_FOUND, "kernel '%s' is not in the module (%s)",
                  name, ramp_cu_error_name(r));
    }
    int static_smem = 0;
    RAMP_CU(m->gpu->cu->FuncGetAttribute(&static_smem, RAMP_CU_FUNC_SHARED_SIZE_BYTES, fn));
    RAMP_CHECK(max_dynamic_smem >= 0 &&
                   max_dynamic_smem + static_smem <= lim->smem_per_block,
               RAMP_ERR_UNSUPPORTED,
               "kernel '%s' asks for %d B of dynamic shared memory + %d B "
               "static; the device allows %d B per block",
               name, max_dynamic_smem, static_smem, lim->smem_per_block);
    if (max_dynamic_smem > 48 * 1024)
        RAMP_CU(m->gpu->cu->FuncSetAttribute(
            fn, RAMP_CU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES, max_dynamic_smem));
    /* RAMP_SMEM_CARVEOUT=0..100 (an experiment, session 23): the kernel's
     * preferred shared-memory share of the SM's L1/shared array, in percent
     * (the driver still gives at least what a launch needs). Unset: the
     * driver's choice, the smallest carve-out that fits the launch. */
    const char *carve = getenv("RAMP_SMEM_CARVEOUT");
    if (carve && *carve) {
        const int pct = atoi(carve);
        RAMP_CHECK(pct >= 0 && pct <= 100, RAMP_ERR_INVALID_ARGUMENT,
                   "RAMP_SMEM_CARVEOUT=%s: a percentage, 0..100", carve);
        RAMP_CU(m->gpu->cu->FuncSetAttribute(fn, RAMP_CU_FUNC_PREFERRED_SHARED_MEMORY_CARVEOUT,
                                             pct));
    }
    /* a compile-time cluster wider than the portable 8 blocks (Hopper runs
     * 16) launches only with this opt-in; drivers without cluster
     * attributes fail the query, and then there is nothing to opt into */
    int cluster = 0;
    if (m->gpu->cu->FuncGetAttribute(&cluster, RAMP_CU_FUNC_REQUIRED_CLUSTER_WIDTH, fn) == 0 &&
        cluster > 8)
        RAMP_CU(m->gpu->cu->FuncSetAttribute(fn, RAMP_CU_FUNC_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1));
    ramp_kernel *k = ramp_calloc(1, sizeof *k);
    if (!k) return RAMP_ERR_OUT_OF_MEMORY;
    k->module = m;
    k->fn = fn;
    snprintf(k->name, sizeof k->name, "%s", name);
    k->max_dynamic_smem = max_dynamic_smem;
    k->next = m->kernels;
    m->kernels = k;
    *out = k;
    return RAMP_OK;
}

ramp_status ramp_kernel_attributes(const ramp_kernel *k, ramp_kernel_report *out) {
    RAMP_CHECK(k && out, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_kernel_attributes: NULL argument");
    const ramp_gpu *gpu = k->module->gpu;
    GPU_ARG(gpu);
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", k->name);
    RAMP_CU(gpu->cu->FuncGetAttribute(&out->registers, RAMP_CU_FUNC_NUM_REGS, k->fn));
    RAMP_CU(gpu->cu->FuncGetAttribute(&out->smem_bytes, RAMP_CU_FUNC_SHARED_SIZE_BYTES, k->fn));
    RAMP_CU(gpu->cu->FuncGetAttribute(&out->stack_bytes, RAMP_CU_FUNC_LOCAL_SIZE_BYTES, k->fn));
    return RAMP_OK;
}

static ramp_status launch(const ramp_kernel *k, const unsigned grid[3],
                          const unsigned block[3], int dynamic_smem,
                          ramp_stream stream, void **args, int pdl, int cluster) {
    RAMP_CHECK(k && grid && block, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_kernel_launch: NULL argument");
    STREAM_ARG(stream);
    const ramp_gpu *gpu = k->module->gpu;
    unsigned long long threads =
        (unsigned long long)block[0] * block[1] * block[2];
    RAMP_CHECK(grid[0] >= 1 && grid[1] >= 1 && grid[2] >= 1 && grid[1] <= 65535 &&
                   grid[2] <= 65535,
               RAMP_ERR_INVALID_ARGUMENT, "kernel '%s': grid %ux%ux%u out of range",
               k->name, grid[0], grid[1], grid[2]);
    RAMP_CHECK(threads >= 1 && threads <= (unsigned long long)gpu->info.max_threads_per_block,
               RAMP_ERR_INVALID_ARGUMENT,
               "kernel '%s': block %ux%ux%u = %llu threads, allowed 1..%d",
               k->name, block[0], block[1], block[2], threads,
               gpu->info.max_threads_per_block);
    RAMP_CHECK(dynamic_smem >= 0 && dynamic_smem <= k->max_dynamic_smem,
               RAMP_ERR_INVALID_ARGUMENT,
               "kernel '%s': %d B of dynamic shared memory, allowance %d B "
               "(set by ramp_module_kernel)", k->name, dynamic_smem,
               k->max_dynamic_smem);
    RAMP_CHECK(cluster >= 1 && cluster <= 8 && grid[0] % (unsigned)cluster == 0,
               RAMP_ERR_INVALID_ARGUMENT,
               "kernel '%s': cluster of %d CTAs with grid %u (1..8, dividing the grid)", k->name,
               cluster, grid[0]);
    GPU_ARG(gpu);
    RAMP_CHECK(cluster == 1 || gpu->cu->LaunchKernelEx, RAMP_ERR_UNSUPPORTED,
               "kernel '%s': a cluster launch needs cuLaunchKernelEx (CUDA 12.0+ driver)",
               k->name);
    if ((pdl || cluster > 1) && gpu->cu->LaunchKernelEx) {
        CUlaunchAttribute attr[2];
        unsigned n = 0;
        memset(attr, 0, sizeof attr);
        if (pdl) {
            attr[n].id = RAMP_CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
            attr[n++].value.programmatic_stream_serialization_allowed = 1;
        }
        if (cluster > 1) {
            attr[n].id = RAMP_CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
            attr[n].value.cluster_dim.x = (unsigned)cluster;
            attr[n].value.cluster_dim.y = attr[n].value.cluster_dim.z = 1;
            n++;
        }
        CUlaunchConfig cfg = {grid[0], grid[1], grid[2], block[0], block[1], block[2],
                              (unsigned)dynamic_smem, (CUstream)stream, attr, n};
        RAMP_CU(gpu->cu->LaunchKernelEx(&cfg, k->fn, args, NULL));
        return RAMP_OK;
    }
    RAMP_CU(gpu->cu->LaunchKernel(k->fn, grid[0], grid[1], grid[2], block[0],
                                  block[1], block[2], (unsigned)dynamic_smem,
                                  (CUstream)stream, args, NULL));
    return RAMP_OK;
}

ramp_status ramp_kernel_launch(const ramp_kernel *k, const unsigned grid[3],
                               const unsigned block[3], int dynamic_smem,
                               ramp_stream stream, void **args) {
    return launch(k, grid, block, dynamic_smem, stream, args, 0, 1);
}

ramp_status ramp_kernel_launch_pdl(const ramp_kernel *k, const unsigned grid[3],
                                   const unsigned block[3], int dynamic_smem,
                                   ramp_stream stream, void **args) {
    return launch(k, grid, block, dynamic_smem, stream, args, 1, 1);
}

ramp_status ramp_kernel_launch_ex(const ramp_kernel *k, const unsigned grid[3],
                                  const unsigned block[3], int dynamic_smem,
                                  ramp_stream stream, void **args, int pdl, int cluster) {
    return launch(k, grid, block, dynamic_smem, stream, args, pdl != 0, cluster);
}

ramp_status ramp_kernel_max_active_clusters(const ramp_kernel *k, const unsigned block[3],
                                            int dynamic_smem, int cluster, int *out) {
    RAMP_CHECK(k && block && out, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_kernel_max_active_clusters: NULL argument");
    *out = 0;
    RAMP_CHECK(cluster >= 1 && cluster <= 8, RAMP_ERR_INVALID_ARGUMENT,
               "kernel '%s': cluster of %d CTAs (1..8)", k->name, cluster);
    const ramp_gpu *gpu = k->module->gpu;
    GPU_ARG(gpu);
    RAMP_CHECK(gpu->cu->OccupancyMaxActiveClusters, RAMP_ERR_UNSUPPORTED,
               "kernel '%s': the driver has no cuOccupancyMaxActiveClusters", k->name);
    CUlaunchAttribute attr;
    memset(&attr, 0, sizeof attr);
    attr.id = RAMP_CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.cluster_dim.x = (unsigned)cluster;
    attr.value.cluster_dim.y = attr.value.cluster_dim.z = 1;
    /* the grid only has to be a multiple of the cluster here */
    CUlaunchConfig cfg = {(unsigned)cluster, 1, 1, block[0], block[1], block[2],
                          (unsigned)dynamic_smem, NULL, &attr, 1};
    RAMP_CU(gpu->cu->OccupancyMaxActiveClusters(out, k->fn, &cfg));
    return RAMP_OK;
}
