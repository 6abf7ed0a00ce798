/*
 * safetensors.h - a small, strict reader and writer of the safetensors layout
 * (private to libramp). Traces and timing datasets are stored this way so
 * that Python users can open them with numpy alone (docs/formats.md).
 *
 * Layout: 8-byte little-endian header length N, N bytes of JSON header, then
 * the data section. The header maps each tensor name to
 * {"dtype", "shape", "data_offsets": [begin, end]} (offsets relative to the
 * data section) and may hold "__metadata__", a map of string to string.
 *
 * The reader checks everything a corrupt or hostile file could get wrong: the
 * header length against the file size, JSON syntax, field types, known dtypes,
 * shape products against byte lengths (with overflow checks), offsets in
 * range, non-overlapping and contiguous (covering the data section exactly),
 * duplicate tensor or metadata names, and non-string metadata. Every failure
 * is RAMP_ERR_FORMAT with a message naming the file, the tensor and the field
 * or byte offset. Data are little-endian; libramp supports little-endian
 * hosts only (checked at compile time).
 *
 * Also here: the from-memory entry points of the trace, timing and SGLang
 * readers, so that fuzz targets need no temporary files.
 */
#ifndef RAMP_SAFETENSORS_H
#define RAMP_SAFETENSORS_H

#include "ramp.h"

#include <stddef.h>
#include <stdint.h>

typedef enum {
    RAMP_ST_BOOL = 0,
    RAMP_ST_U8,
    RAMP_ST_I8,
    RAMP_ST_U16,
    RAMP_ST_I16,
    RAMP_ST_F16,
    RAMP_ST_BF16,
    RAMP_ST_U32,
    RAMP_ST_I32,
    RAMP_ST_F32,
    RAMP_ST_U64,
    RAMP_ST_I64,
    RAMP_ST_F64,
    RAMP_ST_DTYPE_COUNT
} ramp_st_dtype;

/* "I32" etc.; "?" for an out-of-range value. */
const char *ramp_st_dtype_name(ramp_st_dtype d);
/* Bytes per element; 0 for an out-of-range value. */
size_t ramp_st_dtype_size(ramp_st_dtype d);

#define RAMP_ST_MAX_DIMS 8
/* Largest header accepted (the reference implementation's limit). */
#define RAMP_ST_MAX_HEADER ((uint64_t)100 << 20)

typedef struct {
    const char *name;
    ramp_st_dtype dtype;
    int ndim;
    int64_t shape[RAMP_ST_MAX_DIMS];
    int64_t numel;      /* product of shape (1 for a scalar) */
    uint64_t begin;     /* byte offsets within the data section */
    uint64_t end;
    const void *data;   /* begin's address; NOT aligned: read with memcpy */
} ramp_st_tensor;

typedef struct ramp_st_file ramp_st_file;

/* Opens and validates a file (memory-mapped; the mapping lives until
 * ramp_st_close). RAMP_ERR_IO if it cannot be opened, RAMP_ERR_FORMAT if it
 * is not valid safetensors. */
ramp_status ramp_st_open(const char *path, ramp_st_file **out);
/* Same from bytes in memory; `bytes` must outlive the returned object. label
 * names the source in messages. */
ramp_status ramp_st_parse(const void *bytes, size_t size, const char *label,
                          ramp_st_file **out);
void ramp_st_close(ramp_st_file *f);

const char *ramp_st_label(const ramp_st_file *f);
int ramp_st_count(const ramp_st_file *f);
const ramp_st_tensor *ramp_st_at(const ramp_st_file *f, int i);
/* NULL if absent. */
const ramp_st_tensor *ramp_st_find(const ramp_st_file *f, const char *name);

/* A required tensor of a given dtype and rank; shape[i] < 0 accepts any
 * extent. RAMP_ERR_FORMAT names the file, tensor and dimension on mismatch. */
ramp_status ramp_st_expect(const ramp_st_file *f, const char *name,
                           ramp_st_dtype dtype, int ndim, const int64_t *shape,
                           const ramp_st_tensor **out);
/* RAMP_ERR_FORMAT if the file holds a tensor whose name is not in known[]. */
ramp_status ramp_st_only(const ramp_st_file *f, const char *const *known,
                         int nknown);
