# Where the time goes in ib_send_bw -s 65536 (300 messages), for the c set
# then the rust set in the same two guests: perf's cpu-clock software event
# over 25 s in both guests (by symbol, and by command and object), and
# rxe0's hw_counters after the transfer, in $RUN/<role>/prof/<set>.*. Not
# part of any test set; run on the bench kernel with the benchmark's clock:
#   RRXE_GUEST_APPEND="tsc_early_khz=<host kHz>" tests/guest/run-pair.sh \
#       RUNDIR "$KB" "$MOD" bench bench bench_profile
# Under TCG the guest takes only ~200-250 samples a second: compare shares
# of the same window, not single symbols.
# timeout: 900
KREL=$(uname -r)
OUT=$RUN/$ROLE/prof
mkdir -p "$OUT"
cd /tmp || exit 1
say() { echo "[$(date +%T)] $*"; }
use_set() {
	timeout -k 5 30 rdma link delete rxe0 2>/dev/null
	for m in rdma_ucm rdma_cm ib_cm rdma_rxe; do
		[ -e "/sys/module/$m" ] && timeout -k 5 30 modprobe -r "$m"
	done
	rm -f "/lib/modules/$KREL/updates/"*.ko
	[ "$1" = rust ] && cp "$RUST_KO_DIR"/rdma_rxe.ko "$RUST_KO_DIR"/rdma_ucm.ko "/lib/modules/$KREL/updates/"
	depmod -a
	modprobe ib_uverbs && modprobe rdma_rxe && modprobe rdma_ucm || return 1
	rdma link add rxe0 type rxe netdev eth0 || return 1
	wait_gid rxe0 "$MYIP"
}
for SET in c rust; do
	barrier "set.$SET" 120 >/dev/null || exit 1
	use_set $SET || { say "set $SET not up"; exit 1; }
	barrier "up.$SET" 120 >/dev/null || exit 1
	GIDX=$(gid_index_v4 rxe0 "$MYIP")
	rm -f /tmp/*.counters
	perf record -e cpu-clock -a -g -o /tmp/perf.data -- sleep 25 >/dev/null 2>&1 &
	ppid=$!
	sleep 1
	if [ "$ROLE" = a ]; then
		timeout 40 ib_send_bw -d rxe0 -x "$GIDX" -s 65536 -n 300 -F >"$OUT/$SET.srv" 2>&1 &
		spid=$!
		sleep 1
		notify "ready.$SET"
		await "done.$SET" 60
		wait $spid
	else
		await "ready.$SET" 60
		sleep 0.3
		timeout 40 ib_send_bw -d rxe0 -x "$GIDX" -s 65536 -n 300 -F "$PEERIP" >"$OUT/$SET.cli" 2>&1
		notify "done.$SET"
	fi
	wait $ppid
	for f in /sys/class/infiniband/rxe0/ports/1/hw_counters/*; do
		echo "$(basename "$f") $(cat "$f")"
	done >"$OUT/$SET.counters" 2>/dev/null
	perf report -i /tmp/perf.data --no-children --sort sym --stdio -g none 2>/dev/null | grep -v '^$' | head -150 >"$OUT/$SET.sym"
	perf report -i /tmp/perf.data --no-children --sort comm,dso --stdio -g none 2>/dev/null | grep -v '^#' | grep -v '^$' | head -30 >"$OUT/$SET.dso"
	rm -f /tmp/perf.data
	barrier "end.$SET" 120 >/dev/null
done
rdma link delete rxe0 2>/dev/null
modprobe -r rdma_ucm rdma_rxe 2>/dev/null
rm -f "/lib/modules/$KREL/updates/"*.ko
exit 0
