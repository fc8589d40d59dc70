#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The main job: set everything up, boot the two guests with this project's
# modules, create rxe0 on eth0 in each, run rping and ib_send_bw between them
# and print the results.
# Options: --set c runs the same on the in-tree C modules (default: rust,
# this project's).

. "$(dirname "$0")/lib.sh"

set_=rust
[ "${1:-}" = --set ] && set_=${2:?--set needs c or rust}
case $set_ in c|rust) ;; *) die "--set: c or rust, not $set_" ;; esac

"$RRXE_REPO/scripts/setup.sh"
KB=$("$RRXE_REPO/scripts/build-kernel.sh" test)
MODDIR=$("$RRXE_REPO/scripts/build-modules.sh" test)
RUN=$RRXE_CACHE/results/demo-$(date +%Y%m%d-%H%M%S)
"$RRXE_REPO/tests/guest/run-pair.sh" "$RUN" "$KB" "$MODDIR" "$set_" "$set_" \
	"modules_load link_add rping perftest_send"
rc=0
for s in modules_load link_add rping perftest_send; do
	for r in a b; do
		st=$(cat "$RUN/$r/$s.status" 2>/dev/null || echo "FAIL no result")
		echo "== $s, guest $r ($set_ set): $st"
		[ "${st%% *}" = PASS ] || rc=1
	done
done
echo "== rping (client, guest b):"
tail -n 5 "$RUN/b/rping.log"
echo "== ib_send_bw (client, guest b):"
cat "$RUN/b/perftest_send.log"
echo "full logs: $RUN"
exit $rc
