# fio-siw-send (guest, busybox sh): fio 3.33's rdma engine with --verb=send,
# shellcheck shell=sh disable=SC1091,SC2034,SC2086
# server and client both in the VM over siw0 (stock siw to stock siw on
# 10.0.2.15), captured on lo.  The server posts one receive at a time
# (--iodepth=1), the client 16 Sends: the second Send finds no receive and
# the server's siw TERMINATEs (DDP layer 1, type 2 untagged, code 2 "no
# buffer"; iWARP has no receiver-not-ready retry).  What siw's fio then does
# is the reference for libuiw-rdma (docs/RDMA-CORE.md, "fio's verb send").
#
# fio's jobs are watched, not trusted to end: after LIMIT seconds whatever
# still runs is recorded ($OUT/state.txt: each task's wchan and kernel
# stack, rdma res) and killed by PID.  siw's dynamic debug is on: its
# "Call completion handler" lines are the CQ events it raised, "init TERM"
# / "got TERMINATE" the TERMINATE ($OUT/siw-after-term.log: from the
# TERMINATE on).
#
# Other cases set, then source this file: VERB (write, read: the controls,
# which must end with err=0), PORT, MODE (both; server: only fio's server,
# for the host's client, fio-u2s-send; client: only fio's client, to the
# host's server at 10.0.2.2, fio-s2u-send).
#
# Stable over siw (every run so far): the TERMINATE 1/2/2, both QPs to
# ERROR, and both fio jobs blocked in ibv_get_cq_event()
# (ib_uverbs_event_read) for good.  Not stable, so only recorded: how many
# error completions each fio polled and printed ("fio: cq completion status
# 2(local QP operation error)" and/or "... 5(Work Request Flushed Error)",
# or none) and how many CQ events siw raised after the TERMINATE (0 to 2).
. /share/_vm/guest-lib.sh
: "${VERB:=send}" "${PORT:=7541}" "${MODE:=both}" "${LIMIT:=30}" "${BS:=4k}"
if [ "$VERB" = send ]; then
	: "${SIZE:=1m}" "${SDEPTH:=1}" "${CDEPTH:=16}"
	VERIFY=
else
	: "${SIZE:=2m}" "${SDEPTH:=16}" "${CDEPTH:=16}"
	VERIFY=--verify=md5
fi
FIO=/usr/bin/fio
DDC=/sys/kernel/debug/dynamic_debug/control
[ -x "$FIO" ] || skip "no $FIO in the VM"
use_siw stock || fail "cannot load the stock siw.ko"
[ -f "$DDC" ] || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
echo 'module siw +p' >"$DDC" 2>/dev/null || log "cannot turn on siw's dynamic debug"
dmesg -c >/dev/null

# fate END STATUS: "ended after END ms, status STATUS" or "still running"
fate() {
	if [ -n "$1" ]; then
		echo "ended after $1 ms, status $2"
	else
		echo "still running after $LIMIT s"
	fi
}

# descendants PID: PID and every process under it (fio forks its jobs)
descendants() {
	_all=$1
	_new=$1
	while [ -n "$_new" ]; do
		_next=
		for _s in /proc/[0-9]*/stat; do
			read -r _p _c _st _pp _rest <"$_s" 2>/dev/null || continue
			for _q in $_new; do
				[ "$_pp" = "$_q" ] && _next="$_next $_p"
			done
		done
		_all="$_all$_next"
		_new=$_next
	done
	echo "$_all"
}
uptime_ms() {
	awk '{ printf "%d", $1 * 1000 }' /proc/uptime
}

