#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-modules.sh [test|bench] [extra make args, e.g. CLIPPY=1]
#
# Build rdma_rxe.ko and rdma_ucm.ko against the cached kernel of the variant,
# in the build root (the kernel's own toolchain). Fails on any compiler or
# clippy warning. Prints the directory holding the .ko files.

. "$(dirname "$0")/lib.sh"

variant=${1:-test}
shift || true
KDIR=$("$RRXE_REPO/scripts/build-kernel.sh" "$variant")
# Per checkout: two clones (a work tree and a CI clone) must not share .ko files.
out=$RRXE_CACHE/modules/$variant-$(echo "$RRXE_REPO" | sha256sum | cut -c1-8)
mkdir -p "$out"
log "building the modules against $KDIR $*"
in_buildroot "$(variant_make "$variant") -C '$KDIR' M='$RRXE_REPO' -j$RRXE_JOBS $* modules" \
	>"$out/build.log" 2>&1 || { cat "$out/build.log" >&2; die "module build failed"; }
if grep -E -i -q '(^|[^a-z_])(warning|error)[:[]' "$out/build.log"; then
	cat "$out/build.log" >&2
	die "the module build printed warnings"
fi
cp "$RRXE_REPO/rdma_rxe.ko" "$RRXE_REPO/rdma_ucm.ko" "$RRXE_REPO/ib_cm.ko" "$out/"
echo "$out"
