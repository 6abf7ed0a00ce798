/*
 * status.c - status names and the per-thread last-error message.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

static _Thread_local char last_error[4096];

const char *ramp_status_name(ramp_status s) {
    switch (s) {
    case RAMP_OK: return "RAMP_OK";
    case RAMP_ERR_INVALID_ARGUMENT: return "RAMP_ERR_INVALID_ARGUMENT";
    case RAMP_ERR_OUT_OF_MEMORY: return "RAMP_ERR_OUT_OF_MEMORY";
    case RAMP_ERR_IO: return "RAMP_ERR_IO";
    case RAMP_ERR_FORMAT: return "RAMP_ERR_FORMAT";
    case RAMP_ERR_NOT_FOUND: return "RAMP_ERR_NOT_FOUND";
    case RAMP_ERR_UNSUPPORTED: return "RAMP_ERR_UNSUPPORTED";
    case RAMP_ERR_NO_GPU: return "RAMP_ERR_NO_GPU";
    case RAMP_ERR_CUDA: return "RAMP_ERR_CUDA";
    case RAMP_ERR_COMPILE: return "RAMP_ERR_COMPILE";
    case RAMP_ERR_NUMERIC: return "RAMP_ERR_NUMERIC";
    case RAMP_ERR_INTERNAL: return "RAMP_ERR_INTERNAL";
    }
    return "RAMP_ERR_UNKNOWN";
}

const char *ramp_last_error(void) { return last_error; }

void ramp_clear_error(void) { last_error[0] = '\0'; }

ramp_status ramp_set_error(ramp_status s, const char *file, int line,
                           const char *fmt, ...) {
    /* Keep only the base name: messages are for users, not our tree. */
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    int n = snprintf(last_error, sizeof last_error, "%s:%d: ", base, line);
    if (n < 0 || (size_t)n >= sizeof last_error) n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error + n, sizeof last_error - (size_t)n, fmt, ap);
    va_end(ap);
    return s;
}

void *ramp_calloc(size_t count, size_t size) {
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p)
        ramp_set_error(RAMP_ERR_OUT_OF_MEMORY, __FILE__, __LINE__,
                       "out of memory allocating %zu x %zu bytes", count, size);
    return p;
}
