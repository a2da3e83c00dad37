#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Hostile FPDUs over real sockets: tests/progs/fpdu_hostile.py (a raw TCP
# peer that builds every octet itself: MPA framing, CRC32C, markers, DDP and
# RDMAP headers) against tests/progs/uiw_victim.c (a uiwarp server with
# guarded memory per connection).  One connection per case, ~70 cases (RFC
# 7306 atomics and Immediate Data among them): each
# TERMINATE class a peer can provoke (RFC 5040 section 4.8: RDMAP, DDP
# tagged and untagged, MPA CRC and marker), truncated and oversize FPDUs,
# Read Requests beyond IRD, a Send with no receive, deregistered,
# invalidated, foreign-PD and read-only STags, bounds off by one, TO wrap, a
# TERMINATE from the peer, a half FPDU; positive controls for each path.
# Checked per case: the TERMINATE on the wire (and the offending header
# copied into it), the victim's report (TERMINATE sent, every posted receive
# completed, QP in error, completions within 5 s, every octet the peer was
# not granted unchanged), and across the run: a well-behaved connection
# unaffected, descriptors and memory back where they were.
# Exit 0 pass, 77 skip, anything else fail.  Env: UIW_TESTBIN, UIW_SAN.

set -u
VICTIM=${UIW_TESTBIN:-build/tests}/uiw_victim
PEER=$(dirname "$0")/../progs/fpdu_hostile.py
if [ ! -x "$VICTIM" ]; then
	echo "hostile_fpdu.sh: $VICTIM is not built"
	exit 1
fi
if ! command -v python3 >/dev/null 2>&1; then
	echo "hostile_fpdu.sh: skipped: python3 is not installed"
	exit 77
fi
ME=hostile_fpdu
# shellcheck source=tests/sh/common.inc
. "$(dirname "$0")/common.inc"

# the peer starts the victim itself, and kills and reaps it on every exit;
# timeout bounds the whole run
if [ -n "${UIW_SAN:-}" ]; then T=240; else T=120; fi
timeout -k 5 "$T" python3 "$PEER" "$VICTIM" >"$TMP/out" 2>&1
rc=$?
cat "$TMP/out"
n=$(grep -c '^ok ' "$TMP/out")
if [ $rc -ne 0 ]; then
	fail "fpdu_hostile.py exited with $rc"
elif [ "$n" -lt 50 ]; then
	fail "only $n checks passed (50 or more expected)"
else
	pass "$n checks"
fi
end_checks
