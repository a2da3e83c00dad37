#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The rpcgen example service (rpcrdma/examples/bulk.x) over RPC-over-RDMA
# and, unchanged, over libtirpc TCP, on 127.0.0.1: one bulk_server with both
# transports on kernel-chosen ports, then bulk_client calls with seeded,
# verified payloads at sizes around the inline and DDP thresholds, in every
# RFC 8166 message form:
#   NULL                        Short call, Short reply
#   PUT >= 1 KiB                Chunked call (Read chunk), Short reply
#   PUT with --ddp-threshold 1G Long call (RDMA_NOMSG, position-zero Read chunk)
#   GET with a result buffer    Write chunk, Short reply
#   GET --no-result-buf         Long reply (Reply chunk, RDMA_NOMSG)
#   --inline 1024               the RFC 8166 minimum both ways
#   --inflight N                several calls in flight on one CLIENT, and
#                               against a server granting 4 credits
# and checks that RDMA and TCP give the same results, that the chunk
# counters of --info moved what they should, and that a call larger than the
# client's reply buffer fails cleanly, that zero-length Read chunks are
# answered at once (and nobody else waits meanwhile); then, against a
# server of its own,
# peers that misbehave at the transport level (tests/progs/rpc_raw.c): one
# that stops reading TCP (the server sleeps, serves others), dispatch-ring churn with
# 8192 queued calls, error replies that cannot leave, three requesters
# stalled at once (Reply chunk, Write chunk, unanswered RDMA Read) while
# another client is served, and their connections aborted by the deadline.
# Exit 0 pass, 1 fail.  Every process
# started here is killed and reaped on exit; every wait is bounded.
# Env: UIW_BIN (build/bin: the examples are in ../examples), UIW_SAN.

set -u

EX=$(dirname "${UIW_BIN:-build/bin}")/examples
SRV=$EX/bulk_server
CLI=$EX/bulk_client
for b in "$SRV" "$CLI"; do
	if [ ! -x "$b" ]; then
		echo "rpc.sh: $b is not built"
		exit 1
	fi
done
if [ -n "${UIW_SAN:-}" ]; then T=60; else T=20; fi

ME=rpc
# shellcheck source=tests/sh/common.inc
. "$(dirname "$0")/common.inc"

"$SRV" --tcp 0 --rdma 0 -a 127.0.0.1 >"$TMP/srv.log" 2>&1 &
PIDS="$PIDS $!"
n=0
while [ $n -lt $((T * 10)) ]; do
	TP=$(sed -n 's/^bulk_server: tcp port \([0-9]*\)$/\1/p' "$TMP/srv.log")
	RP=$(sed -n 's/^bulk_server: rdma port \([0-9]*\)$/\1/p' "$TMP/srv.log")
	[ -n "$TP" ] && [ -n "$RP" ] && break
	sleep 0.1
	n=$((n + 1))
done
if [ -z "$TP" ] || [ -z "$RP" ]; then
	echo "rpc.sh: FAIL: bulk_server did not start: $(cat "$TMP/srv.log")"
	exit 1
fi

# run NAME ARGS...: one client, must exit 0 with "verified" (or the NULL line)
run() {
	name=$1
	shift
	if timeout "$T" "$CLI" -q "$@" 127.0.0.1 >"$TMP/$name.log" 2>&1; then
		if grep -q 'DATA DIFFERED' "$TMP/$name.log"; then
			fail "$name: $(cat "$TMP/$name.log")"
		else
			pass "$name"
		fi
	else
		fail "$name (exit $?): $(tail -n 2 "$TMP/$name.log" | tr '\n' ' ')"
	fi
}

for tr in tcp rdma; do
	if [ $tr = tcp ]; then P=$TP; else P=$RP; fi
	run "$tr-null" --$tr -p "$P" -o null -n 200 --verify
	for s in 0 1 1023 1024 4097 65536 1048576; do
		run "$tr-get-$s" --$tr -p "$P" -o get -s "$s" -n 5 --verify
		run "$tr-put-$s" --$tr -p "$P" -o put -s "$s" -n 5 --verify
	done
	run "$tr-get-16m" --$tr -p "$P" -o get -s 16M -n 2 --verify
	run "$tr-put-16m" --$tr -p "$P" -o put -s 16M -n 2 --verify
done

