# SPDX-License-Identifier: GPL-2.0
#
# Helpers for guest scenarios (sourced by init.sh; scenarios see them too).
# Both guests run the same scenario list in the same order. A scenario is
# tests/scenarios/<name>.sh, run with ROLE (a|b), MYSET/PEERSET (c|rust|ucma|cm|full),
# MYIP/PEERIP and RUN set; its exit status is its result in this guest:
# 0 pass, 4 skip, anything else fail. What it prints goes to its log.

KSFT_SKIP=4
SYNC=$RUN/sync
mkdir -p "$SYNC"
OTHER=$([ "$ROLE" = a ] && echo b || echo a)
eval "PEERIP=\$IP_$OTHER"
eval "PEERSET=\$SET_$OTHER"
IP_A=$IP_a
IP_B=$IP_b
export SYNC OTHER PEERIP PEERSET MYIP MYSET IP_A IP_B KSFT_SKIP

# nap SECONDS: sleep without a process (read with a timeout from a pipe
# nobody writes to). Under TCG with KASAN a fork and exec of sleep takes
# 0.5-2 s, which made each 0.2 s poll below 2 s long and busy.
exec {NAP_FD}<> <(:)
# The read times out with status 142: "|| :" keeps a scenario under set -e
# alive.
nap() { read -r -t "$1" -u "$NAP_FD" _ 2>/dev/null || :; }

# notify NAME: tell the other guest that NAME happened (in this scenario).
notify() { : >"$SYNC/$SCENARIO.$1.$ROLE"; }

# await NAME [SECONDS]: wait until the other guest notified NAME, at most
# SECONDS but never less than 300 s. The bound only catches a peer that
# never comes: under TCG the guests' pace differs by a minute or more (a
# poll used to cost 1-2 s, which stretched the old bounds, 60 s and up,
# several times; with nap they would be exact and too tight).
await() {
	local secs=${2:-300}
	[ "$secs" -ge 300 ] || secs=300
	local n=$((secs * 5))
	while [ ! -e "$SYNC/$SCENARIO.$1.$OTHER" ]; do
		n=$((n - 1))
		[ $n -gt 0 ] || { echo "timed out waiting for the peer's '$1'"; return 1; }
		# The host marks a guest dead when its QEMU exits.
		[ ! -e "$SYNC/dead.$OTHER" ] || { echo "the peer guest is gone"; return 1; }
		nap 0.2
	done
}

# serve SYNCFILE COMMAND...: starts COMMAND, a server that creates
# SYNCFILE.listening once it listens, in the background (its pid in
# $SERVER), waits up to 10 s for that and notifies "ready".
serve() {
	local sync=$1
	shift
	"$@" &
	SERVER=$!
	for _ in $(seq 50); do [ -e "$sync.listening" ] && break; nap 0.2; done
	notify ready
}

# barrier NAME [SECONDS]: both guests reach NAME before either goes on.
barrier() { notify "$1"; await "$1" "${2:-}"; }

