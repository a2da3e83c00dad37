#!/bin/sh
# SPDX-License-Identifier: MIT
#
# libuiw-rdma through uiw-run with rdma-core's own, unmodified programs
# (ibverbs-utils, rdmacm-utils, perftest):
#   - uiw-run: --help lists every call that is not implemented yet (each
#     function of rdma-compat/uiw_rdma_stub.c that says so); no arguments:
#     exit 2; a program that does not exist: exit 127;
#   - the library exports rdma-core's names only, and defines every ibv_* and
#     rdma_* function the installed programs import (they are linked
#     BIND_NOW: one missing name and they do not start);
#   - ibv_devices lists uiw0 with a GUID;
#   - ibv_devinfo: uiw0, transport iWARP, PORT_ACTIVE, link layer Ethernet;
#     -v: max_sge, max_sge_rd, max_srq_sge, max_qp_rd_atom,
#     max_qp_init_rd_atom and max_mr equal what tests/progs/rdma_limits finds
#     by probing uiwarp itself, and each IPv4 address of the host is a GID
#     (::ffff:a.b.c.d);
#   - ibv_devinfo -d mlx5_0 fails as rdma-core's does ("IB device 'mlx5_0'
#     wasn't found", non-zero exit, no crash);
#   - rping -s/-c, both on uiw-run, over loopback: sizes 23 (rping's least)
#     to 65535 (its most), 1 to 200 pings, -v -V: both exit 0, every ping
#     printed, the data of the first and last byte-exact; -q (the QPs made
#     and moved by rping itself, given by number); crossed with
#     uiwarp's own uiw-ping as server and as client;
#   - rping -c to a closed port: REJECTED -111, non-zero exit; rping -s on a
#     port in use: EADDRINUSE from rdma_bind_addr; a Send to rping -s with
#     no receive posted (tests/progs/rdma_norecv_peer.py): the TERMINATE
#     "no buffer" (1/2/0x02) and rping sees the connection end; rping -c
#     -I 127.0.0.2: a pair that connects from that address; rping -c
#     through a forwarder that accepts and closes its first 3 connections
#     (tests/progs/close_first_proxy.py): retried, the pings go through;
#   - RFC 7306 (uiw-run --rfc7306, both sides): perftest's ib_atomic_lat
#     (FETCH_AND_ADD and CMP_AND_SWAP) and ib_atomic_bw -R, unmodified: both
#     exit 0 with a result line; without it ib_atomic_lat's client fails
#     and the library names UIW_RDMA_RFC7306;
#   - perftest ib_write_bw, ib_read_bw, ib_send_bw, ib_write_lat,
#     ib_read_lat, ib_send_lat with -R at default flags: both exit 0 with a
#     result line; with -a -n 5: 23 result lines, 2 octets to 8 MiB; with
#     -s 4000 -n 300 (and --report_gbits for the _bw tests): that line, in
#     the unit asked for; ib_{write,read,send}_bw -R crossed with uiwarp's
#     own uiw-perf --perftest, each as the server and as the client;
#   - tests/progs/rdma_api under uiw-run: non-blocking channels,
#     rdma_migrate_id, private data both ways and with rdma_reject, IRD/ORD
#     of the request, IRD/ORD 0 (a Read refused both ways), QPs with no
#     receive or no send queue, the addresses of accepted and connecting ids
#     (rdma_get_peer_addr, rdma_get_src_port), rdma_destroy_qp of a connected
#     QP (reset at once, the id stays), ibv_wr_* batches (inline Send, atomic refused), a
#     post chain with an atomic (bad_wr), UD and SQD refused, teardown;
#   - rdma_server/rdma_client and rdma_xserver/rdma_xclient: both "end 0";
#   - fi_info -p verbs lists uiw0; fi_pingpong -p verbs -e msg -c at 64,
#     1024 and 65536 octets over 192.0.2.77 in a network namespace of the
#     test's own (libfabric's verbs provider ignores loopback addresses).
# Servers listen on free ports picked at random (rping cannot let the kernel
# choose and say which), started again on another when the port was taken.
# Exit 0 pass, 78 not applicable to this build, 77 skip, anything else fail.  Every program runs under
# timeout(1).  Env: UIW_BIN, UIW_TESTBIN, UIW_SAN.

set -u
ME=compat
. "$(dirname "$0")/common.inc"

BIN=${UIW_BIN:-build/bin}
TESTBIN=${UIW_TESTBIN:-build/tests}
O=$(dirname "$BIN")
LIB=$O/libuiw-rdma.so
RUN=$BIN/uiw-run
T=20

