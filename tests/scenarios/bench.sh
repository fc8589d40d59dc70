# The guest side of the benchmark (scripts/bench.sh); not part of any test
# set. Both guests boot once; for each round, each module set in turn
# (c, rust, c, rust, ...) is loaded, rxe0 created, and every measurement run
# between the two guests (guest a serves, guest b is the client and records).
# Results are lines "set,round,metric,value" in $RUN/<role>/bench.csv; a step that
# fails records nothing and says why in the log, so one broken row does not
# stop the rest.
# timeout: 3000

BENCH_ROUNDS=${BENCH_ROUNDS:-3}
BENCH_SETS=${BENCH_SETS:-"c rust"}
CSV=$RUN/$ROLE/bench.csv
KREL=$(uname -r)
: >"$CSV"
# The tools' own outputs are kept next to the results.
mkdir -p "$RUN/$ROLE/bench"
cd "$RUN/$ROLE/bench" || exit 1

say() { echo "[$(date +%T)] $*"; }
record() { echo "$SET,$ROUND,$1,$2" >>"$CSV"; }

# use_set c|rust: this guest's RDMA modules become the set's (this project's
# in updates/, which depmod prefers, or none there for the in-tree ones).
use_set() {
	rdma link delete rxe0 2>/dev/null
	modprobe -r rdma_ucm rdma_rxe 2>/dev/null
	rm -f "/lib/modules/$KREL/updates/"*.ko
	[ "$1" = rust ] && cp "$RUST_KO_DIR"/rdma_rxe.ko "$RUST_KO_DIR"/rdma_ucm.ko "/lib/modules/$KREL/updates/"
	depmod -a
	modprobe ib_uverbs && modprobe rdma_rxe && modprobe rdma_ucm || return 1
	rdma link add rxe0 type rxe netdev eth0 || return 1
	wait_gid rxe0 "$MYIP" || return 1
	for _ in $(seq 50); do
		grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state && return 0
		sleep 0.2
	done
	return 1
}

# run2 NAME LIMIT SERVER... -- CLIENT...: SERVER runs in guest a, CLIENT in
# guest b once the server is up; b's output is left in NAME.out. Returns the
# client's status in b (0 in a).
STEP=0
run2() {
	local name=$1 limit=$2 rc srv=() cli=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	STEP=$((STEP + 1))
	local tag="$SET.$ROUND.$STEP"
	if [ "$ROLE" = a ]; then
		timeout "$limit" "${srv[@]}" >"$name.srv" 2>&1 &
		local pid=$!
		sleep 1
		notify "ready.$tag"
		await "done.$tag" $((limit + 20)) >/dev/null
		kill $pid 2>/dev/null
		wait $pid
		return 0
	fi
	await "ready.$tag" 60 >/dev/null || return 1
	sleep 0.3
	timeout "$limit" "${cli[@]}" >"$name.out" 2>&1
	rc=$?
	notify "done.$tag"
	[ $rc = 0 ] || say "$name failed ($rc): $(tail -n1 "$name.out")"
	return $rc
}

# pair NAME LIMIT CMD...: a perftest-style tool, the client being the same
# command with the server's address appended.
pair() {
	local name=$1 limit=$2
	shift 2
	run2 "$name" "$limit" "$@" -- "$@" "$PEERIP"
}

# perftest's result line: the first line that starts with the message size.
result_line() { awk -v s="$2" '$1 == s && NF >= 4 { print; exit }' "$1"; }

bw() { # TEST SIZE ITERS [EXTRA...]
	local t=$1 s=$2 n=$3 line
	shift 3
	pair "$t-$s" 60 "ib_${t}_bw" -d rxe0 -x "$GIDX" -s "$s" -n "$n" -F "$@" || return
	[ "$ROLE" = b ] || return
	line=$(result_line "$t-$s.out" "$s")
	[ -n "$line" ] || { say "no result from ib_${t}_bw -s $s"; return; }
	# #bytes #iterations BW peak BW average MsgRate[Mpps]
	record "${t}_bw_${s}${SUFFIX:-}_MBps" "$(echo "$line" | awk '{print $4}')"
	record "${t}_rate_${s}${SUFFIX:-}_kpps" "$(echo "$line" | awk '{print $5 * 1000}')"
}

lat() { # TEST SIZE ITERS
	local t=$1 s=$2 n=$3 line
	pair "$t-lat-$s" 90 "ib_${t}_lat" -d rxe0 -x "$GIDX" -s "$s" -n "$n" -F || return
	[ "$ROLE" = b ] || return
	line=$(result_line "$t-lat-$s.out" "$s")
	[ -n "$line" ] || { say "no result from ib_${t}_lat -s $s"; return; }
	# #bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9%
	record "${t}_lat_${s}_typ_us" "$(echo "$line" | awk '{print $5}')"
	record "${t}_lat_${s}_p99_us" "$(echo "$line" | awk '{print $8}')"
}

