/*
 * fuzz_plan.c - libFuzzer target for the plan reader: any bytes must give
 * RAMP_OK with a plan that validates, or an error with a message; never a
 * crash, leak or read out of bounds.
 */
#include "ramp.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ramp_plan p;
    ramp_status s = ramp_plan_parse((const char *)data, size, "fuzz", &p);
    if (s == RAMP_OK) {
        if (ramp_plan_validate(&p) != RAMP_OK) abort();
        int32_t load[64] = {0};
        int n = p.geom.experts < 64 ? p.geom.experts : 64;
        for (int i = 0; i < n; i++) load[i] = (int32_t)(i * 7 % 13);
        int pick = ramp_plan_pick(&p, n, load);
        if (pick < 0 || pick >= p.count) abort();
    } else if (ramp_last_error()[0] == '\0') {
        abort();
    }
    return 0;
}
