#!/bin/sh
# SPDX-License-Identifier: MIT
#
# stall.sh - a peer that stops making progress ends a uiw-perf run within the
# bound (--timeout), with a message that says "stalled", and a non-zero exit
# status.  On 127.0.0.1, kernel-chosen ports, every process reaped:
#   1. write_bw -D 3: the server stopped (SIGSTOP) once the client prints its
#      first progress line: the client stops, so does the server once
#      continued (it saw no heartbeat from the client meanwhile);
#   2. read_lat -D 3: the client stopped: the server (passive in read_lat,
#      it learns of the client through its heartbeats) stops;
#   3. send_lat -D 3 (the default completion mode): the server stopped;
#   4. tcp_bw -D 3: the server stopped;
#   5. no false alarm: write_bw -D 4 with the server's bound at 2 s and a
#      client without one (--timeout 0): its heartbeats keep the server going;
#   6. tcp_lat, tcp_bw and write_bw against a TCP listener that accepts and
#      never reads nor writes (python3; skipped without it): the client stops;
#      so does uiw-rpcinfo -T rdma -t 2 ("connection timed out").
# And uiw-ping (--timeout=2): the server stopped during -C 0 pings, the client
# stops with "no progress for 2 s".
# Each case uses --timeout 2; the bound checked is 2 s plus a margin of 4 s
# from the stop (tcp_bw: plus the -D run, the kernel's buffers absorb it).
# The tools run without timeout(1) (SIGSTOP must reach them, not a wrapper);
# every wait here is bounded and the exit trap continues, ends and reaps them.
# Environment: UIW_BIN (directory of uiw-perf).  Exit 0 pass, 77 skip, else fail.

ME=stall
BIN=${UIW_BIN:-build/bin}
PERF=$BIN/uiw-perf
[ -x "$PERF" ] || { echo "$ME.sh: SKIP: $PERF not built"; exit 77; }
command -v timeout >/dev/null 2>&1 || { echo "$ME.sh: SKIP: timeout(1) not available"; exit 77; }
REAP_WAIT=20
. "$(dirname "$0")/common.inc"

TO=2
MARGIN=4

# a stopped process gets SIGCONT before the reaper's SIGTERM
cont_all() { for p in $PIDS; do kill -CONT "$p" 2>/dev/null; done; }
trap 'cont_all; cleanup' EXIT

# now in tenths of a second
ds() { awk '{ printf "%d\n", $1 * 10 }' /proc/uptime; }

# start_server TEST ARGS...: SPID, PORT
start_server() {
	t=$1
	shift
	rm -f "$TMP/srv.out" "$TMP/srv.err"
	"$PERF" "$t" -B 127.0.0.1 -p 0 --timeout $TO "$@" \
		>"$TMP/srv.out" 2>"$TMP/srv.err" &
	SPID=$!
	PIDS="$PIDS $SPID"
	PORT=$(wait_for "$TMP/srv.out" 's/^uiw-perf: listening on .* port \([0-9][0-9]*\)$/\1/p' 10)
}

# start_client TEST ARGS...: CPID
start_client() {
	t=$1
	shift
	rm -f "$TMP/cli.out" "$TMP/cli.err"
	"$PERF" "$t" --timeout $TO "$@" -p "$PORT" 127.0.0.1 \
		>"$TMP/cli.out" 2>"$TMP/cli.err" &
	CPID=$!
	PIDS="$PIDS $CPID"
}

