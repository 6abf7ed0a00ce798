/*
 * plot_svg.c - two plain SVG charts with no dependency: a scatter plot
 * (log-log for predicted against measured time, Figure 6b) and a grouped bar
 * chart (speedup per policy). Each has a title, axes with ticks and tick
 * labels, axis labels and a legend, and is written atomically, so a browser
 * can open the file as soon as it exists.
 */
#include "eval.h"

#include <math.h>
#include <string.h>

#define W 760.0
#define H 500.0

static const char *const PALETTE[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                      "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};

static void put_text(FILE *f, const char *s) {
    for (; s && *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\t') fputc(*s, f);
        }
    }
}

static void text_at(FILE *f, double x, double y, const char *anchor, int size,
                    const char *extra, const char *s) {
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%d\"%s%s>", x, y,
            anchor, size, extra ? " " : "", extra ? extra : "");
    put_text(f, s);
    fputs("</text>\n", f);
}

static void header(FILE *f, const char *title) {
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
               "viewBox=\"0 0 %.0f %.0f\" font-family=\"Helvetica, Arial, sans-serif\">\n",
            W, H, W, H);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n", W, H);
    text_at(f, W / 2, 24, "middle", 15, "font-weight=\"bold\"", title ? title : "");
}

/* A step of 1, 2 or 5 times a power of ten giving about `target` ticks. */
static double nice_step(double range, int target) {
    if (!(range > 0)) return 1;
    double raw = range / target, p = pow(10, floor(log10(raw))), m = raw / p;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

static void fmt_num(char *buf, size_t n, double v) {
    double a = fabs(v);
    if (v == 0) snprintf(buf, n, "0");
    else if (a >= 1e6 || a < 1e-3) snprintf(buf, n, "%.0e", v);
    else snprintf(buf, n, "%g", v);
}

typedef struct {
    double x0, x1, y0, y1;   /* plot area in pixels */
    double lo_x, hi_x, lo_y, hi_y;
    int logx, logy;
} frame;

static double px(const frame *fr, double v) {
    double t = fr->logx ? (log10(v) - fr->lo_x) / (fr->hi_x - fr->lo_x)
                        : (v - fr->lo_x) / (fr->hi_x - fr->lo_x);
    return fr->x0 + t * (fr->x1 - fr->x0);
}

static double py(const frame *fr, double v) {
    double t = fr->logy ? (log10(v) - fr->lo_y) / (fr->hi_y - fr->lo_y)
                        : (v - fr->lo_y) / (fr->hi_y - fr->lo_y);
    return fr->y1 - t * (fr->y1 - fr->y0);
}

static void axes(FILE *f, const frame *fr, const char *xlabel, const char *ylabel, int xticks) {
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
               "stroke=\"#333\"/>\n", fr->x0, fr->y0, fr->x1 - fr->x0, fr->y1 - fr->y0);
    char buf[32];
    /* y ticks */
    if (fr->logy) {
        int decades = (int)(fr->hi_y - fr->lo_y);
        for (int e = (int)fr->lo_y; e <= (int)fr->hi_y; e++)
            for (int m = 1; m <= 9; m++) {
                double v = m * pow(10, e);
                if (log10(v) > fr->hi_y + 1e-9) break;
                if (m > 1 && decades > 4) continue;
                double y = py(fr, v);
                fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n",
                        fr->x0 - (m == 1 ? 6 : 3), y, fr->x0, y);
                if (m == 1) {
                    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                               "stroke=\"#ddd\"/>\n", fr->x0, y, fr->x1, y);
                    fmt_num(buf, sizeof buf, v);
                    text_at(f, fr->x0 - 9, y + 4, "end", 11, NULL, buf);
                }
            }
    } else {
        double step = nice_step(fr->hi_y - fr->lo_y, 6);
        for (double v = ceil(fr->lo_y / step - 1e-9) * step; v <= fr->hi_y + 1e-9 * step; v += step) {
            double y = py(fr, v);
            fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n",
                    fr->x0 - 6, y, fr->x0, y);
            fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n",
                    fr->x0, y, fr->x1, y);
            fmt_num(buf, sizeof buf, fabs(v) < step * 1e-9 ? 0 : v);
            text_at(f, fr->x0 - 9, y + 4, "end", 11, NULL, buf);
        }
    }
    /* x ticks */
    if (xticks && fr->logx) {
        int decades = (int)(fr->hi_x - fr->lo_x);
        for (int e = (int)fr->lo_x; e <= (int)fr->hi_x; e++)
            for (int m = 1; m <= 9; m++) {
                double v = m * pow(10, e);
                if (log10(v) > fr->hi_x + 1e-9) break;
                if (m > 1 && decades > 4) continue;
                double x = px(fr, v);
                fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n",
                        x, fr->y1, x, fr->y1 + (m == 1 ? 6 : 3));
                if (m == 1) {
                    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                               "stroke=\"#ddd\"/>\n", x, fr->y0, x, fr->y1);
                    fmt_num(buf, sizeof buf, v);
                    text_at(f, x, fr->y1 + 20, "middle", 11, NULL, buf);
                }
            }
    } else if (xticks) {
        double step = nice_step(fr->hi_x - fr->lo_x, 6);
        for (double v = ceil(fr->lo_x / step - 1e-9) * step; v <= fr->hi_x + 1e-9 * step; v += step) {
            double x = px(fr, v);
            fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n",
                    x, fr->y1, x, fr->y1 + 6);
            fmt_num(buf, sizeof buf, fabs(v) < step * 1e-9 ? 0 : v);
            text_at(f, x, fr->y1 + 20, "middle", 11, NULL, buf);
        }
    }
    if (xlabel) text_at(f, (fr->x0 + fr->x1) / 2, H - 14, "middle", 13, NULL, xlabel);
    if (ylabel) {
        char tr[96];
        snprintf(tr, sizeof tr, "transform=\"rotate(-90 18 %.1f)\"", (fr->y0 + fr->y1) / 2);
        text_at(f, 18, (fr->y0 + fr->y1) / 2, "middle", 13, tr, ylabel);
    }
}

