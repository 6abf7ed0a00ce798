/*
 * safetensors.c - strict reader and atomic writer of the safetensors layout
 * (see safetensors.h for the checks and docs/formats.md for the format).
 *
 * The reader maps the file, parses the JSON header with cJSON and keeps the
 * parsed tree alive so tensor names and metadata can point into it. Tensor
 * data are left in place; callers copy them out with ramp_st_copy (the data
 * section is not aligned, so no pointer casts).
 */
#include "safetensors.h"

#include "internal.h"

#include <cjson/cJSON.h>  /* header parsing and printing */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>     /* mmap: traces can be large, avoid a copy */
#include <sys/stat.h>
#include <unistd.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "libramp's file formats are little-endian; big-endian hosts are unsupported"
#endif

/* JSON numbers are doubles: integers above 2^53 are not exact. */
#define ST_MAX_JSON_INT 9007199254740992.0

static const struct {
    const char *name;
    size_t size;
} st_dtypes[RAMP_ST_DTYPE_COUNT] = {
    [RAMP_ST_BOOL] = {"BOOL", 1}, [RAMP_ST_U8] = {"U8", 1},
    [RAMP_ST_I8] = {"I8", 1},     [RAMP_ST_U16] = {"U16", 2},
    [RAMP_ST_I16] = {"I16", 2},   [RAMP_ST_F16] = {"F16", 2},
    [RAMP_ST_BF16] = {"BF16", 2}, [RAMP_ST_U32] = {"U32", 4},
    [RAMP_ST_I32] = {"I32", 4},   [RAMP_ST_F32] = {"F32", 4},
    [RAMP_ST_U64] = {"U64", 8},   [RAMP_ST_I64] = {"I64", 8},
    [RAMP_ST_F64] = {"F64", 8},
};

const char *ramp_st_dtype_name(ramp_st_dtype d) {
    return (unsigned)d < RAMP_ST_DTYPE_COUNT ? st_dtypes[d].name : "?";
}

size_t ramp_st_dtype_size(ramp_st_dtype d) {
    return (unsigned)d < RAMP_ST_DTYPE_COUNT ? st_dtypes[d].size : 0;
}

static int st_dtype_lookup(const char *s, ramp_st_dtype *out) {
    for (int i = 0; i < RAMP_ST_DTYPE_COUNT; i++)
        if (strcmp(s, st_dtypes[i].name) == 0) {
            *out = (ramp_st_dtype)i;
            return 1;
        }
    return 0;
}

struct ramp_st_file {
    char *label;
    const uint8_t *bytes;
    size_t size;
    void *map;          /* mmap'd file, or NULL for ramp_st_parse */
    size_t map_size;
    const uint8_t *data; /* data section */
    uint64_t data_size;
    cJSON *root;
    int ntensors;
    ramp_st_tensor *tensors;
    int nmeta;
    const char **meta_key;
    const char **meta_value;
    int checksum;       /* 1: the header's sha256 was verified */
};

void ramp_st_close(ramp_st_file *f) {
    if (!f) return;
    if (f->map) munmap(f->map, f->map_size);
    cJSON_Delete(f->root);
    free(f->tensors);
    free(f->meta_key);
    free(f->meta_value);
    free(f->label);
    free(f);
}

static char *st_strdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = ramp_calloc(n, 1);
    if (p) memcpy(p, s, n);
    return p;
}

/* Reads a JSON number that must be an exact integer in [0, 2^53]. */
static int st_json_uint(const cJSON *item, uint64_t *out) {
    if (!cJSON_IsNumber(item)) return 0;
    double v = item->valuedouble;
    if (!(v >= 0.0 && v <= ST_MAX_JSON_INT) || v != floor(v)) return 0;
    *out = (uint64_t)v;
    return 1;
}

static const char *st_json_kind(const cJSON *item) {
    if (cJSON_IsString(item)) return "a string";
    if (cJSON_IsNumber(item)) return "a number";
    if (cJSON_IsArray(item)) return "an array";
    if (cJSON_IsObject(item)) return "an object";
    if (cJSON_IsBool(item)) return "a boolean";
    if (cJSON_IsNull(item)) return "null";
    return "an unknown JSON value";
}

