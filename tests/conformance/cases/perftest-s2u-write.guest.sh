# perftest-s2u-write (guest, busybox sh): ib_write_bw -R as the client (siw
# shellcheck shell=sh disable=SC1091,SC2034,SC2086
# is the MPA initiator) against the host's uiw-perf --perftest server at
# 10.0.2.2 (the port comes from the host); capture on eth0.
# perftest-s2u-read/-send set PT_TEST and source this file.
. /share/_vm/guest-lib.sh
: "${PT_TEST:=write}" "${ITERS:=50}" "${SIZE:=65536}"
PTBIN=/usr/bin/ib_${PT_TEST}_bw
[ -x "$PTBIN" ] || skip "no $PTBIN in the VM"
use_siw stock || fail "cannot load the stock siw.ko"
cap_start "$CASE" eth0 tcp and host "$HOST_IP" || fail "tcpdump did not start"
if ! port=$(await "$CASE.ready" 120) || [ "$port" = 0 ]; then
	fail "no uiw-perf --perftest server on the host"
fi
clog=$OUT/ib_${PT_TEST}_bw-client.log
log "ib_${PT_TEST}_bw -R -d siw0 -F -n $ITERS -s $SIZE -p $port $HOST_IP"
timeout 90 "$PTBIN" -R -d siw0 -F -n "$ITERS" -s "$SIZE" -p "$port" "$HOST_IP" >"$clog" 2>&1
crc=$?
sig "$CASE.guestdone" "$crc"
cap_stop
line=$(grep -E "^ *$SIZE +$ITERS +" "$clog" | head -n 1)
log "ib_${PT_TEST}_bw -R client exit $crc: $line"
[ "$crc" = 0 ] || fail "ib_${PT_TEST}_bw -R client exit $crc: $(tail -n 1 "$clog")"
[ -n "$line" ] || fail "ib_${PT_TEST}_bw -R client printed no result line for $SIZE x $ITERS"
# perftest times with the TSC and calibrates it against gettimeofday; under
# TCG the calibration may fail ("Correlation coefficient r^2: ... < 0.9"):
# its own figures are then 0.00.  That is perftest's clock, not the exchange.
if grep -q 'Correlation coefficient' "$clog"; then
	log "note: perftest's CPU clock calibration failed under emulation: $(grep 'Correlation coefficient' "$clog")"
fi
pass