# gid_index DEV GID: the index of DEV's RoCE v2 GID GID (as sysfs prints
# it): the table's entries in index order, read with the shell's own read
# (a process per entry, or one grep over the 1024 files, takes 8 s under
# TCG with KASAN), up to the first RoCE v2 entry holding it. The RDMA core
# fills the table from index 0, so that is one of the first few; only a
# GID not (yet) in the table costs a pass over all of it.
gid_index() {
	local d=/sys/class/infiniband/$1/ports/1 want=$2 i g t
	[ -d "$d/gids" ] || return 1
	local entries=("$d"/gids/*)
	for ((i = 0; i < ${#entries[@]}; i++)); do
		# An empty entry fails to read; "|| g=" for callers under set -e.
		read -r g 2>/dev/null <"$d/gids/$i" || g=
		[ "$g" = "$want" ] || continue
		read -r t 2>/dev/null <"$d/gid_attrs/types/$i" || t=
		if [ "$t" = "RoCE v2" ]; then
			echo "$i"
			return 0
		fi
	done
	return 1
}

# gid_index_v4 DEV IP: the index of DEV's IPv4-mapped RoCE v2 GID for IP.
gid_index_v4() {
	local want
	printf -v want '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' ${2//./ }
	gid_index "$1" "$want"
}

# wait_gid DEV IP: the RDMA core fills GIDs asynchronously after link add.
wait_gid() {
	local n=100
	until gid_index_v4 "$1" "$2" >/dev/null; do
		n=$((n - 1))
		[ $n -gt 0 ] || { echo "no RoCE v2 GID for $2 on $1"; return 1; }
		nap 0.2
	done
}

# set_modules SET: the modules of this project that module set SET puts in
# place of the in-tree ones, by name, on stdout; an unknown set fails.
#   c:    none (the in-tree rdma_rxe, rdma_ucm, ib_cm)
#   rust: rdma_rxe, rdma_ucm
#   rxe, ucma: that one of the two, beside the other's C module (the
#         profiling scenarios tell with them which module a difference
#         comes from; ucma is also a test set: ucma over the C rxe)
#   cm:   ib_cm (the in-tree rdma_cm and rdma_ucm over it)
#   full: rdma_rxe, rdma_ucm, ib_cm
#   bench: none at boot (the benchmark's scenarios switch sets themselves)
set_modules() {
	case $1 in
	c|bench) ;;
	rust) echo rdma_rxe rdma_ucm ;;
	rxe) echo rdma_rxe ;;
	ucma) echo rdma_ucm ;;
	cm) echo ib_cm ;;
	full) echo rdma_rxe rdma_ucm ib_cm ;;
	*) echo "no module set $1" >&2; return 1 ;;
	esac
}

# install_set SET: /lib/modules/$(uname -r)/updates holds SET's modules
# from RUST_KO_DIR and nothing else, and depmod ran (depmod prefers
# updates/ over the in-tree module of the same name). A module that
# cannot be copied fails the set: the in-tree one would load in its place
# and be tested or measured under the set's name. The reason is on stderr.
install_set() {
	local dir m mods
	dir=/lib/modules/$(uname -r)/updates
	mods=$(set_modules "$1") || return 1
	mkdir -p "$dir" && rm -f "$dir"/*.ko || return 1
	for m in $mods; do
		cp "$RUST_KO_DIR/$m.ko" "$dir/" || return 1
	done
	depmod -a
}

# unload_rdma: rxe0 deleted and rdma_ucm, rdma_cm, ib_cm, rdma_rxe unloaded,
# top down by name (modprobe -r left ib_cm loaded after the c set, and the
# cm set replaces it). A module still referenced a moment after its last
# user (the C rdma_rxe after cmtime) gets 10 s. Fails, with UP_WHY set,
# when one stays: the next set's module of that name would not load and
# this one would be measured in its place.
unload_rdma() {
	local m left
	timeout -k 5 30 rdma link delete rxe0 2>/dev/null
	for _ in $(seq 20); do
		left=
		for m in rdma_ucm rdma_cm ib_cm rdma_rxe; do
			[ -e "/sys/module/$m" ] || continue
			timeout -k 5 30 modprobe -r "$m" 2>/dev/null ||
				left="$left $m (refcnt $(cat "/sys/module/$m/refcnt" 2>/dev/null))"
		done
		[ -z "$left" ] && return 0
		sleep 0.5
	done
	UP_WHY="the previous set's modules did not unload:$left"
	return 1
}

# bench_use_set SET: for the benchmark's scenarios, which switch module
# sets in one boot (c, rust, cm, rxe, ucma: set_modules): the RDMA modules
# unloaded, SET's installed and loaded, rxe0 added on eth0, its RoCE v2 GID
# for $MYIP there and its port ACTIVE. On failure UP_WHY says what failed.
bench_use_set() {
	unload_rdma || return 1
	install_set "$1" || { UP_WHY="module set $1 not installed"; return 1; }
	timeout -k 5 60 sh -c 'modprobe ib_uverbs && modprobe rdma_rxe && modprobe rdma_ucm' ||
		{ UP_WHY="modprobe failed"; return 1; }
	timeout -k 5 30 rdma link add rxe0 type rxe netdev eth0 ||
		{ UP_WHY="rdma link add failed"; return 1; }
	wait_gid rxe0 "$MYIP" || { UP_WHY="no RoCE v2 GID for $MYIP"; return 1; }
	for _ in $(seq 50); do
		grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state && return 0
		sleep 0.2
	done
	UP_WHY="port not ACTIVE"
	return 1
}

# speed_workload NAME: one fixed workload of the benchmarks' speed probes,
# its wall time (us) on stdout: "user", a user-space loop (few pages, no
# system call); "spawn", twenty runs of /bin/true (fork, exec, exit: much
# kernel code and many pages); "syscalls", 20 000 one-byte dd system
# calls; "devinfo", ibv_devinfo through rxe0's driver. The same work in
# every module set, so its time is the guest's speed at that moment
# (Documentation/benchmarks.rst, "The guests' two speeds").
speed_workload() {
	local t0 t1 i
	t0=$(date +%s%N)
	case $1 in
	user) awk 'BEGIN { for (i = 0; i < 200000; i++) s += i }' ;;
	spawn) for i in $(seq 20); do /bin/true; done ;;
	syscalls) dd if=/dev/zero of=/dev/null bs=1 count=20000 status=none ;;
	devinfo) ibv_devinfo -d rxe0 >/dev/null 2>&1 ;;
	*) return 1 ;;
	esac
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000))
}

# calltrace_prefix ARRAY FILE: ARRAY becomes the command prefix that runs a
# librdmacm program with tests/bench/calltrace.c preloaded (as
# scripts/bench.sh builds it into BENCH_BIN), its calls into the RDMA
# devices written to FILE at its end (tests/bench/calltrace-report.py).
calltrace_prefix() {
	local -n prefix=$1
	prefix=(env LD_PRELOAD="${BENCH_BIN:-/nonexistent}/calltrace.so" CALLTRACE_OUT="$2")
}

# bench_drop_set: at a benchmark scenario's end, the boot's in-tree
# modules back (rxe0 deleted, this project's unloaded and uninstalled).
bench_drop_set() {
	unload_rdma || echo "$UP_WHY" >&2
	install_set c
}

# perftest_result OUT SIZE: for the benchmark's scenarios, the figures a
# perftest printed to OUT: PERFTEST_LINE is set to its result line (the
# first that starts with the message size) and the status is 0; when OUT
# holds no figure, PERFTEST_WHY is set to the reason and the status is 1.
# perftest measures the CPU's clock itself; when that fit fails
# ("Correlation coefficient r^2: ... < 0.9", seen under TCG) it goes on
# (-F) and prints 0.00 for every rate and time: no figure, not a zero.
perftest_result() {
	PERFTEST_LINE= PERFTEST_WHY=
	if grep -q '^Correlation coefficient r^2' "$1"; then
		PERFTEST_WHY="perftest could not measure the CPU clock (r^2 < 0.9)"
		return 1
	fi
	PERFTEST_LINE=$(awk -v s="$2" '$1 == s && NF >= 4 { print; exit }' "$1")
	[ -n "$PERFTEST_LINE" ] && return 0
	PERFTEST_WHY="printed no result"
	return 1
}

# rxe0_add: ib_uverbs and this guest's rdma_rxe loaded (the set's: the C
# and the Rust module have the same name), rxe0 on eth0 added unless it is
# there (link_add made it). A module that does not load is left to what
# follows; the status is rdma link add's.
rxe0_add() {
	# modprobe only for a module not loaded yet (each exec costs seconds).
	[ -d /sys/module/ib_uverbs ] || modprobe ib_uverbs
	[ -d /sys/module/rdma_rxe ] || modprobe rdma_rxe
	[ -e /sys/class/infiniband/rxe0 ] || rdma link add rxe0 type rxe netdev eth0
}

# rxe0_gid_index: rxe0_add, then the index of rxe0's RoCE v2 GID for $MYIP
# once the RDMA core has added it, on stdout (idx=$(rxe0_gid_index) || exit 1);
# the reason it failed on stderr.
rxe0_gid_index() {
	rxe0_add || { echo "no rxe0" >&2; return 1; }
	wait_gid rxe0 "$MYIP" >&2 || return 1
	gid_index_v4 rxe0 "$MYIP" || { echo "no RoCE v2 GID" >&2; return 1; }
}

# scenario_program NAME: the path of the program of tests/scenarios/NAME.c.
# tests/run builds each one on the host into $RRXE_VERBS_DIR (config.sh), and
# the guests run that; one missing or older than its source (a run started by
# hand) is built here, in the scenario's directory: gcc under TCG with KASAN
# takes 40-60 s. Status 4 (skip) if that fails too.
scenario_program() {
	local src=$RRXE_REPO/tests/scenarios/$1.c bin=${RRXE_VERBS_DIR:-/nonexistent}/$1
	if [ ! -x "$bin" ] || [ "$bin" -ot "$src" ]; then
		echo "$bin missing or older than $src: building it in the guest" >&2
		bin=$PWD/$1
		gcc -O2 -Wall -Wextra -Werror -o "$bin" "$src" -libverbs -lpthread >&2 ||
			{ echo "cannot build $src" >&2; return "$KSFT_SKIP"; }
	fi
	echo "$bin"
}

# tcp_listening PORT: a socket listens on TCP PORT (IPv4 or IPv6).
# (read by the shell itself: it is polled, and a grep per poll costs a second
# or two under TCG with KASAN).
tcp_listening() {
	local hex f sl laddr raddr st rest
	printf -v hex '%04X' "$1"
	for f in /proc/net/tcp /proc/net/tcp6; do
		[ -r "$f" ] || continue
		while read -r sl laddr raddr st rest; do
			[[ $laddr == *:"$hex" && $st == 0A ]] && return 0
		done <"$f"
	done
	return 1
}

# tcp_exchange SERVER TAG PORT SECONDS PEER CMD...: one run of a client/server
# program whose server listens on TCP PORT (the verbs pingpongs): guest SERVER
# (a|b) runs CMD, the other guest runs CMD PEER once the server listens (a
# server under KASAN takes more than a second to open the device and create
# its QPs; up to 120 s, or until it exits), each under timeout SECONDS,
# output in ./out. A side that fails prints "FAIL TAG (server|client)"; the
# status is 1 when this guest's side failed or the peer did not get ready or
# done in time.
tcp_exchange() {
	local server=$1 tag=$2 port=$3 secs=$4 peer=$5 pid i=0 rc=0
	shift 5
	rm -f out
	if [ "$ROLE" = "$server" ]; then
		timeout "$secs" "$@" >out 2>&1 &
		pid=$!
		while ! tcp_listening "$port" && kill -0 $pid 2>/dev/null && [ $i -lt 600 ]; do
			nap 0.2
			i=$((i + 1))
		done
		notify "ready.$tag"
		await "done.$tag" $((secs + 20)) || rc=1
		wait $pid || { rc=1; echo "FAIL $tag (server)"; }
	else
		await "ready.$tag" 60 || return 1
		timeout "$secs" "$@" "$peer" >out 2>&1 || { rc=1; echo "FAIL $tag (client)"; }
		notify "done.$tag"
	fi
	return $rc
}

# SPLAT_RE, scan_reports: the kernel reports that fail a scenario.
. "$RRXE_REPO/tests/guest/reports.sh"

# hw_counters [DEV]: the port counters of DEV (rxe0) as "name value"
# lines, read by one process (a fork costs milliseconds in a TCG guest).
hw_counters() {
	awk '{ n = FILENAME; sub(/.*\//, "", n); print n, $1 }' \
		/sys/class/infiniband/"${1:-rxe0}"/ports/1/hw_counters/* 2>/dev/null
}

# stamp WHAT...: one line of $OUT/timing.log (seconds since the epoch), where
# the guest's time goes.
stamp() { echo "$EPOCHREALTIME $*" >>"$OUT/timing.log"; }

# scenario_limit FILE: the scenario's own bound from its "# timeout: SECONDS"
# line, else $SCENARIO_TIMEOUT. The harness below runs a few processes per
# scenario only: under TCG with KASAN each fork and exec takes 0.5-2 s.
scenario_limit() {
	local line
	while IFS= read -r line; do
		[[ $line =~ ^#\ timeout:\ *([0-9]+)$ ]] && { echo "${BASH_REMATCH[1]}"; return; }
	done <"$1"
	echo "${SCENARIO_TIMEOUT:-300}"
}

# last_line FILE: its last line (the reason a scenario gives for its status).
last_line() {
	local line last=
	while IFS= read -r line || [ -n "$line" ]; do last=$line; done <"$1"
	echo "$last"
}

# kill_leftovers: SIGKILL to every process whose command line names one of
# the test programs that scenarios start as servers (pkill -f without its
# exec: seconds under TCG).
kill_leftovers() {
	local re='rping|ib_send_|ib_write_|ib_read_|ib_atomic_|cmtime|ucmatose|udaddy|mckey|rstream|riostream|rdma_server|rdma_client'
	local f pid argv
	for f in /proc/[0-9]*/cmdline; do
		pid=${f#/proc/}
		pid=${pid%/cmdline}
		[ "$pid" != $$ ] && [ "$pid" != "$BASHPID" ] || continue
		argv=()
		mapfile -d '' -t argv <"$f" 2>/dev/null || continue
		[[ ${argv[*]} =~ $re ]] && kill -9 "$pid" 2>/dev/null
	done
	return 0
}

# run_scenarios: each scenario of $SCENARIOS with its time bound; writes
# <name>.status ("PASS|FAIL|SKIP reason"), <name>.log and <name>.dmesg.
# With RRXE_TRACE=1 a scenario runs under set -x with timestamps, into
# <name>.trace.
run_scenarios() {
	local s rc status reason limit trace=
	[ "${RRXE_TRACE:-}" != 1 ] ||
		trace='exec {tfd}>"$3"; BASH_XTRACEFD=$tfd; PS4='"'"'+ $EPOCHREALTIME '"'"'; set -x; '
	dmesg -c >"$OUT/boot.dmesg"
	for s in $SCENARIOS; do
		SCENARIO=$s
		export SCENARIO
		stamp "$s" begin
		barrier start 600 >/dev/null 2>&1
		stamp "$s" started
		mkdir -p "/tmp/scenario/$s"
		limit=$(scenario_limit "$RRXE_REPO/tests/scenarios/$s.sh")
		if [ -n "${SET_WHY:-}" ]; then
			echo "$SET_WHY" >"$OUT/$s.log"
			rc=1
		else
			timeout -k 10 "$limit" bash -c \
				'. "$RRXE_REPO/tests/guest/lib.sh"; cd "$2" || exit 1; '"$trace"'. "$1"' _ \
				"$RRXE_REPO/tests/scenarios/$s.sh" "/tmp/scenario/$s" "$OUT/$s.trace" \
				>"$OUT/$s.log" 2>&1 </dev/null
			rc=$?
		fi
		stamp "$s" ran
		# Leftover servers of this scenario must not leak into the next one.
		kill_leftovers
		stamp "$s" killed
		case $rc in
		0) status=PASS reason= ;;
		"$KSFT_SKIP") status=SKIP reason=$(last_line "$OUT/$s.log") ;;
		124|137) status=FAIL reason="timed out after ${limit}s" ;;
		*) status=FAIL reason="exit status $rc: $(last_line "$OUT/$s.log")" ;;
		esac
		# Late kernel messages (deferred work) belong to this scenario.
		nap 1
		dmesg -c >"$OUT/$s.dmesg"
		stamp "$s" dmesg
		# A known defect of the in-tree C modules in this guest is the C
		# module's expected failure, reported apart by tests/run.
		scan_reports "$OUT/$s.dmesg" "$MYSET"
		if [ -n "$UNKNOWN_REPORT" ]; then
			status=FAIL
			reason="kernel report in dmesg: $UNKNOWN_REPORT"
		fi
		[ -z "$KNOWN_REPORT" ] || echo "$KNOWN_REPORT" >"$OUT/$s.known"
		echo "$status $reason" >"$OUT/$s.status"
		stamp "$s" status
		barrier end 600 >/dev/null 2>&1
	done
	# Leak check over the whole run (kmemleak needs two scans to settle).
	if [ -w /sys/kernel/debug/kmemleak ]; then
		echo scan >/sys/kernel/debug/kmemleak; nap 1
		echo scan >/sys/kernel/debug/kmemleak
		cat /sys/kernel/debug/kmemleak >"$OUT/kmemleak.txt"
	fi
}

# librdmacm_example TOOL ARGS...: run one of librdmacm's example programs
# that take the same options (ucmatose, udaddy): guest a serves on its
# address (-b), guest b connects (-s); the client must finish with
# "test complete". The scenario's exit status is the result.
librdmacm_example() {
	local tool=$1 rc
	shift
	if [ "$ROLE" = a ]; then
		timeout 150 "$tool" -b "$MYIP" "$@" >server.out 2>&1 &
		local srv=$!
		sleep 1
		notify ready
		wait $srv; rc=$?
		cat server.out
		return $rc
	fi
	await ready 60 || return 1
	sleep 1
	timeout 120 "$tool" -s "$PEERIP" "$@" >client.out 2>&1; rc=$?
	cat client.out
	[ $rc = 0 ] && grep -q 'test complete' client.out
}