# message forms, with the counters that prove them
info() { # NAME ARGS...: run with --info, leave the info line in $INFO
	name=$1
	shift
	run "$name" --rdma -p "$RP" --info "$@"
	INFO=$(grep 'inline send' "$TMP/$name.log")
}
info long-call -o put -s 65536 -n 3 --ddp-threshold 1G --verify
case $INFO in
*"Read chunk 0,"*) fail "long-call: no octets by Read chunk: $INFO" ;;
*) pass "long call moved the call by Read chunk" ;;
esac
info chunked-call -o put -s 65536 -n 3 --verify
case $INFO in
*"Read chunk 196608,"*) pass "chunked call: 3 x 65536 octets by Read chunk" ;;
*) fail "chunked-call: $INFO" ;;
esac
info write-chunk -o get -s 65536 -n 3 --verify
case $INFO in
*"Write chunk 196608,"*) pass "GET data by Write chunk: 3 x 65536 octets" ;;
*) fail "write-chunk: $INFO" ;;
esac
case $INFO in
*"; 0 Reply chunks offered"*) pass "GET with a result buffer offers no Reply chunk" ;;
*) fail "write-chunk offered a Reply chunk: $INFO" ;;
esac
info reply-always -o get -s 65536 -n 3 --reply-max 0 --verify
case $INFO in
*"Write chunk 196608, Reply chunk 0; 3 Reply chunks offered"*)
	pass "--reply-max 0: a Reply chunk offered with every call, data still by Write chunk" ;;
*) fail "reply-always: $INFO" ;;
esac
# a reply bounded too small: the server cannot place it, answers ERR_CHUNK
if timeout "$T" "$CLI" -q --rdma -p "$RP" -o get -s 65536 -n 1 --no-result-buf --reply-max 1K \
	127.0.0.1 >"$TMP/reply-small.log" 2>&1; then
	fail "reply-small: a 64 KiB reply without a Reply chunk succeeded"
elif grep -q 'ERR_CHUNK\|decode result' "$TMP/reply-small.log"; then
	pass "reply larger than CLSET_RDMA_REPLY_MAX: ERR_CHUNK, clean failure"
else
	fail "reply-small: $(cat "$TMP/reply-small.log")"
fi
# a connection torn down leaves flushed completions in the server's shared
# CQ; the next connection in its slot must not take them for its own
# (before the generation in the work request ids: ~1 run in 3 reset)
i=0
while [ $i -lt 6 ]; do
	timeout "$T" "$CLI" -q --rdma -p "$RP" -o get -s 65536 -n 1 --no-result-buf --reply-max 1K \
		127.0.0.1 >/dev/null 2>&1
	if ! timeout "$T" "$CLI" -q --rdma -p "$RP" -o null -n 300 127.0.0.1 >"$TMP/slot.log" 2>&1; then
		fail "stale completions: a new connection failed: $(cat "$TMP/slot.log")"
		break
	fi
	i=$((i + 1))
done
[ $i -eq 6 ] && pass "6 connections after a failed one: no stale completion taken"
info long-reply -o get -s 65536 -n 3 --no-result-buf --verify
case $INFO in
*"Write chunk 0, Reply chunk 0"*) fail "long-reply: no Reply chunk: $INFO" ;;
*"Write chunk 0, Reply chunk "*) pass "GET without a result buffer: Long reply by Reply chunk" ;;
*) fail "long-reply: $INFO" ;;
esac
info inline-min -o get -s 2000 -n 3 --inline 1024 --no-result-buf --verify
case $INFO in
*"inline send 1024 recv 1024"*) pass "inline 1024 negotiated" ;;
*) fail "inline-min: $INFO" ;;
esac
info short -o null -n 10
case $INFO in
*"Read chunk 0, Write chunk 0, Reply chunk 0"*) pass "NULL: Short call and reply" ;;
*) fail "short: $INFO" ;;
esac
case $INFO in
*"inline send 4096 recv 4096, credits 32, remote invalidation on, peer RFC 8797 data yes"*)
	pass "RFC 8797: 4 KiB both ways, 32 credits, remote invalidation" ;;
*) fail "negotiation: $INFO" ;;
esac

# several calls in flight on one CLIENT (clnt_rdma_call_start/_wait): up to
# the credits granted, never more; against a server granting 4, 16 wanted
info inflight-8 -o put -s 65536 -n 60 --inflight 8 --verify
case $INFO in
*"60 calls, 60 replies, "*"at most 8 calls in flight"*) pass "8 calls in flight on one connection (PUT, verified)" ;;
*) fail "inflight-8: $INFO" ;;
esac
"$SRV" --rdma 0 --credits 4 -a 127.0.0.1 >"$TMP/srv4.log" 2>&1 &
PIDS="$PIDS $!"
n=0
RP4=
while [ $n -lt $((T * 10)) ] && [ -z "$RP4" ]; do
	RP4=$(sed -n 's/^bulk_server: rdma port \([0-9]*\)$/\1/p' "$TMP/srv4.log")
	sleep 0.1
	n=$((n + 1))