if [ -n "${UIW_SAN:-}" ]; then
	echo "compat.sh: skipped: a sanitizer build of a preloaded library needs the sanitizer" \
		"runtime first in the (uninstrumented) program"
	exit 78
fi
for c in ibv_devices ibv_devinfo timeout nm objdump; do
	if ! command -v "$c" >/dev/null 2>&1; then
		echo "compat.sh: skipped: $c is not installed (make deps-test installs ibverbs-utils and binutils)"
		exit 77
	fi
done
for f in "$LIB" "$RUN" "$TESTBIN/rdma_limits"; do
	[ -e "$f" ] || { echo "compat.sh: $f is missing (make all)"; exit 1; }
done

# run CMD...: stdout in $TMP/out, stderr in $TMP/err, exit status in rc
run() {
	timeout "$T" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
}
# a status that is not a signal's (sh: 128 + N) nor timeout's 124
no_crash() {
	[ "$rc" != 124 ] && { [ "$rc" -lt 129 ] || [ "$rc" = 255 ]; }
}

# ---- uiw-run itself
run "$RUN" --help
if [ "$rc" = 0 ] && grep -q 'usage: uiw-run \[--rfc7306\] PROGRAM' "$TMP/out"; then
	# every function of the stub file that reports itself unimplemented
	awk '/^[a-z].*[ *](ibv|rdma)_[a-z0-9_]*\(/ { s = $0; sub(/\(.*/, "", s); n = split(s, w, /[ *]+/); fn = w[n] }
	     /NOT_YET_|uiw_rdma_unimplemented\(__func__\)/ { if (fn != "") print fn; fn = "" }' \
		rdma-compat/uiw_rdma_stub.c | sort -u >"$TMP/unimpl"
	n=0
	missing=""
	while read -r f; do
		n=$((n + 1))
		grep -qw "$f" "$TMP/out" || missing="$missing $f"
	done <"$TMP/unimpl"
	if [ -n "$missing" ]; then
		fail "uiw-run --help does not list as unfinished:$missing"
	else
		pass "uiw-run --help lists the $n calls not implemented yet"
	fi
else
	fail "uiw-run --help: exit $rc"
fi
run "$RUN"
[ "$rc" = 2 ] && pass "uiw-run without a program: exit 2" || fail "uiw-run without a program: exit $rc"
run "$RUN" uiw-no-such-program-here
[ "$rc" = 127 ] && grep -q 'not found' "$TMP/err" && pass "uiw-run of a missing program: exit 127" ||
	fail "uiw-run of a missing program: exit $rc, $(head -c 200 "$TMP/err")"

# ---- the library's exports
nm -D --defined-only "$LIB" | awk '$2 ~ /^[TWD]$/ { sub(/@.*/, "", $3); print $3 }' | sort -u >"$TMP/exports"
bad=$(grep -vE '^(ibv_|_ibv_|rdma_)' "$TMP/exports" | head -n 5 | tr '\n' ' ')
[ -z "$bad" ] && pass "$(wc -l <"$TMP/exports") exports, all rdma-core names" ||
	fail "libuiw-rdma exports names that are not rdma-core's: $bad"
nbin=0
: >"$TMP/all_imports"
for p in ibv_devices ibv_devinfo rping ib_write_bw ib_read_bw ib_send_bw ib_write_lat ib_read_lat \
	ib_send_lat ib_atomic_lat ib_atomic_bw rdma_server rdma_client rdma_xserver rdma_xclient; do
	path=$(command -v "$p" 2>/dev/null) || continue
	nbin=$((nbin + 1))
	objdump -T "$path" | awk '$4 == "*UND*" || $3 == "*UND*" { print $NF }' |
		grep -E '^_?(ibv|rdma)_' | sort -u >"$TMP/imports"
	cat "$TMP/imports" >>"$TMP/all_imports"
	miss=$(comm -23 "$TMP/imports" "$TMP/exports" | tr '\n' ' ')
	[ -z "$miss" ] || fail "$p imports what libuiw-rdma does not define: $miss"
done
nimp=$(sort -u "$TMP/all_imports" | wc -l)
# ibv_devices and ibv_devinfo alone import 11 distinct functions
[ "$nimp" -ge 11 ] || fail "found only $nimp ibv_/rdma_ imports in $nbin programs"
pass "every ibv_/rdma_ import ($nimp functions) of $nbin installed programs is defined"

