# shellcheck shell=bash disable=SC2034,SC2154
# perftest-s2u-write: ib_write_bw -R in the VM (siw is the MPA initiator)
# against uiw-perf write_bw --perftest on the host (CRC on).  uiw-perf
# listens on 127.0.0.1 with -p 0; the guest reaches it as 10.0.2.2.  Both
# of perftest's connections (exchange, then data) come to that one port.
# perftest-s2u-read/-send source this file and set PT_TEST.
# Counts: siw transmits slowly under TCG (0.5 to 4 MB/s seen, against 7 to
# 17 MB/s when uiwarp transmits), so the cases where siw sends the data
# (s2u-write, s2u-send, u2s-read) move 50 messages, the others 200.
desc="ib_write_bw -R in the VM -> host uiw-perf write_bw --perftest at 10.0.2.2, 64 KiB x 50"
ports=""
PT_TEST="write"
ITERS=50 # siw sends the data: see above
SIZE=65536
UIW_OPTS=()
WANT_REQ=0 # siw never asks for CRC
WANT_REP=1 # uiw-perf with --crc on sets C in its Reply; siw then uses CRC

needs() {
	if [ ! -x "$UIW_BIN/uiw-perf" ]; then
		echo "no $UIW_BIN/uiw-perf (the tool is not built yet)"
		return 1
	fi
}

# server_start LOG: start the server in the background (SERVER_PID) and set
# SERVER_PORT to the port it listens on (empty: it did not).  uiw-perf
# --perftest here, given port 0, prints the one it got; run-pt-s2u-* run
# perftest's own ib_*_bw -R under uiw-run instead.
SERVER=uiw-perf
SERVER_PID=
SERVER_PORT=
server_start() {
	host_server_port0 "$1" 120 "$UIW_BIN/uiw-perf" "${PT_TEST}_bw" --perftest -B 127.0.0.1 -p 0 \
		-n "$ITERS" -s "$SIZE" "${UIW_OPTS[@]}"
}

host_run() {
	local rc=0 log pid port n line
	log=$OUT/$SERVER-server.log
	: >"$log"
	server_start "$log"
	port=$SERVER_PORT pid=$SERVER_PID
	if [ -z "$port" ]; then
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		hsig "$CASE.ready" 0
		host_fail "$SERVER did not listen: $(tail -n 1 "$log")"
		return
	fi
	hsig "$CASE.ready" "$port"
	if ! hawait "$CASE.guestdone" 120 >/dev/null; then
		hlog "no word from the guest's ib_${PT_TEST}_bw -R"
	fi
	for ((n = 0; n < 150; n++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill "$pid" 2>/dev/null || true
	wait "$pid" || rc=$?
	line=$(grep -E "^ *$SIZE +$ITERS +" "$log" | head -n 1)
	hlog "$SERVER server exit $rc: $line"
	if [ "$rc" != 0 ]; then
		host_fail "$SERVER server exit $rc: $(tail -n 1 "$log")"
	elif [ -z "$line" ]; then
		host_fail "$SERVER server printed no result line for $SIZE x $ITERS"
	else
		host_pass
	fi
}

host_check() {
	if mpa_check "$OUT/$CASE.pcap" "$WANT_REQ" "$WANT_REP"; then
		check_pass
	else
		check_fail "$MPA_WHY"
	fi
}
