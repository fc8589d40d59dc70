#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run-pair.sh RUNDIR KERNEL_BUILD MODULE_DIR SET_A SET_B "SCENARIOS"
#
# Boot two QEMU guests (TCG) on KERNEL_BUILD's bzImage, joined by one virtual
# Ethernet link (QEMU socket netdev over 127.0.0.1; no other network), each
# with the host root read-only over virtio-9p and RUNDIR shared read-write.
# Guest a (192.0.2.1) gets module set SET_A, guest b (192.0.2.2) SET_B
# (c: in-tree rdma_rxe/rdma_ucm; rust: this project's, from MODULE_DIR;
# ucma: in-tree rdma_rxe with this project's rdma_ucm).
# Both run SCENARIOS in order; results land in RUNDIR/{a,b}. The guests are
# always bounded in time and killed if they overrun.

. "$(dirname "$0")/../../scripts/lib.sh"

# RRXE_LINK=nodelay (the benchmark's): the link is a TCP connection made
# with Nagle's algorithm off, by tests/guest/link-fds.py, which runs this
# script again with its two ends open (Documentation/guest-harness.rst,
# "The link"). The default is QEMU's own listen=/connect= stream.
LINK=${RRXE_LINK:-tcp}
case $LINK in tcp|nodelay) ;; *) die "RRXE_LINK must be tcp or nodelay, not '$LINK'" ;; esac
if [ "$LINK" = nodelay ] && [ -z "${RRXE_LINK_FD_A:-}" ]; then
	exec python3 "$RRXE_REPO/tests/guest/link-fds.py" "$0" "$@"
fi

RUN=$1 KB=$2 MODDIR=$3 SET_A=$4 SET_B=$5 SCENARIOS=$6
GUEST_TIMEOUT=${RRXE_GUEST_TIMEOUT:-4500}
GUEST_MEM=${RRXE_GUEST_MEM:-2048}
GUEST_CPUS=${RRXE_GUEST_CPUS:-1}
# Extra kernel parameters (the benchmark passes tsc_early_khz, see bench.sh).
GUEST_APPEND=${RRXE_GUEST_APPEND:-}
# A TCG plugin for both guests (tests/bench/tbcount.so, the instruction
# counter of bench_profile.sh), given RUNDIR/<role>/tb as its directory.
PLUGIN=${RRXE_QEMU_PLUGIN:-}
# Another QEMU binary, and words appended to both guests' command lines
# (a later -cpu overrides the one below), for by-hand profiling, e.g. a
# QEMU >= 8.1 with -perfmap (Documentation/benchmarks.rst, "The receive
# WQE's copy, found from the host").
QEMU=${RRXE_QEMU:-qemu-system-x86_64}
# TCG's options (RRXE_QEMU_ACCEL=tcg,tb-size=4096: a translation buffer of
# 4 GiB instead of QEMU's 1 GiB, flushed less often; benchmarks.rst).
ACCEL=${RRXE_QEMU_ACCEL:-tcg}
case $ACCEL in tcg|tcg,*) ;; *) die "RRXE_QEMU_ACCEL must be tcg[,OPTIONS], not '$ACCEL'" ;; esac
read -r -a QEMU_ARGS <<<"${RRXE_QEMU_ARGS:-}"