# finish NAME PID FILE T_STOP LIMIT_DS: PID must end non-zero, with $PAT
# (default "stalled") in FILE, within LIMIT_DS tenths of a second of T_STOP
PAT=stalled
finish() {
	n=0
	while kill -0 "$2" 2>/dev/null && [ $n -lt 400 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	if kill -0 "$2" 2>/dev/null; then
		fail "$1: still running 40 s after the stop"
		kill -CONT "$2" 2>/dev/null
		kill -KILL "$2" 2>/dev/null
	fi
	wait "$2"
	rc=$?
	el=$(($(ds) - $4))
	if [ "$rc" = 0 ]; then
		fail "$1: exit status 0"
	elif ! grep -q "$PAT" "$3"; then
		fail "$1: exit $rc without a '$PAT' message: $(cat "$3")"
	elif [ "$el" -gt "$5" ]; then
		fail "$1: took $el/10 s after the stop (bound $5/10 s)"
	else
		pass "$1: exit $rc after $el/10 s: $(grep "$PAT" "$3" | head -n 1)"
	fi
}

# stop_after_progress PID: once the client has printed a progress line (-D
# runs, once a second), SIGSTOP PID; T_STOP: the time of the stop
stop_after_progress() {
	if ! wait_for "$TMP/cli.err" '/ s, /p' 10 >/dev/null; then
		fail "no progress line from the client: $(cat "$TMP/cli.err")"
	fi
	kill -STOP "$1" || fail "cannot stop process $1"
	T_STOP=$(ds)
}

# 1. write_bw, server stopped
start_server write_bw
[ -n "$PORT" ] || { fail "write_bw server did not start: $(cat "$TMP/srv.err")"; end_checks; }
start_client write_bw -D 3
stop_after_progress "$SPID"
t=$T_STOP
finish "write_bw, server stopped: the client" "$CPID" "$TMP/cli.err" "$t" $(((TO + MARGIN) * 10))
kill -CONT "$SPID"
t=$(ds)
# the client is gone when the server resumes: its own clock says nothing
# came for longer than the bound, and the client's close is in its socket;
# which it acts on first is a race, and either way it must end at once,
# non-zero, saying why
PAT='stalled\|work request receive failed'
finish "write_bw, client gone while the server was stopped: the server" "$SPID" "$TMP/srv.err" "$t" \
	$(((TO + MARGIN) * 10))
PAT=stalled

# 2. read_lat, client stopped: the server knows only its heartbeats
start_server read_lat
[ -n "$PORT" ] || { fail "read_lat server did not start: $(cat "$TMP/srv.err")"; end_checks; }
start_client read_lat -D 3
stop_after_progress "$CPID"
t=$T_STOP
finish "read_lat, client stopped: the server" "$SPID" "$TMP/srv.err" "$t" $(((TO + MARGIN) * 10))
kill -CONT "$CPID"
wait "$CPID" 2>/dev/null

# 3. send_lat, server stopped
start_server send_lat
[ -n "$PORT" ] || { fail "send_lat server did not start: $(cat "$TMP/srv.err")"; end_checks; }
start_client send_lat -D 3
stop_after_progress "$SPID"
t=$T_STOP
finish "send_lat, server stopped: the client" "$CPID" "$TMP/cli.err" "$t" $(((TO + MARGIN) * 10))
kill -CONT "$SPID"
wait "$SPID" 2>/dev/null

# 4. tcp_bw, server stopped
start_server tcp_bw
[ -n "$PORT" ] || { fail "tcp_bw server did not start: $(cat "$TMP/srv.err")"; end_checks; }
start_client tcp_bw -D 3
stop_after_progress "$SPID"
t=$T_STOP
finish "tcp_bw, server stopped: the client" "$CPID" "$TMP/cli.err" "$t" $(((TO + 3 + MARGIN) * 10))
kill -CONT "$SPID"
wait "$SPID" 2>/dev/null

# uiw-ping (rping's protocol): the server stopped during -C 0 pings
if [ -x "$BIN/uiw-ping" ]; then
	rm -f "$TMP/ps.out"
	"$BIN/uiw-ping" -s -a 127.0.0.1 -p 0 >"$TMP/ps.out" 2>&1 &
	SPID=$!
	PIDS="$PIDS $SPID"
	PORT=$(wait_for "$TMP/ps.out" 's/^uiw-ping: listening on .* port \([0-9][0-9]*\)$/\1/p' 10)
	if [ -z "$PORT" ]; then
		fail "uiw-ping server did not start: $(cat "$TMP/ps.out")"
	else
		rm -f "$TMP/pc.out"
		"$BIN/uiw-ping" -c -a 127.0.0.1 -p "$PORT" -C 0 -v --timeout=$TO >"$TMP/pc.out" 2>&1 &
		CPID=$!
		PIDS="$PIDS $CPID"
		wait_for "$TMP/pc.out" '/^ping data: /p' 10 >/dev/null ||
			fail "uiw-ping: no ping went through: $(cat "$TMP/pc.out")"
		kill -STOP "$SPID"
		t=$(ds)
		PAT='no progress for'
		finish "uiw-ping -C 0, server stopped: the client" "$CPID" "$TMP/pc.out" "$t" \
			$(((TO + MARGIN) * 10))
		PAT=stalled
		kill -CONT "$SPID"
	fi
fi

# 5. no false alarm: a write_bw run of 4 s (the server passive, its bound
#    2 s) with a client that has no bound of its own (--timeout 0): the
#    client's heartbeats keep the server going, both exit 0
start_server write_bw
[ -n "$PORT" ] || { fail "write_bw server did not start: $(cat "$TMP/srv.err")"; end_checks; }
rm -f "$TMP/cli.out" "$TMP/cli.err"
"$PERF" write_bw --timeout 0 -D 4 -p "$PORT" 127.0.0.1 >"$TMP/cli.out" 2>"$TMP/cli.err" &
CPID=$!
PIDS="$PIDS $CPID"
n=0
while kill -0 "$CPID" 2>/dev/null && [ $n -lt 300 ]; do
	sleep 0.1
	n=$((n + 1))
done
wait "$CPID"
crc=$?
n=0
while kill -0 "$SPID" 2>/dev/null && [ $n -lt 100 ]; do
	sleep 0.1
	n=$((n + 1))
done
wait "$SPID"
src=$?
if [ "$crc" = 0 ] && [ "$src" = 0 ]; then
	pass "write_bw -D 4, server --timeout 2, client --timeout 0: both exit 0"
else
	fail "write_bw -D 4, server --timeout 2, client --timeout 0: client exit $crc, server exit $src: $(cat "$TMP/cli.err" "$TMP/srv.err")"
fi

# 6. a silent TCP listener: accepts, never reads nor writes
if command -v python3 >/dev/null 2>&1; then
	python3 -c '
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
print("listening on 127.0.0.1 port %d" % s.getsockname()[1], flush=True)
held = []
while True:
    held.append(s.accept()[0])
' >"$TMP/silent.out" 2>&1 &
	PIDS="$PIDS $!"
	PORT=$(wait_for "$TMP/silent.out" 's/^listening on .* port \([0-9][0-9]*\)$/\1/p' 10)
	if [ -z "$PORT" ]; then
		fail "the silent listener did not start: $(cat "$TMP/silent.out")"
	else
		for t in tcp_lat tcp_bw write_bw; do
			t0=$(ds)
			start_client $t
			finish "$t against a silent listener: the client" "$CPID" "$TMP/cli.err" "$t0" \
				$(((TO + MARGIN) * 10))
		done
		# the RPC tools: uiw-rpcinfo's -t bounds the RDMA connection setup
		if [ -x "$BIN/uiw-rpcinfo" ]; then
			t0=$(ds)
			"$BIN/uiw-rpcinfo" -T rdma -t $TO -p "$PORT" 127.0.0.1 100003 3 \
				>/dev/null 2>"$TMP/rpcinfo.err" &
			CPID=$!
			PIDS="$PIDS $CPID"
			PAT='timed out'
			finish "uiw-rpcinfo -T rdma -t $TO against a silent listener" "$CPID" \
				"$TMP/rpcinfo.err" "$t0" $(((TO + MARGIN) * 10))
			PAT=stalled
		fi
	fi
else
	echo "$ME.sh: python3 not installed: the silent-listener cases are skipped"
	if [ "${UIW_REQUIRE_ALL:-0}" = 1 ]; then
		echo "$ME.sh: FAIL: UIW_REQUIRE_ALL=1 requires the silent-listener cases" >&2
		exit 1
	fi
fi

end_checks
