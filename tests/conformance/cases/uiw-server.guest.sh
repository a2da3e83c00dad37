# uiw-server (guest, busybox sh): rping -c -C 10 -v -V against the host's
# shellcheck shell=sh disable=SC1091,SC2034,SC2086
# uiw-ping -s at 10.0.2.2 (the port comes from the host), stock siw;
# capture on eth0.  ROUNDS (1) may be set by a case that sources this file.
. /share/_vm/guest-lib.sh
: "${ROUNDS:=1}" "${COUNT:=10}" "${RPING_OPTS:=}"
use_siw stock || fail "cannot load the stock siw.ko"
cap_start "$CASE" eth0 tcp and host "$HOST_IP" || fail "tcpdump did not start"
why=
i=1
while [ "$i" -le "$ROUNDS" ]; do
	if ! port=$(await "$CASE.ready.$i" 120) || [ "$port" = 0 ]; then
		why="round $i: no uiw-ping server on the host"
		break
	fi
	log "round $i: rping -c -a $HOST_IP -p $port -C $COUNT -v -V $RPING_OPTS"
	timeout 90 "$RPING" -c -a "$HOST_IP" -p "$port" -C "$COUNT" -v -V $RPING_OPTS >"$OUT/rping-client.$i.log" 2>&1
	crc=$?
	sig "$CASE.guestdone.$i" "$crc"
	cl=$(count '^ping data: ' "$OUT/rping-client.$i.log")
	log "round $i: rping -c exit $crc, $cl pings"
	if [ "$crc" != 0 ]; then
		why="round $i: rping -c exit $crc: $(tail -n 1 "$OUT/rping-client.$i.log")"
		break
	fi
	if [ "$cl" != "$COUNT" ]; then
		why="round $i: rping -c printed $cl of $COUNT pings"
		break
	fi
	[ "$i" = "$ROUNDS" ] || sleep 1
	i=$((i + 1))
done
cap_stop
[ -z "$why" ] || fail "$why"
pass
