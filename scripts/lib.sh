# SPDX-License-Identifier: GPL-2.0
# Shared settings for the project's scripts. Sourced, never run.
#
# Everything that is not the repository lives under $RRXE_CACHE (outside the
# repository, so clean clones and CI reuse it): the Debian trixie build root
# that is the one toolchain for every kernel and module build, the kernel
# source, and the kernel builds keyed by version + config + toolchain.

set -euo pipefail

RRXE_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RRXE_CACHE=${RRXE_CACHE:-/var/cache/rust-rxe}
RRXE_BUILDROOT=$RRXE_CACHE/buildroot
RRXE_MIRROR=${RRXE_MIRROR:-http://deb.debian.org/debian}
RRXE_SRC_DIR=$RRXE_CACHE/src
# Toolchain inside the build root (Debian trixie + trixie-backports).
RRXE_LLVM=-19
RRXE_JOBS=${RRXE_JOBS:-$(($(nproc) + 1))}

# The directory of this checkout's test programs (tests/verbs, the scenarios'
# C programs), built on the host and run by the guests from there.
verbs_dir() { echo "$RRXE_CACHE/verbs/$(echo "$RRXE_REPO" | sha256sum | cut -c1-8)"; }

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# Version of a package installed in the build root, or empty.
buildroot_pkg_version() {
	dpkg-query --admindir="$RRXE_BUILDROOT/var/lib/dpkg" -W -f='${Status} ${Version}\n' "$1" 2>/dev/null |
		awk '$3 == "installed" { print $4 }'
}

# The kernel source tree unpacked from linux-source-7.3 (one directory).
kernel_src() {
	local v
	v=$(buildroot_pkg_version linux-source-7.3)
	[ -n "$v" ] || die "linux-source-7.3 is not installed in $RRXE_BUILDROOT; run scripts/setup.sh"
	# Upstream version only: '~' and '+' in a path upset make.
	echo "$RRXE_SRC_DIR/linux-${v%%-*}"
}

rust_lib_src() {
	local v
	v=$(buildroot_pkg_version rustc)
	echo "/usr/src/rustc-${v%%+*}/library"
}

# Run a command inside the build root, in a private mount namespace so nothing
# stays mounted afterwards. The cache and the repository appear at the same
# paths inside as outside, so paths recorded by Kbuild are valid on both sides.
in_buildroot() {
	local cmd="$*"
	unshare --mount --propagation private /bin/bash -c '
		set -e
		R=$1; shift
		for d in proc sys dev; do mount --bind /$d "$R/$d"; done
		for d in "$RRXE_CACHE" "$RRXE_REPO"; do
			mkdir -p "$R$d"
			mount --bind "$d" "$R$d"
		done
		exec chroot "$R" /usr/bin/env -i HOME=/root LANG=C.UTF-8 \
			PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin \
			/bin/bash -c "cd \"$PWD_IN\" && $1"
	' in_buildroot "$RRXE_BUILDROOT" "$cmd"
}
export RRXE_CACHE RRXE_REPO
export PWD_IN=${PWD_IN:-$RRXE_REPO}
