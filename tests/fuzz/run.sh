#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/fuzz/run.sh [SECONDS]
#
# Runs each cargo-fuzz target (fuzz_targets/: the RoCE packet parser, the
# rdma_cm write path's decoders) for SECONDS (default 60) with
# AddressSanitizer and debug assertions (overflow checks, as the kernel
# build has). The machine's Rust toolchain is the stable one: cargo-fuzz's
# -Z flags are let through with RUSTC_BOOTSTRAP=1. Installs cargo-fuzz if
# it is missing. Prints one line per target and exits non-zero if any
# target found a crash (its input is kept under artifacts/<target>/).

set -euo pipefail
secs=${1:-60}
here=$(cd "$(dirname "$0")" && pwd)
# Its output goes to stderr: tests/run keeps that in fuzz.log.
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked >&2
export RUSTC_BOOTSTRAP=1
rc=0
# cargo-fuzz needs a Cargo project to start from: the host tests' crate,
# whose library holds the entry points.
cd "$here/../host"
for t in rxe_packet ucma_write; do
	log=$here/target/$t.log
	mkdir -p "$here/target"
	if cargo fuzz run -a --fuzz-dir "$here" "$t" -- -max_total_time="$secs" >"$log" 2>&1; then
		echo "PASS fuzz: $t, $(grep -o 'Done [0-9]* runs' "$log" | head -1) in $secs s"
	else
		echo "FAIL fuzz: $t, see $log"
		rc=1
	fi
done
exit $rc
