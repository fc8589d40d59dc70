# timeout: 240
# Concurrency (tests/scenarios/ucma_stress.py): threads creating, resolving,
# connecting (to this guest's and the peer's listeners), accepting,
# rejecting, migrating and destroying IDs on several files, and closing files
# with IDs and events pending, for UCMA_STRESS_SECONDS (60) in each guest at
# once. Any KASAN, lockdep, refcount or WARN report fails the run.
wait_gid rxe0 "$MYIP" || exit 1
notify ready
await ready 60 || exit 1
python3 "$RRXE_REPO/tests/scenarios/ucma_stress.py" "$MYIP" "$PEERIP" "${UCMA_STRESS_SECONDS:-60}"; rc=$?
notify done
await done 120
exit $rc
