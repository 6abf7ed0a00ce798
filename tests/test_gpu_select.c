/*
 * test_gpu_select.c - the selection kernel on the GPU against its CPU twin,
 * bit for bit (device test: exits 77 when there is no GPU).
 *
 * Thousands of random and skewed routings on random descriptors (E, k,
 * local experts, scattered maps, menus with ties, group-only), plus the
 * edge cases of the issue: zero tokens, every token on one expert, every id
 * foreign or -1, out-of-range ids, and 4,096 x 8 pairs on 8, 16 and 32
 * local experts. Every output buffer is poisoned on the device first and
 * downloaded whole, so the comparison also proves nothing is written past
 * the end. Then: the device-side token count (clamping flagged), capture
 * into a CUDA graph and replays on new routings, the driver's view of the
 * kernel's resources against the ptxas report, the errors a bad call
 * gets before any launch, and a selector with pdl_wait launched as a
 * programmatic dependent of a kernel that writes the ids late.
 *
 * The random part runs the kernel with 32, 16 and 8 warps a block and
 * with the cluster size forced to 1, 2, 4 and 8 blocks beside the
 * selector's own choice (so one block also meets several loads per warp);
 * the other parts use the selector's own launch shape.
 * Half the random descriptors carry Equation 3 + pairs' fifth coefficient
 * (theta[4] != 0), so the kernel's fifth FMA is compared bit for bit too.
 * RAMP_TEST_ITERS scales the random part (default 150 descriptors x 16
 * routings); compute-sanitizer runs use a small value.
 */
#include "check.h"
#include "select_check.h"
#include "select_cpu.h"

#include <stdint.h>

typedef struct {
    ramp_gpu *gpu;
    ramp_stream stream;
    ramp_devptr ids;       /* device ids buffer (+16 bytes of slack) */
    size_t ids_cap;        /* int32 entries */
} ctx;

static void fill_poison(ctx *c, ramp_selector *s, const ramp_select_desc *d) {
    ramp_select_device dv;
    CHECK_OK(ramp_selector_device(s, &dv));
    CHECK_OK(ramp_gpu_fill32_async(c->gpu, dv.meta, SEL_POISON, RAMP_SELECT_META_COUNT, c->stream));
    CHECK_OK(ramp_gpu_fill32_async(c->gpu, dv.pred, SEL_POISON, RAMP_SELECT_MAX_ENTRIES, c->stream));
    CHECK_OK(ramp_gpu_fill32_async(c->gpu, dv.counts, SEL_POISON, (size_t)d->local_experts, c->stream));
    CHECK_OK(ramp_gpu_fill32_async(c->gpu, dv.tile_start, SEL_POISON, (size_t)d->local_experts + 1, c->stream));
    CHECK_OK(ramp_gpu_fill32_async(c->gpu, dv.sorted_ids, SEL_POISON, (size_t)dv.max_slots, c->stream));
    CHECK_OK(ramp_gpu_fill32_async(c->gpu, dv.tile_expert, SEL_POISON, (size_t)dv.max_tiles, c->stream));
}

/* Downloads every output buffer whole (not only the used part). */
static void download_all(ctx *c, ramp_selector *s, const ramp_select_desc *d,
                         ramp_select_result *r) {
    ramp_select_device dv;
    CHECK_OK(ramp_selector_device(s, &dv));
    CHECK_OK(ramp_stream_sync(c->gpu, c->stream));
    CHECK_OK(ramp_gpu_download(c->gpu, r->meta, dv.meta, sizeof r->meta));
    CHECK_OK(ramp_gpu_download(c->gpu, r->pred, dv.pred, sizeof r->pred));
    CHECK_OK(ramp_gpu_download(c->gpu, r->counts, dv.counts, (size_t)d->local_experts * 4));
    CHECK_OK(ramp_gpu_download(c->gpu, r->tile_start, dv.tile_start, ((size_t)d->local_experts + 1) * 4));
    CHECK_OK(ramp_gpu_download(c->gpu, r->sorted_ids, dv.sorted_ids, (size_t)dv.max_slots * 4));
    CHECK_OK(ramp_gpu_download(c->gpu, r->tile_expert, dv.tile_expert, (size_t)dv.max_tiles * 4));
}

