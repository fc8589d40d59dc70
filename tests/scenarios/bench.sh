# The guest side of the benchmark (scripts/bench.sh); not part of any test
# set. Both guests boot once; for each round, each module set in turn
# (c rust cm, then rust cm c, then cm c rust: each round starts one set
# further, so no set always comes first) is loaded, rxe0 created, and every measurement run
# between the two guests (guest a serves, guest b is the client and records).
# Results are lines "set,round,metric,value" in $RUN/<role>/bench.csv; a step that
# fails records "set,round,na:metric,reason" instead (the report shows n/a
# with the reason), so one broken row does not stop the rest. Every step is
# bounded in time, the rust set's more tightly (BENCH_RUST_LIMIT, default 30 s:
# a few times what the C set needs), and after two timed-out steps in a
# round a set's remaining traffic steps are skipped.
# timeout: 3000

BENCH_ROUNDS=${BENCH_ROUNDS:-3}
# cm: the in-tree C rdma_rxe, rdma_cm and rdma_ucm over this project's
# ib_cm; only cmtime runs there, recorded as ib_cm_cmtime_* against the c
# set's cmtime (the connection manager alone differs).
BENCH_SETS=${BENCH_SETS:-"c rust cm"}
BENCH_RUST_LIMIT=${BENCH_RUST_LIMIT:-30}
CSV=$RUN/$ROLE/bench.csv
KREL=$(uname -r)
: >"$CSV"
# The tools' own outputs are kept next to the results.
mkdir -p "$RUN/$ROLE/bench"
cd "$RUN/$ROLE/bench" || exit 1

say() { echo "[$(date +%T)] $*"; }
record() { echo "$SET,$ROUND,$1,$2" >>"$CSV"; }
# na METRIC... -- REASON: the metrics (shell patterns) have no figure for
# this set and round, and why.
na() {
	local m=() why
	while [ "$1" != -- ]; do m+=("$1"); shift; done
	shift
	why=$(echo "$*" | tr ',\n' '; ' | sed 's/ *$//' | cut -c1-160)
	for x in "${m[@]}"; do echo "$SET,$ROUND,na:$x,$why" >>"$CSV"; done
}
# The time bound of a step: the rust set's is short (it may have no data
# path: a step must fail fast, not hang the run).
limit() {
	if [ "$SET" = rust ] && [ "$1" -gt "$BENCH_RUST_LIMIT" ]; then
		echo "$BENCH_RUST_LIMIT"
	else
		echo "$1"
	fi
}
# Why a client failed, from its status and output.
why() { # RC FILE
	case $1 in
	124|137) echo "timed out after $LAST_LIMIT s" ;;
	*) echo "exit status $1: $(tail -n1 "$2" 2>/dev/null)" ;;
	esac
}

# hw_moved STEP BEFORE: what the step moved (BEFORE: hw_counters' lines then),
# as "set,round,step,counter,delta" lines in $RUN/<role>/counters.csv: the
# retransmissions, sequence errors and drops behind a slow transfer.
hw_moved() {
	hw_counters | HW0=$2 awk -v pre="$SET,$ROUND,$1" '
		BEGIN { n = split(ENVIRON["HW0"], l, "\n")
			for (i = 1; i <= n; i++) { split(l[i], f, " "); b[f[1]] = f[2] } }
		$1 != "lifespan" && $2 != b[$1] { print pre "," $1 "," $2 - b[$1] }' >>"$RUN/$ROLE/counters.csv"
}