/* Parses one tensor entry of the header. */
static ramp_status st_parse_tensor(ramp_st_file *f, const cJSON *entry,
                                   ramp_st_tensor *t) {
    const char *L = f->label, *name = entry->string;
    RAMP_CHECK(name[0] != '\0', RAMP_ERR_FORMAT,
               "%s: header has a tensor with an empty name", L);
    RAMP_CHECK(cJSON_IsObject(entry), RAMP_ERR_FORMAT,
               "%s: tensor '%.64s': entry is %s, expected an object", L, name,
               st_json_kind(entry));
    const cJSON *dtype = NULL, *shape = NULL, *offs = NULL;
    for (const cJSON *c = entry->child; c; c = c->next) {
        const cJSON **slot = NULL;
        if (strcmp(c->string, "dtype") == 0) slot = &dtype;
        else if (strcmp(c->string, "shape") == 0) slot = &shape;
        else if (strcmp(c->string, "data_offsets") == 0) slot = &offs;
        RAMP_CHECK(slot, RAMP_ERR_FORMAT,
                   "%s: tensor '%.64s': unknown field '%.64s'", L, name,
                   c->string);
        RAMP_CHECK(!*slot, RAMP_ERR_FORMAT,
                   "%s: tensor '%.64s': field '%s' appears twice", L, name,
                   c->string);
        *slot = c;
    }
    RAMP_CHECK(dtype, RAMP_ERR_FORMAT, "%s: tensor '%.64s': no 'dtype' field",
               L, name);
    RAMP_CHECK(shape, RAMP_ERR_FORMAT, "%s: tensor '%.64s': no 'shape' field",
               L, name);
    RAMP_CHECK(offs, RAMP_ERR_FORMAT,
               "%s: tensor '%.64s': no 'data_offsets' field", L, name);

    t->name = name;
    RAMP_CHECK(cJSON_IsString(dtype), RAMP_ERR_FORMAT,
               "%s: tensor '%.64s': 'dtype' is %s, expected a string", L, name,
               st_json_kind(dtype));
    RAMP_CHECK(st_dtype_lookup(dtype->valuestring, &t->dtype), RAMP_ERR_FORMAT,
               "%s: tensor '%.64s': unknown dtype '%.32s'", L, name,
               dtype->valuestring);

    RAMP_CHECK(cJSON_IsArray(shape), RAMP_ERR_FORMAT,
               "%s: tensor '%.64s': 'shape' is %s, expected an array", L, name,
               st_json_kind(shape));
    int nd = cJSON_GetArraySize(shape);
    RAMP_CHECK(nd <= RAMP_ST_MAX_DIMS, RAMP_ERR_FORMAT,
               "%s: tensor '%.64s': 'shape' has %d dimensions, at most %d "
               "supported", L, name, nd, RAMP_ST_MAX_DIMS);
    t->ndim = nd;
    uint64_t numel = 1;
    int d = 0;
    for (const cJSON *c = shape->child; c; c = c->next, d++) {
        uint64_t v;
        RAMP_CHECK(st_json_uint(c, &v), RAMP_ERR_FORMAT,
                   "%s: tensor '%.64s': shape[%d] is not a non-negative "
                   "integer", L, name, d);
        /* Products stay below 2^62 so that byte counts cannot overflow. */
        RAMP_CHECK(v == 0 || numel <= (UINT64_C(1) << 62) / v, RAMP_ERR_FORMAT,
                   "%s: tensor '%.64s': shape product overflows at shape[%d]",
                   L, name, d);
        numel *= v;
        t->shape[d] = (int64_t)v;
    }
    t->numel = (int64_t)numel;

    RAMP_CHECK(cJSON_IsArray(offs) && cJSON_GetArraySize(offs) == 2,
               RAMP_ERR_FORMAT,
               "%s: tensor '%.64s': 'data_offsets' must be an array of two "
               "integers", L, name);
    RAMP_CHECK(st_json_uint(offs->child, &t->begin) &&
                   st_json_uint(offs->child->next, &t->end),
               RAMP_ERR_FORMAT,
               "%s: tensor '%.64s': 'data_offsets' must hold non-negative "
               "integers", L, name);
    RAMP_CHECK(t->begin <= t->end, RAMP_ERR_FORMAT,
               "%s: tensor '%.64s': data_offsets [%llu, %llu] end before "
               "they begin", L, name, (unsigned long long)t->begin,
               (unsigned long long)t->end);
    RAMP_CHECK(t->end <= f->data_size, RAMP_ERR_FORMAT,
               "%s: tensor '%.64s': data_offsets [%llu, %llu] run past the "
               "data section (%llu bytes, file offset %llu)", L, name,
               (unsigned long long)t->begin, (unsigned long long)t->end,
               (unsigned long long)f->data_size,
               (unsigned long long)(f->data - f->bytes));
    uint64_t nbytes = numel * st_dtypes[t->dtype].size;
    RAMP_CHECK(nbytes == t->end - t->begin, RAMP_ERR_FORMAT,
               "%s: tensor '%.64s': shape holds %llu elements of %s = %llu "
               "bytes but data_offsets [%llu, %llu] span %llu", L, name,
               (unsigned long long)numel, st_dtypes[t->dtype].name,
               (unsigned long long)nbytes, (unsigned long long)t->begin,
               (unsigned long long)t->end,
               (unsigned long long)(t->end - t->begin));
    t->data = f->data + t->begin;
    return RAMP_OK;
}

static int st_cmp_offsets(const void *a, const void *b) {
    const ramp_st_tensor *x = *(const ramp_st_tensor *const *)a;
    const ramp_st_tensor *y = *(const ramp_st_tensor *const *)b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return 0;
}

static int st_cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The tensors must tile the data section exactly: sorted by offset, each
 * begins where the previous ended, and the last ends at the file's end. */
