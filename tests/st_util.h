/*
 * st_util.h - test helpers for corrupting safetensors files in controlled
 * ways: patch one element of a tensor in place, or rebuild a file with one
 * metadata value changed or removed, or one tensor dropped or replaced.
 * Used by test_trace.c, test_timing.c and test_safetensors.c.
 */
#ifndef RAMP_ST_UTIL_H
#define RAMP_ST_UTIL_H

#include "safetensors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Byte offset in the file of element `index` of tensor `name`, or -1. */
static inline long st_elem_offset(const void *bytes, size_t size,
                                  const char *name, int64_t index) {
    ramp_st_file *f;
    if (ramp_st_parse(bytes, size, "patch", &f) != RAMP_OK) return -1;
    const ramp_st_tensor *t = ramp_st_find(f, name);
    long off = -1;
    if (t && index >= 0 && index < t->numel)
        off = (long)((const uint8_t *)t->data - (const uint8_t *)bytes) +
              (long)(index * (int64_t)ramp_st_dtype_size(t->dtype));
    ramp_st_close(f);
    return off;
}

/* Recomputes a file's checksum (metadata "sha256", docs/formats.md) after
 * an edit, so that a test reaches the checks behind it. Returns 1 if the
 * file has one (and it was rewritten), 0 if not. */
static inline int st_reseal(void *bytes, size_t size) {
    static const char key[] = "\"" RAMP_ST_CHECKSUM_KEY "\":\"";
    char *b = bytes;
    size_t klen = sizeof key - 1;
    if (size < 8) return 0;
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--) n = (n << 8) | (uint8_t)b[i];
    if (n > size - 8) return 0;
    for (size_t i = 8; i + klen + 64 <= 8 + n; i++) {
        if (memcmp(b + i, key, klen) != 0) continue;
        char *digits = b + i + klen;
        memset(digits, '0', 64);
        char hex[65];
        ramp_sha256_hex(b, size, hex);
        memcpy(digits, hex, 64);
        return 1;
    }
    return 0;
}

static inline int st_patch_i32(void *bytes, size_t size, const char *name,
                               int64_t index, int32_t value) {
    long off = st_elem_offset(bytes, size, name, index);
    if (off < 0) return 0;
    memcpy((uint8_t *)bytes + off, &value, 4);
    st_reseal(bytes, size);
    return 1;
}

static inline int st_patch_f32(void *bytes, size_t size, const char *name,
                               int64_t index, float value) {
    long off = st_elem_offset(bytes, size, name, index);
    if (off < 0) return 0;
    memcpy((uint8_t *)bytes + off, &value, 4);
    st_reseal(bytes, size);
    return 1;
}

typedef struct {
    const char *set_key;   /* metadata key to set (or remove) */
    const char *set_value; /* NULL: remove the key */
    const char *drop;      /* tensor to leave out */
    const char *replace;   /* tensor to replace by the next four fields */
    ramp_st_dtype dtype;
    int ndim;
    int64_t shape[RAMP_ST_MAX_DIMS];
    const void *data;
    const char *add;       /* extra tensor (U8 [1]) to add */
} st_edit;

/* Rebuilds a valid file with one edit; returns a malloc'd buffer or NULL. */
static inline void *st_rebuild(const void *bytes, size_t size,
                               const st_edit *ed, size_t *out_size) {
    ramp_st_file *f;
    if (ramp_st_parse(bytes, size, "rebuild", &f) != RAMP_OK) return NULL;
    ramp_st_writer *w;
    void *out = NULL;
    static const uint8_t one = 1;
    if (ramp_st_writer_create(&w) != RAMP_OK) {
        ramp_st_close(f);
        return NULL;
    }
    int ok = 1, set_done = 0, sealed = 0;
    for (int i = 0; ok && i < ramp_st_meta_count(f); i++) {
        const char *k = ramp_st_meta_key(f, i);
        const char *v = ramp_st_meta(f, k);
        /* The checksum is recomputed for the rebuilt file. */
        if (strcmp(k, RAMP_ST_CHECKSUM_KEY) == 0) {
            sealed = 1;
            continue;
        }
        if (ed->set_key && strcmp(k, ed->set_key) == 0) {
            set_done = 1;
            if (!ed->set_value) continue;
            v = ed->set_value;
        }
        ok = ramp_st_writer_meta(w, k, v) == RAMP_OK;
    }
    if (ok && ed->set_key && ed->set_value && !set_done)
        ok = ramp_st_writer_meta(w, ed->set_key, ed->set_value) == RAMP_OK;
    for (int i = 0; ok && i < ramp_st_count(f); i++) {
        const ramp_st_tensor *t = ramp_st_at(f, i);
        if (ed->drop && strcmp(t->name, ed->drop) == 0) continue;
        if (ed->replace && strcmp(t->name, ed->replace) == 0)
            ok = ramp_st_writer_add(w, t->name, ed->dtype, ed->ndim, ed->shape,
                                    ed->data) == RAMP_OK;
        else
            ok = ramp_st_writer_add(w, t->name, t->dtype, t->ndim, t->shape,
                                    t->data) == RAMP_OK;
    }
    if (ok && sealed) ok = ramp_st_writer_checksum(w) == RAMP_OK;
    if (ok && ed->add) {
        int64_t shape1 = 1;
        ok = ramp_st_writer_add(w, ed->add, RAMP_ST_U8, 1, &shape1, &one) ==
             RAMP_OK;
    }
    if (!ok || ramp_st_writer_to_memory(w, &out, out_size) != RAMP_OK)
        out = NULL;
    ramp_st_writer_free(w);
    ramp_st_close(f);
    return out;
}

/* Reads a whole file; NULL if it cannot. */
static inline void *st_slurp(const char *path, size_t *size) {
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    void *buf = malloc(n > 0 ? (size_t)n : 1);
    if (buf && fread(buf, 1, (size_t)n, fp) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(fp);
    *size = (size_t)n;
    return buf;
}

static inline int st_spit(const char *path, const void *bytes, size_t size) {
    FILE *fp = fopen(path, "wb");
    if (!fp) return 0;
    int ok = fwrite(bytes, 1, size, fp) == size;
    return fclose(fp) == 0 && ok;
}

static inline int st_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

/* Number of entries in dir whose name starts with prefix. */
#include <dirent.h>
static inline int st_count_prefix(const char *dir, const char *prefix) {
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) n++;
    closedir(d);
    return n;
}

#endif
