# run-pt-u2s-send (guest): perftest-u2s-write.guest.sh with ib_send_bw -R on port 7523.
# shellcheck shell=sh disable=SC1091,SC2034
PORT=7523
PT_TEST="send"
ITERS=200
. /share/_vm/cases/perftest-u2s-write.guest.sh
