#!/bin/sh
# SPDX-License-Identifier: MIT
#
# uiw-ping (rping's protocol over uiwarp) on 127.0.0.1: a persistent server
# on a kernel-chosen port and clients of several sizes and counts with
# validation; -v output; a one-shot server; a closed port; -S out of range;
# a server that vanishes mid-run.  Exit 0 pass, 77 skip, anything else fail.
# Every process started here is killed and reaped on exit; every wait is
# bounded.  Env: UIW_BIN (directory of uiw-ping), UIW_SAN (non-empty under
# sanitizers: same counts, longer bounds).

set -u

BIN=${UIW_BIN:-build/bin}/uiw-ping
if [ ! -x "$BIN" ]; then
	echo "ping.sh: $BIN is not built"
	exit 1
fi
if ! command -v timeout >/dev/null 2>&1; then
	echo "ping.sh: skipped: timeout(1) is not installed"
	exit 77
fi

# bounds in seconds: a client run, waiting for a port line or an exit
if [ -n "${UIW_SAN:-}" ]; then
	T=20
else
	T=10
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/uiw-ping-test.XXXXXX") || exit 1
PIDS=""
FAILS=0

cleanup() {
	for p in $PIDS; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in $PIDS; do
		n=0
		while kill -0 "$p" 2>/dev/null && [ $n -lt 50 ]; do
			sleep 0.1
			n=$((n + 1))
		done
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

fail() {
	echo "ping.sh: FAIL: $*"
	FAILS=$((FAILS + 1))
}

pass() {
	echo "ping.sh: ok: $*"
}

# forget @1 from PIDS once it was reaped
forget() {
	np=""
	for p in $PIDS; do
		[ "$p" = "$1" ] || np="$np $p"
	done
	PIDS=$np
}

# wait_port FILE: print the port of "uiw-ping: listening on ADDR port N"
wait_port() {
	n=0
	while [ $n -lt $((T * 10)) ]; do
		port=$(sed -n 's/^uiw-ping: listening on .* port \([0-9][0-9]*\)$/\1/p' "$1")
		if [ -n "$port" ]; then
			echo "$port"
			return 0
		fi
		sleep 0.1
		n=$((n + 1))
	done
	return 1
}

# wait_exit PID: wait up to T s for PID to end; its status in $rc (255: still running)
wait_exit() {
	n=0
	while kill -0 "$1" 2>/dev/null && [ $n -lt $((T * 10)) ]; do
		sleep 0.1
		n=$((n + 1))
	done
	if kill -0 "$1" 2>/dev/null; then
		rc=255
		return 1
	fi
	wait "$1"
	rc=$?
	forget "$1"
	return 0
}

# client NAME ARGS...: run a client to the persistent server, expect success
client() {
	name=$1
	shift
	timeout "$T" "$BIN" -c -a 127.0.0.1 -p "$PORT" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
	rc=$?
	if [ $rc -eq 0 ]; then
		pass "client $*"
	else
		fail "client $* exited $rc: $(cat "$TMP/$name.err")"
	fi
}

# ---- command line --------------------------------------------------------

if "$BIN" --help >"$TMP/help" 2>&1 && grep -q '^Usage: uiw-ping -s' "$TMP/help"; then
	pass "--help"
else
	fail "--help: $(cat "$TMP/help")"
fi

for s in 22 65536; do
	timeout "$T" "$BIN" -c -a 127.0.0.1 -p 7174 -S $s >/dev/null 2>"$TMP/size.err"
	rc=$?
	if [ $rc -ne 0 ] && [ $rc -ne 124 ] &&
		grep -qF "uiw-ping: invalid size $s (valid range is 23 to 65535)" "$TMP/size.err"; then
		pass "-S $s rejected (exit $rc)"
	else
		fail "-S $s: exit $rc, stderr: $(cat "$TMP/size.err")"
	fi
done

# ---- a persistent server that validates what it reads ----------------------

timeout -k 2 120 "$BIN" -s -P -V -a 127.0.0.1 -p 0 >"$TMP/srv.out" 2>"$TMP/srv.err" &
SRV=$!
PIDS="$PIDS $SRV"
if ! PORT=$(wait_port "$TMP/srv.out"); then
	fail "the server printed no port: $(cat "$TMP/srv.err")"
	exit 1
fi
pass "server listening on port $PORT"

client c1000 -V -C 1000
client s64 -S 64 -V -C 100
client s65535 -S 65535 -V -C 100
client s23 -S 23 -V -C 100
client src-addr -I 127.0.0.2 -V -C 20
timeout "$T" "$BIN" -c -I 192.0.2.254 -a 127.0.0.1 -p "$PORT" -C 1 >/dev/null 2>"$TMP/src.err"
rc=$?
if [ $rc -ne 0 ] && grep -qF 'source address 192.0.2.254' "$TMP/src.err"; then
	pass "-I with an address not of this host refused (exit $rc)"
else
	fail "-I 192.0.2.254: exit $rc, stderr: $(cat "$TMP/src.err")"
fi

client verbose -v -V -C 3
cat >"$TMP/verbose.want" <<'EOF'
ping data: rdma-ping-0: ABCDEFGHIJKLMNOPQRSTUVWXYZ[\]^_`abcdefghijklmnopqr
ping data: rdma-ping-1: BCDEFGHIJKLMNOPQRSTUVWXYZ[\]^_`abcdefghijklmnopqrs
ping data: rdma-ping-2: CDEFGHIJKLMNOPQRSTUVWXYZ[\]^_`abcdefghijklmnopqrst
EOF
if cmp -s "$TMP/verbose.want" "$TMP/verbose.out"; then
	pass "-v output is rping's"
else
	fail "-v output differs:
$(diff "$TMP/verbose.want" "$TMP/verbose.out")"
fi

# three clients at once
CL=""
for i in 1 2 3; do
	timeout "$T" "$BIN" -c -a 127.0.0.1 -p "$PORT" -V -C 300 -S $((100 * i)) \
		>"$TMP/con$i.out" 2>"$TMP/con$i.err" &
	CL="$CL $!"
	PIDS="$PIDS $!"
done
i=0
for p in $CL; do
	i=$((i + 1))
	wait_exit "$p"
	if [ $rc -eq 0 ]; then
		pass "concurrent client $i"
	else
		fail "concurrent client $i exited $rc: $(cat "$TMP/con$i.err")"
	fi
done

# ---- a one-shot server: serves one client, prints what it read, exits 0 ------

timeout -k 2 60 "$BIN" -s -v -V -a 127.0.0.1 -p 0 >"$TMP/one.out" 2>"$TMP/one.err" &
ONE=$!
PIDS="$PIDS $ONE"
if OPORT=$(wait_port "$TMP/one.out"); then
	timeout "$T" "$BIN" -c -a 127.0.0.1 -p "$OPORT" -S 30 -C 2 >/dev/null 2>"$TMP/onec.err"
	crc=$?
	wait_exit "$ONE"
	if [ $crc -eq 0 ] && [ $rc -eq 0 ] &&
		grep -qxF 'server ping data: rdma-ping-0: ABCDEFGHIJKLMNOP' "$TMP/one.out" &&
		grep -qxF 'server ping data: rdma-ping-1: BCDEFGHIJKLMNOPQ' "$TMP/one.out"; then
		pass "one-shot server with -v"
	else
		fail "one-shot server: client exit $crc, server exit $rc
$(cat "$TMP/one.out" "$TMP/one.err" "$TMP/onec.err")"
	fi

	# ---- its port is closed now: the client fails with a clear message ------
	timeout "$T" "$BIN" -c -a 127.0.0.1 -p "$OPORT" -C 1 >/dev/null 2>"$TMP/closed.err"
	rc=$?
	if [ $rc -ne 0 ] && [ $rc -ne 124 ] &&
		grep -qF "uiw-ping: connect to 127.0.0.1:$OPORT: connection refused" \
			"$TMP/closed.err"; then
		pass "closed port refused (exit $rc)"
	else
		fail "closed port: exit $rc, stderr: $(cat "$TMP/closed.err")"
	fi
else
	fail "the one-shot server printed no port: $(cat "$TMP/one.err")"
fi

# ---- the server vanishes (SIGKILL) under an endless client: it must fail ----

"$BIN" -s -a 127.0.0.1 -p 0 >"$TMP/gone.out" 2>"$TMP/gone.err" &
GONE=$!
PIDS="$PIDS $GONE"
if GPORT=$(wait_port "$TMP/gone.out"); then
	timeout "$T" "$BIN" -c -a 127.0.0.1 -p "$GPORT" -V >/dev/null 2>"$TMP/gonec.err" &
	GC=$!
	PIDS="$PIDS $GC"
	sleep 0.3
	kill -KILL "$GONE"
	wait "$GONE" 2>/dev/null
	forget "$GONE"
	wait_exit "$GC"
	if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $rc -ne 255 ] &&
		grep -qF "closed by the server" "$TMP/gonec.err"; then
		pass "vanished server detected (exit $rc)"
	else
		fail "vanished server: client exit $rc, stderr: $(cat "$TMP/gonec.err")"
	fi
else
	fail "the server to kill printed no port: $(cat "$TMP/gone.err")"
fi

# ---- the persistent server saw no error and dies of SIGTERM cleanly ----------

kill -TERM "$SRV"
wait_exit "$SRV"
if [ $rc -eq 143 ] && [ ! -s "$TMP/srv.err" ]; then
	pass "persistent server: no errors, exit $rc on SIGTERM"
else
	fail "persistent server: exit $rc, stderr: $(cat "$TMP/srv.err")"
fi

if [ $FAILS -ne 0 ]; then
	echo "ping.sh: $FAILS check(s) failed"
	exit 1
fi
echo "ping.sh: all checks passed"
exit 0
