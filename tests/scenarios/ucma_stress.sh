# timeout: 840
# Concurrency (tests/scenarios/ucma_stress.py): threads creating, resolving,
# connecting (to this guest's and the peer's listeners), accepting,
# rejecting, migrating and destroying IDs on several files, and closing files
# with IDs and events pending, for UCMA_STRESS_SECONDS (60; 600 with
# RRXE_LONG=1) in each guest at once. Any KASAN, lockdep, refcount or WARN
# report fails the run; so does the program running 120 s past its time.
wait_gid rxe0 "$MYIP" || exit 1
notify ready
await ready 60 || exit 1
secs=${UCMA_STRESS_SECONDS:-$([ "${RRXE_LONG:-}" = 1 ] && echo 600 || echo 60)}
timeout -k 10 $((secs + 120)) python3 "$RRXE_REPO/tests/scenarios/ucma_stress.py" "$MYIP" "$PEERIP" "$secs"; rc=$?
notify done
await done 120
exit $rc