/* Bitwise comparison of the GPU's whole buffers with the twin's. */
static int same_as_twin(const ramp_select_desc *d, const ramp_select_result *g,
                        const ramp_select_result *t, const char *what) {
    int ok = 1;
#define SAME(field, n)                                                        \
    if (memcmp(g->field, t->field, (size_t)(n) * sizeof g->field[0]) != 0) {  \
        for (int64_t i_ = 0; i_ < (int64_t)(n); i_++)                          \
            if (memcmp(&g->field[i_], &t->field[i_], sizeof g->field[0])) {    \
                fprintf(stderr, "%s: " #field "[%lld] differs: GPU %lld, CPU %lld\n", \
                        what, (long long)i_, (long long)g->field[i_],          \
                        (long long)t->field[i_]);                              \
                break;                                                         \
            }                                                                  \
        ok = 0;                                                                \
    }
    SAME(meta, RAMP_SELECT_META_COUNT);
    SAME(counts, d->local_experts);
    SAME(tile_start, d->local_experts + 1);
    SAME(sorted_ids, g->max_slots);
    SAME(tile_expert, g->max_tiles);
#undef SAME
    for (int i = 0; i < d->nentries; i++)
        if (memcmp(&g->pred[i], &t->pred[i], sizeof(float)) != 0) {
            fprintf(stderr, "%s: pred[%d] differs: GPU %.9g, CPU %.9g\n", what, i,
                    (double)g->pred[i], (double)t->pred[i]);
            ok = 0;
            break;
        }
    if (!ok) check_failures++;
    return ok;
}

/* One routing through both; returns 1 if identical. offset: int32 entries
 * into the device buffer (1 makes the input not 16-byte aligned). */
static int run_one(ctx *c, ramp_selector *s, const ramp_select_desc *d,
                   int tokens, const int32_t *ids, int offset,
                   ramp_select_result *gr, ramp_select_result *cr,
                   const char *what) {
    size_t n = (size_t)tokens * (size_t)d->topk;
    ramp_devptr p = c->ids + (ramp_devptr)offset * 4;
    if (n) CHECK_OK(ramp_gpu_upload(c->gpu, p, ids, n * 4));
    fill_poison(c, s, d);
    CHECK_OK(ramp_selector_launch(s, p, tokens, 0, c->stream));
    sel_poison(gr);
    download_all(c, s, d, gr);
    sel_poison(cr);
    CHECK_OK(ramp_select_cpu(d, tokens, ids, cr));
    int ok = same_as_twin(d, gr, cr, what);
    if (ok) sel_check(d, tokens, ids, gr, what);
    else
        fprintf(stderr, "  in %s: E=%d k=%d EL=%d tokens=%d menu=%d group_only=%d offset=%d\n",
                what, d->experts, d->topk, d->local_experts, tokens, d->nentries,
                d->group_only, offset);
    return ok;
}

static void ensure_ids(ctx *c, size_t n) {
    if (n + 8 <= c->ids_cap) return;
    CHECK_OK(ramp_gpu_free(c->gpu, c->ids));
    c->ids_cap = n + 8;
    CHECK_OK(ramp_gpu_alloc(c->gpu, c->ids_cap * 4, &c->ids));
}

