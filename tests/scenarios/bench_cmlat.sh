# Where cmtime's time goes, step by step (tests/bench/cmlat.c), for the c
# set then the rust set, twice, in the same two guests; after each cmlat,
# cmtime -c 100 itself (server on a, client on b). Outputs in
# $RUN/b/cmlat/<set>.<round>[.cmtime]. Not part of any test set; run on the
# bench kernel with the benchmark's clock:
#   RRXE_GUEST_APPEND="tsc_early_khz=<host kHz>" tests/guest/run-pair.sh \
#       RUNDIR "$KB" "$MOD" bench bench bench_cmlat
# It needs librdmacm's headers (librdmacm-dev) on the host, whose root the
# guests share; gcc builds cmlat in guest b.
# timeout: 900
OUT=$RUN/$ROLE/cmlat
mkdir -p "$OUT"
cd /tmp || exit 1
if [ "$ROLE" = b ] && ! gcc -O2 -Wall -Werror -o /tmp/cmlat "$RRXE_REPO/tests/bench/cmlat.c" \
	-lrdmacm -libverbs -lpthread; then
	notify nobuild
fi
barrier built 300 >/dev/null || exit 1
if [ -e "$SYNC/$SCENARIO.nobuild.b" ]; then
	echo "SKIP: guest b cannot build tests/bench/cmlat.c (needs gcc and librdmacm-dev on the host)"
	exit "$KSFT_SKIP"
fi
for R in 1 2; do
	for SET in c rust; do
		barrier "set.$SET.$R" 120 >/dev/null || exit 1
		bench_use_set "$SET" || { echo "set $SET not up: $UP_WHY"; exit 1; }
		barrier "up.$SET.$R" 120 >/dev/null || exit 1
		if [ "$ROLE" = b ]; then
			await "ready.$SET.$R" 120 || exit 1
			timeout 120 /tmp/cmlat "$PEERIP" 100 >"$OUT/$SET.$R" 2>&1 ||
				{ echo "cmlat failed on set $SET: $(tail -1 "$OUT/$SET.$R")"; notify "done.$SET.$R"; exit 1; }
			timeout 100 cmtime -s "$PEERIP" -c 100 >"$OUT/$SET.$R.cmtime" 2>&1
			notify "done.$SET.$R"
		else
			timeout 200 cmtime -b "$MYIP" -c 100 >/dev/null 2>&1 &
			sleep 1
			notify "ready.$SET.$R"
			await "done.$SET.$R" 300
			pkill cmtime
			wait
		fi
		barrier "end.$SET.$R" 120 >/dev/null
	done
done
bench_drop_set
exit 0