done
if [ -z "$RP4" ]; then
	fail "bulk_server --credits 4 did not start: $(cat "$TMP/srv4.log")"
else
	if timeout "$T" "$CLI" -q --rdma -p "$RP4" --info -o get -s 65536 -n 200 --inflight 16 --verify \
		127.0.0.1 >"$TMP/credits4.log" 2>&1; then
		INFO=$(grep 'inline send' "$TMP/credits4.log")
		case $INFO in
		*"credits 4,"*"200 calls, 200 replies, "*"at most 4 calls in flight"*)
			pass "credits exhausted and refilled: 200 GETs, 16 wanted in flight, never more than the 4 granted" ;;
		*) fail "credits-4: $INFO" ;;
		esac
	else
		fail "credits-4 (exit $?): $(tail -n 2 "$TMP/credits4.log" | tr '\n' ' ')"
	fi
fi

# the largest call a server takes (--max-call): a PUT over it is refused
# with ERR_CHUNK (the client's call fails, nothing is pulled), one under it
# works, and replies are not bounded by it
"$SRV" --rdma 0 --max-call 1048576 -a 127.0.0.1 >"$TMP/srvmc.log" 2>&1 &
PIDS="$PIDS $!"
RPM=$(wait_for "$TMP/srvmc.log" 's/^bulk_server: rdma port \([0-9]*\)$/\1/p' "$T")
if [ -z "$RPM" ]; then
	fail "bulk_server --max-call did not start: $(cat "$TMP/srvmc.log")"
else
	if timeout "$T" "$CLI" --rdma -p "$RPM" -o put -s 2M -n 1 --verify 127.0.0.1 >"$TMP/mc1.log" 2>&1; then
		fail "max-call: a 2 MiB PUT went through a 1 MiB limit"
	elif grep -q "Can't decode result" "$TMP/mc1.log"; then
		pass "max-call 1 MiB: a 2 MiB PUT refused (ERR_CHUNK: $(grep PUT "$TMP/mc1.log"))"
	else
		fail "max-call: the 2 MiB PUT failed otherwise: $(tail -n 2 "$TMP/mc1.log" | tr '\n' ' ')"
	fi
	run max-call-under --rdma -p "$RPM" -o put -s 512K -n 3 --verify
	run max-call-reply --rdma -p "$RPM" -o get -s 2M -n 2 --verify
fi

# the server's connection limit: 65 at once against a fresh server, 64 get
# in, one is rejected; once one leaves, a new one gets its place
"$SRV" --rdma 0 -q -a 127.0.0.1 >"$TMP/srvcn.log" 2>&1 &
PIDS="$PIDS $!"
RPC_=$(wait_for "$TMP/srvcn.log" 's/^bulk_server: rdma port \([0-9]*\)$/\1/p' "$T")
RAWC=${UIW_TESTBIN:-$(dirname "${UIW_BIN:-build/bin}")/tests}/rpc_raw
if [ -z "$RPC_" ]; then
	fail "bulk_server for the connection limit did not start: $(cat "$TMP/srvcn.log")"
elif timeout "$T" "$RAWC" -m conns -p "$RPC_" >"$TMP/conns.log" 2>&1; then
	pass "connection limit: $(tr '\n' ' ' <"$TMP/conns.log")"
else
	fail "connection limit: $(tr '\n' ' ' <"$TMP/conns.log")"
fi

# a hostile requester: malformed headers answered as RFC 8166 §4.5 says
RAW=${UIW_TESTBIN:-$(dirname "${UIW_BIN:-build/bin}")/tests}/rpc_raw
if timeout "$T" "$RAW" -p "$RP" >"$TMP/raw.log" 2>&1; then
	pass "rpc_raw: $(grep -c ': ok:' "$TMP/raw.log") hostile-header checks"
else
	fail "rpc_raw: $(grep -v ': ok:' "$TMP/raw.log" | tr '\n' ' ')"
fi

