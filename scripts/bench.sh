#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The benchmark: this project's modules against the in-tree C ones, side by
# side in one run.
#
#   scripts/bench.sh [--rounds N] [--out DIR] [--link nodelay|tcp]
#
# Boots the two guests once on the `bench` kernel and alternates the module
# sets in the same guests (c rust cm, rust cm c, cm c rust, ...: N rounds,
# default 3, each starting one set further; cm: the C modules over this project's ib_cm, cmtime only),
# running perftest bandwidth/message rate/latency, cmtime, the link's ceiling
# (iperf3) and loopback, and the memory per object (tests/bench/objmem.c).
# Prints a table (metric, C median, rust median, rust/C, spread, ceiling)
# and writes results.csv, results.json and bench.png to the output directory
# (default $RRXE_CACHE/results/bench-<date>), with env.txt saying where it
# ran. The figures are TCG-emulated: only the ratios carry over.
# The guests' link is a TCP connection with Nagle's algorithm off
# (--link nodelay, the default; tcp: QEMU's own stream, whose held-back
# frames put 20-45 ms into every exchange of two frames in a row).
# The guests boot with norandmaps (--randmaps: without): TCG keys its
# translated code by virtual address, so with address-space randomization
# every process the guests start (perftest, cmtime, the scenario's own
# tools) has its libraries translated anew, ~8 MB of host code a second
# per guest and the whole 1 GiB translation buffer flushed every two
# minutes, host CPU both sets' measurements compete with; without it
# ~0.1 MB/s and no flush (Documentation/benchmarks.rst, "Translated code
# and the guests' address-space randomization"). The drivers run in the
# kernel, whose own layout this does not change.
# RRXE_GUEST_APPEND adds more guest kernel parameters.
# RRXE_BENCH_CALLS=1 times each cmtime's calls into the RDMA devices on
# both sides (tests/bench/calltrace.c, preloaded; files
# run/{a,b}/bench/<set>.<round>[.warm].{srv,cli}.calls, read by
# tests/bench/calltrace-report.py): for finding where a set's connect
# step waits, off by default (it adds two clock reads a call).
# RRXE_BENCH_MODDIR=DIR takes the rust set's rdma_rxe.ko, rdma_ucm.ko and
# ib_cm.ko from DIR instead of building this checkout's: a yardstick, e.g.
# the C modules built with one change (Documentation/benchmarks.rst, "The
# tasks' workqueue at high priority").

. "$(dirname "$0")/lib.sh"

rounds=3
out=
link=nodelay
randmaps=norandmaps
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) rounds=${2:?}; shift 2 ;;
	--out) out=${2:?}; shift 2 ;;
	--link) link=${2:?}; shift 2 ;;
	--randmaps) randmaps=; shift ;;
	*) die "usage: $0 [--rounds N] [--out DIR] [--link nodelay|tcp] [--randmaps]" ;;
	esac