static ramp_status st_check_layout(ramp_st_file *f) {
    const char *L = f->label;
    int n = f->ntensors;
    const ramp_st_tensor **order = ramp_calloc((size_t)n, sizeof *order);
    const char **names = ramp_calloc((size_t)n, sizeof *names);
    ramp_status s = RAMP_OK;
    if (!order || !names) {
        s = RAMP_ERR_OUT_OF_MEMORY;
        goto done;
    }
    for (int i = 0; i < n; i++) {
        order[i] = &f->tensors[i];
        names[i] = f->tensors[i].name;
    }
    qsort(names, (size_t)n, sizeof *names, st_cmp_str);
    for (int i = 1; i < n; i++)
        if (strcmp(names[i - 1], names[i]) == 0) {
            s = ramp_set_error(RAMP_ERR_FORMAT, __FILE__, __LINE__,
                               "%s: tensor '%.64s' appears twice in the header",
                               L, names[i]);
            goto done;
        }
    qsort(order, (size_t)n, sizeof *order, st_cmp_offsets);
    uint64_t expect = 0;
    const ramp_st_tensor *prev = NULL;
    for (int i = 0; i < n; i++) {
        const ramp_st_tensor *t = order[i];
        if (t->begin < expect && prev) { /* prev: expect > 0 needs one */
            s = ramp_set_error(RAMP_ERR_FORMAT, __FILE__, __LINE__,
                               "%s: tensor '%.64s' data_offsets [%llu, %llu] "
                               "overlap tensor '%.64s' [%llu, %llu]",
                               L, t->name, (unsigned long long)t->begin,
                               (unsigned long long)t->end, prev->name,
                               (unsigned long long)prev->begin,
                               (unsigned long long)prev->end);
            goto done;
        }
        if (t->begin > expect) {
            s = ramp_set_error(RAMP_ERR_FORMAT, __FILE__, __LINE__,
                               "%s: data bytes [%llu, %llu) belong to no "
                               "tensor (gap before tensor '%.64s')",
                               L, (unsigned long long)expect,
                               (unsigned long long)t->begin, t->name);
            goto done;
        }
        expect = t->end;
        prev = t;
    }
    if (expect != f->data_size)
        s = ramp_set_error(RAMP_ERR_FORMAT, __FILE__, __LINE__,
                           "%s: data section is %llu bytes but the tensors "
                           "cover %llu (trailing bytes from file offset %llu)",
                           L, (unsigned long long)f->data_size,
                           (unsigned long long)expect,
                           (unsigned long long)((uint64_t)(f->data - f->bytes) +
                                                expect));
done:
    free(order);
    free(names);
    return s;
}

