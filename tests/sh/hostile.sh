#!/bin/sh
# SPDX-License-Identifier: MIT
#
# A hostile TCP peer against a uiwarp MPA listener (uiw-ping -s -P, on
# 127.0.0.1), with tests/progs/mpa_hostile.py:
#   1. malformed MPA Requests: a wrong key, PD_Length 513, revision 3 -> the
#      connection is closed at once, no accepting Reply; half a Request and
#      silence (slowloris) -> closed by the handshake timeout (10 s);
#   2. a flood of 1000 connection attempts, every other one sending half a
#      Request, held 8 s, while an established uiw-ping connection keeps
#      pinging: that connection is unaffected (every ping validated), the
#      listener holds at most min(backlog 64, UIW_HS_PENDING_MAX 256)
#      handshakes (fds bounded), its CPU time stays small and its memory bounded; once the
#      flood is gone a new client gets in;
#   2b. Sends with no receive posted, in one write and with the second out
#      of turn (tests/progs/rdma_norecv_peer.py): TERMINATE, then a FIN;
#   3. a flood against a listener limited to 32 descriptors (ulimit
#      -n): accept() fails with EMFILE, the listener backs off instead of
#      spinning (CPU time small), and serves again afterwards.
# Exit 0 pass, 77 skip, anything else fail.  Every process started here is
# killed and reaped on exit; every wait is bounded.  Env: UIW_BIN, UIW_SAN.

set -u

BIN=${UIW_BIN:-build/bin}/uiw-ping
HOSTILE=$(dirname "$0")/../progs/mpa_hostile.py
if [ ! -x "$BIN" ]; then
	echo "hostile.sh: $BIN is not built"
	exit 1
fi
if ! command -v python3 >/dev/null 2>&1; then
	echo "hostile.sh: skipped: python3 is not installed"
	exit 77
fi
if [ -n "${UIW_SAN:-}" ]; then T=60; else T=30; fi

ME=hostile
# shellcheck source=tests/sh/common.inc
. "$(dirname "$0")/common.inc"

# server NAME [ULIMIT]: a persistent uiw-ping server; sets SPID and PORT
server() {
	rm -f "$TMP/$1.out" "$TMP/$1.err" # never an earlier server's port
	if [ -n "${2:-}" ]; then
		sh -c "ulimit -n $2 && exec \"$BIN\" -s -P -V -a 127.0.0.1 -p 0" >"$TMP/$1.out" 2>"$TMP/$1.err" &
	else
		"$BIN" -s -P -V -a 127.0.0.1 -p 0 >"$TMP/$1.out" 2>"$TMP/$1.err" &
	fi
	SPID=$!
	PIDS="$PIDS $SPID"
	PORT=
	n=0
	while [ $n -lt 100 ] && [ -z "$PORT" ]; do
		PORT=$(sed -n 's/^uiw-ping: listening on .* port \([0-9][0-9]*\)$/\1/p' "$TMP/$1.out" 2>/dev/null)
		sleep 0.1
		n=$((n + 1))
	done
}
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
nfds() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }
hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
# watch_fds: until the flood $FPID ends (at most 20 s), the most descriptors
# the server $SPID held, in maxfd; the flood is reaped
watch_fds() {
	maxfd=0
	n=0
	while kill -0 "$FPID" 2>/dev/null && [ $n -lt 200 ]; do
		f=$(nfds "$SPID")
		[ "$f" -gt "$maxfd" ] && maxfd=$f
		sleep 0.1
		n=$((n + 1))
	done
	wait "$FPID"
}

# client NAME ARGS: a uiw-ping client; returns its status
client() {
	name=$1
	shift
	timeout "$T" "$BIN" -c -a 127.0.0.1 -p "$PORT" -V --timeout=25 "$@" >"$TMP/$name.out" 2>&1
}

server main
if [ -z "$PORT" ]; then
	echo "hostile.sh: FAIL: uiw-ping -s -P did not start: $(cat "$TMP/main.err")"
	exit 1
fi

# 1. malformed Requests
for k in badkey pd513 rev3 half; do
	if timeout 30 python3 "$HOSTILE" probe "$k" "$PORT" >"$TMP/probe-$k.out" 2>&1; then
		t=$(sed -n 's/.* after \([0-9.]*\) s.*/\1/p' "$TMP/probe-$k.out")
		case $k in
		half) lim=15 ;;
		*) lim=2 ;;
		esac
		if [ "$(awk -v t="$t" -v l="$lim" 'BEGIN { print (t <= l) }')" = 1 ]; then
			pass "$(cat "$TMP/probe-$k.out")"
		else
			fail "probe $k: closed only after $t s (bound $lim s)"
		fi
	else
		fail "$(cat "$TMP/probe-$k.out")"
	fi
done
client after-probes -C 5 || fail "a client after the probes: $(tail -n 2 "$TMP/after-probes.out")"