done
case $link in nodelay|tcp) ;; *) die "--link: nodelay or tcp, not '$link'" ;; esac
out=${out:-$RRXE_CACHE/results/bench-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
out=$(cd "$out" && pwd)

# matplotlib draws the figure; libibverbs-dev and gcc build objmem,
# librdmacm-dev cmids and calltrace.so (for tests/scenarios/bench_profile.sh's
# PROF_OP=cmids and PROF_CALLS=1).
RRXE_EXTRA_PKGS="python3-matplotlib libibverbs-dev librdmacm-dev gcc" "$RRXE_REPO/scripts/setup.sh"
KB=$("$RRXE_REPO/scripts/build-kernel.sh" bench)
MODDIR=${RRXE_BENCH_MODDIR:-$("$RRXE_REPO/scripts/build-modules.sh" bench)}

# Under the cache, which the guests see (they mount tmpfs over /tmp, /var/tmp).
bin=$RRXE_CACHE/bench-bin
mkdir -p "$bin"
gcc -O2 -Wall -Werror -o "$bin/objmem" "$RRXE_REPO/tests/bench/objmem.c" -libverbs ||
	die "cannot build tests/bench/objmem.c"
# Not measured by the benchmark: a failure here only warns.
gcc -O2 -Wall -Werror -o "$bin/cmids" "$RRXE_REPO/tests/bench/cmids.c" -lrdmacm ||
	log "cannot build tests/bench/cmids.c (only bench_profile.sh's PROF_OP=cmids needs it)"
gcc -O2 -Wall -Werror -o "$bin/hostspeed" "$RRXE_REPO/tests/bench/hostspeed.c" ||
	die "cannot build tests/bench/hostspeed.c"
gcc -O2 -Wall -Werror -shared -fPIC -o "$bin/calltrace.so" "$RRXE_REPO/tests/bench/calltrace.c" -ldl ||
	log "cannot build tests/bench/calltrace.c (only bench_profile.sh's PROF_CALLS=1 needs it)"

# Where and on what this ran.
krel=$(ls "$KB/modinst/lib/modules")
{
	echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "host CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs"
	echo "host load before: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "QEMU: $(qemu-system-x86_64 --version | head -n1), TCG${RRXE_QEMU_ACCEL:+ ($RRXE_QEMU_ACCEL)}, 1 vCPU and 2 GiB per guest"
	echo "link: $link (a TCP connection on 127.0.0.1$([ "$link" = nodelay ] && echo ', TCP_NODELAY on both ends' || echo ", QEMU's listen=/connect=, Nagle on"))"
	echo "guest kernel: $krel (bench config, $KB)"
	echo "kernel build: $(grep -m1 '^CONFIG_CC_VERSION_TEXT=' "$KB/.config" | cut -d'"' -f2); $(grep -o '^CONFIG_CC_OPTIMIZE_FOR_[A-Z]*=y\|^CONFIG_RUST_INLINE_HELPERS=y\|^CONFIG_CRC_OPTIMIZATIONS=y' "$KB/.config" | tr '\n' ' ')"
	echo "rounds: $rounds; sets alternate c, rust, cm (C rxe over this ib_cm: cmtime only) in the same two guests, each round starting one set further"
	echo "commit: $(git -C "$RRXE_REPO" describe --always --dirty 2>/dev/null)"
	[ -z "${RRXE_BENCH_MODDIR:-}" ] ||
		echo "rust set's modules: $MODDIR (RRXE_BENCH_MODDIR), not this commit's"
	echo "note: figures are TCG-emulated; only the rust/C ratios carry over"
} >"$out/env.txt"

# Module text sizes (host side: the same files the guests load).
ktext() { size -A "$1" 2>/dev/null | awk '$1 ~ /^\.text/ { s += $2 } END { print s }'; }
cmod=$KB/modinst/lib/modules/$krel/kernel/drivers/infiniband
{
	echo "c,0,module_text_rdma_rxe_bytes,$(ktext "$cmod/sw/rxe/rdma_rxe.ko")"
	echo "rust,0,module_text_rdma_rxe_bytes,$(ktext "$MODDIR/rdma_rxe.ko")"
	echo "c,0,module_text_rdma_ucm_bytes,$(ktext "$cmod/core/rdma_ucm.ko")"
	echo "rust,0,module_text_rdma_ucm_bytes,$(ktext "$MODDIR/rdma_ucm.ko")"
	echo "c,0,module_text_ib_cm_bytes,$(ktext "$cmod/core/ib_cm.ko")"
	echo "rust,0,module_text_ib_cm_bytes,$(ktext "$MODDIR/ib_cm.ko")"
} >"$out/host.csv"

# The guests' TSC runs at the host's (TCG reads the host's counter) but a
# tinyconfig guest cannot calibrate it (no HPET/PM timer): tell it, so the
# guest has a fine clock and perftest a CPU frequency (else it prints 0.00).
tsc_khz=$(awk '/^cpu MHz/ { printf "%d", $4 * 1000; exit }' /proc/cpuinfo)
append="tsc_early_khz=$tsc_khz${randmaps:+ $randmaps}${RRXE_GUEST_APPEND:+ $RRXE_GUEST_APPEND}"
echo "guest kernel parameters added: $append" >>"$out/env.txt"
[ -z "${RRXE_BENCH_CALLS:-}" ] ||
	echo "cmtime's calls timed on both sides (RRXE_BENCH_CALLS=1, tests/bench/calltrace.c)" >>"$out/env.txt"
log "benchmark: $rounds rounds, results in $out"
start=$(date +%s)
# The host's own CPUs' speed meanwhile (hostspeed.txt): on a shared host
# it changes under the guests (Documentation/benchmarks.rst, "The host's
# two speeds"), and the report says how much of each cmtime ran slow.
rm -f "$out/hostspeed.stop"
"$bin/hostspeed" "$out/hostspeed.txt" "$out/hostspeed.stop" &
hostspeed=$!
# Whatever way this script ends, the sampler ends with it.
trap ': >"$out/hostspeed.stop"' EXIT
RRXE_LINK=$link \
RRXE_GUEST_APPEND="$append" \
RRXE_GUEST_ENV="export BENCH_ROUNDS=$rounds BENCH_BIN=$bin${RRXE_BENCH_CALLS:+ BENCH_CALLS=1}" \
RRXE_GUEST_TIMEOUT=3300 \
	"$RRXE_REPO/tests/guest/run-pair.sh" "$out/run" "$KB" "$MODDIR" bench bench bench
: >"$out/hostspeed.stop"
wait $hostspeed || log "warning: tests/bench/hostspeed.c ended with status $?"
# A failed guest run still reports what it measured (and says it failed).
for r in a b; do
	st=$(cat "$out/run/$r/bench.status" 2>/dev/null || echo "FAIL no status (guest $r did not finish)")
	echo "guest $r: $st" >>"$out/env.txt"
	case $st in PASS*) ;; *) log "warning: guest $r: $st" ;; esac
done
echo "wall time: $(($(date +%s) - start)) s for the guest part" >>"$out/env.txt"
echo "host load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/env.txt"
[ -s "$out/run/b/bench.csv" ] || die "no results from the guests; see $out/run/b/bench.log"

cat "$out/run/a/bench.csv" "$out/run/b/bench.csv" "$out/host.csv" >"$out/raw.csv"
/usr/bin/python3 "$RRXE_REPO/scripts/bench-report.py" "$out"
