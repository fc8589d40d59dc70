# SPDX-License-Identifier: GPL-2.0
#
# Kernel reports in a guest's log (sourced by tests/guest/lib.sh in the
# guests and by tests/run on the host; pure bash: under TCG with KASAN each
# fork and exec costs 0.5-2 s in a guest).
#
# Any report fails the test, but for the known defects of the in-tree C
# modules listed in known_c_report below, in a guest that runs them: those
# are counted as expected failures of the C module (XFAIL), each with its
# first line, and recorded in Documentation/reliability.rst. A report of
# this project's modules is never known.

# Kernel log lines that start a report and fail a scenario whatever it printed.
SPLAT_RE='WARNING:|BUG:|UBSAN:|Oops|kernel BUG|general protection fault|possible circular locking|possible recursive locking|inconsistent lock state|bad unlock balance|held lock freed|lock held when returning to user space|trying to register non-static key|DEBUG_LOCKS_WARN_ON|suspicious RCU usage|refcount_t:|list_add corruption|list_del corruption|ODEBUG:|unreferenced object|Kernel panic|blocked for more than|rcu: INFO|self-detected stall|scheduling while atomic|sleeping function called from invalid context|Call Trace:|enqueued on deprecated workqueue'

# c_rxe SET: true when the module set SET (tests/guest/init.sh) runs the
# in-tree C rdma_rxe.
c_rxe() { [[ " c ucma cm " == *" $1 "* ]]; }

# known_c_report FIRST_LINE BLOCK: true when the report is a known defect of
# the in-tree C rdma_rxe (BLOCK: the report's lines, newline separated).
#
# rxe_receiver() drops the queued request packets of a QP in ERR or RESET
# (drain_req_pkts) under spin_lock_irqsave(&qp->state_lock): freeing an skb
# whose data is in virtio-net's page pool with IRQs off trips the page
# pool's lockdep_assert_no_hardirq(), then __local_bh_enable_ip()'s IRQ
# check, then lockdep's IN-SOFTIRQ-W -> SOFTIRQ-ON-W on that lock: three
# reports of one event. It needs a request that reaches a QP after its
# responder moved it to ERR (a retransmission of a NAKed request, say).
# This project's driver drops such packets outside the lock (rxe/qp_io.rs).
known_c_report() {
	local first=$1 block=$2
	local free='[[:space:]]sk_skb_reason_drop\+0x'
	local recv='[[:space:]]rxe_receiver\+0x[0-9a-f]+/0x[0-9a-f]+ \[rdma_rxe\]'
	local held='\(&qp->state_lock\)[^ ]* at: rxe_receiver\+0x'
	[[ $block =~ $free ]] && [[ $block =~ $recv ]] || return 1
	case $first in
	*"WARNING: net/core/page_pool.c:"*" at page_pool_put_unrefed_netmem+"*) return 0 ;;
	*"WARNING: kernel/softirq.c:"*" at __local_bh_enable_ip+"*) return 0 ;;
	*"WARNING: inconsistent lock state"*) [[ $block =~ $held ]] ;;
	*) return 1 ;;
	esac
}

# scan_reports FILE SET: splits FILE's reports, from a guest of module set
# SET, and sets UNKNOWN_REPORT to the first line of the first one that is
# not a known defect of the C modules (empty when none), KNOWN_REPORT to
# the first line of the first one that is (considered only when SET runs
# the in-tree rdma_rxe, see c_rxe).
# A report runs from a line matching $SPLAT_RE to the end of its stack
# ("</TASK>"); another report's first line (any match but "Call Trace:")
# ends it too, so that a report without a stack cannot hide the next.
scan_reports() {
	local crxe= line first= block=
	UNKNOWN_REPORT=
	KNOWN_REPORT=
	! c_rxe "$2" || crxe=1
	_scan_end() {
		[ -n "$first" ] || return 0
		if [ -n "$crxe" ] && known_c_report "$first" "$block"; then
			[ -n "$KNOWN_REPORT" ] || KNOWN_REPORT=$first
		elif [ -z "$UNKNOWN_REPORT" ]; then
			UNKNOWN_REPORT=$first
		fi
		first= block=
	}
	while IFS= read -r line || [ -n "$line" ]; do
		if [[ $line =~ $SPLAT_RE ]] && { [ -z "$first" ] || [[ $line != *"Call Trace:"* ]]; }; then
			_scan_end
			first=$line
		fi
		[ -n "$first" ] || continue
		block+=$line$'\n'
		[[ $line == *"</TASK>"* ]] && _scan_end
	done <"$1"
	_scan_end
	return 0
}
