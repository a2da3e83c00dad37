# param-crc (guest, busybox sh): param siw.ko with mpa_crc_required=1, then
# shellcheck shell=sh disable=SC1091,SC2034
# rping siw to siw (capture on lo).
. /share/_vm/guest-lib.sh
use_siw param mpa_crc_required=1 || fail "cannot load the param siw.ko with mpa_crc_required=1"
got=$(cat /sys/module/siw/parameters/mpa_crc_required)
echo "mpa_crc_required=$got" >"$OUT/parameters.txt"
[ "$got" = Y ] || fail "mpa_crc_required reads $got after loading with mpa_crc_required=1"
siw_rping param-crc 7312 10 || fail "$WHY"
pass
