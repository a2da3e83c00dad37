# shellcheck shell=bash disable=SC2034,SC2154
# fio-u2s-send: fio-siw-send with uiwarp as the sender: host `uiw-run fio`
# (libuiw-rdma, traced) as the client, --verb=send, 8 MiB in 4 KiB Sends at
# depth 16, through a hostfwd port to fio's server over siw in the VM
# (--iodepth=1).  siw TERMINATEs (1/2/2 "no buffer"); the check is that the
# fio client on uiwarp then does what siw's own does in fio-siw-send: it
# is still blocked LIMIT s later (and siw's server too, checked in the VM).
# fio-s2u-send sources this file for fio_watch.
desc="host uiw-run fio --verb=send -> fio server over siw in the VM: siw's TERMINATE 1/2/2; the uiwarp client stays blocked, as siw's"
ports="7544"
PORT=7544
LIMIT=30
FIOARGS=(--ioengine=rdma --bs=4k)

needs() {
	need_uiw_run fio
}

# fio_watch LOG CMD...: run CMD (traced, its own session) in the background,
# watch it for LIMIT s; FIO_END (ms, empty: still running), FIO_RC; what
# still runs then ($OUT/host-state.txt: each task's wchan) is killed by PID
# (fio's jobs are processes of their own and outlast a signal to fio)
fio_watch() {
	local log=$1 pid t0 n p ps left=""
	shift
	hlog "$*"
	UIW_RDMA_TRACE=1 setsid "$@" >"$log" 2>&1 &
	pid=$!
	hbg "$pid"
	t0=$(date +%s%3N)
	FIO_END=""
	FIO_RC=""
	for ((n = 0; n < LIMIT * 10; n++)); do
		if ! kill -0 "$pid" 2>/dev/null; then
			FIO_END=$(($(date +%s%3N) - t0))
			FIO_RC=0
			wait "$pid" || FIO_RC=$?
			break
		fi
		sleep 0.1
	done
	# (run.sh runs host parts with set -e: every command here may fail)
	ps=$pid
	for ((n = 0; n < 4; n++)); do
		for p in $ps; do
			ps="$ps $(ps -o pid= --ppid "$p" 2>/dev/null | tr '\n' ' ' || true)"
		done
	done
	for p in $(echo "$ps" | tr ' ' '\n' | sort -u || true); do
		if kill -0 "$p" 2>/dev/null; then
			left="$left $p"
		fi
	done
	{
		if [ -n "$FIO_END" ]; then
			echo "ended after $FIO_END ms, status $FIO_RC: $*"
		else
			echo "still running after $LIMIT s: $*"
		fi
		for p in $left; do
			echo "== PID $p $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"
			for t in /proc/"$p"/task/*; do
				echo "-- task ${t##*/} $(cat "$t/comm" 2>/dev/null): wchan $(cat "$t/wchan" 2>/dev/null)"
			done
		done
	} >>"$OUT/host-state.txt"
	for p in $left; do kill -KILL "$p" 2>/dev/null || true; done
	[ -n "$FIO_END" ] || wait "$pid" 2>/dev/null || true
}

# fio_trace LOG: what the traced libuiw-rdma saw (TERMINATE, error completions)
fio_trace() {
	hlog "fio: $(grep -hE 'err=|^fio: ' "$1" | tr '\n' ' ' || true)"
	hlog "trace: $(hcount 'poll_cq .* status 0 ' "$1") good completions; error ones (count, status): $(grep -E 'poll_cq .* status [1-9]' "$1" | sed 's/.*status \([0-9]*\).*/\1/' | sort | uniq -c | tr '\n' ' ' || true)"
	hlog "trace: $(grep -E 'cm event DISCONNECTED' "$1" | head -n 1 || true)"
}

host_run() {
	local fwd=VM_FWD_$PORT log=$OUT/fio-client.log why=""
	: >"$OUT/host-state.txt"
	if ! hawait "$CASE.ready" 120 >/dev/null; then
		host_end "fio's server in the VM never got ready"
		return
	fi
	fio_watch "$log" "$UIW_BIN/uiw-run" fio "${FIOARGS[@]}" --size=8m --port="${!fwd}" --name=cli \
		--rw=write --iodepth=16 --hostname=127.0.0.1 --verb=send
	hlog "uiw-run fio client: $(head -n 1 "$OUT/host-state.txt")"
	fio_trace "$log"
	if [ -n "$FIO_END" ]; then
		why="the fio client on uiwarp ended after $FIO_END ms (status $FIO_RC): $(grep -hE 'err=|^fio: ' "$log" | tr '\n' ' ' || true)"
	elif ! grep -qE 'cm event DISCONNECTED .* term 2 1/2/2' "$log"; then
		why="libuiw-rdma reported no TERMINATE 1/2/2 received"
	fi
	hawait "$CASE.guestdone" 60 >/dev/null || hlog "no word from the guest"
	host_end "$why"
}
