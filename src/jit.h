/*
 * jit.h - private helpers of the NVRTC compiler front (jit.c) that other
 * modules and the tests use. The public part is ramp.h section 9.2.
 */
#ifndef RAMP_JIT_H
#define RAMP_JIT_H

#include "internal.h"

#include <stddef.h>
#include <stdint.h>

/* 64-bit FNV-1a, continued from h (start with RAMP_FNV_OFFSET). */
#define RAMP_FNV_OFFSET 0xcbf29ce484222325ULL
uint64_t ramp_fnv1a64(uint64_t h, const void *data, size_t size);

/* Folder of the kernel sources: $RAMP_KERNEL_DIR, else the build's default. */
const char *ramp_kernel_dir(void);

/* Cache folder ($RAMP_CACHE_DIR, $XDG_CACHE_HOME/ramp, ~/.cache/ramp) into
 * buf, created if missing; RAMP_ERR_IO if there is none or it cannot be made.
 * RAMP_ERR_NOT_FOUND when the cache is turned off (RAMP_JIT_CACHE=0). */
ramp_status ramp_jit_cache_dir(char *buf, size_t size);

/* Cache file of a program name and key in dir (for tests that corrupt it). */
void ramp_jit_cache_path(const char *dir, const char *name, uint64_t key,
                         char *buf, size_t size);

/* Reads a whole file into a NUL-terminated malloc'd buffer. */
ramp_status ramp_read_text_file(const char *path, char **text, size_t *size);

#endif /* RAMP_JIT_H */