# run2 NAME LIMIT SERVER... -- CLIENT...: SERVER runs in guest a, CLIENT in
# guest b once the server is up; b's output is left in NAME.out. Returns the
# client's status in b (0 in a), 2 in both if the step was skipped (then
# SKIP_WHY says why). LIMIT is cut to the set's bound (limit()).
STEP=0
run2() {
	local name=$1 limit rc srv=() cli=() hw0
	limit=$(limit "$2")
	LAST_LIMIT=$limit
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	STEP=$((STEP + 1))
	local tag="$SET.$ROUND.$STEP"
	# Written by b before its "done" of a step, so both guests see it at
	# the same step.
	if [ -e "$SYNC/bench.skip.$SET.$ROUND" ]; then
		SKIP_WHY="skipped: two earlier steps of this round timed out"
		return 2
	fi
	hw0=$(hw_counters)
	if [ "$ROLE" = a ]; then
		timeout -k 5 "$limit" "${srv[@]}" >"$name.srv" 2>&1 &
		local pid=$!
		sleep 1
		notify "ready.$tag"
		await "done.$tag" $((limit + 20)) >/dev/null
		kill $pid 2>/dev/null
		wait $pid
		hw_moved "$name" "$hw0"
		return 0
	fi
	await "ready.$tag" 60 >/dev/null || return 1
	sleep 0.3
	timeout -k 5 "$limit" "${cli[@]}" >"$name.out" 2>&1
	rc=$?
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		TIMEOUTS=$((TIMEOUTS + 1))
		[ "$TIMEOUTS" -lt 2 ] || : >"$SYNC/bench.skip.$SET.$ROUND"
	fi
	notify "done.$tag"
	hw_moved "$name" "$hw0"
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

# fail_step RC OUT TOOL METRIC...: a client step failed (or was skipped).
fail_step() {
	local rc=$1 out=$2 tool=$3
	shift 3
	if [ "$rc" = 2 ] && [ -n "${SKIP_WHY:-}" ]; then
		na "$@" -- "$SKIP_WHY"
	else
		na "$@" -- "$tool: $(why "$rc" "$out")"
	fi
}

# figures OUT SIZE TOOL METRIC...: perftest_result (lib.sh), or, when OUT
# holds no figure, each METRIC recorded as n/a with the reason; status 1.
figures() {
	local out=$1 s=$2 tool=$3
	shift 3
	perftest_result "$out" "$s" && return 0
	say "$tool -s $s: $PERFTEST_WHY"
	na "$@" -- "$tool: $PERFTEST_WHY"
	return 1
}

bw() { # TEST SIZE ITERS [EXTRA...]
	local t=$1 s=$2 n=$3 line
	shift 3
	local ms="${t}_bw_${s}${SUFFIX:-}_MBps ${t}_rate_${s}${SUFFIX:-}_kpps" rc
	pair "$t-$s" 60 "ib_${t}_bw" -d rxe0 -x "$GIDX" -s "$s" -n "$n" -F "$@"
	rc=$?
	[ "$ROLE" = b ] || return
	[ $rc = 0 ] || { fail_step $rc "$t-$s.out" "ib_${t}_bw" $ms; return; }
	figures "$t-$s.out" "$s" "ib_${t}_bw" $ms || return
	line=$PERFTEST_LINE
	# #bytes #iterations BW peak BW average MsgRate[Mpps]
	record "${t}_bw_${s}${SUFFIX:-}_MBps" "$(echo "$line" | awk '{print $4}')"
	record "${t}_rate_${s}${SUFFIX:-}_kpps" "$(echo "$line" | awk '{print $5 * 1000}')"
}

lat() { # TEST SIZE ITERS
	local t=$1 s=$2 n=$3 line
	local ms="${t}_lat_${s}_typ_us ${t}_lat_${s}_p99_us" rc
	pair "$t-lat-$s" 90 "ib_${t}_lat" -d rxe0 -x "$GIDX" -s "$s" -n "$n" -F
	rc=$?
	[ "$ROLE" = b ] || return
	[ $rc = 0 ] || { fail_step $rc "$t-lat-$s.out" "ib_${t}_lat" $ms; return; }
	figures "$t-lat-$s.out" "$s" "ib_${t}_lat" $ms || return
	line=$PERFTEST_LINE
	# #bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9%
	record "${t}_lat_${s}_typ_us" "$(echo "$line" | awk '{print $5}')"
	record "${t}_lat_${s}_p99_us" "$(echo "$line" | awk '{print $8}')"
}

# speed_probe KIND WHEN: two fixed workloads timed on this guest (us,
# speed_workload in tests/guest/lib.sh), as rows
# probe_<what>_<kind>_<when>_<role>_us: "user", a user-space loop, and
# "spawn", twenty runs of /bin/true (much kernel code, as cmtime's). The
# guests run the same instructions at speeds that differ by up to twice
# from one moment to the next, whichever module set is loaded, and a
# cmtime step lasts 1-200 ms. The probes right before and after each
# cmtime say how fast the guest ran then; the slow speed at which a
# set's client sometimes runs a whole cmtime's calls they do not show
# (Documentation/benchmarks.rst, "The guests' two speeds").
# scripts/bench-report.py prints them next to the cmtime rows and does
# not judge them.
speed_probe() {
	local w
	for w in user spawn; do
		record "probe_${w}_${1}_${2}_${ROLE}_us" "$(speed_workload $w)"
	done
}

# cm_setup N [warm]: cmtime -c N, every step's time per connection (us), as
# rows cmtime_<step>_us; with "warm", run again right after, as rows
# cmtime_warm_<step>_us. The first cmtime after a set's modules are loaded
# also pays for TCG's first translation of every code path it runs (the
# rust modules run more code a connection: Documentation/benchmarks.rst,
# "cmtime right after a module load"), which a machine without emulation
# does not; the warm rows are the same work without that.
cm_setup() {
	local rc step us kind=cmtime${2:+_$2} ct_srv=() ct_cli=() ct
	# BENCH_CALLS=1 (scripts/bench.sh's RRXE_BENCH_CALLS): each side's calls
	# into the RDMA devices timed by tests/bench/calltrace.c, in
	# <set>.<round>[.warm].{srv,cli}.calls (tests/bench/calltrace-report.py).
	if [ -n "${BENCH_CALLS:-}" ]; then
		ct="$SET.$ROUND${2:+.$2}"
		calltrace_prefix ct_srv "$PWD/$ct.srv.calls"
		calltrace_prefix ct_cli "$PWD/$ct.cli.calls"
	fi
	speed_probe "$kind" before
	# Marks the host's file system dates (the run folder is the host's):
	# scripts/bench-report.py lines them up with the host CPUs' speed
	# meanwhile (tests/bench/hostspeed.c).
	[ "$ROLE" = b ] && : >"$SET.$ROUND.$kind.start"
	run2 "$kind" 240 "${ct_srv[@]}" cmtime -b "$MYIP" -c "$1" -- "${ct_cli[@]}" cmtime -s "$PEERIP" -c "$1"
	rc=$?
	[ "$ROLE" = b ] && : >"$SET.$ROUND.$kind.end"
	speed_probe "$kind" after
	[ "$ROLE" = b ] || return
	if [ $rc != 0 ]; then
		if [ "$SET" = cm ]; then
			SET=rust fail_step $rc "$kind.out" cmtime "ib_cm_${kind}_*"
		else
			fail_step $rc "$kind.out" cmtime "${kind}_*"
		fi
		return
	fi
	# "create id    :  total ms  max ms  min us  us / conn"
	local logged=
	while read -r step us; do
		case $SET in
		c)
			record "${kind}_${step}_us" "$us"
			# The baseline of the cm set's rows.
			record "ib_cm_${kind}_${step}_us" "$us"
			;;
		# Set "rust" in the table's sense: this project's module.
		cm) echo "rust,$ROUND,ib_cm_${kind}_${step}_us,$us" >>"$CSV" ;;
		*) record "${kind}_${step}_us" "$us" ;;
		esac
		case $step in create_id|connect) logged="${logged:+$logged, }$step $us us" ;; esac
	done < <(awk -F: 'NF == 2 && $2 ~ /[0-9]/ { n = $1; gsub(/^ +| +$/, "", n); gsub(/ /, "_", n);
		split($2, v, " "); print n, v[4] }' "$kind.out")
	# When it ended and two of its steps, in the log, to line up with what
	# the host saw meanwhile (a slow run against QEMU's `info jit`).
	say "$kind: $logged"
}

