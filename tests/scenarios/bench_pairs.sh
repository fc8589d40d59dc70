# Which side's module costs a bandwidth row its time: ib_<op>_bw -s <size>
# (PROF_OP send, PROF_SIZE 4096, PROF_ITERS 2000 messages by default;
# PROF_KIND=lat runs ib_<op>_lat instead and records the typical latency
# in us where the bandwidth would be; PROF_REPEAT=N runs it N times in a
# row per pair, e.g. to see a first run after a set's load differ)
# between guest a's set and guest b's set, for each pair of PROF_PAIRS
# ("a-set/b-set ...", by default c/c rust/rust c/rust rust/c; a serves,
# b is the client and sends), PROF_ROUNDS times (2) in the same two guests.
# A rust responder (a) or a rust requester (b) that is slower shows in the
# mixed pairs. With PROF_SWITCH=1 each guest records its context switches
# over the transfer (perf record --switch-events, a software record that
# needs no tracepoints) into $RUN/<role>/pairs/<pair>.<round>.switch
# (perf script). PROF_ARGS adds perftest options on both sides (e.g. "-e":
# wait for completions with events instead of polling). Prints "pair round
# MB/s" lines into $RUN/b/pairs/bw.txt and the median of each pair at the
# end. Not part of any test set; run on the bench kernel with the
# benchmark's clock:
#   RRXE_GUEST_APPEND="tsc_early_khz=<host kHz>" tests/guest/run-pair.sh \
#       RUNDIR "$KB" "$MOD" bench bench bench_pairs
# timeout: 1800
OP=${PROF_OP:-send} SIZE=${PROF_SIZE:-4096} ITERS=${PROF_ITERS:-2000}
KIND=${PROF_KIND:-bw}
# Unquoted where used: words of perftest options.
ARGS=${PROF_ARGS:-}
# The result column of perftest's line for SIZE and its unit: BW average
# (MB/s), or t_typical (us).
COL=4 UNIT=MB/s
[ "$KIND" = lat ] && COL=5 UNIT=us
PAIRS=${PROF_PAIRS:-c/c rust/rust c/rust rust/c}
OUT=$RUN/$ROLE/pairs
mkdir -p "$OUT"
cd /tmp || exit 1
for R in $(seq "${PROF_ROUNDS:-2}"); do
	for PAIR in $PAIRS; do
		TAG=${PAIR%/*}-${PAIR#*/}.$R
		if [ "$ROLE" = a ]; then SET=${PAIR%/*}; else SET=${PAIR#*/}; fi
		barrier "set.$TAG" 120 >/dev/null || exit 1
		bench_use_set "$SET" || { echo "set $SET not up: $UP_WHY"; exit 1; }
		barrier "up.$TAG" 120 >/dev/null || exit 1
		GIDX=$(gid_index_v4 rxe0 "$MYIP")
		# PROF_REPEAT transfers a pair in a row, in the same load of the sets.
		for K in $(seq "${PROF_REPEAT:-1}"); do
			T=$TAG
			[ "${PROF_REPEAT:-1}" -gt 1 ] && T=$TAG.$K
			ppid=
			if [ -n "${PROF_SWITCH:-}" ]; then
				perf record -e dummy --switch-events -a -o /tmp/switch.data -- sleep 100 >/dev/null 2>&1 &
				ppid=$!
				sleep 1
			fi
			if [ "$ROLE" = a ]; then
				timeout 100 ib_${OP}_${KIND} -d rxe0 -x "$GIDX" -s "$SIZE" -n "$ITERS" -F $ARGS >"$OUT/$T" 2>&1 &
				spid=$!
				sleep 1
				notify "ready.$T"
				await "done.$T" 150
				wait $spid
			else
				await "ready.$T" 60
				sleep 0.3
				timeout 100 ib_${OP}_${KIND} -d rxe0 -x "$GIDX" -s "$SIZE" -n "$ITERS" -F $ARGS "$PEERIP" >"$OUT/$T" 2>&1
				notify "done.$T"
				bw=
				perftest_result "$OUT/$T" "$SIZE" &&
					bw=$(echo "$PERFTEST_LINE" | awk -v c=$COL '{ print $c }')
				echo "$PAIR ${T#*.} ${bw:-failed}" | tee -a "$OUT/bw.txt"
			fi
			if [ -n "$ppid" ]; then
				kill -INT $ppid
				wait $ppid
				perf script -i /tmp/switch.data --show-switch-events -F comm,tid,cpu,time,event >"$OUT/$T.switch" 2>&1
				rm -f /tmp/switch.data
			fi
		done
	done
done
if [ "$ROLE" = b ]; then
	for PAIR in $PAIRS; do
		awk -v p="$PAIR" '$1 == p && $3 != "failed" { print $3 }' "$OUT/bw.txt" | sort -g |
			awk -v p="$PAIR" -v u="$UNIT" '{ v[NR] = $1 } END { if (NR) printf "median %s %.2f %s (%d rounds)\n", p, (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2, u, NR }'
	done | tee -a "$OUT/bw.txt"
fi
bench_drop_set
exit 0
