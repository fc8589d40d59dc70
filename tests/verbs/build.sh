#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build.sh: build the verbs test program (tests/verbs/objects.c) with the
# host's gcc and libibverbs-dev, warnings as errors, into a directory of the
# cache per checkout, and print the binary's path. The guests boot the host's
# root read-only, so they run it from there.

. "$(dirname "$0")/../../scripts/lib.sh"

out=$(verbs_dir)
mkdir -p "$out"
gcc -O2 -g -Wall -Wextra -Werror -o "$out/verbs_objects.tmp" \
	"$RRXE_REPO/tests/verbs/objects.c" -libverbs ||
	die "building tests/verbs/objects.c failed (needs gcc and libibverbs-dev)"
mv "$out/verbs_objects.tmp" "$out/verbs_objects"
echo "$out/verbs_objects"
