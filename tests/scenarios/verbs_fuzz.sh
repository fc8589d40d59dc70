# uverbs ABI fuzzing (issue #7 part 5): tests/scenarios/verbs_fuzz.c in
# each guest at once on its own rxe0, for VERBS_FUZZ_SECONDS (20; 600 with
# RRXE_LONG=1): four threads of random libibverbs calls with random and
# invalid arguments on three contexts closed and reopened under them, and
# one thread of raw and mutated commands written to a uverbs file, with
# scribbled queues. RRXE_FUZZ_SEED replays a seed (printed first).
# Kernel reports fail the run (the harness), and so do a crash or a hang of
# the program. Afterwards the device holds no more objects than before
# (the kernel destroyed what the process left) and still works: a
# verified RC transfer (ibv_rc_pingpong --chk) between the guests.
# tests/run builds the program on the host; a run started by hand without
# that builds it here.
# timeout: 900
idx=$(rxe0_gid_index) || exit 1
secs=${VERBS_FUZZ_SECONDS:-$([ "${RRXE_LONG:-}" = 1 ] && echo 600 || echo 20)}

bin=$(scenario_program verbs_fuzz) || exit 1

counts() { rdma resource show | grep ' rxe0: '; }
rc=0
before=$(counts)
echo "before: $before"
t0=$SECONDS
timeout -k 10 $((secs + 120)) "$bin" rxe0 "$idx" "$secs" 4 2>&1 | tee fuzz.out
st=${PIPESTATUS[0]}
case $st in
0) ;;
124|137) echo "FAIL: the fuzzer hung (still running $((secs + 120)) s after its start)"; rc=1 ;;
*) echo "FAIL: the fuzzer ended with status $st$([ $st -gt 128 ] && echo " (signal $((st - 128)))")"; rc=1 ;;
esac
echo "the fuzzer ran $((SECONDS - t0)) s (exit included)"
# The process is gone: the kernel destroyed everything it left.
for _ in $(seq 20); do [ "$(counts)" = "$before" ] && break; sleep 0.5; done
after=$(counts)
echo "after:  $after"
[ "$before" = "$after" ] || { echo "FAIL: objects left behind"; rc=1; }

# The device still works: a verified RC transfer between the guests.
barrier fuzzed $((secs + 240)) || exit 1
if [ "$ROLE" = a ]; then
	timeout 60 ibv_rc_pingpong -d rxe0 -g "$idx" -s 4096 -n 30 -c >pp.out 2>&1 &
	srv=$!
	sleep 1
	notify pingpong
	wait $srv || { echo "FAIL: ibv_rc_pingpong (server) after the fuzzing"; rc=1; }
else
	await pingpong 30 || exit 1
	sleep 1
	timeout 60 ibv_rc_pingpong -d rxe0 -g "$idx" -s 4096 -n 30 -c "$PEERIP" >pp.out 2>&1 ||
		{ echo "FAIL: ibv_rc_pingpong (client) after the fuzzing"; rc=1; }
fi
cat pp.out
barrier done 90
[ $rc = 0 ] && echo "$(grep -m1 '^calls' fuzz.out)"
exit $rc
