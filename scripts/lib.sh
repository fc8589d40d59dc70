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
# Toolchain inside the build root (Debian trixie + trixie-backports): the
# test kernel is built with clang 19 (the verified route, KASAN with Rust);
# the bench kernel with clang 22, whose LLVM is rustc's, so that it can
# inline the kernel's C helpers into Rust code (CONFIG_RUST_INLINE_HELPERS,
# which needs rustc and clang on one LLVM major version).
RRXE_LLVM=-19
RRXE_LLVM_BENCH=-22
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

# The LLVM suffix (make LLVM=...) of a kernel variant's builds.
variant_llvm() {
	case $1 in
	bench) echo "$RRXE_LLVM_BENCH" ;;
	*) echo "$RRXE_LLVM" ;;
	esac
}

# bindgen for the bench kernel: Debian's 0.71 with libclang 22 turns some
# structs opaque (rust-bindgen#3278, fixed in 0.72.1), and libclang 19
# rejects clang 22's warning options; scripts/setup.sh builds 0.72.1 here
# with the machine's cargo (it loads libclang at run time).
RRXE_BINDGEN_BENCH=$RRXE_CACHE/bindgen-0.72.1/bin/bindgen

# Builds the bench kernel's bindgen once, with the machine's cargo, into the
# cache (the build root sees it at the same path). Only the bench builds
# need it: the test command does not depend on it.
bench_bindgen() {
	"$RRXE_BINDGEN_BENCH" --version 2>/dev/null | grep -qx 'bindgen 0.72.1' && return 0
	log "building bindgen 0.72.1 for the bench kernel (cargo install, about 2 minutes)"
	cargo install --quiet --locked bindgen-cli --version 0.72.1 \
		--root "$RRXE_CACHE/bindgen-0.72.1" >&2 ||
		die "cargo install bindgen-cli 0.72.1 failed (the bench kernel needs it)"
}

# The make command of a kernel variant's builds, in the build root: its
# LLVM, and bindgen with the libclang of the same LLVM (bindgen takes the
# newest libclang it finds otherwise, whatever clang builds the kernel).
variant_make() {
	local llvm bindgen=
	llvm=$(variant_llvm "$1")
	[ "$1" != bench ] || bindgen="BINDGEN=$RRXE_BINDGEN_BENCH"
	echo "env LIBCLANG_PATH=/usr/lib/llvm$llvm/lib make LLVM=$llvm $bindgen RUST_LIB_SRC=$(rust_lib_src)"
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
