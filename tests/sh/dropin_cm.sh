#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The drop-in's connection manager as the kernel's RDMA CM behaves, with
# rdma-core's and others' unmodified programs, both ends under uiw-run,
# over loopback:
#   - tests/progs/rdma_cm_srv: rdma_bind_addr takes the port at once
#     (rdma_get_src_port after binding to port 0, EADDRINUSE/EADDRNOTAVAIL
#     for a second id on the port, the port free again after the id is
#     destroyed); rdma_listen(id, 0) and (id, -1): 200 connections made at
#     once all established; rdma_migrate_id of a listener moves the
#     CONNECT_REQUESTs queued on its channel; rdma_disconnect returns what
#     the kernel's returns in every state;
#   - perftest ib_write_bw -R -D 1: both exit 0 and neither says "Failed
#     to disconnect" (its client disconnects after the server's reset).
# Ports: the kernel's choice where the program takes a number (a socket
# bound to port 0 and closed; a server that loses the port to another
# program in between is started again).  A sanitizer build runs
# rdma_cm_srv only (it is built with the sanitizer and loads the sanitized
# library; rdma-core's programs are not instrumented and cannot): then
# exit 0 as well.  cmtime and ucmatose with 100 connections and qperf -cm1,
# the programs that found the backlog and bind-time port defects, run in
# tests/sh/apps.sh, between two network namespaces.
# Exit 0 pass, 77 skip (something needed is missing), anything else fail.
# Every program runs under timeout(1).  Env: UIW_BIN, UIW_TESTBIN, UIW_SAN.

set -u
ME=dropin_cm
. "$(dirname "$0")/common.inc"

BIN=${UIW_BIN:-build/bin}
TESTBIN=${UIW_TESTBIN:-build/tests}
O=$(dirname "$BIN")
LIB=$O/libuiw-rdma.so
RUN=$BIN/uiw-run
T=60

for f in "$LIB" "$RUN" "$TESTBIN/rdma_cm_srv"; do
	if [ ! -e "$f" ]; then
		echo "dropin_cm.sh: FAIL: $f is missing (make all)"
		exit 1
	fi
done
if ! command -v timeout >/dev/null 2>&1; then
	echo "dropin_cm.sh: skipped: timeout(1) is not installed"
	exit 77
fi

# ---- tests/progs/rdma_cm_srv
asan_preload_env
timeout 200 "$RUN" "$TESTBIN/rdma_cm_srv" >"$TMP/srv.out" 2>"$TMP/srv.err"
rc=$?
if [ $rc -eq 0 ] && grep -q '^ok: all done' "$TMP/srv.out"; then
	pass "rdma_cm_srv: $(grep -c '^ok:' "$TMP/srv.out") checks passed"
else
	fail "rdma_cm_srv: exit $rc: $(grep -v '^ok:' "$TMP/srv.out" | head -n 3)" \
		"$(grep -E 'ERROR|SUMMARY|runtime error|^ +#[0-9] ' "$TMP/srv.err" | head -n 12)" \
		"$(grep -v '^uiw-rdma:' "$TMP/srv.err" | head -c 400)"
fi
if [ -n "${UIW_SAN:-}" ]; then
	echo "dropin_cm.sh: perftest not run: a sanitizer build of a" \
		"preloaded library needs the sanitizer runtime first in the (uninstrumented) program"
	end_checks
fi

for c in ib_write_bw; do
	if ! command -v "$c" >/dev/null 2>&1; then
		echo "dropin_cm.sh: skipped: $c is not installed (make deps-test installs perftest)"
		exit 77
	fi
done

# a port the kernel chose: bound to port 0, read, closed (for programs that
# take a number); free_port fails only without python3 and perl
free_port() {
	if command -v python3 >/dev/null 2>&1; then
		python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
	else
		perl -MSocket -e 'socket(S, PF_INET, SOCK_STREAM, 0) or die; bind(S, pack_sockaddr_in(0, inet_aton("127.0.0.1"))) or die;
			my ($p) = unpack_sockaddr_in(getsockname(S)); print "$p\n"'
	fi
}
# listening PORT: a TCP socket listens on PORT (the kernel's tables)
listening() {
	_h=$(printf '%04X' "$1")
	cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk -v h=":$_h" '$4 == "0A" && substr($2, length($2) - 4) == h { f = 1 } END { exit !f }'
}
# start_server NAME FLAG ARGS...: "$@" FLAG PORT in the background ($SPID),
# once it listens ($SPORT); 1 if it never did in 5 tries (each on a new
# port: another program may take the port between free_port and the server)
start_server() {
	_n=$1 _f=$2
	shift 2
	for _try in 1 2 3 4 5; do
		SPORT=$(free_port)
		[ -n "$SPORT" ] || return 1
		timeout "$T" "$@" "$_f" "$SPORT" >"$TMP/$_n.s.out" 2>"$TMP/$_n.s.err" &
		SPID=$!
		PIDS="$PIDS $SPID"
		_w=0
		while [ $_w -lt 100 ]; do
			listening "$SPORT" && return 0
			kill -0 "$SPID" 2>/dev/null || break
			sleep 0.1
			_w=$((_w + 1))
		done
		kill "$SPID" 2>/dev/null
		wait "$SPID" 2>/dev/null
	done
	return 1
}
# ---- perftest ib_write_bw -R -D 1: no "Failed to disconnect".  perftest
# calibrates its cycle counter at start and gives up ("Correlation
# coefficient r^2 ... < 0.9") when the host is too loaded for a clean
# sample: its own measurement failed, not uiwarp; then once more
try=1
while start_server wbw -p "$RUN" ib_write_bw -R -D 1; do
	timeout "$T" "$RUN" ib_write_bw -R -D 1 -p "$SPORT" 127.0.0.1 >"$TMP/wbw.out" 2>&1
	rc=$?
	wait "$SPID"
	src=$?
	if [ "$try" = 1 ] && perftest_calibration_failed "$TMP/wbw.out" "$TMP/wbw.s.out" "$TMP/wbw.s.err"; then
		echo "dropin_cm.sh: perftest's clock calibration failed on the loaded host: once more"
		try=2
		continue
	fi
	break
done
if [ ! -e "$TMP/wbw.out" ]; then
	fail "ib_write_bw -R -D 1: the server never listened: $(head -c 300 "$TMP/wbw.s.err")"
else
	if [ $rc -eq 0 ] && [ $src -eq 0 ] && ! grep -qi 'failed' "$TMP/wbw.out" "$TMP/wbw.s.out" &&
		grep -qE '^ +65536 +[0-9]+' "$TMP/wbw.out"; then
		pass "ib_write_bw -R -D 1: both exit 0, no 'Failed to disconnect'"
	else
		fail "ib_write_bw -R -D 1: client exit $rc, server $src: $(grep -i 'fail\|errno' "$TMP/wbw.out" "$TMP/wbw.s.out" | head -n 3)"
	fi
fi

end_checks