static ramp_status st_parse_metadata(ramp_st_file *f, const cJSON *meta) {
    const char *L = f->label;
    RAMP_CHECK(cJSON_IsObject(meta), RAMP_ERR_FORMAT,
               "%s: __metadata__ is %s, expected an object of strings", L,
               st_json_kind(meta));
    int n = cJSON_GetArraySize(meta);
    f->meta_key = ramp_calloc((size_t)n, sizeof *f->meta_key);
    f->meta_value = ramp_calloc((size_t)n, sizeof *f->meta_value);
    if (!f->meta_key || !f->meta_value) return RAMP_ERR_OUT_OF_MEMORY;
    for (const cJSON *c = meta->child; c; c = c->next) {
        RAMP_CHECK(cJSON_IsString(c), RAMP_ERR_FORMAT,
                   "%s: __metadata__ key '%.64s' is %s, expected a string", L,
                   c->string, st_json_kind(c));
        f->meta_key[f->nmeta] = c->string;
        f->meta_value[f->nmeta] = c->valuestring;
        f->nmeta++;
    }
    const char **sorted = ramp_calloc((size_t)n, sizeof *sorted);
    if (!sorted) return RAMP_ERR_OUT_OF_MEMORY;
    memcpy(sorted, f->meta_key, (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, st_cmp_str);
    for (int i = 1; i < n; i++)
        if (strcmp(sorted[i - 1], sorted[i]) == 0) {
            ramp_status s = ramp_set_error(
                RAMP_ERR_FORMAT, __FILE__, __LINE__,
                "%s: __metadata__ key '%.64s' appears twice", L, sorted[i]);
            free(sorted);
            return s;
        }
    free(sorted);
    return RAMP_OK;
}

/* First occurrence of needle in hay (no memmem in C11). */
static const char *st_find(const char *hay, size_t n, const char *needle, size_t m) {
    for (size_t i = 0; m <= n && i <= n - m; i++)
        if (hay[i] == needle[0] && memcmp(hay + i, needle, m) == 0) return hay + i;
    return NULL;
}

/* The checksum (docs/formats.md): __metadata__ "sha256" holds the SHA-256,
 * in lowercase hex, of the whole file with those 64 digits replaced by '0'
 * (the first occurrence of the quoted digest in the header is the value).
 * It covers every byte, header and data; a file without the key is
 * accepted unchecked (files written before checksums existed). */
static ramp_status st_verify_checksum(ramp_st_file *f, size_t hlen) {
    const char *v = ramp_st_meta(f, RAMP_ST_CHECKSUM_KEY);
    if (!v) return RAMP_OK;
    const char *L = f->label;
    int ok = strlen(v) == 64;
    for (int i = 0; ok && i < 64; i++)
        ok = (v[i] >= '0' && v[i] <= '9') || (v[i] >= 'a' && v[i] <= 'f');
    RAMP_CHECK(ok, RAMP_ERR_FORMAT,
               "%s: __metadata__ '%s' = '%.80s' is not 64 lowercase hex digits: "
               "the file is corrupted", L, RAMP_ST_CHECKSUM_KEY, v);
    char quoted[67];
    quoted[0] = '"';
    memcpy(quoted + 1, v, 64);
    quoted[65] = '"';
    quoted[66] = '\0';
    const char *hdr = (const char *)f->bytes + 8;
    const char *at = st_find(hdr, hlen, quoted, 66);
    RAMP_CHECK(at, RAMP_ERR_FORMAT,
               "%s: the checksum '%s' is not written plainly in the header: the file "
               "is corrupted", L, v);
    size_t pos = 8 + (size_t)(at - hdr) + 1;
    static const char zeros[65] = "0000000000000000000000000000000000000000000000000000000000000000";
    ramp_sha256_ctx c;
    uint8_t d[32];
    char got[65];
    ramp_sha256_init(&c);
    ramp_sha256_update(&c, f->bytes, pos);
    ramp_sha256_update(&c, zeros, 64);
    ramp_sha256_update(&c, f->bytes + pos + 64, f->size - pos - 64);
    ramp_sha256_final(&c, d);
    ramp_sha256_digest_hex(d, got);
    RAMP_CHECK(memcmp(got, v, 64) == 0, RAMP_ERR_FORMAT,
               "%s: checksum mismatch: the header says sha256 %s, the file's bytes "
               "hash to %s: the file is corrupted (or was edited without "
               "updating its checksum)", L, v, got);
    f->checksum = 1;
    return RAMP_OK;
}

int ramp_st_checksum_verified(const ramp_st_file *f) { return f ? f->checksum : 0; }

static ramp_status st_parse_into(ramp_st_file *f) {
    const char *L = f->label;
    size_t size = f->size;
    RAMP_CHECK(size >= 8, RAMP_ERR_FORMAT,
               "%s: file is %zu bytes, shorter than the 8-byte header length",
               L, size);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--) n = (n << 8) | f->bytes[i];
    RAMP_CHECK(n <= RAMP_ST_MAX_HEADER, RAMP_ERR_FORMAT,
               "%s: header length %llu (file offset 0) exceeds the %llu-byte "
               "limit", L, (unsigned long long)n,
               (unsigned long long)RAMP_ST_MAX_HEADER);
    RAMP_CHECK(n <= size - 8, RAMP_ERR_FORMAT,
               "%s: header length %llu (file offset 0) runs past the end of "
               "the file (%zu bytes after the length)", L,
               (unsigned long long)n, size - 8);
    RAMP_CHECK(n >= 2, RAMP_ERR_FORMAT,
               "%s: header length %llu (file offset 0) is too small for a "
               "JSON object", L, (unsigned long long)n);
    const char *hdr = (const char *)f->bytes + 8;
    const char *nul = memchr(hdr, '\0', (size_t)n);
    RAMP_CHECK(!nul, RAMP_ERR_FORMAT, "%s: NUL byte in the header at file "
               "offset %zu", L, (size_t)(nul - hdr) + 8);
    f->data = f->bytes + 8 + n;
    f->data_size = (uint64_t)size - 8 - n;

    /* cJSON needs the terminating NUL inside the length it is given. */
    char *text = ramp_calloc((size_t)n + 1, 1);
    if (!text) return RAMP_ERR_OUT_OF_MEMORY;
    memcpy(text, hdr, (size_t)n);
    const char *end = NULL;
    f->root = cJSON_ParseWithLengthOpts(text, (size_t)n + 1, &end, 1);
    size_t err_at = end ? (size_t)(end - text) + 8 : 8;
    free(text);
    RAMP_CHECK(f->root, RAMP_ERR_FORMAT,
               "%s: header (file offsets 8-%llu) is not valid JSON (error near "
               "file offset %zu)", L, (unsigned long long)(n + 7), err_at);
    RAMP_CHECK(cJSON_IsObject(f->root), RAMP_ERR_FORMAT,
               "%s: header is %s, expected a JSON object", L,
               st_json_kind(f->root));

    int count = 0;
    const cJSON *meta = NULL;
    for (const cJSON *c = f->root->child; c; c = c->next) {
        if (strcmp(c->string, "__metadata__") == 0) {
            RAMP_CHECK(!meta, RAMP_ERR_FORMAT,
                       "%s: __metadata__ appears twice in the header", L);
            meta = c;
        } else {
            count++;
        }
    }
    if (meta) RAMP_TRY(st_parse_metadata(f, meta));
    f->tensors = ramp_calloc((size_t)count, sizeof *f->tensors);
    if (!f->tensors) return RAMP_ERR_OUT_OF_MEMORY;
    for (const cJSON *c = f->root->child; c; c = c->next) {
        if (c == meta) continue;
        RAMP_TRY(st_parse_tensor(f, c, &f->tensors[f->ntensors]));
        f->ntensors++;
    }
    RAMP_TRY(st_check_layout(f));
    return st_verify_checksum(f, (size_t)n);
}

static ramp_status st_new(const char *label, ramp_st_file **out) {
    ramp_st_file *f = ramp_calloc(1, sizeof *f);
    if (!f) return RAMP_ERR_OUT_OF_MEMORY;
    f->label = st_strdup(label ? label : "(memory)");
    if (!f->label) {
        free(f);
        return RAMP_ERR_OUT_OF_MEMORY;
    }
    *out = f;
    return RAMP_OK;
}

