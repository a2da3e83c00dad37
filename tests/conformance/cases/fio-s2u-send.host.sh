# shellcheck shell=bash disable=SC2034,SC2154
# fio-s2u-send: fio-siw-send with uiwarp as the receiver: fio's client over
# siw in the VM (1 MiB in 4 KiB Sends, depth 16) to host `uiw-run fio` as
# the server (--iodepth=1) at 10.0.2.2, on a port the kernel found free.
# shellcheck disable=SC1091
. "$here/cases/fio-u2s-send.host.sh"
desc="fio --verb=send over siw in the VM -> host uiw-run fio server (depth 1): uiwarp's TERMINATE 1/2/2; both jobs stay blocked, as siw's"
ports=""

host_run() {
	local log=$OUT/fio-server.log why="" port pid
	: >"$OUT/host-state.txt"
	port=$(free_port)
	# the server in the background; fio_watch in a subshell would lose
	# FIO_END, so the readiness is checked on the port first
	(fio_watch "$log" "$UIW_BIN/uiw-run" fio "${FIOARGS[@]}" --size=1m --port="$port" --name=srv \
		--rw=read --iodepth=1; echo "${FIO_END:-}" >"$OUT/.fio_end") &
	pid=$!
	hbg "$pid"
	if ! host_wait_listen "$port" "$pid"; then
		hsig "$CASE.ready" 0
		wait "$pid" || true
		host_end "the uiw-run fio server did not listen: $(tail -n 1 "$log")"
		return
	fi
	hsig "$CASE.ready" "$port"
	wait "$pid" || true
	FIO_END=$(cat "$OUT/.fio_end" 2>/dev/null || true)
	rm -f "$OUT/.fio_end"
	hlog "uiw-run fio server: $(head -n 1 "$OUT/host-state.txt")"
	fio_trace "$log"
	if [ -n "$FIO_END" ]; then
		why="the fio server on uiwarp ended after $FIO_END ms: $(grep -hE 'err=|^fio: ' "$log" | tr '\n' ' ' || true)"
	elif ! grep -qE 'cm event DISCONNECTED .* term 1 1/2/2' "$log"; then
		why="libuiw-rdma reported no TERMINATE 1/2/2 sent"
	fi
	hawait "$CASE.guestdone" 60 >/dev/null || hlog "no word from the guest"
	host_end "$why"
}
