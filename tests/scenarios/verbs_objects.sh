# Every verbs object through libibverbs, in each guest on its own (no
# traffic): tests/verbs/objects.c run against rxe0 (one line per check, see
# Documentation/testing.rst). Before and after it, `rdma resource show`'s
# counts for rxe0 must be equal: nothing the program made is left behind,
# even by a section that crashed. tests/run builds the program on the host
# (tests/verbs/build.sh); a run started by hand without that builds it here.
# timeout: 900
rxe0_gid_index >/dev/null || exit 1

src=$RRXE_REPO/tests/verbs/objects.c
bin=${RRXE_VERBS_DIR:-/nonexistent}/verbs_objects
if [ ! -x "$bin" ] || [ "$bin" -ot "$src" ]; then
	echo "$bin missing or older than $src: building it in the guest"
	bin=$PWD/verbs_objects
	gcc -O2 -Wall -Wextra -Werror -o "$bin" "$src" -libverbs || { echo "build failed"; exit 1; }
fi

counts() { rdma resource show | grep ' rxe0: '; }
before=$(counts)
echo "before: $before"
timeout -k 5 840 "$bin" rxe0 | tee out.txt
rc=${PIPESTATUS[0]}
after=$(counts)
echo "after:  $after"
if [ "$before" != "$after" ]; then
	echo "FAIL: rdma resource show counts changed: '$before' -> '$after'"
	exit 1
fi
[ $rc = 124 ] && echo "verbs_objects timed out"
# The program's summary is the scenario's reason (its last line).
grep '^SUMMARY' out.txt || echo "verbs_objects exit status $rc, no summary"
exit $rc
