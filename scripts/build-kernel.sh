#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-kernel.sh [test|bench]
#
# Build the Rust-enabled 7.3 kernel of a variant in the build root and cache
# it under $RRXE_CACHE/kernel/<variant>-<key>, where the key hashes the kernel
# version, the toolchain versions and the config fragments: a second run with
# the same inputs does nothing. Prints the build directory (usable as KDIR).
#   test:  KASAN, lockdep, DEBUG_ATOMIC_SLEEP, DEBUG_OBJECTS, DEBUG_LIST, kmemleak
#   bench: no debug options
# The build directory holds bzImage (arch/x86/boot/bzImage), the modules
# installed under modinst/lib/modules/<release>, and build-seconds.

. "$(dirname "$0")/lib.sh"

variant=${1:-test}
case $variant in test|bench) ;; *) die "unknown kernel variant '$variant' (test or bench)";; esac

frags="$RRXE_REPO/scripts/kconfig/common.config $RRXE_REPO/scripts/kconfig/$variant.config"
src=$(kernel_src)
llvm=$(variant_llvm "$variant")
[ "$variant" != bench ] || bench_bindgen
[ -f "$src/.unpacked" ] || die "kernel source missing; run scripts/setup.sh"
key=$( {
	echo "linux-source $(buildroot_pkg_version linux-source-7.3)"
	echo "rustc $(buildroot_pkg_version rustc) clang $(buildroot_pkg_version clang$llvm)"
	cat $frags
} | sha256sum | cut -c1-12)
B=$RRXE_CACHE/kernel/$variant-$key

# One build of a variant at a time: a second caller waits, then finds it cached.
mkdir -p "$RRXE_CACHE/kernel"
exec 9>"$RRXE_CACHE/kernel/.lock-$variant"
flock 9

if [ -f "$B/.complete" ]; then
	log "kernel '$variant' is cached in $B"
	echo "$B"
	exit 0
fi

log "building kernel '$variant' in $B (about 10-20 minutes on 2 cores)"
rm -rf "$B"
mkdir -p "$B"
start=$(date +%s)
mk="$(variant_make "$variant") -C $src O=$B"
in_buildroot "set -e
	$mk -s tinyconfig >/dev/null
	$src/scripts/kconfig/merge_config.sh -m -O $B $B/.config $frags >/dev/null
	$mk -s olddefconfig >/dev/null" >"$B/config.log" 2>&1 ||
	die "configuring the kernel failed; see $B/config.log"

# Every option a fragment asks for must have survived olddefconfig.
bad=0
while read -r line; do
	case $line in
	CONFIG_*=*)
		grep -qxF "$line" "$B/.config" || { echo "config: wanted '$line', got '$(grep "^${line%%=*}=" "$B/.config" || echo unset)'" >&2; bad=1; } ;;
	"# CONFIG_"*" is not set")
		opt=${line#\# }; opt=${opt%% *}
		! grep -q "^$opt=" "$B/.config" || { echo "config: wanted $opt unset" >&2; bad=1; } ;;
	esac
done < <(cat $frags)
[ $bad = 0 ] || die "the kernel config lost options asked for by the fragments (see above)"

in_buildroot "set -e
	$mk -j$RRXE_JOBS bzImage modules
	$mk -s INSTALL_MOD_PATH=$B/modinst modules_install" >"$B/build.log" 2>&1 ||
	die "kernel build failed; see the end of $B/build.log"
echo $(($(date +%s) - start)) >"$B/build-seconds"
touch "$B/.complete"
log "kernel '$variant' built in $(cat "$B/build-seconds") s"
echo "$B"
