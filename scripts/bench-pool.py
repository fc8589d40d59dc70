#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Several benchmark runs of one code side by side, and pooled.

    scripts/bench-pool.py [--rows REGEX] [LABEL=]DIR...

Each DIR is an output folder of scripts/bench.sh (results.csv, raw.csv),
for example the runs committed under Documentation/bench/. For every row of
the first run's results.csv (or those matching REGEX), prints the rust/C
ratio of each run, their geometric mean, in how many runs the target was
met, and the ratio of the medians of every round of every run pooled
(raw.csv's samples of the c and rust sets), with the target's verdict on
that pooled ratio and the rounds pooled per set.

One run is one boot of the two guests, and a row's ratio moves between
boots by more than most differences between two codes
(Documentation/benchmarks.rst): the pooled medians of several boots say
more than any one run, and the per-run ratios show how far they scatter.
Pool only runs of the same data path, whose commits the runs' env.txt
give.

With --host, for the runs that recorded the host's own CPU speed
(results.json "probes" with "host_slow": tests/bench/hostspeed.c, from
2026-12-07 22:04 on), also fits each cmtime step, over every round of
those runs, as each set's own time plus one cost common to the sets in
proportion to the share of the host's samples that were slow while the
round ran (least squares), and prints each set's mean share and its time
at the rounds' mean share: the sets compared at one speed of the host,
which the plain medians are not when the host's slow spells fell on one
set more than the other (Documentation/benchmarks.rst, "The host's two
speeds"). An estimate beside the pooled medians, not a verdict.
"""
import argparse
import csv
import json
import math
import os
import re
import signal
import statistics
import sys
from collections import defaultdict


def load(d):
    """A run's rows by metric (results.csv) and its samples by metric and
    set (raw.csv)."""
    with open(os.path.join(d, "results.csv"), newline="") as f:
        rows = {r["metric"]: r for r in csv.DictReader(f)}
    samples = defaultdict(lambda: defaultdict(list))
    with open(os.path.join(d, "raw.csv"), newline="") as f:
        for row in csv.reader(f):
            if len(row) != 4 or row[0] not in ("c", "rust"):
                continue
            try:
                samples[row[2]][row[0]].append(float(row[3]))
            except ValueError:
                pass  # a "na:" line: the reason a step was not measured
    return rows, samples


def solve(a, b):
    """x with a x = b (Gaussian elimination, partial pivoting); None when
    a is singular."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for col in range(n):
        piv = max(range(col, n), key=lambda r: abs(m[r][col]))
        if abs(m[piv][col]) < 1e-12:
            return None
        m[col], m[piv] = m[piv], m[col]
        for r in range(n):
            if r != col:
                f = m[r][col] / m[col][col]
                m[r] = [x - f * y for x, y in zip(m[r], m[col])]
    return [m[i][n] / m[i][i] for i in range(n)]


def host_fit(dirs):
    """Per cmtime and step: each set's rounds, mean slow share, and time
    at the fast host (own intercept per set, one common slope in the
    share), from the runs' results.json probes."""
    rounds = []
    for d in dirs:
        try:
            probes = json.load(open(os.path.join(d, "results.json"))).get("probes", [])
        except (OSError, ValueError):
            continue
        # scripts/bench-report.py's one figure for a round's share.
        rounds += [dict(x, share=x["host_slow"]["share"]) for x in probes
                   if isinstance(x.get("host_slow"), dict)]
    out = []
    for kind in sorted({x["kind"] for x in rounds}):
        for step in ("create_id", "create_qp", "connect", "disconnect"):
            pts = [(x["set"], x["share"], x["steps_us"][step]) for x in rounds
                   if x["kind"] == kind and step in x["steps_us"]]
            present = {s for s, _, _ in pts}
            sets = [s for s in ("c", "rust", "cm") if s in present] + sorted(present - {"c", "rust", "cm"})
            # Normal equations of y = a_set + b * share.
            rows = [[1.0 if s == t else 0.0 for t in sets] + [share] for s, share, _ in pts]
            k = len(sets) + 1
            ata = [[sum(r[i] * r[j] for r in rows) for j in range(k)] for i in range(k)]
            aty = [sum(r[i] * y for r, (_, _, y) in zip(rows, pts)) for i in range(k)]
            beta = solve(ata, aty)
            if beta is None:
                continue
            # Each set at the rounds' mean share: an interpolation, where
            # the fast host's speed (share 0) would be an extrapolation
            # for a set whose rounds mostly ran slow.
            mean_share = statistics.mean(sh for _, sh, _ in pts)
            per_set = {s: (sum(1 for t, _, _ in pts if t == s),
                           statistics.mean(sh for t, sh, _ in pts if t == s),
                           beta[i] + beta[-1] * mean_share)
                       for i, s in enumerate(sets)}
            out.append((kind, step, per_set, beta[-1], mean_share))
    return out


def print_host_fit(dirs):
    fits = host_fit(dirs)
    if not fits:
        print("\nno run here recorded the host's speed (results.json probes with host_slow)")
        return
    print("\ncmtime's steps at one speed of the host (fit over the rounds: each set's own time + slope x")
    print("the round's host slow share; each set evaluated at the rounds' mean share)")
    print(f"{'cmtime':12} {'step':10} {'set':4} {'rounds':>6} {'slow share':>10} {'at mean us':>10} {'set/C':>7}  {'slope us':>8}  mean share")
    for kind, step, per_set, slope, mean_share in fits:
        c = per_set.get("c")
        for s, (n, share, at_mean) in per_set.items():
            ratio = f"{at_mean / c[2]:.2f}" if c and s != "c" and c[2] > 0 else "-"
            print(f"{kind:12} {step:10} {s:4} {n:>6} {100 * share:>9.0f}% {at_mean:>10.1f} {ratio:>7}  "
                  f"{slope:>8.1f}  {100 * mean_share:.0f}%")


def met(ratio, better):
    return ratio >= 1.0 if better == "high" else ratio <= 1.0


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet when piped to head
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", default="", help="only the rows whose metric matches this regex")
    ap.add_argument("--host", action="store_true",
                    help="also the cmtime steps at the fast host's speed (runs with the host's speed)")
    ap.add_argument("runs", nargs="+", metavar="[LABEL=]DIR")
    args = ap.parse_args()
    runs = []
    for a in args.runs:
        label, _, d = a.rpartition("=")
        runs.append((label or os.path.basename(os.path.normpath(d)), d))
    loaded = [load(d) for _, d in runs]
    pooled = defaultdict(lambda: defaultdict(list))
    for _, samples in loaded:
        for metric, by_set in samples.items():
            for s, v in by_set.items():
                pooled[metric][s].extend(v)
    rx = re.compile(args.rows)
    # Rows with a target: the per-object memory, not the text or the link.
    metrics = [m for m in loaded[0][0] if rx.search(m) and not m.startswith(("module_text", "iperf3"))]
    w = max(5, *(len(label) for label, _ in runs))
    print(f"{'metric':32s} " + " ".join(f"{label:>{w}s}" for label, _ in runs)
          + "  geomean  runs met  pooled C  pooled rust  pooled  target  rounds C/rust")
    for m in metrics:
        better = loaded[0][0][m]["better"]
        ratios, cells, n_met = [], [], 0
        for rows, _ in loaded:
            r = rows.get(m)
            if r and r["ratio"]:
                ratio = float(r["ratio"])
                ratios.append(ratio)
                n_met += met(ratio, better)
                cells.append(f"{ratio:>{w}.2f}")
            else:
                cells.append(f"{'-':>{w}s}")
        positive = [x for x in ratios if x > 0]
        gm = math.exp(sum(map(math.log, positive)) / len(positive)) if positive else float("nan")
        c, rust = pooled[m].get("c", []), pooled[m].get("rust", [])
        if c and rust:
            cm, rm = statistics.median(c), statistics.median(rust)
            if cm:
                ratio = rm / cm
                verdict = "met" if met(ratio, better) else "MISSED"
            else:
                # C at zero: met only at zero when lower is better.
                ratio = float("nan")
                verdict = "met" if (better == "low" and rm == 0) or better == "high" else "MISSED"
            pooled_cells = f"{cm:>9.2f}  {rm:>11.2f}  {ratio:>6.2f}  {verdict:>6s}"
        else:
            pooled_cells = f"{'-':>9s}  {'-':>11s}  {'-':>6s}  {'-':>6s}"
        print(f"{m:32s} " + " ".join(cells)
              + f"  {gm:>7.2f}  {n_met:>3d}/{len(ratios):<4d}  {pooled_cells}  {len(c)}/{len(rust)}")
    if args.host:
        print_host_fit([d for _, d in runs])
    return 0


if __name__ == "__main__":
    sys.exit(main())
