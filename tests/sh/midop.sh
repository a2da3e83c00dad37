#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The application acts while a peer operation is half done, over real
# sockets: tests/progs/midop_peer.py (a raw iWARP peer building MPA/DDP/RDMAP
# octets itself, with fpdu_hostile.py's helpers) against
# tests/progs/midop_victim.c (a uiwarp server that the peer drives over its
# stdin, with every region mmap'ed between guard pages).  The peer sends part
# of an operation, the victim calls uiw_modify_qp(ERR) and/or uiw_dereg_mr()
# and then fills the memory with 0xEE ("after release"), mprotects it
# PROT_NONE or munmaps it, and the peer sends the rest or starts reading:
#   - inbound, progress-thread, polled and markers-on contexts: a Read
#     Response, a multi-FPDU Send, an RDMA Write cut at an FPDU boundary, in
#     the middle of an FPDU and in the middle of the last one;
#   - outbound: the peer's 32 MiB Read of a region deregistered meanwhile,
#     the victim's 8 MiB Write whose source is released after its flush;
#   - a transmit path full (peer not reading) when an invalid FPDU arrives.
# Checked per case: released memory is never read (no 0xEE octet reaches the
# peer) or written (a region filled with 0xEE after release still holds
# only 0xEE; no crash or sanitizer report on PROT_NONE/unmapped memory), each
# work request completes exactly once, the QP ends in error, DISCONNECTED
# within a bound (5 s from the invalid FPDU for the stuck transmit path).
# One victim process per case.  Exit 0 pass, 77 skip, anything else fail.
# Env: UIW_TESTBIN, UIW_SAN; MIDOP_ONLY=case,... runs some cases only.

set -u
VICTIM=${UIW_TESTBIN:-build/tests}/midop_victim
PEER=$(dirname "$0")/../progs/midop_peer.py
if [ ! -x "$VICTIM" ]; then
	echo "midop.sh: $VICTIM is not built"
	exit 1
fi
if ! command -v python3 >/dev/null 2>&1; then
	echo "midop.sh: skipped: python3 is not installed"
	exit 77
fi
ME=midop
# shellcheck source=tests/sh/common.inc
. "$(dirname "$0")/common.inc"

# the peer starts one victim per case and kills and reaps it however the
# case ends; timeout bounds the whole run
if [ -n "${UIW_SAN:-}" ]; then T=400; else T=150; fi
if [ -n "${MIDOP_ONLY:-}" ]; then
	set -- --only "$MIDOP_ONLY"
else
	set --
fi
timeout -k 5 "$T" python3 "$PEER" "$VICTIM" "$@" >"$TMP/out" 2>&1
rc=$?
cat "$TMP/out"
summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$TMP/out")
if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
	fail "midop_peer.py did not finish within $T s"
elif [ -z "$summary" ]; then
	fail "midop_peer.py exited with $rc without a summary"
elif [ $rc -ne 0 ]; then
	fail "$summary"
else
	pass "$summary"
fi
end_checks
