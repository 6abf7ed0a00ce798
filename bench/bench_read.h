/*
 * bench_read.h - the read floor's kernels (kernels/read_floor.cuh) for the
 * benchmarks: a list of device ranges split into pieces, read by plain
 * loads or by the TMA unit's bulk copies. bench_layer times them as the
 * measured floor of a memory-bound layer; both benchmarks can also empty L2
 * with them (a read leaves L2 clean, where the usual 512 MiB write leaves
 * it full of dirty lines that drain to HBM while the timed work reads).
 * Header-only, after internal.h.
 */
#ifndef RAMP_BENCH_READ_H
#define RAMP_BENCH_READ_H

#include <stdlib.h>
#include <string.h>

/* kernels/read_floor.cuh's RAMP_READ_THREADS, RAMP_READ_PIECE and ring */
#define READ_THREADS 512
#define READ_PIECE (READ_THREADS * 8 * 16)
#define READ_BULK_SMEM (3 * READ_PIECE)

typedef struct {
    ramp_module *m;
    ramp_kernel *k, *kb; /* plain loads, bulk copies */
    ramp_devptr pieces, sink;
    size_t cap;     /* pieces the buffer holds */
    uint64_t *host; /* [2 * cap]: ptr, bytes */
    int n;          /* pieces of the current list */
    int piece, bulk_smem; /* bytes a piece, the bulk kernel's ring (READ_PIECE, 3 slots) */
} read_floor;

static inline void read_floor_free(read_floor *f, ramp_gpu *gpu) {
    ramp_gpu_free(gpu, f->pieces);
    ramp_gpu_free(gpu, f->sink);
    ramp_module_free(f->m);
    free(f->host);
    memset(f, 0, sizeof *f);
}

/* Compiles both kernels, the bulk one with a ring of `stages` slots of
 * `piece` bytes (pieces that long), and allocates room for cap pieces. */
static inline ramp_status read_floor_init_ring(read_floor *f, ramp_gpu *gpu, size_t cap,
                                               int piece, int stages) {
    memset(f, 0, sizeof *f);
    f->piece = piece;
    f->bulk_smem = piece * stages;
    char d0[48], d1[48];
    snprintf(d0, sizeof d0, "RAMP_READ_SLOT=%d", piece);
    snprintf(d1, sizeof d1, "RAMP_READ_STAGES=%d", stages);
    const char *defs[2] = {d0, d1};
    ramp_jit_request rq;
    memset(&rq, 0, sizeof rq);
    rq.name = "read-floor";
    rq.source = "#include \"read_floor.cuh\"\n";
    if (piece != READ_PIECE || stages != 3) { /* the default program keeps its cache key */
        rq.defines = defs;
        rq.ndefines = 2;
    }
    ramp_jit_result *r = NULL;
    ramp_status s = ramp_jit_compile(&rq, &r);
    if (s == RAMP_OK) s = ramp_module_load(gpu, r->cubin, r->cubin_size, &f->m);
    ramp_jit_result_free(r);
    if (s == RAMP_OK) s = ramp_module_kernel(f->m, "ramp_read_floor", 0, &f->k);
    if (s == RAMP_OK) s = ramp_module_kernel(f->m, "ramp_read_bulk", f->bulk_smem, &f->kb);
    f->cap = cap;
    f->host = malloc(sizeof(uint64_t) * 2 * (cap ? cap : 1));
    if (s == RAMP_OK && !f->host) s = RAMP_ERR_OUT_OF_MEMORY;
    if (s == RAMP_OK) s = ramp_gpu_alloc(gpu, sizeof(uint64_t) * 2 * (cap ? cap : 1), &f->pieces);
    if (s == RAMP_OK) s = ramp_gpu_alloc(gpu, 4, &f->sink);
    if (s != RAMP_OK) read_floor_free(f, gpu);
    return s;
}

/* The usual read floor: pieces of READ_PIECE bytes, 3 ring slots. */
static inline ramp_status read_floor_init(read_floor *f, ramp_gpu *gpu, size_t cap) {
    return read_floor_init_ring(f, gpu, cap, READ_PIECE, 3);
}

/* Appends [base, base + bytes) as pieces (16-byte aligned, within cap). */
static inline ramp_status read_floor_add(read_floor *f, ramp_devptr base, size_t bytes) {
    RAMP_CHECK(base % 16 == 0 && bytes % 16 == 0, RAMP_ERR_INVALID_ARGUMENT,
               "read floor: range %#llx + %zu not 16-byte aligned", (unsigned long long)base,
               bytes);
    const size_t piece = (size_t)f->piece;
    for (size_t o = 0; o < bytes; o += piece) {
        RAMP_CHECK((size_t)f->n < f->cap, RAMP_ERR_INVALID_ARGUMENT,
                   "read floor: more than %zu pieces", f->cap);
        f->host[2 * f->n] = (uint64_t)(base + o);
        f->host[2 * f->n + 1] = bytes - o < piece ? bytes - o : piece;
        f->n++;
    }
    return RAMP_OK;
}

/* Copies the piece list to the GPU (before a launch or a capture). */
static inline ramp_status read_floor_upload(read_floor *f, ramp_gpu *gpu) {
    if (f->n == 0) f->host[0] = f->host[1] = 0;
    return ramp_gpu_upload(gpu, f->pieces, f->host,
                           sizeof(uint64_t) * 2 * (size_t)(f->n ? f->n : 1));
}

/* bulk 0: plain loads, up to 2 blocks per SM; 1: bulk copies, one per SM.
 * pdl: launched as a programmatic dependent of the previous kernel. */
static inline ramp_status read_floor_launch(read_floor *f, ramp_gpu *gpu, ramp_stream st,
                                            int pdl, int bulk) {
    ramp_gpu_info gi;
    RAMP_TRY(ramp_gpu_get_info(gpu, &gi));
    const int most = bulk ? gi.limits.sms : 2 * gi.limits.sms;
    unsigned grid[3] = {(unsigned)(f->n < most ? (f->n > 0 ? f->n : 1) : most), 1, 1};
    unsigned block[3] = {bulk ? 32u : READ_THREADS, 1, 1};
    const int smem = bulk ? f->bulk_smem : 0;
    ramp_kernel *k = bulk ? f->kb : f->k;
    void *args[3] = {&f->pieces, &f->n, &f->sink};
    return pdl ? ramp_kernel_launch_pdl(k, grid, block, smem, st, args)
               : ramp_kernel_launch(k, grid, block, smem, st, args);
}

/* An L2 flush by reading: a graph of the bulk kernel over [buf, buf +
 * bytes) into *out (replay it before each timing); f is its piece list,
 * kept until the graph is freed. */
static inline ramp_status read_flush_graph(read_floor *f, ramp_gpu *gpu, ramp_stream st,
                                           ramp_devptr buf, size_t bytes, ramp_graph **out) {
    RAMP_TRY(read_floor_init(f, gpu, bytes / READ_PIECE + 1));
    ramp_status s = read_floor_add(f, buf, bytes);
    if (s == RAMP_OK) s = read_floor_upload(f, gpu);
    if (s == RAMP_OK) s = ramp_graph_capture_begin(gpu, st);
    if (s == RAMP_OK) {
        s = read_floor_launch(f, gpu, st, 0, 1);
        ramp_status e = ramp_graph_capture_end(gpu, st, out);
        if (s == RAMP_OK) s = e;
    }
    if (s != RAMP_OK) read_floor_free(f, gpu);
    return s;
}

#endif