# ---- ibv_devices
run "$RUN" ibv_devices
if [ "$rc" = 0 ] && grep -Eq '^ *uiw0[[:space:]]+[0-9a-f]{16}$' "$TMP/out"; then
	pass "ibv_devices lists uiw0 ($(grep uiw0 "$TMP/out" | tr -s ' \t' ' '))"
else
	fail "ibv_devices: exit $rc: $(cat "$TMP/out" "$TMP/err" | head -n 8)"
fi

# ---- ibv_devinfo
field() { # field NAME: the value after "NAME:" in $TMP/out
	sed -n "s/^[[:space:]]*$1:[[:space:]]*//p" "$TMP/out" | head -n 1
}
run "$RUN" ibv_devinfo
if [ "$rc" != 0 ]; then
	fail "ibv_devinfo: exit $rc: $(head -n 5 "$TMP/err")"
else
	[ "$(sed -n 's/^hca_id:[[:space:]]*//p' "$TMP/out")" = uiw0 ] || fail "ibv_devinfo: no hca_id uiw0"
	[ "$(field transport)" = "iWARP (1)" ] || fail "ibv_devinfo: transport '$(field transport)'"
	[ "$(field state)" = "PORT_ACTIVE (4)" ] || fail "ibv_devinfo: state '$(field state)'"
	[ "$(field link_layer)" = Ethernet ] || fail "ibv_devinfo: link_layer '$(field link_layer)'"
	[ "$FAILS" = 0 ] && pass "ibv_devinfo: uiw0, iWARP, PORT_ACTIVE, Ethernet"
fi

if ! timeout "$T" "$TESTBIN/rdma_limits" >"$TMP/limits" 2>"$TMP/limits.err"; then
	fail "rdma_limits failed: $(cat "$TMP/limits" "$TMP/limits.err")"
fi
lim() { sed -n "s/^$1 //p" "$TMP/limits"; }
run "$RUN" ibv_devinfo -v
if [ "$rc" != 0 ]; then
	fail "ibv_devinfo -v: exit $rc: $(head -n 5 "$TMP/err")"
else
	f0=$FAILS
	[ "$(field transport)" = "iWARP (1)" ] && [ "$(field state)" = "PORT_ACTIVE (4)" ] &&
		[ "$(field link_layer)" = Ethernet ] || fail "ibv_devinfo -v: transport, state or link layer"
	for pair in max_sge:max_sge max_sge_rd:max_sge max_srq_sge:max_sge \
		max_qp_rd_atom:max_qp_rd_atom max_qp_init_rd_atom:max_qp_rd_atom max_mr:max_mr; do
		shown=$(field "${pair%%:*}")
		want=$(lim "${pair#*:}")
		[ -n "$want" ] && [ "$shown" = "$want" ] ||
			fail "ibv_devinfo -v: ${pair%%:*} is '$shown', uiwarp's ${pair#*:} is '$want'"
	done
	if command -v ip >/dev/null 2>&1; then
		for a in $(ip -4 -o addr show up 2>/dev/null | awk '{ sub(/\/.*/, "", $4); print $4 }'); do
			g=$(echo "$a" | awk -F. '{ printf "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x", $1, $2, $3, $4 }')
			grep -q "GID\[.*\]:[[:space:]]*$g" "$TMP/out" || fail "ibv_devinfo -v: no GID $g for $a"
		done
	fi
	[ "$FAILS" = "$f0" ] && pass "ibv_devinfo -v: limits as uiwarp's ($(tr '\n' ' ' <"$TMP/limits")), IPv4 GIDs"
fi

run "$RUN" ibv_devinfo -d mlx5_0
if [ "$rc" != 0 ] && no_crash && grep -q "IB device 'mlx5_0' wasn't found" "$TMP/err" "$TMP/out"; then
	pass "ibv_devinfo -d mlx5_0: exit $rc, $(cat "$TMP/err")"
else
	fail "ibv_devinfo -d mlx5_0: exit $rc: $(cat "$TMP/out" "$TMP/err" | head -n 3)"
fi

