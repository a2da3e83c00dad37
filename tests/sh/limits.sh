#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Resource bounds of the engine, with tests/progs/limits (a uiwarp program)
# and tests/progs/limits_peer.py (a raw MPA peer), all on 127.0.0.1:
#   1. connect requests the application never answers: a listener with
#      backlog 4 whose application never takes an event, flooded with 40
#      connections that each send a complete, valid MPA Request, holds at
#      most 4 connection descriptors (the rest wait in the kernel);
#   2. a close with unsent data: a peer that completes the handshake and
#      never reads (zero window); 32 MiB of Sends queued, then
#      uiw_disconnect(): DISCONNECTED within UIW_CONN_CLOSE_NS (10 s) + slack;
#      the same with the QP moved to error: within UIW_CONN_CLOSE_ERR_NS (2 s)
#      + slack;
#   3. ORD negotiated down to 0 (the peer's IRD is 0) with a Read posted
#      before the connection: the Read completes with LOC_QP_OP_ERR and the
#      Send behind it in error, instead of both waiting forever;
#   4. CQ overflow: a send CQ of 2 entries and 8 signaled Writes: the QP
#      goes to error, both sides see DISCONNECTED, uiw_poll_cq() says
#      -EOVERFLOW once, then the 2 completions it kept;
#   5. full queues: a send queue of 4, a receive queue of 8, an SRQ of 4:
#      a longer chain fails with -ENOMEM and *bad_wr at the first WR that
#      does not fit; what fitted stays queued (and is flushed by a move to
#      error: exactly 4 sends and 8 receives).
# Exit 0 pass, 77 skip, anything else fail.  Every process started here is
# killed and reaped on exit; every wait is bounded.  Env: UIW_TESTBIN,
# UIW_SAN.

set -u

BIN=${UIW_TESTBIN:-build/tests}/limits
PEER=$(dirname "$0")/../progs/limits_peer.py
if [ ! -x "$BIN" ]; then
	echo "limits.sh: $BIN is not built"
	exit 1
fi
if ! command -v python3 >/dev/null 2>&1; then
	echo "limits.sh: skipped: python3 is not installed"
	exit 77
fi
# slack on every deadline (sanitizers slow everything down)
if [ -n "${UIW_SAN:-}" ]; then SLACK=6000; else SLACK=3000; fi

ME=limits
# shellcheck source=tests/sh/common.inc
. "$(dirname "$0")/common.inc"

# 1. unanswered connect requests
"$BIN" listen 4 20 >"$TMP/listen.out" 2>"$TMP/listen.err" &
LPID=$!
PIDS="$PIDS $LPID"
PORT=$(wait_for "$TMP/listen.out" 's/^port \([0-9][0-9]*\)$/\1/p' 20)
if [ -z "$PORT" ]; then
	fail "1: the listener did not start: $(cat "$TMP/listen.err")"
else
	sleep 0.3 # the engine's accept is posted
	if timeout 30 python3 "$PEER" flood "$PORT" 40 4 "$LPID" 4 >"$TMP/flood.out" 2>&1; then
		pass "1: $(cat "$TMP/flood.out")"
	else
		fail "1: $(cat "$TMP/flood.out")"
	fi
fi
kill -TERM "$LPID" 2>/dev/null

# peer KIND NAME: a raw responder; sets PPID_ and PPORT
peer() {
	python3 "$PEER" "$1" 30 >"$TMP/$2.out" 2>&1 &
	PPID_=$!
	PIDS="$PIDS $PPID_"
	PPORT=$(wait_for "$TMP/$2.out" 's/^port \([0-9][0-9]*\)$/\1/p' 20)
}

# 2. a close with unsent data
for mode in disconnect error; do
	if [ $mode = disconnect ]; then lim=$((10000 + SLACK)); else lim=$((2000 + SLACK)); fi
	peer sink sink-$mode
	if [ -z "$PPORT" ]; then
		fail "2 $mode: the peer did not start"
		continue
	fi
	if timeout 60 "$BIN" drain "$PPORT" $mode $lim >"$TMP/drain.out" 2>&1; then
		pass "2 $mode: $(tail -n 1 "$TMP/drain.out")"
	else
		fail "2 $mode: $(cat "$TMP/drain.out")"
	fi
	kill -TERM "$PPID_" 2>/dev/null
done

# 3. ORD 0 with a Read queued
peer ird0 ird0
if [ -z "$PPORT" ]; then
	fail "3: the peer did not start"
elif timeout 60 "$BIN" ord0 "$PPORT" >"$TMP/ord0.out" 2>&1; then
	pass "3: $(grep completions "$TMP/ord0.out")"
else
	fail "3: $(cat "$TMP/ord0.out")"
fi
kill -TERM "$PPID_" 2>/dev/null

# 4. CQ overflow
if timeout 60 "$BIN" cqovf >"$TMP/cqovf.out" 2>&1; then
	pass "4: $(tr '\n' ' ' <"$TMP/cqovf.out")"
else
	fail "4: $(cat "$TMP/cqovf.out")"
fi

# 5. full queues: -ENOMEM at the first WR that does not fit
if timeout 60 "$BIN" queues >"$TMP/queues.out" 2>&1; then
	pass "5: $(tr '\n' ' ' <"$TMP/queues.out")"
else
	fail "5: $(cat "$TMP/queues.out")"
fi

end_checks