cm_setup() { # cmtime -c N: every step's time per connection (us)
	run2 cmtime 240 cmtime -b "$MYIP" -c "$1" -- cmtime -s "$PEERIP" -c "$1" || return
	[ "$ROLE" = b ] || return
	# "create id    :  total ms  max ms  min us  us / conn"
	awk -F: 'NF == 2 && $2 ~ /[0-9]/ { n = $1; gsub(/^ +| +$/, "", n); gsub(/ /, "_", n);
		split($2, v, " "); print n, v[4] }' cmtime.out |
		while read -r step us; do record "cmtime_${step}_us" "$us"; done
}

# Slab and vmalloc growth per 1000 objects, from tests/bench's objmem.
objmem() {
	[ -x "$BENCH_BIN/objmem" ] || { say "objmem not built"; return; }
	"$BENCH_BIN/objmem" rxe0 1000 >objmem.out 2>&1 || { say "objmem: $(tail -n1 objmem.out)"; return; }
	awk '{ print $1, $2 }' objmem.out | while read -r k v; do record "$k" "$v"; done
}

# The same perftest in loopback on guest a (client and server on rxe0).
loopback() {
	[ "$ROLE" = a ] || return
	timeout 60 ib_send_bw -d rxe0 -x "$GIDX" -s 65536 -n 200 -F >lo.srv 2>&1 &
	sleep 1
	timeout 60 ib_send_bw -d rxe0 -x "$GIDX" -s 65536 -n 200 -F "$MYIP" >lo.out 2>&1 ||
		{ say "loopback failed: $(tail -n1 lo.out)"; wait; return; }
	wait
	local line
	line=$(result_line lo.out 65536)
	[ -n "$line" ] && record send_bw_65536_loopback_MBps "$(echo "$line" | awk '{print $4}')"
}

# The link's own ceiling, once (it does not depend on the RDMA modules).
ceiling() {
	SET=link ROUND=0
	run2 iperf-tcp 40 iperf3 -s -1 -- iperf3 -c "$PEERIP" -t 3 -J
	run2 iperf-udp 40 iperf3 -s -1 -- iperf3 -c "$PEERIP" -u -b 0 -t 3 -J
	[ "$ROLE" = b ] || return 0
	python3 - "$CSV" <<'PY'
import json, sys
out = open(sys.argv[1], "a")
for name in ("tcp", "udp"):
    try:
        end = json.load(open(f"iperf-{name}.out"))["end"]
        bps = (end.get("sum_received") or end["sum"])["bits_per_second"]
        out.write(f"link,0,iperf3_{name}_MBps,{bps / 8e6:.2f}\n")
    except Exception as e:
        print(f"iperf3 {name}: {e}")
PY
}

say "guest CPU:$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(grep -m1 'cpu MHz' /proc/cpuinfo | cut -d: -f2) MHz, kernel $KREL, clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
ceiling
for ROUND in $(seq "$BENCH_ROUNDS"); do
	for SET in $BENCH_SETS; do
		say "round $ROUND, set $SET"
		barrier "set.$SET.$ROUND" 120 >/dev/null || exit 1
		if ! use_set "$SET"; then
			say "set $SET: cannot bring up rxe0"
			notify "ok.$SET.$ROUND"
			continue
		fi
		GIDX=$(gid_index_v4 rxe0 "$MYIP")
		barrier "up.$SET.$ROUND" 120 >/dev/null || exit 1
		# A short probe: a set that cannot carry data yet records only
		# what needs no traffic.
		if pair probe 30 ib_send_bw -d rxe0 -x "$GIDX" -s 4096 -n 20 -F; then
			ok=1
		else
			ok=0
		fi
		[ "$ROLE" = b ] && echo "$ok" >"$SYNC/bench.ok.$SET.$ROUND"
		barrier "probe.$SET.$ROUND" 120 >/dev/null
		read -r ok <"$SYNC/bench.ok.$SET.$ROUND"
		if [ "$ok" = 1 ]; then
			for t in send write read; do
				bw "$t" 64 5000
				bw "$t" 4096 2000
				bw "$t" 65536 200
				bw "$t" 1048576 20
			done
			pair atomic 60 ib_atomic_bw -d rxe0 -x "$GIDX" -n 2000 -F &&
				[ "$ROLE" = b ] && record atomic_rate_kpps "$(result_line atomic.out 8 | awk '{print $5 * 1000}')"
			SUFFIX=_q4 bw send 65536 200 -q 4
			for t in send write read; do
				lat "$t" 2 200
				lat "$t" 4096 100
			done
			cm_setup 100
			loopback
		else
			say "set $SET carries no data: only memory and size are measured"
		fi
		[ "$ROLE" = a ] && objmem
		barrier "end.$SET.$ROUND" 600 >/dev/null
	done
done
rdma link delete rxe0 2>/dev/null
modprobe -r rdma_ucm rdma_rxe 2>/dev/null
rm -f "/lib/modules/$KREL/updates/"*.ko
say "done"
exit 0