# ---- rping (rdmacm-utils) on uiw-run, both ends, over loopback
# listening PORT: a TCP socket listens on PORT (the kernel's tables)
listening() {
	_h=$(printf '%04X' "$1")
	cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk -v h=":$_h" '$4 == "0A" && substr($2, length($2) - 4) == h { f = 1 } END { exit !f }'
}
# free_port: a port nothing listens on now (rping cannot let the kernel
# choose and say which); a server that loses the race says "Address
# already in use" and is started again on another (start_rping_server)
# below the kernel's ephemeral range (where connections of other programs
# take their local ports)
EPH_LO=$(awk '{ print $1 }' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null)
[ -n "$EPH_LO" ] && [ "$EPH_LO" -gt 12000 ] || EPH_LO=32768
free_port() {
	while :; do
		_p=$(awk -v s="$$$(date +%N 2>/dev/null)" -v hi="$EPH_LO" 'BEGIN { srand(s % 2147483647); print 10000 + int(rand() * (hi - 10000)) }')
		listening "$_p" || { echo "$_p"; return; }
	done
}
# start_rping_server NAME ARGS...: a server on a free port, in the
# background ($SPID), listening when it returns 0 ($SPORT)
start_rping_server() {
	_n=$1
	shift
	for _try in 1 2 3 4 5; do
		SPORT=$(free_port)
		timeout "${PAIR_T:-$T}" "$@" -p "$SPORT" >"$TMP/$_n.s.out" 2>"$TMP/$_n.s.err" &
		SPID=$!
		PIDS="$PIDS $SPID"
		_w=0
		while [ $_w -lt 100 ]; do
			listening "$SPORT" && return 0
			kill -0 "$SPID" 2>/dev/null || break
			sleep 0.1
			_w=$((_w + 1))
		done
		# it stopped without listening: the port was taken (rping says
		# "Address already in use", perftest "rdma_bind_addr failed"), or
		# it failed otherwise (then every try fails the same way)
		wait "$SPID" 2>/dev/null
	done
	return 1
}
# the ping data rping's client prints with -v for ping I of size S: the
# message number, then the letters from 'A' + I % 58 on, wrapping after 'z',
# S - 1 octets in all
ping_line() {
	awk -v i="$1" -v s="$2" 'BEGIN {
		m = sprintf("rdma-ping-%d: ", i); c = 65 + i % 58
		while (length(m) < s - 1) { m = m sprintf("%c", c); c++; if (c > 122) c = 65 }
		print substr(m, 1, s - 1) }'
}
# rping_pair NAME SIZE COUNT SERVER... -- CLIENT...: a server and a client
# (commands up to the rping flags), -v -V -S SIZE -C COUNT; both must exit
# 0 within $T, every ping printed by both, the client's data byte-exact
rping_pair() {
	_n=$1 _s=$2 _c=$3
	shift 3
	_srv=""
	while [ "$1" != -- ]; do _srv="$_srv $1"; shift; done
	shift
	# shellcheck disable=SC2086
	if ! start_rping_server "$_n" $_srv -s -a 127.0.0.1 -v -V -S "$_s" -C "$_c"; then
		fail "$_n: the server did not listen: $(head -c 300 "$TMP/$_n.s.err")"
		return
	fi
	timeout "$T" "$@" -c -a 127.0.0.1 -p "$SPORT" -v -V -S "$_s" -C "$_c" >"$TMP/$_n.c.out" 2>"$TMP/$_n.c.err"
	_crc=$?
	wait "$SPID"
	_src=$?
	_f0=$FAILS
	[ "$_crc" = 0 ] || fail "$_n: client exit $_crc: $(head -c 300 "$TMP/$_n.c.err")"
	[ "$_src" = 0 ] || fail "$_n: server exit $_src: $(head -c 300 "$TMP/$_n.s.err")"
	_got=$(grep -c '^ping data: rdma-ping-' "$TMP/$_n.c.out")
	[ "$_got" = "$_c" ] || fail "$_n: the client printed $_got pings of $_c"
	_got=$(grep -c '^server ping data: rdma-ping-' "$TMP/$_n.s.out")
	[ "$_got" = "$_c" ] || fail "$_n: the server printed $_got pings of $_c"
	for _i in 0 $((_c - 1)); do
		_want=$(ping_line "$_i" "$_s")
		grep -qxF "ping data: $_want" "$TMP/$_n.c.out" || fail "$_n: ping $_i: the data came back wrong"
	done
	grep -q 'mismatch' "$TMP/$_n.c.err" "$TMP/$_n.s.err" && fail "$_n: rping -V found a data mismatch"
	[ "$FAILS" = "$_f0" ] && pass "$_n: -S $_s -C $_c: both exit 0, $_c pings verified"
}

