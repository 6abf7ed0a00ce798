/*
 * test_safetensors.c - the safetensors reader/writer: random round trips
 * checked element by element (through libramp and through an independent
 * decoding of the raw bytes), and every corruption we can think of refused
 * with RAMP_ERR_FORMAT and a message naming the file and tensor.
 */
#include "check.h"
#include "internal.h"
#include "safetensors.h"
#include "st_util.h"

#include <unistd.h>

static ramp_rng rng;

static const ramp_st_dtype DTYPES[] = {RAMP_ST_U8, RAMP_ST_I32, RAMP_ST_I64,
                                       RAMP_ST_F32, RAMP_ST_F64};

/* Independent decoding of a little-endian header length. */
static uint64_t le64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v * 256 + p[i];
    return v;
}

static void fill_random(void *buf, size_t n) {
    uint8_t *p = buf;
    for (size_t i = 0; i < n; i++) p[i] = (uint8_t)ramp_rng_next(&rng);
}

static void test_round_trip(void) {
    enum { NT = 7 };
    char path[512];
    snprintf(path, sizeof path, "%s/st_roundtrip.safetensors", check_tmpdir());
    for (int iter = 0; iter < 20; iter++) {
        ramp_st_writer *w;
        CHECK_OK(ramp_st_writer_create(&w));
        void *data[NT];
        size_t nbytes[NT];
        ramp_st_dtype dt[NT];
        int nd[NT];
        int64_t shape[NT][RAMP_ST_MAX_DIMS];
        char names[NT][32];
        for (int i = 0; i < NT; i++) {
            dt[i] = DTYPES[ramp_rng_below(&rng, 5)];
            nd[i] = (int)ramp_rng_below(&rng, 4); /* 0: scalar */
            size_t numel = 1;
            for (int d = 0; d < nd[i]; d++) {
                /* Sometimes an empty dimension. */
                shape[i][d] = ramp_rng_below(&rng, 8) == 0
                                  ? 0
                                  : 1 + (int64_t)ramp_rng_below(&rng, 9);
                numel *= (size_t)shape[i][d];
            }
            nbytes[i] = numel * ramp_st_dtype_size(dt[i]);
            data[i] = malloc(nbytes[i] ? nbytes[i] : 1);
            fill_random(data[i], nbytes[i]);
            snprintf(names[i], sizeof names[i], "t%d_%u", i,
                     (unsigned)ramp_rng_below(&rng, 1000));
            CHECK_OK(ramp_st_writer_add(w, names[i], dt[i], nd[i], shape[i],
                                        data[i]));
        }
        char mval[3][40];
        for (int m = 0; m < 3; m++) {
            char key[16];
            snprintf(key, sizeof key, "key%d", m);
            /* Values with characters JSON must escape. */
            snprintf(mval[m], sizeof mval[m], "v\"%u\\\n\t%c",
                     (unsigned)ramp_rng_next(&rng), 'a' + m);
            CHECK_OK(ramp_st_writer_meta(w, key, mval[m]));
        }
        CHECK_OK(ramp_st_writer_write(w, path));
        void *mem = NULL;
        size_t memsize = 0;
        CHECK_OK(ramp_st_writer_to_memory(w, &mem, &memsize));
        ramp_st_writer_free(w);

        size_t fsize;
        uint8_t *raw = st_slurp(path, &fsize);
        CHECK(raw != NULL);
        if (!raw) return;
        /* The file and the in-memory image are the same bytes. */
        CHECK_EQ_INT(fsize, memsize);
        CHECK(fsize == memsize && memcmp(raw, mem, fsize) == 0);
        uint64_t n = le64(raw);
        CHECK_EQ_INT((8 + n) % 8, 0); /* data section aligned */
        CHECK(raw[8] == '{');

        ramp_st_file *f = NULL;
        CHECK_OK(ramp_st_open(path, &f));
        if (!f) return;
        CHECK_EQ_INT(ramp_st_count(f), NT);
        CHECK_EQ_INT(ramp_st_meta_count(f), 3);
        for (int m = 0; m < 3; m++) {
            char key[16];
            snprintf(key, sizeof key, "key%d", m);
            const char *v = ramp_st_meta(f, key);
            CHECK(v && strcmp(v, mval[m]) == 0);
        }
        size_t expect_offset = 0;
        for (int i = 0; i < NT; i++) {
            const ramp_st_tensor *t = ramp_st_find(f, names[i]);
            CHECK(t != NULL);
            if (!t) continue;
            CHECK_EQ_INT(t->dtype, dt[i]);
            CHECK_EQ_INT(t->ndim, nd[i]);
            for (int d = 0; d < nd[i]; d++) CHECK_EQ_INT(t->shape[d], shape[i][d]);
            CHECK_EQ_INT(t->end - t->begin, nbytes[i]);
            /* Laid out in the order added, contiguous. */
            CHECK_EQ_INT(t->begin, expect_offset);
            expect_offset += nbytes[i];
            uint8_t *back = malloc(nbytes[i] + 1);
            ramp_st_copy(t, back);
            int bad = 0;
            for (size_t b = 0; b < nbytes[i]; b++) {
                bad += back[b] != ((uint8_t *)data[i])[b];
                /* Independently: the bytes at 8 + n + begin in the file. */
                bad += raw[8 + n + t->begin + b] != ((uint8_t *)data[i])[b];
            }
            CHECK_EQ_INT(bad, 0);
            /* Typed check of the first element. */
            if (nbytes[i] >= 8 && dt[i] == RAMP_ST_F64) {
                double a, b2;
                memcpy(&a, back, 8);
                memcpy(&b2, data[i], 8);
                CHECK(memcmp(&a, &b2, 8) == 0);
            }
            free(back);
        }
        CHECK_EQ_INT(8 + n + expect_offset, fsize);
        ramp_st_close(f);

        /* The same from memory. */
        CHECK_OK(ramp_st_parse(mem, memsize, "mem", &f));
        if (f) {
            CHECK_EQ_INT(ramp_st_count(f), NT);
            ramp_st_close(f);
        }
        free(mem);
        free(raw);
        for (int i = 0; i < NT; i++) free(data[i]);
    }
    remove(path);
}