ramp_status ramp_st_parse(const void *bytes, size_t size, const char *label,
                          ramp_st_file **out) {
    RAMP_CHECK(out && (bytes || size == 0), RAMP_ERR_INVALID_ARGUMENT,
               "ramp_st_parse: NULL argument");
    ramp_st_file *f;
    RAMP_TRY(st_new(label, &f));
    static const uint8_t empty[1];
    f->bytes = bytes ? bytes : empty;
    f->size = size;
    ramp_status s = st_parse_into(f);
    if (s != RAMP_OK) {
        ramp_st_close(f);
        return s;
    }
    *out = f;
    return RAMP_OK;
}

ramp_status ramp_st_open(const char *path, ramp_st_file **out) {
    RAMP_CHECK(path && out, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_st_open: NULL argument");
    /* O_NONBLOCK: a FIFO must not hang the open; S_ISREG refuses it. */
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    RAMP_CHECK(fd >= 0, RAMP_ERR_IO, "%s: cannot open: %s", path,
               strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        int e = errno;
        close(fd);
        RAMP_FAIL(RAMP_ERR_IO, "%s: not a readable regular file%s%s", path,
                  e ? ": " : "", e ? strerror(e) : "");
    }
    ramp_st_file *f;
    ramp_status s = st_new(path, &f);
    if (s != RAMP_OK) {
        close(fd);
        return s;
    }
    size_t size = (size_t)st.st_size;
    if (size > 0) {
        void *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            int e = errno;
            close(fd);
            ramp_st_close(f);
            RAMP_FAIL(RAMP_ERR_IO, "%s: cannot map %zu bytes: %s", path, size,
                      strerror(e));
        }
        f->map = m;
        f->map_size = size;
        f->bytes = m;
    } else {
        static const uint8_t empty[1];
        f->bytes = empty;
    }
    close(fd);
    f->size = size;
    s = st_parse_into(f);
    if (s != RAMP_OK) {
        ramp_st_close(f);
        return s;
    }
    *out = f;
    return RAMP_OK;
}

const char *ramp_st_label(const ramp_st_file *f) { return f->label; }
int ramp_st_count(const ramp_st_file *f) { return f->ntensors; }

const ramp_st_tensor *ramp_st_at(const ramp_st_file *f, int i) {
    return i >= 0 && i < f->ntensors ? &f->tensors[i] : NULL;
}

const ramp_st_tensor *ramp_st_find(const ramp_st_file *f, const char *name) {
    for (int i = 0; i < f->ntensors; i++)
        if (strcmp(f->tensors[i].name, name) == 0) return &f->tensors[i];
    return NULL;
}

ramp_status ramp_st_expect(const ramp_st_file *f, const char *name,
                           ramp_st_dtype dtype, int ndim, const int64_t *shape,
                           const ramp_st_tensor **out) {
    const ramp_st_tensor *t = ramp_st_find(f, name);
    RAMP_CHECK(t, RAMP_ERR_FORMAT, "%s: tensor '%s' is missing", f->label,
               name);
    RAMP_CHECK(t->dtype == dtype, RAMP_ERR_FORMAT,
               "%s: tensor '%s' has dtype %s, expected %s", f->label, name,
               ramp_st_dtype_name(t->dtype), ramp_st_dtype_name(dtype));
    RAMP_CHECK(t->ndim == ndim, RAMP_ERR_FORMAT,
               "%s: tensor '%s' has %d dimensions, expected %d", f->label,
               name, t->ndim, ndim);
    for (int d = 0; d < ndim; d++)
        RAMP_CHECK(!shape || shape[d] < 0 || t->shape[d] == shape[d],
                   RAMP_ERR_FORMAT,
                   "%s: tensor '%s' has shape[%d] = %lld, expected %lld",
                   f->label, name, d, (long long)t->shape[d],
                   (long long)(shape ? shape[d] : 0));
    *out = t;
    return RAMP_OK;
}

ramp_status ramp_st_only(const ramp_st_file *f, const char *const *known,
                         int nknown) {
    for (int i = 0; i < f->ntensors; i++) {
        int ok = 0;
        for (int j = 0; j < nknown && !ok; j++)
            ok = strcmp(f->tensors[i].name, known[j]) == 0;
        RAMP_CHECK(ok, RAMP_ERR_FORMAT, "%s: unexpected tensor '%.64s'",
                   f->label, f->tensors[i].name);
    }
    return RAMP_OK;
}

void ramp_st_copy(const ramp_st_tensor *t, void *dst) {
    if (t->end > t->begin) memcpy(dst, t->data, (size_t)(t->end - t->begin));
}

int ramp_st_meta_count(const ramp_st_file *f) { return f->nmeta; }

const char *ramp_st_meta_key(const ramp_st_file *f, int i) {
    return i >= 0 && i < f->nmeta ? f->meta_key[i] : NULL;
}

const char *ramp_st_meta(const ramp_st_file *f, const char *key) {
    for (int i = 0; i < f->nmeta; i++)
        if (strcmp(f->meta_key[i], key) == 0) return f->meta_value[i];
    return NULL;
}

ramp_status ramp_st_meta_string(const ramp_st_file *f, const char *key,
                                int required, char *buf, size_t size) {
    const char *v = ramp_st_meta(f, key);
    if (!v) {
        RAMP_CHECK(!required, RAMP_ERR_FORMAT,
                   "%s: __metadata__ has no '%s'", f->label, key);
        v = "";
    }
    size_t n = strlen(v);
    RAMP_CHECK(n < size, RAMP_ERR_FORMAT,
               "%s: __metadata__ '%s' is %zu characters, at most %zu allowed",
               f->label, key, n, size - 1);
    memcpy(buf, v, n + 1);
    return RAMP_OK;
}

