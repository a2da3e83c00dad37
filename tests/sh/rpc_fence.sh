#!/bin/sh
# SPDX-License-Identifier: MIT
#
# A reply's memory is fenced when the server gives up on it: one client's
# data never reaches another.  A requester (tests/progs/rpc_raw.c -m wstall)
# asks bulk_server --wait-ms 2000 for GET 8 MiB with a Write chunk and stops
# reading; the server's wait for the Write runs out; then another client's
# GET of 8 MiB (another seed) makes bulk_server refill the very buffer the
# first reply was being written from; then the first requester reads again
# and sorts every octet of its Write chunk: its own data, untouched, or
# foreign.  Foreign octets fail the test.
#
# Observed before the fence: the server deregistered the result memory and
# disconnected gracefully, which kept sending the queued Write from that
# memory (for up to 10 s) while the service filled it for the other call:
# "rpc_raw: wstall: reply no (connection ended), 3881807 ours, 4474181
# untouched, 32620 foreign".
#
# Cases: the first requester reads again at once after the other GET, and
# 3 s later (after the abort's reset); and the same with a Reply chunk (a
# Long reply: the server's own reply buffer, which the other client's Long
# reply would reuse).  Exit 0 pass, 1 fail.
# Env: UIW_BIN (build/bin: the examples are in ../examples), UIW_TESTBIN,
# UIW_SAN.

set -u

EX=$(dirname "${UIW_BIN:-build/bin}")/examples
SRV=$EX/bulk_server
CLI=$EX/bulk_client
RAW=${UIW_TESTBIN:-$(dirname "${UIW_BIN:-build/bin}")/tests}/rpc_raw
for b in "$SRV" "$CLI" "$RAW"; do
	if [ ! -x "$b" ]; then
		echo "rpc_fence.sh: $b is not built"
		exit 1
	fi
done
if [ -n "${UIW_SAN:-}" ]; then T=60; else T=20; fi

ME=rpc_fence
# shellcheck source=tests/sh/common.inc
. "$(dirname "$0")/common.inc"

"$SRV" --rdma 0 --wait-ms 2000 -q -a 127.0.0.1 >"$TMP/srv.log" 2>&1 &
SP=$!
PIDS="$PIDS $SP"
RP=$(wait_for "$TMP/srv.log" 's/^bulk_server: rdma port \([0-9]*\)$/\1/p' "$T")
if [ -z "$RP" ]; then
	echo "rpc_fence.sh: FAIL: bulk_server did not start: $(cat "$TMP/srv.log")"
	exit 1
fi

# fence NAME DELAY [RAW-OPTION] [CLIENT-OPTION]: a stalled requester, another
# client's GET, DELAY seconds, the requester reads again
fence() {
	name=$1
	delay=$2
	rm -f "$TMP/go-$name"
	# shellcheck disable=SC2086
	"$RAW" -m wstall ${3:-} -s 8388608 -p "$RP" -w "$TMP/go-$name" -t 60 >"$TMP/$name.log" 2>&1 &
	wp=$!
	PIDS="$PIDS $wp"
	if ! wait_for "$TMP/$name.log" 's/^rpc_raw: \(stalled\)$/\1/p' "$T" >/dev/null; then
		fail "$name: rpc_raw did not stall: $(cat "$TMP/$name.log")"
		return
	fi
	# shellcheck disable=SC2086
	if timeout "$T" "$CLI" -q --rdma -p "$RP" -o get -s 8M -n 1 ${4:-} --verify 127.0.0.1 \
		>"$TMP/$name-cli.log" 2>&1; then
		pass "$name: the other client's GET verified"
	else
		fail "$name: the other client's GET: $(tail -n 2 "$TMP/$name-cli.log" | tr '\n' ' ')"
	fi
	sleep "$delay"
	touch "$TMP/go-$name"
	if wait "$wp"; then
		pass "$name: $(sed -n 's/^rpc_raw: wstall: //p' "$TMP/$name.log")"
	else
		fail "$name: $(tr '\n' ' ' <"$TMP/$name.log")"
	fi
}

fence write-chunk-at-once 0
fence write-chunk-later 3
fence reply-chunk-at-once 0 -R --no-result-buf

if ! kill -0 "$SP" 2>/dev/null; then
	fail "bulk_server died: $(tail -n 5 "$TMP/srv.log" | tr '\n' ' ')"
fi
end_checks