static void random_routings(ctx *c, ramp_rng *rng, int iters) {
    static int32_t local_of[4096];
    int cases = 0, descs = 0;
    for (int it = 0; it < iters && check_failures == 0; it++, descs++) {
        ramp_select_desc d;
        gen_desc(rng, &d, local_of, it % 40 == 0);
        /* Equation 3 + pairs (theta[4] != 0, the entry's former pad word) on
         * half the descriptors, spread over every block and cluster shape */
        const int pairs = (it / 2) % 2;
        if (pairs) gen_pairs_term(rng, &d);
        /* a third of the descriptors on each block size; cluster sizes:
         * the selector's choice, then 1, 2, 4, 8 and (non-portable) 16 blocks */
        setenv("RAMP_SELECT_WARPS", it % 3 == 0 ? "32" : it % 3 == 1 ? "16" : "8", 1);
        static const char *ctas[6] = {"0", "1", "2", "4", "8", "16"};
        setenv("RAMP_SELECT_CTAS", ctas[it % 6], 1);
        ramp_selector *s = NULL;
        ramp_select_result *gr = NULL, *cr = NULL;
        CHECK_OK(ramp_selector_create(c->gpu, &d, &s));
        CHECK_OK(ramp_select_result_create(&d, &gr));
        CHECK_OK(ramp_select_result_create(&d, &cr));
        size_t cap = (size_t)d.max_tokens * (size_t)d.topk;
        int32_t *ids = malloc(cap * 4 + 16);
        if (s && gr && cr && ids) {
            ensure_ids(c, cap);
            for (int rep = 0; rep < 16 && check_failures == 0; rep++, cases++) {
                int kind = (int)ramp_rng_below(rng, GEN_KINDS);
                int tokens = rep == 0 ? 0 : rep == 1 ? d.max_tokens
                                                   : (int)ramp_rng_below(rng, (uint32_t)d.max_tokens + 1);
                gen_routing(rng, &d, tokens, kind, ids);
                char what[96];
                snprintf(what, sizeof what, "random case %d (%s%s)", cases, gen_kind_name(kind),
                         pairs ? ", pairs term" : "");
                run_one(c, s, &d, tokens, ids, (int)ramp_rng_below(rng, 2), gr, cr, what);
            }
        }
        free(ids);
        ramp_select_result_free(gr);
        ramp_select_result_free(cr);
        ramp_selector_free(s);
    }
    unsetenv("RAMP_SELECT_WARPS");
    unsetenv("RAMP_SELECT_CTAS");
    printf("random: %d routings on %d descriptors (blocks of 1024, 512, 256 "
           "threads; clusters of 1-8 blocks; half with the pairs term), bit-identical\n",
           cases, descs);
}