ramp_status ramp_st_meta_int(const ramp_st_file *f, const char *key,
                             int64_t min, int64_t max, int64_t *out) {
    const char *v = ramp_st_meta(f, key);
    RAMP_CHECK(v, RAMP_ERR_FORMAT, "%s: __metadata__ has no '%s'", f->label,
               key);
    const char *p = v;
    int neg = *p == '-';
    if (neg) p++;
    int digits = 0;
    int64_t x = 0;
    for (; *p >= '0' && *p <= '9'; p++, digits++) {
        RAMP_CHECK(x <= (INT64_MAX - 9) / 10, RAMP_ERR_FORMAT,
                   "%s: __metadata__ '%s' = '%.32s' is out of range", f->label,
                   key, v);
        x = x * 10 + (*p - '0');
    }
    RAMP_CHECK(digits > 0 && *p == '\0', RAMP_ERR_FORMAT,
               "%s: __metadata__ '%s' = '%.32s' is not an integer", f->label,
               key, v);
    if (neg) x = -x;
    RAMP_CHECK(x >= min && x <= max, RAMP_ERR_FORMAT,
               "%s: __metadata__ '%s' = %lld is outside [%lld, %lld]",
               f->label, key, (long long)x, (long long)min, (long long)max);
    *out = x;
    return RAMP_OK;
}

/* ---- writer ---------------------------------------------------------- */

typedef struct {
    char *name;
    ramp_st_dtype dtype;
    int ndim;
    int64_t shape[RAMP_ST_MAX_DIMS];
    uint64_t nbytes;
    const void *data;
} st_wtensor;

struct ramp_st_writer {
    int n, cap;
    st_wtensor *t;
    int nmeta, metacap;
    char **mkey, **mval;
    int checksum;   /* add __metadata__ "sha256" (the last key) */
};

ramp_status ramp_st_writer_checksum(ramp_st_writer *w) {
    RAMP_CHECK(w, RAMP_ERR_INVALID_ARGUMENT, "ramp_st_writer_checksum: NULL writer");
    for (int i = 0; i < w->nmeta; i++)
        RAMP_CHECK(strcmp(w->mkey[i], RAMP_ST_CHECKSUM_KEY) != 0, RAMP_ERR_INVALID_ARGUMENT,
                   "metadata key '%s' is the checksum's", RAMP_ST_CHECKSUM_KEY);
    w->checksum = 1;
    return RAMP_OK;
}

#define ST_ZEROS64 "0000000000000000000000000000000000000000000000000000000000000000"

ramp_status ramp_st_writer_create(ramp_st_writer **out) {
    RAMP_CHECK(out, RAMP_ERR_INVALID_ARGUMENT, "ramp_st_writer_create: NULL");
    *out = ramp_calloc(1, sizeof **out);
    return *out ? RAMP_OK : RAMP_ERR_OUT_OF_MEMORY;
}

void ramp_st_writer_free(ramp_st_writer *w) {
    if (!w) return;
    for (int i = 0; i < w->n; i++) free(w->t[i].name);
    for (int i = 0; i < w->nmeta; i++) {
        free(w->mkey[i]);
        free(w->mval[i]);
    }
    free(w->t);
    free(w->mkey);
    free(w->mval);
    free(w);
}

/* Grows an array of `elem`-byte items to hold one more. */
static ramp_status st_grow(void **arr, int *cap, int n, size_t elem) {
    if (n < *cap) return RAMP_OK;
    int nc = *cap ? *cap * 2 : 8;
    void *p = realloc(*arr, (size_t)nc * elem);
    RAMP_CHECK(p, RAMP_ERR_OUT_OF_MEMORY, "out of memory growing a list");
    *arr = p;
    *cap = nc;
    return RAMP_OK;
}

ramp_status ramp_st_writer_meta(ramp_st_writer *w, const char *key,
                                const char *value) {
    RAMP_CHECK(w && key && value, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_st_writer_meta: NULL argument");
    for (int i = 0; i < w->nmeta; i++)
        RAMP_CHECK(strcmp(w->mkey[i], key) != 0, RAMP_ERR_INVALID_ARGUMENT,
                   "metadata key '%s' added twice", key);
    RAMP_CHECK(!w->checksum || strcmp(key, RAMP_ST_CHECKSUM_KEY) != 0,
               RAMP_ERR_INVALID_ARGUMENT, "metadata key '%s' is the checksum's", key);
    int cap = w->metacap;
    RAMP_TRY(st_grow((void **)&w->mkey, &cap, w->nmeta, sizeof *w->mkey));
    cap = w->metacap;
    RAMP_TRY(st_grow((void **)&w->mval, &cap, w->nmeta, sizeof *w->mval));
    w->metacap = cap;
    char *k = st_strdup(key), *v = st_strdup(value);
    if (!k || !v) {
        free(k);
        free(v);
        return RAMP_ERR_OUT_OF_MEMORY;
    }
    w->mkey[w->nmeta] = k;
    w->mval[w->nmeta] = v;
    w->nmeta++;
    return RAMP_OK;
}

ramp_status ramp_st_writer_meta_int(ramp_st_writer *w, const char *key,
                                    int64_t value) {
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)value);
    return ramp_st_writer_meta(w, key, buf);
}