FIOARGS="--ioengine=rdma --bs=$BS --size=$SIZE"
slog=$OUT/fio-server.log
clog=$OUT/fio-client.log
spid="" cpid="" send="" cend="" src=- crc=-
case $MODE in
both) cap_start "$CASE" lo tcp port "$PORT" || fail "tcpdump did not start" ;;
server) cap_start "$CASE" eth0 tcp port "$PORT" || fail "tcpdump did not start" ;;
*) cap_start "$CASE" eth0 tcp and host "$HOST_IP" || fail "tcpdump did not start" ;;
esac
if [ "$MODE" != client ]; then
	log "fio $FIOARGS --port=$PORT --name=srv --rw=read --iodepth=$SDEPTH"
	bg_start "$slog" "$FIO" $FIOARGS --port="$PORT" --name=srv --rw=read --iodepth="$SDEPTH"
	spid=$BG_PID
	wait_listen "$PORT" 30 || fail "the fio server did not listen on $PORT: $(tail -n 1 "$slog")"
fi
t0=$(uptime_ms)
case $MODE in
both)
	chost=$GUEST_IP cport=$PORT
	;;
server)
	sig "$CASE.ready" "$PORT"
	;;
client)
	cport=$(await "$CASE.ready" 120) || fail "no fio server on the host"
	[ "$cport" != 0 ] || fail "the host's fio server did not listen"
	chost=$HOST_IP
	t0=$(uptime_ms)
	;;
esac
if [ "$MODE" != server ]; then
	log "fio $FIOARGS --port=$cport --name=cli --rw=write --iodepth=$CDEPTH --hostname=$chost --verb=$VERB $VERIFY"
	bg_start "$clog" "$FIO" $FIOARGS --port="$cport" --name=cli --rw=write --iodepth="$CDEPTH" \
		--hostname="$chost" --verb="$VERB" $VERIFY
	cpid=$BG_PID
fi
n=0
while [ "$n" -lt $((LIMIT * 10)) ]; do
	if [ -n "$cpid" ] && [ -z "$cend" ] && ! kill -0 "$cpid" 2>/dev/null; then
		cend=$(($(uptime_ms) - t0))
		wait "$cpid"
		crc=$?
	fi
	if [ -n "$spid" ] && [ -z "$send" ] && ! kill -0 "$spid" 2>/dev/null; then
		send=$(($(uptime_ms) - t0))
		wait "$spid"
		src=$?
	fi
	{ [ -z "$cpid" ] || [ -n "$cend" ]; } && { [ -z "$spid" ] || [ -n "$send" ]; } && break
	n=$((n + 1))
	sleep 0.1
done
# what still runs: blocked where (fio's job is the process that has the
# rdma state; its parent, fio's main process, waits for it)
left=
for p in $(descendants "$cpid") $(descendants "$spid"); do
	kill -0 "$p" 2>/dev/null && left="$left $p"
done
{
	[ -z "$cpid" ] || echo "fio client (PID $cpid): $(fate "$cend" "$crc")"
	[ -z "$spid" ] || echo "fio server (PID $spid): $(fate "$send" "$src")"
	for p in $left; do
		echo "== PID $p $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null) state $(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)"
		for t in "/proc/$p/task/"*; do
			echo "-- task ${t##*/}: wchan $(cat "$t/wchan" 2>/dev/null)"
			cat "$t/stack" 2>/dev/null
		done
	done
	echo "== rdma res show qp"
	$RDMA res show qp 2>&1
} >"$OUT/state.txt" 2>&1
[ "$MODE" = both ] || sig "$CASE.guestdone" "${cend:-running}"
blocked=0
for p in $left; do
	grep -q ib_uverbs_event_read "/proc/$p/task/"*/wchan 2>/dev/null && blocked=$((blocked + 1))
done
for p in $left; do kill -KILL "$p" 2>/dev/null; done
[ -z "$cpid" ] || [ -n "$cend" ] || { wait "$cpid" 2>/dev/null; crc=killed; }
[ -z "$spid" ] || [ -n "$send" ] || { wait "$spid" 2>/dev/null; src=killed; }
[ "$MODE" = both ] || await "$CASE.hostdone" $((LIMIT + 60)) >/dev/null || log "no word from the host"
sleep 1
dmesg >"$OUT/dmesg.log"
echo 'module siw -p' >"$DDC" 2>/dev/null
cap_stop
cat "$OUT/state.txt"
grep -E "Call completion|TERM|llp close|failed|qp_event" "$OUT/dmesg.log" |
	awk '/init TERM|got TERMINATE/ {t = 1} t' >"$OUT/siw-after-term.log"