static void issue_sizes(ctx *c, ramp_rng *rng) {
    /* 8..4,096 tokens x 8 on E = 256 with 8, 16, 32 local experts, a menu of
     * six, every routing kind */
    static const int locals[] = {8, 16, 32};
    static const int toks[] = {1, 8, 64, 100, 200, 512, 4096};
    /* the launch shape each count runs (ramp_select_shape_for on tokens * 8;
     * 100 and 200 tokens: 2 and 4 blocks) */
    static const int shape_ctas[] = {1, 1, 1, 2, 4, 8, 8}, shape_warps[] = {16, 16, 16, 16, 16, 16, 32};
    enum { NT = (int)(sizeof toks / sizeof toks[0]) };
    static const int rows[] = {2, 4, 8, 16, 32, 64};
    int cases = 0;
    for (int li = 0; li < 3; li++) {
        ramp_select_desc d = {.experts = 256, .topk = 8, .max_tokens = 4096,
                              .local_experts = locals[li], .first_expert = 256 - locals[li],
                              .nentries = 6};
        for (int e = 0; e < 6; e++)
            d.entries[e] = (ramp_select_entry){.rows = rows[e], .slices = 3, .slots = 132,
                                               .theta = {4.0f + e, 3.0f, 0.02f * (6 - e), 0.3f}};
        d.one_shape = li == 2; /* the last: every launch in max_tokens' shape */
        ramp_selector *s = NULL;
        ramp_select_result *gr = NULL, *cr = NULL;
        CHECK_OK(ramp_selector_create(c->gpu, &d, &s));
        CHECK_OK(ramp_select_result_create(&d, &gr));
        CHECK_OK(ramp_select_result_create(&d, &cr));
        int32_t *ids = malloc(4096 * 8 * 4);
        ensure_ids(c, 4096 * 8);
        if (s) { /* five shapes; a device-side count runs the largest */
            CHECK_EQ_INT(ramp_selector_shapes(s), d.one_shape ? 1 : 5);
            int w, n;
            ramp_selector_shape(s, -1, &w, &n);
            CHECK(w == 32 && n == 8);
            CHECK(ramp_selector_warps(s) == 32 && ramp_selector_ctas(s) == 8);
            for (int ti = 0; ti < NT; ti++) {
                ramp_selector_shape(s, toks[ti], &w, &n);
                const int ww = d.one_shape ? 32 : shape_warps[ti];
                const int wn = d.one_shape ? 8 : shape_ctas[ti];
                if (w != ww || n != wn)
                    fprintf(stderr, "  %d tokens: shape %d warps x %d blocks, want %d x %d\n",
                            toks[ti], w, n, ww, wn);
                CHECK(w == ww && n == wn);
            }
        }
        for (int ti = 0; ti < NT && s && gr && cr; ti++)
            for (int kind = 0; kind < GEN_KINDS; kind++, cases++) {
                gen_routing(rng, &d, toks[ti], kind, ids);
                char what[96];
                snprintf(what, sizeof what, "EL=%d tokens=%d %s", locals[li], toks[ti],
                         gen_kind_name(kind));
                run_one(c, s, &d, toks[ti], ids, 0, gr, cr, what);
            }
        /* every pair on one local expert */
        for (int i = 0; i < 4096 * 8; i++) ids[i] = 256 - locals[li];
        run_one(c, s, &d, 4096, ids, 0, gr, cr, "all on one expert");
        if (gr) CHECK_EQ_INT(gr->counts[0], 4096 * 8);
        free(ids);
        ramp_select_result_free(gr);
        ramp_select_result_free(cr);
        ramp_selector_free(s);
    }
    printf("issue sizes: %d routings, bit-identical\n", cases);

    /* 16,384 x 8 pairs: several loads per warp even on a cluster of 8, and
     * shared memory that does not grow with the pairs */
    ramp_select_desc d = {.experts = 128, .topk = 8, .max_tokens = 16384,
                          .local_experts = 16, .first_expert = 32, .nentries = 6};
    for (int e = 0; e < 6; e++)
        d.entries[e] = (ramp_select_entry){.rows = rows[e], .slices = 4, .slots = 132,
                                           .theta = {4.0f, 3.0f, 0.02f, 0.3f}};
    CHECK(ramp_select_smem_bytes(&d) < 48 * 1024);
    ramp_selector *s = NULL;
    ramp_select_result *gr = NULL, *cr = NULL;
    CHECK_OK(ramp_selector_create(c->gpu, &d, &s));
    CHECK_OK(ramp_select_result_create(&d, &gr));
    CHECK_OK(ramp_select_result_create(&d, &cr));
    int32_t *ids = malloc(16384 * 8 * 4);
    ensure_ids(c, 16384 * 8);
    for (int kind = 0; kind < GEN_KINDS && s && gr && cr; kind++) {
        int tokens = kind == 0 ? 16384 : (int)ramp_rng_below(rng, 16385);
        gen_routing(rng, &d, tokens, kind, ids);
        run_one(c, s, &d, tokens, ids, kind & 1, gr, cr, "16,384 tokens");
    }
    free(ids);
    ramp_select_result_free(gr);
    ramp_select_result_free(cr);
    ramp_selector_free(s);
}

/* E = 64, k = 4, 16 local experts from 16, up to 300 tokens, a menu of six
 * tile sizes whose costs rank them by the load. */
static ramp_select_desc six_entry_desc(void) {
    ramp_select_desc d = {.experts = 64, .topk = 4, .max_tokens = 300,
                          .local_experts = 16, .first_expert = 16, .nentries = 6};
    static const int rows[] = {4, 8, 12, 16, 24, 32};
    for (int e = 0; e < 6; e++)
        d.entries[e] = (ramp_select_entry){.rows = rows[e], .slices = 2, .slots = 264,
                                           .theta = {2.0f, 5.0f, 0.01f * (e + 1), 0.2f}};
    return d;
}

/* Token count read on the device, clamping, and a captured graph replayed
 * on new routings. */