# zero-length Read chunks (empty segments, RFC 8166 §3.4.3): nothing to
# pull, so nothing to wait for.  The server posted no Read for them and
# waited its whole bound (10 s) for a completion that could not come,
# serving nobody: each call must be answered at once, and another client's
# NULL call, made while the first is in, too.
"$RAW" -m zread -p "$RP" >"$TMP/zread.log" 2>&1 &
ZP=$!
PIDS="$PIDS $ZP"
if ! wait_for "$TMP/zread.log" 's/^rpc_raw: zread: \(sent\)$/\1/p' "$T" >/dev/null; then
	fail "zread: rpc_raw did not send: $(cat "$TMP/zread.log")"
fi
if timeout 5 "$CLI" -q --rdma -p "$RP" -o null -n 1 127.0.0.1 >"$TMP/zread-null.log" 2>&1; then
	us=$(sed -n 's/.* \([0-9]*\)\.[0-9] us\/call.*/\1/p' "$TMP/zread-null.log")
	if [ -n "$us" ] && [ "$us" -lt 1000000 ]; then
		pass "a call with an empty Read chunk in: another client's NULL call took $us us"
	else
		fail "zread: another client's NULL call: $(cat "$TMP/zread-null.log")"
	fi
else
	fail "zread: another client's NULL call not answered within 5 s: $(tail -n 2 "$TMP/zread-null.log" | tr '\n' ' ')"
fi
if wait "$ZP"; then
	pass "zero-length Read chunks: $(grep -c ': ok:' "$TMP/zread.log") checks, $(sed -n 's/^rpc_raw: zread: empty chunk \(.*\)$/\1/p' "$TMP/zread.log")"
else
	fail "zero-length Read chunks: $(grep -v ': ok:' "$TMP/zread.log" | tr '\n' ' ')"
fi

# a server of its own (128 credits, waits bounded at $W ms by UIW_RPC_WAIT_MS)
# for requesters that misbehave at the transport level
if [ -n "${UIW_SAN:-}" ]; then W=5000; else W=3000; fi
UIW_RPC_WAIT_MS=$W "$SRV" --rdma 0 --credits 128 -a 127.0.0.1 >"$TMP/srvw.log" 2>&1 &
SPW=$!
PIDS="$PIDS $SPW"
RPW=$(wait_for "$TMP/srvw.log" 's/^bulk_server: rdma port \([0-9]*\)$/\1/p' "$T")
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
if [ -z "$RPW" ]; then
	fail "bulk_server --credits 128 did not start: $(cat "$TMP/srvw.log")"
