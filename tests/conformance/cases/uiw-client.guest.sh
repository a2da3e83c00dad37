# uiw-client (guest, busybox sh): rping -s -v -V on 10.0.2.15:PORT (stock
# shellcheck shell=sh disable=SC1091,SC2034,SC2086
# siw), once per round, for the host's uiw-ping -c; capture on eth0.
# PORT (7201) and ROUNDS (1) may be set by a case that sources this file.
. /share/_vm/guest-lib.sh
: "${PORT:=7201}" "${ROUNDS:=1}" "${COUNT:=10}" "${RPING_OPTS:=}"
use_siw stock || fail "cannot load the stock siw.ko"
cap_start "$CASE" eth0 tcp port "$PORT" || fail "tcpdump did not start"
why=
i=1
while [ "$i" -le "$ROUNDS" ]; do
	bg_start "$OUT/rping-server.$i.log" timeout 150 "$RPING" -s -a "$GUEST_IP" -p "$PORT" -v -V $RPING_OPTS
	spid=$BG_PID
	if ! wait_listen "$PORT" 20; then
		why="round $i: rping -s did not listen on $PORT"
		break
	fi
	sig "$CASE.ready.$i"
	if ! hrc=$(await "$CASE.hostdone.$i" 120); then
		why="round $i: no word from the host's uiw-ping"
		break
	fi
	bg_wait "$spid" 15
	src=$?
	sl=$(count '^server ping data: ' "$OUT/rping-server.$i.log")
	log "round $i: host uiw-ping exit $hrc; rping -s exit $src, $sl pings"
	if [ "$sl" != "$COUNT" ]; then
		why="round $i: rping -s printed $sl of $COUNT pings (host uiw-ping exit $hrc)"
		break
	fi
	if [ "$src" = 124 ]; then
		why="round $i: rping -s did not end after the client left"
		break
	fi
	i=$((i + 1))
done
cap_stop
[ -z "$why" ] || fail "$why"
pass