/* Copies a tensor's bytes (end - begin) to dst. */
void ramp_st_copy(const ramp_st_tensor *t, void *dst);

/* Metadata: NULL if absent. */
int ramp_st_meta_count(const ramp_st_file *f);
const char *ramp_st_meta_key(const ramp_st_file *f, int i);
const char *ramp_st_meta(const ramp_st_file *f, const char *key);
/* Required metadata string copied into buf (RAMP_ERR_FORMAT if absent or if
 * it does not fit); with required == 0 a missing key gives "". */
ramp_status ramp_st_meta_string(const ramp_st_file *f, const char *key,
                                int required, char *buf, size_t size);
/* Required metadata integer: plain decimal digits (optional leading '-'),
 * within [min, max]. */
ramp_status ramp_st_meta_int(const ramp_st_file *f, const char *key,
                             int64_t min, int64_t max, int64_t *out);

/* ---- checksum ---------------------------------------------------------
 *
 * A file whose __metadata__ holds "sha256" is verified on reading: the value
 * is the SHA-256 (lowercase hex) of the whole file with those 64 digits
 * replaced by '0'; a mismatch is RAMP_ERR_FORMAT naming the file. Files
 * without the key are read unchecked. */
#define RAMP_ST_CHECKSUM_KEY "sha256"
/* 1 if the file carried a checksum and it matched. */
int ramp_st_checksum_verified(const ramp_st_file *f);

typedef struct {
    uint32_t h[8];
    uint64_t len;
    uint8_t buf[64];
    size_t n;
} ramp_sha256_ctx;

void ramp_sha256_init(ramp_sha256_ctx *c);
void ramp_sha256_update(ramp_sha256_ctx *c, const void *data, size_t size);
void ramp_sha256_final(ramp_sha256_ctx *c, uint8_t out[32]);
void ramp_sha256_digest_hex(const uint8_t d[32], char out[65]);
/* SHA-256 of one buffer, as 64 lowercase hex digits. */
void ramp_sha256_hex(const void *data, size_t size, char out[65]);

/* ---- writer ---------------------------------------------------------- */

typedef struct ramp_st_writer ramp_st_writer;

ramp_status ramp_st_writer_create(ramp_st_writer **out);
void ramp_st_writer_free(ramp_st_writer *w);
/* Adds a metadata string (copied). Duplicate keys are refused. */
ramp_status ramp_st_writer_meta(ramp_st_writer *w, const char *key,
                                const char *value);
ramp_status ramp_st_writer_meta_int(ramp_st_writer *w, const char *key,
                                    int64_t value);
/* Adds a tensor; `data` (numel * dtype size bytes, little-endian) is not
 * copied and must stay valid until the writer writes. Tensors are laid out
 * in the order added. */
ramp_status ramp_st_writer_add(ramp_st_writer *w, const char *name,
                               ramp_st_dtype dtype, int ndim,
                               const int64_t *shape, const void *data);
/* Adds the checksum (metadata "sha256", after every other key) to the
 * file this writer writes. */
ramp_status ramp_st_writer_checksum(ramp_st_writer *w);
/* Writes atomically: path.tmp.<pid>, then rename; the temporary file is
 * removed on any failure, so no partial file is ever left. */
ramp_status ramp_st_writer_write(const ramp_st_writer *w, const char *path);
/* The whole file in one malloc'd buffer (free with free()). */
ramp_status ramp_st_writer_to_memory(const ramp_st_writer *w, void **bytes,
                                     size_t *size);

/* ---- from-memory entry points of the readers (for fuzzing) ----------- */

ramp_status ramp_trace_read_memory(const void *bytes, size_t size,
                                   const char *label, ramp_trace **out);
ramp_status ramp_trace_write_memory(const ramp_trace *t, void **bytes,
                                    size_t *size);
ramp_status ramp_timing_read_memory(const void *bytes, size_t size,
                                    const char *label, int allow_missing,
                                    ramp_timing **out);
ramp_status ramp_timing_write_memory(const ramp_timing *t, void **bytes,
                                     size_t *size);
ramp_status ramp_trace_import_sglang_memory(const void *bytes, size_t size,
                                            const char *label,
                                            const ramp_model *model,
                                            const char *domain,
                                            ramp_trace **out);

#endif /* RAMP_SAFETENSORS_H */
