import csv, gzip, sys, statistics
from collections import defaultdict
def summarize(path, tag):
    rows = list(csv.reader(gzip.open(path, 'rt')))
    h = rows[0]; units = rows[1]; data = rows[2:]
    ix = {n: i for i, n in enumerate(h)}
    def col(*cands):
        for c in cands:
            if c in ix: return c
        return None
    keys = ['Kernel Name', col('launch__grid_size'), col('launch__cluster_dim_x','launch__cluster_size'),
            col('launch__shared_mem_config_size'), col('launch__shared_mem_per_block_dynamic')]
    keys = [k for k in keys if k]
    want = [c for c in ['gpu__time_duration.sum', 'dram__bytes_read.sum.per_second', 'dram__throughput.avg.pct_of_peak_sustained_elapsed',
            'l1tex__t_sector_hit_rate.pct', 'lts__t_sector_hit_rate.pct', 'l1tex__throughput.avg.pct_of_peak_sustained_active',
            'lts__throughput.avg.pct_of_peak_sustained_elapsed', 'l1tex__data_pipe_lsu_wavefronts_mem_shared.sum',
            'l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum', 'l1tex__m_xbar2l1tex_read_sectors.sum',
            'smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio',
            'smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio',
            'smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio',
            'smsp__average_warps_issue_stalled_wait_per_issue_active.ratio',
            'smsp__average_warps_issue_stalled_membar_per_issue_active.ratio',
            'smsp__average_warps_issue_stalled_sleeping_per_issue_active.ratio'] if c in ix]
    groups = defaultdict(list)
    for r in data:
        groups[tuple(r[ix[k]] for k in keys)].append(r)
    print(f"{tag}: {len(data)} kernels; keys {keys}")
    print("   units:", {c: units[ix[c]] for c in want})
    for g, rs in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        def med(c):
            v = [float(r[ix[c]].replace(',', '')) for r in rs if r[ix[c]] not in ('', 'n/a')]
            return statistics.median(v) if v else float('nan')
        print("  ", g, len(rs), " ".join(f"{c.split('.')[0].replace('smsp__average_warps_issue_stalled_','st_')}={med(c):.3g}" for c in want))
for a in sys.argv[1:]:
    summarize(a, a)