if command -v rping >/dev/null 2>&1; then
	RP="$RUN rping"
	rping_pair rping-23 23 1 $RP -- $RP
	rping_pair rping-1000 1000 200 $RP -- $RP
	rping_pair rping-65535 65535 20 $RP -- $RP
	rping_pair rping-64 64 50 $RP -- $RP
	# -q: QPs made with ibv_create_qp, moved by the program (rdma_init_qp_attr,
	# CONNECT_RESPONSE, rdma_establish), given by number (conn_param.qp_num)
	rping_pair rping-q 100 20 $RP -q -- $RP -q

	# crossed with uiwarp's own rping (uiw-ping), both ways
	if [ -x "$BIN/uiw-ping" ]; then
		rping_pair uiw-ping-server 1000 20 "$BIN/uiw-ping" -- $RP
		rping_pair uiw-ping-client 4000 20 $RP -- "$BIN/uiw-ping"
	else
		fail "$BIN/uiw-ping is missing (make all)"
	fi

	# a port nobody listens on: REJECTED (the TCP connection is refused),
	# rping reports it and fails at once
	P=$(free_port)
	run $RP -c -a 127.0.0.1 -p "$P" -C 1
	if [ "$rc" != 0 ] && no_crash && grep -q 'RDMA_CM_EVENT_REJECTED, error -111' "$TMP/err"; then
		pass "rping -c to a closed port: exit $rc, REJECTED -111"
	else
		fail "rping -c to a closed port: exit $rc: $(head -c 300 "$TMP/err")"
	fi
	# a server on a port in use: rdma_bind_addr() says so, rping fails
	if start_rping_server busy $RP -s -a 127.0.0.1 -C 1; then
		run $RP -s -a 127.0.0.1 -p "$SPORT" -C 1
		if [ "$rc" != 0 ] && no_crash && grep -q 'rdma_bind_addr: Address already in use' "$TMP/err"; then
			pass "rping -s on a port in use: exit $rc, EADDRINUSE from rdma_bind_addr"
		else
			fail "rping -s on a port in use: exit $rc: $(head -c 300 "$TMP/err")"
		fi
		kill "$SPID" 2>/dev/null
		wait "$SPID" 2>/dev/null
	else
		fail "rping -s (busy port): did not listen: $(head -c 300 "$TMP/busy.s.err")"
	fi
	# a Send with no receive posted (iWARP has no RNR retry): the server's
	# stack ends the connection with a TERMINATE "no buffer"; rping sees the
	# connection go and ends (its status for a disconnect is 0)
	if command -v python3 >/dev/null 2>&1; then
		if start_rping_server norecv $RP -s -a 127.0.0.1 -C 1; then
			timeout "$T" python3 tests/progs/rdma_norecv_peer.py "$SPORT" >"$TMP/norecv.out" 2>&1
			prc=$?
			wait "$SPID"
			rc=$?
			if [ "$prc" = 0 ] && no_crash && grep -q 'DISCONNECT EVENT' "$TMP/norecv.s.err"; then
				pass "a Send to rping -s with no receive posted: $(cat "$TMP/norecv.out"), rping exit $rc after DISCONNECT"
			else
				fail "Send without a receive: peer exit $prc ($(cat "$TMP/norecv.out")), rping exit $rc: $(head -c 300 "$TMP/norecv.s.err")"
			fi
		else
			fail "rping -s (no receive): did not listen: $(head -c 300 "$TMP/norecv.s.err")"
		fi
		# a connection closed before the MPA Reply, as through a forwarder
		# (qemu's port forward) whose server is not listening yet, is tried
		# again like a refused one (every 20 ms, 500 ms): 3 closed, the
		# fourth relayed to a real rping -s, and the pings go through
		if start_rping_server relay $RP -s -a 127.0.0.1 -v -V -C 3; then
			timeout "$T" python3 tests/progs/close_first_proxy.py "$SPORT" 3 >"$TMP/proxy.out" 2>&1 &
			PPID_=$!
			PIDS="$PIDS $PPID_"
			_w=0
			while [ $_w -lt 50 ] && ! [ -s "$TMP/proxy.out" ]; do
				sleep 0.1
				_w=$((_w + 1))
			done
			PPORT=$(head -n 1 "$TMP/proxy.out")
			run $RP -c -a 127.0.0.1 -p "$PPORT" -v -V -C 3
			wait "$PPID_"
			prc=$?
			wait "$SPID"
			src=$?
			if [ "$rc" = 0 ] && [ "$src" = 0 ] && [ "$prc" = 0 ] && no_crash &&
				[ "$(grep -c '^ping data: ' "$TMP/out")" = 3 ]; then
				pass "rping -c through a forwarder that closed 3 connections first: retried, 3 pings ($(tail -n 1 "$TMP/proxy.out"))"
			else
				fail "rping -c through a closing forwarder: client exit $rc, server $src, proxy $prc ($(tail -n 1 "$TMP/proxy.out")): $(head -c 300 "$TMP/err")"
			fi
		else
			fail "rping -s (relay): did not listen: $(head -c 300 "$TMP/relay.s.err")"
		fi
	else
		echo "compat.sh: python3 is not installed: the Send-without-receive and forwarder checks are not run"
	fi
	# rping -I: the client connects from a chosen address (uiw_bind_addr();
	# the address itself is checked by verbs_api/test_api_bind_addr)
	rping_pair rping-I 100 10 $RP -- $RP -I 127.0.0.2
