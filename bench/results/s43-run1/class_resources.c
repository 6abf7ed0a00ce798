/* s43-run1: the size-class kernels' registers and shared memory against the whole
 * menu's, each class's entries compiled as a plan of its own (NVRTC, sm_90a, no GPU).
 *   gcc -std=c11 -Iinclude bench/results/s43-run1/class_resources.c -Lbuild-rel -lramp \
 *       -Wl,-rpath,$PWD/build-rel -o /tmp/clsres && RAMP_KERNEL_DIR=$PWD/kernels /tmp/clsres PLAN.json */
#include "ramp.h"
#include <stdio.h>
#include <string.h>
static void row(const char *what, const ramp_plan *p) {
    ramp_device_limits lim; ramp_device_limits_h200(&lim);
    ramp_plan_compiled pc;
    if (ramp_plan_compile(p, 0, &lim, NULL, &pc)) { printf("%s: compile failed: %s\n", what, ramp_last_error()); return; }
    for (int i = 0; i < pc.nkernels; i++)
        printf("| %s | %s | %d | %d | %d/%d | %d |\n", what, pc.kernel[i], pc.report[i].registers,
               pc.dynamic_smem[i] + pc.report[i].smem_bytes, pc.report[i].spill_store_bytes, pc.report[i].spill_load_bytes, pc.res.valid && !pc.ptxas_warnings);
}
int main(int argc, char **argv) {
    ramp_plan p; if (ramp_plan_read(argv[1], &p)) return 1;
    int t[16]; unsigned m[16]; int n = ramp_plan_size_classes(&p, 4096, t, m);
    printf("| menu | kernel | regs | smem (bytes) | spill st/ld | valid |\n|---|---|---|---|---|---|\n");
    row("whole menu", &p);
    for (int c = 0; c < n; c++) {
        ramp_plan q = p; q.count = 0;
        char what[64]; snprintf(what, sizeof what, "class <= %d tokens", t[c]);
        for (int i = 0; i < p.count; i++) if ((m[c] >> i) & 1u) {
            q.configs[q.count] = p.configs[i]; memcpy(q.theta[q.count], p.theta[i], sizeof p.theta[i]); q.count++; }
        row(what, &q);
    }
    return 0;
}