/* Builds a file from a header text and `dlen` data bytes. */
static uint8_t *make_file(const char *header, size_t dlen, size_t *size) {
    size_t h = strlen(header);
    *size = 8 + h + dlen;
    uint8_t *b = calloc(*size, 1);
    for (int i = 0; i < 8; i++) b[i] = (uint8_t)((uint64_t)h >> (8 * i));
    memcpy(b + 8, header, h);
    for (size_t i = 0; i < dlen; i++) b[8 + h + i] = (uint8_t)i;
    return b;
}

/* Expects FORMAT and a message containing each non-NULL needle. */
static void expect_bad(const char *header, size_t dlen, const char *needle1,
                       const char *needle2, int line) {
    size_t size;
    uint8_t *b = make_file(header, dlen, &size);
    ramp_st_file *f = NULL;
    ramp_status s = ramp_st_parse(b, size, "bad.st", &f);
    const char *msg = ramp_last_error();
    if (s != RAMP_ERR_FORMAT || !strstr(msg, "bad.st") ||
        (needle1 && !strstr(msg, needle1)) ||
        (needle2 && !strstr(msg, needle2))) {
        fprintf(stderr, "line %d: header %s: got %s '%s', wanted FORMAT with "
                "'%s' '%s'\n", line, header, ramp_status_name(s), msg,
                needle1 ? needle1 : "", needle2 ? needle2 : "");
        check_failures++;
    }
    ramp_st_close(f);
    free(b);
}
#define BAD(h, dlen, n1, n2) expect_bad(h, dlen, n1, n2, __LINE__)

static void expect_good(const char *header, size_t dlen, int ntensors,
                        int line) {
    size_t size;
    uint8_t *b = make_file(header, dlen, &size);
    ramp_st_file *f = NULL;
    ramp_status s = ramp_st_parse(b, size, "good.st", &f);
    if (s != RAMP_OK || ramp_st_count(f) != ntensors) {
        fprintf(stderr, "line %d: header %s: got %s '%s'\n", line, header,
                ramp_status_name(s), ramp_last_error());
        check_failures++;
    }
    ramp_st_close(f);
    free(b);
}
#define GOOD(h, dlen, n) expect_good(h, dlen, n, __LINE__)

