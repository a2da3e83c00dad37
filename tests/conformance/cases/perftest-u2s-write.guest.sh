# perftest-u2s-write (guest, busybox sh): ib_write_bw -R as the server on
# shellcheck shell=sh disable=SC1091,SC2034,SC2086
# 10.0.2.15:PORT (stock siw), for the host's uiw-perf --perftest client;
# capture on eth0.  perftest-u2s-read/-send set PORT and PT_TEST and source
# this file.
. /share/_vm/guest-lib.sh
: "${PORT:=7501}" "${PT_TEST:=write}" "${ITERS:=200}" "${SIZE:=65536}"
PTBIN=/usr/bin/ib_${PT_TEST}_bw
[ -x "$PTBIN" ] || skip "no $PTBIN in the VM"
use_siw stock || fail "cannot load the stock siw.ko"
cap_start "$CASE" eth0 tcp port "$PORT" || fail "tcpdump did not start"
slog=$OUT/ib_${PT_TEST}_bw-server.log
log "ib_${PT_TEST}_bw -R -d siw0 -F -n $ITERS -s $SIZE -p $PORT"
bg_start "$slog" timeout 120 "$PTBIN" -R -d siw0 -F -n "$ITERS" -s "$SIZE" -p "$PORT"
spid=$BG_PID
wait_listen "$PORT" 20 || fail "ib_${PT_TEST}_bw -R did not listen on $PORT: $(tail -n 1 "$slog")"
sig "$CASE.ready"
hrc=$(await "$CASE.hostdone" 120) || fail "no word from the host's uiw-perf"
bg_wait "$spid" 20
src=$?
cap_stop
line=$(grep -E "^ *$SIZE +$ITERS +" "$slog" | head -n 1)
log "host uiw-perf exit $hrc; ib_${PT_TEST}_bw -R server exit $src: $line"
[ "$src" = 124 ] && fail "ib_${PT_TEST}_bw -R server did not end ($(tail -n 1 "$slog"))"
[ "$src" = 0 ] || fail "ib_${PT_TEST}_bw -R server exit $src: $(tail -n 1 "$slog")"
[ -n "$line" ] || fail "ib_${PT_TEST}_bw -R server printed no result line for $SIZE x $ITERS"
# perftest times with the TSC and calibrates it against gettimeofday; under
# TCG the calibration may fail ("Correlation coefficient r^2: ... < 0.9"):
# its own figures are then 0.00.  That is perftest's clock, not the exchange.
if grep -q 'Correlation coefficient' "$slog"; then
	log "note: perftest's CPU clock calibration failed under emulation: $(grep 'Correlation coefficient' "$slog")"
fi
pass
