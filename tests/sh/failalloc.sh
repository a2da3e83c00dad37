#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Failing-allocation test of connection setup and teardown (issue 8), with
# tests/progs/failalloc.c: for every N, the Nth allocation of a scenario
# (two contexts over 127.0.0.1, PD, CQs, MRs, QPs, listen, connect, accept,
# a verified Send, RDMA Write and RDMA Read, disconnect, everything
# destroyed, contexts closed) fails with ENOMEM, in a child process of its
# own; every call must succeed or fail with an errno the API documents,
# the scenario must tear down whatever it created, and nothing may crash,
# hang or leak (every block allocated while armed is freed again).  Both
# context modes (progress thread, polled), and the variants p2p-srq
# (peer-to-peer, markers, an SRQ), abort (Writes queued, QP moved to
# error), reject, client-gone and server-gone (a peer that goes away during
# setup); all of it twice (the progress threads make the order of
# allocations vary), then once more failing every allocation from the Nth
# on (memory that stays exhausted).  First the checker is shown to catch a
# leak, a crash and a hang it is fed.
# Exit 0 pass, 78 not applicable to this build, 77 skip, anything else fail.  Every wait is bounded (10 s in
# the scenario, 60 s per child, which the program kills and reaps; each
# run by timeout(1)).  Env: UIW_BIN or UIW_TESTBIN, UIW_SAN.

set -u

FA=${UIW_TESTBIN:-$(dirname "${UIW_BIN:-build/bin}")/tests}/failalloc
if [ ! -x "$FA" ]; then
	echo "failalloc.sh: $FA is not built"
	exit 1
fi
case ${UIW_SAN:-} in
*address* | *thread* | *memory* | *leak*)
	echo "failalloc.sh: skipped: SAN=$UIW_SAN: the test replaces malloc and free, which" \
		"the sanitizer's own allocator must own (run it in a build without SAN=address/thread)"
	exit 78
	;;
esac

ME=failalloc
# shellcheck source=tests/sh/common.inc
. "$(dirname "$0")/common.inc"

# the checker works: one N, each fault fed on purpose
for x in leak crash hang; do
	timeout 60 "$FA" -m polled -s full -n 1 -N 1 -t 3 -X "$x" >"$TMP/self-$x.log" 2>&1
	rc=$?
	if [ $rc -eq 1 ] && grep -q "PROBLEM: $x" "$TMP/self-$x.log"; then
		pass "checker: a $x is caught ($(grep "PROBLEM: $x" "$TMP/self-$x.log" | sed 's/^ *PROBLEM: //'))"
	else
		fail "checker: a $x fed on purpose was not reported (exit $rc): $(tr '\n' ' ' <"$TMP/self-$x.log")"
	fi
done

# sweep NAME ARGS...: progress lines (one per mode and scenario) as they
# come, the per-N lines in $TMP/NAME.detail (shown on failure)
sweep() {
	name=$1
	shift
	start=$(date +%s)
	: >"$TMP/$name.log"
	timeout 900 "$FA" -q -o "$TMP/$name.detail" "$@" >"$TMP/$name.log" 2>&1 &
	FPID=$!
	PIDS="$PIDS $FPID"
	shown=0
	while :; do
		kill -0 "$FPID" 2>/dev/null
		alive=$?
		n=$(grep -c '' "$TMP/$name.log")
		if [ "$n" -gt "$shown" ]; then
			sed -n "$((shown + 1)),${n}p" "$TMP/$name.log" |
				grep ': FAILED the Nth\|^  PROBLEM\| N=[0-9]*: ' | sed 's/^/failalloc.sh:   /'
			shown=$n
		fi
		[ $alive -ne 0 ] && break
		sleep 0.5
	done
	wait "$FPID"
	rc=$?
	PIDS=""
	sed -n '/^failalloc: where/,$p' "$TMP/$name.log" | sed 's/^/failalloc.sh: /'
	points=$(sed -n 's/^failalloc: \([0-9]*\) allocation points in all.*/\1/p' "$TMP/$name.log")
	if [ $rc -eq 0 ] && [ -n "$points" ] && [ "$points" -gt 200 ]; then
		pass "$name: $points allocation points failed: no crash, no hang, no leak, only documented errors ($(($(date +%s) - start)) s)"
	else
		fail "$name (exit $rc, ${points:-no} allocation points):"
		grep -B1 -A8 'PROBLEM' "$TMP/$name.detail" | head -n 60
	fi
}

echo "failalloc.sh: failing the Nth allocation for every N (2 rounds, 2 modes, 6 scenarios)"
sweep once -r 2
echo "failalloc.sh: failing every allocation from the Nth on, for every N"
sweep from-n -p

end_checks