static void test_handmade(void) {
    /* Sanity: the builder makes valid files. */
    GOOD("{}", 0, 0);
    GOOD("{\"a\":{\"dtype\":\"I32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, 1);
    GOOD("{\"__metadata__\":{\"x\":\"y\"},\"a\":{\"dtype\":\"U8\",\"shape\":[],"
         "\"data_offsets\":[0,1]},\"b\":{\"dtype\":\"F64\",\"shape\":[0,3],"
         "\"data_offsets\":[1,1]}}   ", 1, 2);
    /* Reverse order in the header is fine as long as the data tile. */
    GOOD("{\"b\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[4,7]},"
         "\"a\":{\"dtype\":\"I32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 7, 2);

    const char *A = "\"a\":{\"dtype\":\"I32\",\"shape\":[2],\"data_offsets\":[0,8]}";
    char h[512];
    /* Unknown / wrong-typed dtype. */
    BAD("{\"a\":{\"dtype\":\"I33\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8,
        "'a'", "dtype");
    BAD("{\"a\":{\"dtype\":4,\"shape\":[2],\"data_offsets\":[0,8]}}", 8, "'a'",
        "dtype");
    /* Shape product x dtype size != byte length. */
    BAD("{\"a\":{\"dtype\":\"I64\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8,
        "'a'", "16 bytes");
    BAD("{\"a\":{\"dtype\":\"I32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8,
        "'a'", "span 8");
    /* Bad shapes. */
    BAD("{\"a\":{\"dtype\":\"I32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", 8,
        "'a'", "shape[0]");
    BAD("{\"a\":{\"dtype\":\"I32\",\"shape\":[2.5],\"data_offsets\":[0,8]}}", 8,
        "'a'", "shape[0]");
    BAD("{\"a\":{\"dtype\":\"I32\",\"shape\":[\"2\"],\"data_offsets\":[0,8]}}", 8,
        "'a'", "shape[0]");
    BAD("{\"a\":{\"dtype\":\"I32\",\"shape\":2,\"data_offsets\":[0,8]}}", 8,
        "'a'", "'shape'");
    BAD("{\"a\":{\"dtype\":\"U8\",\"shape\":[1,1,1,1,1,1,1,1,1],"
        "\"data_offsets\":[0,1]}}", 1, "'a'", "dimensions");
    BAD("{\"a\":{\"dtype\":\"U8\",\"shape\":[4294967296,4294967296],"
        "\"data_offsets\":[0,1]}}", 1, "'a'", "overflow");
    BAD("{\"a\":{\"dtype\":\"U8\",\"shape\":[1e300],\"data_offsets\":[0,1]}}", 1,
        "'a'", "shape[0]");
    /* Offsets. */
    BAD("{\"a\":{\"dtype\":\"I32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 7,
        "'a'", "past the data section");
    BAD("{\"a\":{\"dtype\":\"I32\",\"shape\":[0],\"data_offsets\":[8,0]}}", 8,
        "'a'", "end before");
    BAD("{\"a\":{\"dtype\":\"I32\",\"shape\":[2],\"data_offsets\":[0,8,9]}}", 9,
        "'a'", "data_offsets");
    BAD("{\"a\":{\"dtype\":\"I32\",\"shape\":[2],\"data_offsets\":[0]}}", 8,
        "'a'", "data_offsets");
    BAD("{\"a\":{\"dtype\":\"I32\",\"shape\":[2],\"data_offsets\":[-1,7]}}", 8,
        "'a'", "data_offsets");
    BAD("{\"a\":{\"dtype\":\"I32\",\"shape\":[2],\"data_offsets\":{}}}", 8,
        "'a'", "data_offsets");
    /* Overlap, gap, trailing bytes, leading gap. */
    snprintf(h, sizeof h, "{%s,\"b\":{\"dtype\":\"I32\",\"shape\":[2],"
             "\"data_offsets\":[4,12]}}", A);
    BAD(h, 12, "overlap", "'a'");
    snprintf(h, sizeof h, "{%s,\"b\":{\"dtype\":\"I32\",\"shape\":[2],"
             "\"data_offsets\":[0,8]}}", A);
    BAD(h, 8, "overlap", "'b'");
    snprintf(h, sizeof h, "{%s,\"b\":{\"dtype\":\"I32\",\"shape\":[1],"
             "\"data_offsets\":[12,16]}}", A);
    BAD(h, 16, "[8, 12)", "gap before tensor 'b'");
    snprintf(h, sizeof h, "{%s}", A);
    BAD(h, 9, "trailing", "offset");
    BAD("{\"a\":{\"dtype\":\"I32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8,
        "[0, 4)", "'a'");
    /* Duplicates. */
    snprintf(h, sizeof h, "{%s,%s}", A, A);
    BAD(h, 8, "'a'", "twice");
    BAD("{\"__metadata__\":{},\"__metadata__\":{}}", 0, "__metadata__",
        "twice");
    BAD("{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}", 0, "'k'", "twice");
    BAD("{\"a\":{\"dtype\":\"U8\",\"dtype\":\"U8\",\"shape\":[1],"
        "\"data_offsets\":[0,1]}}", 1, "'a'", "twice");
    /* Metadata must map strings to strings. */
    BAD("{\"__metadata__\":{\"k\":1}}", 0, "'k'", "a number");
    BAD("{\"__metadata__\":{\"k\":null}}", 0, "'k'", "null");
    BAD("{\"__metadata__\":{\"k\":[\"x\"]}}", 0, "'k'", "an array");
    BAD("{\"__metadata__\":[]}", 0, "__metadata__", "an array");
    /* Structure. */
    BAD("{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],"
        "\"extra\":1}}", 1, "'a'", "'extra'");
    BAD("{\"a\":{\"shape\":[1],\"data_offsets\":[0,1]}}", 1, "'a'", "'dtype'");
    BAD("{\"a\":{\"dtype\":\"U8\",\"data_offsets\":[0,1]}}", 1, "'a'", "'shape'");
    BAD("{\"a\":{\"dtype\":\"U8\",\"shape\":[1]}}", 1, "'a'", "'data_offsets'");
    BAD("{\"a\":[1]}", 0, "'a'", "an array");
    BAD("{\"\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1,
        "empty name", NULL);
    BAD("[1,2]", 0, "an array", NULL);
    BAD("\"str\"", 0, "a string", NULL);
    BAD("{\"a\":", 0, "not valid JSON", NULL);
    BAD("{}x", 0, "not valid JSON", NULL);
    BAD("{} {}", 0, "not valid JSON", NULL);
    BAD("x", 0, "too small", NULL);
}

static void test_header_length(void) {
    size_t size;
    uint8_t *b = make_file("{}", 4, &size);
    ramp_st_file *f = NULL;
    /* Too big for the file, by one and by a lot, and over the limit. */
    uint64_t lens[] = {size - 8 + 1 - 4, size, UINT64_C(1) << 40,
                       UINT64_MAX, 1, 0, RAMP_ST_MAX_HEADER + 1};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        uint8_t *c = malloc(size);
        memcpy(c, b, size);
        for (int j = 0; j < 8; j++) c[j] = (uint8_t)(lens[i] >> (8 * j));
        ramp_status s = ramp_st_parse(c, size, "len.st", &f);
        CHECK_EQ_INT(s, RAMP_ERR_FORMAT);
        CHECK(strstr(ramp_last_error(), "len.st") != NULL);
        /* Where the length is too short, the JSON is cut or data trail. */
        free(c);
    }
    /* Bytes shorter than the length field. */
    for (size_t n = 0; n < 8; n++) {
        CHECK_ERR(ramp_st_parse(b, n, "short.st", &f), RAMP_ERR_FORMAT);
        CHECK(strstr(ramp_last_error(), "8-byte") != NULL);
    }
    /* A NUL inside the header. */
    uint8_t *c = make_file("{}  ", 0, &size);
    c[10] = 0;
    CHECK_ERR(ramp_st_parse(c, size, "nul.st", &f), RAMP_ERR_FORMAT);
    CHECK(strstr(ramp_last_error(), "NUL") && strstr(ramp_last_error(), "10"));
    free(c);
    free(b);
}

/* A valid file cut at every length must be refused, never crash. */
static void test_truncation(void) {
    ramp_st_writer *w;
    CHECK_OK(ramp_st_writer_create(&w));
    int32_t a[5] = {1, 2, 3, 4, 5};
    double d[3] = {0.5, -1, 2};
    int64_t s5 = 5, s3 = 3;
    CHECK_OK(ramp_st_writer_meta(w, "format", "x"));
    CHECK_OK(ramp_st_writer_add(w, "a", RAMP_ST_I32, 1, &s5, a));
    CHECK_OK(ramp_st_writer_add(w, "d", RAMP_ST_F64, 1, &s3, d));
    void *mem;
    size_t size;
    CHECK_OK(ramp_st_writer_to_memory(w, &mem, &size));
    ramp_st_writer_free(w);
    int bad = 0;
    for (size_t n = 0; n < size; n++) {
        /* Copy into an exact-size buffer so ASan sees any over-read. */
        uint8_t *c = malloc(n ? n : 1);
        memcpy(c, mem, n);
        ramp_st_file *f = NULL;
        if (ramp_st_parse(c, n, "cut.st", &f) != RAMP_ERR_FORMAT) bad++;
        ramp_st_close(f);
        free(c);
    }
    CHECK_EQ_INT(bad, 0);
    /* One extra byte is refused too (trailing data). */
    uint8_t *c = malloc(size + 1);
    memcpy(c, mem, size);
    c[size] = 0;
    ramp_st_file *f = NULL;
    CHECK_ERR(ramp_st_parse(c, size + 1, "long.st", &f), RAMP_ERR_FORMAT);
    CHECK_OK(ramp_st_parse(c, size, "ok.st", &f));
    ramp_st_close(f);
    free(c);
    free(mem);
}

static void test_accessors(void) {
    ramp_st_writer *w;
    CHECK_OK(ramp_st_writer_create(&w));
    int32_t a[6] = {0};
    int64_t sh[2] = {2, 3};
    CHECK_OK(ramp_st_writer_add(w, "a", RAMP_ST_I32, 2, sh, a));
    CHECK_OK(ramp_st_writer_meta(w, "n", "42"));
    CHECK_OK(ramp_st_writer_meta(w, "neg", "-7"));
    CHECK_OK(ramp_st_writer_meta(w, "bad", "4x"));
    CHECK_OK(ramp_st_writer_meta(w, "huge", "99999999999999999999999"));
    CHECK_OK(ramp_st_writer_meta(w, "empty", ""));
    /* Writer refuses duplicates, reserved names, bad shapes. */
    CHECK_ERR(ramp_st_writer_add(w, "a", RAMP_ST_I32, 2, sh, a),
              RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_st_writer_add(w, "__metadata__", RAMP_ST_I32, 2, sh, a),
              RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_st_writer_add(w, "", RAMP_ST_I32, 2, sh, a),
              RAMP_ERR_INVALID_ARGUMENT);
    int64_t neg[1] = {-1};
    CHECK_ERR(ramp_st_writer_add(w, "z", RAMP_ST_I32, 1, neg, a),
              RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_st_writer_add(w, "z", RAMP_ST_I32, 2, sh, NULL),
              RAMP_ERR_INVALID_ARGUMENT);
    CHECK_ERR(ramp_st_writer_meta(w, "n", "1"), RAMP_ERR_INVALID_ARGUMENT);
    void *mem;
    size_t size;
    CHECK_OK(ramp_st_writer_to_memory(w, &mem, &size));
    ramp_st_writer_free(w);
    ramp_st_file *f = NULL;
    CHECK_OK(ramp_st_parse(mem, size, "acc.st", &f));
    if (!f) return;
    const ramp_st_tensor *t;
    int64_t want[2] = {2, 3}, any[2] = {-1, 3}, wrong[2] = {2, 4};
    CHECK_OK(ramp_st_expect(f, "a", RAMP_ST_I32, 2, want, &t));
    CHECK_OK(ramp_st_expect(f, "a", RAMP_ST_I32, 2, any, &t));
    CHECK_ERR(ramp_st_expect(f, "a", RAMP_ST_I32, 2, wrong, &t), RAMP_ERR_FORMAT);
    CHECK(strstr(ramp_last_error(), "shape[1] = 3"));
    CHECK_ERR(ramp_st_expect(f, "a", RAMP_ST_F32, 2, want, &t), RAMP_ERR_FORMAT);
    CHECK(strstr(ramp_last_error(), "dtype I32, expected F32"));
    CHECK_ERR(ramp_st_expect(f, "a", RAMP_ST_I32, 1, want, &t), RAMP_ERR_FORMAT);
    CHECK_ERR(ramp_st_expect(f, "b", RAMP_ST_I32, 1, want, &t), RAMP_ERR_FORMAT);
    CHECK(strstr(ramp_last_error(), "'b' is missing") &&
          strstr(ramp_last_error(), "acc.st"));
    const char *known[] = {"x"};
    CHECK_ERR(ramp_st_only(f, known, 1), RAMP_ERR_FORMAT);
    CHECK(strstr(ramp_last_error(), "unexpected tensor 'a'"));
    int64_t v = 0;
    CHECK_OK(ramp_st_meta_int(f, "n", 0, 100, &v));
    CHECK_EQ_INT(v, 42);
    CHECK_OK(ramp_st_meta_int(f, "neg", -10, 0, &v));
    CHECK_EQ_INT(v, -7);
    CHECK_ERR(ramp_st_meta_int(f, "n", 0, 41, &v), RAMP_ERR_FORMAT);
    CHECK_ERR(ramp_st_meta_int(f, "bad", 0, 100, &v), RAMP_ERR_FORMAT);
    CHECK_ERR(ramp_st_meta_int(f, "huge", 0, INT64_MAX, &v), RAMP_ERR_FORMAT);
    CHECK_ERR(ramp_st_meta_int(f, "empty", 0, 100, &v), RAMP_ERR_FORMAT);
    CHECK_ERR(ramp_st_meta_int(f, "absent", 0, 100, &v), RAMP_ERR_FORMAT);
    char buf[3];
    CHECK_OK(ramp_st_meta_string(f, "n", 1, buf, sizeof buf));
    CHECK(strcmp(buf, "42") == 0);
    CHECK_ERR(ramp_st_meta_string(f, "neg", 1, buf, 2), RAMP_ERR_FORMAT);
    CHECK_ERR(ramp_st_meta_string(f, "absent", 1, buf, sizeof buf),
              RAMP_ERR_FORMAT);
    CHECK_OK(ramp_st_meta_string(f, "absent", 0, buf, sizeof buf));
    CHECK(buf[0] == '\0');
    ramp_st_close(f);
    free(mem);
}

static void test_write_failures(void) {
    const char *dir = check_tmpdir();
    char path[512];
    ramp_st_writer *w;
    CHECK_OK(ramp_st_writer_create(&w));
    int32_t a[2] = {7, 8};
    int64_t s2 = 2;
    CHECK_OK(ramp_st_writer_add(w, "a", RAMP_ST_I32, 1, &s2, a));
    /* Into a directory that does not exist. */
    snprintf(path, sizeof path, "%s/no-such-dir-%ld/x.safetensors", dir,
             (long)getpid());
    CHECK_ERR(ramp_st_writer_write(w, path), RAMP_ERR_IO);
    CHECK(strstr(ramp_last_error(), "x.safetensors") != NULL);
    CHECK(!st_exists(path));
    /* Onto a path that is a directory: the temporary file is written, the
     * rename fails, and the temporary file must be gone. */
    snprintf(path, sizeof path, "%s/st-isdir-%ld", dir, (long)getpid());
    mkdir(path, 0700);
    CHECK_ERR(ramp_st_writer_write(w, path), RAMP_ERR_IO);
    char prefix[128];
    snprintf(prefix, sizeof prefix, "st-isdir-%ld.tmp", (long)getpid());
    CHECK_EQ_INT(st_count_prefix(dir, prefix), 0);
    rmdir(path);
    /* Overwriting an existing file replaces it whole. */
    snprintf(path, sizeof path, "%s/st-over-%ld.safetensors", dir,
             (long)getpid());
    const char *junk = "garbage that is longer than the new file will be, "
                       "garbage garbage garbage garbage garbage garbage";
    CHECK(st_spit(path, junk, strlen(junk)));
    CHECK_OK(ramp_st_writer_write(w, path));
    ramp_st_file *f = NULL;
    CHECK_OK(ramp_st_open(path, &f));
    if (f) {
        const ramp_st_tensor *t = ramp_st_find(f, "a");
        int32_t back[2] = {0, 0};
        CHECK(t != NULL);
        if (t) ramp_st_copy(t, back);
        CHECK(back[0] == 7 && back[1] == 8);
        ramp_st_close(f);
    }
    remove(path);
    ramp_st_writer_free(w);
    /* Opening: missing file and a directory are IO errors, an empty file
     * is a FORMAT error. */
    CHECK_ERR(ramp_st_open(path, &f), RAMP_ERR_IO);
    CHECK_ERR(ramp_st_open(dir, &f), RAMP_ERR_IO);
    CHECK(st_spit(path, "", 0));
    CHECK_ERR(ramp_st_open(path, &f), RAMP_ERR_FORMAT);
    remove(path);
}

/* SHA-256 against FIPS 180-4's examples, and incremental updates in random
 * pieces against the one-shot digest. */
static void test_sha256(void) {
    char hex[65];
    ramp_sha256_hex("", 0, hex);
    CHECK(strcmp(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855") == 0);
    ramp_sha256_hex("abc", 3, hex);
    CHECK(strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") == 0);
    const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    ramp_sha256_hex(m448, strlen(m448), hex);
    CHECK(strcmp(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1") == 0);
    char *million = malloc(1000000);
    if (million) {
        memset(million, 'a', 1000000);
        ramp_sha256_hex(million, 1000000, hex);
        CHECK(strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") == 0);
        free(million);
    }
    for (int iter = 0; iter < 50; iter++) {
        size_t n = ramp_rng_below(&rng, 700);
        uint8_t buf[700], d[32];
        fill_random(buf, n);
        char one[65], inc[65];
        ramp_sha256_hex(buf, n, one);
        ramp_sha256_ctx c;
        ramp_sha256_init(&c);
        for (size_t at = 0; at < n;) {
            size_t k = 1 + ramp_rng_below(&rng, 130);
            if (k > n - at) k = n - at;
            ramp_sha256_update(&c, buf + at, k);
            at += k;
        }
        ramp_sha256_final(&c, d);
        ramp_sha256_digest_hex(d, inc);
        CHECK(strcmp(one, inc) == 0);
    }
}

/* A checksummed file: written with the digest of its bytes (recomputed
 * here the documented way: the 64 digits zeroed), verified on reading, and
 * any single changed byte refused, except in the key's own name (the st
 * layer then sees no checksum; the timing reader refuses unknown keys). */
static void test_checksum(void) {
    ramp_st_writer *w = NULL;
    CHECK_OK(ramp_st_writer_create(&w));
    if (!w) return;
    int32_t a[37];
    float b[11];
    fill_random(a, sizeof a);
    fill_random(b, sizeof b);
    int64_t sa = 37, sb[2] = {1, 11};
    CHECK_OK(ramp_st_writer_meta(w, "format", "test"));
    CHECK_OK(ramp_st_writer_checksum(w));
    CHECK_ERR(ramp_st_writer_meta(w, RAMP_ST_CHECKSUM_KEY, "x"), RAMP_ERR_INVALID_ARGUMENT);
    CHECK_OK(ramp_st_writer_meta(w, "after", "yes"));
    CHECK_OK(ramp_st_writer_add(w, "a", RAMP_ST_I32, 1, &sa, a));
    CHECK_OK(ramp_st_writer_add(w, "b", RAMP_ST_F32, 2, sb, b));
    void *bytes = NULL;
    size_t size = 0;
    CHECK_OK(ramp_st_writer_to_memory(w, &bytes, &size));
    /* The same bytes through the file writer. */
    char path[512];
    snprintf(path, sizeof path, "%s/st_checksum.safetensors", check_tmpdir());
    CHECK_OK(ramp_st_writer_write(w, path));
    ramp_st_writer_free(w);
    if (!bytes) return;
    size_t fsize = 0;
    void *fbytes = st_slurp(path, &fsize);
    CHECK(fbytes && fsize == size && memcmp(fbytes, bytes, size) == 0);
    free(fbytes);
    ramp_st_file *f = NULL;
    CHECK_OK(ramp_st_open(path, &f));
    CHECK(ramp_st_checksum_verified(f) == 1);
    const char *digest = f ? ramp_st_meta(f, RAMP_ST_CHECKSUM_KEY) : NULL;
    CHECK(digest && strlen(digest) == 64);
    char want[65] = "";
    if (digest) {
        /* Independently: zero the digits in a copy, hash the whole file. */
        char *copy = malloc(size);
        memcpy(copy, bytes, size);
        char *at = NULL;
        for (size_t i = 8; i + 64 <= size && !at; i++)
            if (memcmp(copy + i, digest, 64) == 0) at = copy + i;
        CHECK(at != NULL);
        if (at) memset(at, '0', 64);
        ramp_sha256_hex(copy, size, want);
        CHECK(strcmp(want, digest) == 0);
        free(copy);
    }
    ramp_st_close(f);
    remove(path);

    /* Every single-byte change is refused (RAMP_ERR_FORMAT), except inside
     * the key name "sha256" itself. */
    const char *key = NULL;
    for (size_t i = 8; i + 8 <= size && !key; i++)
        if (memcmp((char *)bytes + i, "\"sha256\"", 8) == 0) key = (char *)bytes + i + 1;
    CHECK(key != NULL);
    int missed = 0, tried = 0;
    uint8_t *c = malloc(size);
    for (size_t i = 0; c && i < size; i++) {
        if (key && (const char *)bytes + i >= key && (const char *)bytes + i < key + 6) continue;
        memcpy(c, bytes, size);
        c[i] ^= (uint8_t)(1 + ramp_rng_below(&rng, 255));
        f = NULL;
        ramp_status s = ramp_st_parse(c, size, "flipped", &f);
        tried++;
        if (s != RAMP_ERR_FORMAT) {
            missed++;
            fprintf(stderr, "byte %zu changed: %s\n", i, ramp_status_name(s));
        }
        ramp_st_close(f);
    }
    CHECK(tried > 100);
    CHECK_EQ_INT(missed, 0);
    /* A data byte: the message names the file and says checksum. */
    memcpy(c, bytes, size);
    c[size - 3] ^= 0x10;
    f = NULL;
    CHECK_ERR(ramp_st_parse(c, size, "flipped.safetensors", &f), RAMP_ERR_FORMAT);
    CHECK(strstr(ramp_last_error(), "flipped.safetensors") && strstr(ramp_last_error(), "checksum"));
    /* st_reseal (the tests' helper) makes an edited file valid again. */
    CHECK(st_reseal(c, size) == 1);
    f = NULL;
    CHECK_OK(ramp_st_parse(c, size, "resealed", &f));
    CHECK(f && ramp_st_checksum_verified(f) == 1);
    ramp_st_close(f);
    free(c);
    free(bytes);

    /* A file without the key reads, unverified. */
    CHECK_OK(ramp_st_writer_create(&w));
    CHECK_OK(ramp_st_writer_add(w, "a", RAMP_ST_I32, 1, &sa, a));
    CHECK_OK(ramp_st_writer_to_memory(w, &bytes, &size));
    ramp_st_writer_free(w);
    f = NULL;
    CHECK_OK(ramp_st_parse(bytes, size, "plain", &f));
    CHECK(f && ramp_st_checksum_verified(f) == 0);
    ramp_st_close(f);
    free(bytes);
}

int main(void) {
    ramp_rng_seed(&rng, check_seed());
    test_sha256();
    test_checksum();
    test_round_trip();
    test_handmade();
    test_header_length();
    test_truncation();
    test_accessors();
    test_write_failures();
    return check_finish("test_safetensors");
}
