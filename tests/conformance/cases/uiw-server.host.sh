# shellcheck shell=bash disable=SC2034,SC2154
# uiw-server: rping -c in the VM (siw is the MPA initiator) against uiw-ping
# -s on the host.  The guest reaches the host's 127.0.0.1 as 10.0.2.2
# (slirp); uiw-ping listens on 127.0.0.1 with -p 0 and the port it prints is
# passed to the guest.
desc="rping -c in the VM -> host uiw-ping -s (CRC on, its default) at 10.0.2.2, -V -C 10"
ports=""
ROUNDS=1
COUNT=10
UIW_OPTS=()
WANT_REQ=0 # siw never asks for CRC
WANT_REP=1 # uiw-ping with --crc=on sets C in its Reply; siw then uses CRC

needs() {
	need_uiw_ping
}

# server_start LOG: start the server in the background (SERVER_PID) and set
# SERVER_PORT to the port it listens on (empty: it did not).  uiw-ping here, which is
# given port 0 and prints the one it got; run-rping-s2u runs rping -s under
# uiw-run instead.
SERVER=uiw-ping
SERVER_PID=
SERVER_PORT=
server_start() {
	host_server_port0 "$1" 150 "$UIW_BIN/uiw-ping" -s -a 127.0.0.1 -p 0 -v -V "${UIW_OPTS[@]}"
}

host_run() {
	local i rc pings why="" log pid port n
	for ((i = 1; i <= ROUNDS; i++)); do
		log=$OUT/$SERVER-server.$i.log
		: >"$log"
		server_start "$log"
		port=$SERVER_PORT pid=$SERVER_PID
		if [ -z "$port" ]; then
			kill "$pid" 2>/dev/null || true
			wait "$pid" 2>/dev/null || true
			why="round $i: $SERVER -s did not listen: $(tail -n 1 "$log")"
			hsig "$CASE.ready.$i" 0
			break
		fi
		hsig "$CASE.ready.$i" "$port"
		if ! hawait "$CASE.guestdone.$i" 120 >/dev/null; then
			hlog "round $i: no word from the guest's rping -c"
		fi
		# the client has left: the server ends by itself
		for ((n = 0; n < 150; n++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill "$pid" 2>/dev/null || true
		rc=0
		wait "$pid" || rc=$?
		pings=$(hcount '^server ping data: ' "$log")
		hlog "round $i: $SERVER -s exit $rc, $pings pings"
		if [ "$rc" != 0 ]; then
			why="round $i: $SERVER -s exit $rc: $(grep -v 'ping data' "$log" | tail -n 1)"
			break
		fi
		if [ "$pings" != "$COUNT" ]; then
			why="round $i: $SERVER -s printed $pings of $COUNT pings"
			break
		fi
	done
	if [ -z "$why" ]; then
		host_pass
	else
		host_fail "$why"
	fi
}

host_check() {
	if mpa_check "$OUT/$CASE.pcap" "$WANT_REQ" "$WANT_REP"; then
		check_pass
	else
		check_fail "$MPA_WHY"
	fi
}
