# At the end of a run: delete every RDMA link and unload the RDMA modules;
# nothing may stay loaded or complain (the kernel log is checked after this,
# and kmemleak scans once everything is gone). The sets that load this
# project's ib_cm (cm, full) also check that it is the one loaded and that it
# unloads: a reference it leaks, or an exit that fails, would show here.
rust_cm=
case $MYSET in
cm|full) rust_cm=1 ;;
esac
if [ -n "$rust_cm" ]; then
	grep -q '^ib_cm ' /proc/modules || { echo "ib_cm is not loaded (set $MYSET)"; exit 1; }
	# Only this project's ib_cm has the rrxe_cm_* functions.
	grep -Eq ' rrxe_cm_[a-z_]+[[:space:]]+\[ib_cm\]' /proc/kallsyms ||
		{ echo "the loaded ib_cm is not this project's (no rrxe_cm_* symbols)"; exit 1; }
fi
for l in $(rdma link show 2>/dev/null | awk '{print $2}' | cut -d/ -f1 | sort -u); do
	rdma link delete "$l" || echo "could not delete link $l"
done
modprobe -r rdma_ucm rdma_rxe || { echo "modprobe -r rdma_ucm rdma_rxe failed"; exit 1; }
out=$(modprobe -r rdma_cm ib_uverbs ib_umad ib_cm iw_cm ib_core 2>&1)
left=$(grep -E '^(rdma_rxe|rdma_ucm) ' /proc/modules)
[ -z "$left" ] || { echo "still loaded: $left"; exit 1; }
if [ -n "$rust_cm" ] && grep -q '^ib_cm ' /proc/modules; then
	# The removal above stops at the first module modprobe cannot remove
	# (on the test kernel: "Module ib_uverbs is in use"), before ib_cm; say
	# so, and what modprobe said, then remove ib_cm alone. Only a module
	# that does not go then is a failure.
	echo "ib_cm left after modprobe -r rdma_cm ...: $(grep '^ib_cm ' /proc/modules)" \
		"refcnt $(cat /sys/module/ib_cm/refcnt 2>/dev/null)," \
		"holders: $(ls /sys/module/ib_cm/holders 2>/dev/null | tr '\n' ' ')"
	[ -z "$out" ] || echo "modprobe said: $out"
	rm_out=$(modprobe -r ib_cm 2>&1)
	if grep -q '^ib_cm ' /proc/modules; then
		echo "ib_cm (this project's) did not unload: $(grep '^ib_cm ' /proc/modules)"
		echo "refcnt $(cat /sys/module/ib_cm/refcnt 2>/dev/null), holders: $(ls /sys/module/ib_cm/holders 2>/dev/null | tr '\n' ' ')"
		echo "modprobe -r ib_cm: ${rm_out:-no error}"
		exit 1
	fi
	modprobe -r iw_cm ib_core 2>/dev/null
fi
[ -z "$rust_cm" ] || echo "ib_cm (this project's) unloaded"
echo ok