static void device_count_and_graph(ctx *c, ramp_rng *rng, int nreplays) {
    ramp_select_desc d = six_entry_desc();
    ramp_selector *s = NULL;
    ramp_select_result *gr = NULL, *cr = NULL;
    CHECK_OK(ramp_selector_create(c->gpu, &d, &s));
    CHECK_OK(ramp_select_result_create(&d, &gr));
    CHECK_OK(ramp_select_result_create(&d, &cr));
    if (!s || !gr || !cr) goto done;
    ensure_ids(c, 300 * 4);
    ramp_devptr count_dev = 0;
    CHECK_OK(ramp_gpu_alloc(c->gpu, 4, &count_dev));
    int32_t *ids = malloc(300 * 4 * 4);
    gen_routing(rng, &d, 300, GEN_SKEWED, ids);
    CHECK_OK(ramp_gpu_upload(c->gpu, c->ids, ids, 300 * 4 * 4));
    /* out-of-range device counts are clamped and flagged */
    const int32_t tries[3] = {137, 1000, -3};
    const int32_t want[3] = {137, 300, 0};
    for (int i = 0; i < 3; i++) {
        CHECK_OK(ramp_gpu_upload(c->gpu, count_dev, &tries[i], 4));
        fill_poison(c, s, &d);
        CHECK_OK(ramp_selector_launch(s, c->ids, 0, count_dev, c->stream));
        sel_poison(gr);
        download_all(c, s, &d, gr);
        sel_poison(cr);
        CHECK_OK(ramp_select_cpu(&d, want[i], ids, cr));
        cr->meta[RAMP_SELECT_META_CLAMPED] = i > 0;
        same_as_twin(&d, gr, cr, "device token count");
        CHECK_EQ_INT(gr->meta[RAMP_SELECT_META_TOKENS], want[i]);
    }

    /* capture once, replay on fresh routings of varying size */
    ramp_graph *graph = NULL;
    CHECK_OK(ramp_graph_capture_begin(c->gpu, c->stream));
    CHECK_OK(ramp_selector_launch(s, c->ids, 0, count_dev, c->stream));
    CHECK_OK(ramp_graph_capture_end(c->gpu, c->stream, &graph));
    int replays = 0;
    for (int i = 0; i < nreplays && graph && check_failures == 0; i++, replays++) {
        int32_t tokens = (int32_t)ramp_rng_below(rng, 301);
        gen_routing(rng, &d, tokens, (int)ramp_rng_below(rng, GEN_KINDS), ids);
        CHECK_OK(ramp_gpu_upload_async(c->gpu, c->ids, ids, (size_t)tokens * 16, c->stream));
        CHECK_OK(ramp_gpu_upload_async(c->gpu, count_dev, &tokens, 4, c->stream));
        fill_poison(c, s, &d);
        CHECK_OK(ramp_graph_replay(graph, c->stream));
        sel_poison(gr);
        download_all(c, s, &d, gr);
        sel_poison(cr);
        CHECK_OK(ramp_select_cpu(&d, tokens, ids, cr));
        if (same_as_twin(&d, gr, cr, "graph replay")) sel_check(&d, tokens, ids, gr, "graph replay");
    }
    printf("graph: %d replays on new routings, bit-identical\n", replays);
    ramp_graph_free(graph);

    /* ramp_selector_download gives the same as the whole-buffer download */
    ramp_select_result *dl = NULL;
    CHECK_OK(ramp_select_result_create(&d, &dl));
    if (dl) {
        sel_poison(dl);
        CHECK_OK(ramp_selector_download(s, c->stream, dl));
        CHECK(memcmp(dl->meta, gr->meta, sizeof dl->meta) == 0);
        CHECK(memcmp(dl->sorted_ids, gr->sorted_ids,
                     (size_t)gr->meta[RAMP_SELECT_META_SLOTS] * 4) == 0);
        CHECK(memcmp(dl->tile_expert, gr->tile_expert,
                     (size_t)gr->meta[RAMP_SELECT_META_TILES] * 4) == 0);
    }
    ramp_select_result_free(dl);

    /* bad calls: refused before any launch */
    CHECK_ERR(ramp_selector_launch(s, c->ids, 10, 0, NULL), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "NULL stream") != NULL);
    CHECK_ERR(ramp_selector_launch(s, c->ids, 301, 0, c->stream), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "301 tokens") != NULL);
    CHECK_ERR(ramp_selector_launch(s, c->ids, -1, 0, c->stream), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_selector_launch(s, 0, 10, 0, c->stream), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_selector_launch(s, c->ids + 2, 10, 0, c->stream), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_OK(ramp_selector_launch(s, 0, 0, 0, c->stream)); /* zero tokens, no ids */
    CHECK_OK(ramp_stream_sync(c->gpu, c->stream));
    free(ids);
    CHECK_OK(ramp_gpu_free(c->gpu, count_dev));
done:
    ramp_select_result_free(gr);
    ramp_select_result_free(cr);
    ramp_selector_free(s);
}