ramp_status ramp_svg_scatter(const char *path, const char *title,
                             const char *xlabel, const char *ylabel,
                             const double *x, const double *y, int64_t n,
                             int loglog, int diagonal) {
    RAMP_CHECK(path && (n == 0 || (x && y)) && n >= 0, RAMP_ERR_INVALID_ARGUMENT,
               "ramp_svg_scatter: NULL argument or n = %lld", (long long)n);
    double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
    int64_t kept = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(x[i]) || !isfinite(y[i])) continue;
        if (loglog && (x[i] <= 0 || y[i] <= 0)) continue;
        xmin = fmin(xmin, x[i]); xmax = fmax(xmax, x[i]);
        ymin = fmin(ymin, y[i]); ymax = fmax(ymax, y[i]);
        kept++;
    }
    if (!kept) { xmin = ymin = 1; xmax = ymax = 10; }
    if (diagonal) { /* one range on both axes, so y = x is the diagonal */
        xmin = ymin = fmin(xmin, ymin);
        xmax = ymax = fmax(xmax, ymax);
    }
    frame fr = {80, W - 30, 44, H - 60, 0, 0, 0, 0, loglog, loglog};
    if (loglog) {
        fr.lo_x = floor(log10(xmin)); fr.hi_x = ceil(log10(xmax));
        fr.lo_y = floor(log10(ymin)); fr.hi_y = ceil(log10(ymax));
        if (fr.hi_x <= fr.lo_x) fr.hi_x = fr.lo_x + 1;
        if (fr.hi_y <= fr.lo_y) fr.hi_y = fr.lo_y + 1;
    } else {
        double sx = nice_step(xmax - xmin, 6), sy = nice_step(ymax - ymin, 6);
        fr.lo_x = floor(xmin / sx) * sx; fr.hi_x = ceil(xmax / sx) * sx;
        fr.lo_y = floor(ymin / sy) * sy; fr.hi_y = ceil(ymax / sy) * sy;
        if (fr.hi_x <= fr.lo_x) fr.hi_x = fr.lo_x + 1;
        if (fr.hi_y <= fr.lo_y) fr.hi_y = fr.lo_y + 1;
    }
    ramp_outfile o;
    RAMP_TRY(ramp_outfile_open(&o, path));
    FILE *f = o.f;
    header(f, title);
    axes(f, &fr, xlabel, ylabel, 1);
    if (diagonal) {
        double lo = loglog ? pow(10, fmax(fr.lo_x, fr.lo_y)) : fmax(fr.lo_x, fr.lo_y);
        double hi = loglog ? pow(10, fmin(fr.hi_x, fr.hi_y)) : fmin(fr.hi_x, fr.hi_y);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#d62728\" "
                   "stroke-dasharray=\"6 4\"/>\n", px(&fr, lo), py(&fr, lo), px(&fr, hi), py(&fr, hi));
    }
    fputs("<g fill=\"#1f77b4\" fill-opacity=\"0.35\">\n", f);
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(x[i]) || !isfinite(y[i])) continue;
        if (loglog && (x[i] <= 0 || y[i] <= 0)) continue;
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2\"/>\n", px(&fr, x[i]), py(&fr, y[i]));
    }
    fputs("</g>\n", f);
    /* legend */
    double lx = fr.x0 + 12, ly = fr.y0 + 12;
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"230\" height=\"%d\" fill=\"white\" "
               "stroke=\"#999\"/>\n", lx, ly, diagonal ? 44 : 24);
    fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"#1f77b4\"/>\n", lx + 12, ly + 13);
    char buf[96];
    snprintf(buf, sizeof buf, "points (n = %lld)", (long long)kept);
    text_at(f, lx + 24, ly + 17, "start", 11, NULL, buf);
    if (diagonal) {
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#d62728\" "
                   "stroke-dasharray=\"6 4\"/>\n", lx + 4, ly + 33, lx + 20, ly + 33);
        text_at(f, lx + 24, ly + 37, "start", 11, NULL, "y = x");
    }
    fputs("</svg>\n", f);
    return ramp_outfile_commit(&o);
}