else
	echo "compat.sh: rping is not installed (rdmacm-utils): not run"
fi

# ---- the API beyond rping and perftest (tests/progs/rdma_api.c): channels
# (non-blocking, rdma_migrate_id), private data both ways and in a reject,
# IRD/ORD, ibv_wr_* batches, refusals, teardown
if [ -x "$TESTBIN/rdma_api" ]; then
	run "$RUN" "$TESTBIN/rdma_api"
	if [ "$rc" = 0 ] && ! grep -q '^FAIL' "$TMP/out"; then
		pass "rdma_api: $(grep -c '^ok:' "$TMP/out") checks passed"
	else
		fail "rdma_api: exit $rc: $(grep -v '^ok:' "$TMP/out" | head -n 3) $(head -c 300 "$TMP/err")"
	fi
else
	fail "$TESTBIN/rdma_api is missing (make all)"
fi

# ---- perftest with -R (rdma_cm), both ends on uiw-run, default flags
# pair NAME SERVER-CMD... -- CLIENT-CMD...: the server on a free port
# (-p PORT appended), then the client with -p PORT and the rest; both must
# exit 0 within $T
# perftest calibrates its cycle counter against the clock at start and gives
# up ("Correlation coefficient r^2: 0.57 < 0.9", then "Can't produce a
# report") when the host is too loaded for a clean sample: perftest's own
# measurement failed, not the RDMA under test; such a pair runs once more,
# and says so
pair() {
	_n=$1
	shift
	_srv=""
	while [ "$1" != -- ]; do _srv="$_srv $1"; shift; done
	shift
	_try=1
	while :; do
		# shellcheck disable=SC2086
		if ! start_rping_server "$_n" $_srv; then
			fail "$_n: the server did not listen: $(head -c 300 "$TMP/$_n.s.err")"
			return 1
		fi
		timeout "${PAIR_T:-$T}" "$@" -p "$SPORT" >"$TMP/$_n.c.out" 2>"$TMP/$_n.c.err"
		_crc=$?
		wait "$SPID"
		_src=$?
		if { [ "$_crc" != 0 ] || [ "$_src" != 0 ]; } && [ "$_try" = 1 ] &&
			perftest_calibration_failed "$TMP/$_n".[cs].err "$TMP/$_n".[cs].out; then
			echo "compat.sh: $_n: perftest's clock calibration failed on the loaded host: once more"
			_try=2
			continue
		fi
		break
	done
	if [ "$_crc" != 0 ] || [ "$_src" != 0 ]; then
		fail "$_n: client exit $_crc, server exit $_src: $(cat "$TMP/$_n.c.err" "$TMP/$_n.s.err" | grep -v '^$' | head -n 4)"
		return 1
	fi
	return 0
}
if command -v ib_write_bw >/dev/null 2>&1; then
	for p in ib_write_bw ib_read_bw ib_send_bw ib_write_lat ib_read_lat ib_send_lat; do
		# the client's arguments end with the server's address
		if pair "$p" $RUN "$p" -R -- $RUN "$p" -R 127.0.0.1; then
			res=$(awk '/#bytes/ { getline; print; exit }' "$TMP/$p.c.out" | tr -s ' \t' ' ')
			case $res in
			" "[0-9]*) pass "$p -R: both exit 0:$res" ;;
			*) fail "$p -R: no result line: $(head -c 300 "$TMP/$p.c.out")" ;;
			esac
		fi
		# -a: every size from 2 octets to 8 MiB (23 result lines, each with
		# -n's iterations); -s/-n: one size, rates in Gb/s for the _bw tests
		# (8 MiB messages: 60 s, not 20)
		PAIR_T=60
		if pair "$p-a" $RUN "$p" -R -a -n 5 -- $RUN "$p" -R -a -n 5 127.0.0.1; then
			n=$(grep -cE '^ +[0-9]+ +5 ' "$TMP/$p-a.c.out")
			if [ "$n" = 23 ] && grep -qE '^ +8388608 +5 ' "$TMP/$p-a.c.out"; then
				pass "$p -R -a -n 5: both exit 0, 23 sizes, 2 to 8388608"
			else
				fail "$p -R -a -n 5: $n result lines of 23: $(tail -c 300 "$TMP/$p-a.c.out")"
			fi
		fi
		PAIR_T=
		case $p in
		*_bw) opt=--report_gbits unit='Gb/sec' ;;
		*) opt= unit='usec' ;;
		esac
		# shellcheck disable=SC2086 # $opt: one word or none
		if pair "$p-s" $RUN "$p" -R -s 4000 -n 300 $opt -- $RUN "$p" -R -s 4000 -n 300 $opt 127.0.0.1; then
			if grep -qE '^ +4000 +300 ' "$TMP/$p-s.c.out" && grep -q "$unit" "$TMP/$p-s.c.out"; then
				pass "$p -R -s 4000 -n 300${opt:+ $opt}: both exit 0, the result line in $unit"
			else
				fail "$p -R -s 4000 -n 300${opt:+ $opt}: no result line in $unit: $(tail -c 300 "$TMP/$p-s.c.out")"
			fi
		fi
	done
	# RFC 7306 (uiw-run --rfc7306 on both sides): perftest's atomic tests,
	# unmodified; without it the atomic post fails with the message that
	# names the switch, and no atomic reaches the peer
	if command -v ib_atomic_lat >/dev/null 2>&1; then
		for v in "ib_atomic_lat" "ib_atomic_lat -A CMP_AND_SWAP" "ib_atomic_bw"; do
			n=$(echo "$v" | tr ' ' '_')
			# shellcheck disable=SC2086 # $v: the program and its options
			if pair "$n" $RUN --rfc7306 $v -R -n 2000 -- $RUN --rfc7306 $v -R -n 2000 127.0.0.1; then
				res=$(awk '/#bytes/ { getline; print; exit }' "$TMP/$n.c.out" | tr -s ' \t' ' ')
				case $res in
				" 8 2000 "*) pass "uiw-run --rfc7306 $v -R -n 2000: both exit 0:$res" ;;
				*) fail "$v -R: no result line: $(head -c 300 "$TMP/$n.c.out")" ;;
				esac
			fi
		done
		if start_rping_server atomic-off $RUN ib_atomic_lat -R -n 100; then
			timeout "$T" $RUN ib_atomic_lat -R -n 100 -p "$SPORT" 127.0.0.1 >"$TMP/atomic-off.c.out" 2>"$TMP/atomic-off.c.err"
			rc=$?
			wait "$SPID"
			if [ "$rc" != 0 ] && grep -q 'UIW_RDMA_RFC7306=1' "$TMP/atomic-off.c.err"; then
				pass "ib_atomic_lat -R without --rfc7306: the client fails (exit $rc) and says how to enable RFC 7306"
			else
				fail "ib_atomic_lat -R without --rfc7306: exit $rc: $(head -c 300 "$TMP/atomic-off.c.err")"
			fi
		else
			fail "atomic-off: the server did not listen: $(head -c 300 "$TMP/atomic-off.s.err")"
		fi
	fi
	# crossed with uiwarp's own perftest speaker (uiw-perf --perftest, no
	# libibverbs): each as the server and as the client, 64 KiB x 200
	for t in write read send; do
		if pair "x-$t-pt" $RUN "ib_${t}_bw" -R -n 200 -s 65536 -- \
			"$BIN/uiw-perf" "${t}_bw" --perftest -n 200 -s 65536 127.0.0.1; then
			grep -qE '^ +65536 +200 ' "$TMP/x-$t-pt.c.out" &&
				awk '/#bytes/ { getline; print; exit }' "$TMP/x-$t-pt.s.out" | grep -qE '^ +65536 +200 ' &&
				pass "uiw-run ib_${t}_bw -R server, uiw-perf ${t}_bw --perftest client: both exit 0 with 65536 x 200" ||
				fail "ib_${t}_bw / uiw-perf --perftest: no result line: $(tail -c 300 "$TMP/x-$t-pt.c.out")"
		fi
		if pair "x-$t-up" "$BIN/uiw-perf" "${t}_bw" --perftest -n 200 -s 65536 -B 127.0.0.1 -- \
			$RUN "ib_${t}_bw" -R -n 200 -s 65536 127.0.0.1; then
			awk '/#bytes/ { getline; print; exit }' "$TMP/x-$t-up.c.out" | grep -qE '^ +65536 +200 ' &&
				grep -qE '^ +65536 +200 ' "$TMP/x-$t-up.s.out" &&
				pass "uiw-perf ${t}_bw --perftest server, uiw-run ib_${t}_bw -R client: both exit 0 with 65536 x 200" ||
				fail "uiw-perf --perftest / ib_${t}_bw: no result line: $(tail -c 300 "$TMP/x-$t-up.c.out")"
		fi
	done
