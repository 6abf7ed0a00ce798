/*
 * test_plan.c - plan files: made from a menu and a fit, written and read
 * back bit for bit, picking on the CPU exactly as the cost model does over
 * the menu, and every kind of bad file rejected with RAMP_ERR_FORMAT and a
 * message naming the field, with no partial output on a failed write.
 */
#include "eval_util.h"

#include <sys/stat.h>
#include <unistd.h>

static char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)len + 1);
    if (fread(buf, 1, (size_t)len, f) != (size_t)len) len = 0;
    buf[len] = 0;
    fclose(f);
    *n = (size_t)len;
    return buf;
}

/* Replaces the first occurrence of `from` in text by `to`; returns a new
 * string (NULL if absent). */
static char *replace(const char *text, const char *from, const char *to) {
    const char *p = strstr(text, from);
    if (!p) return NULL;
    size_t a = (size_t)(p - text), lf = strlen(from), lt = strlen(to), n = strlen(text);
    char *out = malloc(n - lf + lt + 1);
    memcpy(out, text, a);
    memcpy(out + a, to, lt);
    memcpy(out + a + lt, p + lf, n - a - lf + 1);
    return out;
}

static int file_exists(const char *p) {
    struct stat sb;
    return stat(p, &sb) == 0;
}

static void expect_bad(const char *text, const char *field) {
    ramp_plan p;
    memset(&p, 0x5a, sizeof p);
    ramp_plan before = p;
    ramp_status s = ramp_plan_parse(text, strlen(text), "bad.json", &p);
    if (s != RAMP_ERR_FORMAT) {
        fprintf(stderr, "expected FORMAT for case '%s', got %s\n", field, ramp_status_name(s));
        CHECK(s == RAMP_ERR_FORMAT);
        return;
    }
    CHECK(memcmp(&p, &before, sizeof p) == 0); /* output untouched */
    if (!strstr(ramp_last_error(), field)) {
        fprintf(stderr, "message '%s' does not name '%s'\n", ramp_last_error(), field);
        CHECK(0);
    }
    CHECK(strstr(ramp_last_error(), "bad.json") != NULL);
}

/* Equation 3 + pairs: a five-term plan from an EQ3_PAIRS fit reads back
 * exactly (every field, the checksum verified); a four-term plan reads with
 * theta[4] = 0 and cost_model EQ3 and is written as four terms; a five-term
 * file with the wrong count, a wrong name or a bad fifth coefficient is
 * refused, naming the entry and field. */
/* Flips each byte of a plan's text in turn (a random nonzero xor); every
 * change must be refused as a format error or parse to exactly ok
 * (whitespace, an exponent's case, a 17th digit that rounds the same).
 * Returns how many changed the plan silently, each one named on stderr. */
static int flip_each_byte(const char *text, size_t n, const ramp_plan *ok, ramp_rng *rng) {
    int silent = 0;
    for (size_t i = 0; i < n; i++) {
        char *b = malloc(n + 1);
        memcpy(b, text, n + 1);
        b[i] = (char)((unsigned char)b[i] ^ (1 + ramp_rng_below(rng, 127)));
        if (b[i] == 0) b[i] = 'x';
        ramp_plan p;
        memset(&p, 0, sizeof p);
        ramp_status s = ramp_plan_parse(b, n, "flip.json", &p);
        if (s == RAMP_OK && memcmp(&p, ok, sizeof *ok) != 0) {
            silent++;
            fprintf(stderr, "byte %zu ('%c' -> '%c') changed the plan silently\n", i, text[i], b[i]);
        }
        CHECK(s == RAMP_OK || s == RAMP_ERR_FORMAT);
        free(b);
    }
    return silent;
}