cat "$OUT/siw-after-term.log"
cerr=$(grep -hE 'err=|^fio: ' "$clog" 2>/dev/null | tr '\n' ' ')
serr=$(grep -hE 'err=|^fio: ' "$slog" 2>/dev/null | tr '\n' ' ')
[ -z "$cpid" ] || log "fio client: $(fate "$cend" "$crc"): $cerr"
[ -z "$spid" ] || log "fio server: $(fate "$send" "$src"): $serr"
nev=$(grep -c 'Call completion' "$OUT/siw-after-term.log")
tsent=$(grep -c 'sent TERM: success, layer 1, type 2, code 2' "$OUT/dmesg.log")
# siw logs a TERMINATE it receives with layer and etype from the wrong
# nibbles (docs/CONFORMANCE.md): siw's own 1/2/2 reads back as 1/2/2,
# uiwarp's (fio-s2u-send) as "layer 2, type 1"
tgot=$(grep -cE 'got TERMINATE. layer (1, type 2|2, type 1), code 2' "$OUT/dmesg.log")
nerr=$(grep -c 'llp close exit: state ERROR' "$OUT/dmesg.log")
log "siw: TERMINATE 1/2/2 sent $tsent, received $tgot; QPs to ERROR $nerr; CQ events after the TERMINATE $nev; fio jobs blocked in ib_uverbs_event_read $blocked"
echo "verb=$VERB mode=$MODE client=${cend:-running} client_exit=$crc server=${send:-running} server_exit=$src term_sent=$tsent term_got=$tgot qp_error=$nerr blocked=$blocked events_after_term=$nev" >"$OUT/summary.txt"

if [ "$VERB" != send ]; then
	# the controls: no Send, no receive to run out of
	[ -n "$cend" ] || fail "fio client ($VERB) still running after $LIMIT s"
	[ -n "$send" ] || fail "fio server ($VERB) still running after $LIMIT s"
	if [ "$crc" != 0 ] || [ "$src" != 0 ]; then
		fail "fio exit: client $crc, server $src: $cerr $serr"
	fi
	echo "$cerr" | grep -q 'err= 0' || fail "fio client printed no err= 0: $cerr"
	if [ "$tsent" != 0 ] || [ "$tgot" != 0 ]; then
		fail "a TERMINATE in a $VERB run"
	fi
	pass
fi
case $MODE in
both)
	[ "$tsent" = 1 ] || fail "siw's server sent no TERMINATE 1/2/2 ($tsent)"
	[ "$tgot" = 1 ] || fail "siw's client got no TERMINATE 1/2/2 ($tgot)"
	[ "$nerr" = 2 ] || fail "$nerr of 2 QPs went to ERROR"
	[ -z "$cend" ] || fail "fio client ended after $cend ms (status $crc): $cerr"
	[ -z "$send" ] || fail "fio server ended after $send ms (status $src): $serr"
	[ "$blocked" = 2 ] || fail "$blocked of 2 fio jobs blocked in ib_uverbs_event_read"
	;;
server)
	[ "$tsent" = 1 ] || fail "siw's server sent no TERMINATE 1/2/2 ($tsent)"
	[ "$nerr" = 1 ] || fail "siw's QP did not go to ERROR"
	[ -z "$send" ] || fail "fio server ended after $send ms (status $src): $serr"
	[ "$blocked" = 1 ] || fail "siw's fio server not blocked in ib_uverbs_event_read"
	;;
client)
	[ "$tgot" = 1 ] || fail "siw's client got no TERMINATE 1/2/2 ($tgot)"
	[ "$nerr" = 1 ] || fail "siw's QP did not go to ERROR"
	[ -z "$cend" ] || fail "fio client ended after $cend ms (status $crc): $cerr"
	[ "$blocked" = 1 ] || fail "siw's fio client not blocked in ib_uverbs_event_read"
	;;
esac
pass