/* ramp_select_desc.pdl_wait: the selection launched as a programmatic
 * dependent of a kernel that lets it start at once (launch_dependents at
 * its top) and writes the ids only after spinning for ~50 us. The ids
 * buffer holds -1 (no expert) until then: a selection that read it before
 * its griddepcontrol.wait would count no pair and differ from the twin. */
static void pdl_after_writer(ctx *c, ramp_rng *rng) {
    static const char *src =
        "extern \"C\" __global__ void ramp_test_late_ids(const int *src, int *dst, int n,\n"
        "                                                 long long spin) {\n"
        "  asm volatile(\"griddepcontrol.launch_dependents;\" ::: \"memory\");\n"
        "  const long long t0 = clock64();\n"
        "  while (clock64() - t0 < spin) { }\n"
        "  for (int i = threadIdx.x; i < n; i += blockDim.x) dst[i] = src[i];\n"
        "}\n";
    ramp_jit_request rq;
    memset(&rq, 0, sizeof rq);
    rq.name = "test-late-ids";
    rq.source = src;
    ramp_jit_result *jit = NULL;
    ramp_module *mod = NULL;
    ramp_kernel *k = NULL;
    CHECK_OK(ramp_jit_compile(&rq, &jit));
    if (jit) CHECK_OK(ramp_module_load(c->gpu, jit->cubin, jit->cubin_size, &mod));
    if (mod) CHECK_OK(ramp_module_kernel(mod, "ramp_test_late_ids", 0, &k));
    ramp_select_desc d = six_entry_desc();
    d.pdl_wait = 1;
    ramp_selector *s = NULL;
    ramp_select_result *gr = NULL, *cr = NULL;
    ramp_devptr src_ids = 0;
    int32_t *ids = malloc(300 * 4 * 4);
    CHECK_OK(ramp_selector_create(c->gpu, &d, &s));
    CHECK_OK(ramp_select_result_create(&d, &gr));
    CHECK_OK(ramp_select_result_create(&d, &cr));
    CHECK_OK(ramp_gpu_alloc(c->gpu, 300 * 4 * 4, &src_ids));
    ensure_ids(c, 300 * 4);
    int runs = 0;
    for (int rep = 0; rep < 8 && k && s && gr && cr && ids && check_failures == 0; rep++, runs++) {
        int tokens = 1 + (int)ramp_rng_below(rng, 300);
        gen_routing(rng, &d, tokens, rep % 2 ? GEN_SKEWED : GEN_UNIFORM, ids);
        int n = tokens * d.topk;
        long long spin = 100000; /* clocks: ~50 us at the H200's clocks */
        CHECK_OK(ramp_gpu_upload(c->gpu, src_ids, ids, (size_t)n * 4));
        CHECK_OK(ramp_gpu_fill32_async(c->gpu, c->ids, 0xffffffffu, (size_t)n, c->stream));
        fill_poison(c, s, &d);
        void *args[4] = {&src_ids, &c->ids, &n, &spin};
        const unsigned grid[3] = {1, 1, 1}, block[3] = {256, 1, 1};
        CHECK_OK(ramp_kernel_launch(k, grid, block, 0, c->stream, args));
        CHECK_OK(ramp_selector_launch(s, c->ids, tokens, 0, c->stream));
        sel_poison(gr);
        download_all(c, s, &d, gr);
        sel_poison(cr);
        CHECK_OK(ramp_select_cpu(&d, tokens, ids, cr));
        if (same_as_twin(&d, gr, cr, "pdl_wait after a late writer"))
            sel_check(&d, tokens, ids, gr, "pdl_wait after a late writer");
    }
    printf("pdl_wait: %d selections launched as dependents of a late id writer, bit-identical\n",
           runs);
    free(ids);
    CHECK_OK(ramp_gpu_free(c->gpu, src_ids));
    ramp_select_result_free(gr);
    ramp_select_result_free(cr);
    ramp_selector_free(s);
    ramp_module_free(mod);
    ramp_jit_result_free(jit);
}

/* A menu of 16 on blocks of 8, 16 and 32 warps: warps take several
 * entries when the menu is wider than the block (entry 15 wins here). */
