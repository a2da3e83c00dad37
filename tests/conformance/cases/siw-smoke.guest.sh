# siw-smoke (guest, busybox sh): rping -s and rping -c -C 10 -v -V on
# shellcheck shell=sh disable=SC1091,SC2034
# 10.0.2.15 over siw0, stock siw.ko; capture on lo.
. /share/_vm/guest-lib.sh
use_siw stock || fail "cannot load the stock siw.ko"
siw_rping siw-smoke 7301 10 || fail "$WHY"
pass