ramp_status ramp_svg_bars(const char *path, const char *title,
                          const char *ylabel, int ngroups,
                          const char *const *groups, int nseries,
                          const char *const *series, const double *values,
                          double reference) {
    RAMP_CHECK(path && ngroups >= 0 && nseries >= 1 && (ngroups == 0 || (groups && values)) &&
                   series,
               RAMP_ERR_INVALID_ARGUMENT, "ramp_svg_bars: NULL argument or bad counts (%d, %d)",
               ngroups, nseries);
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < ngroups * nseries; i++)
        if (isfinite(values[i])) { lo = fmin(lo, values[i]); hi = fmax(hi, values[i]); }
    /* Bars grow from the reference (speedup 1.0) when there is one, else 0. */
    double base = isfinite(reference) ? reference : 0;
    if (!isfinite(lo)) { lo = base; hi = base + 1; }
    lo = fmin(lo, base);
    hi = fmax(hi, base);
    double pad = (hi - lo) * 0.08;
    if (!(pad > 0)) pad = isfinite(reference) ? 0.05 : 1;
    double step = nice_step(hi - lo + 2 * pad, 6);
    frame fr = {80, W - 160, 44, H - 110, 0, 1, floor((lo - pad) / step) * step,
                ceil((hi + pad) / step) * step, 0, 0};
    if (!isfinite(reference) && lo >= 0) fr.lo_y = 0;
    ramp_outfile o;
    RAMP_TRY(ramp_outfile_open(&o, path));
    FILE *f = o.f;
    header(f, title);
    axes(f, &fr, NULL, ylabel, 0);
    double gw = ngroups ? (fr.x1 - fr.x0) / ngroups : 0, bw = gw * 0.8 / nseries;
    char buf[32];
    for (int g = 0; g < ngroups; g++) {
        for (int s = 0; s < nseries; s++) {
            double v = values[g * nseries + s];
            if (!isfinite(v)) continue;
            double x = fr.x0 + g * gw + gw * 0.1 + s * bw;
            double yv = py(&fr, v), yb = py(&fr, base);
            fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n",
                    x, fmin(yv, yb), bw * 0.92, fmax(fabs(yb - yv), 0.5),
                    PALETTE[s % (int)(sizeof PALETTE / sizeof PALETTE[0])]);
            snprintf(buf, sizeof buf, "%.2f", v);
            text_at(f, x + bw * 0.46, v >= base ? yv - 3 : yv + 11, "middle", 9, NULL, buf);
        }
        char tr[96];
        double cx = fr.x0 + (g + 0.5) * gw, cy = fr.y1 + 14;
        snprintf(tr, sizeof tr, "transform=\"rotate(-35 %.1f %.1f)\"", cx, cy);
        text_at(f, cx, cy, "end", 11, tr, groups[g] ? groups[g] : "");
    }
    if (isfinite(reference))
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\" "
                   "stroke-dasharray=\"5 4\"/>\n", fr.x0, py(&fr, reference), fr.x1,
                py(&fr, reference));
    /* legend, right of the plot */
    double lx = fr.x1 + 12, ly = fr.y0;
    for (int s = 0; s < nseries; s++) {
        fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/>\n", lx,
                ly + s * 20, PALETTE[s % (int)(sizeof PALETTE / sizeof PALETTE[0])]);
        text_at(f, lx + 18, ly + s * 20 + 10, "start", 11, NULL, series[s] ? series[s] : "");
    }
    fputs("</svg>\n", f);
    return ramp_outfile_commit(&o);
}