static void wide_menu(ctx *c, ramp_rng *rng) {
    ramp_select_desc d = {.experts = 64, .topk = 4, .max_tokens = 200,
                          .local_experts = 16, .first_expert = 0, .nentries = 16};
    for (int e = 0; e < 16; e++)
        d.entries[e] = (ramp_select_entry){.rows = 1 + e, .slices = 2, .slots = 132,
                                           .theta = {20.0f - e, 1.0f, 0.01f, 0.1f}};
    static const char *warps[3] = {"8", "16", "32"};
    int32_t *ids = malloc(200 * 4 * 4);
    ensure_ids(c, 200 * 4);
    for (int w = 0; w < 3; w++) {
        setenv("RAMP_SELECT_WARPS", warps[w], 1);
        ramp_selector *s = NULL;
        ramp_select_result *gr = NULL, *cr = NULL;
        CHECK_OK(ramp_selector_create(c->gpu, &d, &s));
        CHECK_OK(ramp_select_result_create(&d, &gr));
        CHECK_OK(ramp_select_result_create(&d, &cr));
        for (int rep = 0; rep < 8 && s && gr && cr; rep++) {
            int tokens = rep == 0 ? 1 : (int)ramp_rng_below(rng, 201);
            gen_routing(rng, &d, tokens, rep % GEN_KINDS, ids);
            run_one(c, s, &d, tokens, ids, 0, gr, cr, "menu of 16");
            if (rep == 0) CHECK_EQ_INT(gr->meta[RAMP_SELECT_META_CHOSEN], 15);
        }
        ramp_select_result_free(gr);
        ramp_select_result_free(cr);
        ramp_selector_free(s);
    }
    unsetenv("RAMP_SELECT_WARPS");
    free(ids);
}

static void bad_selectors(ctx *c) {
    ramp_select_desc d = {.experts = 8, .topk = 9, .max_tokens = 16,
                          .local_experts = 4, .nentries = 1};
    d.entries[0] = (ramp_select_entry){.rows = 8, .slices = 1, .slots = 132};
    ramp_selector *s = NULL;
    CHECK_ERR(ramp_selector_create(c->gpu, &d, &s), RAMP_ERR_INVALID_ARGUMENT); /* k > E */
    CHECK(s == NULL);
    /* a scattered placement (a contiguous one needs no map) of 1024 of
     * 65535 experts on a batch large enough for 32 warps a block: a 128 KB
     * id map + 128 KB of per-warp counts, more than a block may have (the
     * shape follows the descriptor: ask the library for the bytes) */
    static int32_t scattered[65535];
    for (int e = 0; e < 65535; e++) scattered[e] = e < 1024 ? 1023 - e : -1;
    ramp_gpu_info info;
    CHECK_OK(ramp_gpu_get_info(c->gpu, &info));
    d.local_of = scattered;
    d.topk = 8;
    d.experts = 65535;
    d.local_experts = 1024;
    d.max_tokens = 4096;
    CHECK(ramp_select_smem_bytes(&d) > info.limits.smem_per_block);
    CHECK_ERR(ramp_selector_create(c->gpu, &d, &s), RAMP_ERR_UNSUPPORTED);
    CHECK(strstr(ramp_last_error(), "shared memory") != NULL);
    CHECK(s == NULL);
}

