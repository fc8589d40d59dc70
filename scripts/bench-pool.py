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
"""
import argparse
import csv
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


def met(ratio, better):
    return ratio >= 1.0 if better == "high" else ratio <= 1.0


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet when piped to head
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", default="", help="only the rows whose metric matches this regex")
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
