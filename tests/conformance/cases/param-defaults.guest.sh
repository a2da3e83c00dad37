# param-defaults (guest, busybox sh): load the param siw.ko with no
# shellcheck shell=sh disable=SC1091,SC2034
# parameters; every knob must read its stock value; then rping siw to siw.
. /share/_vm/guest-lib.sh
use_siw param || fail "cannot load the param siw.ko"
why=
for kv in mpa_crc_required=N mpa_crc_strict=N peer_to_peer=N mpa_version=2 \
	try_gso=N siw_tcp_nagle=N zcopy_tx=Y loopback_enabled=Y; do
	k=${kv%%=*}
	want=${kv#*=}
	got=$(cat "/sys/module/siw/parameters/$k" 2>/dev/null || echo missing)
	echo "$k=$got" >>"$OUT/parameters.txt"
	[ "$got" = "$want" ] || why="$why $k=$got (stock: $want)"
done
[ -z "$why" ] || fail "parameters differ from the stock build:$why"
siw_rping param-defaults 7311 10 || fail "$WHY"
pass
