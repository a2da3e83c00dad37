# perftest-s2u-send (guest): perftest-s2u-write.guest.sh with ib_send_bw -R.
# shellcheck shell=sh disable=SC1091,SC2034
PT_TEST="send"
. /share/_vm/cases/perftest-s2u-write.guest.sh
