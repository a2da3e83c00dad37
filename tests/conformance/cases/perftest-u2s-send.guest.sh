# perftest-u2s-send (guest): perftest-u2s-write.guest.sh with ib_send_bw -R on port 7503.
# shellcheck shell=sh disable=SC1091,SC2034
PORT=7503
PT_TEST="send"
. /share/_vm/cases/perftest-u2s-write.guest.sh