/* The driver's view of the compiled kernel agrees with the ptxas report. */
static void attributes_match_report(ctx *c) {
    ramp_jit_result *jr = NULL;
    CHECK_OK(ramp_select_compile(0, 32, &jr));
    if (!jr) return;
    ramp_module *m = NULL;
    ramp_kernel *k = NULL;
    CHECK_OK(ramp_module_load(c->gpu, jr->cubin, jr->cubin_size, &m));
    if (m) CHECK_OK(ramp_module_kernel(m, "ramp_select", 64 * 1024, &k));
    /* a failing driver call on purpose; compute-sanitizer would report it */
    if (m && !getenv("RAMP_SANITIZER"))
        CHECK_ERR(ramp_module_kernel(m, "no_such_kernel", 0, &k), RAMP_ERR_NOT_FOUND);
    if (m) CHECK_ERR(ramp_module_kernel(m, "ramp_select", 1 << 20, &k), RAMP_ERR_UNSUPPORTED);
    if (m) CHECK_OK(ramp_module_kernel(m, "ramp_select", 64 * 1024, &k));
    const ramp_kernel_report *rep = ramp_jit_kernel(jr, "ramp_select");
    ramp_kernel_report drv;
    if (k && rep) {
        CHECK_OK(ramp_kernel_attributes(k, &drv));
        CHECK_EQ_INT(drv.registers, rep->registers);
        CHECK_EQ_INT(drv.smem_bytes, rep->smem_bytes);
        CHECK_EQ_INT(drv.stack_bytes, rep->stack_bytes);
        printf("driver: ramp_select %d registers, %d B static smem, %d B local\n",
               drv.registers, drv.smem_bytes, drv.stack_bytes);
        /* launch-shape checks happen before the driver sees the call */
        const unsigned g1[3] = {1, 1, 1}, b2k[3] = {2048, 1, 1}, b1k[3] = {1024, 1, 1};
        void *none[1] = {NULL};
        CHECK_ERR(ramp_kernel_launch(k, g1, b2k, 0, c->stream, none), RAMP_ERR_INVALID_ARGUMENT);
        CHECK_ERR(ramp_kernel_launch(k, g1, b1k, 65 * 1024, c->stream, none), RAMP_ERR_INVALID_ARGUMENT);
        CHECK_ERR(ramp_kernel_launch(k, g1, b1k, 0, NULL, none), RAMP_ERR_INVALID_ARGUMENT);
    }
    ramp_module_free(m);
    ramp_jit_result_free(jr);
}

int main(void) {
    unsigned long long seed = check_seed();
    ctx c = {0};
    ramp_status st = ramp_gpu_open(0, &c.gpu);
    if (st == RAMP_ERR_NO_GPU) {
        printf("no GPU: %s (skipped)\n", ramp_last_error());
        return 77;
    }
    CHECK_OK(st);
    if (!c.gpu) return check_finish("test_gpu_select");
    ramp_gpu_info info;
    CHECK_OK(ramp_gpu_get_info(c.gpu, &info));
    printf("GPU %d: %s, sm_%d%d, %d SMs, %d B smem/block, %d B smem/SM, L2 %d B, "
           "driver %d\n", info.ordinal, info.limits.name, info.cc_major, info.cc_minor,
           info.limits.sms, info.limits.smem_per_block, info.limits.smem_per_sm,
           info.l2_bytes, info.driver_version);
    if (info.cc_major != 9) {
        printf("the kernels are built for sm_90a; this GPU is sm_%d%d (skipped)\n",
               info.cc_major, info.cc_minor);
        ramp_gpu_close(c.gpu);
        return 77;
    }
    CHECK(info.limits.sms > 0 && info.limits.smem_per_block >= 48 * 1024 &&
          info.limits.smem_per_sm >= info.limits.smem_per_block &&
          info.limits.regs_per_sm >= 65536 && info.l2_bytes > 0 &&
          info.limits.max_threads_per_sm >= 1024 && info.limits.max_blocks_per_sm > 0);
    int count = 0;
    CHECK_OK(ramp_gpu_count(&count));
    CHECK(count >= 1);
    ramp_gpu *none = NULL;
    CHECK_ERR(ramp_gpu_open(count, &none), RAMP_ERR_NO_GPU);

    CHECK_OK(ramp_stream_create(c.gpu, &c.stream));
    ramp_rng rng;
    ramp_rng_seed(&rng, seed);
    const char *it = getenv("RAMP_TEST_ITERS");
    int iters = it && *it ? atoi(it) : 150;

    attributes_match_report(&c);
    bad_selectors(&c);
    if (check_failures == 0) wide_menu(&c, &rng);
    if (check_failures == 0) device_count_and_graph(&c, &rng, iters >= 20 ? 40 : 4);
    if (check_failures == 0) pdl_after_writer(&c, &rng);
    if (check_failures == 0) random_routings(&c, &rng, iters);
    if (check_failures == 0 && iters >= 20) issue_sizes(&c, &rng);

    CHECK_OK(ramp_gpu_free(c.gpu, c.ids));
    CHECK_OK(ramp_stream_destroy(c.gpu, c.stream));
    ramp_gpu_close(c.gpu);
    return check_finish("test_gpu_select");
}