# Slab and vmalloc growth per 1000 objects, from tests/bench's objmem.
objmem() {
	local rc
	[ -x "$BENCH_BIN/objmem" ] || { say "objmem not built"; na "mem_*" -- "objmem not built"; return; }
	LAST_LIMIT=$(limit 180)
	timeout -k 5 "$LAST_LIMIT" "$BENCH_BIN/objmem" rxe0 1000 >objmem.out 2>&1
	rc=$?
	[ $rc = 0 ] || { say "objmem: $(tail -n1 objmem.out)"; na "mem_*" -- "objmem: $(why $rc objmem.out)"; return; }
	awk '{ print $1, $2 }' objmem.out | while read -r k v; do record "$k" "$v"; done
}

# The same perftest in loopback on guest a (client and server on rxe0),
# with 1000 messages: with 200, the link's 64 KiB rows' count (a second of
# traffic here), the ratio swung 0.5-1.5 between the rounds of one run.
loopback() {
	[ "$ROLE" = a ] || return
	local line rc
	if [ -e "$SYNC/bench.skip.$SET.$ROUND" ]; then
		na send_bw_65536_loopback_MBps -- "skipped: two earlier steps of this round timed out"
		return
	fi
	LAST_LIMIT=$(limit 60)
	timeout -k 5 "$LAST_LIMIT" ib_send_bw -d rxe0 -x "$GIDX" -s 65536 -n 1000 -F >lo.srv 2>&1 &
	sleep 1
	timeout -k 5 "$LAST_LIMIT" ib_send_bw -d rxe0 -x "$GIDX" -s 65536 -n 1000 -F "$MYIP" >lo.out 2>&1
	rc=$?
	wait
	if [ $rc != 0 ]; then
		say "loopback failed: $(tail -n1 lo.out)"
		na send_bw_65536_loopback_MBps -- "loopback ib_send_bw: $(why $rc lo.out)"
		return
	fi
	figures lo.out 65536 "loopback ib_send_bw" send_bw_65536_loopback_MBps || return
	record send_bw_65536_loopback_MBps "$(echo "$PERFTEST_LINE" | awk '{print $4}')"
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
# round_sets ROUND: BENCH_SETS rotated by ROUND - 1 places. Over as many
# rounds as there are sets each set takes each place once, so what the
# guests carry over from the sets measured before in a round (the cm set's
# create qp and resolve route, which run only C modules, came out at 1.9
# and 1.7 times the c set's when c always came first) does not always fall
# on the same set.
round_sets() {
	local -a sets
	read -r -a sets <<<"$BENCH_SETS"
	local n=${#sets[@]} i out=()
	for ((i = 0; i < n; i++)); do
		out+=("${sets[(i + $1 - 1) % n]}")
	done
	echo "${out[*]}"
}
for ROUND in $(seq "$BENCH_ROUNDS"); do
	for SET in $(round_sets "$ROUND"); do
		say "round $ROUND, set $SET"
		barrier "set.$SET.$ROUND" 120 >/dev/null || exit 1
		TIMEOUTS=0
		# Both guests go on whether or not their rxe0 came up; each says
		# how it went, and the round's measurements need both.
		UP_WHY=
		bench_use_set "$SET" || say "set $SET: cannot bring up rxe0: $UP_WHY"
		# Not bench.up.*: the barrier's own files have those names.
		echo "$UP_WHY" >"$SYNC/bench.upwhy.$SET.$ROUND.$ROLE"
		barrier "up.$SET.$ROUND" 120 >/dev/null || exit 1
		read -r up_why <"$SYNC/bench.upwhy.$SET.$ROUND.a"
		[ -n "$up_why" ] || read -r up_why <"$SYNC/bench.upwhy.$SET.$ROUND.b"
		if [ -n "$up_why" ]; then
			# The report reads the cm set's rows as rust's ib_cm_cmtime_*.
			if [ "$ROLE" = b ] && [ "$SET" = cm ]; then
				SET=rust na "ib_cm_cmtime_*" -- "cm set: rxe0 not up: $up_why"
			elif [ "$ROLE" = b ]; then
				na "*" -- "rxe0 not up: $up_why"
			fi
			barrier "end.$SET.$ROUND" 120 >/dev/null
			continue
		fi
		GIDX=$(gid_index_v4 rxe0 "$MYIP")
		# A short probe: a set that cannot carry data yet records only
		# what needs no traffic.
		pair probe 30 ib_send_bw -d rxe0 -x "$GIDX" -s 4096 -n 20 -F
		rc=$?
		[ "$ROLE" = b ] && echo "$rc" >"$SYNC/bench.ok.$SET.$ROUND"
		barrier "probe.$SET.$ROUND" 120 >/dev/null
		read -r rc <"$SYNC/bench.ok.$SET.$ROUND"
		if [ "$rc" = 0 ] && [ "$SET" = cm ]; then
			cm_setup 100
			cm_setup 100 warm
		elif [ "$rc" = 0 ]; then
			for t in send write read; do
				bw "$t" 64 5000
				bw "$t" 4096 2000
				bw "$t" 65536 200
				bw "$t" 1048576 20
			done
			pair atomic 60 ib_atomic_bw -d rxe0 -x "$GIDX" -n 2000 -F
			rc=$?
			if [ "$ROLE" = b ]; then
				if [ $rc != 0 ]; then
					fail_step $rc atomic.out ib_atomic_bw atomic_rate_kpps
				elif figures atomic.out 8 ib_atomic_bw atomic_rate_kpps; then
					record atomic_rate_kpps "$(echo "$PERFTEST_LINE" | awk '{print $5 * 1000}')"
				fi
			fi
			SUFFIX=_q4 bw send 65536 200 -q 4
			for t in send write read; do
				lat "$t" 2 1000
				lat "$t" 4096 500
			done
			cm_setup 100
			cm_setup 100 warm
			loopback
		else
			say "set $SET carries no data: only memory and size are measured"
			if [ "$ROLE" = b ] && [ "$SET" = cm ]; then
				SET=rust na "ib_cm_cmtime_*" -- \
					"cm set: no data: a 20-message ib_send_bw probe $(why "$rc" probe.out)"
			elif [ "$ROLE" = b ]; then
				na "*_bw_*" "*_rate_*" "*_lat_*" "cmtime_*" "*_loopback_*" -- \
					"no data: a 20-message ib_send_bw probe $(why "$rc" probe.out)"
			fi
		fi
		[ "$ROLE" = a ] && [ "$SET" != cm ] && objmem
		barrier "end.$SET.$ROUND" 600 >/dev/null
	done
done
bench_drop_set
say "done"
exit 0
