#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# PID 1 of a test guest. The guest boots the host's root file system
# read-only over virtio-9p; this script makes the writable places tmpfs,
# mounts the run directory (9p tag "run", shared by both guests and the host)
# and the repository (tag "repo"),
# installs the chosen module set under /lib/modules/$(uname -r), brings up
# eth0, runs the scenarios listed in the run's config, and powers off.
# Parameters come from the kernel command line (unknown key=value pairs
# become init's environment): rrxe_role=a|b.

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8 TERM=dumb

mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
# No udev here: the links udev would make, for bash process substitution.
ln -sf /proc/self/fd /dev/fd
mount -t tmpfs tmpfs /dev/shm
for d in /tmp /run /var/tmp /var/log /var/lib /root /mnt /lib/modules /etc/iproute2; do
	mount -t tmpfs -o mode=0755 tmpfs "$d" 2>/dev/null
done
chmod 1777 /tmp /var/tmp
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mkdir -p /mnt/run
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=none run /mnt/run ||
	{ echo "rrxe-init: cannot mount the run directory" >&2; reboot -f; }

RUN=/mnt/run
ROLE=${rrxe_role:?}
. "$RUN/config.sh"
# The repository is shared on its own (tag "repo") and mounted at its host
# path: a clone under /tmp or /root would be hidden by the tmpfs mounts above.
mkdir -p "$RRXE_REPO"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,ro repo "$RRXE_REPO" ||
	{ echo "rrxe-init: cannot mount the repository" >&2; reboot -f; }
export RUN ROLE
OUT=$RUN/$ROLE
mkdir -p "$OUT"
exec >"$OUT/init.log" 2>&1
set -x

# Module set for this guest (set_modules in lib.sh): the kernel's own
# modules, plus this project's in updates/ (which depmod prefers).
read -r uptime _ </proc/uptime
echo "$EPOCHREALTIME init, uptime $uptime" >>"$OUT/timing.log"
cp -a "$MODINST/lib/modules/$(uname -r)" /lib/modules/
eval "MYSET=\$SET_$ROLE"
. "$RRXE_REPO/tests/guest/lib.sh"
# A set not installed fails every scenario (run_scenarios) rather than
# running them on the in-tree modules under its name.
install_set "$MYSET" || SET_WHY="module set $MYSET not installed (see init.log)"
echo "$EPOCHREALTIME modules installed" >>"$OUT/timing.log"

hostname "guest-$ROLE"
ip link set lo up
eval "MYIP=\$IP_$ROLE"
ip addr add "$MYIP/24" dev eth0
ip link set eth0 up

set +x
run_scenarios
dmesg >"$OUT/dmesg-final.txt"
echo done >"$OUT/done"
sync
reboot -f