# 2. a flood while an established connection pings
base=$(nfds "$SPID")
# pings until stopped (-C 0): it must still be pinging, without an error,
# when the flood is over (a fixed count once ended before the flood did)
"$BIN" -c -a 127.0.0.1 -p "$PORT" -V --timeout=25 -C 0 -S 512 >"$TMP/busy.out" 2>&1 &
BPID=$!
PIDS="$PIDS $BPID"
sleep 0.5
c0=$(cpu_ticks "$SPID")
timeout 60 python3 "$HOSTILE" flood "$PORT" 1000 8 >"$TMP/flood.out" 2>&1 &
FPID=$!
PIDS="$PIDS $FPID"
watch_fds
c1=$(cpu_ticks "$SPID")
hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$SPID/status")
if ! kill -0 "$BPID" 2>/dev/null; then
	rc=0
	wait "$BPID" || rc=$?
	fail "the established connection ended during the flood (exit $rc): $(tail -n 2 "$TMP/busy.out")"
else
	kill -INT "$BPID"
	rc=0
	wait "$BPID" || rc=$?
	# -V: every ping validated; an error would have ended it before
	if [ "$rc" = 130 ] && ! grep -qi 'error\|mismatch\|fail' "$TMP/busy.out"; then
		pass "an established connection pinged (-V, every ping validated) through the whole flood, stopped after it"
	else
		fail "the established connection (exit $rc after SIGINT): $(tail -n 2 "$TMP/busy.out")"
	fi
fi
cpu=$(awk -v a="$c0" -v b="$c1" -v h="$hz" 'BEGIN { printf "%.2f", (b - a) / h }')
echo "hostile.sh: flood: $(head -n 1 "$TMP/flood.out" | sed 's/^mpa_hostile: //'); listener fds $base -> at most $maxfd, CPU $cpu s, peak RSS $hwm kB"
# uiw-ping listens with backlog 64: at most min(64, UIW_HS_PENDING_MAX)
# connections in the handshake or unanswered (a few more descriptors for
# the engine's own)
if [ "$maxfd" -gt $((base + 64 + 16)) ]; then
	fail "the listener held $maxfd descriptors (base $base + at most 64 handshakes)"
else
	pass "handshakes in flight bounded: at most $maxfd descriptors"
fi
# 256 MiB (1 GiB under the sanitizers, whose shadow memory counts too)
rss_max=262144
[ -n "${UIW_SAN:-}" ] && rss_max=1048576
if [ "${hwm:-0}" -gt "$rss_max" ]; then
	fail "the listener's peak RSS was $hwm kB (bound $rss_max kB)"
fi
# the flood's handshakes end within the handshake timeout (10 s)
n=0
while [ "$(nfds "$SPID")" -gt $((base + 4)) ] && [ $n -lt 150 ]; do
	sleep 0.1
	n=$((n + 1))
done
if client after-flood -C 5; then
	pass "a new client after the flood (listener back to $(nfds "$SPID") descriptors)"
else
	fail "a new client after the flood: $(tail -n 2 "$TMP/after-flood.out")"
fi

# 2b. Sends with no receive posted (tests/progs/rdma_norecv_peer.py), 10 times
# each way: all in one write (the second Send finds no receive), and the
# first alone then the rest 50 ms later (the second takes the reposted
# receive and is out of turn for rping's protocol, so uiw-ping gives up on
# the connection while the third is due a TERMINATE): each time the
# TERMINATE "no buffer" arrives and the stream ends with a FIN, not a reset
NORECV=$(dirname "$0")/../progs/rdma_norecv_peer.py
for gap in 0 50; do
	bad=0
	for i in 1 2 3 4 5 6 7 8 9 10; do
		if ! timeout 30 python3 "$NORECV" "$PORT" 8 "$gap" end >"$TMP/norecv.out" 2>&1; then
			bad=$((bad + 1))
			why=$(head -c 300 "$TMP/norecv.out")
		fi
	done
	if [ "$bad" = 0 ]; then
		pass "Sends with no receive (gap $gap ms), 10 times: $(cat "$TMP/norecv.out")"
	else
		fail "Sends with no receive (gap $gap ms): $bad of 10 runs wrong, e.g.: $why"
	fi
done

# 3. out of descriptors: EMFILE backoff
server small 32
if [ -z "$PORT" ]; then
	fail "uiw-ping -s -P with ulimit -n 32 did not start: $(cat "$TMP/small.err")"
else
	c0=$(cpu_ticks "$SPID")
	timeout 60 python3 "$HOSTILE" flood "$PORT" 300 5 >"$TMP/flood-small.out" 2>&1 &
	FPID=$!
	PIDS="$PIDS $FPID"
	watch_fds
	c1=$(cpu_ticks "$SPID")
	[ "$maxfd" -ge 30 ] || fail "the 32-descriptor listener peaked at $maxfd descriptors: EMFILE not reached"
	cpu=$(awk -v a="$c0" -v b="$c1" -v h="$hz" 'BEGIN { printf "%.2f", (b - a) / h }')
	if [ "$(awk -v c="$cpu" 'BEGIN { print (c < 2.0) }')" = 1 ]; then
		pass "out of descriptors (EMFILE: $maxfd descriptors open, limit 32): the listener used $cpu s of CPU in ~6 s (no spinning)"
	else
		fail "out of descriptors: the listener used $cpu s of CPU in ~6 s (spinning on accept?)"
	fi
	if client after-emfile -C 5; then
		pass "a client once descriptors are free again"
	else
		fail "a client after EMFILE: $(tail -n 2 "$TMP/after-emfile.out")"
	fi
fi

end_checks