# The guests cover these host paths with tmpfs (tests/guest/init.sh): modules
# there are invisible in the guest, which would then load the in-tree ones.
case $(realpath -m "$MODDIR")/ in
/tmp/*|/run/*|/var/tmp/*|/var/log/*|/var/lib/*|/root/*|/mnt/*|/lib/modules/*)
	die "module dir $MODDIR is hidden in the guests by a tmpfs; build the modules with scripts/build-modules.sh (they go under /var/cache/rust-rxe/modules)" ;;
esac

rm -rf "$RUN"
mkdir -p "$RUN/a" "$RUN/b" "$RUN/sync"
krel=$(ls "$KB/modinst/lib/modules")
cat >"$RUN/config.sh" <<CFG
export RRXE_REPO='$RRXE_REPO'
export MODINST='$KB/modinst'
export KSRC='$(kernel_src)'
export RUST_KO_DIR='$MODDIR'
export RRXE_VERBS_DIR='$(verbs_dir)'
export SET_a=$SET_A SET_b=$SET_B
export IP_a=192.0.2.1 IP_b=192.0.2.2
export SCENARIOS='$SCENARIOS'
export SCENARIO_TIMEOUT=${RRXE_SCENARIO_TIMEOUT:-400}
CFG
# Extra environment for the scenarios (e.g. the benchmark's settings).
[ -z "${RRXE_GUEST_ENV:-}" ] || echo "$RRXE_GUEST_ENV" >>"$RUN/config.sh"

boot() { # role netdev-spec mac [the other guest's end of a nodelay link]
	local role=$1 plugin=() dump=() monitor=(-monitor none)
	# Run in the background, so in a subshell of its own: the other end
	# closed here stays open for the other guest.
	[ -z "${4:-}" ] || eval "exec $4>&-"
	if [ -n "$PLUGIN" ]; then
		mkdir -p "$RUN/$role/tb"
		plugin=(-plugin "file=$PLUGIN,dir=$RUN/$role/tb")
	fi
	# RRXE_QEMU_PCAP=1: QEMU writes what the guest's link NIC sends and
	# receives, headers only, with host timestamps, to $RUN/link-<role>.pcap
	# (tests/bench/pcap-timing.py reads it).
	if [ -n "${RRXE_QEMU_PCAP:-}" ]; then
		dump=(-object "filter-dump,id=dump0,netdev=n0,file=$RUN/link-$role.pcap,maxlen=128")
	fi
	# RRXE_QEMU_MONITOR=1: QEMU's human monitor on a unix socket,
	# $RUN/monitor-<role>.sock (e.g. `info jit` around a measurement).
	if [ -n "${RRXE_QEMU_MONITOR:-}" ]; then
		monitor=(-monitor "unix:$RUN/monitor-$role.sock,server=on,wait=off")
	fi
	timeout -k 10 "$GUEST_TIMEOUT" "$QEMU" \
		-accel "$ACCEL" -cpu max,la57=off -smp "$GUEST_CPUS" -m "$GUEST_MEM" "${plugin[@]}" \
		-name "rrxe-$role,debug-threads=on" \
		-display none "${monitor[@]}" -no-reboot -nic none \
		-serial "file:$RUN/console-$role.log" \
		-kernel "$KB/arch/x86/boot/bzImage" \
		-append "console=ttyS0 root=/dev/root rootfstype=9p rootflags=trans=virtio,version=9p2000.L,msize=262144,cache=loose ro init=$RRXE_REPO/tests/guest/init.sh rrxe_role=$role panic=-1 oops=panic loglevel=6 $GUEST_APPEND" \
		-fsdev local,id=root,path=/,security_model=none,readonly=on,multidevs=remap \
		-device virtio-9p-pci,fsdev=root,mount_tag=/dev/root \
		-fsdev local,id=run,path="$RUN",security_model=none \
		-device virtio-9p-pci,fsdev=run,mount_tag=run \
		-fsdev local,id=repo,path="$RRXE_REPO",security_model=none,readonly=on \
		-device virtio-9p-pci,fsdev=repo,mount_tag=repo \
		-netdev "socket,id=n0,$2" \
		-device "virtio-net-pci,netdev=n0,mac=$3" "${dump[@]}" "${QEMU_ARGS[@]}" \
		>"$RUN/qemu-$role.log" 2>&1
	echo $? >"$RUN/qemu-$role.status"
	# Tell the other guest not to wait for this one any more.
	: >"$RUN/sync/dead.$role"
}

log "booting guests a ($SET_A) and b ($SET_B) on a $LINK link: $SCENARIOS"
if [ "$LINK" = nodelay ]; then
	boot a "fd=$RRXE_LINK_FD_A" 52:54:00:00:02:01 "$RRXE_LINK_FD_B" &
	pa=$!
	boot b "fd=$RRXE_LINK_FD_B" 52:54:00:00:02:02 "$RRXE_LINK_FD_A" &
	pb=$!
else
	# A free TCP port on loopback for the link between the guests.
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	boot a "listen=127.0.0.1:$port" 52:54:00:00:02:01 &
	pa=$!
	for _ in $(seq 100); do
		ss -ltn "sport = :$port" | grep -q LISTEN && break
		sleep 0.1
	done
	boot b "connect=127.0.0.1:$port" 52:54:00:00:02:02 &
	pb=$!
fi
wait $pa $pb
log "guests done (qemu a: $(cat "$RUN/qemu-a.status"), b: $(cat "$RUN/qemu-b.status"))"