else
	echo "compat.sh: perftest is not installed: not run"
fi

# ---- rdmacm-utils' rdma_server/rdma_client (rdma_create_ep, synchronous ids)
if command -v rdma_server >/dev/null 2>&1; then
	for x in "" x; do
		if pair "rdma_${x}server" $RUN "rdma_${x}server" -- $RUN "rdma_${x}client" -s 127.0.0.1; then
			grep -q "end 0" "$TMP/rdma_${x}server.c.out" && grep -q "end 0" "$TMP/rdma_${x}server.s.out" &&
				pass "rdma_${x}server/rdma_${x}client: both end 0" ||
				fail "rdma_${x}server/client: $(cat "$TMP/rdma_${x}server.c.out" "$TMP/rdma_${x}server.s.out")"
		fi
	done
fi

# ---- libfabric's verbs provider (libfabric-bin): fi_info, fi_pingpong.
# The provider ignores loopback addresses: both ends run in a network
# namespace of this test's own, on a veth interface with 192.0.2.77.
if command -v fi_pingpong >/dev/null 2>&1 && command -v fi_info >/dev/null 2>&1; then
	run $RUN fi_info -p verbs
	if [ "$rc" = 0 ] && grep -q 'domain: uiw0' "$TMP/out" && grep -q 'FI_PROTO_IWARP' "$TMP/out"; then
		pass "fi_info -p verbs: uiw0, FI_PROTO_IWARP"
	else
		fail "fi_info -p verbs: exit $rc: $(head -c 300 "$TMP/out" "$TMP/err")"
	fi
	FI_NS=uiwfi$$
	ADDR=192.0.2.77
	if ip netns add "$FI_NS" 2>/dev/null; then
		trap 'cleanup; ip netns del "$FI_NS" 2>/dev/null' EXIT
		ip -n "$FI_NS" link set lo up &&
			ip -n "$FI_NS" link add fi0 type veth peer name fi1 &&
			ip -n "$FI_NS" addr add "$ADDR/24" dev fi0 &&
			ip -n "$FI_NS" link set fi1 up &&
			ip -n "$FI_NS" link set fi0 up || fail "fi_pingpong: namespace setup"
		NSX="ip netns exec $FI_NS"
		for S in 64 1024 65536; do
			P=$((20000 + S % 1000))
			timeout "$T" $NSX $RUN fi_pingpong -p verbs -e msg -B "$P" -S "$S" -I 50 -c >"$TMP/fis.out" 2>"$TMP/fis.err" &
			FPID=$!
			PIDS="$PIDS $FPID"
			_h=$(printf '%04X' "$P")
			w=0
			while [ $w -lt 100 ] && kill -0 "$FPID" 2>/dev/null &&
				! $NSX cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk -v h=":$_h" '$4 == "0A" && substr($2, length($2) - 4) == h { f = 1 } END { exit !f }'; do
				sleep 0.1
				w=$((w + 1))
			done
			timeout "$T" $NSX $RUN fi_pingpong -p verbs -e msg -P "$P" -S "$S" -I 50 -c "$ADDR" >"$TMP/fic.out" 2>"$TMP/fic.err"
			crc=$?
			wait "$FPID"
			src=$?
			res=$(awk '/^bytes/ { getline; print; exit }' "$TMP/fic.out" | tr -s ' \t' ' ')
			if [ "$crc" = 0 ] && [ "$src" = 0 ] && [ -n "$res" ]; then
				pass "fi_pingpong -p verbs -e msg -S $S -I 50 -c over $ADDR (namespace): both exit 0: $res"
			else
				fail "fi_pingpong -S $S: client exit $crc, server exit $src: $(cat "$TMP/fic.err" "$TMP/fis.err" | grep -v '^$' | head -n 4)"
			fi
		done
	else
		echo "compat.sh: cannot create a network namespace (needs root): fi_pingpong not run"
	fi
else
	echo "compat.sh: libfabric-bin is not installed: fi_pingpong not run"
fi

end_checks