else
	# a requester that asks for a 16 MiB reply by Reply chunk and stops
	# reading TCP: the server's Send after the Reply chunk never completes.
	# The server must sleep meanwhile (its wait once spun at 100% CPU
	# forever, serving nobody else) and serve a well-behaved client.
	"$RAW" -m stall -p "$RPW" -t 60 >"$TMP/stall.log" 2>&1 &
	HP=$!
	PIDS="$PIDS $HP"
	if ! wait_for "$TMP/stall.log" 's/^rpc_raw: \(stalled\)$/\1/p' "$T" >/dev/null; then
		fail "stall: rpc_raw did not stall: $(cat "$TMP/stall.log")"
	fi
	sleep 0.5
	# served within the wait bound of UIW_RPC_WAIT_MS (below the default 10 s)
	if timeout $((W / 1000 + 4)) "$CLI" -q --rdma -p "$RPW" -o get -s 65536 -n 20 --verify 127.0.0.1 \
		>"$TMP/stall-cli.log" 2>&1; then
		pass "a requester that stops reading: another client is served within UIW_RPC_WAIT_MS"
	else
		fail "stall: a well-behaved client was not served: $(tail -n 2 "$TMP/stall-cli.log" | tr '\n' ' ')"
	fi
	# then, the stalled reply still waiting (W is 3 s or more), the server
	# must sleep: measured over one second with nothing else to serve, so
	# that the work of serving the client above (slow under sanitizers)
	# does not count as spinning
	c0=$(cpu_ticks $SPW)
	s0=$(date +%s%N)
	sleep 1
	c1=$(cpu_ticks $SPW)
	s1=$(date +%s%N)
	ms=$(((s1 - s0) / 1000000))
	hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
	# at most half a CPU over the window (a spin takes all of it)
	if [ $(((c1 - c0) * 2000)) -le $((ms * hz)) ]; then
		pass "the server sleeps while the stalled reply cannot leave: $((c1 - c0)) ticks in $ms ms"
	else
		fail "stall: the server spun: $((c1 - c0)) ticks of CPU in $ms ms"
	fi
	kill "$HP" 2>/dev/null

	# dispatch-ring churn: while two stalled requesters keep the server
	# busy (its waits take completions, so calls queue up), 62 connections
	# queue 128 calls each, three of them leave and three new ones take
	# their slots and queue 128 more.  The calls of connections that left
	# were left counted in the ring and the new calls overwrote unread ones
	# of others (never answered, their credits lost).
	"$RAW" -m flood -p "$RPW" -w "$TMP/go" -t 30 >"$TMP/flood.log" 2>&1 &
	FP=$!
	PIDS="$PIDS $FP"
	wait_for "$TMP/flood.log" 's/^rpc_raw: \(ready\)$/\1/p' "$T" >/dev/null
	"$RAW" -m stall -p "$RPW" -w "$TMP/go2" -t 60 >"$TMP/stall2.log" 2>&1 &
	H2P=$!
	PIDS="$PIDS $H2P"
	wait_for "$TMP/stall2.log" 's/^rpc_raw: \(connected\)$/\1/p' "$T" >/dev/null
	"$RAW" -m stall -p "$RPW" -t 60 >"$TMP/stall1.log" 2>&1 &
	H1P=$!
	PIDS="$PIDS $H1P"
	wait_for "$TMP/stall1.log" 's/^rpc_raw: \(stalled\)$/\1/p' "$T" >/dev/null
	touch "$TMP/go2" # the second stall's call queued first
	wait_for "$TMP/stall2.log" 's/^rpc_raw: \(stalled\)$/\1/p' "$T" >/dev/null
	touch "$TMP/go"
	if wait "$FP"; then
		pass "dispatch ring churn: $(grep 'flood:' "$TMP/flood.log")"
	else
		fail "dispatch ring churn: $(grep -v ': ok' "$TMP/flood.log" | tail -n 5 | tr '\n' ' ')"
	fi
	kill "$H1P" "$H2P" 2>/dev/null

	# 100 headers of version 2 behind a stalled call: their ERR_VERS
	# replies cannot leave.  One that could not be sent was dropped and the
	# connection kept, so each next one waited for a Send buffer again
	# (W ms each, nested): the server served nobody for minutes.  Now they
	# queue on their own connection, which the reply deadline aborts: the
	# other client must be served within W ms.
	"$RAW" -m stall -e 100 -p "$RPW" -t 60 >"$TMP/stall3.log" 2>&1 &
	H3P=$!
	PIDS="$PIDS $H3P"
	wait_for "$TMP/stall3.log" 's/^rpc_raw: \(stalled\)$/\1/p' "$T" >/dev/null
	s0=$(date +%s)
	if grep -q 'not stalled' "$TMP/stall3.log"; then
		pass "error replies that cannot leave: SKIPPED (the reply got through, nothing stalled)"
	elif timeout $((W / 1000)) "$CLI" -q --rdma -p "$RPW" -o null -n 10 127.0.0.1 \
		>"$TMP/errsend.log" 2>&1; then
		pass "error replies that cannot leave hold only their connection: another client served after $(($(date +%s) - s0)) s"
	else
		fail "error replies that cannot leave: another client not served: $(tail -n 2 "$TMP/errsend.log" | tr '\n' ' ')"
	fi
	kill "$H3P" 2>/dev/null

	# the server never waits on one client: three requesters stop at once,
	# one behind a Long reply (Reply chunk, 16 MiB), one behind a Write
	# chunk (16 MiB), one never answering the RDMA Read of its PUT's Read
	# chunk.  Another client's 200 NULL calls and a verified 1 MiB GET must
	# be served meanwhile, within 2 s (the synchronous reply path held the
	# server for W ms per stalled call, one after another); then each
	# stalled connection is aborted within W ms of its posting (+ the
	# 100 ms tick and 2 s of slack), not kept.
	conns_up() { ss -tnH state established "( sport = :$RPW )" 2>/dev/null | wc -l; }
	base=$(conns_up)
	"$RAW" -m stall -p "$RPW" -t 60 >"$TMP/iso-stall.log" 2>&1 &
	I1=$!
	"$RAW" -m wstall -p "$RPW" -w "$TMP/iso-never" -t 60 >"$TMP/iso-wstall.log" 2>&1 &
	I2=$!
	"$RAW" -m rstall -p "$RPW" -t 60 >"$TMP/iso-rstall.log" 2>&1 &
	I3=$!
	PIDS="$PIDS $I1 $I2 $I3"
	for l in stall wstall rstall; do
		wait_for "$TMP/iso-$l.log" 's/^rpc_raw: \(stalled\)$/\1/p' "$T" >/dev/null ||
			fail "isolation: rpc_raw -m $l did not stall: $(tr '\n' ' ' <"$TMP/iso-$l.log")"
	done
	t0=$(date +%s%N)
	if [ -n "${UIW_SAN:-}" ]; then IT=6; else IT=2; fi
	if timeout "$IT" "$CLI" -q --rdma -p "$RPW" -o null -n 200 127.0.0.1 >"$TMP/iso-null.log" 2>&1 &&
		timeout "$IT" "$CLI" -q --rdma -p "$RPW" -o get -s 1M -n 1 --verify 127.0.0.1 >"$TMP/iso-get.log" 2>&1; then
		pass "three stalled requesters (Reply chunk, Write chunk, unanswered Read): another client's 200 NULL calls and a 1 MiB GET served in $((($(date +%s%N) - t0) / 1000000)) ms"
	else
		fail "isolation: another client not served within $IT s: $(tail -n 2 "$TMP/iso-null.log" "$TMP/iso-get.log" | tr '\n' ' ')"
	fi
	up=$(conns_up)
	n=0
	while [ "$up" -gt "$base" ] && [ $n -lt $((W / 100 + 40)) ]; do
		sleep 0.1
		n=$((n + 1))
		up=$(conns_up)
	done
	if [ "$up" -le "$base" ]; then
		pass "the stalled connections aborted by the server's deadline ($((($(date +%s%N) - t0) / 1000000)) ms after the others were served; wait_ms $W)"
	else
		fail "isolation: $((up - base)) stalled connection(s) still up $((W / 1000 + 4)) s later: $(ss -tnH state established "( sport = :$RPW )" | tr '\n' ' ')"
	fi
	kill "$I1" "$I2" "$I3" 2>/dev/null

	# the reply memory one connection may hold: two requesters send six
	# GETs of 16 MiB each (Write chunks) and stop reading.  Each reply's
	# data is copied into a reply buffer of the server's (18 MiB), so
	# without a bound the server would hold 12 of them (216 MiB); with
	# 32 MiB a connection, at most two each (72 MiB) plus the pool's
	# idle buffers.  Measured as the server's resident memory, before
	# their deadline (W) aborts them.  Not under ThreadSanitizer, whose
	# shadow memory grows with what the server touches.
	case "${UIW_SAN:-}" in
	*thread*) pass "reply memory bound: SKIPPED under ThreadSanitizer (shadow memory)" ;;
	*)
		rss() { awk '/^VmRSS/ { print int($2 / 1024) }' "/proc/$1/status" 2>/dev/null || echo 0; }
		r0=$(rss "$SPW")
		"$RAW" -m wstall -n 6 -p "$RPW" -t 30 >"$TMP/mem1.log" 2>&1 &
		M1=$!
		"$RAW" -m wstall -n 6 -p "$RPW" -t 30 >"$TMP/mem2.log" 2>&1 &
		M2=$!
		PIDS="$PIDS $M1 $M2"
		wait_for "$TMP/mem1.log" 's/^rpc_raw: \(stalled\)$/\1/p' "$T" >/dev/null
		wait_for "$TMP/mem2.log" 's/^rpc_raw: \(stalled\)$/\1/p' "$T" >/dev/null
		sleep 1
		r1=$(rss "$SPW")
		if [ $((r1 - r0)) -le 150 ]; then
			pass "reply memory bound: two stalled requesters with six 16 MiB GETs each grew the server by $((r1 - r0)) MiB (unbounded: 216 MiB and more)"
		else
			fail "reply memory bound: the server grew by $((r1 - r0)) MiB ($r0 -> $r1 MiB) with 12 stalled 16 MiB replies"
		fi
		kill "$M1" "$M2" 2>/dev/null
		;;
	esac
	if ! kill -0 "$SPW" 2>/dev/null; then
		fail "bulk_server --credits 128 died: $(tail -n 5 "$TMP/srvw.log" | tr '\n' ' ')"
	fi
fi

# the server is still serving after all that
run after-all --rdma -p "$RP" -o get -s 1M -n 3 --verify
if ! kill -0 $(echo "$PIDS" | awk '{print $1}') 2>/dev/null; then
	fail "bulk_server died: $(tail -n 3 "$TMP/srv.log")"
fi

end_checks