static void pairs_plans(ramp_timing *t, const ramp_menu *menu, const char *path) {
    ramp_costmodel *m5 = NULL;
    CHECK_OK(ramp_costmodel_fit(t, NULL, RAMP_COSTMODEL_EQ3_PAIRS, &m5));
    if (!m5) return;
    ramp_plan p5, back;
    CHECK_OK(ramp_plan_make(t, menu, m5, &p5));
    CHECK_EQ_INT(p5.cost_model, RAMP_COSTMODEL_EQ3_PAIRS);
    for (int i = 0; i < p5.count; i++)
        for (int k = 0; k < 5; k++) CHECK(p5.theta[i][k] == m5->theta[menu->config[i] * 5 + k]);
    /* a fifth coefficient of every kind: a fit's, 0, and one set by hand */
    p5.theta[0][4] = 0.0;
    p5.theta[1][4] = 0.1234567890123456789;
    CHECK_OK(ramp_plan_write(&p5, path));
    memset(&back, 0x33, sizeof back);
    CHECK_OK(ramp_plan_read(path, &back));
    CHECK(back.checksum == 1);
    p5.checksum = 1;
    CHECK(memcmp(&p5, &back, sizeof p5) == 0);
    p5.checksum = 0;
    size_t n = 0;
    char *five = slurp(path, &n);
    CHECK(five && strstr(five, "\"cost_terms\":\t[\"1\", \"waves\", \"tiles\", \"active\", \"pairs\"]"));
    /* the plan's CPU pick is the five-term model's over the menu */
    ramp_plan fit;
    CHECK_OK(ramp_plan_make(t, menu, m5, &fit));
    for (int64_t i = 0; i < t->nloads; i++) {
        const int32_t *ld = t->loads + i * t->max_experts;
        int c = -1;
        CHECK_OK(ramp_costmodel_pick(m5, t->nexp[i], ld, menu->config, menu->count, &c));
        CHECK_EQ_INT(menu->config[ramp_plan_pick(&fit, t->nexp[i], ld)], c);
    }
    if (five) {
        ramp_plan ok;
        CHECK_OK(ramp_plan_parse(five, n, "five.json", &ok));
        char th4[48], th3[48], from[128], to[160];
        snprintf(th3, sizeof th3, "%.17g", p5.theta[1][3]);
        snprintf(th4, sizeof th4, "%.17g", p5.theta[1][4]);
        snprintf(from, sizeof from, "%s, %s]", th3, th4);
        CHECK(strstr(five, from) != NULL);
        struct { const char *from, *to, *field; } cases[] = {
            /* a four-name list with five thetas, and an unknown or moved name */
            {", \"pairs\"]", "]", "menu\"[0].theta must be an array of 4"},
            {"\"pairs\"", "\"pair\"", "\"cost_terms\"[4] must be \"pairs\""},
            {"\"pairs\"", "\"tokens\"", "\"cost_terms\"[4] must be \"pairs\""},
            {"\"active\", \"pairs\"", "\"pairs\", \"active\"", "\"cost_terms\"[3] must be \"active\""},
            {", \"pairs\"]", ", \"pairs\", \"x\"]", "\"cost_terms\" has 6 names"},
            {"[\"1\", \"waves\", \"tiles\", \"active\", \"pairs\"]", "[\"1\", \"waves\", \"tiles\"]",
             "\"cost_terms\" has 3 names"},
            {"[\"1\", \"waves\", \"tiles\", \"active\", \"pairs\"]", "\"pairs\"", "\"cost_terms\" must be an array"},
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            char *b = replace(five, cases[i].from, cases[i].to);
            CHECK(b != NULL);
            if (b) expect_bad(b, cases[i].field);
            free(b);
        }
        /* entry 1's fifth theta: negative, infinite, not a number, missing, one too many */
        const char *bad4[][2] = {{"-1", "menu\"[1].theta[4]"}, {"1e999", "menu\"[1].theta[4]"},
                                 {"\"x\"", "menu\"[1].theta[4]"}, {"", "menu\"[1].theta must be an array of 5"}};
        for (size_t i = 0; i < sizeof bad4 / sizeof bad4[0]; i++) {
            if (bad4[i][0][0]) snprintf(to, sizeof to, "%s, %s]", th3, bad4[i][0]);
            else snprintf(to, sizeof to, "%s]", th3);
            char *b = replace(five, from, to);
            CHECK(b != NULL);
            if (b) expect_bad(b, bad4[i][1]);
            free(b);
        }
        snprintf(to, sizeof to, "%s, %s, 1]", th3, th4);
        char *b = replace(five, from, to);
        if (b) expect_bad(b, "menu\"[1].theta must be an array of 5");
        free(b);
        /* the checksum covers the fifth term: a changed digit is caught */
        snprintf(to, sizeof to, "%s, %.17g]", th3, p5.theta[1][4] * 2);
        b = replace(five, from, to);
        if (b) expect_bad(b, "checksum mismatch");
        free(b);
        /* every changed byte is refused or changes nothing */
        ramp_rng rng;
        ramp_rng_seed(&rng, 77);
        CHECK_EQ_INT(flip_each_byte(five, n, &ok, &rng), 0);
    }
    free(five);
    /* in memory: a fifth theta in an EQ3 plan would be lost on write */
    ramp_plan p4 = p5;
    p4.cost_model = RAMP_COSTMODEL_EQ3;
    CHECK_ERR(ramp_plan_validate(&p4), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "menu entry 1") && strstr(ramp_last_error(), "theta[4]"));
    p4 = p5;
    p4.theta[2][4] = NAN;
    CHECK_ERR(ramp_plan_write(&p4, path), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "menu entry 2") && strstr(ramp_last_error(), "theta[4]"));
    p4 = p5;
    p4.theta[2][4] = -0.5;
    CHECK_ERR(ramp_plan_validate(&p4), RAMP_ERR_INVALID_ARGUMENT);
    p4.cost_model = RAMP_COSTMODEL_TILECOUNT;
    CHECK_ERR(ramp_plan_validate(&p4), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "cost_model") != NULL);
    /* an EQ3 plan: four terms on disk, read back with theta[4] = 0 */
    p4 = p5;
    p4.cost_model = RAMP_COSTMODEL_EQ3;
    for (int i = 0; i < p4.count; i++) p4.theta[i][4] = 0;
    CHECK_OK(ramp_plan_write(&p4, path));
    char *four = slurp(path, &n);
    CHECK(four && strstr(four, "\"cost_terms\":\t[\"1\", \"waves\", \"tiles\", \"active\"]") &&
          !strstr(four, "pairs"));
    free(four);
    memset(&back, 0x77, sizeof back);
    CHECK_OK(ramp_plan_read(path, &back));
    CHECK_EQ_INT(back.cost_model, RAMP_COSTMODEL_EQ3);
    for (int i = 0; i < back.count; i++) CHECK(back.theta[i][4] == 0.0);
    back.checksum = 0;
    CHECK(memcmp(&p4, &back, sizeof p4) == 0);
    /* the tile-count model is still refused, naming it */
    ramp_costmodel *tc = NULL;
    CHECK_OK(ramp_costmodel_fit(t, NULL, RAMP_COSTMODEL_TILECOUNT, &tc));
    CHECK_ERR(ramp_plan_make(t, menu, tc, &back), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ramp_last_error(), "tile-count") != NULL);
    ramp_costmodel_free(tc);
    remove(path);
    ramp_costmodel_free(m5);
}

