# shellcheck shell=bash disable=SC2034,SC2154
# uiw-client: uiw-ping -c on the host against rping -s in the VM, through a
# hostfwd port (127.0.0.1:VM_FWD_7201 -> 10.0.2.15:7201).  siw is the MPA
# responder: this is the direction where siw drops a first FPDU that comes
# right after its Reply (uiw-ping waits first_fpdu_delay_ms = 50 first).
desc="host uiw-ping -c (CRC on, its default) -> rping -s in the VM via hostfwd, -V -C 10"
ports="7201"
PORT=7201
ROUNDS=1
COUNT=10
UIW_OPTS=()
WANT_CRC=1 # uiw-ping asks for CRC; siw's Reply echoes the C bit

needs() {
	need_uiw_ping
}

# the client: uiw-ping here; run-rping-u2s runs rping under uiw-run instead
CLIENT=uiw-ping
CLIENT_CMD=("$UIW_BIN/uiw-ping")

host_run() {
	local fwd=VM_FWD_$PORT i rc pings why="" log
	for ((i = 1; i <= ROUNDS; i++)); do
		if ! hawait "$CASE.ready.$i" 120 >/dev/null; then
			why="round $i: rping -s in the VM never got ready"
			break
		fi
		log=$OUT/$CLIENT-client.$i.log
		hlog "round $i: $CLIENT -c -a 127.0.0.1 -p ${!fwd} -C $COUNT -v -V ${UIW_OPTS[*]}"
		rc=0
		timeout -k 10 60 "${CLIENT_CMD[@]}" -c -a 127.0.0.1 -p "${!fwd}" -C "$COUNT" -v -V \
			"${UIW_OPTS[@]}" >"$log" 2>&1 || rc=$?
		hsig "$CASE.hostdone.$i" "$rc"
		pings=$(hcount '^ping data: ' "$log")
		hlog "round $i: $CLIENT exit $rc, $pings pings"
		if [ "$rc" != 0 ]; then
			why="round $i: $CLIENT exit $rc: $(grep -v '^ping data' "$log" | tail -n 1)"
			break
		fi
		if [ "$pings" != "$COUNT" ]; then
			why="round $i: $CLIENT printed $pings of $COUNT pings"
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
	if mpa_check "$OUT/$CASE.pcap" "$WANT_CRC" "$WANT_CRC"; then
		check_pass
	else
		check_fail "$MPA_WHY"
	fi
}
