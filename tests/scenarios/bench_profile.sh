# Where the time goes in ib_<op>_<kind> -s <size> (PROF_OP send, PROF_KIND
# bw or lat, PROF_SIZE 65536, PROF_ITERS 1000 messages by default), for the c set then the rust
# set in the same two guests: perf's cpu-clock software event over the
# transfer in both guests (by symbol; by command, object and symbol; the
# callers of the irq-enabling unlocks and of the NIC's kick; <set>.incl
# the drivers' functions with what they call), the CPU time
# the guest spent busy during it (/proc/stat, in USER_HZ ticks: user,
# system, softirq; <set>.cpu), its interrupts, context switches and network
# softirqs (<set>.sched; the interrupts by source in <set>.irqs), each
# thread's CPU time and voluntary and involuntary switches over the
# transfer (<set>.tasks, from /proc/<pid>/task/<tid>/sched), and
# rxe0's hw_counters after the transfer, and the neighbour table before
# and after it (<set>.neigh), eth0's driver statistics that changed over
# the transfer (ethtool -S; virtio_net reports its queues' kicks, drops
# and timeouts there, not packets; <set>.nic), in $RUN/<role>/prof/<set>.*.
# PROF_SETS changes the sets and their order ("c rust" by default); a set
# named again writes <set>.2.*, <set>.3.*, ...
# With PROF_LOOPBACK=1 both ends run on guest a (client to its own
# address, as the benchmark's loopback row) and guest b only keeps step.
# PROF_OP=cmtime profiles cmtime -c PROF_ITERS (server on a, client on b)
# instead of a perftest (with PROF_WARM=N after an unmeasured cmtime -c N:
# TCG translates a freshly loaded module's code the first time it runs,
# a cost a cold cmtime pays in its steps; with PROF_CALLS=1 both sides'
# calls into the RDMA devices are timed, tests/bench/calltrace.c, as
# scripts/bench.sh builds it into BENCH_BIN); PROF_OP=objmem the creation and destruction of
# PROF_ITERS QPs, then of as many MRs, on guest a alone (tests/bench/objmem
# in BENCH_BIN, as scripts/bench.sh builds it, with each verb's median
# time and /proc/slabinfo around each loop, <set>.slab.{qp,mr}.{0,1}, for
# tests/bench/slab-diff.py; guest b waits); PROF_OP=cmids cmtime's create
# id and destroy steps alone, PROF_ITERS ids created then destroyed, on
# guest a alone (tests/bench/cmids in BENCH_BIN; PROF_WARM=N runs it with
# N ids first, unmeasured). PROF_PRE="op:size:iters ..." runs those
# ib_<op>_bw transfers first in each set, unmeasured (the benchmark's
# earlier rows before the one profiled). PROF_PROBE=1 times four fixed
# workloads in each guest when the set is up, after PROF_PRE and after the
# measured step (<set>.probe: a user-space loop, a loop of system calls,
# twenty runs of /bin/true, ibv_devinfo through the set's driver;
# microseconds, three runs each): a guest that runs everything slower at
# some moment shows it there, whichever the driver. Not part of any test
# set; run on
# the bench kernel with the benchmark's clock:
#   RRXE_GUEST_APPEND="tsc_early_khz=<host kHz>" tests/guest/run-pair.sh \
#       RUNDIR "$KB" "$MOD" bench bench bench_profile
# Under TCG the guest takes only ~200-250 samples a second: compare shares
# of the same window, not single symbols. With RRXE_QEMU_PLUGIN set to
# tests/bench/tbcount.so (run-pair.sh loads it), perf is not run; instead
# the guest instructions executed over the transfer are counted by the
# address of their translation block (<set>.tb, with <set>.kallsyms to
# name them; tests/bench/tb-report.py prints them by symbol): exact counts,
# the same for the same work. With PROF_HOST=1 neither runs: the guests only
# keep <set>.kallsyms, for a profiler on the host that reads the guest code
# QEMU translated (QEMU >= 8.1's -perfmap; Documentation/benchmarks.rst).
# timeout: 900
OP=${PROF_OP:-send} KIND=${PROF_KIND:-bw} SIZE=${PROF_SIZE:-65536} ITERS=${PROF_ITERS:-1000}
LOOPBACK=${PROF_LOOPBACK:-}
# user nice system idle iowait irq softirq of the cpu line.
cpu_ticks() { awk '$1 == "cpu" { print $2, $3, $4, $5, $6, $7, $8 }' /proc/stat; }
# Each /proc/interrupts line's count summed over the CPUs: "name count".
irq_counts() {
	awk 'NR > 1 { n = 0; for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i
		d = ""; for (; i <= NF; i++) d = d "_" $i; print $1 d, n }' /proc/interrupts
}
# Interrupts, context switches and softirqs (NET_RX, NET_TX) so far.
sched_counts() { awk '$1 == "intr" || $1 == "ctxt" { printf "%s ", $2 } $1 == "softirq" { printf "%s %s ", $6, $5 }' /proc/stat; }
# Every thread's "tid comm runtime-ns voluntary involuntary" switches so far.
task_times() {
	awk 'FNR == 1 { if (tid) print tid, comm, rt, v, iv; comm = $1; tid = $2; gsub(/[(,]/, "", tid); rt = v = iv = 0 }
		$1 == "se.sum_exec_runtime" { split($3, t, "."); rt = t[1] * 1000000 + t[2] }
		$1 == "nr_voluntary_switches" { v = $3 } $1 == "nr_involuntary_switches" { iv = $3 }
		END { if (tid) print tid, comm, rt, v, iv }' /proc/[0-9]*/task/[0-9]*/sched 2>/dev/null
}
OUT=$RUN/$ROLE/prof
mkdir -p "$OUT"
# The instruction counter (tests/bench/tbcount.c) serves requests in TB.
TB=$RUN/$ROLE/tb
[ -d "$TB" ] || TB=
# tb_request NAME reset|dump: asks the counter and waits until it is done.
tb_request() {
	local i
	echo "$2" >"$TB/req.$1"
	for i in $(seq 300); do
		[ -e "$TB/done.$1" ] && return 0
		sleep 0.1
	done
	echo "no answer from the instruction counter ($1 $2)" >&2
	return 1
}
# eth0's driver statistics, "name value" (none if ethtool cannot read them).
nic_stats() { ethtool -S eth0 2>/dev/null | awk -F: 'NF == 2 { gsub(/ /, "", $1); print $1, $2 + 0 }'; }
cd /tmp || exit 1
say() { echo "[$(date +%T)] $*"; }
# pair_run SUFFIX stop|wait SERVER-COMMAND... -- CLIENT-COMMAND...: the
# server on guest a ($OUT/$TAG$SUFFIX.srv), then the client on b
# ($OUT/$TAG$SUFFIX.cli); once the client is done the server is stopped
# (cmtime's waits for more connections until its timeout) or waited for.
pair_run() {
	local sfx=$1 end=$2 srv=() spid
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		srv+=("$1")
		shift
	done
	shift
	if [ "$ROLE" = a ]; then
		timeout 55 "${srv[@]}" >"$OUT/$TAG$sfx.srv" 2>&1 &
		spid=$!
		sleep 1
		notify "ready$sfx.$TAG"
		await "done$sfx.$TAG" 90
		[ "$end" = stop ] && kill $spid 2>/dev/null
		wait $spid
	else
		await "ready$sfx.$TAG" 60
		sleep 0.3
		timeout 55 "$@" >"$OUT/$TAG$sfx.cli" 2>&1
		notify "done$sfx.$TAG"
	fi
}
# speed_probe WHEN: the fixed workloads' wall times (speed_workload in
# tests/guest/lib.sh), three runs each, into $OUT/$TAG.probe.
speed_probe() {
	[ -n "${PROF_PROBE:-}" ] || return 0
	local w i line
	for w in user syscalls spawn devinfo; do
		line="$1 $w"
		for i in 1 2 3; do
			line="$line $(speed_workload $w)"
		done
		echo "$line" >>"$OUT/$TAG.probe"
	done
}
declare -A ROUNDS
for SET in ${PROF_SETS:-c rust}; do
	# A set named again in PROF_SETS keeps its outputs and sync points
	# apart: c, then c.2, c.3, ...
	ROUNDS[$SET]=$((${ROUNDS[$SET]:-0} + 1))
	TAG=$SET
	[ "${ROUNDS[$SET]}" -gt 1 ] && TAG=$SET.${ROUNDS[$SET]}
	barrier "set.$TAG" 120 >/dev/null || exit 1
	bench_use_set "$SET" || { say "set $SET not up: $UP_WHY"; exit 1; }
	barrier "up.$TAG" 120 >/dev/null || exit 1
	GIDX=$(gid_index_v4 rxe0 "$MYIP")
	rm -f /tmp/*.counters
	speed_probe up
	# PROF_WARM=N: a cmtime -c N first, not measured, so that the one
	# measured runs on code TCG has translated already (see the header).
	if [ "$OP" = cmtime ] && [ -n "${PROF_WARM:-}" ]; then
		pair_run .warm stop cmtime -b "$MYIP" -c "$PROF_WARM" -- \
			cmtime -s "$PEERIP" -c "$PROF_WARM"
	fi
	# PROF_PRE="op:size:iters ...": those perftests first, unmeasured, as
	# the benchmark runs others before a row (e.g. "write:64:5000" before
	# write 4096: its code translated, its objects allocated before).
	i=0
	for pre in ${PROF_PRE:-}; do
		IFS=: read -r pop psize piters <<<"$pre"
		i=$((i + 1))
		pt=(ib_${pop}_bw -d rxe0 -x "$GIDX" -s "$psize" -n "$piters" -F)
		pair_run ".pre$i" wait "${pt[@]}" -- "${pt[@]}" "$PEERIP"
	done
	if [ -n "${PROF_PRE:-}" ]; then speed_probe pre; fi
	if [ "$OP" = cmids ] && [ -n "${PROF_WARM:-}" ] && [ "$ROLE" = a ]; then
		timeout 55 "${BENCH_BIN:-/nonexistent}/cmids" "$PROF_WARM" >"$OUT/$TAG.warm.cli" 2>&1
	fi
	if [ -n "$TB" ]; then
		ppid=
		tb_request "start.$TAG" reset || exit 1
	elif [ -n "${PROF_HOST:-}" ]; then
		ppid=
	else
		perf record -e cpu-clock -a -g -o /tmp/perf.data -- sleep 60 >/dev/null 2>&1 &
		ppid=$!
		sleep 1
	fi
	{ echo "before:"; ip neigh show; } >"$OUT/$TAG.neigh"
	t0=$(cpu_ticks) c0=$(sched_counts)
	irq_counts >/tmp/irqs.0
	task_times >/tmp/tasks.0
	nic_stats >/tmp/nic.0
	# The measured perftest (loopback or between the guests).
	pt=(ib_${OP}_${KIND} -d rxe0 -x "$GIDX" -s "$SIZE" -n "$ITERS" -F)
	if [ "$OP" = cmids ]; then
		if [ "$ROLE" = a ]; then
			timeout 55 "${BENCH_BIN:-/nonexistent}/cmids" "$ITERS" >"$OUT/$TAG.cli" 2>&1
			notify "done.$TAG"
		else
			await "done.$TAG" 90
		fi
	elif [ "$OP" = objmem ]; then
		if [ "$ROLE" = a ]; then
			# For a profiler on the host (tests/bench/perfmap.py record).
			notify "ready.$TAG"
			# /proc/slabinfo around each loop too, for
			# tests/bench/slab-diff.py ($TAG.slab.qp.0 ...).
			OBJMEM_SLABINFO=$OUT/$TAG.slab \
				timeout 55 "${BENCH_BIN:-/nonexistent}/objmem" rxe0 "$ITERS" -t >"$OUT/$TAG.cli" 2>&1
			notify "done.$TAG"
		else
			await "done.$TAG" 90
		fi
	elif [ -n "$LOOPBACK" ] && [ "$OP" != cmtime ]; then
		if [ "$ROLE" = a ]; then
			timeout 55 "${pt[@]}" >"$OUT/$TAG.srv" 2>&1 &
			spid=$!
			sleep 1
			timeout 55 "${pt[@]}" "$MYIP" >"$OUT/$TAG.cli" 2>&1
			wait $spid
			notify "done.$TAG"
		else
			await "done.$TAG" 90
		fi
	elif [ "$OP" = cmtime ]; then
		# Connection set-up through each set's rdma_ucm.
		# PROF_CALLS=1: each side's calls into the RDMA devices timed by
		# tests/bench/calltrace.c ($TAG.srv.calls, $TAG.cli.calls).
		ct_srv=() ct_cli=()
		if [ -n "${PROF_CALLS:-}" ]; then
			calltrace_prefix ct_srv "$OUT/$TAG.srv.calls"
			calltrace_prefix ct_cli "$OUT/$TAG.cli.calls"
		fi
		pair_run "" stop "${ct_srv[@]}" cmtime -b "$MYIP" -c "$ITERS" -- "${ct_cli[@]}" cmtime -s "$PEERIP" -c "$ITERS"
	else
		pair_run "" wait "${pt[@]}" -- "${pt[@]}" "$PEERIP"
	fi
	t1=$(cpu_ticks) c1=$(sched_counts)
	# The threads that ran during the transfer, most CPU first. Threads
	# that started during it count from zero (among them the awk reading
	# the times); those that ended before its end, perftest's, are not
	# listed.
	task_times | awk 'NR == FNR { rt[$1] = $3; v[$1] = $4; iv[$1] = $5; next }
		$3 - rt[$1] > 0 { printf "%10.3f ms %6d vol %6d invol  %s %s\n", ($3 - rt[$1]) / 1e6, $4 - v[$1], $5 - iv[$1], $2, $1 }' /tmp/tasks.0 - |
		sort -rn | head -20 >"$OUT/$TAG.tasks"
	{ echo "after:"; ip neigh show; } >>"$OUT/$TAG.neigh"
	if [ -n "$TB" ]; then
		tb_request "$TAG" dump || exit 1
		cp "$TB/$TAG.tb" "$OUT/$TAG.tb"
	fi
	if [ -n "$TB${PROF_HOST:-}" ]; then
		cat /proc/kallsyms >"$OUT/$TAG.kallsyms"
	fi
	# The sources that fired during the transfer, most first.
	irq_counts | awk 'NR == FNR { n[$1] = $2; next } $2 - n[$1] > 0 { print $2 - n[$1], $0 }' /tmp/irqs.0 - |
		sort -rn | awk '{ printf "%8d %s\n", $1, $2 }' | head -20 >"$OUT/$TAG.irqs"
	nic_stats | awk 'NR == FNR { n[$1] = $2; next } $2 - n[$1] != 0 { printf "%12d %s\n", $2 - n[$1], $1 }' /tmp/nic.0 - >"$OUT/$TAG.nic"
	echo "$c0 $c1" | awk '{ printf "interrupts %d, context switches %d, NET_RX softirqs %d, NET_TX softirqs %d\n", $5-$1, $6-$2, $7-$3, $8-$4 }' >"$OUT/$TAG.sched"
	echo "$t0 $t1" | awk '{ printf "busy ticks: user %d system %d softirq %d irq %d, idle %d\n", $8-$1+$9-$2, $10-$3, $14-$7, $13-$6, $11-$4 }' >"$OUT/$TAG.cpu"
	[ -n "$ppid" ] && kill -INT $ppid 2>/dev/null && wait $ppid
	hw_counters >"$OUT/$TAG.counters"
	speed_probe after
	if [ -z "$ppid" ]; then
		barrier "end.$TAG" 120 >/dev/null
		continue
	fi
	perf report -i /tmp/perf.data --kallsyms=/proc/kallsyms --no-children --sort sym --stdio -g none 2>/dev/null | grep -v '^$' | head -150 >"$OUT/$TAG.sym"
	perf report -i /tmp/perf.data --kallsyms=/proc/kallsyms --no-children --sort comm,dso,sym --stdio -g none 2>/dev/null | grep -v '^#' | grep -v '^$' | head -300 >"$OUT/$TAG.commsym"
	# Who holds interrupts off (a sample taken meanwhile lands on the
	# unlock that re-enables them) and who kicks the NIC.
	perf report -i /tmp/perf.data --kallsyms=/proc/kallsyms --no-children --sort sym \
		-S _raw_spin_unlock_irq_enable,_raw_spin_unlock_irqrestore,_raw_spin_unlock_irq,vp_notify,copy_mc_enhanced_fast_string \
		--call-graph=graph,0.3,callee,function,percent --stdio 2>/dev/null | grep -v '^$' | head -400 >"$OUT/$TAG.callers"
	# Inclusive shares of the drivers' own functions (what each part of
	# the transport costs with everything it calls).
	perf report -i /tmp/perf.data --kallsyms=/proc/kallsyms --children --sort sym --stdio -g none 2>/dev/null |
		grep -E 'rxe|rrxe|_rcv|xmit|ucma|cma_' | head -80 >"$OUT/$TAG.incl"
	perf report -i /tmp/perf.data --no-children --sort comm,dso --stdio -g none 2>/dev/null | grep -v '^#' | grep -v '^$' | head -30 >"$OUT/$TAG.dso"
	rm -f /tmp/perf.data
	barrier "end.$TAG" 120 >/dev/null
done
bench_drop_set
exit 0
