#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Set up everything the project needs on a fresh Debian 12 machine, and be a
# quick no-op when it is already there:
#   - host packages: QEMU, and the RDMA userspace the guests run (the guests
#     boot the host's root file system read-only over virtio-9p), with gcc
#     and libibverbs-dev for the verbs test program (tests/verbs);
#   - a Debian trixie build root (debootstrap) holding the one toolchain used
#     for every kernel and module build: clang/lld/llvm 19 (the test kernel)
#     and 22 (the bench kernel, see lib.sh), rustc + rust-src +
#     clippy + rustfmt from trixie-backports, bindgen 0.71 (the bench
#     kernel's 0.72.1 is built by its first build, lib.sh's bench_bindgen),
#     and the linux-source-7.3 package;
#   - the kernel source unpacked under $RRXE_CACHE/src.
# Versions are checked; a missing or mismatched piece stops with a message
# naming it.

. "$(dirname "$0")/lib.sh"

HOST_PKGS="debootstrap qemu-system-x86 rdma-core ibverbs-utils ibverbs-providers
	rdmacm-utils perftest iproute2 iputils-ping kmod procps psmisc ethtool iperf3
	python3 util-linux gcc libibverbs-dev"
BUILDROOT_PKGS="clang-19 lld-19 llvm-19 libclang-19-dev clang-22 lld-22 llvm-22 make gcc libc6-dev flex
	bison bc libelf-dev libssl-dev cpio xz-utils python3 kmod rsync bindgen"
BUILDROOT_BPO_PKGS="rustc rust-src rust-clippy rustfmt linux-source-7.3"
# One line each: they are pasted into the build root's shell command below,
# where a newline would end the apt-get command.
BUILDROOT_PKGS=$(echo $BUILDROOT_PKGS)
BUILDROOT_BPO_PKGS=$(echo $BUILDROOT_BPO_PKGS)

host_packages() {
	local missing=()
	for p in $HOST_PKGS ${RRXE_EXTRA_PKGS:-}; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' ||
			missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	log "installing host packages: ${missing[*]}"
	[ "$(id -u)" = 0 ] || die "host packages missing (${missing[*]}) and not root"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >/dev/null || die "apt-get update failed"
	apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null ||
		die "could not install host packages: ${missing[*]}"
}

buildroot_packages_ok() {
	local p
	for p in $BUILDROOT_PKGS $BUILDROOT_BPO_PKGS; do
		[ -n "$(buildroot_pkg_version "$p")" ] || return 1
	done
}

buildroot() {
	local R=$RRXE_BUILDROOT
	if [ ! -x "$R/usr/bin/apt-get" ]; then
		log "creating the Debian trixie build root in $R (debootstrap)"
		rm -rf "$R"
		mkdir -p "$RRXE_CACHE"
		debootstrap --variant=minbase trixie "$R" "$RRXE_MIRROR" >"$RRXE_CACHE/debootstrap.log" 2>&1 ||
			die "debootstrap of trixie from $RRXE_MIRROR failed; see $RRXE_CACHE/debootstrap.log"
	fi
	buildroot_packages_ok && return 0
	log "installing the toolchain into the build root"
	cat >"$R/etc/apt/sources.list.d/trixie-backports.sources" <<-SRC
		Types: deb
		URIs: $RRXE_MIRROR
		Suites: trixie-backports
		Components: main
		Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
	SRC
	cp /etc/resolv.conf "$R/etc/resolv.conf" 2>/dev/null || true
	in_buildroot "export DEBIAN_FRONTEND=noninteractive
		apt-get update -q >/dev/null &&
		apt-get install -y -q --no-install-recommends $BUILDROOT_PKGS >/dev/null &&
		apt-get install -y -q --no-install-recommends -t trixie-backports $BUILDROOT_BPO_PKGS >/dev/null" ||
		die "installing the build-root toolchain failed (packages: $BUILDROOT_PKGS; from trixie-backports: $BUILDROOT_BPO_PKGS)"
	buildroot_packages_ok || die "build root still lacks a package of: $BUILDROOT_PKGS $BUILDROOT_BPO_PKGS"
}

check_versions() {
	local rustc rsrc clippy bindgen lib
	rustc=$(buildroot_pkg_version rustc)
	rsrc=$(buildroot_pkg_version rust-src)
	clippy=$(buildroot_pkg_version rust-clippy)
	[ "$rustc" = "$rsrc" ] || die "rustc ($rustc) and rust-src ($rsrc) differ in the build root"
	[ "$rustc" = "$clippy" ] || die "rustc ($rustc) and rust-clippy ($clippy) differ in the build root"
	[ -d "$RRXE_BUILDROOT$(rust_lib_src)" ] || die "rust-src library missing at $(rust_lib_src)"
	bindgen=$(buildroot_pkg_version bindgen)
	dpkg --compare-versions "$bindgen" ge 0.71.1 || die "bindgen $bindgen is older than 0.71.1"
	lib=$(buildroot_pkg_version libclang-19-dev)
	[ -n "$lib" ] || die "libclang-19-dev missing (7.3 needs libclang >= 17)"
}

kernel_source() {
	local src v
	src=$(kernel_src)
	[ -f "$src/.unpacked" ] && return 0
	v=$(buildroot_pkg_version linux-source-7.3)
	log "unpacking linux-source-7.3 $v into $src"
	rm -rf "$src" "$src.tmp"
	mkdir -p "$src.tmp"
	tar -C "$src.tmp" -xf "$RRXE_BUILDROOT/usr/src/linux-source-7.3.tar.xz" ||
		die "could not unpack the kernel source"
	mv "$src.tmp"/linux-source-7.3 "$src"
	rmdir "$src.tmp"
	touch "$src/.unpacked"
}

rust_available() {
	local src stamp
	src=$(kernel_src)
	stamp=$RRXE_CACHE/.rustavailable-$(buildroot_pkg_version rustc)-$(buildroot_pkg_version linux-source-7.3)
	[ -f "$stamp" ] && return 0
	in_buildroot "$(variant_make test) -s -C '$src' O=/tmp/rustavail rustavailable" |
		grep -q 'Rust is available' || die "the kernel's 'make rustavailable' failed in the build root"
	touch "$stamp"
}

# The guests boot this machine's root read-only and mount a tmpfs over
# /lib/modules for their module set: the mount point must exist.
[ -d /lib/modules ] || mkdir -p /lib/modules

host_packages
# The host unit tests (tests/host) build with the machine's own cargo.
command -v cargo >/dev/null || die "cargo not found: the host unit tests need the machine's Rust toolchain (rustup)"
buildroot
check_versions
kernel_source
rust_available
log "setup complete: rustc $(buildroot_pkg_version rustc), bindgen $(buildroot_pkg_version bindgen), clang $(buildroot_pkg_version clang-19), linux-source $(buildroot_pkg_version linux-source-7.3)"