int main(void) {
    ramp_rng rng;
    ramp_rng_seed(&rng, check_seed());
    syn_params sp;
    syn_defaults(&sp);
    sp.batches = 6;
    sp.noise = 0.02;
    double theta[48];
    ramp_timing *t = syn_dataset(&rng, &sp, theta);
    if (!t) return check_finish("test_plan");
    snprintf(t->device, sizeof t->device, "NVIDIA H200 \"test\"");
    ramp_costmodel *m = NULL;
    ramp_menu menu;
    CHECK_OK(ramp_costmodel_fit(t, NULL, RAMP_COSTMODEL_EQ3, &m));
    CHECK_OK(ramp_menu_greedy(t, NULL, 6, 0, NULL, &menu));
    ramp_plan plan, back;
    CHECK_OK(ramp_plan_make(t, &menu, m, &plan));
    CHECK_EQ_INT(plan.count, menu.count);
    CHECK_EQ_INT(plan.blocks_per_sm, menu.blocks_per_sm);
    CHECK(strcmp(plan.layout, "EP8") == 0 && strcmp(plan.libramp, RAMP_VERSION_STRING) == 0);

    /* the layer's warning when the GPU is not the one the timings came from */
    {
        char w[256], small[12];
        memset(w, 'x', sizeof w);
        CHECK_EQ_INT(ramp_plan_gpu_mismatch(&plan, "NVIDIA H200 \"test\"", plan.sms, w, sizeof w), 0);
        CHECK_EQ_INT(w[0], 0);
        int n = ramp_plan_gpu_mismatch(&plan, "NVIDIA H100 80GB HBM3", plan.sms, w, sizeof w);
        CHECK(n > 0 && n == (int)strlen(w));
        CHECK(strstr(w, "timings of NVIDIA H200 \"test\", this GPU is NVIDIA H100 80GB HBM3: "
                        "choices may be off") != NULL);
        n = ramp_plan_gpu_mismatch(&plan, "NVIDIA H200 \"test\"", plan.sms + 2, w, sizeof w);
        CHECK(n > 0 && strstr(w, "SMs") != NULL && strstr(w, "timings of") == NULL);
        /* truncated to the buffer; the length is the whole text's, as snprintf's */
        const int whole = ramp_plan_gpu_mismatch(&plan, "other", plan.sms, w, sizeof w);
        CHECK(whole > (int)sizeof small);
        CHECK_EQ_INT(ramp_plan_gpu_mismatch(&plan, "other", plan.sms, small, sizeof small), whole);
        CHECK_EQ_INT((int)strlen(small), (int)sizeof small - 1);
        CHECK(strncmp(small, w, sizeof small - 1) == 0);
        /* a plan that names no GPU: its name is not compared, its SM count is */
        ramp_plan anon = plan;
        anon.device[0] = 0;
        CHECK_EQ_INT(ramp_plan_gpu_mismatch(&anon, "other", plan.sms, w, sizeof w), 0);
        CHECK_EQ_INT(w[0], 0);
        CHECK(ramp_plan_gpu_mismatch(&anon, "other", plan.sms + 1, w, sizeof w) > 0 &&
              strstr(w, "an unnamed GPU") != NULL);
        CHECK_EQ_INT(ramp_plan_gpu_mismatch(&plan, "other", plan.sms, small, 0), -1);
        CHECK_EQ_INT(ramp_plan_gpu_mismatch(NULL, "other", plan.sms, w, sizeof w), -1);
        CHECK_EQ_INT(ramp_plan_gpu_mismatch(&plan, NULL, plan.sms, w, sizeof w), -1);
    }

    char path[1024], tmpname[1100];
    snprintf(path, sizeof path, "%s/plan_test.json", check_tmpdir());
    remove(path);
    CHECK_OK(ramp_plan_write(&plan, path));
    memset(&back, 0, sizeof back);
    CHECK_OK(ramp_plan_read(path, &back));
    CHECK(back.checksum == 1 && plan.checksum == 0); /* written with one, verified */
    plan.checksum = 1;
    CHECK(memcmp(&plan, &back, sizeof plan) == 0); /* exact, every double */
    plan.checksum = 0;
    snprintf(tmpname, sizeof tmpname, "%s.tmp.%ld", path, (long)getpid());
    CHECK(!file_exists(tmpname));

    /* The CPU pick over the plan equals the cost model's pick over the menu
     * (plan entry i is menu.config[i]). */
    for (int64_t i = 0; i < t->nloads; i++) {
        const int32_t *ld = t->loads + i * t->max_experts;
        int c = -1;
        CHECK_OK(ramp_costmodel_pick(m, t->nexp[i], ld, menu.config, menu.count, &c));
        CHECK_EQ_INT(menu.config[ramp_plan_pick(&plan, t->nexp[i], ld)], c);
    }

    /* make: refuses a tile-count model, an unfit entry, mixed classes */
    ramp_costmodel *tc = NULL;
    CHECK_OK(ramp_costmodel_fit(t, NULL, RAMP_COSTMODEL_TILECOUNT, &tc));
    CHECK_ERR(ramp_plan_make(t, &menu, tc, &back), RAMP_ERR_INVALID_ARGUMENT);
    ramp_costmodel_free(tc);
    ramp_menu mixed = menu;
    for (int c = 0; c < t->nconfigs; c++)
        if (t->blocks_per_sm[c] != menu.blocks_per_sm) mixed.config[1] = c;
    CHECK_ERR(ramp_plan_make(t, &mixed, m, &back), RAMP_ERR_INVALID_ARGUMENT);
    m->rows[menu.config[2]] = 0;
    CHECK_ERR(ramp_plan_make(t, &menu, m, &back), RAMP_ERR_INVALID_ARGUMENT);

    /* A failed write over an existing plan leaves it as it was. */
    {
        size_t n0 = 0, n1 = 0;
        char *before = slurp(path, &n0);
        ramp_plan worse = plan;
        worse.theta[0][0] = NAN;
        CHECK_ERR(ramp_plan_write(&worse, path), RAMP_ERR_INVALID_ARGUMENT);
        char *after = slurp(path, &n1);
        CHECK(before && after && n0 == n1 && memcmp(before, after, n0) == 0);
        free(before);
        free(after);
    }
    /* write: validates first and leaves nothing behind */
    ramp_plan bad = plan;
    bad.theta[1][2] = -1;
    char path2[1100];
    snprintf(path2, sizeof path2, "%s/plan_bad.json", check_tmpdir());
    remove(path2);
    CHECK_ERR(ramp_plan_write(&bad, path2), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(!file_exists(path2));
    bad = plan;
    bad.configs[3] = bad.configs[0];
    CHECK_ERR(ramp_plan_write(&bad, path2), RAMP_ERR_INVALID_ARGUMENT);
    bad = plan;
    bad.configs[0].rows = 7;
    CHECK_ERR(ramp_plan_write(&bad, path2), RAMP_ERR_INVALID_ARGUMENT);
    bad = plan;
    snprintf(bad.layout, sizeof bad.layout, "EP99");
    CHECK_ERR(ramp_plan_write(&bad, path2), RAMP_ERR_INVALID_ARGUMENT);
    CHECK(!file_exists(path2));
    snprintf(path2, sizeof path2, "%s/no/such/dir/plan.json", check_tmpdir());
    CHECK_ERR(ramp_plan_write(&plan, path2), RAMP_ERR_IO);
    CHECK_ERR(ramp_plan_read(path2, &back), RAMP_ERR_IO);

    /* read: every kind of bad file */
    size_t n = 0;
    char *good = slurp(path, &n);
    CHECK(good != NULL);
    if (good) {
        ramp_plan ok;
        CHECK_OK(ramp_plan_parse(good, n, "good.json", &ok));
        struct { const char *from, *to, *field; } cases[] = {
            {"\"ramp-plan\"", "\"ramp-plot\"", "format"},
            {"\"version\":\t1", "\"version\":\t2", "version"},
            {"\"version\":\t1", "\"version\":\t1.5", "version"},
            {"\"version\":\t1", "\"version\":\t\"1\"", "version"},
            {"\"libramp\":\t\"" RAMP_VERSION_STRING "\"", "\"libramp\":\t\"7.0.0\"", "libramp"},
            {"\"layout\":\t\"EP8\"", "\"layout\":\t\"EP9x\"", "EP9x"},
            {"\"layout\":\t\"EP8\"", "\"layout\":\t8", "layout"},
            {"\"sms\":\t16", "\"sms\":\t0", "sms"},
            {"\"sms\":\t16", "\"sms\":\t16, \"sms\": 16", "repeated"},
            {"\"sms\":\t16", "\"smz\":\t16", "smz"},
            {"\"experts\":\t16", "\"experts\":\t-16", "experts"},
            {"\"bf16\":\t0", "\"bf16\":\t2", "bf16"},
            {"\"hidden\":\t2048,", "", "hidden"},
            {"\"occupancy\":", "\"occupancy\": 0, \"x\":", "x"},
            {"\"waves\"", "\"wave\"", "cost_terms"},
            {"\"config\":\t\"r", "\"config\":\t\"q", "menu\"[0].config"},
            {"\"theta\":\t[", "\"theta\":\t[-1, ", "theta"},
            {"\"theta\":\t[", "\"theta\":\t[1e999, ", "theta"},
            {"\"theta\":\t[", "\"theta\":\t[\"a\", ", "theta"},
            {"\"menu\":\t[", "\"menu\":\t[7, ", "menu\"[0]"},
            {"\"menu\":\t[", "\"menu\":\t\"x\", \"menuz\":\t[", "menu"},
            {"\"model\":\t\"synthetic\"", "\"model\":\t\"\"", "model"},
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            char *b = replace(good, cases[i].from, cases[i].to);
            if (!b) {
                fprintf(stderr, "case %zu: '%s' not in the plan file\n", i, cases[i].from);
                CHECK(b != NULL);
                continue;
            }
            expect_bad(b, cases[i].field);
            free(b);
        }
        /* repeated menu entry: copy entry 0's config name over entry 1's */
        char n0[64], n1[64], *b;
        ramp_config_name(&plan.configs[0], n0, sizeof n0);
        ramp_config_name(&plan.configs[1], n1, sizeof n1);
        char from[80], to[80];
        snprintf(from, sizeof from, "\"%s\"", n1);
        snprintf(to, sizeof to, "\"%s\"", n0);
        b = replace(good, from, to);
        if (b) { expect_bad(b, "menu entries"); free(b); }
        /* empty menu */
        const char *mstart = strstr(good, "\"menu\":");
        if (mstart) {
            size_t head = (size_t)(mstart - good);
            char *e = malloc(head + 32);
            memcpy(e, good, head);
            strcpy(e + head, "\"menu\": []}");
            expect_bad(e, "menu");
            free(e);
        }
        /* truncated anywhere, not JSON, empty */
        for (size_t cut = 0; cut + 1 < n; cut += 1 + n / 40) {
            ramp_plan p;
            CHECK_ERR(ramp_plan_parse(good, cut, "cut.json", &p), RAMP_ERR_FORMAT);
        }
        expect_bad("not json", "JSON");
        expect_bad("[1, 2]", "object");

        /* The checksum: present, verified; a changed theta digit is caught
         * (the file named); a plan without one (older files) still reads. */
        CHECK(strstr(good, "\"checksum\":\t\"sha256:") != NULL);
        CHECK(ok.checksum == 1);
        char th[40];
        snprintf(th, sizeof th, "%.17g", plan.theta[0][1]);
        char *dig = strstr(good, th);
        CHECK(dig != NULL);
        if (dig) {
            char *b2 = strdup(good);
            char *d2 = b2 + (dig - good);
            d2[1] = d2[1] == '9' ? '8' : (char)(d2[1] >= '0' && d2[1] <= '8' ? d2[1] + 1 : d2[1]);
            if (d2[1] == dig[1]) d2[0] = d2[0] == '9' ? '8' : (char)(d2[0] + 1);
            expect_bad(b2, "checksum mismatch");
            free(b2);
        }
        const char *cs = strstr(good, ",\n\t\"checksum\"");
        CHECK(cs != NULL);
        if (cs) {
            char *b3 = strdup(good);
            const char *end = strchr(cs + 3, '\n');
            memmove(b3 + (cs - good), b3 + (end - good), strlen(end) + 1);
            ramp_plan nochk;
            CHECK_OK(ramp_plan_parse(b3, strlen(b3), "old.json", &nochk));
            CHECK(nochk.checksum == 0);
            ok.checksum = 0;
            CHECK(memcmp(&nochk, &ok, sizeof ok) == 0);
            ok.checksum = 1;
            /* ... and an old plan also lacks "slots": the default wave. */
            char *b4 = b3, *q;
            while ((q = strstr(b4, ",\n\t\t\t\"slots\"")) != NULL) {
                const char *e2 = strchr(q + 3, '\n');
                memmove(q, e2, strlen(e2) + 1);
            }
            CHECK(strstr(b3, "slots") == NULL);
            CHECK_OK(ramp_plan_parse(b3, strlen(b3), "old.json", &nochk));
            for (int i = 0; i < nochk.count; i++) {
                CHECK_EQ_INT(nochk.slots[i], 0);
                CHECK_EQ_INT(ramp_plan_slots(&nochk, i), nochk.sms * nochk.blocks_per_sm);
            }
            free(b3);
        }
        /* Bad slots values. */
        char want_slots[64];
        snprintf(want_slots, sizeof want_slots, "\"slots\":\t%d", plan.slots[0]);
        const char *slot_cases[] = {"\"slots\":\t0", "\"slots\":\t-3", "\"slots\":\t1.5",
                                    "\"slots\":\t\"16\"", "\"slots\":\t100000"};
        for (size_t i = 0; i < sizeof slot_cases / sizeof slot_cases[0]; i++) {
            char *b5 = replace(good, want_slots, slot_cases[i]);
            CHECK(b5 != NULL);
            if (b5) expect_bad(b5, "slots");
            free(b5);
        }
        /* Every single changed byte either is refused or leaves the plan
         * exactly as it was (whitespace; an exponent's case; a 17th digit
         * that rounds to the same double): nothing else gets served. */
        CHECK_EQ_INT(flip_each_byte(good, n, &ok, &rng), 0);
        /* a bad file on disk is rejected by the reader too */
        FILE *f = fopen(path, "w");
        fputs("{\"format\": \"ramp-plan\"}", f);
        fclose(f);
        CHECK_ERR(ramp_plan_read(path, &back), RAMP_ERR_FORMAT);
        free(good);
    }
    /* The kernel: a v1 plan has no "kernel" key (its canonical text, and so
     * its checksum, are those of every plan before the key existed); a v2
     * plan says "v2", reads back exactly, and the checksum covers it; an
     * unknown value, or an entry v2 does not run, is refused. */
    {
        CHECK_OK(ramp_plan_write(&plan, path));
        size_t n1 = 0;
        char *v1 = slurp(path, &n1);
        CHECK(v1 && strstr(v1, "\"kernel\"") == NULL);
        free(v1);
        ramp_plan p2 = plan;
        p2.kernel = RAMP_KERNEL_V2;
        static const int rows[6] = {2, 8, 16, 24, 48, 64};
        for (int i = 0; i < p2.count; i++)
            p2.configs[i] = (ramp_config){rows[i % 6], i < 6 ? 128 : 256, 4, 0, 0, 1, 0, 0, 0, 0};
        CHECK_OK(ramp_plan_write(&p2, path));
        size_t n2 = 0;
        char *v2 = slurp(path, &n2);
        CHECK(v2 && strstr(v2, "\"kernel\":\t\"v2\"") != NULL);
        ramp_plan b2;
        memset(&b2, 0, sizeof b2);
        CHECK_OK(ramp_plan_read(path, &b2));
        CHECK_EQ_INT(b2.kernel, RAMP_KERNEL_V2);
        p2.checksum = 1;
        CHECK(memcmp(&p2, &b2, sizeof p2) == 0);
        p2.checksum = 0;
        if (v2) {
            char *v3 = replace(v2, "\"kernel\":\t\"v2\"", "\"kernel\":\t\"v3\"");
            if (v3) expect_bad(v3, "kernel");
            free(v3);
            v3 = replace(v2, "\"kernel\":\t\"v2\"", "\"kernel\":\t2");
            if (v3) expect_bad(v3, "kernel");
            free(v3);
            /* the key dropped: the checksum (which covers it) no longer matches */
            v3 = replace(v2, "\"kernel\":\t\"v2\",", "");
            if (v3) expect_bad(v3, "checksum mismatch");
            free(v3);
        }
        free(v2);
        ramp_plan bad2 = p2;
        bad2.configs[0].persistent = 1;
        CHECK_ERR(ramp_plan_write(&bad2, path), RAMP_ERR_INVALID_ARGUMENT);
        CHECK(strstr(ramp_last_error(), "kernel v2") != NULL);
        bad2 = p2;
        bad2.kernel = 3;
        CHECK_ERR(ramp_plan_validate(&bad2), RAMP_ERR_INVALID_ARGUMENT);
        CHECK(strstr(ramp_last_error(), "kernel = 3") != NULL);
        /* ramp_plan_make takes the dataset's kernel */
        t->kernel = RAMP_KERNEL_V2;
        m->rows[menu.config[2]] = 1; /* fit again (it was cleared above) */
        ramp_plan p3;
        memset(&p3, 0, sizeof p3);
        int persist = 0;
        for (int i = 0; i < menu.count; i++) persist |= t->configs[menu.config[i]].persistent;
        if (persist) { /* the synthetic menu's persistent entries: not v2's */
            CHECK_ERR(ramp_plan_make(t, &menu, m, &p3), RAMP_ERR_INVALID_ARGUMENT);
            CHECK(strstr(ramp_last_error(), "kernel v2") != NULL);
        }
        ramp_menu plain = menu; /* the synthetic space's plain ones: 0, 2, ... */
        plain.count = 0;
        for (int c = 0; c < t->nconfigs && plain.count < 6; c++)
            if (!t->configs[c].persistent && t->blocks_per_sm[c] == menu.blocks_per_sm)
                plain.config[plain.count++] = c;
        CHECK_OK(ramp_plan_make(t, &plain, m, &p3));
        CHECK_EQ_INT(p3.kernel, RAMP_KERNEL_V2);
        CHECK_EQ_INT(p3.weight_units, 0);
        /* ... and its weight layout */
        t->weight_units = 1;
        CHECK_OK(ramp_plan_make(t, &plain, m, &p3));
        CHECK_EQ_INT(p3.weight_units, 1);
        t->weight_units = 0;
        t->kernel = RAMP_KERNEL_V1;
        remove(path);
    }
    /* The weight layout: a row-major plan has no "weights" key (its checksum
     * unchanged); a stage-units plan says "units", reads back exactly, and
     * the checksum covers it; "rows" said explicitly does not match the
     * checksum of a units plan; an unknown value, or units with kernel v1,
     * is refused. */
    {
        ramp_plan pu = plan;
        pu.kernel = RAMP_KERNEL_V2;
        static const int rows[6] = {2, 8, 16, 24, 48, 64};
        for (int i = 0; i < pu.count; i++)
            pu.configs[i] = (ramp_config){rows[i % 6], i < 6 ? 128 : 256, 4, 0, 0, 1, 0, 0, 0, 0};
        CHECK_OK(ramp_plan_write(&pu, path));
        size_t n0 = 0;
        char *r0 = slurp(path, &n0);
        CHECK(r0 && strstr(r0, "\"weights\"") == NULL);
        free(r0);
        pu.weight_units = 1;
        CHECK_OK(ramp_plan_write(&pu, path));
        size_t nu = 0;
        char *u = slurp(path, &nu);
        CHECK(u && strstr(u, "\"weights\":\t\"units\"") != NULL);
        ramp_plan bu;
        memset(&bu, 0, sizeof bu);
        CHECK_OK(ramp_plan_read(path, &bu));
        CHECK_EQ_INT(bu.weight_units, 1);
        pu.checksum = 1;
        CHECK(memcmp(&pu, &bu, sizeof pu) == 0);
        pu.checksum = 0;
        if (u) {
            char *v = replace(u, "\"weights\":\t\"units\"", "\"weights\":\t\"tiles\"");
            if (v) expect_bad(v, "weights");
            free(v);
            v = replace(u, "\"weights\":\t\"units\"", "\"weights\":\t1");
            if (v) expect_bad(v, "weights");
            free(v);
            v = replace(u, "\"weights\":\t\"units\"", "\"weights\":\t\"rows\"");
            if (v) expect_bad(v, "checksum mismatch");
            free(v);
            v = replace(u, "\"weights\":\t\"units\",", "");
            if (v) expect_bad(v, "checksum mismatch");
            free(v);
        }
        free(u);
        ramp_plan badu = pu;
        badu.kernel = RAMP_KERNEL_V1;
        CHECK_ERR(ramp_plan_validate(&badu), RAMP_ERR_INVALID_ARGUMENT);
        CHECK(strstr(ramp_last_error(), "weight_units = 1") != NULL);
        badu = pu;
        badu.weight_units = 2;
        CHECK_ERR(ramp_plan_validate(&badu), RAMP_ERR_INVALID_ARGUMENT);
        remove(path);
    }
    pairs_plans(t, &menu, path);
    ramp_costmodel_free(m);
    ramp_timing_free(t);
    return check_finish("test_plan");
}
