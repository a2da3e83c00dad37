# shellcheck shell=sh disable=SC1091,SC2086
# SPDX-License-Identifier: MIT
#
# peer/cell.guest.sh - guest part of one interop-matrix cell (busybox sh;
# copied to /share/_vm/peer-cell.guest.sh and sourced by the generated
# cases/NAME.guest.sh, which sets CELL_INIT, CELL_SIW, CELL_SCEN,
# CELL_PORT, CELL_ARGS, CELL_DDEBUG).  siw_peer runs over siw0: as the
# server on 10.0.2.15:CELL_PORT (CELL_INIT=uiw) or as the client of the
# host's uiw_peer at 10.0.2.2 (CELL_INIT=siw).  Captured on eth0.
. /share/_vm/guest-lib.sh
PEER=/share/_vm/bin/siw_peer
[ -x "$PEER" ] || skip "no siw_peer (not built on the host)"
use_siw $CELL_SIW || fail "cannot load siw ($CELL_SIW)"

DDC=/sys/kernel/debug/dynamic_debug/control
if [ "$CELL_DDEBUG" = 1 ]; then
	[ -e "$DDC" ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
	if [ -e "$DDC" ]; then
		echo 'module siw +p' >"$DDC" || log "cannot turn on siw's dynamic debug"
	else
		log "no dynamic debug in this kernel"
	fi
fi
dmesg -c >/dev/null 2>&1

verdict() { # LOG: fail/pass on siw_peer's lines
	_f=$(grep -m1 '^FAIL: ' "$1")
	if [ -n "$_f" ]; then
		_why="siw_peer: ${_f#FAIL: }"
	elif ! grep -q '^PASS: ' "$1"; then
		_why="siw_peer: no PASS line ($(tail -n 1 "$1"))"
	else
		_why=
	fi
}

why=
if [ "$CELL_INIT" = uiw ]; then
	cap_start "$CASE" eth0 tcp port "$CELL_PORT" || fail "tcpdump did not start"
	bg_start "$OUT/siw_peer.log" timeout 150 "$PEER" -r server -a "$GUEST_IP" -p "$CELL_PORT" \
		-S "$CELL_SCEN" $CELL_ARGS
	spid=$BG_PID
	if ! wait_listen "$CELL_PORT" 20; then
		why="siw_peer -r server did not listen on $CELL_PORT: $(tail -n 1 "$OUT/siw_peer.log")"
		sig "$CASE.ready"
	else
		sig "$CASE.ready"
		hrc=$(await "$CASE.hostdone" 150) || why="no word from the host's uiw_peer"
		bg_wait "$spid" 40
		rc=$?
		log "siw_peer exit $rc, host uiw_peer exit $hrc"
	fi
else
	port=$(await "$CASE.ready" 60)
	if [ -z "$port" ] || [ "$port" = 0 ]; then
		why="no uiw_peer server on the host"
	else
		cap_start "$CASE" eth0 tcp and host "$HOST_IP" and port "$port" || fail "tcpdump did not start"
		log "siw_peer -r client -a $HOST_IP -p $port -S $CELL_SCEN $CELL_ARGS"
		timeout 150 "$PEER" -r client -a "$HOST_IP" -p "$port" -S "$CELL_SCEN" $CELL_ARGS \
			>"$OUT/siw_peer.log" 2>&1
		rc=$?
		sig "$CASE.guestdone" "$rc"
		log "siw_peer exit $rc"
	fi
fi
cap_stop
dmesg >"$OUT/dmesg.log" 2>&1
if [ "$CELL_DDEBUG" = 1 ] && [ -e "$DDC" ]; then
	echo 'module siw -p' >"$DDC"
	grep -iE 'term|error' "$OUT/dmesg.log" >"$OUT/siw-term.log"
fi
[ -z "$why" ] || fail "$why"
verdict "$OUT/siw_peer.log"
[ -z "$_why" ] || fail "$_why"
pass
