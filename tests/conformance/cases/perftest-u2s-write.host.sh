# shellcheck shell=bash disable=SC2034,SC2154
# perftest-u2s-write: host uiw-perf write_bw --perftest (the client, MPA
# initiator, CRC on) against ib_write_bw -R in the VM (siw) through a
# hostfwd port.  perftest's client connects twice to one port: the exchange
# connection, then the data connection (docs/perftest-interop.md).
# perftest-u2s-read/-send source this file and set PORT and PT_TEST.
# Counts: siw transmits slowly under TCG (0.5 to 4 MB/s seen, against 7 to
# 17 MB/s when uiwarp transmits), so the cases where siw sends the data
# (u2s-read, s2u-write, s2u-send) move 50 messages, the others 200.
desc="host uiw-perf write_bw --perftest -> ib_write_bw -R in the VM via hostfwd, 64 KiB x 200"
ports="7501"
PORT=7501
PT_TEST="write"
ITERS=200
SIZE=65536
UIW_OPTS=()
WANT_CRC=1 # uiw-perf asks for CRC; siw's Reply echoes the C bit

needs() {
	if [ ! -x "$UIW_BIN/uiw-perf" ]; then
		echo "no $UIW_BIN/uiw-perf (the tool is not built yet)"
		return 1
	fi
}

# the client: uiw-perf --perftest here; run-pt-u2s-* run perftest's own
# ib_*_bw -R under uiw-run instead
CLIENT=uiw-perf
client_args() { # PORT: the command line
	CLIENT_ARGS=("$UIW_BIN/uiw-perf" "${PT_TEST}_bw" --perftest -n "$ITERS" -s "$SIZE" -p "$1" "${UIW_OPTS[@]}" 127.0.0.1)
}

host_run() {
	local fwd=VM_FWD_$PORT rc=0 log line
	if ! hawait "$CASE.ready" 120 >/dev/null; then
		host_fail "ib_${PT_TEST}_bw -R in the VM never got ready"
		return
	fi
	log=$OUT/$CLIENT-client.log
	client_args "${!fwd}"
	hlog "${CLIENT_ARGS[*]}"
	timeout -k 10 90 "${CLIENT_ARGS[@]}" >"$log" 2>&1 || rc=$?
	hsig "$CASE.hostdone" "$rc"
	line=$(grep -E "^ *$SIZE +$ITERS +" "$log" | head -n 1)
	hlog "$CLIENT exit $rc: $line"
	if [ "$rc" != 0 ]; then
		host_fail "$CLIENT exit $rc: $(tail -n 1 "$log")"
	elif [ -z "$line" ]; then
		host_fail "$CLIENT printed no result line for $SIZE x $ITERS"
	else
		host_pass
	fi
}

host_check() {
	if mpa_check "$OUT/$CASE.pcap" "$WANT_CRC" "$WANT_CRC"; then
		check_pass
	else
		check_fail "$MPA_WHY"
	fi
}