ramp_status ramp_st_writer_add(ramp_st_writer *w, const char *name,
                               ramp_st_dtype dtype, int ndim,
                               const int64_t *shape, const void *data) {
    RAMP_CHECK(w && name && name[0], RAMP_ERR_INVALID_ARGUMENT,
               "ramp_st_writer_add: NULL writer or empty tensor name");
    RAMP_CHECK(strcmp(name, "__metadata__") != 0, RAMP_ERR_INVALID_ARGUMENT,
               "'__metadata__' is reserved, not a tensor name");
    RAMP_CHECK((unsigned)dtype < RAMP_ST_DTYPE_COUNT, RAMP_ERR_INVALID_ARGUMENT,
               "tensor '%s': bad dtype %d", name, (int)dtype);
    RAMP_CHECK(ndim >= 0 && ndim <= RAMP_ST_MAX_DIMS && (shape || ndim == 0),
               RAMP_ERR_INVALID_ARGUMENT, "tensor '%s': bad rank %d", name,
               ndim);
    for (int i = 0; i < w->n; i++)
        RAMP_CHECK(strcmp(w->t[i].name, name) != 0, RAMP_ERR_INVALID_ARGUMENT,
                   "tensor '%s' added twice", name);
    uint64_t numel = 1;
    for (int d = 0; d < ndim; d++) {
        RAMP_CHECK(shape[d] >= 0 && (double)shape[d] <= ST_MAX_JSON_INT,
                   RAMP_ERR_INVALID_ARGUMENT,
                   "tensor '%s': shape[%d] = %lld is out of range", name, d,
                   (long long)shape[d]);
        uint64_t v = (uint64_t)shape[d];
        RAMP_CHECK(v == 0 || numel <= (UINT64_C(1) << 62) / v,
                   RAMP_ERR_INVALID_ARGUMENT,
                   "tensor '%s': shape product overflows", name);
        numel *= v;
    }
    uint64_t nbytes = numel * st_dtypes[dtype].size;
    RAMP_CHECK(data || nbytes == 0, RAMP_ERR_INVALID_ARGUMENT,
               "tensor '%s': NULL data for %llu bytes", name,
               (unsigned long long)nbytes);
    RAMP_TRY(st_grow((void **)&w->t, &w->cap, w->n, sizeof *w->t));
    st_wtensor *t = &w->t[w->n];
    memset(t, 0, sizeof *t);
    t->name = st_strdup(name);
    if (!t->name) return RAMP_ERR_OUT_OF_MEMORY;
    t->dtype = dtype;
    t->ndim = ndim;
    for (int d = 0; d < ndim; d++) t->shape[d] = shape[d];
    t->nbytes = nbytes;
    t->data = data;
    w->n++;
    return RAMP_OK;
}

/* Adds a JSON integer printed exactly (cJSON would print big doubles in
 * exponent form, which strict readers reject). */
static int st_add_raw_uint(cJSON *arr, uint64_t v) {
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
    cJSON *item = cJSON_CreateRaw(buf);
    return item && cJSON_AddItemToArray(arr, item);
}

/* Builds the header text padded with spaces so that the data section starts
 * at a multiple of 8 bytes, as the reference writer does. */
static ramp_status st_header(const ramp_st_writer *w, char **text,
                             size_t *len, uint64_t *data_size) {
    cJSON *root = cJSON_CreateObject();
    int ok = root != NULL;
    if (ok && (w->nmeta > 0 || w->checksum)) {
        cJSON *meta = cJSON_AddObjectToObject(root, "__metadata__");
        ok = meta != NULL;
        for (int i = 0; ok && i < w->nmeta; i++)
            ok = cJSON_AddStringToObject(meta, w->mkey[i], w->mval[i]) != NULL;
        /* A placeholder, patched once the file's bytes are known. */
        if (ok && w->checksum)
            ok = cJSON_AddStringToObject(meta, RAMP_ST_CHECKSUM_KEY, ST_ZEROS64) != NULL;
    }
    uint64_t off = 0;
    for (int i = 0; ok && i < w->n; i++) {
        const st_wtensor *t = &w->t[i];
        cJSON *e = cJSON_AddObjectToObject(root, t->name);
        cJSON *shape = NULL, *offs = NULL;
        ok = e && cJSON_AddStringToObject(e, "dtype",
                                          st_dtypes[t->dtype].name) &&
             (shape = cJSON_AddArrayToObject(e, "shape")) &&
             (offs = cJSON_AddArrayToObject(e, "data_offsets"));
        for (int d = 0; ok && d < t->ndim; d++)
            ok = st_add_raw_uint(shape, (uint64_t)t->shape[d]);
        ok = ok && st_add_raw_uint(offs, off) &&
             st_add_raw_uint(offs, off + t->nbytes);
        off += t->nbytes;
    }
    char *s = ok ? cJSON_PrintUnformatted(root) : NULL;
    cJSON_Delete(root);
    RAMP_CHECK(s, RAMP_ERR_OUT_OF_MEMORY, "out of memory building a header");
    size_t n = strlen(s), padded = n + (8 - (8 + n) % 8) % 8;
    char *p = realloc(s, padded + 1);
    if (!p) {
        free(s);
        RAMP_FAIL(RAMP_ERR_OUT_OF_MEMORY, "out of memory building a header");
    }
    memset(p + n, ' ', padded - n);
    p[padded] = '\0';
    *text = p;
    *len = padded;
    *data_size = off;
    return RAMP_OK;
}

