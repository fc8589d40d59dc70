#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""bench-report.py DIR: the benchmark's table, CSV, JSON and figure.

Reads DIR/raw.csv (lines "set,round,metric,value" from scripts/bench.sh),
takes the median per set and metric, and writes:
  DIR/results.csv   metric, unit, better, c median, rust median, rust/C,
                    c min-max, rust min-max, ceiling, target met, and
                    in how many rounds rust alone fell short of C's
                    figure of the same round
  DIR/results.json  the same, plus the raw samples and DIR/env.txt
  DIR/bench.png     bandwidth against message size for both sets with the
                    link's ceiling, and latency bars
and prints the table. Lines "set,round,na:PATTERN,reason" say why a set has
no figure for the metrics matching PATTERN (a shell pattern); a row without a
set's figure shows n/a there with the reason. A metric's unit and direction come from its name's
suffix (_MBps, _kpps: higher is better; _us, _kB, _bytes: lower is better).
"""

import csv
import fnmatch
import json
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path

UNITS = {"MBps": ("MB/s", "high"), "kpps": ("kmsg/s", "high"), "us": ("us", "low"),
         "kB": ("kB", "low"), "bytes": ("bytes", "low")}


def unit_of(metric):
    return UNITS.get(metric.rsplit("_", 1)[-1], ("", "high"))


def main(d):
    d = Path(d)
    samples = defaultdict(lambda: defaultdict(list))
    by_round = defaultdict(dict)  # (metric, round) -> {set: value}
    na = defaultdict(list)  # set -> [(pattern, reason)], first recorded first
    for row in csv.reader(open(d / "raw.csv")):
        if len(row) < 4:
            continue
        s, _round, metric, value = row[0], row[1], row[2], ",".join(row[3:])
        if metric.startswith("na:"):
            if (metric[3:], value) not in na[s]:
                na[s].append((metric[3:], value))
            continue
        try:
            samples[metric][s].append(float(value))
            by_round[(metric, _round)][s] = float(value)
        except ValueError:
            pass
    def why(s, metric):
        return next((r for p, r in na[s] if fnmatch.fnmatchcase(metric, p)), "not measured")

    link = {m: statistics.median(v["link"]) for m, v in samples.items() if "link" in v}
    ceiling_mbps = link.get("iperf3_tcp_MBps")

    # The speed probes around each cmtime (tests/scenarios/bench.sh,
    # speed_probe): shown, not judged.
    probes = probe_rounds(by_round)
    host = host_speed(d)
    if host:
        for x in probes:
            x["host_slow"] = host["slow"](x["set"], x["round"], x["kind"])
        # Each set's mean share, per cmtime: how evenly the host's slow
        # spells fell on the sets in this run.
        shares = defaultdict(lambda: defaultdict(list))
        for x in probes:
            if x["host_slow"] is not None:
                shares[x["kind"]][x["set"]].append(x["host_slow"]["share"])
        host["cmtime_slow_share"] = {k: {s: round(statistics.mean(v), 2) for s, v in by_set.items()}
                                     for k, by_set in shares.items()}
    rows = []
    for metric in sorted(m for m in samples if "link" not in samples[m] and not PROBE_ROW.match(m)):
        unit, better = unit_of(metric)
        c = samples[metric].get("c", [])
        r = samples[metric].get("rust", [])
        cm = statistics.median(c) if c else None
        rm = statistics.median(r) if r else None
        ratio = rm / cm if cm and rm is not None else None
        met = None
        if ratio is not None:
            met = ratio >= 1.0 if better == "high" else ratio <= 1.0
        elif cm == 0 and rm is not None:
            # C at zero (memory the C driver does not take): no ratio; rust
            # meets the target only at zero too, or above it where higher
            # is better.
            met = rm == 0 if better == "low" else rm >= 0
        ceiling = ceiling_mbps if unit == "MB/s" else None
        # The rounds in which rust's figure alone, against C's of the same
        # round, falls short of the target: a median short in every round
        # is a gap; one short in a minority of them is the rounds' spread.
        pairs = [v for (m, _), v in by_round.items() if m == metric and "c" in v and "rust" in v]
        def short_of(c, r):
            if not c:
                return better == "low" and r > 0
            return r / c < 1.0 if better == "high" else r / c > 1.0
        short = sum(1 for v in pairs if short_of(v["c"], v["rust"]))
        rows.append({
            "metric": metric, "unit": unit, "better": better,
            "c_median": cm, "rust_median": rm, "ratio": ratio,
            "c_min": min(c) if c else None, "c_max": max(c) if c else None,
            "rust_min": min(r) if r else None, "rust_max": max(r) if r else None,
            "c_n": len(c), "rust_n": len(r), "ceiling": ceiling, "target_met": met,
            "c_na": None if c else why("c", metric),
            "rust_na": None if r else why("rust", metric),
            "rounds_short": short if pairs else None, "rounds_paired": len(pairs),
        })

    def f(x, p=2):
        return "-" if x is None else f"{x:.{p}f}"

    fields = list(rows[0].keys()) if rows else []
    with open(d / "results.csv", "w", newline="") as out:
        w = csv.DictWriter(out, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    env = (d / "env.txt").read_text() if (d / "env.txt").exists() else ""
    json.dump({"env": env, "link": link, "rows": rows, "na": na,
               "samples": {m: dict(v) for m, v in samples.items()},
               "probes": probes,
               "host_speed": host and {k: v for k, v in host.items() if k != "slow"}},
              open(d / "results.json", "w"), indent=1)

    print(env.rstrip())
    print(f"link ceiling: " + ", ".join(f"{k} {v:.1f}" for k, v in sorted(link.items())))
    hdr = f"{'metric':38} {'unit':6} {'C median':>10} {'rust median':>11} {'rust/C':>7}  {'C min-max':>19}  {'rust min-max':>19} {'ceiling':>8} target"
    print(hdr)
    print("-" * len(hdr))
    notes = []  # the n/a reasons, numbered in the table

    def median_or_na(x, s):
        if x[f"{s}_median"] is not None:
            return f(x[f"{s}_median"])
        reason = x[f"{s}_na"]
        if reason not in notes:
            notes.append(reason)
        return f"n/a [{notes.index(reason) + 1}]"

    for x in rows:
        spread_c = "-" if x["c_min"] is None else f"{f(x['c_min'])}-{f(x['c_max'])}"
        spread_r = "-" if x["rust_min"] is None else f"{f(x['rust_min'])}-{f(x['rust_max'])}"
        tgt = {None: "n/a", True: "met", False: "MISSED"}[x["target_met"]]
        if x["rounds_short"] is not None:
            tgt += f" ({x['rounds_short']}/{x['rounds_paired']} rounds short)"
        print(f"{x['metric']:38} {x['unit']:6} {median_or_na(x, 'c'):>10} {median_or_na(x, 'rust'):>11} "
              f"{f(x['ratio']):>7}  {spread_c:>19}  {spread_r:>19} {f(x['ceiling'], 1):>8} {tgt}")
    missing = [x["metric"] for x in rows if x["rust_median"] is None]
    if missing:
        print(f"no rust figure for {len(missing)} metrics (the set could not run them)")
    for i, n in enumerate(notes):
        print(f"n/a [{i + 1}]: {n}")

    print_probes(probes, host)
    draw(d, samples, ceiling_mbps)
    print(f"results: {d}/results.csv, results.json, bench.png")


PROBE_STEPS = ("create_id", "create_qp", "connect", "disconnect")
PROBES = ("user", "spawn")
# probe_<what>_<cmtime>_<when>_<guest>_us (tests/scenarios/bench.sh); the
# run of 2026-12-07 18:10 had probe_<cmtime>_<when>_<guest>_us, the user
# loop only, which matches too and is left out of the table.
PROBE_ROW = re.compile(r"probe_(?:(user|spawn)_)?(\w+?)_(before|after)_([ab])_us$")


def probe_rounds(by_round):
    """Each set's rounds of each cmtime (cmtime, cmtime_warm): the speed
    probes around it (us, by "<what>_<when>_<guest>") and some of its
    steps (us a connection; the cm set's are its ib_cm_ rows)."""
    out = []
    keys = sorted({(x.group(2), r) for (m, r) in by_round
                   for x in [PROBE_ROW.match(m)] if x and x.group(1)})
    for kind, rnd in keys:
        for s in ("c", "rust", "cm"):
            probe = {}
            for what in PROBES:
                for when in ("before", "after"):
                    for g in ("a", "b"):
                        v = by_round.get((f"probe_{what}_{kind}_{when}_{g}_us", rnd), {}).get(s)
                        if v is not None:
                            probe[f"{what}_{when}_{g}"] = v
            if not probe:
                continue
            steps = {}
            for st in PROBE_STEPS:
                m, key = f"{kind}_{st}_us", s
                if s == "cm":
                    m, key = f"ib_cm_{kind}_{st}_us", "rust"
                v = by_round.get((m, rnd), {}).get(key)
                if v is not None:
                    steps[st] = v
            out.append({"kind": kind, "round": rnd, "set": s, "probe_us": probe, "steps_us": steps})
    return out


def host_speed(d):
    """The host's CPUs' speed through the run (tests/bench/hostspeed.c,
    DIR/hostspeed.txt: "realtime_s cpu ns cpu_a cpu_b", the time of a
    fixed loop on host CPU cpu and the host CPUs the guests' vCPU threads
    were on) and, in "slow", a function giving for a set's round of a
    cmtime the share of it each guest ran on a host CPU at the slow speed
    ({"a": share, "b": share, "all": share of every CPU's samples}), from
    the marks guest b left in its run folder (<set>.<round>.<cmtime>.start
    and .end, whose times the host's file system set). A sample counts as
    slow above 1.3 times its CPU's 10th percentile over the run: on the
    machine of Documentation/benchmarks.rst ("The host's two speeds") the
    loop took either ~27 or ~50 us. A guest's share: at each sample, the
    latest sample of the CPU its vCPU was on (within 0.1 s). None without
    the file."""
    path = d / "hostspeed.txt"
    if not path.exists():
        return None
    samples = []  # (t, cpu, slow?, cpu_a, cpu_b)
    per_cpu = defaultdict(list)
    for line in path.read_text().splitlines():
        p = line.split()
        if len(p) in (3, 5):
            per_cpu[int(p[1])].append(float(p[2]))
            samples.append((float(p[0]), int(p[1]), float(p[2]),
                            *(int(x) for x in p[3:5])))
    if not per_cpu:
        return None
    fast = {c: sorted(v)[len(v) // 10] for c, v in per_cpu.items()}
    samples = [(t, c, ns > 1.3 * fast[c], *rest) for t, c, ns, *rest in samples]
    marks = d / "run" / "b" / "bench"

    def slow(s, rnd, kind):
        try:
            t0 = (marks / f"{s}.{rnd}.{kind}.start").stat().st_mtime
            t1 = (marks / f"{s}.{rnd}.{kind}.end").stat().st_mtime
        except OSError:
            return None
        w = [x for x in samples if t0 <= x[0] <= t1]
        if not w:
            return None
        out = {"all": round(sum(x[2] for x in w) / len(w), 2)}
        for g, col in (("a", 3), ("b", 4)):
            last = {}  # cpu -> (t, slow?) of its latest sample
            hits = []
            for x in samples:
                if x[0] > t1:
                    break
                last[x[1]] = (x[0], x[2])
                if x[0] >= t0 and len(x) > col and x[col] in last and x[0] - last[x[col]][0] <= 0.1:
                    hits.append(last[x[col]][1])
            if hits:
                out[g] = round(sum(hits) / len(hits), 2)
        # The one figure a round is compared by (bench-pool.py --host reads it).
        out["share"] = host_share(out)
        return out

    return {"fast_ns": {str(c): ns for c, ns in sorted(fast.items())},
            "slow_share": {str(c): round(statistics.mean(x[2] for x in samples if x[1] == c), 2)
                           for c in sorted(per_cpu)},
            "slow": slow}


def host_share(h):
    """One figure for a round's host slow share: the two guests' mean
    where the run knew on which CPU each ran, else every CPU's."""
    if "a" in h and "b" in h:
        return (h["a"] + h["b"]) / 2
    return h["all"]


def print_probes(rounds, host):
    if not rounds:
        return
    print()
    print("guest speed around each cmtime, ms: a user-space loop (user) and twenty runs of /bin/true")
    print("(spawn) on guests a and b, before/after; the same work in every set, so a high figure is")
    print("a slow moment of that guest, whichever set (Documentation/benchmarks.rst, \"The guests'")
    print("two speeds\"). Then cmtime's steps, us a connection.")
    if host:
        print("host slow: how much of that cmtime guests a/b ran on a host CPU at its slow speed (or, for")
        print("a run that did not record where the guests ran, the share of every CPU's samples slow;")
        print("tests/bench/hostspeed.c; over the whole run " + ", ".join(
            f"CPU {c} {100 * x:.0f}%" for c, x in host["slow_share"].items())
            + " of samples slow; \"The host's two speeds\").")
    cols = [(w, g) for w in PROBES for g in ("a", "b")]
    hdr = (f"{'cmtime':12} {'round':>5} {'set':4} "
           + " ".join(f"{w + ' ' + g:>11}" for w, g in cols) + "  "
           + (f"{'host slow':>9}  " if host else "")
           + " ".join(f"{st:>10}" for st in PROBE_STEPS))
    print(hdr)
    print("-" * len(hdr))
    for x in rounds:
        p, st = x["probe_us"], x["steps_us"]

        def cell(w, g):
            v = [p.get(f"{w}_{when}_{g}") for when in ("before", "after")]
            return "/".join("-" if y is None else f"{y / 1000:.0f}" for y in v)
        hs = ""
        if host:
            v = x.get("host_slow")
            if v is None:
                share = "-"
            elif "a" in v and "b" in v:
                share = f"{100 * v['a']:.0f}/{100 * v['b']:.0f}%"
            else:
                share = f"{100 * v['all']:.0f}%"
            hs = f"{share:>9}  "
        print(f"{x['kind']:12} {x['round']:>5} {x['set']:4} "
              + " ".join(f"{cell(w, g):>11}" for w, g in cols) + "  " + hs
              + " ".join(f"{st[s]:>10.1f}" if s in st else f"{'-':>10}" for s in PROBE_STEPS))
    if host:
        for kind, by_set in sorted(host["cmtime_slow_share"].items()):
            print(f"host slow while {kind} ran, mean over the rounds: "
                  + ", ".join(f"{s} {100 * v:.0f}%" for s, v in by_set.items()))


def draw(d, samples, ceiling):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (bw, lat) = plt.subplots(1, 2, figsize=(13, 5))
    sizes = [64, 4096, 65536, 1048576]
    drawn = set()
    for test, style in (("send", "-"), ("write", "--"), ("read", ":")):
        for s, color in (("c", "tab:blue"), ("rust", "tab:orange")):
            pts = [(z, statistics.median(samples[f"{test}_bw_{z}_MBps"][s]))
                   for z in sizes if samples.get(f"{test}_bw_{z}_MBps", {}).get(s)]
            if pts:
                drawn.add(s)
                bw.plot(*zip(*pts), style, marker="o", color=color, label=f"{s} {test}")
    if ceiling:
        bw.axhline(ceiling, color="grey", linestyle="-.", label="iperf3 TCP (link)")
    bw.set_xscale("log", base=2)
    bw.set_xlabel("message size (bytes)")
    bw.set_ylabel("MB/s (median)")
    bw.set_title("RC bandwidth")
    missing = [s for s in ("c", "rust") if s not in drawn]
    if missing:
        bw.text(0.02, 0.5, "no figures (n/a, see the table): " + ", ".join(missing),
                transform=bw.transAxes, fontsize=9, color="tab:red")
    bw.legend(fontsize=8)

    names = [f"{t}_lat_{z}_typ_us" for t in ("send", "write", "read") for z in (2, 4096)]
    x = range(len(names))
    for off, s, color in ((-0.2, "c", "tab:blue"), (0.2, "rust", "tab:orange")):
        vals = [statistics.median(samples[n][s]) if samples.get(n, {}).get(s) else 0 for n in names]
        lat.bar([i + off for i in x], vals, width=0.4, color=color,
                label=s if any(vals) else f"{s} (n/a)")
    lat.set_xticks(list(x))
    lat.set_xticklabels([n.replace("_typ_us", "") for n in names], rotation=30, fontsize=8)
    lat.set_ylabel("typical latency (us, median)")
    lat.set_title("latency")
    lat.legend()
    fig.suptitle("rust-rxe vs in-tree C rxe (TCG-emulated; only ratios carry over)")
    fig.tight_layout()
    fig.savefig(d / "bench.png", dpi=90)


if __name__ == "__main__":
    main(sys.argv[1])
