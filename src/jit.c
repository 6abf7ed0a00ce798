/*
 * jit.c - compiles CUDA sources at run time with NVRTC for sm_90a, reads the
 * ptxas report, and keeps the cubins in a disk cache.
 *
 * The cache is done the DeepGEMM way: the key is a hash of everything that
 * changes the binary (NVRTC's version, the options and defines, the source
 * and every header it includes, found by following #include "..." in the
 * kernel folder), and an entry is written to a temporary file and renamed
 * into place, so concurrent processes never see half a file. An entry holds
 * the compiler log too, so a cache hit still yields the ptxas report. A
 * corrupt or truncated entry is ignored and rewritten.
 *
 * NVRTC sees only the headers we hand it (nvrtcCreateProgram's header list),
 * never the file system, so the hash covers exactly what was compiled.
 */
#include "jit.h"

#include "cuda_loader.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef RAMP_DEFAULT_KERNEL_DIR
#define RAMP_DEFAULT_KERNEL_DIR "kernels"
#endif

#define MAX_HEADERS 64
#define MAX_OPTIONS 96
#define CACHE_MAGIC "RAMPJIT1"

uint64_t ramp_fnv1a64(uint64_t h, const void *data, size_t size) {
    const unsigned char *p = data;
    for (size_t i = 0; i < size; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* Hashes a string with its terminating NUL, so "ab","c" != "a","bc". */
static uint64_t hash_str(uint64_t h, const char *s) {
    return ramp_fnv1a64(h, s, strlen(s) + 1);
}

/* $RAMP_KERNEL_DIR, else the checkout the library was built from, else
 * (that checkout gone: an installed library) the installed copy. */
const char *ramp_kernel_dir(void) {
    const char *d = getenv("RAMP_KERNEL_DIR");
    if (d && *d) return d;
#ifdef RAMP_INSTALLED_KERNEL_DIR
    struct stat sb;
    if (stat(RAMP_DEFAULT_KERNEL_DIR, &sb) != 0) return RAMP_INSTALLED_KERNEL_DIR;
#endif
    return RAMP_DEFAULT_KERNEL_DIR;
}

ramp_status ramp_read_text_file(const char *path, char **text, size_t *size) {
    FILE *f = fopen(path, "rb");
    RAMP_CHECK(f, RAMP_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    if (!buf) {
        fclose(f);
        RAMP_FAIL(RAMP_ERR_OUT_OF_MEMORY, "out of memory reading %s", path);
    }
    for (;;) {
        if (n + 1 >= cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                fclose(f);
                RAMP_FAIL(RAMP_ERR_OUT_OF_MEMORY, "out of memory reading %s", path);
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - 1 - n, f);
        n += got;
        if (got == 0) break;
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(buf);
        RAMP_FAIL(RAMP_ERR_IO, "error reading %s", path);
    }
    buf[n] = '\0';
    *text = buf;
    if (size) *size = n;
    return RAMP_OK;
}

/* ------------------------------------------------------------ headers */

typedef struct {
    int n;
    char *names[MAX_HEADERS];
    char *texts[MAX_HEADERS];
} header_set;

static void headers_free(header_set *h) {
    for (int i = 0; i < h->n; i++) {
        free(h->names[i]);
        free(h->texts[i]);
    }
    h->n = 0;
}

/* Adds every header `text` includes with quotes, recursively. */
static ramp_status headers_collect(header_set *h, const char *dir,
                                   const char *from, const char *text,
                                   int depth) {
    RAMP_CHECK(depth < 16, RAMP_ERR_INVALID_ARGUMENT,
               "%s: #include nesting deeper than 16", from);
    int line = 1;
    for (const char *p = text; *p; line++) {
        const char *eol = strchr(p, '\n');
        const char *end = eol ? eol : p + strlen(p);
        const char *q = p;
        while (q < end && (*q == ' ' || *q == '\t')) q++;
        if (q < end && *q == '#') {
            q++;
            while (q < end && (*q == ' ' || *q == '\t')) q++;
            if (end - q > 7 && strncmp(q, "include", 7) == 0) {
                q += 7;
                while (q < end && (*q == ' ' || *q == '\t')) q++;
                if (q < end && *q == '"') {
                    const char *s = ++q;
                    while (q < end && *q != '"') q++;
                    RAMP_CHECK(q < end, RAMP_ERR_FORMAT,
                               "%s:%d: unterminated #include", from, line);
                    size_t len = (size_t)(q - s);
                    char name[256];
                    RAMP_CHECK(len > 0 && len < sizeof name, RAMP_ERR_FORMAT,
                               "%s:%d: bad #include name", from, line);
                    memcpy(name, s, len);
                    name[len] = '\0';
                    RAMP_CHECK(!strstr(name, "..") && name[0] != '/',
                               RAMP_ERR_INVALID_ARGUMENT,
                               "%s:%d: #include \"%s\" leaves the kernel folder",
                               from, line, name);
                    int seen = 0;
                    for (int i = 0; i < h->n && !seen; i++)
                        seen = strcmp(h->names[i], name) == 0;
                    if (!seen) {
                        RAMP_CHECK(h->n < MAX_HEADERS, RAMP_ERR_INVALID_ARGUMENT,
                                   "%s: more than %d headers", from, MAX_HEADERS);
                        char path[1024];
                        snprintf(path, sizeof path, "%s/%s", dir, name);
                        char *body = NULL;
                        if (ramp_read_text_file(path, &body, NULL) != RAMP_OK)
                            RAMP_FAIL(RAMP_ERR_NOT_FOUND,
                                      "%s:%d: #include \"%s\": %s not found "
                                      "(set RAMP_KERNEL_DIR to the kernels folder)",
                                      from, line, name, path);
                        char *dup = strdup(name);
                        if (!dup) {
                            free(body);
                            RAMP_FAIL(RAMP_ERR_OUT_OF_MEMORY, "out of memory");
                        }
                        h->names[h->n] = dup;
                        h->texts[h->n] = body;
                        h->n++;
                        RAMP_TRY(headers_collect(h, dir, dup, body, depth + 1));
                    }
                }
            }
        }
        if (!eol) break;
        p = eol + 1;
    }
    return RAMP_OK;
}

/* ------------------------------------------------------------ ptxas report */

static const char *skip_to(const char *s, const char *what, const char *end) {
    size_t n = strlen(what);
    for (const char *p = s; p + n <= end; p++)
        if (memcmp(p, what, n) == 0) return p + n;
    return NULL;
}

/* The integer just before `unit` in [s, end), or -1 if `unit` is absent. */
static int number_before(const char *s, const char *end, const char *unit) {
    size_t n = strlen(unit);
    for (const char *p = s; p + n <= end; p++) {
        if (memcmp(p, unit, n) != 0) continue;
        const char *q = p;
        while (q > s && q[-1] == ' ') q--;
        const char *d = q;
        while (d > s && isdigit((unsigned char)d[-1])) d--;
        if (d == q) return -1;
        long v = strtol(d, NULL, 10);
        return v > 0x7fffffff ? 0x7fffffff : (int)v;
    }
    return -1;
}

ramp_status ramp_ptxas_parse(const char *log, ramp_kernel_report **out,
                             int *count) {
    RAMP_CHECK(log && out && count, RAMP_ERR_INVALID_ARGUMENT, "NULL argument");
    int cap = 8, n = 0;
    ramp_kernel_report *ks = calloc((size_t)cap, sizeof *ks);
    RAMP_CHECK(ks, RAMP_ERR_OUT_OF_MEMORY, "out of memory");
    int cur = -1;      /* entry the "Used" line belongs to */
    int props = -1;    /* entry the next properties line belongs to */
    int lineno = 1;
    for (const char *p = log; *p; lineno++) {
        const char *eol = strchr(p, '\n');
        const char *end = eol ? eol : p + strlen(p);
        const char *q;
        if ((q = skip_to(p, "Compiling entry function '", end))) {
            const char *e = q;
            while (e < end && *e != '\'') e++;
            if (e >= end) {
                free(ks);
                RAMP_FAIL(RAMP_ERR_FORMAT, "ptxas log line %d: unterminated name",
                          lineno);
            }
            if (n == cap) {
                ramp_kernel_report *nk = realloc(ks, (size_t)cap * 2 * sizeof *ks);
                if (!nk) {
                    free(ks);
                    RAMP_FAIL(RAMP_ERR_OUT_OF_MEMORY, "out of memory");
                }
                ks = nk;
                cap *= 2;
            }
            memset(&ks[n], 0, sizeof ks[n]);
            size_t len = (size_t)(e - q);
            if (len >= sizeof ks[n].name) len = sizeof ks[n].name - 1;
            memcpy(ks[n].name, q, len);
            cur = n++;
            props = -1;
        } else if ((q = skip_to(p, "Function properties for ", end))) {
            /* Properties of the current entry, or of a non-inlined callee,
             * whose stack and spills add to its caller's cost: fold those
             * into the entry being compiled. */
            props = cur;
        } else if (skip_to(p, "bytes stack frame", end)) {
            int st = number_before(p, end, "bytes stack frame");
            int ss = number_before(p, end, "bytes spill stores");
            int sl = number_before(p, end, "bytes spill loads");
            if (st < 0 || ss < 0 || sl < 0) {
                free(ks);
                RAMP_FAIL(RAMP_ERR_FORMAT,
                          "ptxas log line %d: cannot read stack/spill sizes",
                          lineno);
            }
            if (props >= 0) {
                if (st > ks[props].stack_bytes) ks[props].stack_bytes = st;
                ks[props].spill_store_bytes += ss;
                ks[props].spill_load_bytes += sl;
            }
        } else if ((q = skip_to(p, "Used ", end)) && skip_to(p, "registers", end)) {
            int regs = number_before(p, end, "registers");
            if (regs < 0 || cur < 0) {
                free(ks);
                RAMP_FAIL(RAMP_ERR_FORMAT,
                          "ptxas log line %d: register count without an entry",
                          lineno);
            }
            ks[cur].registers = regs;
            int v;
            if ((v = number_before(p, end, "bytes smem")) >= 0) ks[cur].smem_bytes = v;
            if ((v = number_before(p, end, "bytes cmem[0]")) >= 0) ks[cur].cmem_bytes = v;
            if ((v = number_before(p, end, "barriers")) >= 0) ks[cur].barriers = v;
        }
        if (!eol) break;
        p = eol + 1;
    }
    *out = ks;
    *count = n;
    return RAMP_OK;
}

static int count_warnings(const char *log) {
    int n = 0;
    for (const char *p = log; (p = strstr(p, "ptxas warning")); p++) n++;
    return n;
}

ramp_status ramp_resources_from_report(const ramp_kernel_report *k,
                                       int threads, int dynamic_smem,
                                       const ramp_device_limits *lim,
                                       ramp_resources *out) {
    RAMP_CHECK(k && lim && out, RAMP_ERR_INVALID_ARGUMENT, "NULL argument");
    RAMP_CHECK(threads >= 1 && threads <= 1024, RAMP_ERR_INVALID_ARGUMENT,
               "threads = %d, expected 1..1024", threads);
    RAMP_CHECK(dynamic_smem >= 0, RAMP_ERR_INVALID_ARGUMENT,
               "dynamic_smem = %d", dynamic_smem);
    RAMP_CHECK(lim->regs_per_sm > 0 && lim->max_threads_per_sm > 0 &&
                   lim->smem_per_sm > 0 && lim->max_blocks_per_sm > 0,
               RAMP_ERR_INVALID_ARGUMENT, "device limits not filled in");
    memset(out, 0, sizeof *out);
    out->measured = 1;
    out->threads = threads;
    out->regs_per_thread = k->registers;
    out->smem_bytes = k->smem_bytes + dynamic_smem;

    /* sm_90 rules (cuda_occupancy.h): registers per warp rounded up to 256,
     * allotted per sub-partition (4 per SM); 1 KB reserved per block. */
    const int warps = (threads + 31) / 32;
    const int per_warp = (k->registers * 32 + 255) / 256 * 256;
    const int warps_per_sm = lim->max_threads_per_sm / 32;
    int by_regs = per_warp ? (lim->regs_per_sm / 4 / per_warp) * 4 / warps
                           : lim->max_blocks_per_sm;
    if (per_warp * ((warps + 3) / 4 * 4) > lim->regs_per_sm || k->registers > 255)
        by_regs = 0;
    int by_threads = warps_per_sm / warps;
    long smem = (long)out->smem_bytes + 1024;
    int by_smem = (int)(lim->smem_per_sm / smem);
    int b = lim->max_blocks_per_sm;
    if (by_regs < b) b = by_regs;
    if (by_threads < b) b = by_threads;
    if (by_smem < b) b = by_smem;
    out->blocks_per_sm = b;
    out->valid = 1;
    if (out->smem_bytes > lim->smem_per_block) {
        out->valid = 0;
        out->blocks_per_sm = 0;
        snprintf(out->why, sizeof out->why, "shared memory %d B > %d B per block",
                 out->smem_bytes, lim->smem_per_block);
    } else if (b <= 0) {
        out->valid = 0;
        out->blocks_per_sm = 0;
        snprintf(out->why, sizeof out->why,
                 "does not fit an SM (%d registers x %d threads)", k->registers,
                 threads);
    } else if (k->spill_store_bytes > 0 || k->spill_load_bytes > 0) {
        out->valid = 0;
        snprintf(out->why, sizeof out->why, "spills %d B stores, %d B loads",
                 k->spill_store_bytes, k->spill_load_bytes);
    }
    return RAMP_OK;
}

/* ------------------------------------------------------------ cache */

static ramp_status mkdirs(const char *path) {
    char buf[1024];
    size_t n = strlen(path);
    RAMP_CHECK(n > 0 && n < sizeof buf, RAMP_ERR_IO, "bad cache folder path");
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0') continue;
        char c = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            RAMP_FAIL(RAMP_ERR_IO, "cannot create %s: %s", buf, strerror(errno));
        buf[i] = c;
    }
    struct stat st;
    RAMP_CHECK(stat(path, &st) == 0 && S_ISDIR(st.st_mode), RAMP_ERR_IO,
               "%s is not a folder", path);
    return RAMP_OK;
}

ramp_status ramp_jit_cache_dir(char *buf, size_t size) {
    const char *off = getenv("RAMP_JIT_CACHE");
    if (off && strcmp(off, "0") == 0)
        RAMP_FAIL(RAMP_ERR_NOT_FOUND, "JIT cache turned off (RAMP_JIT_CACHE=0)");
    const char *d = getenv("RAMP_CACHE_DIR");
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (d && *d) snprintf(buf, size, "%s", d);
    else if (xdg && *xdg) snprintf(buf, size, "%s/ramp", xdg);
    else if (home && *home) snprintf(buf, size, "%s/.cache/ramp", home);
    else RAMP_FAIL(RAMP_ERR_IO, "no cache folder: set RAMP_CACHE_DIR or HOME");
    return mkdirs(buf);
}

void ramp_jit_cache_path(const char *dir, const char *name, uint64_t key,
                         char *buf, size_t size) {
    snprintf(buf, size, "%s/%s-%016llx.rjit", dir, name, (unsigned long long)key);
}

static void put_u64(unsigned char *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static uint64_t get_u64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* Writes `parts` to path atomically; returns 0 on success. */
static int write_atomic(const char *path, const void *const *parts,
                        const size_t *sizes, int nparts) {
    char tmp[1100];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) return -1;
    int ok = 1;
    for (int i = 0; i < nparts && ok; i++)
        ok = sizes[i] == 0 || fwrite(parts[i], 1, sizes[i], f) == sizes[i];
    if (fclose(f) != 0) ok = 0;
    if (ok && rename(tmp, path) == 0) return 0;
    remove(tmp);
    return -1;
}

/* Entry: magic, key, log length, cubin length, log, cubin, FNV of log+cubin. */
static int cache_write(const char *path, uint64_t key, const char *log,
                       size_t log_len, const void *cubin, size_t cubin_len) {
    unsigned char head[32], tail[8];
    memcpy(head, CACHE_MAGIC, 8);
    put_u64(head + 8, key);
    put_u64(head + 16, log_len);
    put_u64(head + 24, cubin_len);
    uint64_t sum = ramp_fnv1a64(RAMP_FNV_OFFSET, log, log_len);
    sum = ramp_fnv1a64(sum, cubin, cubin_len);
    put_u64(tail, sum);
    const void *parts[4] = {head, log, cubin, tail};
    size_t sizes[4] = {sizeof head, log_len, cubin_len, sizeof tail};
    return write_atomic(path, parts, sizes, 4);
}

/* Reads a valid entry; returns 0 and fills the result, -1 on any mismatch. */
static int cache_read(const char *path, uint64_t key, ramp_jit_result *r) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    unsigned char head[32];
    int ok = fread(head, 1, sizeof head, f) == sizeof head &&
             memcmp(head, CACHE_MAGIC, 8) == 0 && get_u64(head + 8) == key;
    uint64_t log_len = ok ? get_u64(head + 16) : 0;
    uint64_t cubin_len = ok ? get_u64(head + 24) : 0;
    ok = ok && log_len < (64u << 20) && cubin_len > 0 && cubin_len < (1u << 30);
    char *log = ok ? malloc(log_len + 1) : NULL;
    void *cubin = ok ? malloc(cubin_len) : NULL;
    unsigned char tail[8];
    ok = ok && log && cubin && fread(log, 1, log_len, f) == log_len &&
         fread(cubin, 1, cubin_len, f) == cubin_len &&
         fread(tail, 1, 8, f) == 8 && fgetc(f) == EOF;
    fclose(f);
    if (ok) {
        uint64_t sum = ramp_fnv1a64(RAMP_FNV_OFFSET, log, log_len);
        sum = ramp_fnv1a64(sum, cubin, cubin_len);
        ok = sum == get_u64(tail);
    }
    if (!ok) {
        free(log);
        free(cubin);
        return -1;
    }
    log[log_len] = '\0';
    r->log = log;
    r->cubin = cubin;
    r->cubin_size = cubin_len;
    return 0;
}

/* RAMP_JIT_DUMP=1: source (with the options), PTX and log beside the cache. */
static void dump_files(const char *dir, const char *name, uint64_t key,
                       const char *const *opts, int nopts, const char *source,
                       const header_set *h, const char *ptx, const char *log) {
    char base[1100], path[1200];
    ramp_jit_cache_path(dir, name, key, base, sizeof base);
    size_t bl = strlen(base);
    if (bl > 5) base[bl - 5] = '\0'; /* drop ".rjit" */
    size_t cap = strlen(source) + 256;
    for (int i = 0; i < nopts; i++) cap += strlen(opts[i]) + 8;
    for (int i = 0; i < h->n; i++) cap += strlen(h->names[i]) + 32;
    char *text = malloc(cap);
    if (text) {
        size_t n = (size_t)snprintf(text, cap, "// nvrtc options:");
        for (int i = 0; i < nopts; i++)
            n += (size_t)snprintf(text + n, cap - n, " %s", opts[i]);
        n += (size_t)snprintf(text + n, cap - n, "\n// headers:");
        for (int i = 0; i < h->n; i++)
            n += (size_t)snprintf(text + n, cap - n, " %s", h->names[i]);
        snprintf(text + n, cap - n, "\n%s", source);
        const void *parts[1] = {text};
        size_t sizes[1] = {strlen(text)};
        snprintf(path, sizeof path, "%s.cu", base);
        write_atomic(path, parts, sizes, 1);
        free(text);
    }
    if (ptx) {
        const void *parts[1] = {ptx};
        size_t sizes[1] = {strlen(ptx)};
        snprintf(path, sizeof path, "%s.ptx", base);
        write_atomic(path, parts, sizes, 1);
    }
    if (log) {
        const void *parts[1] = {log};
        size_t sizes[1] = {strlen(log)};
        snprintf(path, sizeof path, "%s.log", base);
        write_atomic(path, parts, sizes, 1);
    }
}

/* ------------------------------------------------------------ compile */

ramp_status ramp_jit_version(int *major, int *minor) {
    const ramp_nvrtc_api *nv;
    RAMP_TRY(ramp_nvrtc_load(&nv));
    if (major) *major = nv->major;
    if (minor) *minor = nv->minor;
    return RAMP_OK;
}

void ramp_jit_result_free(ramp_jit_result *r) {
    if (!r) return;
    free(r->cubin);
    free(r->log);
    free(r->kernels);
    free(r);
}

const ramp_kernel_report *ramp_jit_kernel(const ramp_jit_result *r,
                                          const char *name) {
    if (!r || !name) return NULL;
    for (int i = 0; i < r->nkernels; i++)
        if (strcmp(r->kernels[i].name, name) == 0) return &r->kernels[i];
    return NULL;
}

static ramp_status check_request(const ramp_jit_request *req) {
    RAMP_CHECK(req && req->source, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_jit_compile: NULL request or source");
    RAMP_CHECK(req->name && req->name[0], RAMP_ERR_INVALID_ARGUMENT,
               "ramp_jit_compile: empty program name");
    size_t n = strlen(req->name);
    RAMP_CHECK(n <= 64, RAMP_ERR_INVALID_ARGUMENT,
               "program name '%.64s...' longer than 64 characters", req->name);
    for (size_t i = 0; i < n; i++) {
        char c = req->name[i];
        RAMP_CHECK(isalnum((unsigned char)c) || c == '.' || c == '_' || c == '-',
                   RAMP_ERR_INVALID_ARGUMENT,
                   "program name '%s': character %zu ('%c') is not a letter, "
                   "digit, '.', '_' or '-'", req->name, i, c);
    }
    RAMP_CHECK(req->ndefines >= 0 && (req->ndefines == 0 || req->defines),
               RAMP_ERR_INVALID_ARGUMENT, "ndefines = %d with defines %s",
               req->ndefines, req->defines ? "set" : "NULL");
    RAMP_CHECK(req->noptions >= 0 && (req->noptions == 0 || req->options),
               RAMP_ERR_INVALID_ARGUMENT, "noptions = %d with options %s",
               req->noptions, req->options ? "set" : "NULL");
    RAMP_CHECK(req->ndefines + req->noptions <= MAX_OPTIONS - 16,
               RAMP_ERR_INVALID_ARGUMENT, "more than %d defines and options",
               MAX_OPTIONS - 16);
    for (int i = 0; i < req->ndefines; i++)
        RAMP_CHECK(req->defines[i] && req->defines[i][0] &&
                       strlen(req->defines[i]) < 480,
                   RAMP_ERR_INVALID_ARGUMENT, "define %d is NULL, empty or too long", i);
    for (int i = 0; i < req->noptions; i++)
        RAMP_CHECK(req->options[i] && req->options[i][0], RAMP_ERR_INVALID_ARGUMENT,
                   "option %d is NULL or empty", i);
    return RAMP_OK;
}

typedef struct {
    header_set headers;
    char defs[MAX_OPTIONS][512];
    const char *opts[MAX_OPTIONS];
    int nopts;
    nvrtcProgram prog;
    ramp_jit_result *res;
    char *ptx;
} compile_state;

static void state_free(compile_state *st, const ramp_nvrtc_api *nv) {
    headers_free(&st->headers);
    if (st->prog) nv->DestroyProgram(&st->prog);
    ramp_jit_result_free(st->res);
    free(st->ptx);
}

static ramp_status compile_body(const ramp_jit_request *req,
                                const ramp_nvrtc_api *nv, compile_state *st) {
    const char *dir = req->kernel_dir && *req->kernel_dir ? req->kernel_dir
                                                          : ramp_kernel_dir();
    RAMP_TRY(headers_collect(&st->headers, dir, req->name, req->source, 0));

    /* Options: fixed ones, then defines, then the caller's. */
    char arch[64];
    snprintf(arch, sizeof arch, "-arch=%s", req->arch ? req->arch : "sm_90a");
    const char *fixed[] = {"--std=c++17", "-default-device", "-lineinfo",
                           "--ptxas-options=-v", "-DRAMP_NVRTC=1"};
    int n = 0;
    snprintf(st->defs[n], sizeof st->defs[n], "%s", arch);
    st->opts[n] = st->defs[n];
    n++;
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) st->opts[n++] = fixed[i];
    for (int i = 0; i < req->ndefines; i++) {
        snprintf(st->defs[n], sizeof st->defs[n], "-D%s", req->defines[i]);
        st->opts[n] = st->defs[n];
        n++;
    }
    /* RAMP_JIT_DEFINES="A=1 B" (experiments, e.g. bench_layer --timeline's
     * RAMP_TIMELINE): more defines for every program; in the key like the
     * others. At most 8, each shorter than 480 characters. */
    const char *extra = getenv("RAMP_JIT_DEFINES");
    for (int added = 0; extra && *extra;) {
        while (*extra == ' ') extra++;
        const size_t len = strcspn(extra, " ");
        if (!len) break;
        RAMP_CHECK(added < 8 && len < 480, RAMP_ERR_INVALID_ARGUMENT,
                   "RAMP_JIT_DEFINES: more than 8 defines or one of 480 characters or more");
        snprintf(st->defs[n], sizeof st->defs[n], "-D%.*s", (int)len, extra);
        st->opts[n] = st->defs[n];
        n++;
        added++;
        extra += len;
    }
    /* NVRTC 12.9+ keeps its own cache in the driver's compute cache; a hit
     * there skips ptxas and leaves the log without its -v report. Ours
     * keeps the log, so theirs is turned off. */
    if (nv->major > 12 || (nv->major == 12 && nv->minor >= 9))
        st->opts[n++] = "--no-cache";
    for (int i = 0; i < req->noptions; i++) st->opts[n++] = req->options[i];
    st->nopts = n;

    /* Key: everything that changes the binary. */
    uint64_t key = hash_str(RAMP_FNV_OFFSET, "ramp-jit-1");
    char ver[32];
    snprintf(ver, sizeof ver, "nvrtc %d.%d", nv->major, nv->minor);
    key = hash_str(key, ver);
    for (int i = 0; i < n; i++) key = hash_str(key, st->opts[i]);
    key = hash_str(key, req->source);
    for (int i = 0; i < st->headers.n; i++) {
        key = hash_str(key, st->headers.names[i]);
        key = hash_str(key, st->headers.texts[i]);
    }

    st->res = calloc(1, sizeof *st->res);
    RAMP_CHECK(st->res, RAMP_ERR_OUT_OF_MEMORY, "out of memory");
    ramp_jit_result *r = st->res;
    r->key = key;
    r->nvrtc_major = nv->major;
    r->nvrtc_minor = nv->minor;

    char cdir[1024], cpath[1200];
    /* No cache folder (or RAMP_JIT_CACHE=0) only means no caching. */
    int have_cache = ramp_jit_cache_dir(cdir, sizeof cdir) == RAMP_OK;
    ramp_clear_error();
    if (have_cache) {
        ramp_jit_cache_path(cdir, req->name, key, cpath, sizeof cpath);
        if (cache_read(cpath, key, r) == 0) {
            r->from_cache = 1;
            r->ptxas_warnings = count_warnings(r->log);
            return ramp_ptxas_parse(r->log, &r->kernels, &r->nkernels);
        }
    }

    RAMP_NVRTC(nv->CreateProgram(&st->prog, req->source, req->name,
                                 st->headers.n,
                                 (const char *const *)st->headers.texts,
                                 (const char *const *)st->headers.names));
    nvrtcResult cr = nv->CompileProgram(st->prog, n, st->opts);
    size_t log_size = 0;
    RAMP_NVRTC(nv->GetProgramLogSize(st->prog, &log_size));
    r->log = malloc(log_size + 1);
    RAMP_CHECK(r->log, RAMP_ERR_OUT_OF_MEMORY, "out of memory");
    r->log[0] = '\0';
    if (log_size) RAMP_NVRTC(nv->GetProgramLog(st->prog, r->log));
    r->log[log_size] = '\0';
    if (cr != 0) {
        if (have_cache && getenv("RAMP_JIT_DUMP") && strcmp(getenv("RAMP_JIT_DUMP"), "1") == 0)
            dump_files(cdir, req->name, key, st->opts, n, req->source,
                       &st->headers, NULL, r->log);
        RAMP_FAIL(RAMP_ERR_COMPILE, "NVRTC could not compile %s for %s (%s):\n%.3000s",
                  req->name, arch + 6, nv->GetErrorString(cr), r->log);
    }
    size_t cubin_size = 0;
    RAMP_NVRTC(nv->GetCUBINSize(st->prog, &cubin_size));
    RAMP_CHECK(cubin_size > 0, RAMP_ERR_COMPILE,
               "NVRTC produced no cubin for %s: the arch must be a real one "
               "(sm_XX), not %s", req->name, arch + 6);
    r->cubin = malloc(cubin_size);
    RAMP_CHECK(r->cubin, RAMP_ERR_OUT_OF_MEMORY, "out of memory");
    RAMP_NVRTC(nv->GetCUBIN(st->prog, r->cubin));
    r->cubin_size = cubin_size;
    r->ptxas_warnings = count_warnings(r->log);
    RAMP_TRY(ramp_ptxas_parse(r->log, &r->kernels, &r->nkernels));

    if (have_cache) {
        cache_write(cpath, key, r->log, strlen(r->log), r->cubin, r->cubin_size);
        const char *dump = getenv("RAMP_JIT_DUMP");
        if (dump && strcmp(dump, "1") == 0) {
            size_t ptx_size = 0;
            if (nv->GetPTXSize(st->prog, &ptx_size) == 0 && ptx_size > 0) {
                st->ptx = malloc(ptx_size + 1);
                if (st->ptx && nv->GetPTX(st->prog, st->ptx) == 0)
                    st->ptx[ptx_size] = '\0';
                else {
                    free(st->ptx);
                    st->ptx = NULL;
                }
            }
            dump_files(cdir, req->name, key, st->opts, n, req->source,
                       &st->headers, st->ptx, r->log);
        }
    }
    return RAMP_OK;
}

ramp_status ramp_jit_compile(const ramp_jit_request *req, ramp_jit_result **out) {
    RAMP_CHECK(out, RAMP_ERR_INVALID_ARGUMENT, "ramp_jit_compile: NULL out");
    RAMP_TRY(check_request(req));
    const ramp_nvrtc_api *nv;
    RAMP_TRY(ramp_nvrtc_load(&nv));
    compile_state *st = calloc(1, sizeof *st);
    RAMP_CHECK(st, RAMP_ERR_OUT_OF_MEMORY, "out of memory");
    ramp_status s = compile_body(req, nv, st);
    if (s == RAMP_OK) {
        *out = st->res;
        st->res = NULL;
    }
    state_free(st, nv);
    free(st);
    return s;
}