static void st_le64(uint8_t out[8], uint64_t v) {
    for (int i = 0; i < 8; i++) out[i] = (uint8_t)(v >> (8 * i));
}

/* With a checksum: hashes the file (length, header with the placeholder,
 * data) and writes the digest over the placeholder in hdr. cJSON prints the
 * metadata object first, its keys in order and its values escaped, so the
 * first "sha256":"000..." is the placeholder. */
static ramp_status st_patch_checksum(const ramp_st_writer *w, char *hdr, size_t hlen) {
    if (!w->checksum) return RAMP_OK;
    static const char pat[] = "\"" RAMP_ST_CHECKSUM_KEY "\":\"" ST_ZEROS64 "\"";
    const char *at = st_find(hdr, hlen, pat, sizeof pat - 1);
    RAMP_CHECK(at, RAMP_ERR_INVALID_ARGUMENT, "checksum placeholder not found in the header");
    size_t pos = (size_t)(at - hdr) + sizeof pat - 1 - 65;
    uint8_t len8[8], d[32];
    char hex[65];
    st_le64(len8, hlen);
    ramp_sha256_ctx c;
    ramp_sha256_init(&c);
    ramp_sha256_update(&c, len8, 8);
    ramp_sha256_update(&c, hdr, hlen);
    for (int i = 0; i < w->n; i++)
        if (w->t[i].nbytes) ramp_sha256_update(&c, w->t[i].data, (size_t)w->t[i].nbytes);
    ramp_sha256_final(&c, d);
    ramp_sha256_digest_hex(d, hex);
    memcpy(hdr + pos, hex, 64);
    return RAMP_OK;
}

ramp_status ramp_st_writer_to_memory(const ramp_st_writer *w, void **bytes,
                                     size_t *size) {
    RAMP_CHECK(w && bytes && size, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_st_writer_to_memory: NULL argument");
    char *hdr;
    size_t hlen;
    uint64_t dsize;
    RAMP_TRY(st_header(w, &hdr, &hlen, &dsize));
    ramp_status cs = st_patch_checksum(w, hdr, hlen);
    if (cs != RAMP_OK) {
        free(hdr);
        return cs;
    }
    size_t total = 8 + hlen + (size_t)dsize;
    uint8_t *buf = ramp_calloc(total, 1);
    if (!buf) {
        free(hdr);
        return RAMP_ERR_OUT_OF_MEMORY;
    }
    st_le64(buf, hlen);
    memcpy(buf + 8, hdr, hlen);
    free(hdr);
    uint8_t *p = buf + 8 + hlen;
    for (int i = 0; i < w->n; i++) {
        if (w->t[i].nbytes) memcpy(p, w->t[i].data, (size_t)w->t[i].nbytes);
        p += w->t[i].nbytes;
    }
    *bytes = buf;
    *size = total;
    return RAMP_OK;
}

ramp_status ramp_st_writer_write(const ramp_st_writer *w, const char *path) {
    RAMP_CHECK(w && path && path[0], RAMP_ERR_INVALID_ARGUMENT,
               "ramp_st_writer_write: NULL writer or empty path");
    char *hdr;
    size_t hlen;
    uint64_t dsize;
    RAMP_TRY(st_header(w, &hdr, &hlen, &dsize));
    ramp_status cs = st_patch_checksum(w, hdr, hlen);
    if (cs != RAMP_OK) {
        free(hdr);
        return cs;
    }
    size_t tlen = strlen(path) + 32;
    char *tmp = ramp_calloc(tlen, 1);
    if (!tmp) {
        free(hdr);
        return RAMP_ERR_OUT_OF_MEMORY;
    }
    snprintf(tmp, tlen, "%s.tmp.%ld", path, (long)getpid());
    ramp_status s = RAMP_OK;
    FILE *fp = fopen(tmp, "wb");
    if (!fp) {
        s = ramp_set_error(RAMP_ERR_IO, __FILE__, __LINE__,
                           "%s: cannot create temporary file '%s': %s", path,
                           tmp, strerror(errno));
        goto out;
    }
    uint8_t len8[8];
    st_le64(len8, hlen);
    int ok = fwrite(len8, 1, 8, fp) == 8 && fwrite(hdr, 1, hlen, fp) == hlen;
    for (int i = 0; ok && i < w->n; i++)
        if (w->t[i].nbytes)
            ok = fwrite(w->t[i].data, 1, (size_t)w->t[i].nbytes, fp) ==
                 (size_t)w->t[i].nbytes;
    int e = errno;
    if (fclose(fp) != 0 && ok) {
        ok = 0;
        e = errno;
    }
    if (!ok) {
        s = ramp_set_error(RAMP_ERR_IO, __FILE__, __LINE__,
                           "%s: writing '%s' failed: %s", path, tmp,
                           strerror(e));
        remove(tmp);
        goto out;
    }
    if (rename(tmp, path) != 0) {
        s = ramp_set_error(RAMP_ERR_IO, __FILE__, __LINE__,
                           "%s: cannot rename '%s' into place: %s", path, tmp,
                           strerror(errno));
        remove(tmp);
    }
out:
    free(tmp);
    free(hdr);
    return s;
}
