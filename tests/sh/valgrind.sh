#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The loopback interop programs under valgrind memcheck, both ends:
# uiw-perf write_bw and read_bw (server and client, 300 verified 64 KiB
# messages each), and bulk_server with bulk_client over RPC-over-RDMA
# (NULL, GET by Write chunk, PUT by Read chunk, a Long reply, 4 calls in
# flight; verified).  Polled contexts only: valgrind 3.19 holds its big
# lock across io_uring_enter(), so a progress thread that sleeps in
# io_uring stops every other thread (uiw-ping, which has no polled mode,
# hangs at start).
# Each process must exit with no memcheck error and no definitely or
# indirectly lost block (--errors-for-leak-kinds=definite,indirect
# --error-exitcode=99).  The kernel fills receive buffers through io_uring,
# which memcheck cannot see: the engine marks them defined
# (VALGRIND_MAKE_MEM_DEFINED in uiw_engine.c on_rx()).
# Skipped (77) without valgrind or under the sanitizers (they do not mix).
# Every process started here is killed and reaped on exit; every wait is
# bounded.  Also: the victim of the hostile-FPDU peer (uiw_victim, all of
# tests/progs/fpdu_hostile.py's cases) under memcheck.
# Env: UIW_BIN (build/bin), UIW_TESTBIN (build/tests), UIW_SAN.

set -u

BIN=${UIW_BIN:-build/bin}
EX=$(dirname "$BIN")/examples
if [ -n "${UIW_SAN:-}" ]; then
	echo "valgrind.sh: not applicable: valgrind and the sanitizers do not mix"
	exit 78
fi
if ! command -v valgrind >/dev/null 2>&1; then
	echo "valgrind.sh: skipped: valgrind is not installed"
	exit 77
fi
for b in "$BIN/uiw-perf" "$EX/bulk_server" "$EX/bulk_client"; do
	if [ ! -x "$b" ]; then
		echo "valgrind.sh: $b is not built"
		exit 1
	fi
done
T=120
VG="valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=99"

REAP_WAIT=100
ME=valgrind
# shellcheck source=tests/sh/common.inc
. "$(dirname "$0")/common.inc"

# vg_check NAME RC LOG: the process exited 0 and memcheck said nothing
vg_check() {
	if [ "$2" = 0 ] && ! grep -q '^==[0-9]*==' "$3"; then
		pass "$1: no memcheck error, no leak"
	else
		fail "$1 (exit $2): $(grep -m 5 -A 3 '^==[0-9]*==' "$3" | tr '\n' ' ' | cut -c1-600) $(tail -n 2 "$3" | tr '\n' ' ')"
	fi
}

# 1. uiw-perf: a polled server and client, RDMA Write then Read, verified
for t in write_bw read_bw; do
	# shellcheck disable=SC2086
	$VG "$BIN/uiw-perf" $t --poll -B 127.0.0.1 -p 0 >"$TMP/$t-srv.log" 2>&1 &
	SP=$!
	PIDS="$PIDS $SP"
	PORT=$(wait_for "$TMP/$t-srv.log" 's/.*listening on .* port \([0-9][0-9]*\).*/\1/p' "$T")
	if [ -z "$PORT" ]; then
		fail "uiw-perf $t server did not start: $(tail -n 3 "$TMP/$t-srv.log" | tr '\n' ' ')"
		continue
	fi
	rc=0
	# shellcheck disable=SC2086
	timeout "$T" $VG "$BIN/uiw-perf" $t --poll -s 64K -n 300 --verify -p "$PORT" 127.0.0.1 \
		>"$TMP/$t-cli.log" 2>&1 || rc=$?
	vg_check "uiw-perf $t --poll --verify client (300 x 64 KiB)" "$rc" "$TMP/$t-cli.log"
	n=0
	while kill -0 "$SP" 2>/dev/null && [ $n -lt $((T * 10)) ]; do sleep 0.1; n=$((n + 1)); done
	rc=0
	wait "$SP" || rc=$?
	vg_check "uiw-perf $t server" "$rc" "$TMP/$t-srv.log"
done

# 2. RPC-over-RDMA: bulk_server and bulk_client
# shellcheck disable=SC2086
$VG "$EX/bulk_server" --rdma 0 -a 127.0.0.1 >"$TMP/rpc-srv.log" 2>&1 &
RS=$!
PIDS="$PIDS $RS"
RP=$(wait_for "$TMP/rpc-srv.log" 's/^bulk_server: rdma port \([0-9]*\)$/\1/p' "$T")
if [ -z "$RP" ]; then
	fail "bulk_server did not start: $(tail -n 3 "$TMP/rpc-srv.log" | tr '\n' ' ')"
else
	i=0
	for args in "-o null -n 50" "-o get -s 65536 -n 10 --verify" "-o put -s 65536 -n 10 --verify" \
		"-o get -s 20000 -n 5 --no-result-buf --verify" "-o get -s 65536 -n 20 --inflight 4 --verify"; do
		i=$((i + 1))
		rc=0
		# shellcheck disable=SC2086
		timeout "$T" $VG "$EX/bulk_client" -q --rdma -p "$RP" $args 127.0.0.1 >"$TMP/rpc-cli.$i.log" 2>&1 || rc=$?
		vg_check "bulk_client $args" "$rc" "$TMP/rpc-cli.$i.log"
	done
	# the server's own errors so far (it runs until killed: leaks at a
	# kill are not its fault and not counted; errors are)
	if grep -q '^==[0-9]*== \(Invalid\|Conditional\|Use of\|Syscall param\|Mismatched\)' "$TMP/rpc-srv.log"; then
		fail "bulk_server: $(grep -m 5 -A 3 '^==[0-9]*==' "$TMP/rpc-srv.log" | tr '\n' ' ' | cut -c1-600)"
	else
		pass "bulk_server: no memcheck error while serving"
	fi
fi

# 3. the hostile-FPDU peer's cases against uiw_victim under memcheck
VICTIM=${UIW_TESTBIN:-$(dirname "$BIN")/tests}/uiw_victim
if [ -x "$VICTIM" ] && command -v python3 >/dev/null 2>&1; then
	rc=0
	UIW_VICTIM_WRAP="$VG" HOSTILE_TIMEOUT=30 timeout 600 python3 "$(dirname "$0")/../progs/fpdu_hostile.py" \
		"$VICTIM" >"$TMP/victim.log" 2>&1 || rc=$?
	n=$(grep -c '^ok ' "$TMP/victim.log")
	if [ $rc -eq 0 ] && [ "$n" -ge 50 ] && ! grep -q '^  ==[0-9]*==' "$TMP/victim.log"; then
		pass "uiw_victim under memcheck through $n hostile-FPDU checks: no error, no leak"
	else
		fail "uiw_victim under memcheck (exit $rc, $n checks ok): $(grep -m 8 'FAIL\|==[0-9]*==' "$TMP/victim.log" | tr '\n' ' ' | cut -c1-600)"
	fi
else
	fail "$VICTIM is not built (or python3 is missing)"
fi

end_checks
